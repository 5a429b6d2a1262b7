//! Layout states: when a comparison's process pairs disagree beyond their own intervals, the
//! states' range, the rule that judges the change averaged over the layouts from enough pairs,
//! and the plan of the pairs that would resolve it.

use super::{Comparison, ProcessPair};
use crate::analyze::process_spread::layout_spread;
use crate::analyze::ProcessFigure;
use crate::stats::random_effects;
use crate::stats::student::student_t_quantile;
use serde::{Deserialize, Serialize};

/// The process pairs of a comparison disagree beyond their own intervals: each pair is an OLD
/// and a NEW process with one memory layout, measured alternately on one core (so the clock's
/// moves cancel in its ratio), and the ratio a pair reads depends on the layout its processes
/// landed in. The rule is the one of the `layout-sensitive` diagnostic, on the pairs' ratios:
/// the lowest and highest differ by more than [`LAYOUT_MIN_SPREAD`](crate::analyze::LAYOUT_MIN_SPREAD)
/// and by more than twice the largest relative half-width of a pair's own interval.
///
/// Two questions are then answered apart. "Can one layout hide or reverse the change?": `lo`
/// and `hi`, the range of the states seen. "How much does the change cost averaged over the
/// layouts this machine gives?": from [`LAYOUT_AVERAGE_MIN_PAIRS`] pairs on (`averaged`), the
/// comparison's `ci95` is the random-effects interval of the mean log-ratio over the pairs;
/// before that it spans the states seen as well.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairStates {
    /// Lowest and highest pair ratio NEW/OLD.
    pub lo: f64,
    pub hi: f64,
    /// Largest relative half-width of a pair's own 95 % interval.
    pub within: f64,
    /// Process pairs looked at.
    pub pairs: usize,
    /// Whether the comparison's `ci95` is the layout-averaged (random-effects) interval: the
    /// pairs reached [`LAYOUT_AVERAGE_MIN_PAIRS`]. `false`: it spans the states seen.
    #[serde(default)]
    pub averaged: bool,
    /// The pairs the average is judged from ([`LAYOUT_AVERAGE_MIN_PAIRS`]).
    #[serde(default)]
    pub average_from: usize,
    /// The pairs that would resolve a change of the threshold's size, from the spread seen
    /// (set by [`ComparisonFile::finalize`](crate::result::comparison::ComparisonFile::finalize),
    /// which knows the threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PairsPlan>,
}

/// Process pairs before a comparison whose pairs show layout states is judged on their
/// average: ten, the default count at the default 2 s. Why ten: a pair's layout is one draw
/// of a distribution of states, and the random-effects interval over the pairs covers that
/// distribution's mean only once the draws show its spread. Below ten the t quantile is large
/// and a few pairs from mostly one state say little of the others (four pairs of an add loop
/// read 0.714–0.726 while eleven other runs of the same comparison had a median of 0.80); at
/// ten, pairs drawn from two states 1.5 % apart (each pair's noise sd 0.15 %, the rarer state
/// 10–50 % likely) give 95 % intervals that hold the mean over layouts in 94.8–98.5 % of the
/// runs where the states show (a seeded test below), t₀.₉₇₅,₉ = 2.26 is within 15 % of the
/// normal quantile, and two equally likely states leave one of them with at most one pair in
/// 2 % of runs. Before ten, the interval spans the states seen and no verdict is given.
pub const LAYOUT_AVERAGE_MIN_PAIRS: usize = 10;

/// Most process pairs that would be proposed to resolve a comparison whose pairs show layout
/// states: past it, the spread between pairs is too large for the threshold at any budget
/// worth spending, and the plan says so instead.
pub const MAX_PLANNED_PAIRS: usize = 200;

/// The process pairs that would resolve a change of the threshold's size: those that bring
/// the smallest detectable change (80 % power, α = 5 %, t with pairs − 1 degrees of freedom)
/// to the threshold, from the spread between pairs seen, with the measuring time they would
/// take at this run's time per pair.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairsPlan {
    /// Process pairs (at least [`LAYOUT_AVERAGE_MIN_PAIRS`]); `null` when even
    /// [`MAX_PLANNED_PAIRS`] would not do.
    pub pairs: Option<usize>,
    /// Measuring time those pairs would take for this benchmark (the `--time` to give), at
    /// this run's mean time per pair.
    pub seconds: Option<f64>,
    /// This run's mean measuring time per pair, and its per-pair standard deviation of the
    /// log-ratio the plan rests on.
    pub seconds_per_pair: f64,
    pub pair_sd: f64,
}

/// The layout states the pairs show, or `None` when their ratios agree within their own
/// intervals (or there are fewer than two pairs).
pub fn pair_states(pairs: &[ProcessPair]) -> Option<PairStates> {
    let figures: Vec<ProcessFigure> = pairs
        .iter()
        .map(|p| ProcessFigure {
            index: p.index as u32,
            median_ns: p.ratio,
            ci95_ns: (p.ci95[0], p.ci95[1]),
            samples: p.rounds,
        })
        .collect();
    let l = layout_spread(&figures).filter(|l| l.significant)?;
    Some(PairStates {
        lo: l.lo,
        hi: l.hi,
        within: l.within,
        pairs: pairs.len(),
        averaged: pairs.len() >= LAYOUT_AVERAGE_MIN_PAIRS,
        average_from: LAYOUT_AVERAGE_MIN_PAIRS,
        plan: None,
    })
}

/// The pairs that would resolve a change of relative size `threshold` (see [`PairsPlan`]),
/// from `k` pairs whose random-effects mean has standard error `se` (log scale) and which took
/// `seconds` of measuring in all.
pub fn plan_pairs(k: usize, se: f64, seconds: f64, threshold: f64) -> PairsPlan {
    let pair_sd = se * (k as f64).sqrt();
    let target = (1.0 + threshold).ln();
    let reach = |n: usize| {
        let df = (n - 1) as f64;
        (student_t_quantile(0.975, df) + student_t_quantile(random_effects::DETECTION_POWER, df))
            * pair_sd
            / (n as f64).sqrt()
    };
    let pairs = (LAYOUT_AVERAGE_MIN_PAIRS..=MAX_PLANNED_PAIRS).find(|&n| reach(n) <= target);
    let seconds_per_pair = seconds / k.max(1) as f64;
    PairsPlan {
        pairs,
        seconds: pairs.map(|n| n as f64 * seconds_per_pair),
        seconds_per_pair,
        pair_sd,
    }
}

/// The plan of a comparison whose process pairs show layout states (see [`PairsPlan`]), at
/// relative threshold `threshold`; `None` without layout states.
pub fn layout_plan(c: &Comparison, threshold: f64) -> Option<PairsPlan> {
    c.layout_states?;
    let (theta, se): (Vec<f64>, Vec<f64>) =
        c.process_pairs.iter().map(|p| p.log_estimate()).unzip();
    let re = random_effects::random_effects(&theta, &se).ok()?;
    let seconds = c.process_pairs.iter().map(|p| p.seconds).sum();
    Some(plan_pairs(theta.len(), re.se, seconds, threshold))
}
