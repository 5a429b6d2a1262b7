//! Statistics, pure functions with no I/O.
//!
//! Robust first: the median and its distribution-free confidence interval (order statistics of
//! a binomial(n, ½), exact for every n), the minimum, the IQR-based σ (IQR/1.349, equal to σ
//! for a normal law), the MAD, Tukey fences, outlier counts with the period of recurring
//! spikes, the worst sigma event. Quantiles use linear interpolation between order statistics
//! (numpy's default, "type 7"), so golden values computed with numpy match exactly
//! (`tests/suite/deterministic/stats_golden.rs`, fixtures from `scripts/gen_stats_fixtures.py`).

pub mod compare;
pub mod complexity;
pub mod random_effects;
pub mod rank;
pub mod steady;
pub mod student;
mod tails;

pub use tails::{binom_half_cdf, binom_half_pmf, normal_sf};

/// Sorted copy of the data (NaNs are not expected: samples are finite by construction).
pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// Quantile `q` in [0, 1] of *sorted* data, linear interpolation (numpy's default); NaN for
/// no data.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
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
/// (X_(j), X_(k)) with P(X_(j) ≤ median ≤ X_(k)) ≥ 95 % under binomial(n, ½), computed exactly
/// for every n (see [`median_ci_rank`]). Returns (lo, hi) of sorted data.
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

/// 0-based lower rank j of the distribution-free 95 % interval of the median: the largest j
/// with P(B ≤ j) ≤ 2.5 %, B ~ binomial(n, ½). The interval [x_(j), x_(n-1-j)] then covers the
/// median with probability 1 − 2·P(B ≤ j) ≥ 95 %.
///
/// Exact for every n: the normal approximation (with continuity correction) gives a first guess,
/// then the exact binomial tail ([`binom_half_cdf`], log-space, O(√n) per evaluation) moves it to
/// the right rank. For n < 6 no rank reaches 95 % and this returns 0 (the whole range).
pub fn median_ci_rank(n: usize) -> usize {
    if n < 6 {
        return 0;
    }
    let nf = n as f64;
    let guess = (nf / 2.0 - 0.5 - Z95 * nf.sqrt() / 2.0).floor().max(0.0) as usize;
    let mut j = guess.min(n / 2);
    while j > 0 && binom_half_cdf(j, n) > 0.025 {
        j -= 1;
    }
    while binom_half_cdf(j + 1, n) <= 0.025 {
        j += 1;
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
///     robust spread of the blocks' medians), which widens when the machine drifts during the
///     run: consecutive samples are then not independent and (1) alone would be too narrow.
pub fn median_interval(series: &[f64]) -> MedianInterval {
    let s = sorted(series);
    let med = median_sorted(&s);
    let (mut lo, mut hi) = median_ci_sorted(&s);
    if series.len() >= CI_BLOCKS * 5 {
        let len = series.len() / CI_BLOCKS;
        let meds: Vec<f64> = (0..CI_BLOCKS)
            .map(|b| median(&series[b * len..(b + 1) * len]))
            .collect();
        // The blocks' spread, robustly (IQR/1.349): a drift moves many blocks' medians, a
        // burst of the machine's noise that slows most of one block moves that block's alone,
        // and the median of all the samples barely (outliers say it, in their quietest
        // window). The standard deviation would take one such block for a drift of the run.
        let hw = T975_DF19 * iqr_sigma_sorted(&sorted(&meds)) / (CI_BLOCKS as f64).sqrt();
        lo = lo.min(med - hw);
        hi = hi.max(med + hw);
    }
    MedianInterval {
        median: med,
        lo,
        hi,
    }
}

/// The worst sigma event: the largest |x − median| / σ over the values, with σ a robust spread
/// (IQR/1.349 or a scaled MAD). A lone 40σ spike in otherwise quiet data is the signature of an
/// interrupt or a preemption. Returns 0 for empty data or when every value equals the median,
/// and +∞ when σ ≤ 0 but some value differs from the median.
pub fn worst_sigma(values: &[f64], median: f64, robust_sigma: f64) -> f64 {
    let worst = values
        .iter()
        .map(|x| (x - median).abs())
        .fold(0.0, f64::max);
    if worst == 0.0 {
        0.0
    } else if robust_sigma > 0.0 {
        worst / robust_sigma
    } else {
        f64::INFINITY
    }
}

/// Tukey fences at `k` × IQR, never closer to the median than `min_rel` of it (sorted data).
pub fn outlier_fences_sorted(sorted: &[f64], k: f64, min_rel: f64) -> (f64, f64) {
    let med = median_sorted(sorted);
    let (lo, hi) = tukey_fences_sorted(sorted, k);
    (
        lo.min(med - med.abs() * min_rel),
        hi.max(med + med.abs() * min_rel),
    )
}

/// Tukey's k for a mild outlier (beyond Q1 − 1.5·IQR or Q3 + 1.5·IQR).
pub const MILD_K: f64 = 1.5;
/// Tukey's k for a far outlier (beyond Q1 − 3·IQR or Q3 + 3·IQR).
pub const FAR_K: f64 = 3.0;
/// Fewest high far outliers from which a period is estimated (four gaps or more).
pub const PERIOD_MIN_OUTLIERS: usize = 5;
/// Largest spread of the gaps (IQR/1.349), relative to their median, still called regular.
pub const PERIOD_MAX_REL_SPREAD: f64 = 0.25;

/// Outlier counts by Tukey fences, and the period of the high far outliers when they recur
/// regularly.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outliers {
    /// Between Q1 − 3·IQR (inclusive) and Q1 − 1.5·IQR (exclusive).
    pub low_mild: usize,
    /// Between Q3 + 1.5·IQR (exclusive) and Q3 + 3·IQR (inclusive).
    pub high_mild: usize,
    /// Below Q1 − 3·IQR.
    pub low_far: usize,
    /// Above Q3 + 3·IQR.
    pub high_far: usize,
    /// Median time between consecutive high far outliers, when there are at least
    /// [`PERIOD_MIN_OUTLIERS`] of them and the gaps are regular (robust spread of the gaps below
    /// [`PERIOD_MAX_REL_SPREAD`] of their median): a scheduler tick (4 ms at 250 Hz, 1 ms at
    /// 1000 Hz) or a periodic interrupt.
    pub period_ns: Option<f64>,
}

impl Outliers {
    /// Number of outliers of every kind.
    pub fn total(&self) -> usize {
        self.low_mild + self.high_mild + self.low_far + self.high_far
    }
}

/// Classifies the values (in time order) against Tukey fences at k = 1.5 (mild) and k = 3
/// (far), with fences never closer to the median than `min_rel` of it for far outliers
/// (`min_rel / 2` for mild ones): on a quiet machine the IQR is so small that 3 × IQR is a
/// fraction of a percent, and samples a hair slower than the bulk are not disturbances. Each
/// value falls in at most one class. `times_ns[i]` is when value i was taken (e.g.
/// nanoseconds since the start of the run); when its length differs from `values`, no period
/// is estimated.
pub fn outliers_beyond(values_in_time_order: &[f64], times_ns: &[u64], min_rel: f64) -> Outliers {
    let mut out = Outliers::default();
    if values_in_time_order.is_empty() {
        return out;
    }
    let s = sorted(values_in_time_order);
    let (mild_lo, mild_hi) = outlier_fences_sorted(&s, MILD_K, min_rel / 2.0);
    let (far_lo, far_hi) = outlier_fences_sorted(&s, FAR_K, min_rel);
    let mut far_times = Vec::new();
    for (i, &x) in values_in_time_order.iter().enumerate() {
        if x < far_lo {
            out.low_far += 1;
        } else if x < mild_lo {
            out.low_mild += 1;
        } else if x > far_hi {
            out.high_far += 1;
            if let Some(&t) = times_ns.get(i) {
                far_times.push(t);
            }
        } else if x > mild_hi {
            out.high_mild += 1;
        }
    }
    if times_ns.len() == values_in_time_order.len() && far_times.len() >= PERIOD_MIN_OUTLIERS {
        out.period_ns = regular_period(&far_times);
    }
    out
}

/// Median gap between consecutive timestamps when the gaps are regular.
fn regular_period(times_ns: &[u64]) -> Option<f64> {
    let gaps: Vec<f64> = times_ns
        .windows(2)
        .map(|w| w[1].abs_diff(w[0]) as f64)
        .collect();
    let g = sorted(&gaps);
    let med = median_sorted(&g);
    if med <= 0.0 {
        return None;
    }
    (iqr_sigma_sorted(&g) / med < PERIOD_MAX_REL_SPREAD).then_some(med)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4000 samples around 100 (±0.1 %, a fixed pattern), with `level(i)` added.
    fn series(level: impl Fn(usize) -> f64) -> Vec<f64> {
        (0..4000)
            .map(|i| 100.0 * (1.0 + 0.001 * (((i * 7919) % 101) as f64 / 101.0 - 0.5)) + level(i))
            .collect()
    }

    #[test]
    fn a_drift_widens_the_interval_and_a_burst_in_one_block_does_not() {
        let quiet = median_interval(&series(|_| 0.0));
        assert!(quiet.rel_half_width() < 0.0005, "{quiet:?}");
        // The level drifts by 3 % over the run: the samples are not independent, and the
        // interval covers the drift's effect on the median.
        let drift = median_interval(&series(|i| 3.0 * i as f64 / 4000.0));
        assert!(drift.rel_half_width() > 0.003, "{drift:?}");
        // A burst slows most of one block of the twenty by a quarter (a busy neighbour for a
        // moment): the median of all the samples barely moves, and neither does its interval.
        let burst = median_interval(&series(|i| {
            if (1000..1200).contains(&i) && i % 4 != 0 {
                25.0
            } else {
                0.0
            }
        }));
        assert!(burst.rel_half_width() < 0.001, "{burst:?}");
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = sorted(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(median_sorted(&v), 2.5);
        assert_eq!(quantile_sorted(&v, 0.25), 1.75);
        assert_eq!(quantile_sorted(&v, 0.75), 3.25);
        assert!(quantile_sorted(&[], 0.5).is_nan());
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

    #[test]
    fn median_ci_rank_is_exact_for_large_n() {
        for n in [1001usize, 5000, 65537, 1_000_000] {
            let j = median_ci_rank(n);
            assert!(binom_half_cdf(j, n) <= 0.025, "n = {n}");
            assert!(binom_half_cdf(j + 1, n) > 0.025, "n = {n}");
        }
    }

    #[test]
    fn binomial_cdf_matches_direct_sum_for_small_n() {
        for n in 1..=40usize {
            let mut c = 1.0f64; // C(n, 0)
            let mut acc = 0.0;
            for k in 0..=n {
                acc += c / 2f64.powi(n as i32);
                let got = binom_half_cdf(k, n);
                assert!((got - acc).abs() <= 1e-13 * acc, "n={n} k={k} {got} {acc}");
                c = c * (n - k) as f64 / (k + 1) as f64;
            }
        }
    }

    #[test]
    fn worst_sigma_edges() {
        assert_eq!(worst_sigma(&[], 1.0, 1.0), 0.0);
        assert_eq!(worst_sigma(&[2.0, 2.0], 2.0, 0.0), 0.0);
        assert_eq!(worst_sigma(&[2.0, 3.0], 2.0, 0.0), f64::INFINITY);
        assert_eq!(worst_sigma(&[1.0, 2.0, 10.0], 2.0, 0.5), 16.0);
    }

    /// Deterministic pseudo-random numbers in [0, 1) (splitmix64).
    fn unit(state: &mut u64) -> f64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn outliers_find_a_scheduler_tick() {
        // Samples every 20 µs; every 4 ms (250 Hz) one sample is hit by the tick.
        let mut st = 7u64;
        let n = 2000;
        let times: Vec<u64> = (0..n as u64).map(|i| i * 20_000).collect();
        let values: Vec<f64> = (0..n)
            .map(|i| {
                let base = 100.0 + unit(&mut st);
                if i % 200 == 13 {
                    base + 50.0
                } else {
                    base
                }
            })
            .collect();
        let o = outliers_beyond(&values, &times, 0.0);
        assert_eq!(o.high_far, 10);
        assert_eq!(o.low_far + o.low_mild + o.high_mild, 0);
        assert_eq!(o.period_ns, Some(4_000_000.0));
        assert_eq!(o.total(), 10);

        // Irregular spikes: counted, but no period.
        let spikes = [13usize, 40, 400, 410, 1200, 1900];
        let values: Vec<f64> = (0..n)
            .map(|i| 100.0 + unit(&mut st) + if spikes.contains(&i) { 50.0 } else { 0.0 })
            .collect();
        let o = outliers_beyond(&values, &times, 0.0);
        assert_eq!(o.high_far, 6);
        assert_eq!(o.period_ns, None);
    }

    #[test]
    fn outliers_classify_mild_and_far() {
        // 0..=100 plus five points: Q1 = 23.25, Q3 = 75.75 (numpy), so the mild fences are
        // (-55.5, 154.5) and the far fences (-134.25, 233.25).
        let mut v: Vec<f64> = (0..=100).map(f64::from).collect();
        v.extend([200.0, 300.0, -100.0, -200.0, -150.0]);
        let o = outliers_beyond(&v, &[], 0.0);
        assert_eq!(
            o,
            Outliers {
                low_mild: 1,
                high_mild: 1,
                low_far: 2,
                high_far: 1,
                period_ns: None
            }
        );
    }

    #[test]
    fn outlier_fences_keep_a_floor_around_the_median() {
        // A tight bulk (±0.1 %) and samples 3 % and 20 % slower: by Tukey's fences alone both
        // are far; with a 10 % floor only the 20 % one is.
        let mut v: Vec<f64> = (0..100).map(|i| 100.0 + (i % 5) as f64 * 0.05).collect();
        v.extend([103.0, 120.0]);
        assert_eq!(outliers_beyond(&v, &[], 0.0).high_far, 2);
        let o = outliers_beyond(&v, &[], 0.10);
        assert_eq!((o.high_mild, o.high_far), (0, 1));
    }

    #[test]
    fn normal_sf_reference_points() {
        assert_eq!(normal_sf(0.0), 0.5);
        assert!((normal_sf(Z95) - 0.025).abs() < 1e-15);
        assert!((normal_sf(-Z95) - 0.975).abs() < 1e-15);
    }

    /// Coverage of the distribution-free median interval on iid data: ≈ 95 % (a little more,
    /// since the binomial is discrete), over 2000 seeded trials.
    #[test]
    fn median_ci_covers_the_true_median_about_95_percent() {
        let mut st = 42u64;
        let trials = 2000;
        let mut covered = 0;
        for t in 0..trials {
            let n = 30 + (t % 5) * 37;
            // Exponential law, true median ln 2.
            let xs: Vec<f64> = (0..n).map(|_| -(1.0 - unit(&mut st)).ln()).collect();
            let (lo, hi) = median_ci_sorted(&sorted(&xs));
            if lo <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= hi {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.93..=0.97).contains(&rate), "coverage {rate}");
    }
}
