//! The diagnostics, one rule each, applied in one listed order ([`RULES`]): the order a reader
//! should act on them. A rule reads the analysis's [`Figures`] and the run's [`Context`] and
//! gives at most one [`Finding`]; a new diagnostic is a new rule and a line in the list.

use super::removed::optimized_away;
use super::{speed, Context, Figures, Interrupted, Speed};
use super::{
    INTERRUPTED_FRACTION, INTERRUPTED_MANY, NONLINEAR_R2, NONLINEAR_REL, NONLINEAR_SIGMAS,
    OUTLIER_EXCESS, OUTLIER_FRACTION, OUTLIER_NOISE_FACTOR, TIMER_LIMITED_SLACK, UNSTABLE_REL_CI,
};
use crate::diagnostic::{Estimates, Finding, Interruption, Shared, Slowed, SpeedReference};
use crate::measure::StopReason;
use crate::stats::steady::WarmupClass;

/// A diagnostic's rule.
pub(super) type Rule = fn(&Figures, &Context) -> Option<Finding>;

/// Every rule, in the order their findings are reported.
pub(super) const RULES: &[Rule] = &[
    debug_build,
    removed,
    core_slowed_rule,
    core_shared_rule,
    nonlinear,
    layout_sensitive,
    no_steady_state,
    unstable,
    timer_limited,
    outliers,
    interrupted,
    counters_unavailable,
    oversubscribed,
];

/// `oversubscribed`: a threaded benchmark with more threads than CPUs (`threads`).
fn oversubscribed(f: &Figures, _: &Context) -> Option<Finding> {
    f.threads.as_ref().and_then(super::threads::oversubscribed)
}

fn debug_build(_: &Figures, ctx: &Context) -> Option<Finding> {
    ctx.debug_build.then_some(Finding::DebugBuild)
}

/// `optimized-away`: the evidence is weighed in `removed`.
fn removed(f: &Figures, ctx: &Context) -> Option<Finding> {
    optimized_away(f, ctx)
}

/// In cycles, a benchmark whose headline rests on its fast state's samples alone (both states
/// have a figure) keeps its figure whatever the other state did: the machine's condition is
/// said once under the table, not on its row.
fn core_slowed_rule(f: &Figures, _: &Context) -> Option<Finding> {
    let sp = f.speed.as_ref()?;
    if f.unit == super::Unit::Cycles && sp.split {
        return None;
    }
    core_slowed(sp)
}

/// `core-shared`: the benchmark's slow state is a shared core's and it felt it. As for
/// `core-slowed`, in cycles a headline that rests on the unshared samples alone keeps its
/// figure, and the machine's condition is said once under the table.
fn core_shared_rule(f: &Figures, _: &Context) -> Option<Finding> {
    let sp = f.speed.as_ref()?;
    if !sp.core_shared() || (f.unit == super::Unit::Cycles && sp.split) {
        return None;
    }
    let sharing = sp.sharing?;
    let slow = sp.slow?;
    Some(Finding::CoreShared(Shared {
        core_share: sharing.core_share,
        shared_share: sharing.shared_share,
        slowdown: sharing.felt.unwrap_or(slow.median_ns / sp.fast.median_ns),
        wholly: !sp.split,
        unshared_median_ns: sp.split.then_some(sp.fast.median_ns),
        shared_median_ns: sp.split.then_some(slow.median_ns),
    }))
}

/// `nonlinear`: T = a + b·N fits poorly, or its slope disagrees with the median beyond the
/// slope's standard errors and the run's interval.
/// Judged in the headline unit (a clock that moved across the ladder bends the fit in ns, not
/// in cycles); the figures given are in ns.
fn nonlinear(f: &Figures, _: &Context) -> Option<Finding> {
    let h = &f.head;
    let head_fit = h.fit?;
    let median = h.per_iter.median_ns;
    let disagree = (head_fit.slope - median).abs();
    let tol = NONLINEAR_SIGMAS * head_fit.slope_se + h.half_width();
    let poor = head_fit.r2 < NONLINEAR_R2 || (disagree > NONLINEAR_REL * median && disagree > tol);
    let fit = f.fit.unwrap_or(head_fit);
    poor.then_some(Finding::Nonlinear {
        intercept_ns: fit.intercept,
        slope_ns: fit.slope,
        r2: fit.r2,
        median_ns: f.per_iter.median_ns,
    })
}

/// The processes disagree in the headline unit (a clock that wandered between processes moves
/// their times in ns and leaves their cycles alone); the figures given are in ns.
fn layout_sensitive(f: &Figures, _: &Context) -> Option<Finding> {
    if !f.head.layout_significant {
        return None;
    }
    let l = f.layout?;
    Some(Finding::LayoutSensitive {
        processes: f.processes.len(),
        spread: l.spread,
        lo_ns: l.lo,
        hi_ns: l.hi,
        within: l.within,
    })
}

/// Judged in the headline unit: a series that drifts in ns as the clock moves is steady in
/// cycles.
fn no_steady_state(f: &Figures, _: &Context) -> Option<Finding> {
    (f.head.warmup == WarmupClass::NoSteadyState)
        .then_some(Finding::NoSteadyState { seconds: f.seconds })
}

/// `unstable`, judged on the run's own interval in the headline unit: the clock's range over
/// other runs is the machine's, said in `speed`, not this run's noise; and in cycles a clock
/// that moved during the run moved the figure in ns while the cycles held still, so the run
/// measured precisely.
fn unstable(f: &Figures, _: &Context) -> Option<Finding> {
    let rel_ci = f.head.half_width() / f.head.per_iter.median_ns;
    (rel_ci > UNSTABLE_REL_CI && f.stop != StopReason::Failed).then_some(Finding::Unstable {
        rel_ci,
        limit_rel_ci: UNSTABLE_REL_CI,
        seconds: f.seconds,
        steady_samples: f.per.len(),
    })
}

fn timer_limited(f: &Figures, ctx: &Context) -> Option<Finding> {
    let floor = ctx.timer_factor * ctx.timer.overhead_ns.max(ctx.timer.resolution_ns);
    let median_sample = f.per_iter.median_ns * f.iters_per_sample.max(1) as f64;
    (median_sample < floor * TIMER_LIMITED_SLACK).then_some(Finding::TimerLimited {
        sample_ns: median_sample,
        timer_factor: ctx.timer_factor,
        overhead_ns: ctx.timer.overhead_ns,
        resolution_ns: ctx.timer.resolution_ns,
    })
}

/// `outliers`: far outliers that move the median beyond its interval and by more than
/// [`OUTLIER_EXCESS`], or more of them than
/// [`OUTLIER_FRACTION`] and than the machine itself shows, taking more than
/// [`OUTLIER_EXCESS`] of the time beyond the median, in the quietest round or process.
fn outliers(f: &Figures, ctx: &Context) -> Option<Finding> {
    let o = &f.head.outliers;
    let far_share = o
        .quietest_far_share
        .unwrap_or(o.counts.far as f64 / f.head.samples.max(1) as f64);
    let sample_ns = f.per_iter.median_ns * f.iters_per_sample.max(1) as f64;
    let beyond_machine = far_share > OUTLIER_FRACTION
        && far_share > OUTLIER_NOISE_FACTOR * super::outliers::machine_far_share(ctx, sample_ns)
        && o.excess_share > OUTLIER_EXCESS;
    // Leaving out a few percent of the samples moves the median by a few percent of its
    // quantiles, beyond a tight interval whatever they are: a shift counts from 1 % up.
    let moves_median = o.shift_ns
        > f.head
            .half_width()
            .max(OUTLIER_EXCESS * f.head.per_iter.median_ns);
    (o.counts.far > 0 && (beyond_machine || moves_median)).then_some(Finding::Outliers {
        far: o.counts.far,
        of: f.per.len(),
        period_ns: o.counts.period_ns,
    })
}

/// `interrupted`: excluded interrupted samples leave the estimate as it would be without
/// them, so a word is only due when they are many, or when they move the median beyond its
/// interval.
fn interrupted(f: &Figures, ctx: &Context) -> Option<Finding> {
    let matters = |i: &Interrupted| {
        let shift = (i.median_with_ns - i.median_without_ns).abs();
        i.share > INTERRUPTED_FRACTION
            && (!i.excluded || i.share > INTERRUPTED_MANY || shift > f.half_width())
    };
    let i = f.interrupted.filter(matters)?;
    Some(Finding::Interrupted(Interruption::Samples {
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
        cpu_wait_share: i.cpu_wait_share,
    }))
}

fn counters_unavailable(_: &Figures, ctx: &Context) -> Option<Finding> {
    let note = ctx.counters_note.as_ref()?;
    Some(Finding::CountersUnavailable {
        events: ctx.counters_unavailable.clone(),
        note: note.clone(),
    })
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
