//! Driving the real `vernier` binary from tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use vernier::result::ResultFile;

/// The `vernier` binary under test, with colour off.
pub fn vernier() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vernier"));
    c.env("NO_COLOR", "1");
    // Tests neither read nor add to the user's record of this machine's core speed.
    c.env("VERNIER_SPEED_FILE", "none");
    c
}

/// Status, stdout and stderr of a run, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `vernier run --quick --processes 1 --timeout 2 --json JSON -- EXE`: one process per
/// benchmark and a short timeout, as robustness tests want; returns the output and the file.
pub fn run_quick_one_process(exe: &Path, json: &Path) -> (Output, ResultFile) {
    let o = vernier()
        .args([
            "run",
            "--quick",
            "--processes",
            "1",
            "--timeout",
            "2",
            "--json",
        ])
        .arg(json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    let f = ResultFile::load(json).unwrap_or_else(|e| panic!("{e}\n{}", text(&o)));
    (o, f)
}
