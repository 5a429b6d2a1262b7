//! A cold-cache benchmark's result (`Suite::bench_cold`, `vernier run --cache cold`): each of
//! its samples is one iteration after an eviction, so the checks that rest on several
//! iterations per sample do not apply to it.

use crate::diagnostic::Code;
use crate::result::BenchmarkResult;

/// Take off a cold benchmark's result the diagnostics that do not apply to it: the linearity
/// fit and the optimized-away check rest on samples of several iterations (the linearity
/// ladder), of which only the first is cold; `timer-limited` is the price of one iteration per
/// sample, which the cold run states (with the timer's cost) instead. The result is marked
/// `cache_cold`, so that re-deriving it from its samples does the same.
pub fn drop_warm_checks(r: &mut BenchmarkResult) {
    r.cache_cold = true;
    r.diagnostics.retain(|d| {
        !matches!(
            d.code,
            Code::Nonlinear | Code::OptimizedAway | Code::TimerLimited
        )
    });
}
