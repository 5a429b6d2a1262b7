//! The spread between a benchmark's processes (each with its own memory layout) and rounds:
//! their medians, and whether they disagree beyond their own intervals (`layout-sensitive`).

use super::ProcessFigure;
use crate::samples::Sample;
use crate::stats;
use std::collections::BTreeMap;

/// Spread between processes' medians.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// (hi − lo) / lo.
    pub(super) spread: f64,
    /// Largest relative half-width of a process's own interval.
    pub(super) within: f64,
    /// Half-width of the t-interval on the processes' medians.
    pub(super) half_width_ns: f64,
    /// The median of the processes' medians: each layout one draw, whatever its number of
    /// samples.
    pub(super) median_of_medians_ns: f64,
    /// Processes (or rounds) with enough samples to count as draws.
    pub(super) draws: usize,
    pub(super) significant: bool,
}

/// Between-process spread below this (relative) is never reported.
pub const LAYOUT_MIN_SPREAD: f64 = 0.005;

pub(super) fn layout_spread(processes: &[ProcessFigure]) -> Option<Layout> {
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
        median_of_medians_ns: stats::median(&meds),
        draws: meds.len(),
        significant: spread > LAYOUT_MIN_SPREAD && spread > 2.0 * within,
    })
}

/// The median and interval of each group of samples' per-iteration times.
pub(super) fn per_group(main: &[&Sample], key: impl Fn(&Sample) -> u32) -> Vec<ProcessFigure> {
    figures_by(main.iter().map(|s| (key(s), s.per_iter_ns())))
}

/// The median and interval of each group's values, from `(group, value)` pairs.
pub(super) fn figures_by(values: impl Iterator<Item = (u32, f64)>) -> Vec<ProcessFigure> {
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (k, v) in values {
        by.entry(k).or_default().push(v);
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
