//! Rank statistics of a shift, exact for every n: the Hodges–Lehmann estimate with its interval
//! and the Wilcoxon signed-rank and sign tests (paired), the Hodges–Lehmann shift with the
//! Mann–Whitney U test (unpaired). Order statistics of the Walsh averages and of the pairwise
//! differences are *selected* without being materialised (bisection on the bit pattern of the
//! value, counting with two pointers: O(n log n + 64·n)).
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

use crate::stats::{binom_half_cdf, normal_sf, Z95};

/// Largest number of non-zero log-ratios for the exact Wilcoxon distribution.
pub const WILCOXON_EXACT_MAX_N: usize = 50;
/// Largest n₁·n₂ for the exact Mann–Whitney distribution.
pub const MW_EXACT_MAX_PRODUCT: usize = 2500;

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
}
