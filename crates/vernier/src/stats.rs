//! Statistics, pure functions with no I/O.
//!
//! Robust first: the median and its distribution-free confidence interval (order statistics of
//! a binomial(n, ½)), the minimum, the IQR-based σ (IQR/1.349, equal to σ for a normal law),
//! the MAD, Tukey fences. Quantiles use linear interpolation between order statistics
//! (numpy's default, "type 7"), so golden values computed with numpy match exactly.

/// Sorted copy of the data (NaNs are not expected: samples are finite by construction).
pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// Quantile `q` in [0, 1] of *sorted* data, linear interpolation (numpy's default).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of empty data");
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

pub fn median_sorted(sorted: &[f64]) -> f64 {
    quantile_sorted(sorted, 0.5)
}

pub fn median(xs: &[f64]) -> f64 {
    median_sorted(&sorted(xs))
}

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n − 1 denominator).
pub fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// The normal-consistent factor of the IQR: IQR / 1.349 estimates σ for a normal law.
pub const IQR_TO_SIGMA: f64 = 1.349;

/// Robust σ = IQR / 1.349, of sorted data.
pub fn iqr_sigma_sorted(sorted: &[f64]) -> f64 {
    (quantile_sorted(sorted, 0.75) - quantile_sorted(sorted, 0.25)) / IQR_TO_SIGMA
}

/// Median absolute deviation (raw, not scaled), of sorted data.
pub fn mad_sorted(sorted: &[f64]) -> f64 {
    let m = median_sorted(sorted);
    let dev = sorted_dev(sorted, m);
    median_sorted(&dev)
}

fn sorted_dev(xs: &[f64], m: f64) -> Vec<f64> {
    let mut d: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    d.sort_by(|a, b| a.total_cmp(b));
    d
}

/// Standard normal quantile for the two-sided 95 % level.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Distribution-free 95 % interval of the median: the pair of order statistics
/// (X_(j), X_(k)) with P(X_(j) ≤ median ≤ X_(k)) ≥ 95 % under binomial(n, ½).
/// Exact binomial for n ≤ 1000, normal approximation beyond. Returns (lo, hi) of sorted data.
pub fn median_ci_sorted(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    if n < 6 {
        // Fewer than 6 samples cannot reach 95 % coverage: the whole range is the interval.
        return (sorted[0], sorted[n - 1]);
    }
    let j = median_ci_rank(n);
    // j is 0-based: the interval is [x_(j), x_(n-1-j)].
    (sorted[j], sorted[n - 1 - j])
}

/// 0-based lower rank j of the distribution-free 95 % interval of the median.
pub fn median_ci_rank(n: usize) -> usize {
    if n > 1000 {
        let j = (n as f64 / 2.0 - Z95 * (n as f64).sqrt() / 2.0).floor();
        return (j.max(0.0) as usize).saturating_sub(1).min(n / 2);
    }
    // Largest j such that P(B ≤ j) ≤ 2.5 %, B ~ binomial(n, ½): then the interval
    // [x_(j), x_(n-1-j)] (0-based) covers the median with probability 1 − 2·P(B ≤ j) ≥ 95 %.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut cdf = 0.0;
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut j = 0;
    for i in 0..n {
        cdf += (ln_c + ln_half_n).exp();
        if cdf > 0.025 {
            break;
        }
        j = i;
        ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    j
}

/// Least-squares line y = a + b·x with its coefficient of determination and the
/// standard error of the slope.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearFit {
    pub intercept: f64,
    pub slope: f64,
    pub r2: f64,
    pub slope_se: f64,
}

/// Ordinary least squares on (x, y) points (`None` with fewer than two distinct x).
pub fn linear_fit(xs: &[f64], ys: &[f64]) -> Option<LinearFit> {
    let n = xs.len();
    if n < 2 || n != ys.len() {
        return None;
    }
    let mx = mean(xs);
    let my = mean(ys);
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my) * (y - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| {
            let r = y - (intercept + slope * x);
            r * r
        })
        .sum();
    let r2 = if syy > 0.0 { 1.0 - sse / syy } else { 1.0 };
    let slope_se = if n > 2 {
        (sse / (n - 2) as f64 / sxx).sqrt()
    } else {
        0.0
    };
    Some(LinearFit {
        intercept,
        slope,
        r2,
        slope_se,
    })
}

/// Tukey fences of sorted data: (lower, upper) at `k` × IQR beyond the quartiles.
pub fn tukey_fences_sorted(sorted: &[f64], k: f64) -> (f64, f64) {
    let q1 = quantile_sorted(sorted, 0.25);
    let q3 = quantile_sorted(sorted, 0.75);
    let iqr = q3 - q1;
    (q1 - k * iqr, q3 + k * iqr)
}

/// Student's t quantile at 97.5 % for `df` degrees of freedom (two-sided 95 % intervals).
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => Z95 + 2.4 / df as f64,
    }
}

/// Number of contiguous blocks for the batch-medians interval.
pub const CI_BLOCKS: usize = 20;
/// Student's t quantile, 97.5 %, 19 degrees of freedom (for `CI_BLOCKS` = 20).
const T975_DF19: f64 = 2.093_024_054_408_263;

/// The median of a series in time order with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MedianInterval {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
}

impl MedianInterval {
    /// Half-width of the interval relative to the median (the larger side).
    pub fn rel_half_width(&self) -> f64 {
        ((self.hi - self.median).max(self.median - self.lo)) / self.median.abs()
    }
}

/// 95 % interval of the median of a series *in time order*: the wider of
/// (1) the distribution-free order-statistic interval, exact for independent samples, and
/// (2) a batch-medians interval (the series cut into 20 contiguous blocks, Student's t on the
///     blocks' medians), which widens when the machine drifts during the run: consecutive
///     samples are then not independent and (1) alone would be too narrow.
pub fn median_interval(series: &[f64]) -> MedianInterval {
    let s = sorted(series);
    let med = median_sorted(&s);
    let (mut lo, mut hi) = median_ci_sorted(&s);
    if series.len() >= CI_BLOCKS * 5 {
        let len = series.len() / CI_BLOCKS;
        let meds: Vec<f64> = (0..CI_BLOCKS)
            .map(|b| median(&series[b * len..(b + 1) * len]))
            .collect();
        let hw = T975_DF19 * std_dev(&meds) / (CI_BLOCKS as f64).sqrt();
        lo = lo.min(med - hw);
        hi = hi.max(med + hw);
    }
    MedianInterval {
        median: med,
        lo,
        hi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = sorted(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(median_sorted(&v), 2.5);
        assert_eq!(quantile_sorted(&v, 0.25), 1.75);
        assert_eq!(quantile_sorted(&v, 0.75), 3.25);
    }

    #[test]
    fn median_ci_rank_small_n_matches_binomial_tables() {
        // Classical tables: n = 10 → (x_2, x_9) 1-based, i.e. j = 1 (0-based).
        assert_eq!(median_ci_rank(10), 1);
        // n = 20 → (x_6, x_15) 1-based → j = 5.
        assert_eq!(median_ci_rank(20), 5);
    }

    #[test]
    fn linear_fit_recovers_a_line() {
        let xs = [1.0, 2.0, 4.0, 8.0];
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 + 2.0 * x).collect();
        let f = linear_fit(&xs, &ys).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12);
        assert!((f.intercept - 3.0).abs() < 1e-12);
        assert!((f.r2 - 1.0).abs() < 1e-12);
    }
}
