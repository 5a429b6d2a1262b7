//! Ctrl-C during `vernier demo`: every benchmark measured so far is in the result file, and
//! those cut short (the one being measured, and those whose second round never ran) have the
//! status `interrupted` and are marked in the table. The same of a standalone Rust suite
//! (`cargo bench`, a benchmark program run by hand). (`run` is covered in tests/suite/measuring/run.rs.)

use crate::common::{cli, rust_examples};

use cli::vernier;
use std::path::Path;
use std::time::Duration;
use vernier::result::{ResultFile, Status};

/// `cmd` started with its output in `out` and `out`.err, given Ctrl-C after `after`: its exit
/// status, standard output and standard error.
fn ctrl_c(
    cmd: &mut std::process::Command,
    out: &Path,
    after: Duration,
) -> (std::process::ExitStatus, String, String) {
    let err = out.with_extension("err");
    let mut child = cmd
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let text = |p: &Path| std::fs::read_to_string(p).unwrap();
    (status, text(out), text(&err))
}

#[test]
fn ctrl_c_in_demo_marks_the_benchmarks_cut_short() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interrupted");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("demo.json");
    let out = dir.join("demo.out");
    let _ = std::fs::remove_file(&json);
    // 4 s per benchmark: after 3 s the first benchmarks are being measured, whatever the
    // machine's speed.
    let mut cmd = vernier();
    cmd.args(["demo", "--time", "4", "--json"]).arg(&json);
    let (status, stdout, stderr) = ctrl_c(&mut cmd, &out, Duration::from_secs(3));
    assert_eq!(status.code(), Some(130), "{stdout}");
    // Said once.
    assert_eq!(
        stderr
            .matches("every benchmark finished before Ctrl-C is kept")
            .count(),
        1,
        "{stderr}"
    );
    let f = ResultFile::load(&json).unwrap();
    assert!(!f.benchmarks.is_empty(), "{stdout}");
    let cut: Vec<&str> = f
        .benchmarks
        .iter()
        .filter(|b| b.status == Status::Interrupted)
        .map(|b| b.name.as_str())
        .collect();
    // With 2 rounds of 2 s each, nothing finished both rounds within 3 s.
    assert_eq!(cut.len(), f.benchmarks.len(), "{stdout}");
    assert!(f.benchmarks.iter().all(|b| b.stop == "interrupted"));
    for name in &cut {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&name.chars().take(20).collect::<String>()))
            .unwrap_or_else(|| panic!("no row for {name}:\n{stdout}"));
        assert!(row.contains("INTERRUPTED"), "{row}");
    }
}

/// The same Ctrl-C delivered twice at once (as `timeout -s INT` does: to the process and to
/// its group) is one Ctrl-C: the run stops and keeps what it measured, instead of being
/// killed by the second copy with nothing written.
#[test]
fn a_ctrl_c_delivered_twice_at_once_still_keeps_what_was_measured() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interrupted-twice");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("demo.json");
    let _ = std::fs::remove_file(&json);
    let mut child = vernier()
        .args(["demo", "--time", "4", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    for _ in 0..2 {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let f = ResultFile::load(&json).unwrap();
    assert!(!f.benchmarks.is_empty());
}

/// Ctrl-C in a standalone Rust suite (no runner): the measuring stops, what was measured is
/// printed and saved, marked as cut short, and the program exits with status 130 (before, the
/// signal killed it and nothing was kept).
#[test]
fn ctrl_c_in_a_standalone_rust_suite_keeps_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("chain.json");
    // 10 s for the one benchmark: after 4 s it is being measured, whatever the machine's load
    // (the harness measures its own costs first).
    let mut cmd = std::process::Command::new(rust_examples::examples().join("chain"));
    // A budget whose 30 % floor (9 s) is far past the Ctrl-C at 4 s: the benchmark is still
    // measuring when it comes, whatever the machine's state.
    cmd.args(["--time", "30", "--json"])
        .arg(&json)
        .env("VERNIER_LEDGER", dir.path().join("ledger.json"));
    let out = dir.path().join("chain.out");
    let (status, stdout, stderr) = ctrl_c(&mut cmd, &out, Duration::from_secs(4));
    assert_eq!(status.code(), Some(130), "{stdout}{stderr}");
    assert!(
        stderr.contains("every benchmark measured before Ctrl-C is kept (in "),
        "{stderr}"
    );
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{stdout}{stderr}"));
    assert_eq!(f.benchmarks.len(), 1, "{stdout}");
    let b = &f.benchmarks[0];
    assert_eq!((b.name.as_str(), b.status), ("chain", Status::Interrupted));
    assert!(!b.samples.ns.is_empty());
    let row = stdout
        .lines()
        .find(|l| l.starts_with("chain "))
        .unwrap_or_else(|| panic!("no row:\n{stdout}"));
    assert!(row.contains("INTERRUPTED"), "{row}");
}
