//! Driving the real `vernier` binary from tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use vernier::result::{BenchmarkResult, ResultFile};

/// The `vernier` binary under test, with colour off, in a home of this test binary's own
/// ([`isolated_home`]), so that no test reads or adds to the user's files.
pub fn vernier() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vernier"));
    c.env("NO_COLOR", "1");
    isolate(&mut c);
    c
}

/// A cache and data home for this run of the test binary (`$XDG_CACHE_HOME`, where the speed
/// file lives, and `$XDG_DATA_HOME`, where `--save` keeps the history by default), fresh for
/// each run and shared by its tests, as a user's is shared by their runs.
pub fn isolated_home() -> std::path::PathBuf {
    static HOME: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("home-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap()
            .keep()
    })
    .clone()
}

/// `cmd` with [`isolated_home`]'s cache and data homes, so no user file is read or written.
/// The ledger is in use, as a user's is: the one in that cache home, which the test
/// binary's runs fill as a user's runs do; a test that needs one of its own names it
/// ([`vernier_with_ledger`]).
pub fn isolate(cmd: &mut Command) -> &mut Command {
    let home = isolated_home();
    cmd.env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("VERNIER_LEDGER")
        .env_remove("VERNIER_SPEED_FILE")
        .env_remove("VERNIER_DB")
}

/// The `vernier` binary with the defaults a user has: the machine's ledger in use (its known
/// core speed and earlier runs), a fresh one kept in `dir` (never the user's own), read and added to by every run
/// given the same `dir`.
pub fn vernier_with_ledger(dir: &Path) -> Command {
    let mut c = vernier();
    c.env("VERNIER_LEDGER", dir.join("ledger.json"));
    c
}

/// `vernier report JSON -o HTML`, which must succeed; the page.
pub fn report_page(json: &Path, html: &Path) -> String {
    let o = vernier()
        .arg("report")
        .arg(json)
        .arg("-o")
        .arg(html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::read_to_string(html).unwrap()
}

/// The object of the JSON array `list` whose `key` is `value` (a benchmark by its `name`, a
/// fit by its `family`); panics naming what is there when none is.
pub fn item<'a>(list: &'a serde_json::Value, key: &str, value: &str) -> &'a serde_json::Value {
    list.as_array()
        .and_then(|a| a.iter().find(|x| x[key] == value))
        .unwrap_or_else(|| panic!("no {key} {value:?} in {list}"))
}

/// The sizes a complexity fit (a `complexity` object of a result file) was given: those fitted
/// and those left out because their median was not settled (a busy machine), smallest first.
/// At least three are fitted.
pub fn fit_sizes(fit: &serde_json::Value) -> Vec<u64> {
    let of = |key: &str| -> Vec<u64> {
        fit[key]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n.as_u64()).collect())
            .unwrap_or_default()
    };
    let fitted = of("sizes");
    assert!(fitted.len() >= 3, "{fit}");
    let mut all = [fitted, of("left_out")].concat();
    all.sort_unstable();
    all
}

/// `vernier ARGS`, which must succeed; its output.
pub fn succeeds<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    let o = vernier().args(args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    o
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

/// The standard output of a command that must have succeeded (else both outputs, in the panic).
pub fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `vernier run OPTIONS --json JSON -- PROGRAM`, which must succeed: its standard output and
/// the result file it wrote.
pub fn run_ok(
    options: &[&str],
    json: &std::path::Path,
    program: &std::path::Path,
) -> (String, ResultFile) {
    let (o, f) = run_json(vernier(), options, json, program);
    (String::from_utf8_lossy(&o.stdout).into_owned(), f)
}

/// `run OPTIONS --json JSON -- PROGRAM` given to `cmd` (the binary as [`vernier`] or
/// [`vernier_with_ledger`] sets it up, with any environment of the test's), which must
/// succeed: its output and the result file it wrote.
pub fn run_json(
    mut cmd: Command,
    options: &[&str],
    json: &Path,
    program: &Path,
) -> (Output, ResultFile) {
    let o = cmd
        .arg("run")
        .args(options)
        .arg("--json")
        .arg(json)
        .arg("--")
        .arg(program)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let f = ResultFile::load(json).unwrap_or_else(|e| panic!("{e}\n{}", text(&o)));
    (o, f)
}

/// The one benchmark of a result file that must hold exactly one.
pub fn only(file: &ResultFile) -> &BenchmarkResult {
    assert_eq!(file.benchmarks.len(), 1);
    &file.benchmarks[0]
}
