//! Bad input through the real binary: each gets one clear message naming the problem and the
//! fix, exit status 1, and nothing measured first.

use crate::common::{cli, cpp};

use cli::{text, vernier};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad-input");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn slow_start() -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpp/slow_start.cpp");
    cpp::compile("slow_start", &[src], &["-O2"])
}

/// (destination, what the message must say)
fn bad_destinations() -> Vec<(PathBuf, &'static str)> {
    let dir = tmp("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    vec![
        (dir, "is a directory"),
        (
            tmp("missing/sub/result.json"),
            "does not exist (create it first: mkdir -p",
        ),
        // /sys refuses new files, even to root.
        (
            PathBuf::from("/sys/vernier-result.json"),
            "cannot create a file in /sys",
        ),
    ]
}

#[test]
fn an_unwritable_json_is_refused_before_demo_measures() {
    for (dest, says) in bad_destinations() {
        let o = vernier()
            .args(["demo", "--quick", "--json"])
            .arg(&dest)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("--json") && err.contains(says),
            "{dest:?}: {err}"
        );
        // One message, and no benchmark measured (no table on stdout).
        assert_eq!(err.matches("--json").count(), 1, "{err}");
        assert!(o.stdout.is_empty(), "{}", text(&o));
    }
}

#[test]
fn an_unwritable_json_is_refused_before_run_starts_the_program() {
    let exe = slow_start();
    for (dest, says) in bad_destinations() {
        let log = tmp("run-starts.log");
        let _ = std::fs::remove_file(&log);
        let o = vernier()
            .args(["run", "--quick", "--json"])
            .arg(&dest)
            .arg("--")
            .arg(&exe)
            .env("START_LOG", &log)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{dest:?}: {err}");
        assert!(!log.exists(), "the program was started: {}", text(&o));
        assert!(o.stdout.is_empty(), "{}", text(&o));
    }
    // The same in --instructions mode, and for compare.
    let (dest, says) = &bad_destinations()[0];
    let mut instructions = vernier();
    instructions.args(["run", "--instructions", "--json"]);
    instructions.arg(dest).arg("--").arg(&exe);
    let mut compare = vernier();
    compare
        .arg("compare")
        .arg(&exe)
        .arg(&exe)
        .arg("--json")
        .arg(dest);
    for mut cmd in [instructions, compare] {
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{}",
            text(&o)
        );
        assert!(o.stdout.is_empty(), "{}", text(&o));
    }
}

#[test]
fn a_negative_value_gets_a_message_that_fits_the_command_line() {
    for (args, says) in [
        (
            &["demo", "--time", "-1"][..],
            "--time -1: expected a positive number",
        ),
        (
            &["run", "--time", "-1", "--", "prog"],
            "--time -1: expected a positive number",
        ),
        (
            &["run", "--timeout", "-2", "--", "prog"],
            "--timeout -2: expected a positive number",
        ),
        // compare checks its inputs first; --time -1 is at least not clap's tip.
        (
            &["compare", "a", "b", "--time", "-1"],
            "OLD 'a': no such file",
        ),
        (
            &["run", "--processes", "-1", "--", "prog"],
            "--processes -1: a negative number is not a valid value for --processes",
        ),
        (
            &["run", "--env-pad", "-5", "--", "prog"],
            "--env-pad -5: a negative number is not a valid value",
        ),
        (
            &["load", "--duration", "-1"],
            "--duration must be a positive number",
        ),
        (
            &["system", "noise", "--duration", "-1"],
            "--duration must be a positive number",
        ),
    ] {
        let o = vernier().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        // clap's tip (`-- -1`) would start the benchmark program's command line here.
        assert!(!err.contains("'-- -"), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn cpus_is_a_cpu_list_and_load_says_what_its_old_spelling_means() {
    let o = vernier()
        .args(["load", "--threads", "1", "--duration", "0.05"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("load: 1 thread"),
        "{}",
        text(&o)
    );
    // The former spelling still works, and says it is a thread count here.
    let o = vernier()
        .args(["load", "--cpus", "1", "--duration", "0.05"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--threads 1") && err.contains("CPU list"),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("load: 1 thread"),
        "{}",
        text(&o)
    );
    // Both at once is refused.
    let o = vernier()
        .args([
            "load",
            "--cpus",
            "1",
            "--threads",
            "2",
            "--duration",
            "0.05",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // The help lists --threads, not --cpus.
    let o = vernier().args(["load", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("--threads") && !help.contains("--cpus"),
        "{help}"
    );
}
