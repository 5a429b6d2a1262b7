//! The runner reading a worker's replies, through the real binary: a shell-script worker
//! answers the handshake, then replies to `hello` or to `run` with a damaged line (wrong
//! types, NaN, negative or huge numbers, columns of the wrong length, binary garbage). Every
//! case ends with exit status 1 and an error naming the problem; none panics. 60 cases, from
//! a fixed seed.

use crate::common::cli;

use cli::{text, vernier};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use vernier::result::{ResultFile, Status};

const GOOD_HELLO: &str = "hello 1 impl=sh/0 timer=monotonic resolution_ns=1 overhead_ns=20 \
                          tsc_hz=0 build=release pid=1";

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("worker-garbage");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A worker whose `hello` reply is `$HELLO_REPLY` and whose `run` reply is `$RUN_REPLY`.
/// Written once per test binary, before any test starts it: a test writing it while another
/// starts it would meet ETXTBSY.
fn scripted_worker() -> PathBuf {
    static SCRIPT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SCRIPT.get_or_init(write_scripted_worker).clone()
}

fn write_scripted_worker() -> PathBuf {
    let p = tmp("scripted.sh");
    std::fs::write(
        &p,
        "#!/bin/sh\n\
         while read -r cmd rest <&3; do\n\
           case \"$cmd\" in\n\
             hello) printf '%s\\n' \"$HELLO_REPLY\" >&4;;\n\
             list) printf 'bench 0 x\\nend 1\\n' >&4;;\n\
             run) printf '%s\\n' \"$RUN_REPLY\" >&4;;\n\
             quit) echo bye >&4; exit 0;;\n\
             *) echo \"error unknown command '$cmd'\" >&4;;\n\
           esac\n\
         done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Damaged `run` replies: hand-picked ones, then random bytes (no NUL, no newline: one line).
fn bad_run_replies() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "samples",
        "samples x ns=1",
        "samples -1 ns=1",
        "samples 3 ns=1,2",
        "samples 3 ns=1,2,3,4",
        "samples 3 ns=1,,3",
        "samples 3 ns=1,NaN,3",
        "samples 3 ns=1,-2,3",
        "samples 3 ns=1,1e400,3",
        "samples 3 ns=1,18446744073709551615,3",
        "samples 3 ns=1,18446744073709551616,3",
        "samples 3 ns=1,2,3 ctr.cycles=1,2",
        "samples 3 ns=1,2,3 ctr.cycles=1,x,3",
        "samples 3 ns=1,2,3 ctr.cycles=1,2,3 scaled.cycles=0,2,0",
        "samples 3 ns=1,2,3 scaled.cycles=0,0,0",
        "samples 99999999999999999999999 ns=1",
        "samples 3 ns=1,2,3 junk",
        "bye",
        "",
        "\u{2003}\u{2003}error",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let mut rng = Lcg(0xBAD5EED);
    for _ in 0..30 {
        let len = 1 + rng.next() as usize % 120;
        v.push(
            (0..len)
                .map(|_| (1 + rng.next() % 255) as u8)
                .filter(|&b| b != b'\n')
                .collect(),
        );
    }
    v
}

#[test]
fn damaged_run_replies_fail_the_benchmark_with_a_reason() {
    let worker = scripted_worker();
    for (k, reply) in bad_run_replies().iter().enumerate() {
        let json = tmp(&format!("run-{k}.json"));
        let _ = std::fs::remove_file(&json);
        let o = vernier()
            .args(["run", "--quick", "--processes", "1", "--timeout", "5"])
            .args(["--counters", "none", "--json"])
            .arg(&json)
            .arg("--")
            .arg(&worker)
            .env("HELLO_REPLY", GOOD_HELLO)
            .env("RUN_REPLY", OsStr::from_bytes(reply))
            .output()
            .unwrap();
        let all = text(&o);
        assert!(!all.contains("panicked"), "case {k} {reply:?}: {all}");
        assert_eq!(o.status.code(), Some(1), "case {k} {reply:?}: {all}");
        // Either the run stops at the harness's own measurements (an error naming the
        // reply), or the benchmark fails with the reason in the result file.
        if let Ok(f) = ResultFile::load(&json) {
            let b = &f.benchmarks[0];
            assert_eq!(b.status, Status::Failed, "case {k}: {all}");
            assert!(!b.error.as_deref().unwrap_or("").is_empty(), "case {k}");
        } else {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("vernier: error:"), "case {k} {reply:?}: {all}");
        }
    }
}

#[test]
fn damaged_hello_replies_are_refused_naming_the_field() {
    let worker = scripted_worker();
    for (hello, names) in [
        (
            GOOD_HELLO.replace("resolution_ns=1", "resolution_ns=NaN"),
            "resolution_ns",
        ),
        (
            GOOD_HELLO.replace("overhead_ns=20", "overhead_ns=-20"),
            "overhead_ns",
        ),
        (GOOD_HELLO.replace("tsc_hz=0", "tsc_hz=inf"), "tsc_hz"),
        (GOOD_HELLO.replace("pid=1", "pid=-1"), "pid"),
        (GOOD_HELLO.replace("pid=1", "pid=99999999999"), "pid"),
        (
            GOOD_HELLO.replace("timer=monotonic", "timer=sundial"),
            "timer=sundial",
        ),
        ("hello".to_string(), "answered 'hello' to 'hello'"),
        ("hello one".to_string(), "protocol version"),
    ] {
        let o = vernier()
            .args(["run", "--quick", "--timeout", "5", "--"])
            .arg(&worker)
            .env("HELLO_REPLY", &hello)
            .env("RUN_REPLY", "samples 1 ns=1")
            .output()
            .unwrap();
        let all = text(&o);
        assert!(!all.contains("panicked"), "{hello}: {all}");
        assert_eq!(o.status.code(), Some(1), "{hello}: {all}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(names),
            "{hello}: {all}"
        );
    }
}
