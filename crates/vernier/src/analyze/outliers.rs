//! Outliers: the far outliers' share on a reference kernel (the machine's own noise), and
//! among a benchmark's headline samples their counts, the worst sigma event, how far they
//! move the median, and their share and time in the quietest stretch of the run.

use super::steady::steady_main;
use super::{Context, Outliers, PerIter, OUTLIER_GROUP_MIN_SAMPLES, OUTLIER_MIN_REL};
use crate::measure::Measurement;
use crate::samples::Sample;
use crate::stats;
use std::collections::BTreeMap;

/// The share of far outliers (beyond 3 × IQR and [`OUTLIER_MIN_REL`] of the median) among the
/// steady samples of a measurement: on a reference kernel, the machine's own noise.
pub fn far_outlier_share(m: &Measurement) -> Option<f64> {
    let per: Vec<f64> = steady_main(m)
        .iter()
        .map(|&i| m.samples.samples[i].per_iter_ns())
        .collect();
    if per.len() < 4 {
        return None;
    }
    let o = stats::outliers_beyond(&per, &[], OUTLIER_MIN_REL);
    Some((o.low_far + o.high_far) as f64 / per.len() as f64)
}

/// The median length of a measurement's steady samples, ns.
pub fn median_sample_ns(m: &Measurement) -> Option<f64> {
    let ns: Vec<f64> = steady_main(m)
        .iter()
        .map(|&i| m.samples.samples[i].ns as f64)
        .collect();
    (!ns.is_empty()).then(|| stats::median(&ns))
}

/// The share of far outliers the machine's own interruptions give samples of `sample_ns`:
/// the reference's share (`ctx.noise_far_share`), for samples as long as the reference's or
/// shorter, and for longer ones the chance that one of as many reference-long stretches is
/// hit, `1 − (1 − p)^(sample / reference)`. Interruptions arrive at a rate, so a 70 µs
/// sample is hit about 3.5 times as often as the reference's 20 µs; the demo's 70 µs
/// benchmarks read 7–13 % far outliers beside a reference's 2.8 %. (An interruption far
/// enough out for a short sample may not be for a long one: the scaled share can only
/// overstate the machine's, which keeps its noise off the rows.)
pub fn machine_far_share(ctx: &Context, sample_ns: f64) -> f64 {
    let p = ctx.noise_far_share.unwrap_or(0.0).clamp(0.0, 1.0);
    match ctx.noise_sample_ns {
        Some(r) if r > 0.0 && sample_ns > r => 1.0 - (1.0 - p).powf(sample_ns / r),
        _ => p,
    }
}

/// The outliers among the headline samples and what they do to the median.
#[derive(Clone, Copy, Default)]
pub(super) struct OutlierFigures {
    pub(super) counts: Outliers,
    /// Largest |x − median| / robust σ.
    pub(super) worst_sigma: f64,
    /// How far the far outliers move the median (the median without them, less it).
    pub(super) shift_ns: f64,
    /// The far outliers' share in the quietest window of consecutive samples (within a round
    /// of a process), at the upper end its count allows, when two or more windows have
    /// enough samples ([`OUTLIER_GROUP_MIN_SAMPLES`]).
    pub(super) quietest_far_share: Option<f64>,
    /// The time the far outliers took beyond the median, as a share of the samples' time: in
    /// the quietest window (as above), else over all of them. What the median
    /// leaves out of the mean.
    pub(super) excess_share: f64,
}

/// A window of a round's samples, its far outliers and their time (`outlier_figures`).
#[derive(Clone, Copy, Default)]
struct Group {
    n: usize,
    far: usize,
    time: f64,
    excess: f64,
}

/// The upper end of a window's far-outlier share that its count allows: the one-sided 95 %
/// Wilson bound.
fn far_share_upper(g: &Group) -> f64 {
    const Z: f64 = 1.645;
    let n = g.n as f64;
    if n == 0.0 {
        return 1.0;
    }
    let p = g.far as f64 / n;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre + spread) / (1.0 + z2 / n)).min(1.0)
}

/// Outliers (the tested `stats::outliers_beyond`) and the worst sigma event.
pub(super) fn outlier_figures(main: &[&Sample], per: &[f64], per_iter: &PerIter) -> OutlierFigures {
    if per.len() < 4 {
        return OutlierFigures::default();
    }
    let times: Vec<u64> = main.iter().map(|s| s.t_ns).collect();
    let o = stats::outliers_beyond(per, &times, OUTLIER_MIN_REL);
    let counts = Outliers {
        mild: o.low_mild + o.high_mild,
        far: o.low_far + o.high_far,
        period_ns: o.period_ns,
    };
    // How far the far outliers move the median: the median without them.
    let (lo3, hi3) =
        stats::outlier_fences_sorted(&stats::sorted(per), stats::FAR_K, OUTLIER_MIN_REL);
    let kept: Vec<f64> = per
        .iter()
        .copied()
        .filter(|&x| (lo3..=hi3).contains(&x))
        .collect();
    let shift_ns = if kept.is_empty() {
        0.0
    } else {
        (stats::median(&kept) - per_iter.median_ns).abs()
    };
    // The far outliers' share in the quietest stretch of the run: a burst of the machine's
    // own noise (a busy neighbour, the host) hits the stretches measured while it lasted, a
    // benchmark's own outliers (page faults, allocation, a syscall) hit every stretch. A
    // stretch is a window of consecutive samples within one round of one process.
    let median = per_iter.median_ns;
    let mut by: BTreeMap<(u32, usize), Group> = BTreeMap::new();
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for (s, &x) in main.iter().zip(per) {
        let key = (s.process << 16) | s.round;
        let k = seen.entry(key).or_default();
        let g = by.entry((key, *k / OUTLIER_GROUP_MIN_SAMPLES)).or_default();
        *k += 1;
        let far = !(lo3..=hi3).contains(&x);
        g.n += 1;
        g.far += usize::from(far);
        g.time += x;
        if far {
            g.excess += x - median;
        }
    }
    let all = by.values().fold(Group::default(), |a, g| Group {
        n: a.n + g.n,
        far: a.far + g.far,
        time: a.time + g.time,
        excess: a.excess + g.excess,
    });
    let enough: Vec<&Group> = by
        .values()
        .filter(|g| g.n >= OUTLIER_GROUP_MIN_SAMPLES)
        .collect();
    // The quietest of many windows is the least of many draws, and reads low by chance: each
    // window's share is taken at the upper end of what its count allows
    // ([`far_share_upper`]), the least of those bounds the benchmark's own share.
    let quietest = (enough.len() >= 2)
        .then(|| {
            enough
                .iter()
                .min_by(|a, b| far_share_upper(a).total_cmp(&far_share_upper(b)))
        })
        .flatten();
    let quietest_far_share = quietest.map(|g| far_share_upper(g));
    let excess_share = quietest.map_or(all.excess / all.time, |g| g.excess / g.time);
    let sigma = per_iter.sample_sigma_ns.max(per_iter.median_ns * 1e-9);
    OutlierFigures {
        counts,
        worst_sigma: stats::worst_sigma(per, per_iter.median_ns, sigma),
        shift_ns,
        quietest_far_share,
        excess_share: if excess_share.is_finite() {
            excess_share
        } else {
            0.0
        },
    }
}
