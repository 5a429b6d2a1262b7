//! The unit a benchmark is judged in: cycles of the core, or nanoseconds, decided from its own
//! samples. A machine whose clock moves (most cloud and CI machines) moves every time of code
//! bound by the core with it, within a run and between runs, while the same code's cycles hold
//! still; code bound by memory keeps its time and moves in cycles. Each steady sample carries
//! the core's effective cycle time around it (the core-speed probe, `speed::sample_cycles`), so
//! both series are at hand: the benchmark is judged in the one that scatters less, between
//! its samples and between its processes and rounds. Where the two scatter alike (the clock
//! held still during the run) cycles are kept: they are what another run at another clock
//! will read again for code bound by the core, and equal to the time up to a constant within
//! this run.

use crate::samples::Sample;
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The unit a benchmark's judgements were made in (`headline_unit` in the result file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Cycles of the core at each sample's moment: code bound by the core.
    Cycles,
    /// Nanoseconds: code whose time does not follow the clock, or no probe measured it.
    #[default]
    Ns,
    /// Instructions counted under callgrind (`--instructions`): exact, no sampling.
    Instructions,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Cycles => "cycles",
            Unit::Ns => "ns",
            Unit::Instructions => "instructions",
        }
    }
}

/// Nanoseconds are chosen only when they scatter less than cycles by this factor: the
/// probe's own noise makes cycles scatter a little more than time when the clock held still,
/// and that is no evidence that the code does not follow the clock.
pub const NS_STEADIER_BY: f64 = 1.5;
/// … and when cycles scatter by more than this (relative): below it both are steady enough
/// for every judgement, and cycles stay the unit that travels between runs.
pub const NS_MIN_CYCLES_SCATTER: f64 = 0.003;

/// The scatter of a series of per-iteration values over samples in groups (process, round):
/// the larger of the pooled robust σ (IQR/1.349) and half the spread of the groups' medians,
/// relative to the median. A group with fewer than 10 values has no median of its own here.
pub fn scatter(values: &[f64], groups: &[u32]) -> f64 {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 4 {
        return f64::NAN;
    }
    let sorted = stats::sorted(&v);
    let med = stats::median_sorted(&sorted);
    let pooled = stats::iqr_sigma_sorted(&sorted) / med;
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (&x, &g) in values.iter().zip(groups) {
        if x.is_finite() {
            by.entry(g).or_default().push(x);
        }
    }
    let meds: Vec<f64> = by
        .values()
        .filter(|v| v.len() >= 10)
        .map(|v| stats::median(v))
        .collect();
    let between = if meds.len() >= 2 {
        let lo = meds.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = meds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (hi / lo - 1.0) / 2.0
    } else {
        0.0
    };
    pooled.max(between)
}

/// The unit of a benchmark from its steady samples `idx` and each sample's effective cycle
/// time (`cycles`, empty when nothing was probed): cycles unless no probe measured the core,
/// or the time scatters clearly less than the cycles do (code that does not follow the clock).
/// A threaded benchmark is judged in ns: the probe measures one of its threads' cores.
pub fn choose(samples: &[Sample], idx: &[usize], cycles: &[f64], threaded: bool) -> Unit {
    if threaded || cycles.len() != samples.len() || idx.len() < 4 {
        return Unit::Ns;
    }
    let groups: Vec<u32> = idx
        .iter()
        .map(|&i| (samples[i].process << 16) | samples[i].round)
        .collect();
    let ns: Vec<f64> = idx.iter().map(|&i| samples[i].per_iter_ns()).collect();
    let cyc: Vec<f64> = idx
        .iter()
        .map(|&i| samples[i].per_iter_ns() / cycles[i])
        .collect();
    let (s_ns, s_cyc) = (scatter(&ns, &groups), scatter(&cyc, &groups));
    if !s_cyc.is_finite() {
        return Unit::Ns;
    }
    if s_cyc > NS_MIN_CYCLES_SCATTER && s_ns * NS_STEADIER_BY < s_cyc {
        Unit::Ns
    } else {
        Unit::Cycles
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::Phase;

    fn sample(ns_per_iter: f64, process: u32) -> Sample {
        Sample {
            iters: 1000,
            ns: (ns_per_iter * 1000.0).round() as u64,
            t_ns: 0,
            process,
            round: 0,
            phase: Phase::Measure,
        }
    }

    /// 300 samples in three processes; the clock's cycle time and the body's time at each.
    fn series(clock: impl Fn(usize) -> f64, time: impl Fn(usize, f64) -> f64) -> Unit {
        let cycles: Vec<f64> = (0..300).map(&clock).collect();
        let s: Vec<Sample> = (0..300)
            .map(|i| sample(time(i, cycles[i]), (i / 100) as u32))
            .collect();
        let idx: Vec<usize> = (0..300).collect();
        choose(&s, &idx, &cycles, false)
    }

    fn jitter(i: usize) -> f64 {
        1.0 + 0.001 * (((i * 7919) % 13) as f64 / 13.0 - 0.5)
    }

    #[test]
    fn code_that_follows_the_clock_is_judged_in_cycles() {
        // The clock moves 10 % between processes; the body is 100 cycles.
        let clock = |i: usize| 0.35 * (1.0 + 0.05 * (i / 100) as f64);
        assert_eq!(series(clock, |i, c| 100.0 * c * jitter(i)), Unit::Cycles);
    }

    #[test]
    fn code_that_keeps_its_time_when_the_clock_moves_is_judged_in_ns() {
        let clock = |i: usize| 0.35 * (1.0 + 0.05 * (i / 100) as f64);
        assert_eq!(series(clock, |i, _| 80.0 * jitter(i)), Unit::Ns);
    }

    #[test]
    fn a_clock_that_held_still_keeps_cycles_and_no_probe_gives_ns() {
        assert_eq!(series(|_| 0.35, |i, _| 80.0 * jitter(i)), Unit::Cycles);
        let s: Vec<Sample> = (0..50).map(|_| sample(3.0, 0)).collect();
        let idx: Vec<usize> = (0..50).collect();
        assert_eq!(choose(&s, &idx, &[], false), Unit::Ns);
        assert_eq!(choose(&s, &idx, &[0.3; 50], true), Unit::Ns);
    }
}
