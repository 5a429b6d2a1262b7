//! Analysis: a pure function from the measured samples to the reported figures and diagnostics.
//! No I/O, no clock: the same samples always give the same analysis, so a result file can be
//! re-analysed offline.
//!
//! Diagnostics come out as data ([`Finding`]: a code and its figures); `diagnostic::words`
//! words them. The analysis types serialise as the result file stores them (`nan` writes an
//! undefined figure as `null`), so the file has no mirror of them.
//!
//! Here, [`analyze`] itself (the figures, then the diagnostics in the order a reader should act
//! on them), what it knows beyond the samples ([`Context`]), what it reports ([`Analysis`]) and
//! the thresholds the diagnostics judge by. Beside it: `judged` (the figures the rules judge,
//! before the diagnostics: the headline samples, their estimates and their interval), `steady`
//! (the steady state part by part), `ladder` (the linearity fit), `outliers` (far outliers and
//! what they do to the median), `rules` (one rule a diagnostic), `stored` (the figures in the
//! shapes the result file stores them), `counters` (counts less the reads' baseline,
//! interrupted samples, per-iteration figures and ratios), `process_spread` (the spread between
//! processes and rounds), `removed` (the
//! evidence for `optimized-away`, instruction counts included), [`speed`] (the core's speed
//! from the probes), [`pairs`] (comparisons from pairs) and [`nan`].

mod counters;
mod judged;
mod ladder;
pub mod nan;
mod outliers;
pub mod pairs;
mod process_spread;
mod removed;
mod rules;
pub mod speed;
mod steady;
mod stored;
pub mod stretch;
pub mod threads;
pub mod unit;

use judged::{judged_figures, Figures};
pub use outliers::{far_outlier_share, machine_far_share, median_sample_ns};
pub use process_spread::LAYOUT_MIN_SPREAD;
pub use removed::{
    cycles_over_empty, near_empty_loop, net_cycles, removed_by_medians, weigh_instructions,
    InstructionsCheck, NEAR_EMPTY_CYCLES, NEAR_EMPTY_NS, OPTIMIZED_AWAY_FIX,
    OPTIMIZED_AWAY_INSTRUCTIONS,
};
pub use stored::{Interrupted, Outliers, PerIter, ProcessFigure, Warmup};
pub use stretch::Stretch;

use crate::diagnostic::Finding;
use crate::measure::Measurement;
use crate::stats::LinearFit;
use crate::timer::TimerInfo;
use speed::Speed;
use std::collections::BTreeMap;
pub use unit::Unit;

/// What the analysis knows beyond the samples.
#[derive(Clone, Debug)]
pub struct Context {
    pub timer: TimerInfo,
    /// Per-iteration cost of the harness's loop around an empty body (measured at start-up).
    pub empty_iter_ns: Option<f64>,
    /// That loop's cost in cycles of the core at the time it was measured: the bar a
    /// benchmark judged in cycles is held to (`optimized-away`).
    pub empty_iter_cycles: Option<f64>,
    /// Duration of one CPU cycle: measured by counters, or estimated from a chain of
    /// dependent one-cycle additions.
    pub cycle_ns: Option<f64>,
    /// The benchmark was compiled without optimisation.
    pub debug_build: bool,
    /// The interval the plan aimed for (relative half-width).
    pub target_rel_ci: f64,
    /// Samples shorter than this many times the timer's cost are timer-limited.
    pub timer_factor: f64,
    /// What the counters' own reads add to each sample (event → count), subtracted from each
    /// sample's deltas before any figure is computed. Empty when nothing was read.
    pub counter_baseline: BTreeMap<String, f64>,
    /// The note about counters that were asked for and could not be read: each benchmark then
    /// carries the `counters-unavailable` diagnostic with it.
    pub counters_note: Option<String>,
    /// The events of that note (asked for, not read).
    pub counters_unavailable: Vec<String>,
    /// Keep interrupted samples in the estimates (`--keep-interrupted`); by default they are
    /// excluded.
    pub keep_interrupted: bool,
    /// The machine's known speed from earlier runs (`harness.known_cycle_ns`): a benchmark
    /// measured wholly slower than it is `core-slowed`.
    pub known_cycle_ns: Option<f64>,
    /// The range of the core's clock over this machine's recent runs (`harness.clock_ghz`),
    /// as cycle times (fast, slow): the interval covers a run at either end.
    pub clock_cycle_ns: Option<(f64, f64)>,
    /// The core's best ratio of the probe's two halves measured at start-up
    /// (`harness.wide_ratio`), and the machine's known one (`harness.known_wide_ratio`): what
    /// `core_share` is measured against, besides the benchmark's own probes.
    pub wide_ratio: Option<f64>,
    pub known_wide_ratio: Option<f64>,
    /// Share of far outliers the machine itself shows on a reference kernel measured at
    /// start-up (`harness.noise_far_share`); `outliers` is only claimed beyond it.
    pub noise_far_share: Option<f64>,
    /// How long the samples of that reference lasted (median, ns; `harness.noise_sample_ns`).
    pub noise_sample_ns: Option<f64>,
    /// The benchmark's work runs on other cores than the one the core-speed probe measures
    /// (an async body on a multi-thread runtime): it is judged in ns, as a threaded one is.
    pub off_calling_core: bool,
}

impl Context {
    /// A context with no counters and the defaults of the plan's constants.
    pub fn new(timer: TimerInfo) -> Context {
        Context {
            timer,
            empty_iter_ns: None,
            empty_iter_cycles: None,
            cycle_ns: None,
            debug_build: false,
            target_rel_ci: crate::plan::DEFAULT_TARGET_REL_CI,
            timer_factor: crate::plan::TIMER_FACTOR,
            counter_baseline: BTreeMap::new(),
            counters_note: None,
            counters_unavailable: Vec::new(),
            keep_interrupted: false,
            noise_far_share: None,
            noise_sample_ns: None,
            known_cycle_ns: None,
            clock_cycle_ns: None,
            wide_ratio: None,
            known_wide_ratio: None,
            off_calling_core: false,
        }
    }

    /// The speeds a benchmark's fastest state is measured against, besides its own probes.
    pub fn speed_refs(&self) -> speed::References {
        speed::References {
            startup_cycle_ns: self.cycle_ns,
            known_cycle_ns: self.known_cycle_ns,
            clock_cycle_ns: self.clock_cycle_ns,
            startup_wide_ratio: self.wide_ratio,
            known_wide_ratio: self.known_wide_ratio,
            unit: Unit::Ns,
        }
    }
}

/// Everything reported about one benchmark.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub per_iter: PerIter,
    /// The linearity fit on the steady ladder, with the standard error of its slope (what
    /// `nonlinear` and `optimized-away` judge); `None` with fewer than two iteration counts.
    pub fit: Option<LinearFit>,
    pub steady_samples: usize,
    pub warmup: Warmup,
    pub outliers: Outliers,
    /// Largest |x − median| / robust σ among the steady samples (the worst "sigma event").
    pub worst_sigma: f64,
    pub processes: Vec<ProcessFigure>,
    /// What the analysis found, as data, in the order a reader should act on it.
    pub diagnostics: Vec<Finding>,
    /// Per-iteration counter figures (`<event>_per_iter`, intervals, derived ratios); empty
    /// when no counter was read.
    pub counters: BTreeMap<String, f64>,
    /// Interrupted steady samples and their effect; `None` when context switches and
    /// migrations were not counted.
    pub interrupted: Option<Interrupted>,
    /// Per sample (all of them, in order): interrupted or not. Empty when unknown.
    pub interrupted_samples: Vec<bool>,
    /// The cycle time the analysis used, and where it came from (`counters` when the
    /// benchmark's own cycles and task-clock were read).
    pub cycle_ns: Option<f64>,
    /// The core's speed during the benchmark, from the probes between batches (`None` when
    /// nothing was probed).
    pub speed: Option<Speed>,
    /// A threaded benchmark's figures (`threads`); `None` for one without threads.
    pub threads: Option<threads::ThreadFigures>,
    /// The unit the judgements were made in (`unit`): cycles of the core for code that follows
    /// the clock, ns otherwise.
    pub headline_unit: Unit,
    /// Stretches of a part that ran markedly slower than the rest of the run, left out of the
    /// headline (`stretch`).
    pub slowed_stretches: Vec<Stretch>,
}

/// R² below this is a poor linear fit.
pub const NONLINEAR_R2: f64 = 0.98;
/// Slope and median disagreeing by more than this (relative) is nonlinear…
pub const NONLINEAR_REL: f64 = 0.05;
/// … when also beyond this many standard errors of the slope.
pub const NONLINEAR_SIGMAS: f64 = 3.0;
/// A per-iteration time (net of the empty loop) below a quarter of a cycle is not real work.
pub const OPTIMIZED_AWAY_CYCLES: f64 = 0.25;
/// Without a cycle estimate, 0.1 ns stands for a quarter of a 2.5 GHz cycle.
pub const OPTIMIZED_AWAY_NS: f64 = 0.1;
/// An interval wider than ±1 % at the end of the budget is `unstable`.
pub const UNSTABLE_REL_CI: f64 = 0.01;
/// More than 5 % far outliers is reported as `outliers` (below that, the median shrugs them
/// off and the count is still in the result), when it is also beyond what the machine itself
/// shows ([`OUTLIER_NOISE_FACTOR`] × its share on the start-up reference kernel); and at any
/// share when they move the median by more than its interval's half-width.
pub const OUTLIER_FRACTION: f64 = 0.05;
/// A benchmark's far outliers are its own only beyond twice the machine's share.
pub const OUTLIER_NOISE_FACTOR: f64 = 2.0;
/// … and only when they take more than 1 % of its time beyond the median in every stretch of
/// the run (the quietest): below that the median, the headline, leaves out less of the mean
/// than the interval a run aims for, and the outliers are the machine's to mention (under the
/// table), not this benchmark's. A machine with a busy neighbour gives every benchmark 5–10 %
/// of samples 10–25 % slower in some rounds.
pub const OUTLIER_EXCESS: f64 = 0.01;
/// The share of far outliers that is compared with [`OUTLIER_FRACTION`] and the machine's is
/// that of the quietest window of this many consecutive steady samples within a round of a
/// process (when two or more windows are full), taken at the upper end its count allows, not
/// of all samples: a burst of the host's noise gives the stretches of a run it hit many far
/// outliers, and none to the others; a benchmark's own outliers come in every stretch.
pub const OUTLIER_GROUP_MIN_SAMPLES: usize = 200;
/// Samples may be this much shorter than the timer's floor before `timer-limited`: the engine
/// calibrates to the floor, and a faster state of the core later may shorten samples (by up
/// to 2× on shared machines) while the timer's share of a sample stays ≤ 0.2 %.
pub const TIMER_LIMITED_SLACK: f64 = 0.5;
/// A body more than 3 % slower than the empty loop, beyond 3 × its interval, does measurable
/// work: the harness's loop hides work that runs in its shadow (a load and a multiply in the
/// cycle the loop takes anyway), so "less than a quarter cycle more" alone is not evidence the
/// work was removed. The fastest sample must be that much slower too: a core slowed by a busy
/// sibling thread for part of the run lifts a removed body's median well above the empty
/// loop's while its fastest sample stays level with it.
pub const MEASURABLE_OVER_EMPTY: f64 = 0.03;
/// A far outlier is at least 10 % away from the median (5 % for a mild one), whatever the IQR.
pub const OUTLIER_MIN_REL: f64 = 0.10;

/// A share of interrupted steady samples above this (1 %) is reported as `interrupted`: below
/// it, excluding them moves the median by less than its interval on a typical run, and a few
/// preemptions per second are what any machine shows.
pub const INTERRUPTED_FRACTION: f64 = 0.01;
/// Excluded interrupted samples are reported when they are more than 10 % of the steady ones
/// (the CPU is shared more than now and then), or when they move the median beyond its
/// interval's half-width; a loaded two-core machine interrupts 1–2 % of samples, and excluding
/// them changes nothing a reader should act on.
pub const INTERRUPTED_MANY: f64 = 0.10;

/// Analyse one benchmark's measurement: the figures (`judged_figures`), then each diagnostic's
/// rule over them, in the order of `rules::RULES`.
pub fn analyze(m: &Measurement, ctx: &Context) -> Analysis {
    let f = judged_figures(m, ctx);
    let diagnostics = rules::RULES
        .iter()
        .filter_map(|rule| rule(&f, ctx))
        .collect();
    Analysis {
        steady_samples: f.per.len(),
        worst_sigma: f.outliers.worst_sigma,
        outliers: f.outliers.counts,
        cycle_ns: f.cycle.map(|c| c.ns),
        per_iter: f.per_iter,
        fit: f.fit,
        warmup: f.warmup,
        processes: f.processes,
        diagnostics,
        counters: f.counters,
        interrupted: f.interrupted,
        interrupted_samples: f.interrupted_samples,
        speed: f.speed,
        threads: f.threads,
        headline_unit: f.unit,
        slowed_stretches: f.stretches,
    }
}

#[cfg(test)]
mod tests;
