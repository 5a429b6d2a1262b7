pub mod bench_crate;
pub mod cli;
pub mod conformance;
pub mod cpp;
pub mod history;
pub mod pgserver;
pub mod rust_examples;
pub mod site;
pub mod webdriver;

use vernier::result::BenchmarkResult;

/// Two benchmarks' medians of one run, in one unit: cycles of the core when both have them
/// (each sample's time over the core's cycle at that moment: a clock that moved between the
/// two measurements moves their times, not their cycles), ns otherwise; and the unit's name.
pub fn medians_in_one_unit(a: &BenchmarkResult, b: &BenchmarkResult) -> (f64, f64, &'static str) {
    let cycles = |r: &BenchmarkResult| r.speed.as_ref()?.cycles_per_iter;
    match (cycles(a), cycles(b)) {
        (Some(x), Some(y)) => (x, y, "cycles"),
        _ => (a.per_iter.median_ns, b.per_iter.median_ns, "ns"),
    }
}
