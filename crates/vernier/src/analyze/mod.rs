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
pub mod speed;

use counters::{counter_figures, interrupted_flags};
pub use figures::{Interrupted, Outliers, PerIter, ProcessFigure, Warmup};
pub use layout::LAYOUT_MIN_SPREAD;
use layout::{figures_by, layout_spread, per_group};
use removed::optimized_away;
pub use removed::{
    weigh_instructions, InstructionsCheck, OPTIMIZED_AWAY_FIX, OPTIMIZED_AWAY_INSTRUCTIONS,
};

use crate::diagnostic::{Cycle, CycleSource, Estimates, Finding, Slowed, SpeedReference};
use crate::measure::{Measurement, StopReason};
use crate::samples::{Phase, Sample};
use crate::stats::steady::WarmupClass;
use crate::stats::{self, LinearFit};
use crate::timer::TimerInfo;
use speed::Speed;
use std::collections::BTreeMap;

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
/// The share of far outliers that is compared with [`OUTLIER_FRACTION`] and the machine's is
/// that of the quietest round or process with at least this many steady samples (when two or
/// more have), not of all samples: in one demo on a 2-vCPU guest, a burst of the host's noise
/// during the first pass over the benchmarks gave the first five 9-15 % far outliers in
/// that round and 2-3.5 % in the next, and each of them was flagged.
pub const OUTLIER_GROUP_MIN_SAMPLES: usize = 200;
/// Samples may be this much shorter than the timer's floor before `timer-limited`: the engine
/// calibrates to the floor, and a faster state of the core later shortens samples (by 1.85× on
/// shared machines) while the timer's share of a sample is still ≤ 0.2 %.
pub const TIMER_LIMITED_SLACK: f64 = 0.5;
/// A body more than 3 % slower than the empty loop, beyond 3 × its interval, does measurable
/// work: the harness's loop hides work that runs in its shadow (a load and a multiply in the
/// cycle the loop takes anyway), so "less than a quarter cycle more" alone is not evidence the
/// work was removed. The fastest sample must be that much slower too: with its core slowed by
/// a busy sibling thread, a removed body (`sqrt no barrier`) read 0.2927 ns against the empty
/// loop's 0.2664 (+9.9 %) while its fastest sample read 0.2685 (+0.8 %).
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

/// Analyse one benchmark's measurement.
pub fn analyze(m: &Measurement, ctx: &Context) -> Analysis {
    let flags = interrupted_flags(m, ctx);
    let all_main = steady_main(m);
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
        }
    });
    let excluded = interrupted.is_some_and(|i| i.excluded);
    let main_idx = if excluded { clean } else { all_main };
    // The core's speed: with samples in a fast and a slow state, the headline rests on the
    // fast ones (the other state's figure is in `speed`).
    let cycles = speed::sample_cycles(&m.samples, &ctx.timer);
    let wide = speed::sample_wide(&m.samples, &ctx.timer);
    let (speed, main_idx) = match speed::analyze(
        &m.samples,
        &ctx.timer,
        &cycles,
        &wide,
        ctx.speed_refs(),
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
    let mut diagnostics = Vec::new();

    let fit = if per.is_empty() {
        None
    } else {
        linearity(m, &|i| excluded && is_int(i))
    };
    let per_iter = if per.is_empty() {
        PerIter::undefined()
    } else {
        let sorted = stats::sorted(&per);
        let ci = stats::median_interval(&per);
        let sorted_ns = stats::sorted(&sample_ns);
        PerIter {
            median_ns: ci.median,
            min_ns: sorted[0],
            mean_ns: stats::mean(&per),
            sigma_ns: stats::iqr_sigma_sorted(&sorted_ns) / n.sqrt(),
            ci95_ns: [ci.lo, ci.hi],
            run_ci95_ns: [ci.lo, ci.hi],
            slope_ns: fit.map_or(f64::NAN, |f| f.slope),
            intercept_ns: fit.map_or(f64::NAN, |f| f.intercept),
            r2: fit.map_or(f64::NAN, |f| f.r2),
            sample_sigma_ns: stats::iqr_sigma_sorted(&sorted),
            mad_ns: stats::mad_sorted(&sorted),
        }
    };

    // Outliers (the tested `stats::outliers_beyond`) and the worst sigma event.
    let mut outliers = Outliers::default();
    let mut worst_sigma = 0.0;
    let mut outliers_shift = 0.0;
    // The far outliers' share in the quietest round or process: a burst of the machine's own
    // noise hits the rounds measured while it lasted, a benchmark's own outliers (page
    // faults, allocation, a syscall) hit every round.
    let mut quietest_far_share = None;
    if per.len() >= 4 {
        let times: Vec<u64> = main.iter().map(|s| s.t_ns).collect();
        let o = stats::outliers_beyond(&per, &times, OUTLIER_MIN_REL);
        outliers = Outliers {
            mild: o.low_mild + o.high_mild,
            far: o.low_far + o.high_far,
            period_ns: o.period_ns,
        };
        // How far the far outliers move the median: the median without them.
        let (lo3, hi3) =
            stats::outlier_fences_sorted(&stats::sorted(&per), stats::FAR_K, OUTLIER_MIN_REL);
        let kept: Vec<f64> = per
            .iter()
            .copied()
            .filter(|&x| (lo3..=hi3).contains(&x))
            .collect();
        if !kept.is_empty() {
            outliers_shift = (stats::median(&kept) - per_iter.median_ns).abs();
        }
        let mut by: std::collections::BTreeMap<u32, (usize, usize)> = Default::default();
        for (s, &x) in main.iter().zip(&per) {
            let g = by.entry((s.process << 16) | s.round).or_default();
            g.0 += 1;
            g.1 += usize::from(!(lo3..=hi3).contains(&x));
        }
        let shares: Vec<f64> = by
            .values()
            .filter(|(n, _)| *n >= OUTLIER_GROUP_MIN_SAMPLES)
            .map(|&(n, far)| far as f64 / n as f64)
            .collect();
        if shares.len() >= 2 {
            quietest_far_share = shares.iter().copied().reduce(f64::min);
        }
        let sigma = per_iter.sample_sigma_ns.max(per_iter.median_ns * 1e-9);
        worst_sigma = stats::worst_sigma(&per, per_iter.median_ns, sigma);
    }

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
    let warmup = Warmup {
        samples: warmup_samples,
        seconds: first_steady_start as f64 * 1e-9,
        class: m.steady.map(|s| s.class).unwrap_or(WarmupClass::Flat),
    };

    let processes = per_group(&main, |s| s.process);
    let mut per_iter = per_iter;
    // Each process is one draw of the memory layout, each round one draw of the machine's
    // slowly changing state: the interval of the median must cover the spread between draws,
    // not only the noise within one (a random-effects view).
    let groups = per_group(&main, |s| (s.process << 16) | s.round);
    if let Some(g) = layout_spread(&groups) {
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
    let step = ctx.timer.resolution_ns / n;
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
    // Another run on this machine may find the core at another clock: the interval covers
    // the headline's cycles at both ends of the clock range its recent runs saw (not for a
    // benchmark that ran slowed, whose diagnostic says how far its figure is from the
    // machine's usual speed).
    if let Some((lo, hi)) = speed
        .as_ref()
        .filter(|s| !s.core_slowed())
        .and_then(|s| speed::clock_interval(s, ctx.clock_cycle_ns))
    {
        per_iter.ci95_ns[0] = per_iter.ci95_ns[0].min(lo);
        per_iter.ci95_ns[1] = per_iter.ci95_ns[1].max(hi);
    }
    per_iter.ci95_ns = bounded(per_iter.ci95_ns);
    // Layout is only blamed when the core's speed does not explain the processes' spread:
    // when, in cycles of the core at each sample's moment (the probe's), the processes
    // disagree beyond their intervals too. A clock that wandered between processes moves
    // their times in ns and leaves their cycles alone (two processes of a chain of additions
    // read 27.05 and 30.65 ns in a run whose core spent three quarters of its samples at 3.68
    // GHz-equivalent and a quarter at 3.32).
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
    let layout = layout_spread(&processes).map(|mut l| {
        if cycles_agree {
            l.significant = false;
        }
        l
    });

    // Diagnostics, in the order a reader should act on them.
    if ctx.debug_build {
        diagnostics.push(Finding::DebugBuild);
    }
    let counters = counter_figures(m, ctx, &main_idx);
    // The benchmark's own cycle time when its cycles were counted: task-clock / cycles.
    let measured_cycle_ns = match (
        counters.get("task-clock_per_iter"),
        counters.get("cycles_per_iter"),
    ) {
        (Some(&t), Some(&c)) if t > 0.0 && c > 0.0 => Some(t / c),
        _ => None,
    };
    let cycle = match measured_cycle_ns {
        Some(ns) => Some(Cycle {
            ns,
            source: CycleSource::Counters,
        }),
        None => ctx.cycle_ns.map(|ns| Cycle {
            ns,
            source: CycleSource::AddChain,
        }),
    };
    diagnostics.extend(optimized_away(&per_iter, fit, ctx, cycle));
    diagnostics.extend(speed.as_ref().and_then(core_slowed));
    let half_width = (per_iter.run_ci95_ns[1] - per_iter.run_ci95_ns[0]) / 2.0;
    if let Some(f) = fit {
        let disagree = (f.slope - per_iter.median_ns).abs();
        let tol = NONLINEAR_SIGMAS * f.slope_se + half_width;
        if f.r2 < NONLINEAR_R2 || (disagree > NONLINEAR_REL * per_iter.median_ns && disagree > tol)
        {
            diagnostics.push(Finding::Nonlinear {
                intercept_ns: f.intercept,
                slope_ns: f.slope,
                r2: f.r2,
                median_ns: per_iter.median_ns,
            });
        }
    }
    if let Some(l) = layout.filter(|l| l.significant) {
        diagnostics.push(Finding::LayoutSensitive {
            processes: processes.len(),
            spread: l.spread,
            lo_ns: l.lo,
            hi_ns: l.hi,
            within: l.within,
        });
    }
    let seconds = m.wall_ns as f64 * 1e-9;
    if warmup.class == WarmupClass::NoSteadyState {
        diagnostics.push(Finding::NoSteadyState { seconds });
    }
    // Judged on the run's own interval: the clock's range over other runs is the machine's,
    // said in `speed`, not this run's noise. And judged in cycles of the core at the time as
    // well: when the clock moved during the run, the figure in ns moved with it while the
    // cycles held still (under load here, the hot event copy's own interval was ±1.9 % in ns
    // and ±0.27 % in cycles). The run then measured precisely; the clock's moves are the
    // machine's, which the interval covers (`speed::clock_interval`) and `core-slowed` names.
    let rel_ci = half_width / per_iter.median_ns;
    let rel_ci_cycles = speed
        .as_ref()
        .and_then(|s| s.cycles_per_iter)
        .map(|c| (c.hi - c.lo) / 2.0 / c.median)
        .filter(|r| r.is_finite());
    if rel_ci.min(rel_ci_cycles.unwrap_or(f64::INFINITY)) > UNSTABLE_REL_CI
        && m.stop != StopReason::Failed
    {
        diagnostics.push(Finding::Unstable {
            rel_ci,
            limit_rel_ci: UNSTABLE_REL_CI,
            seconds,
            steady_samples: per.len(),
        });
    }
    let floor = ctx.timer_factor * ctx.timer.overhead_ns.max(ctx.timer.resolution_ns);
    let median_sample = per_iter.median_ns * n;
    if median_sample < floor * TIMER_LIMITED_SLACK {
        diagnostics.push(Finding::TimerLimited {
            sample_ns: median_sample,
            timer_factor: ctx.timer_factor,
            overhead_ns: ctx.timer.overhead_ns,
            resolution_ns: ctx.timer.resolution_ns,
        });
    }
    let far_share = quietest_far_share.unwrap_or(outliers.far as f64 / per.len().max(1) as f64);
    let beyond_machine = far_share > OUTLIER_FRACTION
        && far_share > OUTLIER_NOISE_FACTOR * ctx.noise_far_share.unwrap_or(0.0);
    if outliers.far > 0 && (beyond_machine || outliers_shift > half_width) {
        diagnostics.push(Finding::Outliers {
            far: outliers.far,
            of: per.len(),
            period_ns: outliers.period_ns,
        });
    }

    // Excluded interrupted samples leave the estimate as it would be without them: a word is
    // only due when they are many, or when they move the median beyond its interval.
    let int_matters = |i: &Interrupted| {
        let shift = (i.median_with_ns - i.median_without_ns).abs();
        i.share > INTERRUPTED_FRACTION
            && (!i.excluded || i.share > INTERRUPTED_MANY || shift > half_width)
    };
    if let Some(i) = interrupted.filter(int_matters) {
        diagnostics.push(Finding::Interrupted {
            samples: i.samples,
            of: i.of,
            share: i.share,
            median_with_ns: i.median_with_ns,
            median_without_ns: Some(i.median_without_ns).filter(|x| x.is_finite()),
            estimates: if i.excluded {
                Estimates::Excluded
            } else if ctx.keep_interrupted {
                Estimates::KeptAsAsked
            } else {
                Estimates::KeptAllInterrupted
            },
        });
    }
    if let Some(note) = &ctx.counters_note {
        diagnostics.push(Finding::CountersUnavailable {
            events: ctx.counters_unavailable.clone(),
            note: note.clone(),
        });
    }

    Analysis {
        per_iter,
        fit,
        steady_samples: per.len(),
        warmup,
        outliers,
        worst_sigma,
        processes,
        diagnostics,
        counters,
        interrupted,
        interrupted_samples: flags,
        cycle_ns: cycle.map(|c| c.ns),
        speed,
    }
}

/// `core-slowed`: the core ran markedly slower than its fastest state during the benchmark.
fn core_slowed(sp: &Speed) -> Option<Finding> {
    if !sp.core_slowed() {
        return None;
    }
    let Some(slow) = sp.slow.filter(|s| s.share >= speed::CORE_SLOWED_MIN_SHARE) else {
        // One state, behind the machine's known speed.
        return Some(Finding::CoreSlowed(Slowed::BehindKnown {
            fast_cycle_ns: sp.fast.cycle_ns,
            known_cycle_ns: sp.behind_known_cycle_ns?,
        }));
    };
    Some(Finding::CoreSlowed(if sp.split {
        Slowed::TwoStates {
            fast_cycle_ns: sp.fast.cycle_ns,
            fast_share: sp.fast.share,
            fast_median_ns: sp.fast.median_ns,
            slow_cycle_ns: slow.cycle_ns,
            slow_share: slow.share,
            slow_median_ns: slow.median_ns,
            fastest_cycle_ns: sp.fastest_cycle_ns,
            throughput_slowdown: sp.throughput_slowdown(),
        }
    } else {
        Slowed::SlowState {
            slow_cycle_ns: slow.cycle_ns,
            slow_share: slow.share,
            fastest_cycle_ns: sp.fastest_cycle_ns,
            throughput_slowdown: sp.throughput_slowdown(),
            against: match sp.reference {
                speed::Reference::Probes => SpeedReference::Probes,
                speed::Reference::StartUp => SpeedReference::StartUp,
                speed::Reference::Nominal => SpeedReference::Nominal,
                speed::Reference::Known => SpeedReference::Known,
            },
        }
    }))
}

/// The seed's linearity test on the steady ladder: T = a + b·N fitted to the median sample
/// time at each iteration count (medians, so interrupts cannot bend the line).
fn linearity(m: &Measurement, skip: &dyn Fn(usize) -> bool) -> Option<LinearFit> {
    let mut by_n: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for (i, s) in m.samples.samples.iter().enumerate() {
        if s.phase == Phase::Measure && !skip(i) {
            by_n.entry(s.iters).or_default().push(s.ns as f64);
        }
    }
    if by_n.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = by_n.keys().map(|&k| k as f64).collect();
    let ys: Vec<f64> = by_n.values().map(|v| stats::median(v)).collect();
    stats::linear_fit(&xs, &ys)
}

#[cfg(test)]
mod tests;
