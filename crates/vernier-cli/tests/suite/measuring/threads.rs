//! Threaded benchmarks through the real runner: the sharing lesson (private counters, one
//! shared atomic, two counters on one cache line) at 1 and 2 threads, written once with the
//! C++ header and once with the Rust crate (as a worker and standalone), plus more threads
//! than CPUs and a body that fails in one thread.
//!
//! What holds in any state of a shared machine is asserted: the names and figures of every
//! thread count (each thread's own, on-CPU and, where the kernel keeps it, run-queue wait
//! times, with cold caches too), private counters never flagged `contended`, the shared
//! atomic and the false-shared pair below half of perfect scaling and flagged either
//! `contended` or with the threads' waits for a CPU named as the reason, the oversubscribed
//! count flagged, the failing body failing its benchmark only, with its message. How far
//! private counters scale depends on a second CPU being free during the run: it is printed,
//! not bounded.

use crate::common::{cli, cpp, rust_examples};

use vernier::diagnostic::{Code, Finding, Interruption};
use vernier::result::{BenchmarkResult, ResultFile, Status};
use vernier::samples::Phase;

fn get<'a>(f: &'a ResultFile, name: &str) -> &'a BenchmarkResult {
    f.benchmarks
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no benchmark {name} in the result"))
}

fn flagged(b: &BenchmarkResult, c: Code) -> bool {
    b.diagnostics.iter().any(|d| d.code == c)
}

/// The share of its time a threaded benchmark's threads waited for a CPU, when a finding
/// names it as the reason for poor scaling (not `contended`).
fn waited_share(b: &BenchmarkResult) -> Option<f64> {
    b.diagnostics.iter().find_map(|d| match d.finding()? {
        Finding::Interrupted(Interruption::ThreadsWaited {
            cpu_wait_share,
            off_cpu_share,
            ..
        }) => cpu_wait_share.or(off_cpu_share),
        // The samples in which a thread waited, and the share of the threads' time it was.
        Finding::Interrupted(Interruption::Samples { cpu_wait_share, .. }) => cpu_wait_share,
        _ => None,
    })
}

/// Whether this kernel keeps each thread's run-queue wait (`CONFIG_SCHED_INFO`).
fn waits_kept() -> bool {
    std::path::Path::new("/proc/thread-self/schedstat").exists()
}

/// Each thread's on-CPU time and (where kept) run-queue wait: one column per thread, one
/// value per sample.
fn check_thread_columns(b: &BenchmarkResult, threads: usize) {
    let s = &b.samples;
    assert_eq!(s.thread_ns.len(), threads, "{}: own times", b.name);
    assert_eq!(s.thread_cpu_ns.len(), threads, "{}: on-CPU times", b.name);
    let waits = if waits_kept() { threads } else { 0 };
    assert_eq!(s.thread_wait_ns.len(), waits, "{}: run-queue waits", b.name);
    for col in s.thread_cpu_ns.iter().chain(&s.thread_wait_ns) {
        assert_eq!(col.len(), s.ns.len(), "{}: a value per sample", b.name);
    }
    // The threads were on a CPU in the samples taken after calibration (there are some even
    // when calibration spent the budget: cold caches under --quick on a loaded machine).
    let measured = s
        .phase
        .iter()
        .zip(&s.thread_cpu_ns[0])
        .filter(|(p, c)| **p != Phase::Calibration && c.is_some_and(|c| c > 0))
        .count();
    assert!(measured > 0, "{}: no on-CPU time measured", b.name);
}

/// The speed-up of `NAME/threads:2` over one thread, checked present.
fn speedup(f: &ResultFile, base: &str) -> f64 {
    let one = get(f, &format!("{base}/threads:1"));
    let two = get(f, &format!("{base}/threads:2"));
    assert_eq!((one.threads, two.threads), (Some(1), Some(2)));
    assert_eq!(
        two.samples.thread_ns.len(),
        2,
        "{base}: one column per thread"
    );
    let s = two
        .scaling
        .as_ref()
        .expect("a threaded benchmark has its figures");
    assert!(s.throughput_per_s > 0.0 && s.thread_per_iter_ns > 0.0);
    let a = s.against_one.expect("two threads are set beside one");
    assert!(a.speedup_ci95[0] <= a.speedup && a.speedup <= a.speedup_ci95[1]);
    eprintln!(
        "{base}: {:.2}× one thread [{:.2}, {:.2}], imbalance {:.1} %{}",
        a.speedup,
        a.speedup_ci95[0],
        a.speedup_ci95[1],
        s.imbalance * 100.0,
        if flagged(two, Code::Contended) {
            ", contended"
        } else {
            ""
        }
    );
    a.speedup
}

fn check(f: &ResultFile, failing: &str, message: &str) {
    // Printed, not bounded: with both CPUs busy (this suite's own builds beside it), the
    // second thread waits milliseconds for a CPU and even private counters read 0.01× one
    // thread; no ordering between the bodies holds then. What holds: private counters are
    // never called contended, whatever the machine's load (their waits for a CPU are named
    // instead).
    speedup(f, "private");
    let private = get(f, "private/threads:2");
    assert!(
        !flagged(private, Code::Contended),
        "private counters flagged contended: {:?}",
        private.diagnostics
    );
    for t in [1, 2] {
        check_thread_columns(get(f, &format!("private/threads:{t}")), t);
    }
    for base in ["shared", "false-shared"] {
        let s = speedup(f, base);
        // One cache line written by both threads: about 0.3–0.8× one thread here when the
        // second CPU is free, up to 1.12× seen with it busy; never the 1.5× that would be
        // half of perfect scaling.
        assert!(
            s < 1.5,
            "{base}: two threads at {s:.2}× one thread's throughput"
        );
        // Contended, or a stated reason why the scaling is not the code's: the threads took
        // turns on a CPU (the other one busy: the waits for a CPU named), or samples too short
        // to judge (`timer-limited`: with both CPUs kept busy by other work, every part's
        // calibration was cut short by waits, and samples last about a microsecond).
        let two = get(f, &format!("{base}/threads:2"));
        let waited = waited_share(two);
        eprintln!("{base}: waited for a CPU {waited:?}");
        assert!(
            flagged(two, Code::Contended)
                || waited.is_some_and(|w| w > 0.0)
                || flagged(two, Code::TimerLimited),
            "{base}: {:?}",
            two.diagnostics
        );
        assert!(!flagged(
            get(f, &format!("{base}/threads:1")),
            Code::Contended
        ));
    }
    let cpus = get(f, "private/threads:2")
        .scaling
        .as_ref()
        .unwrap()
        .cpus
        .unwrap() as usize;
    let over = get(f, &format!("oversubscribed/threads:{}", cpus + 1));
    assert_eq!(over.status, Status::Ok);
    assert!(
        flagged(over, Code::Oversubscribed),
        "{:?}",
        over.diagnostics
    );
    assert!(!flagged(get(f, "private/threads:2"), Code::Oversubscribed));
    let bad = get(f, failing);
    assert_eq!(bad.status, Status::Failed);
    let err = bad.error.as_deref().unwrap_or_default();
    assert!(err.contains(message), "{err}");
}

/// `vernier run --quick [OPTIONS] --json DIR/NAME -- EXE`, which must exit with `status`;
/// its output and result file.
fn run_quick(
    exe: &std::path::Path,
    dir: &std::path::Path,
    name: &str,
    options: &[&str],
    status: i32,
) -> (String, ResultFile) {
    let json = dir.join(name);
    let o = cli::vernier_with_ledger(dir)
        .args(["run", "--quick"])
        .args(options)
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(status), "{}", cli::text(&o));
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    (String::from_utf8_lossy(&o.stdout).into_owned(), f)
}

/// `--cache cold` keeps every thread's figures (the caches evicted before each sample).
fn check_cold(exe: &std::path::Path, dir: &std::path::Path) {
    let options = ["--cache", "cold", "--filter", "^private/"];
    let (_, f) = run_quick(exe, dir, "cold.json", &options, 0);
    for t in [1, 2] {
        check_thread_columns(get(&f, &format!("private/threads:{t}")), t);
    }
}

fn run(exe: &std::path::Path, dir: &std::path::Path, name: &str) -> ResultFile {
    // A failed benchmark makes the run's status 1; everything else was measured.
    let (out, f) = run_quick(exe, dir, name, &[], 1);
    assert!(out.contains("one thread ["), "{out}");
    f
}

#[test]
fn cpp_sharing_lesson_through_the_runner() {
    let exe = cpp::compile(
        "sharing",
        &[cpp::repo_root().join("examples/cpp/sharing.cpp")],
        &["-O2", "-pthread"],
    );
    let dir = tempfile::tempdir().unwrap();
    let f = run(&exe, dir.path(), "cpp.json");
    check(&f, "throws/threads:2", "thread 1 of 2: thread one gives up");
    // The HTML report plots throughput against threads for each benchmark with two counts.
    let page = cli::report_page(&dir.path().join("cpp.json"), &dir.path().join("cpp.html"));
    assert_eq!(page.matches("data-plot=\"threads\"").count(), 3);
    assert!(page.contains("shared: throughput against threads"));
    check_cold(&exe, dir.path());
    // Without the runner: a quick estimate per thread count.
    let o = std::process::Command::new(&exe)
        .args(["--standalone", "private"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", cli::text(&o));
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("private/threads:"))
        .collect();
    assert!(rows.len() >= 2, "{out}");
    assert!(rows.iter().all(|l| l.contains("T_iter ~ ")), "{out}");
}

#[test]
fn rust_sharing_lesson_as_a_worker_and_standalone() {
    let exe = rust_examples::examples().join("sharing");
    let dir = tempfile::tempdir().unwrap();
    let f = run(&exe, dir.path(), "rust.json");
    check(&f, "panics/threads:2", "thread 1 of 2: thread one gives up");
    check_cold(&exe, dir.path());
    // Standalone: the same figures from the suite in this process.
    let json = dir.path().join("standalone.json");
    let o = std::process::Command::new(&exe)
        .args(["--quick", "--json"])
        .arg(&json)
        .env("VERNIER_LEDGER", dir.path().join("ledger.json"))
        .output()
        .unwrap();
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    check(&f, "panics/threads:2", "thread 1 of 2: thread one gives up");
    // The failed benchmark is named at the end and the status says the run is not whole (a
    // `cargo bench` in CI fails), everything else measured and saved.
    assert_eq!(o.status.code(), Some(1), "{}", cli::text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1 benchmark(s) failed: panics/threads:2"),
        "{}",
        cli::text(&o)
    );
}
