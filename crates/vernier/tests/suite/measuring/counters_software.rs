//! `CounterSet` for real on this machine: the software events are counted by every Linux
//! kernel, so they are tested for real; hardware events are either read or reported as
//! unavailable with a reason (never as zero).

use std::time::Duration;
use vernier::counters::*;

fn software() -> Vec<Event> {
    Event::ALL
        .iter()
        .copied()
        .filter(|e| e.kind() == EventKind::Software)
        .collect()
}

/// Whether this process may count kernel-side scheduler events (see `Event::excludes_kernel`).
fn may_count_scheduler_events() -> bool {
    let set = CounterSet::open(&[Event::ContextSwitches]);
    !set.is_empty()
}

#[test]
fn every_requested_event_is_either_read_or_explained() {
    let set = CounterSet::open(&Event::ALL);
    for e in Event::ALL {
        let read = set.events().contains(&e);
        let missing = set.unavailable().iter().filter(|u| u.event == e).count();
        assert!(
            read ^ (missing == 1),
            "{e}: read={read}, unavailable {missing} times"
        );
    }
    assert!(set.events().contains(&Event::TaskClock));
    assert!(set.events().contains(&Event::PageFaults));
    match set.note() {
        None => assert!(set.unavailable().is_empty()),
        Some(note) => {
            for u in set.unavailable() {
                assert!(note.contains(u.event.name()), "{note}");
                assert!(note.contains(&u.reason), "{note}");
            }
        }
    }
}

#[test]
fn missing_hardware_events_are_absent_not_zero() {
    let env = Environment::detect();
    let mut set = CounterSet::open(&DEFAULT_EVENTS);
    set.read_start();
    std::hint::black_box((0..1000u64).sum::<u64>());
    set.read_stop();
    let s = set.sample();
    for e in DEFAULT_EVENTS {
        assert_eq!(s.get(e).is_some(), set.events().contains(&e), "{e}");
    }
    if !env.cpu_pmu {
        // No core PMU registered (e.g. a virtual machine without vPMU):
        // the hardware group cannot open and the note says why, with the fix.
        assert_eq!(set.reads_per_side(), 1);
        let note = set
            .note()
            .expect("hardware events cannot be read without a PMU");
        for e in ["cycles", "instructions", "branch-misses", "cache-misses"] {
            assert!(note.contains(e), "{note}");
        }
        if env.virtual_machine {
            assert!(
                note.contains("no PMU is exposed to this virtual machine"),
                "{note}"
            );
            assert!(note.contains("fix: enable PMU passthrough"), "{note}");
        }
        assert_eq!(s.get(Event::Cycles), None);
        assert_eq!(s.get(Event::Instructions), None);
        assert!(to_columns(set.events(), &[s])
            .iter()
            .all(|c| c.event != "cycles"));
    }
}

// Anonymous memory that faults in one page per write (no huge pages).
use vernier::os::pages::Fresh;

const PAGE: usize = 4096;

#[test]
fn touching_a_fresh_page_per_iteration_is_one_page_fault_per_iteration() {
    const ITERS: usize = 1000;
    const SAMPLES: usize = 8;
    let mem = Fresh::new(ITERS * SAMPLES * PAGE).expect("fresh memory");
    let mut set = CounterSet::open(&software());
    let mut per_iter = Vec::new();
    for s in 0..SAMPLES {
        let base = s * ITERS * PAGE;
        set.read_start();
        for i in 0..ITERS {
            // SAFETY: base + i*PAGE < len: inside the mapping.
            unsafe { std::ptr::write_volatile(mem.as_ptr().add(base + i * PAGE), 1) };
        }
        set.read_stop();
        let sample = set.sample();
        let faults = sample
            .get(Event::PageFaults)
            .expect("page faults are counted");
        per_iter.push(faults as f64 / ITERS as f64);
    }
    per_iter.sort_by(|a, b| a.total_cmp(b));
    let median = per_iter[SAMPLES / 2];
    eprintln!("page faults per iteration: {per_iter:?}");
    assert!((0.95..=1.05).contains(&median), "{per_iter:?}");

    // The same loop over pages already touched: no faults.
    set.read_start();
    for i in 0..ITERS {
        // SAFETY: inside the mapping.
        unsafe { std::ptr::write_volatile(mem.as_ptr().add(i * PAGE), 2) };
    }
    set.read_stop();
    assert_eq!(set.sample().get(Event::PageFaults), Some(0));
}

#[test]
fn a_sample_that_sleeps_is_interrupted() {
    assert!(
        may_count_scheduler_events(),
        "this user may not count context switches: sysctl kernel.perf_event_paranoid=2 or \
         lower, or run as root (docs/counters.md)"
    );
    let mut set = CounterSet::open(&software());
    set.read_start();
    std::thread::sleep(Duration::from_millis(1));
    set.read_stop();
    let s = set.sample();
    assert!(s.get(Event::ContextSwitches).unwrap() >= 1, "{s:?}");
    assert_eq!(is_interrupted(&s), Some(true));

    // Empty regions are, for the most part, not interrupted.
    let quiet = (0..200)
        .filter(|_| {
            set.read_start();
            set.read_stop();
            is_interrupted(&set.sample()) == Some(false)
        })
        .count();
    assert!(
        quiet > 100,
        "{quiet} of 200 empty samples were uninterrupted"
    );
}

#[test]
fn task_clock_grows_with_the_work() {
    let mut set = CounterSet::open(&[Event::TaskClock]);
    let mut spin = |n: u64| {
        set.read_start();
        let mut x = 0u64;
        for i in 0..n {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        set.read_stop();
        set.sample().get(Event::TaskClock).unwrap()
    };
    let mut ratios = Vec::new();
    for _ in 0..7 {
        let a = spin(200_000);
        let b = spin(800_000);
        ratios.push(b as f64 / a.max(1) as f64);
    }
    ratios.sort_by(|a, b| a.total_cmp(b));
    // Four times the work: the median ratio is near 4, far from 1.
    assert!((2.5..6.0).contains(&ratios[3]), "{ratios:?}");
}

#[test]
fn read_cost_is_measured_and_the_reads_fault_nothing() {
    let mut set = CounterSet::open(&DEFAULT_EVENTS);
    let cost = set.read_cost();
    eprintln!("counter read cost: {cost:?}");
    assert!(cost.ns > 0.0);
    assert_eq!(cost.reads_per_side, set.reads_per_side());
    assert_eq!(cost.baseline.get(Event::PageFaults), Some(0));
    assert!(cost.baseline.get(Event::TaskClock).is_some());
    if set.events().contains(&Event::ContextSwitches) {
        assert_eq!(cost.baseline.get(Event::ContextSwitches), Some(0));
    }
    for e in Event::ALL {
        assert_eq!(
            cost.baseline.get(e).is_some(),
            set.events().contains(&e),
            "{e}"
        );
    }
}

/// Run as an unprivileged user, the scheduler events need `perf_event_paranoid ≤ 1`: with a
/// stricter setting they are reported unavailable with the sysctl as the fix, and the other
/// software events still work. Runs for real when this test runs as root with `setpriv`
/// available (it re-runs itself as `nobody`), or directly as an unprivileged user.
#[test]
fn unprivileged_fallback_names_the_sysctl() {
    let env = Environment::detect();
    let as_child = std::env::var_os("VERNIER_COUNTERS_CHILD").is_some();
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if uid == 0 && !as_child {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&exe)
            .args([
                "--exact",
                &crate::harness_name(module_path!(), "unprivileged_fallback_names_the_sysctl"),
                "--nocapture",
            ])
            .env("VERNIER_COUNTERS_CHILD", "1")
            .output();
        match out {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out.stdout).to_string()
                    + &String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "{text}");
                assert!(text.contains("1 passed"), "{text}");
                eprintln!("{text}");
            }
            Err(e) => panic!("setpriv cannot start ({e}): apt-get install util-linux"),
        }
        return;
    }
    let set = CounterSet::open(&DEFAULT_EVENTS);
    eprintln!("unprivileged note: {:?}", set.note());
    assert!(set.events().contains(&Event::TaskClock));
    assert!(set.events().contains(&Event::PageFaults));
    if env.paranoid.unwrap_or(2) >= 2 {
        assert!(!set.events().contains(&Event::ContextSwitches));
        let note = set.note().unwrap();
        assert!(
            note.contains("context-switches, cpu-migrations: counting scheduler events"),
            "{note}"
        );
        assert!(
            note.contains("sysctl kernel.perf_event_paranoid=1"),
            "{note}"
        );
    }
}
