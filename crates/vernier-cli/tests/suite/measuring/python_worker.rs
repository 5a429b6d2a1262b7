//! The Python harness as a worker: the package (`python/vernier/`, with its native module built
//! here by cargo, whose Rust serve loop answers the protocol) passes the conformance suite, and
//! `vernier run -- python3 SCRIPT` and `python3 SCRIPT` measure a script's benchmarks. Needs
//! `python3` only.

use crate::common::{cli, conformance};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use vernier::result::{ResultFile, Status};

/// The benchmark script of these tests.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python/bench_sum.py")
}

/// A directory holding the package as `pip install ./python` lays it out (its Python files and
/// the native module), for `PYTHONPATH`.
fn python_package(name: &str) -> PathBuf {
    static NATIVE: OnceLock<PathBuf> = OnceLock::new();
    let native = NATIVE.get_or_init(build_native_module);
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let pkg = root.join("vernier");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&pkg).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/vernier");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "py") {
            std::fs::copy(&p, pkg.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(native, pkg.join("_native.abi3.so")).unwrap();
    root
}

/// The native module (`python/`, the crate `vernier-python`), built by cargo with these tests'
/// profile into their target directory, as an extension module the way maturin builds it (not
/// linked to libpython: the interpreter that imports it provides the symbols).
fn build_native_module() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_vernier")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-q", "-p", "vernier-python"])
        .args(["--features", "pyo3/extension-module"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if dir.file_name().is_some_and(|d| d == "release") {
        cmd.arg("--release");
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "cargo build -p vernier-python: {}",
        cli::text(&o)
    );
    dir.join("lib_native.so")
}

/// `python3`, or a failure that names the install command.
fn python3() -> PathBuf {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "python3 is needed by the Python harness's tests: apt-get install python3"
    );
    PathBuf::from("python3")
}

#[test]
fn the_python_worker_conforms_to_the_protocol() {
    let mut cmd = Command::new(python3());
    cmd.arg(script())
        .env("PYTHONPATH", python_package("conformance"));
    let report = conformance::check(cmd);
    assert_eq!(report.names, ["sum 1000", "sum 10000", "join words"]);
    assert!(
        report.hello.implementation.starts_with("vernier-python/"),
        "{report:?}"
    );
    // The interpreter (implementation, version, build) and the process's hash seed: the
    // interpreter's own random one (`random`) when none was set, as here.
    let interp = report.hello.interp.as_deref().unwrap_or_default();
    let words: Vec<&str> = interp.split(' ').collect();
    assert!(
        words.len() >= 3
            && words[1].split('.').count() == 3
            && ["release", "debug"].contains(&words[2]),
        "{report:?}"
    );
    assert!(
        report
            .hello
            .hash_seed
            .as_deref()
            .is_some_and(|s| s == "random"),
        "{report:?}"
    );
}

fn check_result(f: &ResultFile, what: &str) {
    let names: Vec<&str> = f.benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["sum 1000", "sum 10000", "join words"], "{what}");
    for b in &f.benchmarks {
        assert_eq!(b.status, Status::Ok, "{what}: {b:?}");
    }
    assert!(
        f.machine
            .worker_impl
            .as_deref()
            .is_some_and(|w| w.starts_with("vernier-python/")),
        "{what}: {:?}",
        f.machine.worker_impl
    );
    assert!(
        f.machine
            .worker_interp
            .as_deref()
            .is_some_and(|i| i.split(' ').count() >= 3),
        "{what}: {:?}",
        f.machine.worker_interp
    );
    for b in &f.benchmarks {
        let seeds: Vec<_> = b.processes.iter().map(|p| p.hash_seed.as_deref()).collect();
        assert!(
            !seeds.is_empty()
                && seeds
                    .iter()
                    .all(|s| s.is_some_and(|s| s.parse::<u32>().is_ok())),
            "{what}: {}: hash seeds {seeds:?}",
            b.name
        );
    }
    // Ten times the elements, about ten times the time: the loop calls the function with its
    // argument (a ratio measured in one run, far from both bounds).
    let median = |i: usize| f.benchmarks[i].per_iter.median_ns;
    let ratio = median(1) / median(0);
    assert!(
        (4.0..25.0).contains(&ratio),
        "{what}: sum 10000 / sum 1000 = {ratio}"
    );
}

#[test]
fn vernier_run_measures_a_python_script() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-run");
    std::fs::create_dir_all(&tmp).unwrap();
    let json = tmp.join("run.json");
    let o = cli::vernier()
        .env("VERNIER_LEDGER", tmp.join("ledger.json"))
        .env("PYTHONPATH", python_package("run"))
        .args(["run", "--quick", "--json"])
        .arg(&json)
        .arg("--")
        .arg(python3())
        .arg(script())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", cli::text(&o));
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    check_result(&f, "vernier run");
}

/// A profile of a Python worker is refused, saying why: callgrind and perf would name the
/// interpreter's functions, not the script's.
#[test]
fn a_python_worker_is_not_profiled_and_says_why() {
    for sampled in [false, true] {
        let mut c = cli::vernier();
        c.env("PYTHONPATH", python_package(&format!("profile-{sampled}")))
            .arg("profile");
        if sampled {
            c.arg("--sampled");
        }
        let o = c.arg("--").arg(python3()).arg(script()).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", cli::text(&o));
        assert!(
            cli::text(&o).contains("is a Python worker") && cli::text(&o).contains("cProfile"),
            "{}",
            cli::text(&o)
        );
    }
}

#[test]
fn a_python_script_run_alone_starts_the_runner_on_itself() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-alone");
    std::fs::create_dir_all(&tmp).unwrap();
    let json = tmp.join("alone.json");
    // The native module runs the runner in the script's process.
    let o = Command::new(python3())
        .arg(script())
        .args(["--quick", "--json"])
        .arg(&json)
        .env("NO_COLOR", "1")
        .env("VERNIER_LEDGER", tmp.join("ledger.json"))
        .env("PYTHONPATH", python_package("alone"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", cli::text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("sum 10000"), "{out}");
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    check_result(&f, "python3 bench_sum.py");
}
