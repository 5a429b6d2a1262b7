//! Analysis: a pure function from the measured samples to the reported figures and diagnostics.
//! No I/O, no clock: the same samples always give the same analysis, so a result file can be
//! re-analysed offline.
//!
//! Diagnostics come out as data ([`Finding`]: a code and its figures); `diagnostic::words`
//! words them. The analysis types serialise as the result file stores them (`nan` writes an
//! undefined figure as `null`), so the file has no mirror of them.

pub mod nan;

pub mod pairs;
pub mod speed;

use crate::counters::Event;
use crate::diagnostic::{
    Code, Cycle, CycleSource, Estimates, Finding, Removed, Slowed, SpeedReference,
};
use crate::measure::{Measurement, StopReason};
use crate::samples::{Phase, Sample};
use crate::stats::steady::WarmupClass;
use crate::stats::{self, LinearFit};
use crate::timer::TimerInfo;
use nan::{nan_as_null, nan_pair};
use serde::{Deserialize, Serialize};
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

/// Per-iteration estimates (ns), as the result file's `per_iter` holds them (NaN, written
/// `null`, when undefined).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerIter {
    #[serde(with = "nan_as_null")]
    pub median_ns: f64,
    #[serde(with = "nan_as_null")]
    pub min_ns: f64,
    #[serde(with = "nan_as_null")]
    pub mean_ns: f64,
    /// The seed's σ_iter = σ_sample / √N, with the robust σ_sample = IQR/1.349 of sample times.
    #[serde(with = "nan_as_null")]
    pub sigma_ns: f64,
    /// The median's 95 % interval: the run's own (`run_ci95_ns`), joined to what another run
    /// on this machine would give at another clock (see `speed::clock_interval`).
    #[serde(with = "nan_pair")]
    pub ci95_ns: [f64; 2],
    /// The interval of this run's samples alone (processes and rounds included, the clock
    /// range not): how precisely this run measured, what `unstable` judges. The same as
    /// `ci95_ns` when the clock's range is unknown.
    #[serde(default = "nan_pair::none", with = "nan_pair")]
    pub run_ci95_ns: [f64; 2],
    /// The linearity fit T = a + b·N (NaN without one): b, a and R² (its standard error is in
    /// [`Analysis::fit`]).
    #[serde(with = "nan_as_null")]
    pub slope_ns: f64,
    #[serde(with = "nan_as_null")]
    pub intercept_ns: f64,
    #[serde(with = "nan_as_null")]
    pub r2: f64,
    /// Robust spread of the per-iteration mean of one sample (IQR/1.349 of ns/N).
    #[serde(default, with = "nan_as_null")]
    pub sample_sigma_ns: f64,
    /// MAD of the per-iteration means of the samples.
    #[serde(default, with = "nan_as_null")]
    pub mad_ns: f64,
}

impl PerIter {
    /// Every figure undefined (a benchmark with no sample to estimate from).
    pub fn undefined() -> PerIter {
        let nan = f64::NAN;
        PerIter {
            median_ns: nan,
            min_ns: nan,
            mean_ns: nan,
            sigma_ns: nan,
            ci95_ns: [nan, nan],
            run_ci95_ns: [nan, nan],
            slope_ns: nan,
            intercept_ns: nan,
            r2: nan,
            sample_sigma_ns: nan,
            mad_ns: nan,
        }
    }
}

/// Outliers among the steady samples (Tukey fences on per-iteration times).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outliers {
    /// Beyond 1.5 × IQR.
    pub mild: usize,
    /// Beyond 3 × IQR.
    pub far: usize,
    /// Median time between far outliers when they recur regularly (a timer tick, an IRQ).
    pub period_ns: Option<f64>,
}

/// Warm-up as reported.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    pub samples: usize,
    /// From the benchmark's start to its steady state, calibration included.
    pub seconds: f64,
    pub class: WarmupClass,
}

/// A worker process's share of the samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessFigure {
    pub index: u32,
    pub median_ns: f64,
    pub ci95_ns: (f64, f64),
    pub samples: usize,
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

/// Steady samples during which the thread was switched out or migrated, and how much they
/// move the estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interrupted {
    /// Steady samples with a context switch or a CPU migration.
    pub samples: usize,
    /// Steady samples in all.
    pub of: usize,
    /// samples / of.
    pub share: f64,
    /// Median per-iteration time with and without them.
    #[serde(with = "nan_as_null")]
    pub median_with_ns: f64,
    #[serde(with = "nan_as_null")]
    pub median_without_ns: f64,
    /// Whether the estimates exclude them (the default; `--keep-interrupted` keeps them).
    pub excluded: bool,
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
/// Samples may be this much shorter than the timer's floor before `timer-limited`: the engine
/// calibrates to the floor, and a faster state of the core later shortens samples (by 1.85× on
/// shared machines) while the timer's share of a sample is still ≤ 0.2 %.
pub const TIMER_LIMITED_SLACK: f64 = 0.5;
/// A body more than 3 % slower than the empty loop, beyond 3 × its interval, does measurable
/// work: the harness's loop hides work that runs in its shadow (a load and a multiply in the
/// cycle the loop takes anyway), so "less than a quarter cycle more" alone is not evidence the
/// work was removed.
pub const MEASURABLE_OVER_EMPTY: f64 = 0.03;
/// The core's speed explains a between-process spread when the processes' speeds differ by
/// at least this fraction of their times' spread.
pub const SPEED_EXPLAINS_SPREAD: f64 = 0.5;
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

/// The counter's delta in sample `i` minus the reads' baseline, if counted.
fn counter_value(m: &Measurement, ctx: &Context, event: &str, i: usize) -> Option<f64> {
    let c = m.samples.counter(event)?;
    let v = (*c.values.get(i)?)? as f64;
    let base = ctx.counter_baseline.get(event).copied().unwrap_or(0.0);
    Some((v - base).max(0.0))
}

/// Per sample: a context switch or a CPU migration happened in it (empty when neither event
/// was read). Unknown values count as not interrupted.
fn interrupted_flags(m: &Measurement, ctx: &Context) -> Vec<bool> {
    let cs = Event::ContextSwitches.name();
    let mig = Event::CpuMigrations.name();
    if m.samples.counter(cs).is_none() && m.samples.counter(mig).is_none() {
        return Vec::new();
    }
    (0..m.samples.len())
        .map(|i| {
            counter_value(m, ctx, cs, i).unwrap_or(0.0) > 0.0
                || counter_value(m, ctx, mig, i).unwrap_or(0.0) > 0.0
        })
        .collect()
}

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
    let (speed, main_idx) = match speed::analyze(
        &m.samples,
        &ctx.timer,
        &cycles,
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
    // Layout is only blamed when the core's speed does not explain the processes' spread.
    let speed_spread = speed::process_speed_spread(&m.samples, &cycles, &main_idx, 10);
    let layout = layout_spread(&processes).map(|mut l| {
        if speed_spread.is_some_and(|sp| sp >= SPEED_EXPLAINS_SPREAD * l.spread) {
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
    let far_share = outliers.far as f64 / per.len().max(1) as f64;
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
        }
    } else {
        Slowed::SlowState {
            slow_cycle_ns: slow.cycle_ns,
            slow_share: slow.share,
            fastest_cycle_ns: sp.fastest_cycle_ns,
            against: match sp.reference {
                speed::Reference::Probes => SpeedReference::Probes,
                speed::Reference::StartUp => SpeedReference::StartUp,
                speed::Reference::Nominal => SpeedReference::Nominal,
                speed::Reference::Known => SpeedReference::Known,
            },
        }
    }))
}

/// Ratios derived from two counters: (key, numerator, denominator).
const DERIVED: [(&str, &str, &str); 4] = [
    ("ipc", "instructions", "cycles"),
    ("branch_miss_rate", "branch-misses", "branches"),
    ("cache_miss_rate", "cache-misses", "cache-references"),
    ("ghz", "cycles", "task-clock"),
];

/// Per-iteration counter figures over the given samples: for each event read,
/// `<event>_per_iter` = median over samples of (delta − baseline) / iters, with the
/// distribution-free 95 % interval of that median (`…_ci95_lo`, `…_ci95_hi`); the same for
/// the ratios of [`DERIVED`], computed per sample. Samples without a value are skipped, so an
/// absent value never becomes a zero.
fn counter_figures(m: &Measurement, ctx: &Context, idx: &[usize]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let mut put = |key: &str, xs: &[f64]| {
        if xs.is_empty() {
            return;
        }
        let ci = stats::median_interval(xs);
        out.insert(key.to_string(), ci.median);
        out.insert(format!("{key}_ci95_lo"), ci.lo);
        out.insert(format!("{key}_ci95_hi"), ci.hi);
    };
    for c in &m.samples.counters {
        let xs: Vec<f64> = idx
            .iter()
            .filter_map(|&i| {
                let n = m.samples.samples[i].iters.max(1) as f64;
                counter_value(m, ctx, &c.event, i).map(|v| v / n)
            })
            .collect();
        put(&format!("{}_per_iter", c.event), &xs);
    }
    for (key, num, den) in DERIVED {
        let xs: Vec<f64> = idx
            .iter()
            .filter_map(|&i| {
                let a = counter_value(m, ctx, num, i)?;
                let b = counter_value(m, ctx, den, i)?;
                (b > 0.0).then_some(a / b)
            })
            .collect();
        put(key, &xs);
    }
    out
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

/// `optimized-away`: the median under a quarter of a cycle, no more than the empty loop's, or a
/// sample time that does not grow with the iteration count.
fn optimized_away(
    p: &PerIter,
    fit: Option<LinearFit>,
    ctx: &Context,
    cycle: Option<Cycle>,
) -> Option<Finding> {
    if !p.median_ns.is_finite() {
        return None;
    }
    let quarter = cycle
        .map(|c| OPTIMIZED_AWAY_CYCLES * c.ns)
        .unwrap_or(OPTIMIZED_AWAY_NS);
    let removed = |r: Removed| Some(Finding::OptimizedAway(r));
    if p.median_ns < quarter {
        return removed(Removed::BelowQuarterCycle {
            median_ns: p.median_ns,
            cycle,
        });
    }
    if let Some(empty) = ctx.empty_iter_ns {
        let net = p.median_ns - empty;
        let half_width = (p.run_ci95_ns[1] - p.run_ci95_ns[0]) / 2.0;
        let measurable = net > MEASURABLE_OVER_EMPTY * empty && net > 3.0 * half_width;
        if net < quarter && !measurable {
            return removed(Removed::LikeEmptyLoop {
                median_ns: p.median_ns,
                empty_ns: empty,
            });
        }
    }
    match fit {
        Some(f) if f.slope < quarter && f.slope < 2.0 * f.slope_se.max(1e-12) => {
            removed(Removed::NoSlope { slope_ns: f.slope })
        }
        _ => None,
    }
}

/// Instructions per iteration of a benchmark and of the harness's empty loop, counted under
/// callgrind (`vernier run` counts them for a benchmark whose time cannot be told from the
/// empty loop's: a body may be removed, or fit in the loop's own cycle, and only the count
/// tells which).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InstructionsCheck {
    pub instructions_per_iter: f64,
    pub empty_instructions_per_iter: f64,
}

/// What to do about `optimized-away` (worded in `diagnostic::words`).
pub use crate::diagnostic::words::OPTIMIZED_AWAY_FIX;

/// A body executing fewer than this many instructions per iteration more than the harness's
/// empty loop does no work.
pub const OPTIMIZED_AWAY_INSTRUCTIONS: f64 = 0.5;

impl InstructionsCheck {
    /// The body executes no more instructions than the empty loop: removed.
    pub fn removed(&self) -> bool {
        self.instructions_per_iter - self.empty_instructions_per_iter < OPTIMIZED_AWAY_INSTRUCTIONS
    }

    /// The count as the evidence of `optimized-away`, beside the median time when one was
    /// measured.
    pub fn evidence(&self, median_ns: Option<f64>) -> Removed {
        Removed::Instructions {
            median_ns,
            instructions_per_iter: self.instructions_per_iter,
            empty_instructions_per_iter: self.empty_instructions_per_iter,
        }
    }
}

/// Weigh an instruction count against `optimized-away` found by time: a body that executes
/// more instructions than the empty loop was not removed (its work fits in the loop's own
/// cycles, where time cannot see it), so the diagnostic goes; one that does not is confirmed,
/// with the count as its evidence.
pub fn weigh_instructions(a: &mut Analysis, check: &InstructionsCheck) {
    let Some(i) = a
        .diagnostics
        .iter()
        .position(|d| d.code() == Code::OptimizedAway)
    else {
        return;
    };
    if check.removed() {
        a.diagnostics[i] = Finding::OptimizedAway(check.evidence(Some(a.per_iter.median_ns)));
    } else {
        a.diagnostics.remove(i);
    }
}

/// Spread between processes' medians.
#[derive(Clone, Copy, Debug)]
struct Layout {
    lo: f64,
    hi: f64,
    /// (hi − lo) / lo.
    spread: f64,
    /// Largest relative half-width of a process's own interval.
    within: f64,
    /// Half-width of the t-interval on the processes' medians.
    half_width_ns: f64,
    significant: bool,
}

/// Between-process spread below this (relative) is never reported.
pub const LAYOUT_MIN_SPREAD: f64 = 0.005;

fn layout_spread(processes: &[ProcessFigure]) -> Option<Layout> {
    let meds: Vec<f64> = processes
        .iter()
        .filter(|p| p.samples >= 10)
        .map(|p| p.median_ns)
        .collect();
    if meds.len() < 2 {
        return None;
    }
    let lo = meds.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = meds.iter().cloned().fold(0.0, f64::max);
    let within = processes
        .iter()
        .map(|p| (p.ci95_ns.1 - p.ci95_ns.0) / 2.0 / p.median_ns)
        .fold(0.0, f64::max);
    let spread = hi / lo - 1.0;
    Some(Layout {
        lo,
        hi,
        spread,
        within,
        half_width_ns: stats::t975(meds.len() - 1) * stats::std_dev(&meds)
            / (meds.len() as f64).sqrt(),
        significant: spread > LAYOUT_MIN_SPREAD && spread > 2.0 * within,
    })
}

fn per_group(main: &[&Sample], key: impl Fn(&Sample) -> u32) -> Vec<ProcessFigure> {
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for s in main {
        by.entry(key(s)).or_default().push(s.per_iter_ns());
    }
    by.into_iter()
        .map(|(index, v)| {
            let ci = stats::median_interval(&v);
            ProcessFigure {
                index,
                median_ns: ci.median,
                ci95_ns: (ci.lo, ci.hi),
                samples: v.len(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::Samples;
    use crate::stats::steady::SteadyState;
    use crate::timer::TimerKind;

    fn ctx() -> Context {
        Context {
            empty_iter_ns: Some(0.33),
            cycle_ns: Some(0.33),
            target_rel_ci: 0.005,
            timer_factor: 1000.0,
            ..Context::new(TimerInfo {
                kind: TimerKind::Tsc,
                resolution_ns: 0.5,
                overhead_ns: 10.0,
                tsc_hz: Some(3e9),
            })
        }
    }

    /// A measurement of `per_iter(i)` ns per iteration at counts N and the ladder.
    fn synth(n: u64, intercept: f64, per_iter: impl Fn(usize) -> f64) -> Measurement {
        let mut samples = Vec::new();
        let mut t = 0u64;
        for i in 0..2000 {
            let iters = match i % 10 {
                3 => n / 16,
                6 => n / 4,
                9 => 2 * n,
                _ => n,
            };
            let ns = (intercept + per_iter(i) * iters as f64).round() as u64;
            t += ns + 100;
            samples.push(Sample {
                iters,
                ns,
                t_ns: t,
                process: 0,
                round: 0,
                phase: Phase::Measure,
            });
        }
        Measurement {
            samples: Samples {
                samples,
                ..Samples::default()
            },
            iters_per_sample: n,
            wall_ns: t,
            stop: StopReason::Precise,
            steady: Some(SteadyState {
                first: 0,
                class: WarmupClass::Flat,
            }),
            error: None,
        }
    }

    fn codes(a: &Analysis) -> Vec<Code> {
        a.diagnostics.iter().map(|d| d.code()).collect()
    }

    /// The analysis flags `code` (or not, with `flagged` false); the findings when it does not.
    fn assert_flags(a: &Analysis, code: Code, flagged: bool) {
        assert_eq!(codes(a).contains(&code), flagged, "{:?}", a.diagnostics);
    }

    /// The message of the analysis's `code` diagnostic, worded.
    fn message(a: &Analysis, code: Code) -> String {
        let f = a.diagnostics.iter().find(|d| d.code() == code);
        crate::diagnostic::words::message(f.expect("the diagnostic is there"))
    }

    /// The analysis of a steady benchmark: `per_iter_ns` (±0.1 %) at `n` iterations per sample.
    fn steady(n: u64, per_iter_ns: f64) -> Analysis {
        analyze(&synth(n, 20.0, |i| per_iter_ns * wiggle(i)), &ctx())
    }

    fn wiggle(i: usize) -> f64 {
        1.0 + 0.002 * (((i * 7919) % 13) as f64 / 13.0 - 0.5)
    }

    #[test]
    fn clean_linear_benchmark_has_no_diagnostics() {
        let a = steady(8192, 4.0);
        assert!(codes(&a).is_empty(), "{:?}", a.diagnostics);
        let f = a.fit.unwrap();
        assert!((f.slope - 4.0).abs() < 0.01);
        assert!((a.per_iter.median_ns - 4.0).abs() < 0.01);
        assert!(a.per_iter.ci95_ns[0] <= a.per_iter.median_ns);
        assert!(a.per_iter.ci95_ns[1] >= a.per_iter.median_ns);
    }

    /// Probes on `m`: sample i's probe took `probe(i)` ns for 4096 additions. With the test
    /// context (timer overhead 10 ns, start-up cycle 0.33 ns), 1362 ns is 0.33 ns per addition.
    fn with_probes(mut m: Measurement, probe: impl Fn(usize) -> u64) -> Measurement {
        m.samples.probe_ns = (0..m.samples.len()).map(|i| Some(probe(i))).collect();
        m.samples.probe_adds = 4096;
        m
    }

    #[test]
    fn a_core_in_two_states_gives_the_fast_figure_and_says_so() {
        // 300 of the 2000 samples, in runs of 100, with the core 1.85× slower (probe 2510 ns)
        // and the benchmark 1.85× slower with it.
        let slow = |i: usize| (i / 100) % 20 >= 17;
        let bench = |i: usize| 4.0 * wiggle(i) * if slow(i) { 1.85 } else { 1.0 };
        let m = with_probes(
            synth(8192, 20.0, bench),
            |i| {
                if slow(i) {
                    2510
                } else {
                    1362
                }
            },
        );
        let a = analyze(&m, &ctx());
        assert_flags(&a, Code::CoreSlowed, true);
        let sp = a.speed.unwrap();
        assert!(sp.split && !sp.wholly_slow());
        let sl = sp.slow.unwrap();
        assert!((sl.share - 0.15).abs() < 0.01, "{sl:?}");
        assert!((sl.median_ns / sp.fast.median_ns - 1.85).abs() < 0.01);
        assert!((sp.slowdown() - 1.85).abs() < 0.02, "{}", sp.slowdown());
        // The headline and its interval are the fast state's: within the fast samples' range.
        assert!(a.per_iter.median_ns < 4.01 && a.per_iter.ci95_ns[1] < 4.01);
        let msg = message(&a, Code::CoreSlowed);
        assert!(msg.contains("bimodal"), "{msg}");
        // The same samples without probes: no speed, no core-slowed, and a wider interval.
        let plain = analyze(&synth(8192, 20.0, bench), &ctx());
        assert!(plain.speed.is_none() && !codes(&plain).contains(&Code::CoreSlowed));
        assert!(
            plain.per_iter.ci95_ns[1] - plain.per_iter.ci95_ns[0]
                > a.per_iter.ci95_ns[1] - a.per_iter.ci95_ns[0]
        );
    }

    #[test]
    fn a_run_whose_clock_moved_is_unstable_in_ns_but_not_in_cycles() {
        // The core alternates between two clocks 6 % apart, 100 samples at a time (under the
        // 10 % of core-slowed): the figure in ns moves with it, the blocks' medians spread,
        // and the run's own interval in ns is wider than ±1 %.
        let fast = |i: usize| (i / 100).is_multiple_of(2);
        let clock = |i: usize| if fast(i) { 1.0 } else { 1.06 };
        let bench = |i: usize| 4.0 * wiggle(i) * clock(i);
        let followed = with_probes(synth(8192, 20.0, bench), |i| {
            (1362.0 * clock(i)).round() as u64
        });
        let a = analyze(&followed, &ctx());
        let rel =
            (a.per_iter.run_ci95_ns[1] - a.per_iter.run_ci95_ns[0]) / 2.0 / a.per_iter.median_ns;
        assert!(rel > UNSTABLE_REL_CI, "{rel}");
        // In cycles it held still: the run measured precisely, and the clock is the machine's.
        assert_flags(&a, Code::CoreSlowed, false);
        assert_flags(&a, Code::Unstable, false);
        // The same times with a steady clock: the spread is the benchmark's, and it is unstable.
        let steady_clock = with_probes(synth(8192, 20.0, bench), |_| 1362);
        assert_flags(&analyze(&steady_clock, &ctx()), Code::Unstable, true);
    }

    #[test]
    fn the_interval_covers_the_machine_s_clock_range_without_calling_the_run_unstable() {
        // 0.33 ns per addition (1362 ns probes), 4 ns per iteration: about 12 cycles; a sample
        // in 25 is 10 % off either way, so the data span more than the clock range below.
        let bench = |i: usize| {
            4.0 * wiggle(i)
                * match i % 50 {
                    0 => 1.1,
                    25 => 0.9,
                    _ => 1.0,
                }
        };
        let m = with_probes(synth(8192, 20.0, bench), |_| 1362);
        let own = analyze(&m, &ctx());
        let cyc = own.speed.unwrap().cycles_per_iter.unwrap();
        assert!((cyc.median - 4.0 / 0.3325).abs() < 0.1, "{cyc:?}");
        // Without a known range the two intervals are one.
        assert_eq!(own.per_iter.ci95_ns, own.per_iter.run_ci95_ns);
        // Recent runs on this machine found the core between 0.32 and 0.34 ns per addition:
        // the interval reaches the cycles at both ends.
        let mut c = ctx();
        c.clock_cycle_ns = Some((0.32, 0.34));
        let a = analyze(&m, &c);
        assert_eq!(a.per_iter.median_ns, own.per_iter.median_ns);
        assert_eq!(a.per_iter.run_ci95_ns, own.per_iter.run_ci95_ns);
        let [lo, hi] = a.per_iter.ci95_ns;
        assert!((lo - cyc.lo * 0.32).abs() < 1e-9, "{lo} {}", cyc.lo * 0.32);
        assert!((hi - cyc.hi * 0.34).abs() < 1e-9, "{hi} {}", cyc.hi * 0.34);
        assert!(lo >= a.per_iter.min_ns && lo < own.per_iter.ci95_ns[0]);
        assert!(hi > own.per_iter.ci95_ns[1]);
        // As stable a run as it was: the clock's range is the machine's, not this run's noise.
        assert_eq!(codes(&a), codes(&own));
        assert_flags(&a, Code::Unstable, false);
        // Never wider than the data: a range far beyond them is cut at their ends.
        c.clock_cycle_ns = Some((0.1, 1.0));
        let a = analyze(&m, &c);
        assert!((a.per_iter.ci95_ns[0] - a.per_iter.min_ns).abs() < 1e-9);
        assert!(a.per_iter.ci95_ns[1] < 4.0 * 1.1 * 1.002);
        // A run that ran slowed keeps its own interval: its diagnostic says the rest.
        let slowed = with_probes(synth(8192, 20.0, |i| 7.4 * wiggle(i)), |_| 2510);
        let mut c = ctx();
        c.clock_cycle_ns = Some((0.32, 0.34));
        let a = analyze(&slowed, &c);
        assert_flags(&a, Code::CoreSlowed, true);
        assert_eq!(a.per_iter.ci95_ns, a.per_iter.run_ci95_ns);
    }

    #[test]
    fn a_run_wholly_in_the_slow_state_says_so() {
        let m = with_probes(synth(8192, 20.0, |i| 7.4 * wiggle(i)), |_| 2510);
        let a = analyze(&m, &ctx());
        let sp = a.speed.unwrap();
        assert!(sp.wholly_slow() && !sp.split);
        let msg = message(&a, Code::CoreSlowed);
        assert!(msg.contains("slow state's"), "{msg}");
        // One state at the start-up speed: nothing to say.
        let m = with_probes(synth(8192, 20.0, |i| 4.0 * wiggle(i)), |_| 1362);
        let a = analyze(&m, &ctx());
        assert!(codes(&a).is_empty(), "{:?}", a.diagnostics);
        assert!(a.speed.unwrap().slow.is_none());
    }

    /// `synth` in two processes: the first 1000 samples in process 0, the rest in process 1.
    fn two_processes(per_iter: impl Fn(usize) -> f64) -> Measurement {
        let mut m = synth(8192, 20.0, per_iter);
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            s.process = (i >= 1000) as u32;
        }
        m
    }

    #[test]
    fn layout_is_not_blamed_for_what_the_core_speed_explains() {
        // Process 1 is 8 % slower, and so is its core (below the 10 % of a slow state).
        let bench = |i: usize| 4.0 * wiggle(i) * if i >= 1000 { 1.08 } else { 1.0 };
        let a = analyze(&two_processes(bench), &ctx());
        assert_flags(&a, Code::LayoutSensitive, true);
        let m = with_probes(
            two_processes(bench),
            |i| if i >= 1000 { 1471 } else { 1362 },
        );
        let a = analyze(&m, &ctx());
        assert_flags(&a, Code::LayoutSensitive, false);
        // Same speed in both processes: the layout is blamed.
        let m = with_probes(two_processes(bench), |_| 1362);
        assert!(codes(&analyze(&m, &ctx())).contains(&Code::LayoutSensitive));
    }

    #[test]
    fn the_interval_is_never_wider_than_the_data() {
        // Four processes, one 10 % slower: the t-interval on four medians (t = 3.18) reaches
        // beyond the fastest and slowest samples; it is cut to their range.
        let mut m = synth(8192, 20.0, |i| {
            4.0 * wiggle(i) * if i >= 1500 { 1.1 } else { 1.0 }
        });
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            s.process = (i / 500) as u32;
        }
        let a = analyze(&m, &ctx());
        let max = m
            .samples
            .samples
            .iter()
            .filter(|s| s.iters == 8192)
            .map(|s| s.per_iter_ns())
            .fold(0.0, f64::max);
        assert!(
            a.per_iter.ci95_ns[0] >= a.per_iter.min_ns,
            "{:?}",
            a.per_iter
        );
        assert!(a.per_iter.ci95_ns[1] <= max, "{:?} {max}", a.per_iter);
    }

    #[test]
    fn outliers_are_reported_only_beyond_the_machine_noise_or_when_they_move_the_median() {
        // One main sample in 16 (6 %) 50 % slower.
        let spiky = |i: usize| {
            4.0 * wiggle(i)
                * if i % 160 < 10 && i % 10 != 3 {
                    1.5
                } else {
                    1.0
                }
        };
        let a = analyze(&synth(8192, 20.0, spiky), &ctx());
        let share = a.outliers.far as f64 / a.steady_samples as f64;
        assert!(share > OUTLIER_FRACTION, "{share}");
        assert_flags(&a, Code::Outliers, true);
        // A machine that shows 5 % far outliers on its own reference kernel: 6 % is its noise,
        // and the median (robust) is not moved beyond its interval.
        let mut noisy = ctx();
        noisy.noise_far_share = Some(0.05);
        let a = analyze(&synth(8192, 20.0, spiky), &noisy);
        assert_flags(&a, Code::Outliers, false);
        // A handful of far outliers (0.4 %) on a quiet machine: counted, not reported.
        let rare = |i: usize| 4.0 * wiggle(i) * if i.is_multiple_of(250) { 3.0 } else { 1.0 };
        let a = analyze(&synth(8192, 20.0, rare), &ctx());
        assert!(a.outliers.far > 0 && !codes(&a).contains(&Code::Outliers));
    }

    #[test]
    fn a_body_measurably_slower_than_the_empty_loop_is_not_optimized_away() {
        // Empty loop 0.33 ns; a body at 0.35 ns (a load and a multiply hidden in the loop's
        // cycle: less than a quarter cycle more, but 6 % more, far beyond the interval).
        let a = steady(65536, 0.35);
        assert_flags(&a, Code::OptimizedAway, false);
        // Within 1 % of the empty loop: removed.
        let a = steady(65536, 0.332);
        assert_flags(&a, Code::OptimizedAway, true);
    }

    #[test]
    fn samples_shortened_by_a_faster_core_are_not_timer_limited() {
        // The floor is 1000 × 10 ns = 10 µs; samples of 7 µs (calibrated at 12 µs in a slow
        // state, then 1.7× faster) keep the timer's share at 0.14 %.
        let a = steady(2000, 3.5);
        assert_flags(&a, Code::TimerLimited, false);
    }

    #[test]
    fn empty_loop_cost_is_optimized_away() {
        let a = steady(65536, 0.33);
        assert_flags(&a, Code::OptimizedAway, true);
    }

    #[test]
    fn an_instruction_count_clears_or_confirms_what_time_could_not_tell() {
        let flagged = steady(65536, 0.33);
        // Three instructions more than the empty loop: work that fits in the loop's cycle.
        let mut a = flagged.clone();
        let work = InstructionsCheck {
            instructions_per_iter: 5.0,
            empty_instructions_per_iter: 2.0,
        };
        weigh_instructions(&mut a, &work);
        assert!(!work.removed() && !codes(&a).contains(&Code::OptimizedAway));
        assert_eq!(a.diagnostics.len() + 1, flagged.diagnostics.len());
        // As many as the empty loop: removed, and the message says how it is known.
        let mut a = flagged.clone();
        let none = InstructionsCheck {
            instructions_per_iter: 2.2,
            empty_instructions_per_iter: 2.0,
        };
        weigh_instructions(&mut a, &none);
        assert!(none.removed());
        let msg = message(&a, Code::OptimizedAway);
        assert!(msg.contains("2.20 instructions"), "{msg}");
        // Nothing flagged: nothing to weigh.
        let clean = steady(8192, 4.0);
        let mut b = clean.clone();
        weigh_instructions(&mut b, &none);
        assert_eq!(codes(&b), codes(&clean));
    }

    #[test]
    fn sub_quarter_cycle_is_optimized_away_without_empty_reference() {
        let mut c = ctx();
        c.empty_iter_ns = None;
        let a = analyze(&synth(65536, 20.0, |i| 0.05 * wiggle(i)), &c);
        assert_flags(&a, Code::OptimizedAway, true);
    }

    #[test]
    fn constant_time_independent_of_n_is_flagged() {
        // Every sample costs 50 µs whatever N: the slope is zero.
        let mut m = synth(8192, 0.0, |_| 0.0);
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            s.ns = 50_000 + (i % 7) as u64;
        }
        let mut c = ctx();
        c.empty_iter_ns = None;
        let a = analyze(&m, &c);
        assert!(codes(&a).contains(&Code::OptimizedAway) || codes(&a).contains(&Code::Nonlinear));
        assert!(a.fit.unwrap().slope.abs() < 0.01);
    }

    #[test]
    fn big_intercept_is_nonlinear() {
        // 20 µs of setup per sample on top of 4 ns × N.
        let a = analyze(&synth(8192, 20_000.0, |i| 4.0 * wiggle(i)), &ctx());
        assert_flags(&a, Code::Nonlinear, true);
    }

    #[test]
    fn debug_build_and_noise_are_reported() {
        let mut c = ctx();
        c.debug_build = true;
        let a = analyze(
            &synth(8192, 20.0, |i| {
                4.0 * (1.0 + 0.2 * ((i * 2654435761) % 1000) as f64 / 1000.0)
            }),
            &c,
        );
        let k = codes(&a);
        assert!(k.contains(&Code::DebugBuild));
        // ±10 % noise over 1400 samples still gives a sub-1 % interval: no `unstable`.
        assert!(!k.contains(&Code::Unstable));
    }

    #[test]
    fn periodic_far_outliers_report_their_period() {
        let mut m = synth(8192, 20.0, |i| 4.0 * wiggle(i));
        // Every 25th sample is 5× slower: a regular interruption.
        let mut count = 0;
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            if i % 25 == 0 && s.iters == 8192 {
                s.ns *= 5;
                count += 1;
            }
        }
        let a = analyze(&m, &ctx());
        assert!(a.outliers.far >= count - 1);
        assert!(a.outliers.period_ns.is_some());
        assert_flags(&a, Code::Outliers, true);
        assert!(a.worst_sigma > 100.0);
    }

    #[test]
    fn short_samples_are_timer_limited() {
        let a = steady(16, 4.0);
        assert_flags(&a, Code::TimerLimited, true);
    }

    /// Adds counter columns: `f(i, iters)` gives sample i's deltas as (event, value) pairs.
    fn with_counters(
        mut m: Measurement,
        f: impl Fn(usize, u64) -> Vec<(&'static str, u64)>,
    ) -> Measurement {
        use crate::samples::CounterColumn;
        let mut cols: Vec<CounterColumn> = Vec::new();
        for (i, s) in m.samples.samples.iter().enumerate() {
            for (e, v) in f(i, s.iters) {
                match cols.iter_mut().find(|c| c.event == e) {
                    Some(c) => c.values.push(Some(v)),
                    None => cols.push(CounterColumn {
                        event: e.into(),
                        values: vec![Some(v)],
                        scaled: vec![],
                    }),
                }
            }
        }
        m.samples.counters = cols;
        m
    }

    #[test]
    fn interrupted_samples_are_counted_and_excluded() {
        // Every 50th sample is interrupted and 3× slower: 2 % of the samples.
        let mut m = synth(8192, 20.0, |i| 4.0 * wiggle(i));
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            if i % 50 == 7 {
                s.ns *= 3;
            }
        }
        let m = with_counters(m, |i, _| {
            vec![
                ("context-switches", (i % 50 == 7) as u64),
                ("cpu-migrations", 0),
                ("task-clock", 500),
            ]
        });
        let a = analyze(&m, &ctx());
        let i = a.interrupted.unwrap();
        assert!(i.excluded);
        assert_eq!(i.of, a.steady_samples + i.samples);
        // 40 of the 1400 samples at the main count (index 7 mod 10 is a main sample).
        assert_eq!((i.samples, i.of), (40, 1400));
        assert!((i.share - 40.0 / 1400.0).abs() < 1e-12, "{i:?}");
        assert!(i.median_with_ns >= i.median_without_ns);
        // Excluded, 2.9 % of the samples, the median unmoved beyond its interval: no word.
        assert_flags(&a, Code::Interrupted, false);
        // The estimate is the clean one; no interrupted sample is left in it.
        assert!(a.per_iter.median_ns < 4.1);
        assert_eq!(a.interrupted_samples.iter().filter(|&&b| b).count(), 40);

        let mut keep = ctx();
        keep.keep_interrupted = true;
        let k = analyze(&m, &keep);
        assert!(!k.interrupted.unwrap().excluded);
        assert_eq!(k.steady_samples, i.of);
        assert!(message(&k, Code::Interrupted).contains("--keep-interrupted"));
    }

    #[test]
    fn many_interrupted_samples_are_reported_even_when_excluded() {
        // One sample in eight (12.5 %) interrupted and 3× slower.
        let mut m = synth(8192, 20.0, |i| 4.0 * wiggle(i));
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            if i % 8 == 7 {
                s.ns *= 3;
            }
        }
        let m = with_counters(m, |i, _| vec![("context-switches", (i % 8 == 7) as u64)]);
        let a = analyze(&m, &ctx());
        assert!(a.interrupted.unwrap().excluded);
        assert!(a.interrupted.unwrap().share > INTERRUPTED_MANY);
        assert_flags(&a, Code::Interrupted, true);
    }

    #[test]
    fn a_rare_interruption_is_excluded_without_a_diagnostic() {
        let m = with_counters(synth(8192, 20.0, |i| 4.0 * wiggle(i)), |i, _| {
            vec![("context-switches", (i == 500) as u64)]
        });
        let a = analyze(&m, &ctx());
        assert_eq!(a.interrupted.unwrap().samples, 1);
        assert!(a.interrupted.unwrap().excluded);
        assert_flags(&a, Code::Interrupted, false);
    }

    #[test]
    fn counter_figures_subtract_the_baseline_and_derive_ratios() {
        // 3 cycles, 4 instructions and 1.2 ns of task-clock per iteration, plus what the
        // reads add (baseline: 100 cycles, 400 ns).
        let m = with_counters(synth(8192, 20.0, |i| 1.2 * wiggle(i)), |i, n| {
            vec![
                ("cycles", 3 * n + 100),
                ("instructions", 4 * n + 50 + (i % 3) as u64),
                ("task-clock", (1.2 * n as f64) as u64 + 400),
                ("page-faults", 0),
            ]
        });
        let mut c = ctx();
        c.counter_baseline = [
            ("cycles", 100.0),
            ("instructions", 50.0),
            ("task-clock", 400.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let a = analyze(&m, &c);
        let f = &a.counters;
        assert!((f["cycles_per_iter"] - 3.0).abs() < 1e-9, "{f:?}");
        assert!((f["instructions_per_iter"] - 4.0).abs() < 1e-3);
        assert!(f["instructions_per_iter_ci95_lo"] <= f["instructions_per_iter"]);
        assert!(f["instructions_per_iter_ci95_hi"] >= f["instructions_per_iter"]);
        assert!((f["ipc"] - 4.0 / 3.0).abs() < 1e-3);
        assert!((f["ghz"] - 2.5).abs() < 0.01, "{}", f["ghz"]);
        assert_eq!(f["page-faults_per_iter"], 0.0);
        assert!(!f.contains_key("branch_miss_rate"));
        assert!(a.interrupted.is_none());
        // The counted cycle time (0.4 ns) replaces the add-chain estimate.
        assert!((a.cycle_ns.unwrap() - 0.4).abs() < 0.01);
    }

    #[test]
    fn optimized_away_uses_the_counted_cycle_time() {
        // 0.2 ns per iteration: a quarter cycle of the context's 0.33 ns estimate would not
        // flag it against a 0.1 ns empty loop, but the counted cycles say 1 cycle = 1 ns.
        let m = with_counters(synth(65536, 20.0, |i| 0.2 * wiggle(i)), |_, n| {
            vec![("cycles", n / 5), ("task-clock", n / 5)]
        });
        let mut c = ctx();
        c.empty_iter_ns = Some(0.01);
        let a = analyze(&m, &c);
        assert!((a.cycle_ns.unwrap() - 1.0).abs() < 0.01);
        let msg = message(&a, Code::OptimizedAway);
        assert!(msg.contains("counted cycles"), "{msg}");
        assert!(
            !codes(&analyze(&synth(65536, 20.0, |i| 0.2 * wiggle(i)), &c))
                .contains(&Code::OptimizedAway)
        );
    }

    #[test]
    fn absent_counter_values_are_skipped_not_zero() {
        let mut m = with_counters(synth(8192, 20.0, |i| 4.0 * wiggle(i)), |_, n| {
            vec![("cycles", 12 * n)]
        });
        for (i, v) in m.samples.counters[0].values.iter_mut().enumerate() {
            if i % 2 == 0 {
                *v = None;
            }
        }
        let a = analyze(&m, &ctx());
        assert_eq!(a.counters["cycles_per_iter"], 12.0);
    }

    #[test]
    fn the_note_about_unavailable_counters_is_a_diagnostic() {
        let mut c = ctx();
        c.counters_note =
            Some("counters not read (absent from the results, not zero): cycles: no PMU".into());
        c.counters_unavailable = vec!["cycles".into()];
        let a = analyze(&synth(8192, 20.0, |i| 4.0 * wiggle(i)), &c);
        assert_eq!(codes(&a), vec![Code::CountersUnavailable]);
        assert!(message(&a, Code::CountersUnavailable).starts_with("not read: cycles. "));
    }
}
