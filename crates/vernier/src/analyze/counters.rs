//! The counters' part of an analysis: each sample's counts less the reads' own baseline, the
//! samples a context switch or a migration interrupted, and the per-iteration figures with
//! their intervals and derived ratios (ipc, miss rates, GHz).

use super::Context;
use crate::counters::Event;
use crate::measure::Measurement;
use crate::stats;
use std::collections::BTreeMap;

/// The counter's delta in sample `i` minus the reads' baseline, if counted.
pub(super) fn counter_value(m: &Measurement, ctx: &Context, event: &str, i: usize) -> Option<f64> {
    let c = m.samples.counter(event)?;
    let v = (*c.values.get(i)?)? as f64;
    let base = ctx.counter_baseline.get(event).copied().unwrap_or(0.0);
    Some((v - base).max(0.0))
}

/// Per sample: a context switch or a CPU migration happened in it (empty when neither event
/// was read). Unknown values count as not interrupted.
pub(super) fn interrupted_flags(m: &Measurement, ctx: &Context) -> Vec<bool> {
    let cs = Event::ContextSwitches.name();
    let mig = Event::CpuMigrations.name();
    if m.samples.counter(cs).is_none() && m.samples.counter(mig).is_none() {
        return Vec::new();
    }
    (0..m.samples.len())
        .map(|i| {
            crate::counters::interrupted_by(
                counter_value(m, ctx, cs, i),
                counter_value(m, ctx, mig, i),
            )
            .unwrap_or(false)
        })
        .collect()
}

/// Ratios derived from two counters: (key, numerator, denominator).
pub(super) const DERIVED: [(&str, &str, &str); 4] = [
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
pub(super) fn counter_figures(
    m: &Measurement,
    ctx: &Context,
    idx: &[usize],
) -> BTreeMap<String, f64> {
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
