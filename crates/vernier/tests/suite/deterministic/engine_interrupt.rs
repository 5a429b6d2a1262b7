//! Ctrl-C reaches the engine: the CLI's handler raises `measure::INTERRUPTED`, and the sampling
//! state machine stops at the start of its next round, keeping every sample taken. The flag is
//! process-wide, so the test runs in a process of its own: the test binary started again on
//! this one test, no other test beside it.

use std::cell::Cell;
use std::process::Command;
use std::sync::atomic::Ordering;
use vernier::measure::{self, Batch, StopReason, Target, WallClock, INTERRUPTED};
use vernier::plan::Plan;
use vernier::samples::Phase;
use vernier::timer::{TimerInfo, TimerKind};

/// A clock that moves only when the target says time passed.
struct Clock(Cell<u64>);

impl WallClock for Clock {
    fn now_ns(&self) -> u64 {
        self.0.get()
    }
}

/// 5 ns per iteration; raises the flag during its `stop_after`-th batch, as a Ctrl-C arriving
/// while that batch runs would.
struct Scripted<'a> {
    clock: &'a Clock,
    batches: usize,
    pushed: usize,
    stop_after: usize,
}

impl Target for Scripted<'_> {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        self.batches += 1;
        self.pushed += count;
        for _ in 0..count {
            let ns = 5 * iters + 20;
            self.clock.0.set(self.clock.0.get() + ns + 100);
            out.ns.push(ns);
        }
        if self.batches == self.stop_after {
            INTERRUPTED.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Set in the process that runs the test alone.
const ALONE: &str = "VERNIER_TEST_ALONE";

/// Whether this is the process to run `test` in; if not, runs the test binary again on `test`
/// alone and asserts that it ran and passed there.
fn alone(test: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let name = crate::harness_name(module_path!(), test);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([&name, "--exact", "--test-threads", "1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} alone: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

#[test]
fn ctrl_c_stops_the_engine_between_batches_and_keeps_what_was_measured() {
    if !alone("ctrl_c_stops_the_engine_between_batches_and_keeps_what_was_measured") {
        return;
    }
    let timer = TimerInfo {
        kind: TimerKind::Tsc,
        resolution_ns: 1.0,
        overhead_ns: 10.0,
        tsc_hz: Some(3e9),
    };
    // Not interrupted: the scripted target runs until the plan stops it.
    let clock = Clock(Cell::new(0));
    let mut whole = Scripted {
        clock: &clock,
        batches: 0,
        pushed: 0,
        stop_after: usize::MAX,
    };
    let plan = Plan::with_budget(1_000_000_000);
    let m = measure::measure(&mut whole, &clock, &plan, &timer, &mut |_| {});
    assert_ne!(m.stop, StopReason::Interrupted);
    let all = whole.batches;
    assert!(all > 12, "{all} batches");

    // Interrupted during the twelfth batch (calibration is over by then): no thirteenth, and
    // the twelve batches' samples are all there, the last ones included.
    let clock = Clock(Cell::new(0));
    let mut cut = Scripted {
        clock: &clock,
        batches: 0,
        pushed: 0,
        stop_after: 12,
    };
    let m = measure::measure(&mut cut, &clock, &plan, &timer, &mut |_| {});
    INTERRUPTED.store(false, Ordering::Relaxed);
    assert_eq!(m.stop, StopReason::Interrupted);
    assert_eq!(cut.batches, 12);
    assert!(m.error.is_none());
    assert_eq!(m.samples.samples.len(), cut.pushed);
    assert!(
        m.samples
            .samples
            .iter()
            .any(|s| s.phase != Phase::Calibration),
        "the collecting batches before the interruption are kept"
    );
}
