//! An unpaired comparison: one benchmark of two result files (`vernier compare OLD.json
//! NEW.json`), each side's figure derived again from its raw samples and the two intervals
//! combined (`stats::compare::from_intervals`). The sides were not interleaved, so whatever
//! changed on the machine between the two runs is in the ratio.

use crate::analyze::pairs::{detectable_from_ci, Comparison};
use crate::analyze::Unit;
use crate::result::{BenchmarkResult, ResultFile, Status};
use crate::stats;

/// A result's per-iteration median and its 95 % interval, re-derived by the analysis from the
/// raw samples (`None` when the file holds none). The interval covers the spread between the
/// run's processes and rounds: that, not the pooled samples (which are not independent), is
/// what an offline comparison combines.
pub fn figure(file: &ResultFile, b: &BenchmarkResult) -> Option<(f64, (f64, f64))> {
    let r = again(file, b)?;
    let [lo, hi] = r.per_iter.ci95_ns;
    Some((r.per_iter.median_ns, (lo, hi)))
}

/// The run's own figure again: the same step as every path, without the earlier runs (each
/// side is one run).
fn again(file: &ResultFile, b: &BenchmarkResult) -> Option<BenchmarkResult> {
    crate::pipeline::again(b, &file.analysis_context(), None, &file.benchmarks)
}

/// A re-derived result's median and interval in cycles, when it was judged in cycles.
fn in_cycles(r: &BenchmarkResult) -> Option<(f64, (f64, f64))> {
    let c = crate::result::earlier_runs::headline_cycles(r)?;
    let [lo, hi] = r.speed.as_ref()?.cycles_ci95?;
    (lo.is_finite() && hi.is_finite()).then_some((c, (lo, hi)))
}

/// One benchmark of two result files compared from each file's own figure: the ratio NEW/OLD
/// and its interval (the verdict is set by `ComparisonFile::finalize`; `memory`, by the
/// caller). When both sides were judged in cycles the ratio is of their cycles: two runs at
/// different times may find the core at different clocks, which moves their times and not
/// the cycles of code bound by the core. The error says why it cannot be compared (a side
/// failed, or holds no samples).
pub fn compare(
    (of, o): (&ResultFile, &BenchmarkResult),
    (nf, n): (&ResultFile, &BenchmarkResult),
) -> Result<Comparison, String> {
    for (side, b) in [("OLD", o), ("NEW", n)] {
        if b.status == Status::Failed {
            return Err(format!(
                "{side}: the benchmark failed in its result file: {}",
                b.error.as_deref().unwrap_or("no reason recorded")
            ));
        }
    }
    let (Some(ro), Some(rn)) = (again(of, o), again(nf, n)) else {
        return Err("a result file holds no samples for this benchmark".into());
    };
    let ns = |r: &BenchmarkResult| {
        let [lo, hi] = r.per_iter.ci95_ns;
        (r.per_iter.median_ns, (lo, hi))
    };
    let (unit, (om, oci), (nm, nci)) = match (in_cycles(&ro), in_cycles(&rn)) {
        (Some(a), Some(b)) => (Unit::Cycles, a, b),
        _ => (Unit::Ns, ns(&ro), ns(&rn)),
    };
    let e = stats::compare::from_intervals(om, oci, nm, nci)
        .map_err(|e| format!("the result files' figures cannot be compared: {e}"))?;
    Ok(Comparison {
        unit: Some(unit),
        ..comparison(
            &o.name,
            &e,
            (ro.per_iter.median_ns, rn.per_iter.median_ns),
            o.total_s + n.total_s,
            [o.iters_per_sample, n.iters_per_sample],
        )
    })
}

/// An offline (unpaired) comparison from two figures combined by
/// `stats::compare::from_intervals`; its verdict is set by `ComparisonFile::finalize`.
pub fn comparison(
    name: &str,
    e: &stats::compare::RatioEstimate,
    (old_median_ns, new_median_ns): (f64, f64),
    seconds: f64,
    iters_per_sample: [u64; 2],
) -> Comparison {
    Comparison {
        name: name.to_string(),
        ratio: e.ratio,
        ci95: [e.ci95.0, e.ci95.1],
        p_value: e.p_value,
        verdict: stats::compare::Verdict::NoChange,
        seconds,
        p_value_raw: e.p_value,
        sign_p_value: None,
        pairs: 1,
        warmup_pairs: 0,
        warmup: None,
        iters_per_sample,
        old_median_ns,
        new_median_ns,
        stop: "offline".into(),
        rewarm: None,
        pair_samples: None,
        smallest_detectable: detectable_from_ci(e.ci95.0, e.ci95.1),
        ..Comparison::default()
    }
}
