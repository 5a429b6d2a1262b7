//! Process pairs: how many a comparison across processes uses, and the plan of each one's
//! slice of a benchmark.

use super::PairPlan;
use crate::plan::Plan;

/// Fewest process pairs a comparison across processes uses: the spread between pairs needs a
/// few to be estimated at all (with 3 degrees of freedom t₀.₉₇₅ = 3.18; with 1 it is 12.7).
pub const MIN_PROCESS_PAIRS: usize = 4;
/// Most process pairs by default (more only with --processes, or for layout states below).
pub const MAX_DEFAULT_PROCESS_PAIRS: usize = 10;
/// Most process pairs by default for a benchmark whose pairs show layout states, while its
/// measuring time leaves room in its budget (its pairs ended their slices early): four times
/// the default, which halves the interval of the average over layouts; past it each pair's two
/// process start-ups cost more than the pairs gain, and `--processes` sets the count.
pub const MAX_LAYOUT_PROCESS_PAIRS: usize = 40;
/// The default count gives each pair at least this much of a benchmark's budget: enough to
/// calibrate, warm up and take the 50 rounds a pair's estimate rests on.
pub const MIN_PAIR_SLICE_NS: u64 = 150_000_000;
/// A pair's slice ends once its own 99 % interval is narrower (half-width, log scale) than
/// this fraction of the threshold: the pair's noise is then small beside the threshold, and
/// more rounds in the same pair cannot reduce the spread between pairs.
pub const PAIR_PRECISION_OF_THRESHOLD: f64 = 0.25;
/// Process pairs for a budget: as many as fit slices of [`MIN_PAIR_SLICE_NS`], between
/// [`MIN_PROCESS_PAIRS`] and [`MAX_DEFAULT_PROCESS_PAIRS`].
pub fn default_process_pairs(time_budget_ns: u64) -> usize {
    ((time_budget_ns / MIN_PAIR_SLICE_NS) as usize)
        .clamp(MIN_PROCESS_PAIRS, MAX_DEFAULT_PROCESS_PAIRS)
}

/// The plan of one process pair's slice of a benchmark: the per-pair engine with a budget of
/// `slice_ns`, no stop on the threshold (a single pair cannot settle the verdict), a stop once
/// its own interval is precise (see [`PAIR_PRECISION_OF_THRESHOLD`]).
pub fn pair_slice_plan(plan: &Plan, threshold: f64, slice_ns: u64) -> PairPlan {
    let mut p = PairPlan::across_processes(plan, threshold);
    p.time_budget_ns = slice_ns.max(1);
    p.min_time_ns = slice_ns / 4;
    p.early_stop = false;
    p.precise_log_half_width =
        Some((PAIR_PRECISION_OF_THRESHOLD * (1.0 + threshold).ln()).max(1e-6));
    p
}
