//! An async benchmark served over the protocol, through the real binary: a shell-script worker
//! announces two benchmarks on one executor (`executor=` on their `list` lines) and a
//! synchronous one, and answers every `run` with a fixed time per iteration. The runner
//! measures the executor's empty future once (`run empty_future:<index>` of the first
//! benchmark on it), writes it in each async result's `executor`, and judges `optimized-away`
//! against it: a body as fast as the empty future is flagged, the synchronous body of the
//! same speed is not (it is judged against the empty loop, ten times faster).

use crate::common::cli::{text, vernier};
use std::path::{Path, PathBuf};
use vernier::diagnostic::Code;
use vernier::result::ResultFile;

/// Time per iteration the script answers, in ns: the empty loop, the empty future, and the
/// benchmarks 0 (as fast as the empty future), 1 (five times slower) and 2 (synchronous).
const EMPTY_NS: u64 = 1;
const EMPTY_FUTURE_NS: u64 = 10;
const BENCH_NS: [u64; 3] = [10, 50, 10];

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("async-worker");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn scripted_worker() -> PathBuf {
    let p = tmp("async.sh");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\n\
             while read -r cmd which rest <&3; do\n\
               echo \"$cmd $which\" >> \"$LOG\"\n\
               case \"$cmd\" in\n\
                 hello) echo 'hello 1 impl=sh/0 timer=monotonic resolution_ns=1 overhead_ns=1 tsc_hz=0 build=release pid=1' >&4;;\n\
                 list) printf 'bench 0 awaits%%20nothing executor=sh%%20loop on_calling_core=1\\n\
bench 1 awaits%%20work executor=sh%%20loop on_calling_core=1\\nbench 2 sync\\nend 3\\n' >&4;;\n\
                 run)\n\
                   case \"$which\" in\n\
                     empty) per={EMPTY_NS};;\n\
                     empty_future:*) per={EMPTY_FUTURE_NS};;\n\
                     0) per={};;\n\
                     1) per={};;\n\
                     2) per={};;\n\
                   esac\n\
                   for kv in $rest; do\n\
                     case \"$kv\" in iters=*) iters=${{kv#iters=}};; samples=*) samples=${{kv#samples=}};; esac\n\
                   done\n\
                   ns=$((iters * per)); line=\"samples $samples ns=$ns\"; i=1\n\
                   while [ $i -lt $samples ]; do line=\"$line,$ns\"; i=$((i + 1)); done\n\
                   echo \"$line\" >&4;;\n\
                 quit) echo bye >&4; exit 0;;\n\
                 *) echo \"error unknown command '$cmd'\" >&4;;\n\
               esac\n\
             done\n",
            BENCH_NS[0], BENCH_NS[1], BENCH_NS[2]
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn an_async_benchmark_served_by_a_worker_is_judged_against_its_executors_empty_future() {
    let (json, log) = (tmp("async.json"), tmp("async.log"));
    let _ = std::fs::remove_file(&log);
    let o = vernier()
        .args(["run", "--quick", "--processes", "1", "--counters", "none"])
        .args(["--no-memory", "--json"])
        .arg(&json)
        .arg("--")
        .arg(scripted_worker())
        .env("LOG", &log)
        .output()
        .unwrap();
    let all = text(&o);
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{all}"));
    let sent = std::fs::read_to_string(&log).unwrap();
    // Once per executor: the first benchmark on it stands for both.
    assert!(sent.contains("run empty_future:0"), "{sent}");
    assert!(!sent.contains("run empty_future:1"), "{sent}");

    let by_name = |n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap();
    let removed = |n: &str| {
        by_name(n)
            .diagnostics
            .iter()
            .any(|d| d.code == Code::OptimizedAway)
    };
    for n in ["awaits nothing", "awaits work"] {
        let e = by_name(n)
            .executor
            .as_ref()
            .unwrap_or_else(|| panic!("{n}: {all}"));
        assert_eq!(e.name, "sh loop");
        assert!(e.on_calling_core);
        assert!(
            (e.empty_future_ns / EMPTY_FUTURE_NS as f64 - 1.0).abs() < 0.01,
            "{n}: {e:?}"
        );
    }
    assert!(by_name("sync").executor.is_none());
    assert!(removed("awaits nothing"), "{all}");
    assert!(!removed("awaits work"), "{all}");
    assert!(!removed("sync"), "{all}");
    // Said under the table, once for the executor.
    assert_eq!(all.matches("async on sh loop").count(), 1, "{all}");
}
