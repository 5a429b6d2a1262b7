//! The share of the core's issue width a benchmark's thread had: the ratio of the core-speed
//! probe's two halves (time per addition of eight independent chains over one dependent
//! chain's) around each sample, against the best ratio known for this core. The clock cancels
//! out of the ratio (both halves run at it); what moves it is a neighbour on the physical core
//! (a sibling SMT thread, another tenant's on a cloud machine), which takes issue slots and
//! execution ports but not clock: the dependent chain, which uses one port, runs as fast as
//! ever while the independent chains slow.
//!
//! The best ratio is the lowest of the start-up calibration's
//! (`kernels::best_wide_ratio`), the machine's known one (the ledger keeps it across runs) and
//! the benchmark's own smoothed probes: a run spent wholly shared — whose own probes read
//! shared throughout — is still measured against the whole core.
//!
//! Which benchmarks a shared core slows follows from the data, not from a list: a benchmark
//! whose samples follow the throughput half (throughput-bound code: an interpreter, hashing,
//! most integer and vectorised code) is `core-shared`; a latency-bound chain, which a
//! neighbour does not slow, is not.

use super::{RatioReference, References, STATE_MATTERS};
use crate::samples::Samples;
use crate::stats;
use crate::timer::TimerInfo;

/// A sample whose ratio of the probe's halves is this much above the best is taken with the
/// core shared: the same 10 % as a slow state of the clock ([`super::SLOW_RATIO`]). On a Zen 3
/// guest with a neighbour the ratio read 0.253–0.285 whole and up to 0.44–0.50 shared.
pub const SHARED_RATIO: f64 = super::SLOW_RATIO;

/// A benchmark measured wholly shared follows the throughput probe when, splitting its samples
/// past calibration in halves by the ratio around them, the more shared half reads slower by at
/// least [`STATE_MATTERS`] and by at least this power of the ratio's own change: 0.25, far
/// above the −0.04 to 0.09 a chain of 64 dependent adds read on six recordings of a shared
/// Zen 3 guest, and far below the 0.9–1.7 of 64 rounds of 8 independent adds there.
pub const FOLLOW_ELASTICITY: f64 = 0.25;

/// The halves' ratios must differ by this much (5 %) for a benchmark's following to be told
/// at all: a neighbour that took the same share all along gives nothing to compare.
pub const MIN_RATIO_SPREAD: f64 = 0.05;

/// The ratio of the probe's halves around each sample. Each probed batch's ratio is its
/// throughput half over the fastest clock half of the [`super::SMOOTHING_PROBES`] probed
/// batches of the same process around it: nothing makes a dependent chain faster than the
/// clock, so a slower reading among them is an interrupt (a single reading of a recorded shared
/// guest was lengthened one time in five), while a slower clock lasts far longer than the
/// window. A sample's ratio is then the highest of the running median of those ratios, its
/// batch's and the next batch's (in the same process): a neighbour comes and goes within a
/// batch, and a sample is taken whole only when the probes on both sides of it say so, while
/// an interrupt that lengthened one probe's eight chains only sets that batch's samples aside.
/// Empty unless every probed batch has both halves.
pub fn sample_ratios(samples: &Samples, timer: &TimerInfo) -> Vec<f64> {
    let halves = |i: usize| {
        let w = samples.probe_wide_ns(i, timer.overhead_ns)?;
        let c = samples.probe_cycle_ns(i, timer.overhead_ns)?;
        Some((samples.samples[i].process, c, w))
    };
    let probed =
        (0..samples.len()).filter(|&i| samples.probe_ns.get(i).copied().flatten().is_some());
    let batches: Vec<(usize, (u32, f64, f64))> = probed
        .map(|i| halves(i).map(|h| (i, h)))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    if batches.is_empty() {
        return Vec::new();
    }
    let half = super::SMOOTHING_PROBES / 2;
    // The batches of the same process within the window around batch k.
    let b = &batches;
    let window = |k: usize| {
        let p = b[k].1 .0;
        let lo = k.saturating_sub(half);
        let hi = (k + half + 1).min(b.len());
        (lo..hi).filter(move |&j| b[j].1 .0 == p)
    };
    let raw: Vec<f64> = (0..batches.len())
        .map(|k| {
            let clock = window(k)
                .map(|j| batches[j].1 .1)
                .fold(f64::INFINITY, f64::min);
            batches[k].1 .2 / clock
        })
        .collect();
    let around: Vec<f64> = (0..batches.len())
        .map(|k| {
            let w: Vec<f64> = window(k).map(|j| raw[j]).collect();
            let same = k + 1 < batches.len() && batches[k + 1].1 .0 == batches[k].1 .0;
            let next = if same { raw[k + 1] } else { 0.0 };
            stats::median(&w).max(raw[k]).max(next)
        })
        .collect();
    super::carried(samples.len(), batches.iter().map(|b| b.0), &around)
}

/// The best ratio known and where it comes from: the lowest of the benchmark's own `ratios`,
/// the start-up calibration's and the machine's known one. `None` without ratios.
pub fn best_ratio(ratios: &[f64], refs: &References) -> Option<(f64, RatioReference)> {
    let own = ratios
        .iter()
        .copied()
        .filter(|r| r.is_finite() && *r > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !own.is_finite() {
        return None;
    }
    let mut best = (own, RatioReference::Probes);
    for (r, from) in [
        (refs.startup_wide_ratio, RatioReference::StartUp),
        (refs.known_wide_ratio, RatioReference::Known),
    ] {
        if let Some(r) = r.filter(|r| r.is_finite() && *r > 0.0 && *r < best.0) {
            best = (r, from);
        }
    }
    Some(best)
}

/// The share of the core's best throughput a sample had: the best ratio over its own, at most 1.
pub fn share(best: f64, ratio: f64) -> f64 {
    (best / ratio).min(1.0)
}

/// Whether a sample of ratio `ratio` was taken with the core shared.
pub fn is_shared(best: f64, ratio: f64) -> bool {
    ratio > best * SHARED_RATIO
}

/// How much slower the more shared half of `set` read than the less shared, when the
/// benchmark follows the throughput probe ([`FOLLOW_ELASTICITY`]): `figure(i)` is sample i's
/// figure in the benchmark's unit. `None` when it does not, or when the ratios around the
/// samples did not spread enough to tell ([`MIN_RATIO_SPREAD`]).
pub fn follows(set: &[usize], ratios: &[f64], figure: impl Fn(usize) -> f64) -> Option<f64> {
    let mut by: Vec<(f64, f64)> = set
        .iter()
        .map(|&i| (ratios[i], figure(i)))
        .filter(|(r, f)| r.is_finite() && f.is_finite() && *f > 0.0)
        .collect();
    if by.len() < 2 * super::MIN_STATE_SAMPLES {
        return None;
    }
    by.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (lo, hi) = by.split_at(by.len() / 2);
    let median = |v: &[(f64, f64)], k: fn(&(f64, f64)) -> f64| {
        stats::median(&v.iter().map(k).collect::<Vec<f64>>())
    };
    let (r_lo, r_hi) = (median(lo, |x| x.0), median(hi, |x| x.0));
    let (f_lo, f_hi) = (median(lo, |x| x.1), median(hi, |x| x.1));
    if r_hi / r_lo - 1.0 < MIN_RATIO_SPREAD {
        return None;
    }
    let slower = f_hi / f_lo;
    let elasticity = slower.ln() / (r_hi / r_lo).ln();
    (elasticity >= FOLLOW_ELASTICITY && slower - 1.0 >= STATE_MATTERS).then_some(slower)
}

/// The core's share during a benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sharing {
    /// The best ratio of the probe's halves known, and where it comes from.
    pub best_ratio: f64,
    pub reference: RatioReference,
    /// The benchmark's own lowest ratio (smoothed), what the ledger keeps of this run.
    pub own_best_ratio: f64,
    /// The median share of the core's best throughput over the steady samples (0–1).
    pub core_share: f64,
    /// The share of the steady samples taken with the core shared.
    pub shared_share: f64,
    /// How much slower the benchmark read shared than unshared, in its unit, when it felt
    /// the difference: the two states' figures when both have one, else the halves of
    /// [`follows`] for a benchmark measured wholly shared. `None` when it did not, or when
    /// that could not be told.
    pub felt: Option<f64>,
}

impl Sharing {
    /// The sharing around the steady samples `idx`, against `best`.
    pub fn of(
        idx: &[usize],
        ratios: &[f64],
        best: (f64, RatioReference),
        own_best_ratio: f64,
    ) -> Sharing {
        let shares: Vec<f64> = idx.iter().map(|&i| share(best.0, ratios[i])).collect();
        let shared = idx
            .iter()
            .filter(|&&i| is_shared(best.0, ratios[i]))
            .count();
        Sharing {
            best_ratio: best.0,
            reference: best.1,
            own_best_ratio,
            core_share: if shares.is_empty() {
                f64::NAN
            } else {
                stats::median(&shares)
            },
            shared_share: shared as f64 / idx.len().max(1) as f64,
            felt: None,
        }
    }
}
