//! Threaded benchmarks through the real runner: the sharing lesson (private counters, one
//! shared atomic, two counters on one cache line) at 1 and 2 threads, written once with the
//! C++ header and once with the Rust crate (as a worker and standalone), plus more threads
//! than CPUs and a body that fails in one thread.
//!
//! What holds in any state of a shared machine is asserted: the names and figures of every
//! thread count, the shared atomic and the false-shared pair below half of perfect scaling
//! and flagged `contended`, the oversubscribed count flagged, the failing body
//! failing its benchmark only, with its message. How far private counters scale depends on a
//! second CPU being free during the run: it is printed, not bounded.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/cpp.rs"]
mod cpp;
#[path = "common/rust_examples.rs"]
mod rust_examples;

use vernier::diagnostic::Code;
use vernier::result::{BenchmarkResult, ResultFile, Status};

fn get<'a>(f: &'a ResultFile, name: &str) -> &'a BenchmarkResult {
    f.benchmarks
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no benchmark {name} in the result"))
}

fn flagged(b: &BenchmarkResult, c: Code) -> bool {
    b.diagnostics.iter().any(|d| d.code == c)
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
    // thread; no ordering between the bodies holds then.
    speedup(f, "private");
    for base in ["shared", "false-shared"] {
        let s = speedup(f, base);
        // One cache line written by both threads: about 0.3–0.8× one thread here when the
        // second CPU is free, up to 1.12× seen with it busy; never the 1.5× that would be
        // half of perfect scaling.
        assert!(
            s < 1.5,
            "{base}: two threads at {s:.2}× one thread's throughput"
        );
        assert!(flagged(
            get(f, &format!("{base}/threads:2")),
            Code::Contended
        ));
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

fn run(exe: &std::path::Path, json: &std::path::Path, dir: &std::path::Path) -> ResultFile {
    let o = cli::vernier_with_speed_file(dir)
        .args(["run", "--quick", "--json"])
        .arg(json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    // A failed benchmark makes the run's status 1; everything else was measured.
    assert_eq!(o.status.code(), Some(1), "{}", cli::text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("one thread ["), "{out}");
    ResultFile::load(json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)))
}

#[test]
fn cpp_sharing_lesson_through_the_runner() {
    let exe = cpp::compile(
        "sharing",
        &[cpp::repo_root().join("examples/cpp/sharing.cpp")],
        &["-O2", "-pthread"],
    );
    let dir = tempfile::tempdir().unwrap();
    let f = run(&exe, &dir.path().join("cpp.json"), dir.path());
    check(&f, "throws/threads:2", "thread 1 of 2: thread one gives up");
    // The HTML report plots throughput against threads for each benchmark with two counts.
    let page = cli::report_page(&dir.path().join("cpp.json"), &dir.path().join("cpp.html"));
    assert_eq!(page.matches("data-plot=\"threads\"").count(), 3);
    assert!(page.contains("shared: throughput against threads"));
}

#[test]
fn rust_sharing_lesson_as_a_worker_and_standalone() {
    let exe = rust_examples::examples().join("sharing");
    let dir = tempfile::tempdir().unwrap();
    let f = run(&exe, &dir.path().join("rust.json"), dir.path());
    check(&f, "panics/threads:2", "thread 1 of 2: thread one gives up");
    // Standalone: the same figures from the suite in this process.
    let json = dir.path().join("standalone.json");
    let o = std::process::Command::new(&exe)
        .args(["--quick", "--json"])
        .arg(&json)
        .env("VERNIER_SPEED_FILE", dir.path().join("core-speed.json"))
        .output()
        .unwrap();
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    check(&f, "panics/threads:2", "thread 1 of 2: thread one gives up");
}
