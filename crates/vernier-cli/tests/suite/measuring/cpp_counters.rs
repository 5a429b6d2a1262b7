//! Performance counters in the C++ header: the `counters=` option of the protocol answered by
//! a C++ worker (the same tokens as the Rust harness), one page fault per iteration measured
//! through `vernier run`, and samples that sleep marked interrupted. Counts and structure
//! only, never absolute times.

use crate::common::{cli, conformance, cpp};

use cli::{ok, only, vernier};
use conformance::Session;
use std::path::PathBuf;
use std::process::Command;
use vernier::counters::{CounterSet, Event};
use vernier::diagnostic::Code;
use vernier::protocol::parse_samples;
use vernier::result::{ResultFile, Status};
use vernier::samples::CounterColumn;

fn tmp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp-counters");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Whether this process may count `event` (the worker runs as the same user on the same
/// machine, so it can too).
fn readable(event: Event) -> bool {
    !CounterSet::open(&[event]).is_empty()
}

fn column<'a>(cols: &'a [CounterColumn], event: &str) -> Option<&'a CounterColumn> {
    cols.iter().find(|c| c.event == event)
}

/// The `ctr.`/`scaled.` token names of a reply, in order.
fn counter_tokens(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .filter(|t| t.starts_with("ctr.") || t.starts_with("scaled."))
        .map(|t| t.split('=').next().unwrap())
        .collect()
}

#[test]
fn a_cpp_worker_reads_the_counters_it_is_asked_for() {
    let mut s = Session::spawn(Command::new(cpp::example("chain")));
    let line =
        s.ask("run 0 iters=1000 samples=4 counters=task-clock,page-faults,context-switches,cycles");
    let b = parse_samples(&line, 4).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(b.ns.len(), 4, "{line}");
    let switches = readable(Event::ContextSwitches);
    let cycles = readable(Event::Cycles);
    // Software events: one value per sample, exact (never scaled: the kernel counts them).
    for e in ["task-clock", "page-faults"] {
        let c = column(&b.counters, e).unwrap_or_else(|| panic!("no {e} in {line}"));
        assert_eq!(c.values.len(), 4, "{line}");
        assert!(c.values.iter().all(|v| v.is_some()), "{line}");
        assert!(c.scaled.is_empty(), "{line}");
    }
    match column(&b.counters, "context-switches") {
        Some(c) => {
            assert!(switches, "{line}");
            assert_eq!(c.values.len(), 4);
            assert!(c.values.iter().all(|v| v.is_some()), "{line}");
        }
        None => assert!(!switches, "{line}"),
    }
    // Hardware events: absent where there is no PMU (a VM without vPMU: ENOENT), never zeros.
    match column(&b.counters, "cycles") {
        Some(c) => {
            assert!(cycles, "{line}");
            assert_eq!(c.values.len(), 4);
            assert!(c.values.iter().flatten().any(|&v| v > 0), "{line}");
        }
        None => {
            assert!(!cycles, "{line}");
            assert!(!line.contains("cycles"), "{line}");
        }
    }
    // Tokens in the order of the event table (cycles, task-clock, context-switches,
    // page-faults), whatever the order asked for.
    let mut expected = Vec::new();
    if cycles {
        expected.push("ctr.cycles");
    }
    expected.push("ctr.task-clock");
    if switches {
        expected.push("ctr.context-switches");
    }
    expected.push("ctr.page-faults");
    let got = counter_tokens(&line);
    assert_eq!(&got[..expected.len()], expected.as_slice(), "{line}");
    // Task-clock covers the timed region (same thread, plus about half of each read), unless
    // the thread was switched out during the sample (on a loaded machine: wall time then
    // runs on while task-clock does not), which the context-switch count says.
    let tc = column(&b.counters, "task-clock").unwrap();
    let cs = column(&b.counters, "context-switches");
    for (i, (t, c)) in b.ns.iter().zip(&tc.values).enumerate() {
        let switched = cs.is_some_and(|cs| cs.values[i].unwrap_or(0) > 0);
        if !switched {
            assert!(c.unwrap() as f64 >= 0.5 * *t as f64, "{line}");
        }
    }

    // The empty loop too; `default` expands; an unknown name is ignored (the runner checks
    // names); without `counters=` there is no token.
    let line = s.ask("run empty iters=1 samples=8 counters=default,no-such-event");
    let b = parse_samples(&line, 8).unwrap();
    for e in ["task-clock", "page-faults"] {
        assert_eq!(column(&b.counters, e).unwrap().values.len(), 8, "{line}");
    }
    assert_eq!(
        column(&b.counters, "cpu-migrations").is_some(),
        readable(Event::CpuMigrations),
        "{line}"
    );
    assert!(!line.contains("no-such-event"), "{line}");
    let line = s.ask("run 0 iters=10 samples=2");
    assert!(counter_tokens(&line).is_empty(), "{line}");
    // A new list reopens the counters.
    let line = s.ask("run 0 iters=10 samples=3 counters=page-faults");
    assert_eq!(counter_tokens(&line), ["ctr.page-faults"], "{line}");
    let line = s.ask("run 0 iters=10 samples=2 counters=no-such-event");
    assert!(counter_tokens(&line).is_empty(), "{line}");
    assert!(parse_samples(&line, 2).is_ok(), "{line}");
    assert_eq!(s.ask("quit"), "bye");
}

#[test]
fn a_fresh_page_per_iteration_is_one_page_fault_per_iteration() {
    let json = tmp("pagefault.json");
    let out = vernier()
        .args(["run", "--quick", "-v", "--processes", "1", "--json"])
        .arg(&json)
        .arg("--")
        .arg(cpp::example("pagefault"))
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert!(stdout.contains("counters/iter: "), "{stdout}");
    let file = ResultFile::load(&json).unwrap();
    let b = only(&file);
    assert_eq!(b.status, Status::Ok);
    let h = file
        .harness
        .counters
        .as_ref()
        .expect("counters on by default");
    for e in ["task-clock", "page-faults"] {
        assert!(h.events.iter().any(|x| x == e), "{h:?}");
    }
    // The empty loop touches no page.
    assert_eq!(h.baseline.get("page-faults"), Some(&0.0), "{h:?}");
    // What the worker did not return is what this machine cannot count (the runner's own
    // reason), never "the worker did not return it".
    for u in &h.unavailable {
        assert!(!readable(u.event), "{u:?}");
        assert!(!u.reason.contains("did not return"), "{u:?}");
    }
    let n = b.samples.ns.len();
    let col = &b.samples.counters["page-faults"];
    assert_eq!(col.len(), n);
    assert!(col.iter().all(|v| v.is_some()));
    let c = b.counters.as_ref().unwrap();
    let faults = c["page-faults_per_iter"];
    eprintln!(
        "page faults per iteration: {faults} [{}, {}], {} samples × {} iterations",
        c["page-faults_per_iter_ci95_lo"],
        c["page-faults_per_iter_ci95_hi"],
        b.steady_samples,
        b.iters_per_sample
    );
    assert!((0.9..=1.1).contains(&faults), "{c:?}");
    // Task-clock per iteration agrees with the time per iteration (same thread, same region).
    let r = c["task-clock_per_iter"] / b.per_iter.median_ns;
    assert!((0.8..1.25).contains(&r), "{r} {c:?}");
}

/// A benchmark that sleeps 2 ms once every `every` iterations, inside the timed region.
const SLEEPER: &str = r#"#include "vernier.hpp"
#include <cstdlib>
#include <unistd.h>
int main(int argc, char** argv) {
    static unsigned long calls = 0;
    static unsigned long every = std::strtoul(std::getenv("SLEEP_EVERY"), nullptr, 10);
    double x = 1.0;
    vernier::bench("sleeps now and then", [&] {
        if (++calls % every == 0) usleep(2000);
        x = x * 1.0000001;
        return x;
    });
    return vernier::main(argc, argv);
}
"#;

#[test]
fn samples_that_sleep_are_marked_interrupted() {
    assert!(
        readable(Event::ContextSwitches),
        "this user may not count context switches: sysctl kernel.perf_event_paranoid=2 or \
         lower, or run as root (docs/counters.md)"
    );
    let src = tmp("sleeper.cpp");
    std::fs::write(&src, SLEEPER).unwrap();
    let exe = cpp::compile("sleeper", &[src], &["-O2"]);
    let json = tmp("sleeper.json");
    let out = vernier()
        .args(["run", "--quick", "-v", "--processes", "1", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .env("SLEEP_EVERY", "100000")
        .output()
        .unwrap();
    let stdout = ok(&out);
    let file = ResultFile::load(&json).unwrap();
    let b = only(&file);
    let flags = &b.samples.interrupted;
    assert_eq!(flags.len(), b.samples.ns.len());
    // Every sample that slept (≥ 2 ms, with under half of it on the CPU by task-clock) is
    // marked, with its context switch. A sample as long whose thread was on the CPU for most
    // of it by task-clock did not sleep: something held the vCPU up (the host), which no
    // context switch in the guest records. (With the workspace's tests running together, one
    // 2.0 ms sample here was not marked; whether its task-clock was high was not recorded.)
    let on_cpu = |i: usize| {
        b.samples
            .counters
            .get("task-clock")
            .and_then(|c| c[i])
            .unwrap_or(0)
    };
    let slept: Vec<usize> = (0..flags.len())
        .filter(|&i| b.samples.ns[i] >= 1_900_000 && on_cpu(i) < b.samples.ns[i] / 2)
        .collect();
    assert!(!slept.is_empty(), "no sample slept");
    for &i in &slept {
        assert!(
            flags[i],
            "sample {i} slept ({} ns) but is not marked",
            b.samples.ns[i]
        );
        assert!(b.samples.counters["context-switches"][i].unwrap() >= 1);
    }
    let int = b
        .interrupted
        .as_ref()
        .expect("context switches were counted");
    eprintln!(
        "{} of {} samples slept; interrupted: {int:?}\n{stdout}",
        slept.len(),
        flags.len()
    );
    assert!(int.samples >= 1, "{int:?}");
    assert!(int.excluded);
    // Less the samples in a slower state of the core when the run saw two.
    if b.speed.as_ref().is_some_and(|sp| sp.split) {
        assert!(int.of > b.steady_samples + int.samples, "{:?}", b.speed);
    } else {
        assert_eq!(int.of, b.steady_samples + int.samples);
    }
    assert!(int.median_with_ns >= int.median_without_ns);
    // Excluded: no steady sample that slept is left in the estimate.
    assert!(b.per_iter.median_ns * (b.iters_per_sample as f64) < 1_000_000.0);
    assert!(stdout.contains("interrupted"), "{stdout}");
    if int.share > 0.01 {
        let d = b
            .diagnostics
            .iter()
            .find(|d| d.code == Code::Interrupted)
            .expect("an interrupted diagnostic");
        assert!(d.message.contains("--keep-interrupted"), "{}", d.message);
    }
}
