//! The plan: how a benchmark is measured. Every constant is named here with the reason for
//! its value; the engine (`measure`) only follows the plan.

use crate::timer::TimerInfo;

/// How a benchmark is measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Hard wall-clock budget per benchmark, calibration and warm-up included (`--time`).
    pub time_budget_ns: u64,
    /// The engine never stops early before this much time, so that a slow warm-up
    /// (`std::rand()`'s took about a second in the talk of `docs/experiments.md`) has a chance
    /// to show in the series.
    pub min_time_ns: u64,
    /// A single benchmark never stops early before this much time ([`MIN_SPAN_FRACTION`]).
    pub min_span_ns: u64,
    /// Target duration of one sample: far below the scheduler tick (1–4 ms), so a tick or an
    /// interrupt spoils few samples, and long enough to dwarf the timer's own cost.
    pub target_sample_ns: u64,
    /// A sample must last at least this many times the timer's read cost and resolution.
    pub timer_factor: f64,
    /// Early stop once the 95 % interval of the median is within ± this fraction of it.
    pub target_rel_ci: f64,
    /// Fewest steady samples an estimate is made from.
    pub min_steady_samples: usize,
    /// Samples per step of the doubling calibration (the smallest is kept as that step's time).
    pub calibration_samples: usize,
    /// Skip the doubling and use this many iterations per sample (set by a runner so every
    /// process of a benchmark uses the count calibrated by the first).
    pub fixed_iters: Option<u64>,
    /// The count the calibration starts from: 1, or where an earlier part of the same
    /// benchmark (a process, a round) had its calibration cut short by the deadline.
    pub start_iters: u64,
    /// Upper bound on iterations per sample (a guard against a body the compiler removed:
    /// doubling would otherwise go on for ever). Calibration stops far below it once the count
    /// shows the body costs nothing (`measure::REMOVED_ITER_NS`).
    pub max_iters: u64,
    /// Additions in the core-speed probe run between batches (0: no probe).
    pub probe_adds: u64,
}

/// Default measurement budget per benchmark: about one second, long enough to see through a
/// warm-up of that order.
pub const DEFAULT_TIME_NS: u64 = 1_000_000_000;
/// `--quick`: about 0.2 s.
pub const QUICK_TIME_NS: u64 = 200_000_000;
/// Default sample length: 20 µs (well under the 1–4 ms scheduler tick).
pub const DEFAULT_SAMPLE_NS: u64 = 20_000;
/// Samples last ≥ 1000× the timer's cost and resolution (its error is then ≤ 0.1 %).
pub const TIMER_FACTOR: f64 = 1000.0;
/// Early stop at ±0.5 % of the median.
pub const DEFAULT_TARGET_REL_CI: f64 = 0.005;
/// 100 steady samples: enough for MSER-5 (20 batches) and for a median interval that does not
/// rest on the extreme order statistics.
pub const MIN_STEADY_SAMPLES: usize = 100;
/// The early stop waits at least 10 % of the budget (the comparisons' engine).
pub const MIN_TIME_FRACTION: f64 = 0.1;
/// A single benchmark's early stop waits until it has sampled the machine over at least 30 %
/// of its budget (300 ms of the default second): the machine's slow changes (a busy sibling
/// core, frequency) last from a fraction of a second to minutes, and a run that stopped after
/// a few tens of milliseconds would report an interval that only covers the noise of one
/// instant. With several processes or rounds, each takes its share of the budget and of this
/// span, so the samples are spread across the whole budget.
pub const MIN_SPAN_FRACTION: f64 = 0.3;

/// The core-speed probe: a chain of 16384 dependent one-cycle additions
/// (`kernels::add_chain`), about 5 µs at 3 GHz: long enough that the timer's cost and step
/// (10–20 ns on virtual machines) are under 0.4 % of it, short enough to run before most
/// batches within [`MAX_PROBE_SHARE`].
pub const PROBE_ADDS: u64 = 16384;
/// Longest probe chain a worker accepts (about 0.3 ms at 3 GHz): the probe must stay cheap,
/// and a runner asking for more is broken. The protocol's `probe=<adds>` limit, and a result
/// file's `probe_adds`.
pub const MAX_PROBE_ADDS: u64 = 1 << 20;
/// The probe is timed this many times in a row and the fastest kept (an interrupt in one
/// repetition does not make the core look slow).
pub const PROBE_REPEATS: usize = 3;
/// The probe may cost at most 1 % of the time spent so far: the engine skips it on a batch
/// when the probes already took more (so its cost stays under 2 % of the budget whatever the
/// batch sizes).
pub const MAX_PROBE_SHARE: f64 = 0.01;

/// Reading the counters around a sample may add at most this fraction to the sample's wall
/// time. The reads sit outside the timed region, so they never enter a measured time, but they
/// cost budget: when one `read_start` + `read_stop` pair costs more than 5 % of the target
/// sample length, samples are lengthened until it does not (`sample_ns_for_counters`).
pub const MAX_COUNTER_OVERHEAD: f64 = 0.05;

/// The sample length that keeps counter reads of `read_cost_ns` per sample within
/// [`MAX_COUNTER_OVERHEAD`] of a sample: `target_ns`, or longer.
pub fn sample_ns_for_counters(target_ns: u64, read_cost_ns: f64) -> u64 {
    if !read_cost_ns.is_finite() || read_cost_ns <= 0.0 {
        return target_ns;
    }
    target_ns.max((read_cost_ns / MAX_COUNTER_OVERHEAD).ceil() as u64)
}

impl Default for Plan {
    fn default() -> Self {
        Plan::with_budget(DEFAULT_TIME_NS)
    }
}

impl Plan {
    /// A plan with the given budget and the default for everything else.
    pub fn with_budget(time_budget_ns: u64) -> Plan {
        Plan {
            time_budget_ns,
            min_time_ns: (time_budget_ns as f64 * MIN_TIME_FRACTION) as u64,
            min_span_ns: (time_budget_ns as f64 * MIN_SPAN_FRACTION) as u64,
            target_sample_ns: DEFAULT_SAMPLE_NS,
            timer_factor: TIMER_FACTOR,
            target_rel_ci: DEFAULT_TARGET_REL_CI,
            min_steady_samples: MIN_STEADY_SAMPLES,
            calibration_samples: 3,
            fixed_iters: None,
            start_iters: 1,
            max_iters: 1 << 40,
            probe_adds: PROBE_ADDS,
        }
    }

    /// `--quick`.
    pub fn quick() -> Plan {
        Plan::with_budget(QUICK_TIME_NS)
    }

    /// The same plan with another budget (its early-stop wait scaled with it): for the
    /// harness's self-measurements, which keep the run's sample length and timer rule.
    pub fn rebudget(&self, time_budget_ns: u64) -> Plan {
        let scale = time_budget_ns as f64 / self.time_budget_ns.max(1) as f64;
        Plan {
            time_budget_ns,
            min_time_ns: (self.min_time_ns as f64 * scale) as u64,
            min_span_ns: (self.min_span_ns as f64 * scale) as u64,
            ..self.clone()
        }
    }

    /// The plan of one of `parts` equal shares of the budget (a round, a process): budget and
    /// early-stop wait divided, every other setting kept.
    pub fn share(&self, parts: usize) -> Plan {
        let parts = parts.max(1) as u64;
        Plan {
            time_budget_ns: (self.time_budget_ns / parts).max(1),
            min_time_ns: self.min_time_ns / parts,
            min_span_ns: self.min_span_ns / parts,
            ..self.clone()
        }
    }

    /// The shortest sample this plan accepts with the given timer.
    pub fn min_sample_ns(&self, timer: &TimerInfo) -> u64 {
        min_sample_ns(self.target_sample_ns, self.timer_factor, timer)
    }
}

/// The shortest acceptable sample: the target length, but never under `timer_factor` times
/// the timer's cost or resolution (for a single benchmark's plan and a pair's alike).
pub fn min_sample_ns(target_sample_ns: u64, timer_factor: f64, timer: &TimerInfo) -> u64 {
    let floor = timer_factor * timer.overhead_ns.max(timer.resolution_ns);
    (target_sample_ns as f64).max(floor).ceil() as u64
}
