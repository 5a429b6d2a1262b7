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
//! Tests and their branches (the same conventions as scipy, so golden values match):
//! - Wilcoxon signed-rank: zeros are dropped (Wilcoxon's method); exact null distribution when
//!   1 ≤ n ≤ [`WILCOXON_EXACT_MAX_N`] and there are neither ties nor zeros, otherwise the normal
//!   approximation with the tie correction and without continuity correction (scipy's default).
//! - Mann–Whitney U: two-sided, exact when there are no ties and n₁·n₂ ≤ [`MW_EXACT_MAX_PRODUCT`],
//!   otherwise the normal approximation with tie and continuity corrections (scipy's default).
//! - The interval ranks use the same null distributions (exact under the same size conditions,
//!   ties ignored), otherwise the normal approximation with continuity correction. Zeros are
//!   kept in the Walsh averages.
//!
//! - **Process pairs** (`vernier compare OLD NEW`): one log-ratio per OLD/NEW process pair, and
//!   a random-effects interval over them ([`random_effects`]), which includes the spread
//!   between pairs; Student's t is computed here ([`student_t_sf`], [`student_t_quantile`]).
//! - **Two result files**: each file's own interval, combined ([`from_intervals`]).
//!
//! Several benchmarks compared at once are a family of tests: [`holm`] adjusts their p-values
//! (the suite uses it: it controls the family-wise error rate, so a suite of 50 benchmarks does
//! not report a false regression in most runs); [`benjamini_hochberg`] (false discovery rate) is
//! there for exploratory use. [`verdict`] then combines the ratio, its interval, the adjusted
//! p-value and a noise threshold.

use crate::stats::{binom_half_cdf, normal_sf, Z95};
use serde::{Deserialize, Serialize};

/// Significance level of the verdicts (two-sided), matching the 95 % intervals.
pub const ALPHA: f64 = 0.05;
/// A suggested noise threshold: changes below 0.5 % are reported as no change.
pub const DEFAULT_THRESHOLD: f64 = 0.005;
/// Largest number of non-zero log-ratios for the exact Wilcoxon distribution.
pub const WILCOXON_EXACT_MAX_N: usize = 50;
/// Largest n₁·n₂ for the exact Mann–Whitney distribution.
pub const MW_EXACT_MAX_PRODUCT: usize = 2500;

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
// Paired: Walsh averages, Wilcoxon signed-rank, sign test.

/// Hodges–Lehmann estimate of the centre of `d`: the median of its n(n+1)/2 Walsh averages
/// (dᵢ + dⱼ)/2, i ≤ j (exact, not materialised). NaN for empty input.
pub fn hodges_lehmann_paired(d: &[f64]) -> f64 {
    if d.is_empty() {
        return f64::NAN;
    }
    let s = crate::stats::sorted(d);
    let total = walsh_count(s.len());
    median_by_rank(total, |k| kth_walsh(&s, k))
}

/// 95 % interval of the Hodges–Lehmann estimate: the order statistics (W₍c₎, W₍N−1−c₎), 0-based,
/// of the N Walsh averages, c the largest rank with P(T⁺ ≤ c) ≤ 2.5 % under the null
/// distribution of the signed-rank statistic. With fewer than 6 values no rank reaches 95 % and
/// the interval is the whole range of the Walsh averages.
pub fn hodges_lehmann_paired_ci(d: &[f64]) -> (f64, f64) {
    if d.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let s = crate::stats::sorted(d);
    let total = walsh_count(s.len());
    let c = signed_rank_ci_rank(s.len()).unwrap_or(0);
    (kth_walsh(&s, c), kth_walsh(&s, total - 1 - c))
}

/// An interval of the Hodges–Lehmann estimate at a given two-sided normal quantile `z` (e.g.
/// 2.576 for 99 %): the order statistics (W₍c₎, W₍N−1−c₎) of the Walsh averages with c from the
/// normal approximation of the signed-rank distribution, with continuity correction (the same
/// formula as [`hodges_lehmann_paired_ci`] beyond [`WILCOXON_EXACT_MAX_N`] values). For
/// sequential stopping rules, which look at the data several times and need a wider interval
/// than the 95 % one they report. The whole range when no rank reaches the level.
pub fn hodges_lehmann_paired_ci_z(d: &[f64], z: f64) -> (f64, f64) {
    if d.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let s = crate::stats::sorted(d);
    let total = walsh_count(s.len());
    let nf = s.len() as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    let c = (mean - 0.5 - z * sd).floor().max(0.0) as usize;
    let c = c.min((total - 1) / 2);
    (kth_walsh(&s, c), kth_walsh(&s, total - 1 - c))
}

fn walsh_count(n: usize) -> usize {
    n * (n + 1) / 2
}

/// Largest c with P(T⁺ ≤ c) ≤ 0.025 under the signed-rank null distribution of n values.
fn signed_rank_ci_rank(n: usize) -> Option<usize> {
    if n <= WILCOXON_EXACT_MAX_N {
        let counts = signed_rank_counts(n);
        let total = 1u64 << n;
        let mut acc = 0u64;
        let mut c = None;
        for (t, &k) in counts.iter().enumerate() {
            acc += k;
            // acc / total ≤ 1/40, in exact integer arithmetic.
            if acc * 40 <= total {
                c = Some(t);
            } else {
                break;
            }
        }
        return c;
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    Some((mean - 0.5 - Z95 * sd).floor().max(0.0) as usize)
}

/// counts[t] = number of the 2ⁿ sign patterns whose positive ranks sum to t (t = 0..n(n+1)/2).
/// Exact in u64 for n ≤ 63; used for n ≤ 50.
fn signed_rank_counts(n: usize) -> Vec<u64> {
    let mut counts = vec![0u64; walsh_count(n) + 1];
    counts[0] = 1;
    let mut top = 0;
    for k in 1..=n {
        top += k;
        for t in (k..=top).rev() {
            counts[t] += counts[t - k];
        }
    }
    counts
}

/// Two-sided p-value of the Wilcoxon signed-rank test that `d` is centred on 0 (zeros dropped;
/// exact or normal approximation as described in the module documentation). 1 when every value
/// is zero.
pub fn wilcoxon_signed_rank(d: &[f64]) -> f64 {
    let nz: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return 1.0;
    }
    let abs: Vec<f64> = nz.iter().map(|x| x.abs()).collect();
    let (ranks, ties) = average_ranks(&abs);
    let r_plus: f64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let nf = n as f64;
    if n <= WILCOXON_EXACT_MAX_N && ties == 0.0 && n == d.len() {
        // No ties: r_plus is an integer.
        let t = r_plus.round() as usize;
        let counts = signed_rank_counts(n);
        let total = (1u64 << n) as f64;
        let cdf: u64 = counts[..=t].iter().sum();
        let sf: u64 = counts[t..].iter().sum();
        return (2.0 * (cdf.min(sf) as f64) / total).min(1.0);
    }
    let mean = nf * (nf + 1.0) / 4.0;
    let var = (nf * (nf + 1.0) * (2.0 * nf + 1.0) - ties / 2.0) / 24.0;
    if var <= 0.0 {
        return 1.0;
    }
    let z = (r_plus - mean) / var.sqrt();
    (2.0 * normal_sf(z.abs())).min(1.0)
}

/// Two-sided sign-test p-value that positive and negative values of `d` are equally likely
/// (zeros dropped): binomial(n, ½), as scipy's `binomtest`. 1 when every value is zero.
pub fn sign_test(d: &[f64]) -> f64 {
    let pos = d.iter().filter(|&&x| x > 0.0).count();
    let neg = d.iter().filter(|&&x| x < 0.0).count();
    let n = pos + neg;
    if n == 0 {
        return 1.0;
    }
    (2.0 * binom_half_cdf(pos.min(neg), n)).min(1.0)
}

/// Average ranks (1-based) of `xs`, and the tie term Σ(t³ − t) over groups of tied values.
fn average_ranks(xs: &[f64]) -> (Vec<f64>, f64) {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && xs[idx[j]] == xs[idx[i]] {
            j += 1;
        }
        // Positions i..j (0-based) share the ranks i+1..=j: their average.
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    (ranks, ties)
}

// ---------------------------------------------------------------------------------------------
// Unpaired: pairwise differences, Mann–Whitney U.

/// Hodges–Lehmann shift of `y` relative to `x`: the median of all n₁·n₂ differences yⱼ − xᵢ
/// (exact, not materialised). NaN if either is empty.
pub fn hodges_lehmann_shift(x: &[f64], y: &[f64]) -> f64 {
    if x.is_empty() || y.is_empty() {
        return f64::NAN;
    }
    let (sx, sy) = (crate::stats::sorted(x), crate::stats::sorted(y));
    median_by_rank(sx.len() * sy.len(), |k| kth_difference(&sx, &sy, k))
}

/// 95 % interval of the Hodges–Lehmann shift: order statistics (D₍c₎, D₍N−1−c₎), 0-based, of
/// the N = n₁·n₂ differences, c the largest rank with P(U ≤ c) ≤ 2.5 % under the Mann–Whitney
/// null distribution; the whole range when no rank reaches 95 %.
pub fn hodges_lehmann_shift_ci(x: &[f64], y: &[f64]) -> (f64, f64) {
    if x.is_empty() || y.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let (sx, sy) = (crate::stats::sorted(x), crate::stats::sorted(y));
    let total = sx.len() * sy.len();
    let c = mw_ci_rank(sx.len(), sy.len()).unwrap_or(0);
    (
        kth_difference(&sx, &sy, c),
        kth_difference(&sx, &sy, total - 1 - c),
    )
}

fn mw_ci_rank(m: usize, n: usize) -> Option<usize> {
    if m * n <= MW_EXACT_MAX_PRODUCT {
        let counts = mw_counts(m, n);
        let total: u128 = counts.iter().sum();
        let mut acc = 0u128;
        let mut c = None;
        for (u, &k) in counts.iter().enumerate() {
            acc += k;
            if acc * 40 <= total {
                c = Some(u);
            } else {
                break;
            }
        }
        return c;
    }
    let (mf, nf) = (m as f64, n as f64);
    let mean = mf * nf / 2.0;
    let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
    Some((mean - 0.5 - Z95 * sd).floor().max(0.0) as usize)
}

/// counts[u] = number of the C(m+n, m) arrangements with Mann–Whitney statistic u: the
/// coefficients of the Gaussian binomial [m+n choose m]_q = Π_{i=1..k} (1 − q^{l+i})/(1 − q^i),
/// k = min(m, n), l = max(m, n), multiplied and divided in place (O(k²·l) operations). Exact in
/// i128 whenever m·n ≤ 2500: the largest total, C(m+n, m), is then C(100, 50) ≈ 1.0e29, the
/// intermediate products at most twice that (i128 holds 1.7e38, with room for the ×40 of the
/// rank search).
fn mw_counts(m: usize, n: usize) -> Vec<u128> {
    let (k, l) = (m.min(n), m.max(n));
    let mut p = vec![0i128; k * l + k + 1];
    p[0] = 1;
    let mut deg = 0;
    for i in 1..=k {
        let s = l + i;
        // × (1 − q^s), descending so that p[j − s] is still the old coefficient.
        for j in (s..=deg + s).rev() {
            p[j] -= p[j - s];
        }
        deg += s;
        // ÷ (1 − q^i): the quotient satisfies r[j] = p[j] + r[j − i], ascending.
        for j in i..=deg {
            p[j] += p[j - i];
        }
        deg -= i;
    }
    p.truncate(deg + 1);
    p.into_iter().map(|c| c as u128).collect()
}

/// Two-sided Mann–Whitney U p-value that `x` and `y` come from the same law (exact or normal
/// approximation as described in the module documentation).
pub fn mann_whitney(x: &[f64], y: &[f64]) -> f64 {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 {
        return 1.0;
    }
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = average_ranks(&all);
    let r1: f64 = ranks[..m].iter().sum();
    let (mf, nf) = (m as f64, n as f64);
    let u1 = r1 - mf * (mf + 1.0) / 2.0;
    let u = u1.max(mf * nf - u1);
    if ties == 0.0 && m * n <= MW_EXACT_MAX_PRODUCT {
        let counts = mw_counts(m, n);
        let total: u128 = counts.iter().sum();
        let sf: u128 = counts[u.round() as usize..].iter().sum();
        return (2.0 * sf as f64 / total as f64).min(1.0);
    }
    let big_n = mf + nf;
    let var = mf * nf / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = (u - mf * nf / 2.0 - 0.5) / var.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}

// ---------------------------------------------------------------------------------------------
// Order statistics of Walsh averages and pairwise differences without materialising them.

/// A key with the same order as the f64 (total order; finite values only here).
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

fn from_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The smallest value v in [lo, hi] with count_le(v) ≥ k + 1: the 0-based k-th order
/// statistic, when count_le(v) counts the elements ≤ v and lo, hi are the minimum and maximum.
/// Bisection on the ordered bit pattern: at most 64 evaluations of `count_le`.
fn select(k: usize, lo: f64, hi: f64, count_le: impl Fn(f64) -> usize) -> f64 {
    let (mut a, mut b) = (key(lo), key(hi));
    if count_le(lo) > k {
        return lo;
    }
    // Invariant: count_le(a) ≤ k < count_le(b).
    while b - a > 1 {
        let mid = a + (b - a) / 2;
        if count_le(from_key(mid)) > k {
            b = mid;
        } else {
            a = mid;
        }
    }
    from_key(b)
}

/// 0-based k-th smallest Walsh average (s[i] + s[j])/2, i ≤ j, of sorted `s`.
fn kth_walsh(s: &[f64], k: usize) -> f64 {
    let n = s.len();
    let walsh = |i: usize, j: usize| (s[i] + s[j]) / 2.0;
    // Number of Walsh averages ≤ v: for each i, the j ≥ i up to the last with walsh(i, j) ≤ v;
    // that last j only moves down as i grows (the rounded average is monotone in each term).
    let count_le = |v: f64| {
        let mut count = 0;
        let mut j = n;
        for i in 0..n {
            while j > i && walsh(i, j - 1) > v {
                j -= 1;
            }
            if j <= i {
                break;
            }
            count += j - i;
        }
        count
    };
    select(k, s[0], s[n - 1], count_le)
}

/// 0-based k-th smallest difference y[j] − x[i] of sorted `x` and `y`.
fn kth_difference(x: &[f64], y: &[f64], k: usize) -> f64 {
    let m = x.len();
    // For each y[j] (ascending), the differences ≤ v are those with x[i] ≥ some bound, a suffix
    // of x whose start only moves right as y[j] grows.
    let count_le = |v: f64| {
        let mut count = 0;
        let mut t = 0;
        for &yj in y {
            while t < m && yj - x[t] > v {
                t += 1;
            }
            count += m - t;
        }
        count
    };
    select(k, y[0] - x[m - 1], y[y.len() - 1] - x[0], count_le)
}

/// Median of `total` ordered values given their k-th order statistic (numpy's convention:
/// the mean of the two middle values for an even count).
fn median_by_rank(total: usize, kth: impl Fn(usize) -> f64) -> f64 {
    if total % 2 == 1 {
        kth(total / 2)
    } else {
        (kth(total / 2 - 1) + kth(total / 2)) / 2.0
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

/// Benjamini–Hochberg step-up adjusted p-values (same order as the input): controls the false
/// discovery rate (the expected share of false findings among those reported) for independent
/// or positively dependent tests. Less conservative than [`holm`]; for exploration.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut idx: Vec<usize> = (0..m).collect();
    idx.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in idx.iter().enumerate().rev() {
        let adj = (m as f64 / (rank + 1) as f64 * p[i]).min(1.0);
        running = running.min(adj);
        out[i] = running;
    }
    out
}

/// The outcome of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Faster,
    Slower,
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

// ---------------------------------------------------------------------------------------------
// Student's t distribution, and the random-effects interval over process pairs.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: about 15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularised incomplete beta function I_x(a, b), by its continued fraction (modified Lentz),
/// on the side where it converges fast.
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    // One Lentz step with coefficient aa: updates c and d, returns the factor for h.
    let step = |aa: f64, c: &mut f64, d: &mut f64| {
        *d = 1.0 / guard(1.0 + aa * *d);
        *c = guard(1.0 + aa / *c);
        *d * *c
    };
    for m in 1..1000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)), &mut c, &mut d);
        let del = step(
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
            &mut c,
            &mut d,
        );
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// Upper tail of Student's t law with `df` degrees of freedom, P(T > t).
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    let tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
    if t >= 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// Quantile of Student's t law: the t with P(T ≤ t) = p (bisection on [`student_t_sf`], to a
/// relative 1e-14).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return f64::NAN;
    }
    if p < 0.5 {
        return -student_t_quantile(1.0 - p, df);
    }
    let q = 1.0 - p;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_sf(hi, df) > q {
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_sf(mid, df) > q {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-14 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Power the "smallest detectable change" is defined for: a change this large is found in 80 %
/// of runs like this one.
pub const DETECTION_POWER: f64 = 0.8;

/// A random-effects estimate of the ratio NEW/OLD over several process pairs.
///
/// Model, on the log scale: pair j's estimate is θⱼ = μ + uⱼ + eⱼ, where uⱼ ~ (0, τ²) is what
/// this pair's processes add (their memory layouts, the CPU they ran on, the machine's state
/// while they ran) and eⱼ ~ (0, sⱼ²) the noise within the pair, sⱼ its own standard error. The
/// estimate is the inverse-variance weighted mean with weights 1/(sⱼ² + τ̂²), τ̂² the
/// DerSimonian–Laird moment estimate of the spread between pairs; its variance is the
/// Hartung–Knapp–Sidik–Jonkman one, max(1, q)/Σw with q = Σwⱼ(θⱼ − μ̂)²/(k − 1) — the observed
/// dispersion of the pairs around the mean, never less than the model's — and the interval and
/// the p-value use Student's t with k − 1 degrees of freedom. With equal sⱼ this is the plain
/// t-interval over the θⱼ whenever their spread exceeds sⱼ (the usual case); with unequal sⱼ
/// (a pair that shared its CPU with a busy neighbour) the quiet pairs count for more, and the
/// interval still includes the spread between pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomEffects {
    /// exp of the weighted mean log-ratio over pairs.
    pub ratio: f64,
    pub ci95: (f64, f64),
    /// Two-sided p-value that the mean log-ratio is 0 (t with k − 1 degrees of freedom).
    pub p_value: f64,
    /// Pairs the estimate rests on; degrees of freedom k − 1.
    pub pairs: usize,
    /// Standard error of the mean log-ratio (Hartung–Knapp–Sidik–Jonkman).
    pub se: f64,
    /// DerSimonian–Laird estimate of the variance between pairs, τ̂².
    pub tau2: f64,
    /// Standard deviation of the pairs' log-ratios (their observed spread).
    pub spread_sd: f64,
    /// Root mean square of the within-pair standard errors sⱼ.
    pub within_se: f64,
    /// Share of the variance of θⱼ that the noise within pairs explains (mean sⱼ² / var θ,
    /// at most 1); the rest, `between_share`, comes from the pairs themselves.
    pub within_share: f64,
    pub between_share: f64,
    /// Smallest relative change (e.g. 0.004 = 0.4 %) this run would detect with
    /// [`DETECTION_POWER`] at α = 5 %: exp((t₀.₉₇₅ + t₀.₈) · se) − 1, k − 1 degrees of freedom.
    pub smallest_detectable: f64,
}

/// Smallest within-pair standard error (log scale) a weight uses: a pair whose rounds all
/// agree still carries a timer step of uncertainty, and no pair may take all the weight.
pub const MIN_WITHIN_SE: f64 = 1e-5;

/// The random-effects mean of `theta` given within-pair standard errors `within_se`:
/// (mean, se, τ̂²), as described on [`RandomEffects`]. `None` with fewer than two values.
pub fn random_effects_mean(theta: &[f64], within_se: &[f64]) -> Option<(f64, f64, f64)> {
    let k = theta.len();
    if k < 2 || within_se.len() != k {
        return None;
    }
    let v: Vec<f64> = within_se
        .iter()
        .map(|s| s.max(MIN_WITHIN_SE).powi(2))
        .collect();
    let weighted = |w: &[f64]| {
        let sw: f64 = w.iter().sum();
        let mean = w.iter().zip(theta).map(|(w, t)| w * t).sum::<f64>() / sw;
        let q: f64 = w
            .iter()
            .zip(theta)
            .map(|(w, t)| w * (t - mean).powi(2))
            .sum();
        (sw, mean, q)
    };
    let w0: Vec<f64> = v.iter().map(|v| 1.0 / v).collect();
    let (sw0, _, q0) = weighted(&w0);
    let c = sw0 - w0.iter().map(|w| w * w).sum::<f64>() / sw0;
    let df = (k - 1) as f64;
    let tau2 = if c > 0.0 {
        ((q0 - df) / c).max(0.0)
    } else {
        0.0
    };
    let w: Vec<f64> = v.iter().map(|v| 1.0 / (v + tau2)).collect();
    let (sw, mean, q) = weighted(&w);
    let se = ((q / df).max(1.0) / sw).sqrt();
    Some((mean, se, tau2))
}

/// The random-effects interval of the mean log-ratio at two-sided level `conf` (e.g. 0.95):
/// (mean, lo, hi). `None` with fewer than two pairs.
pub fn random_effects_interval(
    theta: &[f64],
    within_se: &[f64],
    conf: f64,
) -> Option<(f64, f64, f64)> {
    let (mean, se, _) = random_effects_mean(theta, within_se)?;
    let t = student_t_quantile(0.5 + conf / 2.0, (theta.len() - 1) as f64);
    Some((mean, mean - t * se, mean + t * se))
}

/// Why a random-effects interval cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RandomEffectsError {
    #[error("{0} process pair(s): the spread between pairs needs at least 2")]
    TooFewPairs(usize),
    #[error("pair {0}: its estimate is not a finite log-ratio")]
    NotFinite(usize),
}

/// Combine per-pair log-ratio estimates `theta` (ln NEW/OLD) and their within-pair standard
/// errors `within_se` (same length) into a random-effects estimate.
pub fn random_effects(
    theta: &[f64],
    within_se: &[f64],
) -> Result<RandomEffects, RandomEffectsError> {
    let k = theta.len();
    if k < 2 || within_se.len() != k {
        return Err(RandomEffectsError::TooFewPairs(k.min(within_se.len())));
    }
    if let Some(i) = theta
        .iter()
        .zip(within_se)
        .position(|(t, s)| !t.is_finite() || !s.is_finite())
    {
        return Err(RandomEffectsError::NotFinite(i));
    }
    let (mean, se, tau2) =
        random_effects_mean(theta, within_se).ok_or(RandomEffectsError::TooFewPairs(k))?;
    let df = (k - 1) as f64;
    let t975 = student_t_quantile(0.975, df);
    let (lo, hi) = (mean - t975 * se, mean + t975 * se);
    let sd = crate::stats::std_dev(theta);
    let p_value = if se > 0.0 {
        (2.0 * student_t_sf((mean / se).abs(), df)).min(1.0)
    } else if mean == 0.0 {
        1.0
    } else {
        0.0
    };
    let within_var = within_se.iter().map(|s| s * s).sum::<f64>() / k as f64;
    let total_var = sd * sd;
    let within_share = if total_var > 0.0 {
        (within_var / total_var).min(1.0)
    } else {
        1.0
    };
    let reach = (t975 + student_t_quantile(DETECTION_POWER, df)) * se;
    Ok(RandomEffects {
        ratio: mean.exp(),
        ci95: (lo.exp(), hi.exp()),
        p_value,
        pairs: k,
        se,
        tau2,
        spread_sd: sd,
        within_se: within_var.sqrt(),
        within_share,
        between_share: 1.0 - within_share,
        smallest_detectable: reach.exp() - 1.0,
    })
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

    fn brute_walsh(d: &[f64]) -> Vec<f64> {
        let mut w = Vec::new();
        for i in 0..d.len() {
            for j in i..d.len() {
                w.push((d[i] + d[j]) / 2.0);
            }
        }
        crate::stats::sorted(&w)
    }

    #[test]
    fn selection_matches_brute_force() {
        let d = [0.3, -1.0, 2.5, 0.3, 0.0, -0.0, 7.0, 1e-3, -2.0, 0.3];
        let s = crate::stats::sorted(&d);
        let w = brute_walsh(&d);
        for (k, want) in w.iter().enumerate() {
            assert_eq!(kth_walsh(&s, k), *want, "k = {k}");
        }
        let x = crate::stats::sorted(&[1.0, 3.0, 3.0, -2.0]);
        let y = crate::stats::sorted(&[0.5, 4.0, 1.0]);
        let mut diffs: Vec<f64> = y
            .iter()
            .flat_map(|b| x.iter().map(move |a| b - a))
            .collect();
        diffs = crate::stats::sorted(&diffs);
        for (k, want) in diffs.iter().enumerate() {
            assert_eq!(kth_difference(&x, &y, k), *want, "k = {k}");
        }
    }

    #[test]
    fn mann_whitney_counts_sum_to_binomial() {
        let c = mw_counts(4, 3);
        assert_eq!(c.iter().sum::<u128>(), 35);
        assert_eq!(c, vec![1, 1, 2, 3, 4, 4, 5, 4, 4, 3, 2, 1, 1]);
        assert_eq!(mw_counts(3, 4), c);
        assert_eq!(mw_counts(1, 2500).len(), 2501);
        let big = mw_counts(50, 50);
        assert_eq!(
            big.iter().sum::<u128>(),
            100_891_344_545_564_193_334_812_497_256
        );
    }

    #[test]
    fn signed_rank_counts_are_the_known_distribution() {
        assert_eq!(signed_rank_counts(3), vec![1, 1, 1, 2, 1, 1, 1]);
        assert_eq!(signed_rank_counts(50).iter().sum::<u64>(), 1u64 << 50);
    }

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
