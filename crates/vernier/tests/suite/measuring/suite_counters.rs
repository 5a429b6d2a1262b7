//! Counters through the Suite API, for real on this machine: page faults per iteration,
//! samples interrupted on purpose, and the note about what cannot be read. No absolute times:
//! counts, flags and orderings within one run.

use std::cell::Cell;
use std::rc::Rc;
use vernier::counters::CounterSelection;
use vernier::counters::{CounterSet, Environment, Event, DEFAULT_EVENTS};
use vernier::diagnostic::Code;
use vernier::plan::Plan;
use vernier::result::{BenchmarkResult, ResultFile};
use vernier::Options;
use vernier::Suite;

fn run(options: Options, register: impl FnOnce(&mut Suite)) -> ResultFile {
    let mut suite = Suite::new(options);
    register(&mut suite);
    suite.run_in_process(&mut |_| {})
}

fn options(budget_ms: u64, counters: CounterSelection) -> Options {
    Options {
        plan: Plan::with_budget(budget_ms * 1_000_000),
        counters,
        ..Options::default()
    }
}

fn software() -> CounterSelection {
    CounterSelection::Events(vec![
        Event::TaskClock,
        Event::ContextSwitches,
        Event::CpuMigrations,
        Event::PageFaults,
    ])
}

fn may_count_scheduler_events() -> bool {
    !CounterSet::open(&[Event::ContextSwitches]).is_empty()
}

fn only(file: &ResultFile) -> &BenchmarkResult {
    assert_eq!(file.benchmarks.len(), 1);
    &file.benchmarks[0]
}

const PAGE: usize = 4096;
/// Pages in the ring: more than a sample's iterations, so each page of a sample is distinct.
const RING: usize = 8192;

#[test]
fn a_fresh_page_per_iteration_is_one_page_fault_per_iteration() {
    // A private anonymous ring; before each iteration (outside the timed region) the next page
    // is given back with MADV_DONTNEED, so the iteration's write faults a fresh zero page in.
    // SAFETY: an anonymous private mapping, no file, no fixed address.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            RING * PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(base, libc::MAP_FAILED);
    // SAFETY: the range is the mapping just created.
    unsafe { libc::madvise(base, RING * PAGE, libc::MADV_NOHUGEPAGE) };
    let base = base as usize;
    let mut next = 0usize;
    let file = run(options(150, software()), |s| {
        s.bench_with_setup(
            "fresh page",
            move || {
                let p = base + (next % RING) * PAGE;
                next += 1;
                // SAFETY: one page inside the ring mapping, which lives for the whole test.
                unsafe { libc::madvise(p as *mut libc::c_void, PAGE, libc::MADV_DONTNEED) };
                p
            },
            // SAFETY: `p` is a page of the ring mapping.
            |p| unsafe { std::ptr::write_volatile(p as *mut u8, 1) },
        );
    });
    let b = only(&file);
    let c = b.counters.as_ref().expect("software counters are read");
    let faults = c["page-faults_per_iter"];
    eprintln!(
        "page faults per iteration: {faults} [{}, {}], {} × {}",
        c["page-faults_per_iter_ci95_lo"],
        c["page-faults_per_iter_ci95_hi"],
        b.steady_samples,
        b.iters_per_sample
    );
    assert!((0.95..=1.05).contains(&faults), "{c:?}");
    assert!(b.samples.counters["page-faults"]
        .iter()
        .all(|v| v.is_some()));
    // The read cost is in the harness section, with the baseline analysis subtracted.
    let h = file.harness.counters.as_ref().unwrap();
    assert!(h.read_cost_ns > 0.0);
    assert_eq!(h.baseline.get("page-faults"), Some(&0.0));
    assert!(h.baseline["task-clock"] > 0.0);
    // SAFETY: unmaps exactly the ring mapping; the suite (and its closures) are gone.
    unsafe { libc::munmap(base as *mut libc::c_void, RING * PAGE) };
}

/// A body that sleeps 1 ms once every `every` calls.
fn sleeper(s: &mut Suite, every: u64) {
    let calls = Rc::new(Cell::new(0u64));
    s.bench("sleeps now and then", move || {
        let n = calls.get() + 1;
        calls.set(n);
        if n.is_multiple_of(every) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        vernier::black_box(n)
    });
}

#[test]
fn samples_that_sleep_are_interrupted_and_excluded() {
    assert!(
        may_count_scheduler_events(),
        "this user may not count context switches: sysctl kernel.perf_event_paranoid=2 or \
         lower, or run as root (docs/counters.md)"
    );
    let file = run(options(300, software()), |s| sleeper(s, 50_000));
    let b = only(&file);
    let flags = &b.samples.interrupted;
    assert_eq!(flags.len(), b.samples.ns.len());
    // Every sample that slept (≥ 1 ms) is marked interrupted.
    let slept: Vec<usize> = (0..flags.len())
        .filter(|&i| b.samples.ns[i] >= 1_000_000)
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
    eprintln!("{int:?}");
    assert!(int.samples >= 1);
    if int.samples == int.of {
        // A machine so loaded that every sample was preempted (seen in CI with a dozen test
        // processes on two CPUs): excluding them all would leave nothing, so they are kept,
        // and the estimate says it rests on interrupted samples.
        assert!(!int.excluded, "{int:?}");
        assert!(b.per_iter.median_ns.is_finite());
        return;
    }
    assert!(int.excluded);
    // The steady samples less the interrupted ones, less those in a slower state of the core
    // when the run saw two (the headline then rests on the fast state's samples).
    if b.speed.as_ref().is_some_and(|sp| sp.split) {
        assert!(int.of > b.steady_samples + int.samples, "{:?}", b.speed);
    } else {
        assert_eq!(int.of, b.steady_samples + int.samples);
    }
    assert!(int.median_with_ns >= int.median_without_ns);
    // Excluded: the estimate's slowest steady sample is far below a sleeping one.
    assert!(b.per_iter.median_ns * (b.iters_per_sample as f64) < 1_000_000.0);
    // Many of them: the diagnostic says so, and how to keep them.
    assert!(int.share > 0.01, "{int:?}");
    let d = b
        .diagnostics
        .iter()
        .find(|d| d.code == Code::Interrupted)
        .expect("an interrupted diagnostic");
    assert!(d.message.contains("--keep-interrupted"), "{}", d.message);

    // --keep-interrupted keeps them in the estimates.
    let mut keep = options(300, software());
    keep.keep_interrupted = true;
    let file = run(keep, |s| sleeper(s, 50_000));
    let int = file.benchmarks[0].interrupted.unwrap();
    assert!(!int.excluded);
    let b = &file.benchmarks[0];
    if b.speed.as_ref().is_some_and(|sp| sp.split) {
        assert!(b.steady_samples < int.of, "{:?}", b.speed);
    } else {
        assert_eq!(b.steady_samples, int.of);
    }
}

#[test]
fn unreadable_counters_are_named_never_zero() {
    let env = Environment::detect();
    let file = run(options(60, CounterSelection::Default), |s| {
        s.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
    });
    let b = only(&file);
    let h = file.harness.counters.as_ref().unwrap();
    let requested: Vec<&str> = DEFAULT_EVENTS.iter().map(|e| e.name()).collect();
    assert_eq!(h.requested, requested);
    // Each requested event is either read (it has figures) or named, with its reason.
    for e in DEFAULT_EVENTS {
        let read = h.events.iter().any(|x| x == e.name());
        let named = h.unavailable.iter().any(|u| u.event == e);
        assert!(read ^ named, "{e}");
        let key = format!("{}_per_iter", e.name());
        let has_figure = b.counters.as_ref().is_some_and(|c| c.contains_key(&key));
        assert_eq!(has_figure, read, "{key}");
        assert_eq!(b.samples.counters.contains_key(e.name()), read, "{e}");
    }
    let diag = b
        .diagnostics
        .iter()
        .find(|d| d.code == Code::CountersUnavailable);
    match &h.note {
        None => assert!(diag.is_none()),
        Some(note) => {
            let d = diag.expect("the benchmark carries the code");
            assert!(d.message.contains(note.as_str()));
            for u in &h.unavailable {
                assert!(d.message.starts_with("not read: "));
                assert!(note.contains(u.event.name()) && note.contains(&u.reason));
            }
        }
    }
    if !env.cpu_pmu && env.virtual_machine {
        let note = h.note.as_deref().unwrap();
        assert!(
            note.contains("no PMU is exposed to this virtual machine"),
            "{note}"
        );
        assert!(!b.counters.as_ref().unwrap().contains_key("ipc"));
    }
    // Counters off: nothing read, nothing said.
    let file = run(options(60, CounterSelection::Off), |s| {
        s.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
    });
    assert!(file.harness.counters.is_none());
    assert!(file.benchmarks[0].counters.is_none());
    assert!(file.benchmarks[0].samples.counters.is_empty());
}
