//! Calibration, the step both engines share (one benchmark, and a pair): the iteration count
//! grows round by round until a sample lasts long enough to measure.

use super::*;

/// The next iteration count of the doubling calibration, after a step whose fastest sample
/// took `best_ns` against a goal of `goal_ns`: counts far too short are jumped over (by up to
/// 1024×), and near the goal each step is a doubling, so samples exist at several counts.
pub fn next_calibration_count(iters: u64, best_ns: u64, goal_ns: u64, max_iters: u64) -> u64 {
    let factor = if best_ns > 0 {
        (goal_ns as f64 / best_ns as f64 / 8.0).clamp(2.0, 1024.0)
    } else {
        2.0
    };
    (iters as f64 * factor).ceil().min(max_iters as f64) as u64
}

/// The fastest pace at which any loop executes its iterations, in ns per iteration: a trip of
/// a loop takes at least a cycle (0.2 ns at 5 GHz), and a compiler that unrolls an empty body
/// 32 times still spends 0.006 ns on each iteration. A count at which the fastest sample has
/// not lasted the goal even at this pace (`goal_ns / REMOVED_ITER_NS`: 2 × 10^7 iterations,
/// about 2^24, for the default 20 µs sample) shows that the iterations are not executed: the
/// compiler removed the loop with its body, and a sample's time is the clock reads' alone,
/// whatever the count. Calibration stops there ([`removed_bound`]) instead of doubling on to the
/// plan's guard (2^40), which takes seconds of samples that each measure nothing; the analysis
/// flags the body `optimized-away`. A thousandth of a nanosecond leaves a factor of six below
/// the fastest real loop, so no body that runs is cut short.
pub const REMOVED_ITER_NS: f64 = 0.001;

/// The count past which calibration knows the body costs nothing: a sample of this many
/// iterations at [`REMOVED_ITER_NS`] each lasts the goal.
pub fn removed_bound(goal_ns: u64) -> u64 {
    (goal_ns as f64 / REMOVED_ITER_NS).ceil().max(1.0) as u64
}

/// The calibration step both engines share (one benchmark, and a pair, where the slower side
/// sets the count): the iteration count grows round by round until the fastest sample of a
/// round lasts the goal, the count reaches its ceiling (the plan's guard, or the count at which
/// the body is known to cost nothing: [`removed_bound`]), a fixed count was asked for, or
/// calibration has used [`CALIBRATION_FRACTION`] of the budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The count the next calibration round measures at.
    pub iters: u64,
    pub(super) goal_ns: u64,
    pub(super) max_iters: u64,
    pub(super) fixed: bool,
    pub(super) deadline_ns: f64,
}

/// The end of calibration: the count to measure with and the sample length it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibrated {
    pub iters: u64,
    pub est_sample_ns: f64,
    /// Found (the goal met, the ceiling reached, or a fixed count asked for), or left where
    /// the deadline cut the calibration short.
    pub end: CalibrationEnd,
}

/// How a measurement's calibration ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrationEnd {
    /// It did not end: the measurement failed or was interrupted while calibrating.
    NotEnded,
    /// The count was found: the measurement's `iters_per_sample`.
    Found,
    /// Its deadline cut it short (the rounds took longer than the count's samples: a slow
    /// first call, threads started, waits for a CPU): a later part of the same benchmark
    /// continues it from `next_iters`.
    CutShort { next_iters: u64 },
}

impl Calibration {
    pub fn new(goal_ns: u64, max_iters: u64, fixed_iters: Option<u64>, budget_ns: u64) -> Self {
        Calibration {
            iters: fixed_iters.unwrap_or(1).max(1),
            goal_ns,
            max_iters: max_iters.min(removed_bound(goal_ns)),
            fixed: fixed_iters.is_some(),
            deadline_ns: budget_ns as f64 * CALIBRATION_FRACTION,
        }
    }

    /// The same calibration starting from `iters` (where an earlier part's was cut short)
    /// instead of 1; a fixed count is kept.
    pub fn starting_at(mut self, iters: u64) -> Self {
        if !self.fixed {
            self.iters = iters.clamp(1, self.max_iters.max(1));
        }
        self
    }

    /// A round at `iters` whose fastest sample took `best_ns`, `elapsed_ns` into the budget:
    /// the count to measure with, or `None` and the next round's count in `iters`.
    pub fn step(&mut self, best_ns: u64, elapsed_ns: u64) -> Option<Calibrated> {
        let found = best_ns >= self.goal_ns || self.fixed || self.iters >= self.max_iters;
        let next = next_calibration_count(self.iters, best_ns, self.goal_ns, self.max_iters);
        if found || elapsed_ns as f64 >= self.deadline_ns {
            return Some(Calibrated {
                iters: self.iters,
                est_sample_ns: best_ns.max(1) as f64,
                end: if found {
                    CalibrationEnd::Found
                } else {
                    CalibrationEnd::CutShort { next_iters: next }
                },
            });
        }
        self.iters = next;
        None
    }
}
