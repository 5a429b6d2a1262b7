//! Analysis: a pure function from the measured samples to the reported figures and diagnostics.
//! No I/O, no clock: the same samples always give the same analysis, so a result file can be
//! re-analysed offline.
//!
//! Diagnostics come out as data ([`Finding`]: a code and its figures); `diagnostic::words`
//! words them. The analysis types serialise as the result file stores them (`nan` writes an
//! undefined figure as `null`), so the file has no mirror of them.
//!
//! Here, [`analyze`] itself: the steady samples, the estimates and their interval, and the
//! diagnostics in the order a reader should act on them. Beside it: `figures` (the shapes of
//! what is reported), `counters` (counts less the reads' baseline, interrupted samples,
//! per-iteration figures and ratios), `layout` (the spread between processes and rounds),
//! `removed` (the evidence for `optimized-away`, instruction counts included), [`speed`] (the
//! core's speed from the probes), [`pairs`] (comparisons from pairs) and [`nan`].

mod counters;
mod figures;
mod layout;
pub mod nan;
pub mod pairs;
mod removed;
mod rules;
pub mod speed;
pub mod threads;
pub mod unit;

use counters::{counter_figures, interrupted_flags};
pub use figures::{Interrupted, Outliers, PerIter, ProcessFigure, Warmup};
pub use layout::LAYOUT_MIN_SPREAD;
use layout::{figures_by, layout_spread, per_group};
pub use removed::{
    cycles_over_empty, near_empty_loop, weigh_instructions, InstructionsCheck, NEAR_EMPTY_CYCLES,
    NEAR_EMPTY_NS, OPTIMIZED_AWAY_FIX, OPTIMIZED_AWAY_INSTRUCTIONS,
};

use crate::diagnostic::{Cycle, CycleSource, Finding};
use crate::measure::{Measurement, StopReason};
use crate::samples::{Phase, Sample};
use crate::stats::steady::WarmupClass;
use crate::stats::{self, LinearFit};
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
    /// Share of far outliers the machine itself shows on a reference kernel measured at
    /// start-up (`harness.noise_far_share`); `outliers` is only claimed beyond it.
    pub noise_far_share: Option<f64>,
}

impl Context {
    /// A context with no counters and the defaults of the plan's constants.
    pub fn new(timer: TimerInfo) -> Context {
        Context {
            timer,
            empty_iter_ns: None,
            cycle_ns: None,
            debug_build: false,
            target_rel_ci: crate::plan::DEFAULT_TARGET_REL_CI,
            timer_factor: crate::plan::TIMER_FACTOR,
            counter_baseline: BTreeMap::new(),
            counters_note: None,
            counters_unavailable: Vec::new(),
            keep_interrupted: false,
            noise_far_share: None,
            known_cycle_ns: None,
            clock_cycle_ns: None,
        }
    }

    /// The speeds a benchmark's fastest state is measured against, besides its own probes.
    pub fn speed_refs(&self) -> speed::References {
        speed::References {
            startup_cycle_ns: self.cycle_ns,
            known_cycle_ns: self.known_cycle_ns,
            clock_cycle_ns: self.clock_cycle_ns,
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
/// … and only when they take more than 1 % of its time beyond the median in every round and
/// process (the quietest): below that the median, the headline, leaves out less of the mean
/// than the interval a run aims for, and the outliers are the machine's to mention (under the
/// table), not this benchmark's. A machine with a busy neighbour gives every benchmark 5–10 %
/// of samples 10–25 % slower in some rounds.
pub const OUTLIER_EXCESS: f64 = 0.01;
/// The share of far outliers that is compared with [`OUTLIER_FRACTION`] and the machine's is
/// that of the quietest round or process with at least this many steady samples (when two or
/// more have), not of all samples: a burst of the host's noise during one pass over the
/// benchmarks gives the ones it hit many far outliers in that round only, which are the
/// machine's, not theirs.
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

/// Indices of the steady samples at the main iteration count.
fn steady_main(m: &Measurement) -> Vec<usize> {
    let s = &m.samples.samples;
    let main: Vec<usize> = (0..s.len())
        .filter(|&i| s[i].phase == Phase::Measure && s[i].iters == m.iters_per_sample)
        .collect();
    if !main.is_empty() {
        return main;
    }
    // Nothing reached the steady state (a failure early on, or a very slow body): use whatever
    // was measured at the final count, so a figure exists.
    (0..s.len())
        .filter(|&i| s[i].iters == m.iters_per_sample)
        .collect()
}

/// The share of far outliers (beyond 3 × IQR and [`OUTLIER_MIN_REL`] of the median) among the
/// steady samples of a measurement: on a reference kernel, the machine's own noise.
pub fn far_outlier_share(m: &Measurement) -> Option<f64> {
    let per: Vec<f64> = steady_main(m)
        .iter()
        .map(|&i| m.samples.samples[i].per_iter_ns())
        .collect();
    if per.len() < 4 {
        return None;
    }
    let o = stats::outliers_beyond(&per, &[], OUTLIER_MIN_REL);
    Some((o.low_far + o.high_far) as f64 / per.len() as f64)
}

/// Analyse one benchmark's measurement: the figures (`figures_of`), then each diagnostic's
/// rule over them, in the order of `rules::RULES`.
pub fn analyze(m: &Measurement, ctx: &Context) -> Analysis {
    let f = figures_of(m, ctx);
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
    }
}

/// Everything the rules judge: the analysis's figures before the diagnostics.
pub(crate) struct Figures {
    /// The headline samples' per-iteration times.
    per: Vec<f64>,
    per_iter: PerIter,
    fit: Option<LinearFit>,
    warmup: Warmup,
    outliers: OutlierFigures,
    processes: Vec<ProcessFigure>,
    /// The spread between processes, judged in cycles of the core as well.
    layout: Option<layout::Layout>,
    counters: BTreeMap<String, f64>,
    cycle: Option<Cycle>,
    speed: Option<Speed>,
    interrupted: Option<Interrupted>,
    interrupted_samples: Vec<bool>,
    threads: Option<threads::ThreadFigures>,
    /// The measurement's wall time, in seconds, and how it stopped.
    seconds: f64,
    stop: StopReason,
    iters_per_sample: u64,
    /// The unit the judgements are made in, and the figures in it (the same as `per_iter`,
    /// `fit`, `outliers` and `layout` for ns; in cycles of the core otherwise, with `_ns`
    /// fields holding cycles).
    unit: Unit,
    head: Head,
}

/// A benchmark's figures in its headline unit: what `unstable`, `outliers`, `nonlinear`,
/// `layout-sensitive` and `no-steady-state` judge.
struct Head {
    per_iter: PerIter,
    fit: Option<LinearFit>,
    outliers: OutlierFigures,
    /// The processes disagree beyond their intervals in this unit.
    layout_significant: bool,
    /// How the first part's series behaved before its steady state, in this unit.
    warmup: WarmupClass,
    samples: usize,
}

impl Head {
    /// Half the width of the run's own interval in this unit.
    fn half_width(&self) -> f64 {
        (self.per_iter.run_ci95_ns[1] - self.per_iter.run_ci95_ns[0]) / 2.0
    }
}

impl Figures {
    /// Half the width of the run's own interval (what `interrupted` weighs a shift against).
    fn half_width(&self) -> f64 {
        (self.per_iter.run_ci95_ns[1] - self.per_iter.run_ci95_ns[0]) / 2.0
    }
}

/// The outliers among the headline samples and what they do to the median.
#[derive(Clone, Copy, Default)]
struct OutlierFigures {
    counts: Outliers,
    /// Largest |x − median| / robust σ.
    worst_sigma: f64,
    /// How far the far outliers move the median (the median without them, less it).
    shift_ns: f64,
    /// The far outliers' share in the quietest round or process, when two or more have
    /// enough samples ([`OUTLIER_GROUP_MIN_SAMPLES`]).
    quietest_far_share: Option<f64>,
    /// The time the far outliers took beyond the median, as a share of the samples' time: in
    /// the quietest round or process (as above), else over all of them. What the median
    /// leaves out of the mean.
    excess_share: f64,
}

/// A round's or process's samples, far outliers and their time (`outlier_figures`).
#[derive(Clone, Copy, Default)]
struct Group {
    n: usize,
    far: usize,
    time: f64,
    excess: f64,
}

/// The headline samples (steady, interrupted ones excluded unless kept) and what their
/// interruption did, with the per-sample flags.
fn headline_samples(
    m: &Measurement,
    ctx: &Context,
    steady: Option<&[usize]>,
) -> (Vec<usize>, Option<Interrupted>, Vec<bool>) {
    let flags = merge_flags(interrupted_flags(m, ctx), threads::waited_flags(m));
    let all_main = steady.map_or_else(|| steady_main(m), <[usize]>::to_vec);
    let is_int = |i: usize| flags.get(i).copied().unwrap_or(false);
    let clean: Vec<usize> = all_main.iter().copied().filter(|&i| !is_int(i)).collect();
    let interrupted = (!flags.is_empty() && !all_main.is_empty()).then(|| {
        let med = |idx: &[usize]| {
            let v: Vec<f64> = idx
                .iter()
                .map(|&i| m.samples.samples[i].per_iter_ns())
                .collect();
            if v.is_empty() {
                f64::NAN
            } else {
                stats::median(&v)
            }
        };
        let k = all_main.len() - clean.len();
        Interrupted {
            samples: k,
            of: all_main.len(),
            share: k as f64 / all_main.len() as f64,
            median_with_ns: med(&all_main),
            median_without_ns: med(&clean),
            // Exclude unless asked not to, or unless nothing would be left.
            excluded: !ctx.keep_interrupted && k > 0 && !clean.is_empty(),
            cpu_wait_share: threads::cpu_wait_share(m, &all_main),
        }
    });
    let main = if interrupted.is_some_and(|i| i.excluded) {
        clean
    } else {
        all_main
    };
    (main, interrupted, flags)
}

/// A sample interrupted by either rule (its measuring thread's context switches, any
/// thread's wait for a CPU); empty when neither was known.
fn merge_flags(a: Vec<bool>, b: Vec<bool>) -> Vec<bool> {
    match (a.is_empty(), b.is_empty()) {
        (_, true) => a,
        (true, false) => b,
        (false, false) => a.iter().zip(&b).map(|(x, y)| *x || *y).collect(),
    }
}

/// The per-iteration estimates of the headline samples, before any widening.
fn estimates(per: &[f64], sample_ns: &[f64], n: f64, fit: Option<LinearFit>) -> PerIter {
    if per.is_empty() {
        return PerIter::undefined();
    }
    let sorted = stats::sorted(per);
    let ci = stats::median_interval(per);
    let sorted_ns = stats::sorted(sample_ns);
    PerIter {
        median_ns: ci.median,
        min_ns: sorted[0],
        mean_ns: stats::mean(per),
        sigma_ns: stats::iqr_sigma_sorted(&sorted_ns) / n.sqrt(),
        ci95_ns: [ci.lo, ci.hi],
        run_ci95_ns: [ci.lo, ci.hi],
        slope_ns: fit.map_or(f64::NAN, |f| f.slope),
        intercept_ns: fit.map_or(f64::NAN, |f| f.intercept),
        r2: fit.map_or(f64::NAN, |f| f.r2),
        sample_sigma_ns: stats::iqr_sigma_sorted(&sorted),
        mad_ns: stats::mad_sorted(&sorted),
    }
}

/// Outliers (the tested `stats::outliers_beyond`) and the worst sigma event.
fn outlier_figures(main: &[&Sample], per: &[f64], per_iter: &PerIter) -> OutlierFigures {
    if per.len() < 4 {
        return OutlierFigures::default();
    }
    let times: Vec<u64> = main.iter().map(|s| s.t_ns).collect();
    let o = stats::outliers_beyond(per, &times, OUTLIER_MIN_REL);
    let counts = Outliers {
        mild: o.low_mild + o.high_mild,
        far: o.low_far + o.high_far,
        period_ns: o.period_ns,
    };
    // How far the far outliers move the median: the median without them.
    let (lo3, hi3) =
        stats::outlier_fences_sorted(&stats::sorted(per), stats::FAR_K, OUTLIER_MIN_REL);
    let kept: Vec<f64> = per
        .iter()
        .copied()
        .filter(|&x| (lo3..=hi3).contains(&x))
        .collect();
    let shift_ns = if kept.is_empty() {
        0.0
    } else {
        (stats::median(&kept) - per_iter.median_ns).abs()
    };
    // The far outliers' share in the quietest round or process: a burst of the machine's own
    // noise hits the rounds measured while it lasted, a benchmark's own outliers (page
    // faults, allocation, a syscall) hit every round.
    let median = per_iter.median_ns;
    let mut by: BTreeMap<u32, Group> = BTreeMap::new();
    for (s, &x) in main.iter().zip(per) {
        let g = by.entry((s.process << 16) | s.round).or_default();
        let far = !(lo3..=hi3).contains(&x);
        g.n += 1;
        g.far += usize::from(far);
        g.time += x;
        if far {
            g.excess += x - median;
        }
    }
    let enough: Vec<&Group> = by
        .values()
        .filter(|g| g.n >= OUTLIER_GROUP_MIN_SAMPLES)
        .collect();
    let all = by.values().fold(Group::default(), |a, g| Group {
        n: a.n + g.n,
        far: a.far + g.far,
        time: a.time + g.time,
        excess: a.excess + g.excess,
    });
    let quietest = |f: fn(&Group) -> f64| {
        if enough.len() >= 2 {
            enough.iter().map(|g| f(g)).reduce(f64::min)
        } else {
            None
        }
    };
    let quietest_far_share = quietest(|g| g.far as f64 / g.n as f64);
    let excess_share = quietest(|g| g.excess / g.time).unwrap_or(all.excess / all.time);
    let sigma = per_iter.sample_sigma_ns.max(per_iter.median_ns * 1e-9);
    OutlierFigures {
        counts,
        worst_sigma: stats::worst_sigma(per, per_iter.median_ns, sigma),
        shift_ns,
        quietest_far_share,
        excess_share: if excess_share.is_finite() {
            excess_share
        } else {
            0.0
        },
    }
}

fn warmup_of(m: &Measurement) -> Warmup {
    let warmup_samples = m
        .samples
        .samples
        .iter()
        .filter(|s| s.phase == Phase::Warmup)
        .count();
    let first_steady_start = m
        .samples
        .samples
        .iter()
        .find(|s| s.phase == Phase::Measure)
        .map(|s| s.t_ns.saturating_sub(s.ns))
        .unwrap_or(m.wall_ns);
    Warmup {
        samples: warmup_samples,
        seconds: first_steady_start as f64 * 1e-9,
        class: m.steady.map(|s| s.class).unwrap_or(WarmupClass::Flat),
    }
}

/// The interval widened to what holds beyond this run's noise: each process is one draw of
/// the memory layout, each round one draw of the machine's slowly changing state, so the
/// interval of the median covers the spread between draws, not only the noise within one (a
/// random-effects view); `run_ci95_ns` keeps that, this run's own. Then, since another run
/// on this machine may find the core at another clock, `ci95_ns` covers the headline's
/// cycles at both ends of the clock range its recent runs saw (not for a benchmark that ran
/// slowed, whose diagnostic says how far its figure is from the machine's usual speed).
fn widen(
    per_iter: &mut PerIter,
    main: &[&Sample],
    per: &[f64],
    speed: Option<&Speed>,
    ctx: &Context,
    step: f64,
) {
    let groups = figures_by(
        main.iter()
            .zip(per)
            .map(|(s, &v)| ((s.process << 16) | s.round, v)),
    );
    if let Some(g) = layout_spread(&groups) {
        // Three or more processes (or rounds) that disagree beyond their own intervals are
        // draws of the layout: the headline is their median, each draw weighing the same. The
        // pooled samples' median would follow whichever process kept the most steady samples
        // (one whose warm-up ended early), and move from run to run by the whole spread. (Of
        // two draws there is no median to prefer to the pooled samples'.)
        if g.significant && g.draws >= 3 {
            per_iter.median_ns = g.median_of_medians_ns;
        }
        // With few draws a t-interval on their medians is uselessly wide (t = 12.7 for two):
        // the interval then simply covers every draw's median.
        let hw = if groups.len() > 3 {
            g.half_width_ns
        } else {
            (per_iter.median_ns - g.lo).max(g.hi - per_iter.median_ns)
        };
        per_iter.ci95_ns[0] = per_iter.ci95_ns[0].min(per_iter.median_ns - hw);
        per_iter.ci95_ns[1] = per_iter.ci95_ns[1].max(per_iter.median_ns + hw);
    }
    // A sample's time is known to one timer step: an interval is never narrower than that,
    // and never wider than what the samples themselves span.
    let (median, bottom) = (per_iter.median_ns, per_iter.min_ns);
    let top = per.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let bounded = |[lo, hi]: [f64; 2]| -> [f64; 2] {
        if !median.is_finite() {
            return [lo, hi];
        }
        [
            lo.min(median - step).max(bottom),
            hi.max(median + step).min(top),
        ]
    };
    per_iter.run_ci95_ns = bounded(per_iter.ci95_ns);
    if let Some((lo, hi)) = speed
        .filter(|s| !s.core_slowed())
        .and_then(|s| speed::clock_interval(s, ctx.clock_cycle_ns))
    {
        per_iter.ci95_ns[0] = per_iter.ci95_ns[0].min(lo);
        per_iter.ci95_ns[1] = per_iter.ci95_ns[1].max(hi);
    }
    per_iter.ci95_ns = bounded(per_iter.ci95_ns);
}

/// The spread between processes, with layout only blamed when the core's speed does not
/// explain it: when, in cycles of the core at each sample's moment (the probe's), the
/// processes disagree beyond their intervals too. A clock that wandered between processes
/// moves their times in ns and leaves their cycles alone.
fn layout_of(
    m: &Measurement,
    main_idx: &[usize],
    processes: &[ProcessFigure],
    cycles: &[f64],
) -> Option<layout::Layout> {
    let in_cycles = (!cycles.is_empty()).then(|| {
        figures_by(main_idx.iter().filter_map(|&i| {
            let c = cycles[i];
            (c.is_finite() && c > 0.0).then(|| {
                (
                    m.samples.samples[i].process,
                    m.samples.samples[i].per_iter_ns() / c,
                )
            })
        }))
    });
    let cycles_agree = in_cycles
        .as_deref()
        .and_then(layout_spread)
        .is_some_and(|l| !l.significant);
    layout_spread(processes).map(|mut l| {
        if cycles_agree {
            l.significant = false;
        }
        l
    })
}

/// The cycle time the rules use: the benchmark's own when its cycles were counted
/// (task-clock / cycles), else the start-up add chain's.
fn cycle_of(counters: &BTreeMap<String, f64>, ctx: &Context) -> Option<Cycle> {
    match (
        counters.get("task-clock_per_iter"),
        counters.get("cycles_per_iter"),
    ) {
        (Some(&t), Some(&c)) if t > 0.0 && c > 0.0 => Some(Cycle {
            ns: t / c,
            source: CycleSource::Counters,
        }),
        _ => ctx.cycle_ns.map(|ns| Cycle {
            ns,
            source: CycleSource::AddChain,
        }),
    }
}

/// The figures of one benchmark's measurement, before the diagnostics.
fn figures_of(m: &Measurement, ctx: &Context) -> Figures {
    // The unit, from every sample past calibration at the main count; in cycles, the steady
    // state is found again in cycles (a clock that drifted moves the time, not the cycles).
    let cycles = speed::sample_cycles(&m.samples, &ctx.timer);
    let wide = speed::sample_wide(&m.samples, &ctx.timer);
    let threaded = !m.samples.thread_ns.is_empty();
    let unit = unit::choose(&m.samples.samples, &past_calibration(m), &cycles, threaded);
    let in_cycles_steady = (unit == Unit::Cycles)
        .then(|| steady_in(m, &|i| m.samples.samples[i].per_iter_ns() / cycles[i]));
    let (main_idx, interrupted, flags) =
        headline_samples(m, ctx, in_cycles_steady.as_ref().map(|s| s.0.as_slice()));
    let before_split = main_idx.clone();
    let excluded = interrupted.is_some_and(|i| i.excluded);
    // The core's speed: with samples in a fast and a slow state, the headline rests on the
    // fast ones (the other state's figure is in `speed`).
    let (speed, main_idx) = match speed::analyze(
        &m.samples,
        &ctx.timer,
        &cycles,
        &wide,
        speed::References {
            unit,
            ..ctx.speed_refs()
        },
        m.wall_ns,
        &main_idx,
    ) {
        Some((sp, head)) => (Some(sp), head),
        None => (None, main_idx),
    };
    let main: Vec<&Sample> = main_idx.iter().map(|&i| &m.samples.samples[i]).collect();
    let n = m.iters_per_sample.max(1) as f64;
    let per: Vec<f64> = main.iter().map(|s| s.per_iter_ns()).collect();
    let sample_ns: Vec<f64> = main.iter().map(|s| s.ns as f64).collect();
    let is_int = |i: usize| flags.get(i).copied().unwrap_or(false);
    let skip = |i: usize| excluded && is_int(i);
    let fit = if per.is_empty() {
        None
    } else {
        linearity(m, &main_idx, &skip, &|_| 1.0)
    };
    let mut per_iter = estimates(&per, &sample_ns, n, fit);
    let outliers = outlier_figures(&main, &per, &per_iter);
    let processes = per_group(&main, |s| s.process);
    widen(
        &mut per_iter,
        &main,
        &per,
        speed.as_ref(),
        ctx,
        ctx.timer.resolution_ns / n,
    );
    let layout = layout_of(m, &main_idx, &processes, &cycles);
    let mut head = Head {
        per_iter,
        fit,
        outliers,
        layout_significant: layout.is_some_and(|l| l.significant),
        warmup: ns_warmup(m, &before_split, &main_idx),
        samples: per.len(),
    };
    let mut speed = speed;
    if let (Some((_, parts)), false) = (&in_cycles_steady, per.is_empty()) {
        let class = warmup_in_state(parts, &before_split, &main_idx);
        head = in_cycles(m, ctx, &main, &main_idx, &cycles, &skip, class);
        if let Some(sp) = speed.as_mut() {
            sp.cycles_per_iter = Some(stats::MedianInterval {
                median: head.per_iter.median_ns,
                lo: head.per_iter.run_ci95_ns[0],
                hi: head.per_iter.run_ci95_ns[1],
            });
            sp.cycles_next_ci95 = Some(head.per_iter.ci95_ns);
        }
    }
    let counters = counter_figures(m, ctx, &main_idx);
    let threads = threads::figures(m, &main_idx, &per_iter);
    Figures {
        cycle: cycle_of(&counters, ctx),
        per,
        per_iter,
        fit,
        warmup: warmup_of(m),
        outliers,
        processes,
        layout,
        counters,
        speed,
        interrupted,
        interrupted_samples: flags,
        threads,
        seconds: m.wall_ns as f64 * 1e-9,
        stop: m.stop,
        iters_per_sample: m.iters_per_sample,
        unit,
        head,
    }
}

/// The headline figures in cycles of the core: each headline sample's time per iteration over
/// the effective cycle time around it (`cycles`), estimated, widened between processes and
/// rounds, fitted against the iteration count and searched for its steady state as the time
/// is in ns.
fn in_cycles(
    m: &Measurement,
    ctx: &Context,
    main: &[&Sample],
    main_idx: &[usize],
    cycles: &[f64],
    skip: &dyn Fn(usize) -> bool,
    warmup: WarmupClass,
) -> Head {
    let n = m.iters_per_sample.max(1) as f64;
    let s = &m.samples.samples;
    let per: Vec<f64> = main_idx
        .iter()
        .map(|&i| s[i].per_iter_ns() / cycles[i])
        .collect();
    let sample: Vec<f64> = main_idx
        .iter()
        .map(|&i| s[i].ns as f64 / cycles[i])
        .collect();
    let fit = linearity(m, main_idx, skip, &|i| cycles[i]);
    let mut per_iter = estimates(&per, &sample, n, fit);
    let outliers = outlier_figures(main, &per, &per_iter);
    let cycle = stats::median(&main_idx.iter().map(|&i| cycles[i]).collect::<Vec<_>>());
    widen(
        &mut per_iter,
        main,
        &per,
        None,
        ctx,
        ctx.timer.resolution_ns / n / cycle,
    );
    let processes = figures_by(main.iter().zip(&per).map(|(s, &v)| (s.process, v)));
    let layout_significant = layout_spread(&processes).is_some_and(|l| l.significant);
    Head {
        per_iter,
        fit,
        outliers,
        layout_significant,
        warmup,
        samples: per.len(),
    }
}

/// How the engine's series in ns behaved before its steady state, a drift under 1 % of a
/// series that never settled aside ([`drifted`]): the first part's warm-up and steady samples
/// at the main count. A first part that never settled while the core ran it mostly in a slow
/// state gives way to the next part found steady in the headline's state
/// ([`warmup_in_state`]; `before` and `head`: the steady samples before and after the slow
/// state was set apart).
fn ns_warmup(m: &Measurement, before: &[usize], head: &[usize]) -> WarmupClass {
    let class = m.steady.map_or(WarmupClass::Flat, |s| s.class);
    if class != WarmupClass::NoSteadyState {
        return class;
    }
    let s = &m.samples.samples;
    let idx = past_calibration(m);
    let Some(&f) = idx.first() else {
        return class;
    };
    let part: Vec<usize> = idx
        .into_iter()
        .filter(|&i| s[i].process == s[f].process && s[i].round == s[f].round)
        .collect();
    let cut = part
        .iter()
        .position(|&i| s[i].phase == Phase::Measure)
        .unwrap_or(part.len());
    let series: Vec<f64> = part.iter().map(|&i| s[i].per_iter_ns()).collect();
    if !drifted(&series, cut) {
        return WarmupClass::Flat;
    }
    let (_, mut parts) = steady_in(m, &|i| s[i].per_iter_ns());
    match parts.first_mut() {
        Some(first) => first.class = class,
        None => return class,
    }
    warmup_in_state(&parts, before, head)
}

/// The samples past calibration at the main count (warm-up and steady), in order.
fn past_calibration(m: &Measurement) -> Vec<usize> {
    let s = &m.samples.samples;
    (0..s.len())
        .filter(|&i| s[i].phase != Phase::Calibration && s[i].iters == m.iters_per_sample)
        .collect()
}

/// One part of a measurement (a process's round) as the steady state was found in it: its
/// samples past calibration at the main count, and how its series behaved before its steady
/// state.
struct Part {
    samples: Vec<usize>,
    class: WarmupClass,
}

/// The steady samples found again on another series of the same samples (`value(i)`: each
/// sample's per-iteration figure in another unit): in each part (process and round) the
/// steady state of its samples past calibration at the main count, as the engine finds it in
/// ns; and each part's class. A part too short to tell keeps every sample.
fn steady_in(m: &Measurement, value: &dyn Fn(usize) -> f64) -> (Vec<usize>, Vec<Part>) {
    let s = &m.samples.samples;
    let mut parts: Vec<((u32, u32), Vec<usize>)> = Vec::new();
    for i in past_calibration(m) {
        let key = (s[i].process, s[i].round);
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => parts.push((key, vec![i])),
        }
    }
    let mut steady = Vec::new();
    let mut classes = Vec::new();
    for (_, idx) in parts {
        let series: Vec<f64> = idx.iter().map(|&i| value(i)).collect();
        // A part that never settled keeps every sample (its figure is of the whole part, and
        // the flag says so): MSER's cut then falls in the last few batches, often on a change
        // of the clock the probe had not yet followed, and a headline of those alone would
        // stand apart from the other parts.
        let (first, class) = match stats::steady::detect(&series) {
            Some(st) if st.class == WarmupClass::NoSteadyState => {
                let drift = drifted(&series, st.first);
                (0, if drift { st.class } else { WarmupClass::Flat })
            }
            Some(st) => (st.first.min(idx.len()), st.class),
            None => (0, WarmupClass::Flat),
        };
        steady.extend_from_slice(&idx[first..]);
        classes.push(Part {
            samples: idx,
            class,
        });
    }
    steady.sort_unstable();
    (steady, classes)
}

/// How the benchmark behaved before its steady state: the class of its first part that ran
/// mostly in the headline's state of the core: of its samples among `before` (the steady
/// ones, before the core's slow state was set apart), at least half in `head`. A part the core
/// ran through mostly in a slow state (a busy neighbour on and off) drifts with the machine,
/// and its drift is the machine's, said once under the table; the next part tells how the
/// benchmark settles.
fn warmup_in_state(parts: &[Part], before: &[usize], head: &[usize]) -> WarmupClass {
    let has = |set: &[usize], i: &usize| set.binary_search(i).is_ok();
    parts
        .iter()
        .find(|p| {
            let candidates: Vec<usize> = p
                .samples
                .iter()
                .copied()
                .filter(|i| has(before, i))
                .collect();
            2 * candidates.iter().filter(|i| has(head, i)).count() >= candidates.len()
        })
        .or(parts.first())
        .map_or(WarmupClass::Flat, |p| p.class)
}

/// Whether a series that never settled drifted by what a decision rests on: the median of
/// its samples before `cut` and after it differ by at least `steady::WARMUP_MIN_SHIFT` (1 %).
/// A series of thousands of samples never settles to MSER's satisfaction when it wanders by a
/// few tenths of a percent, which no figure reported here depends on.
fn drifted(series: &[f64], cut: usize) -> bool {
    let cut = cut.min(series.len());
    if cut == 0 || cut == series.len() {
        return true;
    }
    let (a, b) = (stats::median(&series[..cut]), stats::median(&series[cut..]));
    (a / b - 1.0).abs() >= stats::steady::WARMUP_MIN_SHIFT
}

/// The linearity test on the steady ladder: T = a + b·N fitted to the median sample
/// time at each iteration count (medians, so interrupts cannot bend the line), each sample's
/// time in units of `unit(i)` ns (1: in ns; the cycle time around it: in cycles).
///
/// The ladder is read where the headline was: the samples at the main count in `head`, and
/// each rung at another count only when the main-count sample nearest before it in its part
/// (after it, at the part's start) is in `head`. A round run wholly while a busy neighbour
/// slowed the core holds rungs a third slower than the headline's state; pooled with the
/// headline's they bend the line by what the machine did, not by what the code does.
fn linearity(
    m: &Measurement,
    head: &[usize],
    skip: &dyn Fn(usize) -> bool,
    unit: &dyn Fn(usize) -> f64,
) -> Option<LinearFit> {
    let s = &m.samples.samples;
    let mut in_head = vec![false; s.len()];
    for &i in head {
        in_head[i] = true;
    }
    let mut by_n: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for i in ladder_in_state(m, &in_head) {
        if !skip(i) {
            by_n.entry(s[i].iters)
                .or_default()
                .push(s[i].ns as f64 / unit(i));
        }
    }
    if by_n.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = by_n.keys().map(|&k| k as f64).collect();
    let ys: Vec<f64> = by_n.values().map(|v| stats::median(v)).collect();
    stats::linear_fit(&xs, &ys)
}

/// The measured samples of the ladder in the headline's state (`in_head`, per sample): the
/// headline's own at the main count, and the rungs at other counts whose nearest main-count
/// sample in their part (process and round) is a headline one.
fn ladder_in_state(m: &Measurement, in_head: &[bool]) -> Vec<usize> {
    let s = &m.samples.samples;
    let at_main = |i: usize| s[i].iters == m.iters_per_sample && s[i].phase != Phase::Calibration;
    let mut last: BTreeMap<(u32, u32), bool> = BTreeMap::new();
    let mut waiting: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    let mut out = Vec::new();
    for i in 0..s.len() {
        let part = (s[i].process, s[i].round);
        if at_main(i) {
            // Rungs before the part's first main-count sample take its state.
            for j in waiting.remove(&part).unwrap_or_default() {
                if in_head[i] {
                    out.push(j);
                }
            }
            last.insert(part, in_head[i]);
            if in_head[i] {
                out.push(i);
            }
        } else if s[i].phase == Phase::Measure {
            match last.get(&part) {
                Some(&state) => {
                    if state {
                        out.push(i);
                    }
                }
                None => waiting.entry(part).or_default().push(i),
            }
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests;
