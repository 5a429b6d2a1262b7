//! The figures of one benchmark's measurement before the diagnostics ([`Figures`], what the
//! rules judge): the headline samples (steady, interrupted ones set apart), their estimates,
//! the interval widened between processes and rounds and over the clock's range, the spread
//! between processes, the cycle time, and the same figures in cycles of the core ([`Head`]).

use super::counters::{counter_figures, interrupted_flags};
use super::ladder::linearity;
use super::outliers::{outlier_figures, OutlierFigures};
use super::process_spread::{self, figures_by, layout_spread, per_group};
use super::speed::{self, Speed};
use super::steady::{
    ns_warmup, parts_agree, past_calibration, steady_in, steady_main, warmup_in_state,
};
use super::{stretch, threads, unit, Context, Interrupted, PerIter, ProcessFigure, Unit, Warmup};
use crate::diagnostic::{Cycle, CycleSource};
use crate::measure::{Measurement, StopReason};
use crate::samples::{Phase, Sample};
use crate::stats::steady::WarmupClass;
use crate::stats::{self, LinearFit};
use std::collections::BTreeMap;

/// Everything the rules judge: the analysis's figures before the diagnostics.
pub(crate) struct Figures {
    /// The headline samples' per-iteration times.
    pub(super) per: Vec<f64>,
    pub(super) per_iter: PerIter,
    pub(super) fit: Option<LinearFit>,
    pub(super) warmup: Warmup,
    pub(super) outliers: OutlierFigures,
    pub(super) processes: Vec<ProcessFigure>,
    /// The spread between processes, judged in cycles of the core as well.
    pub(super) layout: Option<process_spread::Layout>,
    pub(super) counters: BTreeMap<String, f64>,
    pub(super) cycle: Option<Cycle>,
    pub(super) speed: Option<Speed>,
    pub(super) interrupted: Option<Interrupted>,
    pub(super) interrupted_samples: Vec<bool>,
    pub(super) threads: Option<threads::ThreadFigures>,
    /// The measurement's wall time, in seconds, and how it stopped.
    pub(super) seconds: f64,
    pub(super) stop: StopReason,
    pub(super) iters_per_sample: u64,
    /// The unit the judgements are made in, and the figures in it (the same as `per_iter`,
    /// `fit`, `outliers` and `layout` for ns; in cycles of the core otherwise, with `_ns`
    /// fields holding cycles).
    pub(super) unit: Unit,
    pub(super) head: Head,
    /// The slowed stretches left out of the headline.
    pub(super) stretches: Vec<stretch::Stretch>,
}

/// A benchmark's figures in its headline unit: what `unstable`, `outliers`, `nonlinear`,
/// `layout-sensitive` and `no-steady-state` judge.
pub(super) struct Head {
    pub(super) per_iter: PerIter,
    pub(super) fit: Option<LinearFit>,
    pub(super) outliers: OutlierFigures,
    /// The processes disagree beyond their intervals in this unit.
    pub(super) layout_significant: bool,
    /// How the first part's series behaved before its steady state, in this unit.
    pub(super) warmup: WarmupClass,
    pub(super) samples: usize,
}

impl Head {
    /// Half the width of the run's own interval in this unit.
    pub(super) fn half_width(&self) -> f64 {
        (self.per_iter.run_ci95_ns[1] - self.per_iter.run_ci95_ns[0]) / 2.0
    }
}

impl Figures {
    /// Half the width of the run's own interval (what `interrupted` weighs a shift against).
    pub(super) fn half_width(&self) -> f64 {
        (self.per_iter.run_ci95_ns[1] - self.per_iter.run_ci95_ns[0]) / 2.0
    }
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
) -> Option<process_spread::Layout> {
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
pub(super) fn judged_figures(m: &Measurement, ctx: &Context) -> Figures {
    // The unit, from every sample past calibration at the main count; in cycles, the steady
    // state is found again in cycles (a clock that drifted moves the time, not the cycles).
    let cycles = speed::sample_cycles(&m.samples, &ctx.timer);
    let wide = speed::sample_wide(&m.samples, &ctx.timer);
    let threaded = !m.samples.thread_ns.is_empty() || ctx.off_calling_core;
    let unit = unit::choose(&m.samples.samples, &past_calibration(m), &cycles, threaded);
    let in_unit = |i: usize| match unit {
        Unit::Cycles => m.samples.samples[i].per_iter_ns() / cycles[i],
        _ => m.samples.samples[i].per_iter_ns(),
    };
    // A stretch of a part slowed in the headline unit while the run held its level: left out,
    // and named.
    let (stretched, stretches) = stretch::find(m, unit, &in_unit);
    let in_cycles_steady = (unit == Unit::Cycles).then(|| steady_in(m, &in_unit, &stretched));
    let (mut main_idx, interrupted, flags) =
        headline_samples(m, ctx, in_cycles_steady.as_ref().map(|s| s.0.as_slice()));
    main_idx.retain(|i| stretched.binary_search(i).is_err());
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
        warmup: ns_warmup(m, &before_split, &main_idx, &stretched),
        samples: per.len(),
    };
    let mut speed = speed;
    if let (Some((_, parts)), false) = (&in_cycles_steady, per.is_empty()) {
        let class = warmup_in_state(parts, &before_split, &main_idx);
        head = in_cycles(m, ctx, &main, &main_idx, &cycles, &skip, class);
        // Parts that agree to a tenth of a percent did not drift, whatever MSER read within
        // one of them.
        if head.warmup == WarmupClass::NoSteadyState && parts_agree(m, &main_idx, &in_unit) {
            head.warmup = WarmupClass::Flat;
        }
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
        stretches,
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
