//! The Rust harness as a worker: the same conformance suite as the C++ header, and the
//! runner's robustness against a Rust worker that crashes, hangs or panics.

use crate::common::{cli, conformance, cpp, rust_examples};

use std::process::Command;
use vernier::result::Status;

#[test]
fn rust_workers_conform_to_the_protocol() {
    for name in ["chain", "faulty"] {
        let exe = rust_examples::examples().join(name);
        let report = conformance::check(Command::new(&exe));
        eprintln!("{name}: {report:?}");
    }
}

#[test]
fn a_rust_worker_that_crashes_hangs_or_panics_fails_only_that_benchmark() {
    let exe = rust_examples::examples().join("faulty");
    let json = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust-faulty.json");
    let (o, f) = cli::run_quick_one_process(&exe, &json);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let get = |n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap();
    assert_eq!(get("ok").status, Status::Ok);
    assert_eq!(get("chatty").status, Status::Ok);
    assert!(get("segfault")
        .error
        .as_deref()
        .unwrap()
        .contains("signal 11"));
    assert!(get("hang")
        .error
        .as_deref()
        .unwrap()
        .contains("no reply within"));
    assert!(get("panics")
        .error
        .as_deref()
        .unwrap()
        .contains("deliberate failure"));
}

#[test]
fn cpp_chain_compared_across_builds() {
    let exe = cpp::example("chain");
    let run = |old: u32, new: u32| {
        let o = Command::new(env!("CARGO_BIN_EXE_vernier"))
            .arg("compare")
            .arg(&exe)
            .arg(&exe)
            .arg(format!("--old-env=CHAIN_N={old}"))
            .arg(format!("--new-env=CHAIN_N={new}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let same = run(100, 100);
    assert!(
        same.lines()
            .any(|l| l.starts_with("chain") && l.contains("no-change")),
        "{same}"
    );
    let double = run(100, 200);
    let line = double.lines().find(|l| l.starts_with("chain")).unwrap();
    assert!(line.contains("slower"), "{double}");
    let ratio: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((1.7..2.3).contains(&ratio), "{line}");
}
