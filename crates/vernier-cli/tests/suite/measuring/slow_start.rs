//! Workers with a slow start-up: the handshake waits as long as `--timeout` says (not a fixed
//! 10 s), and `--instructions` starts the program under valgrind once for the whole run, not
//! twice per benchmark. Process starts are counted (each start appends its pid to a file);
//! no absolute time is asserted beyond the timeouts the runner is given.

use crate::common::{cli, cpp};

use cli::{text, vernier};
use std::path::{Path, PathBuf};
use vernier::result::{ResultFile, Status};

fn exe() -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpp/slow_start.cpp");
    cpp::compile("slow_start", &[src], &["-O2"])
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("slow-start");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn have_valgrind() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_first_reply_may_take_as_long_as_the_timeout_allows() {
    let exe = exe();
    // The handshake waits as long as --timeout allows: 3 s of start-up pass under
    // --timeout 6, and fail under --timeout 1 (below). A fixed wait of its own, longer or
    // shorter, would fail one of the two.
    let json = tmp("slow.json");
    let o = vernier()
        .args(["run", "--quick", "--processes", "1", "--timeout", "6"])
        .args(["--filter", "^add$", "--counters", "none", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .env("STARTUP_SLEEP_S", "3")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let f = ResultFile::load(&json).unwrap();
    assert_eq!(f.benchmarks.len(), 1);
    assert_eq!(f.benchmarks[0].status, Status::Ok);

    // A start-up longer than --timeout is named as such, with the option to change.
    let o = vernier()
        .args([
            "run",
            "--quick",
            "--timeout",
            "1",
            "--",
            exe.to_str().unwrap(),
        ])
        .env("STARTUP_SLEEP_S", "3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no reply within 1 s") && err.contains("--timeout"),
        "{err}"
    );
}

#[test]
fn instructions_start_valgrind_once_for_the_whole_run() {
    if !have_valgrind() {
        panic!("valgrind is needed (apt-get install valgrind; .ci/run installs it)");
    }
    let exe = exe();
    let log = tmp("starts.log");
    let _ = std::fs::remove_file(&log);
    let json = tmp("counted.json");
    let o = vernier()
        .args(["run", "--instructions", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .env("START_LOG", &log)
        .env("STARTUP_MB", "8")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let f = ResultFile::load(&json).unwrap();
    assert_eq!(f.benchmarks.len(), 3);
    for b in &f.benchmarks {
        assert_eq!(b.status, Status::Ok, "{}: {:?}", b.name, b.error);
        let ir = b.counters.as_ref().unwrap()["instructions_per_iter"];
        assert!(ir > 0.0 && ir.fract() == 0.0, "{}: {ir}", b.name);
    }
    // One native start (names and timer), one under valgrind for the empty loop and the
    // three benchmarks: 2 starts, where one process per count made 1 + 2 × 4 = 9.
    let starts = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(starts, 2, "{}", text(&o));
    // Said before the wait: valgrind's slowdown and the wait it allows.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("under valgrind") && err.contains("--timeout"),
        "{err}"
    );
}
