//! `optimized-away`: whether the body was removed, from all the evidence — its time against
//! the empty loop's and a quarter of a cycle, its slope against the iteration count, and, when
//! counted, its instructions against the empty loop's (`weigh_instructions`).

use super::judged::Figures;
use super::{
    Analysis, Context, Unit, MEASURABLE_OVER_EMPTY, OPTIMIZED_AWAY_CYCLES, OPTIMIZED_AWAY_NS,
};
use crate::diagnostic::{Code, Finding, Removed};

/// `optimized-away`: the median under a quarter of a cycle, no more than the empty loop's, or a
/// sample time that does not grow with the iteration count.
pub(super) fn optimized_away(f: &Figures, ctx: &Context) -> Option<Finding> {
    let (p, cycle) = (&f.per_iter, f.cycle);
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
        if like_empty_loop(f, ctx, empty, quarter) {
            return removed(Removed::LikeEmptyLoop {
                median_ns: p.median_ns,
                empty_ns: empty,
            });
        }
    }
    match f.fit {
        Some(fit) if fit.slope < quarter && fit.slope < 2.0 * fit.slope_se.max(1e-12) => {
            removed(Removed::NoSlope {
                slope_ns: fit.slope,
            })
        }
        _ => None,
    }
}

/// The body's time cannot be told from the bar's (the empty loop, or an executor's empty
/// future): less than a quarter of a cycle above it and not measurably so. Judged in cycles
/// when the benchmark is and the bar's cycles are known (each taken against the core's cycle
/// at the time it was measured: a clock that moved between the two moves both times, not
/// their cycles); in ns otherwise.
fn like_empty_loop(f: &Figures, ctx: &Context, empty_ns: f64, quarter_ns: f64) -> bool {
    let (p, empty, quarter) = match (f.unit, ctx.empty_iter_cycles) {
        (Unit::Cycles, Some(empty_cycles)) => {
            (&f.head.per_iter, empty_cycles, OPTIMIZED_AWAY_CYCLES)
        }
        _ => (&f.per_iter, empty_ns, quarter_ns),
    };
    let net = p.median_ns - empty;
    let half_width = (p.run_ci95_ns[1] - p.run_ci95_ns[0]) / 2.0;
    // Work shows in every sample, the fastest too: a removed body whose median a slowed
    // core (a busy sibling thread) lifted above the empty loop's still has samples at it.
    let fastest_net = p.min_ns - empty;
    let measurable = net > MEASURABLE_OVER_EMPTY * empty
        && net > 3.0 * half_width
        && (fastest_net >= MEASURABLE_OVER_EMPTY * empty || fastest_net.is_nan());
    net < quarter && !measurable
}

/// Whether a body's time cannot be told from no work when only medians per iteration are known
/// (a live comparison's sides, which keep no samples of their own): under `quarter_ns` (a quarter
/// of a cycle), or within it of its bar (the harness's empty loop, when measured) and not above
/// the bar by [`MEASURABLE_OVER_EMPTY`] of it. The first half of `optimized_away`'s rule; the
/// interval and the fastest sample that rule also weighs are not there to weigh.
pub fn removed_by_medians(median_ns: f64, bar_ns: Option<f64>, quarter_ns: f64) -> bool {
    if !median_ns.is_finite() {
        return false;
    }
    let like_bar = bar_ns.filter(|b| b.is_finite()).is_some_and(|bar| {
        let net = median_ns - bar;
        net < quarter_ns && net <= MEASURABLE_OVER_EMPTY * bar
    });
    median_ns < quarter_ns || like_bar
}

/// Instructions per iteration of a benchmark and of the harness's empty loop, counted under
/// callgrind (`vernier run` counts them for a benchmark whose time cannot be told from the
/// empty loop's: a body may be removed, or fit in the loop's own cycle, and only the count
/// tells which).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InstructionsCheck {
    pub instructions_per_iter: f64,
    pub empty_instructions_per_iter: f64,
    /// Of `instructions_per_iter`, the moves into a register of a value the loop already holds
    /// (another register, an immediate, a zeroing idiom), read from the disassembly of the
    /// benchmark's loop of the iterations (`vernier asm`): a constant folded before the loop
    /// and handed to the barrier on every iteration costs one such move, and it is not work.
    /// Absent when the loop could not be disassembled (no objdump, no TSC clock reads to find
    /// the loop by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves_per_iter: Option<f64>,
}

/// What to do about `optimized-away` (worded in `diagnostic::words`).
pub use crate::diagnostic::words::OPTIMIZED_AWAY_FIX;

/// A body executing fewer than this many instructions per iteration more than the harness's
/// empty loop, its register moves aside, does no work.
pub const OPTIMIZED_AWAY_INSTRUCTIONS: f64 = 0.5;

impl InstructionsCheck {
    /// The instructions per iteration that do something: all of them but the moves of a value
    /// the loop already holds.
    pub fn working_per_iter(&self) -> f64 {
        self.instructions_per_iter - self.moves_per_iter.unwrap_or(0.0)
    }

    /// The body executes no more instructions than the empty loop, moves of a value it already
    /// holds aside: removed (a constant folded by the compiler is such a move).
    pub fn removed(&self) -> bool {
        self.working_per_iter() - self.empty_instructions_per_iter < OPTIMIZED_AWAY_INSTRUCTIONS
    }

    /// The count as the evidence of `optimized-away`, beside the median time when one was
    /// measured.
    pub fn evidence(&self, median_ns: Option<f64>) -> Removed {
        Removed::Instructions {
            median_ns,
            instructions_per_iter: self.instructions_per_iter,
            empty_instructions_per_iter: self.empty_instructions_per_iter,
            moves_per_iter: self.moves_per_iter,
        }
    }
}

/// A body whose time is within this many cycles of the empty loop's is counted too when
/// instructions can be counted, and the count decides. Time alone cannot tell a removed body
/// from a few cycles of work: a removed body's loop can sit in a slower state of the loop's exit
/// branch than the harness's own empty loop (by where its code lies), a cycle or so slower on
/// one host and level with it on another, and a body of one or two additions can run in the
/// loop's shadow. Four cycles is above every such state seen (a folded constant read 0–1.4
/// cycles above the empty loop on AMD and Intel hosts) and keeps the check to small bodies,
/// each costing one callgrind process.
pub const NEAR_EMPTY_CYCLES: f64 = 4.0;

/// Without a cycle estimate, the span [`NEAR_EMPTY_CYCLES`] stands for at a 2.5 GHz clock
/// (a slower clock than most hosts': the span errs on the side of counting).
pub const NEAR_EMPTY_NS: f64 = NEAR_EMPTY_CYCLES * 0.4;

/// How many cycles per iteration the body takes beyond the harness's empty loop (or the empty
/// future, for an async body), in the unit the machine holds still: the body's cycles from its
/// own probes (each sample's time over the core's cycle at that moment) less the bar's cycles
/// taken the same way when it was measured (`empty_iter_cycles`), or else the bar's time over
/// the start-up cycle. Without probes, the median time over the start-up cycle. `None` without
/// a bar or a cycle.
pub fn cycles_over_empty(a: &Analysis, ctx: &Context) -> Option<f64> {
    net_cycles(
        a.speed.and_then(|s| s.cycles_per_iter).map(|c| c.median),
        a.per_iter.median_ns,
        (ctx.empty_iter_ns?, ctx.empty_iter_cycles),
        ctx.cycle_ns?,
    )
}

/// [`cycles_over_empty`] from the figures themselves (a result file's: the body's cycles from
/// its own probes when known, its median, the bar's time and its cycles when they were taken,
/// and the start-up cycle time).
pub fn net_cycles(
    body_cycles: Option<f64>,
    median_ns: f64,
    (bar_ns, bar_cycles): (f64, Option<f64>),
    cycle_ns: f64,
) -> Option<f64> {
    if !(cycle_ns.is_finite() && cycle_ns > 0.0) {
        return None;
    }
    let body = body_cycles.filter(|c| c.is_finite());
    let net = match (body, bar_cycles.filter(|c| c.is_finite())) {
        (Some(body), Some(bar)) => body - bar,
        (body, _) => body.unwrap_or(median_ns / cycle_ns) - bar_ns / cycle_ns,
    };
    net.is_finite().then_some(net)
}

/// Whether the body's time is small enough that only an instruction count can tell whether it
/// works: within [`NEAR_EMPTY_CYCLES`] of the empty loop's (or [`NEAR_EMPTY_NS`] without a cycle
/// estimate). False without an empty loop to compare with.
pub fn near_empty_loop(a: &Analysis, ctx: &Context) -> bool {
    if let Some(net) = cycles_over_empty(a, ctx) {
        return net < NEAR_EMPTY_CYCLES;
    }
    match ctx.empty_iter_ns {
        Some(empty) => {
            let m = a.per_iter.median_ns;
            m.is_finite() && m - empty < NEAR_EMPTY_NS
        }
        None => false,
    }
}

/// Weigh an instruction count against `optimized-away`: a body that executes more
/// instructions than the empty loop was not removed (its work fits in the loop's own cycles,
/// where time cannot see it), so a diagnostic found by time goes; one that does not is
/// flagged, with the count as its evidence (also when time, near the empty loop's, did not
/// flag it).
pub fn weigh_instructions(a: &mut Analysis, check: &InstructionsCheck) {
    let found = a
        .diagnostics
        .iter()
        .position(|d| d.code() == Code::OptimizedAway);
    let evidence = Finding::OptimizedAway(check.evidence(Some(a.per_iter.median_ns)));
    match (found, check.removed()) {
        (Some(i), true) => a.diagnostics[i] = evidence,
        (Some(i), false) => {
            a.diagnostics.remove(i);
        }
        (None, true) => a.diagnostics.insert(0, evidence),
        (None, false) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_alone_tell_a_removed_body_by_its_bar_and_a_quarter_of_a_cycle() {
        // Under a quarter of a cycle: removed, bar or none.
        assert!(removed_by_medians(0.05, None, 0.1));
        // At the bar, or a hair above it: removed; a tenth of a ns above a 0.3 ns bar is
        // measurably more (3 % of it is 0.009 ns) though under the quarter: not removed.
        assert!(removed_by_medians(0.3, Some(0.3), 0.1));
        assert!(removed_by_medians(0.305, Some(0.3), 0.1));
        assert!(!removed_by_medians(0.35, Some(0.3), 0.1));
        // Work: a cycle and more over the bar; no bar and above the quarter: nothing to tell by.
        assert!(!removed_by_medians(2.3, Some(0.3), 0.1));
        assert!(!removed_by_medians(0.3, None, 0.1));
        assert!(!removed_by_medians(f64::NAN, Some(0.3), 0.1));
    }
}
