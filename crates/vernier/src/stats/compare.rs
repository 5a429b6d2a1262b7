//! A/B statistics: is NEW faster or slower than OLD, by how much, and how sure are we?
//!
//! Pure functions, no I/O; they back `vernier compare`. Everything works on the logarithm of
//! per-iteration times, so a change is a ratio NEW/OLD (above 1: NEW is slower) and noise that
//! multiplies the time (frequency, cache state) becomes an additive shift.
//!
//! - **Paired** (OLD and NEW interleaved, sample i of each taken back to back): on the log-ratios
//!   dᵢ = ln(newᵢ/oldᵢ) the estimate is the Hodges–Lehmann estimator (median of the Walsh
//!   averages (dᵢ + dⱼ)/2, i ≤ j), its 95 % interval the matching order statistics of the Walsh
//!   averages (the inversion of the Wilcoxon signed-rank test), the p-value the Wilcoxon
//!   signed-rank test, and a sign-test p-value beside it. Drift common to both members of a pair
//!   cancels in dᵢ.
//! - **Unpaired** (two independent sets of samples): the Hodges–Lehmann shift of the logs (median
//!   of all differences ln newⱼ − ln oldᵢ), its interval from the Mann–Whitney distribution, and
//!   the Mann–Whitney U p-value.
//!
//! Why rank-based, distribution-free intervals rather than a bootstrap: they are exact (or very
//! nearly so) for any continuous distribution symmetric about the shift, which is what a
//! log-ratio of two samples from the same law with common drift is; they need no random numbers,
//! so the same data always give the same answer; and they are robust to the spikes that timing
//! data carry. The cost, the n(n+1)/2 Walsh averages, is avoided: order statistics of Walsh
//! averages and of pairwise differences are *selected* without being materialised (bisection on
//! the bit pattern of the value, counting with two pointers: O(n log n + 64·n)), so the estimate
//! is exact for every n, with no subsampling.
//!
//! The rank statistics ([`crate::stats::rank`]) give the paired and unpaired estimates and
//! tests; Student's t is in [`crate::stats::student`].
//!
//! - **Process pairs** (`vernier compare OLD NEW`): one log-ratio per OLD/NEW process pair, and
//!   a random-effects interval over them ([`crate::stats::random_effects`]), which includes the
//!   spread between pairs.
//! - **Two result files**: each file's own interval, combined ([`from_intervals`]).
//!
//! Several benchmarks compared at once are a family of tests: [`holm`] adjusts their p-values
//! (it controls the family-wise error rate, so a suite of 50 benchmarks does not report a false
//! regression in most runs). [`verdict`] then combines the ratio, its interval, the adjusted
//! p-value and a noise threshold.

use crate::stats::rank::{
    hodges_lehmann_paired, hodges_lehmann_paired_ci, hodges_lehmann_shift, hodges_lehmann_shift_ci,
    mann_whitney, sign_test, wilcoxon_signed_rank,
};
use crate::stats::{normal_sf, Z95};
use serde::{Deserialize, Serialize};

/// Significance level of the verdicts (two-sided), matching the 95 % intervals.
pub const ALPHA: f64 = 0.05;
/// A suggested noise threshold: changes below 0.5 % are reported as no change.
pub const DEFAULT_THRESHOLD: f64 = 0.005;

/// Why two sets of samples cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("no samples to compare")]
    Empty,
    #[error("paired comparison needs as many NEW samples as OLD ones ({old} vs {new})")]
    LengthMismatch { old: usize, new: usize },
    #[error("sample {index} is not a positive finite time ({value})")]
    NotPositive { index: usize, value: f64 },
}

/// How the samples of OLD and NEW relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Paired,
    Unpaired,
    /// Instruction counts under callgrind (`compare --instructions`): exact, no sampling; the
    /// verdict is the difference per iteration against a threshold in instructions.
    Instructions,
}

/// One comparison on the ratio scale, NEW/OLD.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioEstimate {
    pub mode: Mode,
    /// exp of the Hodges–Lehmann estimate of the log-ratio.
    pub ratio: f64,
    /// 95 % interval of the ratio (exp of the log-scale bounds).
    pub ci95: (f64, f64),
    /// Two-sided p-value of "no change": Wilcoxon signed-rank (paired) or Mann–Whitney U.
    pub p_value: f64,
    /// Two-sided sign-test p-value (paired only): it assumes nothing about symmetry, a check on
    /// the Wilcoxon p-value when the log-ratios are skewed.
    pub sign_p_value: Option<f64>,
    /// Pairs (paired) or the smaller of the two sample counts (unpaired).
    pub n: usize,
}

/// Paired comparison of per-iteration times, `old[i]` and `new[i]` measured back to back.
pub fn paired(old: &[f64], new: &[f64]) -> Result<RatioEstimate, CompareError> {
    let d = log_ratios(old, new)?;
    let est = hodges_lehmann_paired(&d);
    let (lo, hi) = hodges_lehmann_paired_ci(&d);
    Ok(RatioEstimate {
        mode: Mode::Paired,
        ratio: est.exp(),
        ci95: (lo.exp(), hi.exp()),
        p_value: wilcoxon_signed_rank(&d),
        sign_p_value: Some(sign_test(&d)),
        n: d.len(),
    })
}

/// Unpaired comparison of two independent sets of per-iteration times.
pub fn unpaired(old: &[f64], new: &[f64]) -> Result<RatioEstimate, CompareError> {
    let x = logs(old, 0)?;
    let y = logs(new, old.len())?;
    let est = hodges_lehmann_shift(&x, &y);
    let (lo, hi) = hodges_lehmann_shift_ci(&x, &y);
    Ok(RatioEstimate {
        mode: Mode::Unpaired,
        ratio: est.exp(),
        ci95: (lo.exp(), hi.exp()),
        p_value: mann_whitney(&x, &y),
        sign_p_value: None,
        n: x.len().min(y.len()),
    })
}

/// Comparison of two independent estimates, each given by its centre and its honest 95 %
/// interval (e.g. two result files' medians and intervals, which cover the spread between
/// their processes and rounds): on the log scale each interval's half-width / 1.96 is taken as
/// its standard error, the difference's is the root sum of squares, and the interval and the
/// p-value are normal. The samples behind each figure are *not* used: they are not independent
/// (samples of one process share its layout, those of one round the machine's state), and
/// pooling them as if they were gives intervals far too narrow.
pub fn from_intervals(
    old: f64,
    old_ci: (f64, f64),
    new: f64,
    new_ci: (f64, f64),
) -> Result<RatioEstimate, CompareError> {
    for (i, v) in [old, old_ci.0, old_ci.1, new, new_ci.0, new_ci.1]
        .into_iter()
        .enumerate()
    {
        if !(v.is_finite() && v > 0.0) {
            return Err(CompareError::NotPositive { index: i, value: v });
        }
    }
    let se = |(lo, hi): (f64, f64)| (hi.ln() - lo.ln()).abs() / (2.0 * Z95);
    let d = (new / old).ln();
    let s = (se(old_ci).powi(2) + se(new_ci).powi(2)).sqrt();
    let p_value = if s > 0.0 {
        (2.0 * normal_sf((d / s).abs())).min(1.0)
    } else if d == 0.0 {
        1.0
    } else {
        0.0
    };
    Ok(RatioEstimate {
        mode: Mode::Unpaired,
        ratio: d.exp(),
        ci95: ((d - Z95 * s).exp(), (d + Z95 * s).exp()),
        p_value,
        sign_p_value: None,
        n: 1,
    })
}

/// dᵢ = ln(newᵢ/oldᵢ), checking that every time is positive and finite.
pub fn log_ratios(old: &[f64], new: &[f64]) -> Result<Vec<f64>, CompareError> {
    if old.len() != new.len() {
        return Err(CompareError::LengthMismatch {
            old: old.len(),
            new: new.len(),
        });
    }
    check_positive(old, 0)?;
    check_positive(new, old.len())?;
    if old.is_empty() {
        return Err(CompareError::Empty);
    }
    Ok(old.iter().zip(new).map(|(o, n)| (n / o).ln()).collect())
}

fn logs(xs: &[f64], index_base: usize) -> Result<Vec<f64>, CompareError> {
    if xs.is_empty() {
        return Err(CompareError::Empty);
    }
    check_positive(xs, index_base)?;
    Ok(xs.iter().map(|x| x.ln()).collect())
}

fn check_positive(xs: &[f64], index_base: usize) -> Result<(), CompareError> {
    match xs.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
        Some(i) => Err(CompareError::NotPositive {
            index: index_base + i,
            value: xs[i],
        }),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Multiplicity, verdicts, suite summary.

/// Holm's step-down adjusted p-values (same order as the input): controls the family-wise
/// error rate — the probability of even one false "slower"/"faster" in the suite — at α,
/// under any dependence between the tests. This is what `vernier compare` uses.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut idx: Vec<usize> = (0..m).collect();
    idx.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in idx.iter().enumerate() {
        let adj = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

/// The outcome of a comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Faster,
    Slower,
    #[default]
    NoChange,
    /// The interval still straddles the noise threshold: neither a change nor its absence is
    /// established (the comparison gives the smallest change it could have detected).
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no-change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The verdict on one comparison, from the ratio NEW/OLD, its 95 % interval, its p-value
/// *adjusted for multiplicity* (e.g. by [`holm`]) and a noise threshold t (0.005 = 0.5 %).
///
/// `Slower` requires all three of:
/// 1. the interval lies above 1 (`ci95.0 > 1`): the change is real at 95 %;
/// 2. the adjusted p-value is below [`ALPHA`]: it stays real once every benchmark of the suite
///    has had its chance to be a false alarm;
/// 3. the estimate is outside the noise band (`ratio > 1 + t`): it is large enough to matter.
///
/// `Faster` mirrors it: `ci95.1 < 1`, adjusted p < α, `ratio < 1/(1 + t)` (the band is
/// symmetric on the log scale). `NoChange` needs the whole interval inside the noise band
/// [1/(1 + t), 1 + t]: the absence of a change that matters is *established*. Anything else is
/// `Inconclusive`: the interval straddles the threshold. With t = 0.5 %: ratio 1.010 in
/// [1.008, 1.012] is slower; 1.000 in [0.997, 1.003] and 1.0025 in [1.001, 1.004] are no change;
/// 1.000 in [0.990, 1.010] is inconclusive.
///
/// The point estimate rather than a bound is compared with the threshold for `Slower`: requiring
/// the whole interval beyond 1 + t would call a well-established 1 % regression with a wide
/// interval "no change", which is false; the interval already guards against noise through (1).
pub fn verdict(ratio: f64, ci95: (f64, f64), p_adjusted: f64, threshold: f64) -> Verdict {
    let significant = p_adjusted < ALPHA;
    let (band_lo, band_hi) = (1.0 / (1.0 + threshold), 1.0 + threshold);
    if significant && ci95.0 > 1.0 && ratio > band_hi {
        Verdict::Slower
    } else if significant && ci95.1 < 1.0 && ratio < band_lo {
        Verdict::Faster
    } else if ci95.0 >= band_lo && ci95.1 <= band_hi {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

/// Geometric mean of ratios over a suite, with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoMean {
    pub ratio: f64,
    pub ci95: (f64, f64),
}

/// Geometric mean of per-benchmark ratios with a 95 % interval that combines their intervals:
/// on the log scale each benchmark's standard error is taken as its interval's width / (2·1.96),
/// the mean's as √(Σ seᵢ²)/k (the benchmarks are measured independently), and the interval is
/// mean ± 1.96·se, exponentiated.
///
/// This is the uncertainty of *this suite's* geometric mean due to measurement noise (a fixed
/// set of benchmarks), which is the question `vernier compare` answers; it is defined for a
/// single benchmark, unlike a t-interval across benchmarks, which would instead treat the
/// benchmarks as a sample of all possible programs and mostly measure how much they differ.
/// `None` for an empty list or a ratio or bound that is not positive and finite.
pub fn geomean(items: &[(f64, (f64, f64))]) -> Option<GeoMean> {
    if items.is_empty() {
        return None;
    }
    let ok = |x: f64| x.is_finite() && x > 0.0;
    if !items.iter().all(|&(r, (l, h))| ok(r) && ok(l) && ok(h)) {
        return None;
    }
    let k = items.len() as f64;
    let mean = items.iter().map(|(r, _)| r.ln()).sum::<f64>() / k;
    let var: f64 = items
        .iter()
        .map(|(_, (l, h))| {
            let se = (h.ln() - l.ln()) / (2.0 * Z95);
            se * se
        })
        .sum();
    let se = var.sqrt() / k;
    Some(GeoMean {
        ratio: mean.exp(),
        ci95: ((mean - Z95 * se).exp(), (mean + Z95 * se).exp()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_rule_examples() {
        let t = 0.005;
        assert_eq!(verdict(1.010, (1.008, 1.012), 1e-6, t), Verdict::Slower);
        assert_eq!(verdict(1.000, (0.997, 1.003), 0.9, t), Verdict::NoChange);
        assert_eq!(verdict(1.0025, (1.001, 1.004), 1e-4, t), Verdict::NoChange);
        assert_eq!(verdict(0.990, (0.988, 0.992), 1e-6, t), Verdict::Faster);
        // Significant interval, but not after adjustment.
        assert_eq!(
            verdict(1.010, (1.008, 1.012), 0.2, t),
            Verdict::Inconclusive
        );
        // An interval that straddles the threshold settles nothing.
        assert_eq!(
            verdict(1.000, (0.990, 1.010), 0.9, t),
            Verdict::Inconclusive
        );
        assert_eq!(
            verdict(1.003, (1.001, 1.006), 0.01, t),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert_eq!(paired(&[], &[]), Err(CompareError::Empty));
        assert_eq!(
            paired(&[1.0], &[1.0, 2.0]),
            Err(CompareError::LengthMismatch { old: 1, new: 2 })
        );
        assert_eq!(
            unpaired(&[1.0, 2.0], &[3.0, -1.0]),
            Err(CompareError::NotPositive {
                index: 3,
                value: -1.0
            })
        );
        assert!(unpaired(&[1.0], &[]).is_err());
    }

    #[test]
    fn identical_samples_give_ratio_one() {
        let v = [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let p = paired(&v, &v).unwrap();
        assert_eq!(p.ratio, 1.0);
        assert_eq!(p.p_value, 1.0);
        assert_eq!(p.sign_p_value, Some(1.0));
        let u = unpaired(&v, &v).unwrap();
        assert_eq!(u.ratio, 1.0);
        assert_eq!(u.p_value, 1.0);
    }
}
