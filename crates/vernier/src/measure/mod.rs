//! The engine: decides how many iterations a sample has, takes samples until the estimate is
//! precise enough or the budget is spent, and keeps every sample. It never prints and never
//! computes a reported figure (that is `analyze`); it only uses the steady-state detector and
//! the median interval to decide when to stop.
//!
//! The engine is an explicit state machine, [`sampler::Sampler`], which the single benchmark
//! ([`measure`]) and the pair ([`compare::measure_pair`]) both drive: it owns the states, the
//! budget, Ctrl-C, calibration, the probe's share and progress, answers "what next?" with a
//! batch to measure and takes the batch back. What differs is a policy: for one benchmark, the
//! batches below and the median's interval as the stopping rule.
//!
//! | state       | does                                                      | leaves when |
//! |-------------|-----------------------------------------------------------|-------------|
//! | `Calibrate` | doubles the iteration count from 1, `calibration_samples` samples per step | the fastest sample of a step lasts ≥ `Plan::min_sample_ns` (or half the budget is gone) |
//! | `Collect`   | alternates batches at N (the "main" series) with small batches at N/16, N/4 and 2N (the linearity ladder, interleaved so drift bends no line); the core-speed probe before a batch while the probes took ≤ `MAX_PROBE_SHARE` of the time | the median's 95 % interval is within `target_rel_ci` on a steady state, after `min_time_ns` and `min_span_ns`; or the budget is spent; or Ctrl-C |
//! | `Done`      | — | — |
//!
//! The clock that keeps the budget and the target that measures are traits, so the whole
//! machine runs deterministically in tests against a scripted target (and the sampler can be
//! driven by hand, batch by batch: see its tests).

mod calibration;
pub mod compare;
pub mod ctrlc;
pub mod in_process;
pub mod sampler;
pub mod series;
mod single;

pub use calibration::{
    next_calibration_count, removed_bound, Calibrated, Calibration, CalibrationEnd, REMOVED_ITER_NS,
};
pub use single::measure;

use crate::plan::Plan;
use crate::samples::{CounterColumn, Phase, Sample, Samples};
use crate::stats;
use crate::stats::steady::{self, SteadyState, WarmupClass};
use crate::timer::TimerInfo;
use sampler::{Ask, Limits, Look, Policy, Round, Sampler};

/// Raised by the CLI's Ctrl-C handler; the engine stops between batches.
pub use crate::os::signals::INTERRUPTED;

/// A batch of samples returned by a target.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Elapsed nanoseconds of each sample.
    pub ns: Vec<u64>,
    /// Counter deltas, one column per event, aligned with `ns`.
    pub counters: Vec<CounterColumn>,
    /// Set by the engine before the call: run the core-speed probe (a chain of this many
    /// dependent additions, see `kernels::speed_probe`) before the batch, outside every timed
    /// region; 0: no probe. A target that cannot probe ignores it.
    pub probe_adds: u64,
    /// The probe's elapsed ns, when the target ran it.
    pub probe_ns: Option<u64>,
    /// The probe's throughput half (`kernels::wide_probe`, as many additions in eight
    /// independent chains), when the target ran it.
    pub wide_ns: Option<u64>,
    /// A threaded benchmark's threads (`crate::workload::threads`): per thread, the time from
    /// the sample's release to that thread's finish (ns), aligned with `ns`. Empty otherwise.
    pub thread_ns: Vec<Vec<u64>>,
    /// Per thread, its time on a CPU (ns) over the sample's window (from its clock reading
    /// before the release to the one after its finish), aligned with `thread_ns`; empty when
    /// the harness did not read it.
    pub thread_cpu_ns: Vec<Vec<u64>>,
    /// Per thread, its run-queue wait (ns, runnable but waiting for a CPU) over the same
    /// window; empty where the kernel does not say.
    pub thread_wait_ns: Vec<Vec<u64>>,
    /// The CPUs the process that ran a threaded benchmark could use.
    pub cpus: Option<u32>,
    /// Allocation counts per sample (`memory=1`), or why the target cannot count them.
    pub memory: Option<crate::memory::MemoryReply>,
    /// `key=value` tokens a worker adds to its reply for the people who read the protocol,
    /// which the runner does not read (a Python worker's `tracemalloc.` figures).
    pub notes: Vec<(String, String)>,
}

impl Batch {
    /// Empty the results (the probe request stays).
    pub fn clear(&mut self) {
        self.ns.clear();
        self.counters.clear();
        self.probe_ns = None;
        self.wide_ns = None;
        self.thread_ns.clear();
        self.thread_cpu_ns.clear();
        self.thread_wait_ns.clear();
        self.cpus = None;
        self.memory = None;
        self.notes.clear();
    }
}

/// Something that can be measured: runs `count` samples of `iters` iterations each.
pub trait Target {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String>;
    /// One-time set-up before the budget starts (state built outside every timed region).
    fn prepare(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// The wall clock that keeps the budget.
pub trait WallClock {
    fn now_ns(&self) -> u64;
}

/// `CLOCK_MONOTONIC`.
pub struct MonotonicClock;

impl WallClock for MonotonicClock {
    fn now_ns(&self) -> u64 {
        crate::timer::monotonic_ns()
    }
}

/// The engine's states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Calibrate,
    Collect,
    Done,
}

/// What a progress display is told after each batch.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub state: State,
    pub elapsed_ns: u64,
    pub budget_ns: u64,
    pub samples: usize,
    /// Current relative half-width of the median's interval, once there is a steady state.
    pub rel_ci: Option<f64>,
}

/// Why collection stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The interval reached the target.
    Precise,
    /// The time budget was spent first.
    Budget,
    /// Ctrl-C.
    Interrupted,
    /// The target failed (see `Measurement::error`).
    Failed,
}

/// Everything the engine measured for one benchmark.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub samples: Samples,
    /// N: iterations per sample of the main series.
    pub iters_per_sample: u64,
    /// T_tot: the benchmark's whole wall time, calibration and warm-up included.
    pub wall_ns: u64,
    pub stop: StopReason,
    /// Steady state of the main series (`None` when too short to tell).
    pub steady: Option<SteadyState>,
    /// The target's error, when it failed part-way (samples before it are kept).
    pub error: Option<String>,
    /// How the calibration ended: with `iters_per_sample` found, cut short by its deadline,
    /// or not at all.
    pub calibration: CalibrationEnd,
}

impl Measurement {
    /// An empty measurement to append to.
    pub fn empty() -> Measurement {
        Measurement {
            samples: Samples::default(),
            iters_per_sample: 0,
            wall_ns: 0,
            stop: StopReason::Budget,
            steady: None,
            error: None,
            calibration: CalibrationEnd::NotEnded,
        }
    }

    /// Append another measurement of the same benchmark (another process or round): its
    /// samples are tagged with `process` and `round` and follow this one's in time. The first
    /// measurement appended fixes the iteration count and the steady state reported.
    pub fn append(&mut self, other: Measurement, process: u32, round: u32) {
        let offset = self.wall_ns;
        let mut s = other.samples;
        for x in &mut s.samples {
            x.process = process;
            x.round = round;
            x.t_ns += offset;
        }
        if self.samples.is_empty() {
            self.iters_per_sample = other.iters_per_sample;
            self.steady = other.steady;
        }
        self.samples.extend(&s);
        self.wall_ns += other.wall_ns;
        self.stop = other.stop;
        if other.calibration == CalibrationEnd::Found {
            self.calibration = CalibrationEnd::Found;
        }
        if other.error.is_some() {
            self.error = other.error;
        }
    }
}

/// Samples per ladder batch.
pub const LADDER_SAMPLES: usize = 4;
/// Ladder iteration counts as (numerator, denominator) of N, visited in turn between main
/// batches: N/16 and N/4 pin the intercept, 2N the slope.
pub const LADDER: [(u64, u64); 3] = [(1, 16), (1, 4), (2, 1)];
/// Smallest main batch.
pub const MIN_MAIN_BATCH: usize = 16;
/// A batch may take at most this fraction of the budget, so stopping is checked often.
pub const MAX_BATCH_FRACTION: f64 = 0.02;
/// Calibration may use at most this fraction of the budget.
pub const CALIBRATION_FRACTION: f64 = 0.5;

/// A clock for tests that only moves when a scripted target says time passed.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct MockClock(pub(crate) std::rc::Rc<std::cell::Cell<u64>>);

#[cfg(test)]
impl WallClock for MockClock {
    fn now_ns(&self) -> u64 {
        self.0.get()
    }
}

#[cfg(test)]
mod tests;
