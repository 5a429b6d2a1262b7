//! Counters and `--instructions` through the real `vernier` binary: `--counters` on `demo` and
//! `run`, the counters in a worker's result, and the deterministic mode under callgrind
//! (identical runs, a chain twice as long, the demo's hot and cold events). Counts and
//! structure only, never absolute times.

use crate::common::{cli, rust_examples};
use cli::{ok, only, vernier};
use std::path::PathBuf;
use std::process::Command;
use vernier::diagnostic::Code;
use vernier::result::{ResultFile, Status};

fn tmp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("counters-cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The chain example (`crates/vernier/examples/chain.rs`), built with the other example
/// workers in the tests' profile (the `vernier` crate is optimised in every profile).
fn chain() -> PathBuf {
    rust_examples::examples().join("chain")
}

fn have_valgrind() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn demo_reads_counters_and_says_what_it_cannot_read() {
    let json = tmp("demo-add.json");
    let out = vernier()
        .args(["demo", "--quick", "-v", "--filter", "^add$", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = ok(&out);
    let file = ResultFile::load(&json).unwrap();
    let b = only(&file);
    let h = file
        .harness
        .counters
        .as_ref()
        .expect("counters on by default");
    assert!(h.events.iter().any(|e| e == "task-clock"));
    assert!(h.read_cost_ns > 0.0 && h.reads_per_side >= 1);
    assert!(b.counters.as_ref().unwrap()["task-clock_per_iter"] > 0.0);
    assert!(stdout.contains("counters/iter: "), "{stdout}");
    assert!(stdout.contains("read around each sample"), "{stdout}");
    match &h.note {
        Some(note) => {
            // One note for the run, not repeated under the benchmark.
            assert_eq!(stdout.matches(note.as_str()).count(), 1, "{stdout}");
            assert_eq!(
                stdout.matches("counters-unavailable").count(),
                1,
                "{stdout}"
            );
            assert!(b
                .diagnostics
                .iter()
                .any(|d| d.code == Code::CountersUnavailable));
            for u in &h.unavailable {
                let key = format!("{}_per_iter", u.event.name());
                assert!(!b.counters.as_ref().unwrap().contains_key(&key));
            }
        }
        None => assert!(!stdout.contains("counters-unavailable")),
    }

    // --counters none: no counters anywhere.
    let out = vernier()
        .args([
            "demo",
            "--quick",
            "--filter",
            "^add$",
            "--counters",
            "none",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = ok(&out);
    let file = ResultFile::load(&json).unwrap();
    assert!(file.harness.counters.is_none());
    assert!(only(&file).counters.is_none());
    assert!(!stdout.contains("counters/iter"), "{stdout}");
    assert!(!stdout.contains("read around each sample"), "{stdout}");

    // A chosen list; an unknown name is an error listing the valid ones.
    let out = vernier()
        .args([
            "demo",
            "--quick",
            "--filter",
            "^add$",
            "--counters",
            "page-faults",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    ok(&out);
    let file = ResultFile::load(&json).unwrap();
    assert_eq!(file.harness.counters.unwrap().events, ["page-faults"]);
    let out = vernier()
        .args(["demo", "--quick", "--counters", "cycels"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown counter `cycels`") && err.contains("cycles"),
        "{err}"
    );
}

#[test]
fn a_worker_returns_counters_per_sample() {
    let json = tmp("run-chain.json");
    let out = vernier()
        .args(["run", "--quick", "-v", "--processes", "1", "--json"])
        .arg(&json)
        .arg("--")
        .arg(chain())
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert!(stdout.contains("counters/iter: "), "{stdout}");
    let file = ResultFile::load(&json).unwrap();
    let b = only(&file);
    let h = file.harness.counters.as_ref().unwrap();
    assert!(h.events.iter().any(|e| e == "task-clock"));
    assert!(h.baseline["task-clock"] > 0.0, "{h:?}");
    let n = b.samples.ns.len();
    for e in &h.events {
        let col = &b.samples.counters[e];
        assert_eq!(col.len(), n, "{e}");
        assert!(col.iter().all(|v| v.is_some()), "{e}");
    }
    // Task-clock per iteration agrees with the time per iteration (same region, same thread).
    let tc = b.counters.as_ref().unwrap()["task-clock_per_iter"];
    let r = tc / b.per_iter.median_ns;
    assert!(
        (0.8..1.25).contains(&r),
        "task-clock {tc} vs {}",
        b.per_iter.median_ns
    );
}

/// `vernier run --instructions` on the chain of `n` additions; the result file.
fn instructions(n: u64, name: &str) -> ResultFile {
    let json = tmp(name);
    let out = vernier()
        .args(["run", "--instructions", "--json"])
        .arg(&json)
        .arg("--")
        .arg(chain())
        .env("CHAIN_N", n.to_string())
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert!(stdout.contains("instr/iter"), "{stdout}");
    let f = ResultFile::load(&json).unwrap();
    assert_eq!(f.mode, "instructions");
    assert_eq!(only(&f).status, Status::Ok);
    f
}

fn ir(f: &ResultFile) -> f64 {
    only(f).counters.as_ref().unwrap()["instructions_per_iter"]
}

#[test]
fn instruction_counts_repeat_and_follow_the_chain_length() {
    assert!(
        have_valgrind(),
        "valgrind is not installed: apt-get install valgrind (bash .ci/run installs it)"
    );
    let a = instructions(100, "i100a.json");
    let b = instructions(100, "i100b.json");
    // Identical figures, run to run: every event, to the last digit.
    assert_eq!(only(&a).counters, only(&b).counters);
    assert_eq!(only(&a).samples.counters, only(&b).samples.counters);
    for k in [
        "D1mr_per_iter",
        "D1mw_per_iter",
        "Bc_per_iter",
        "Bcm_per_iter",
    ] {
        assert!(only(&a).counters.as_ref().unwrap().contains_key(k), "{k}");
    }

    // Twice the chain: twice its instructions, once the call's fixed part (CHAIN_N = 0) is
    // taken off. n = 100 is not a multiple of the chain's 8-way unrolling (4 additions go
    // through the remainder loop, 3 instructions each), so that ratio is only near 2.
    let zero = ir(&instructions(0, "i0.json"));
    let (i100, i200) = (ir(&a), ir(&instructions(200, "i200.json")));
    let r = (i200 - zero) / (i100 - zero);
    eprintln!("instructions/iter: n=0 {zero}, n=100 {i100}, n=200 {i200}: net ratio {r:.3}");
    assert!((1.8..=2.1).contains(&r), "{r}");
    let (i800, i1600) = (
        ir(&instructions(800, "i800.json")),
        ir(&instructions(1600, "i1600.json")),
    );
    // Multiples of 8: 800 more additions are exactly 100 more unrolled blocks of 10
    // instructions (8 adds, dec, jnz), and the net count doubles to within the one
    // instruction that enters the unrolled loop.
    assert_eq!(i1600 - i800, 1000.0, "{zero} {i800} {i1600}");
    let r = (i1600 - zero) / (i800 - zero);
    assert!((r - 2.0).abs() < 2e-3, "{r}");
}

#[test]
fn demo_instructions_show_the_cold_events_missing_the_cache() {
    assert!(
        have_valgrind(),
        "valgrind is not installed: apt-get install valgrind (bash .ci/run installs it)"
    );
    let json = tmp("demo-i.json");
    let out = vernier()
        .args([
            "demo",
            "--instructions",
            "--filter",
            "event copy|barrier",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = ok(&out);
    let f = ResultFile::load(&json).unwrap();
    assert_eq!(f.mode, "instructions");
    let get = |name: &str, k: &str| {
        let b = f.benchmarks.iter().find(|b| b.name == name).unwrap();
        b.counters.as_ref().unwrap().get(k).copied().unwrap_or(0.0)
    };
    let d1 = |name: &str| get(name, "D1mr_per_iter") + get(name, "D1mw_per_iter");
    let (hot, cold) = (
        d1("event copy, same event (hot)"),
        d1("event copy, 256Ki events (cold)"),
    );
    eprintln!("{stdout}\nD1 misses per iteration: hot {hot}, cold {cold}");
    // A never-written 1 KiB event per iteration misses; the same event stays cached.
    assert!(cold >= 1.0 && hot < 0.1, "hot {hot}, cold {cold}");
    // The same instructions either way: the difference is memory, not code.
    let ratio = get("event copy, 256Ki events (cold)", "instructions_per_iter")
        / get("event copy, same event (hot)", "instructions_per_iter");
    assert!((0.9..1.1).contains(&ratio), "{ratio}");
    // The removed computation is flagged from its instruction count.
    let flagged = |name: &str| {
        f.benchmarks
            .iter()
            .find(|b| b.name == name)
            .unwrap()
            .diagnostics
            .iter()
            .any(|d| d.code == Code::OptimizedAway)
    };
    assert!(flagged("sqrt(4.2) without barrier"));
    assert!(!flagged("sqrt(4.2) with barrier"));
}

#[test]
fn a_missing_valgrind_names_the_package() {
    let out = vernier()
        .args(["run", "--instructions", "--"])
        .arg(chain())
        .env("VERNIER_VALGRIND", "/nonexistent/valgrind")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs valgrind"), "{err}");
    assert!(err.contains("apt-get install valgrind"), "{err}");
}

/// `vernier compare --instructions` of the chain at `old` and `new` additions per iteration;
/// the exit status and the comparison file.
fn compare_counted(old: u64, new: u64, name: &str) -> (Option<i32>, serde_json::Value) {
    let json = tmp(name);
    let out = vernier()
        .args([
            "compare",
            "--instructions",
            "--fail-on-regression",
            "--json",
        ])
        .arg(&json)
        .arg(format!("--old-env=CHAIN_N={old}"))
        .arg(format!("--new-env=CHAIN_N={new}"))
        .arg(chain())
        .arg(chain())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("instr/iter"), "{text}");
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (out.status.code(), v)
}

#[test]
fn compare_instructions_calls_one_more_addition_slower_and_the_same_build_no_change() {
    assert!(
        have_valgrind(),
        "valgrind is not installed: apt-get install valgrind (bash .ci/run installs it)"
    );
    let (code, v) = compare_counted(100, 101, "cmp-100-101.json");
    let c = &v["comparisons"][0];
    assert_eq!(v["mode"], "instructions");
    assert_eq!(c["verdict"], "slower", "{v}");
    let [o, n] = [0, 1].map(|i| c["instructions_per_iter"][i].as_f64().unwrap());
    assert!(n - o >= 1.0, "{o} → {n}");
    assert_eq!(code, Some(2), "--fail-on-regression on a slower benchmark");
    // The same build twice: the same count, every time.
    for k in 0..2 {
        let (code, v) = compare_counted(100, 100, &format!("cmp-100-100-{k}.json"));
        let c = &v["comparisons"][0];
        assert_eq!(c["verdict"], "no-change", "{v}");
        assert_eq!(c["instructions_per_iter"][0], c["instructions_per_iter"][1]);
        assert_eq!(code, Some(0));
    }
    // Result files are not counted: a clear error.
    let out = vernier()
        .args(["compare", "--instructions"])
        .arg(tmp("cmp-100-101.json"))
        .arg(tmp("cmp-100-101.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("must both be programs") || err.contains("comparison file"),
        "{err}"
    );
}
