//! Change points in a benchmark's series of runs: where its time shifted, by how much, and
//! with what confidence.
//!
//! The method is Hunter's (MongoDB's signal processing, now Apache Otava): E-Divisive means
//! (Matteson & James 2014, with α = 1) proposes the split of a segment that most separates
//! the two sides' distributions, and a Student's t-test on the two sides (variance pooled,
//! Bonferroni-corrected for the candidate splits) decides whether the split is real; accepted
//! splits are searched again on each side (binary segmentation) until no split passes. A block
//! that differs from the runs on both sides of it (a regression later fixed), which no single
//! split separates, is looked for too ([`best_bump`]). Hunter replaced E-Divisive's permutation test by the
//! t-test because the permutation test is random (two runs of `history` could disagree) and
//! cannot be confident on short series: with 4 runs before and 3 after a step, no more than
//! 2 of the 35 ways to arrange them are as extreme, so its p-value never falls below 0.057.
//! See `docs/history.md`.
//!
//! Pure: a series in, change points out. The series is taken on the log scale, so shifts are
//! ratios and the interval of a shift is an interval of a ratio.

use vernier::stats::student::{student_t_quantile, student_t_sf};

/// Fewest runs on each side of a change point: one odd run is not a change point (it cannot
/// make a segment of its own), and a t-test needs a spread on each side.
pub const MIN_SEGMENT: usize = 2;
/// Largest p-value of the t-test for a split to be accepted: a change point is claimed with at
/// least 99 % confidence. Stricter than 5 % because a history is scanned for many benchmarks
/// and many splits at once; looser than Otava's 0.001 so that 4 runs before and 3 after a 10 %
/// step on a noisy machine (1–2 % between runs) are still found.
pub const MAX_P_VALUE: f64 = 0.01;

/// One run in a series: its per-iteration median and 95 % interval, and whether it may take
/// part in detection (a `core-slowed` or failed run is shown but is not evidence).
#[derive(Clone, Debug)]
pub struct Point {
    pub median_ns: f64,
    pub ci95_ns: [f64; 2],
    pub usable: bool,
}

/// A change point: the index (in the series given) of the first run of the new segment, the
/// ratio of the new segment's typical time to the old one's (geometric means of the runs'
/// medians) with its 95 % interval, and the confidence of the split (1 − p of the t-test).
#[derive(Clone, Debug, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub ratio: f64,
    pub ci95: [f64; 2],
    pub confidence: f64,
}

/// The smallest change of an exact count (instructions per iteration) that is a change point:
/// one instruction more per iteration is, the same code is not.
pub const EXACT_THRESHOLD: f64 = crate::args::INSTRUCTION_THRESHOLD;

/// The change points of a series of exact counts (`--instructions`), in order: counts repeat to
/// the last digit for the same code, so no test is needed; a usable run whose count differs
/// from the level before it by at least `threshold` opens a new level, even alone at the end
/// of the series (the newest commit's). The ratio is the new count over the previous level's
/// (the mean of its runs), exact: its interval is the ratio itself, and the confidence 1.
pub fn detect_exact(series: &[Point], threshold: f64) -> Vec<ChangePoint> {
    let mut out = Vec::new();
    let mut level: Vec<f64> = Vec::new();
    for (i, p) in series.iter().enumerate() {
        if !(p.usable && p.median_ns.is_finite() && p.median_ns > 0.0) {
            continue;
        }
        let x = p.median_ns;
        let mean = level.iter().sum::<f64>() / level.len().max(1) as f64;
        if !level.is_empty() && (x - mean).abs() >= threshold {
            let ratio = x / mean;
            out.push(ChangePoint {
                index: i,
                ratio,
                ci95: [ratio, ratio],
                confidence: 1.0,
            });
            level.clear();
        }
        level.push(x);
    }
    out
}

/// The change points of a series, in order. Runs not `usable` are skipped by the detection
/// (a change point never sits on one of them; it is placed at the first usable run of the new
/// segment) and do not weigh in the ratios.
pub fn detect(series: &[Point]) -> Vec<ChangePoint> {
    let idx: Vec<usize> = (0..series.len())
        .filter(|&i| {
            let p = &series[i];
            p.usable && p.median_ns.is_finite() && p.median_ns > 0.0
        })
        .collect();
    let x: Vec<f64> = idx.iter().map(|&i| series[i].median_ns.ln()).collect();
    // Each run's own uncertainty on the log scale (σ from its 95 % interval): the spread
    // between runs is never taken as smaller than what the runs themselves claim.
    let own: Vec<f64> = idx
        .iter()
        .map(|&i| {
            let [lo, hi] = series[i].ci95_ns;
            if lo > 0.0 && hi > lo && lo.is_finite() && hi.is_finite() {
                (hi.ln() - lo.ln()) / (2.0 * 1.96)
            } else {
                0.0
            }
        })
        .collect();
    let mut splits = Vec::new();
    segment(&x, &own, 0, x.len(), &mut splits);
    splits.sort_unstable();
    // Each accepted split is re-estimated against its neighbouring segments (its final
    // ratio and confidence are those of the segments it separates).
    let mut bounds = vec![0];
    bounds.extend(splits.iter().copied());
    bounds.push(x.len());
    let mut out = Vec::new();
    for k in 1..bounds.len() - 1 {
        let (a, b, c) = (bounds[k - 1], bounds[k], bounds[k + 1]);
        if let Some(t) =
            ttest(&x[a..b], &own[a..b], &x[b..c], &own[b..c]).filter(|t| t.p <= MAX_P_VALUE)
        {
            out.push(ChangePoint {
                index: idx[b],
                ratio: t.diff.exp(),
                ci95: [t.lo.exp(), t.hi.exp()],
                confidence: 1.0 - t.p,
            });
        }
    }
    out
}

/// Binary segmentation of `x[start..end]`: the best E-Divisive split, kept when the t-test
/// accepts it, then each side searched again. When no single split is accepted, a block that
/// differs from what surrounds it (a regression later fixed) is looked for: see [`best_bump`].
fn segment(x: &[f64], own: &[f64], start: usize, end: usize, out: &mut Vec<usize>) {
    if let Some(tau) = best_split(&x[start..end]).map(|t| start + t) {
        if let Some(t) = ttest(
            &x[start..tau],
            &own[start..tau],
            &x[tau..end],
            &own[tau..end],
        ) {
            // The best of the candidate splits was tested: Bonferroni over them.
            let candidates = (end - start + 1 - 2 * MIN_SEGMENT) as f64;
            if t.p * candidates <= MAX_P_VALUE {
                out.push(tau);
                segment(x, own, start, tau, out);
                segment(x, own, tau, end, out);
                return;
            }
        }
    }
    if let Some((i, j)) = best_bump(&x[start..end], &own[start..end]) {
        let (i, j) = (start + i, start + j);
        out.push(i);
        out.push(j);
        segment(x, own, start, i, out);
        segment(x, own, i, j, out);
        segment(x, own, j, end, out);
    }
}

/// The block `x[i..j]` (with at least [`MIN_SEGMENT`] runs inside and on each side) that
/// differs most from the runs around it (largest t against the outer runs taken
/// together), when that difference passes the t-test after a Bonferroni correction for the
/// number of blocks tried. A single split cannot see such a block: either side of any one
/// split mixes the block with runs like those around it.
fn best_bump(x: &[f64], own: &[f64]) -> Option<(usize, usize)> {
    let n = x.len();
    if n < 3 * MIN_SEGMENT {
        return None;
    }
    // Prefix sums of x, x² and the runs' own variances: each block's figures in O(1).
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    let mut so = vec![0.0; n + 1];
    // Centred on the mean, so the sums of squares keep their precision.
    let c = x.iter().sum::<f64>() / n as f64;
    for k in 0..n {
        let d = x[k] - c;
        s1[k + 1] = s1[k] + d;
        s2[k + 1] = s2[k] + d * d;
        so[k + 1] = so[k] + own[k] * own[k];
    }
    // Compared by t² = d²·m·o / (n·pooled), cross-multiplied (no division in the loop: the
    // search is O(n²) and runs on every series without a single split).
    let inv: Vec<f64> = (0..=n)
        .map(|k| if k == 0 { 0.0 } else { 1.0 / k as f64 })
        .collect();
    let inv_df = 1.0 / (n as f64 - 2.0);
    let own_all = so[n] * inv[n];
    // Best so far: (i, j, numerator d²·m·o, denominator pooled).
    let mut best: Option<(usize, usize, f64, f64)> = None;
    let mut tried = 0usize;
    for i in MIN_SEGMENT..=n - 2 * MIN_SEGMENT {
        for j in i + MIN_SEGMENT..=n - MIN_SEGMENT {
            tried += 1;
            let (m, o) = (j - i, n - (j - i));
            let (sm, qm) = (s1[j] - s1[i], s2[j] - s2[i]);
            let (so_, qo) = (s1[n] - sm, s2[n] - qm);
            let (mm, mo) = (sm * inv[m], so_ * inv[o]);
            let ss = (qm - sm * mm).max(0.0) + (qo - so_ * mo).max(0.0);
            let pooled = (ss * inv_df).max(own_all);
            let d = mm - mo;
            let num = d * d * (m * o) as f64;
            if pooled > 0.0 && best.is_none_or(|(_, _, bn, bd)| num * bd > bn * pooled) {
                best = Some((i, j, num, pooled));
            }
        }
    }
    let (i, j, _, _) = best?;
    let outer: Vec<f64> = x[..i].iter().chain(&x[j..]).copied().collect();
    let outer_own: Vec<f64> = own[..i].iter().chain(&own[j..]).copied().collect();
    let t = ttest(&outer, &outer_own, &x[i..j], &own[i..j])?;
    (t.p * tried as f64 <= MAX_P_VALUE).then_some((i, j))
}

/// E-Divisive means (α = 1): the split τ maximising
/// Q(τ) = m·k/(m+k) · (2/(m·k) Σ|aᵢ−bⱼ| − Σ_{i<j}|aᵢ−aⱼ|/C(m,2) − Σ_{i<j}|bᵢ−bⱼ|/C(k,2))
/// with A = x[..τ] (m runs) and B = x[τ..] (k runs), both at least [`MIN_SEGMENT`] long.
/// O(n log n): the within-side sums are updated as τ moves, each run's distance to the runs
/// already in A read from a Fenwick tree over the runs' ranks.
pub fn best_split(x: &[f64]) -> Option<usize> {
    let n = x.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    // Centred, so the sums below keep their precision.
    let c = x.iter().sum::<f64>() / n as f64;
    let x: Vec<f64> = x.iter().map(|v| v - c).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut rank = vec![0; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    // Each run's summed distance to every run: from the sorted prefix sums.
    let mut prefix = vec![0.0; n + 1];
    for (r, &i) in order.iter().enumerate() {
        prefix[r + 1] = prefix[r] + x[i];
    }
    let to_all = |i: usize| {
        let (r, v) = (rank[i], x[i]);
        (r as f64 * v - prefix[r]) + (prefix[n] - prefix[r + 1] - (n - r - 1) as f64 * v)
    };
    let total = (0..n).map(to_all).sum::<f64>() / 2.0;
    let mut a = Fenwick::new(n);
    let (mut within_a, mut within_b) = (0.0, total);
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..n - MIN_SEGMENT + 1 {
        // Move x[tau-1] from B to A.
        let i = tau - 1;
        let (r, v) = (rank[i], x[i]);
        let (cl, sl) = a.below(r);
        let (ca, sa) = (a.count, a.sum);
        let to_a = (cl as f64 * v - sl) + (sa - sl - (ca - cl) as f64 * v);
        let to_b = to_all(i) - to_a;
        within_a += to_a;
        within_b -= to_b;
        a.add(r, v);
        if tau < MIN_SEGMENT {
            continue;
        }
        let (m, k) = (tau as f64, (n - tau) as f64);
        let cross = total - within_a - within_b;
        let e = 2.0 * cross / (m * k)
            - within_a / (m * (m - 1.0) / 2.0)
            - within_b / (k * (k - 1.0) / 2.0);
        let q = m * k / (m + k) * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best.filter(|&(_, q)| q > 1e-12).map(|(t, _)| t)
}

/// Counts and sums of values by rank, with prefix queries in O(log n).
struct Fenwick {
    count_tree: Vec<usize>,
    sum_tree: Vec<f64>,
    count: usize,
    sum: f64,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick {
            count_tree: vec![0; n + 1],
            sum_tree: vec![0.0; n + 1],
            count: 0,
            sum: 0.0,
        }
    }

    fn add(&mut self, rank: usize, v: f64) {
        self.count += 1;
        self.sum += v;
        let mut k = rank + 1;
        while k < self.count_tree.len() {
            self.count_tree[k] += 1;
            self.sum_tree[k] += v;
            k += k & k.wrapping_neg();
        }
    }

    /// Count and sum of the values of rank below `rank`.
    fn below(&self, rank: usize) -> (usize, f64) {
        let (mut c, mut s) = (0, 0.0);
        let mut k = rank;
        while k > 0 {
            c += self.count_tree[k];
            s += self.sum_tree[k];
            k -= k & k.wrapping_neg();
        }
        (c, s)
    }
}

/// Student's t-test of mean(b) − mean(a) on the log scale, the variance pooled over both
/// sides (the runs of one benchmark on one machine scatter alike before and after a change of
/// code; pooling keeps a side of two runs that happen to agree from looking exact).
struct TTest {
    diff: f64,
    lo: f64,
    hi: f64,
    p: f64,
}

fn ttest(a: &[f64], own_a: &[f64], b: &[f64], own_b: &[f64]) -> Option<TTest> {
    if a.len() < MIN_SEGMENT || b.len() < MIN_SEGMENT {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let ma = a.iter().sum::<f64>() / na;
    let mb = b.iter().sum::<f64>() / nb;
    let ss = a.iter().map(|v| (v - ma).powi(2)).sum::<f64>()
        + b.iter().map(|v| (v - mb).powi(2)).sum::<f64>();
    let own = own_a.iter().chain(own_b).map(|s| s * s).sum::<f64>() / (na + nb);
    let df = na + nb - 2.0;
    let pooled = (ss / df).max(own);
    let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
    let diff = mb - ma;
    if se <= 0.0 {
        // No spread at all (runs that claim no uncertainty): only an exact equality is no
        // change.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        return Some(TTest {
            diff,
            lo: diff,
            hi: diff,
            p,
        });
    }
    let p = (2.0 * student_t_sf((diff / se).abs(), df)).min(1.0);
    let q = student_t_quantile(0.975, df);
    Some(TTest {
        diff,
        lo: diff - q * se,
        hi: diff + q * se,
        p,
    })
}

#[cfg(test)]
mod tests {

    fn counts(values: &[f64]) -> Vec<Point> {
        values
            .iter()
            .map(|&v| Point {
                median_ns: v,
                ci95_ns: [v, v],
                usable: true,
            })
            .collect()
    }

    #[test]
    fn an_exact_count_changes_at_the_first_run_of_a_new_level_and_only_there() {
        // c1–c4 at 1000 instructions (twice each), c5–c7 at 1010 (+1 %).
        let v = [
            1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1010.0, 1010.0, 1010.0,
        ];
        let cps = detect_exact(&counts(&v), EXACT_THRESHOLD);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!((cps[0].index, cps[0].ratio), (8, 1.01));
        // The same code again and again: none.
        assert!(detect_exact(&counts(&v[..8]), EXACT_THRESHOLD).is_empty());
        // One instruction more, at the newest run alone: a change point there.
        let cps = detect_exact(&counts(&[143.0, 143.0, 144.0]), EXACT_THRESHOLD);
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [2]);
        // A failed run is no level.
        let mut s = counts(&[143.0, 150.0, 143.0]);
        s[1].usable = false;
        assert!(detect_exact(&s, EXACT_THRESHOLD).is_empty());
    }

    use super::*;

    /// A run with a ±0.3 % interval, its median wobbling deterministically by up to ±0.8 %.
    fn run(base: f64, k: usize) -> Point {
        let wobble = [
            0.0, 0.006, -0.004, 0.008, -0.007, 0.002, -0.001, 0.005, -0.006, 0.003,
        ];
        let m = base * (1.0 + wobble[k % wobble.len()]);
        Point {
            median_ns: m,
            ci95_ns: [m * 0.997, m * 1.003],
            usable: true,
        }
    }

    fn series(levels: &[f64]) -> Vec<Point> {
        levels.iter().enumerate().map(|(k, &l)| run(l, k)).collect()
    }

    #[test]
    fn a_step_is_found_where_it_happened_with_its_ratio() {
        let s = series(&[100.0, 100.0, 100.0, 100.0, 110.0, 110.0, 110.0]);
        let cps = detect(&s);
        assert_eq!(cps.len(), 1, "{cps:?}");
        let c = &cps[0];
        assert_eq!(c.index, 4);
        assert!((c.ratio - 1.10).abs() < 0.01, "{c:?}");
        assert!(c.ci95[0] < 1.10 && c.ci95[1] > 1.10, "{c:?}");
        assert!(c.ci95[1] - c.ci95[0] < 0.06, "{c:?}");
        assert!(c.confidence >= 1.0 - MAX_P_VALUE, "{c:?}");
    }

    #[test]
    fn no_step_no_change_point() {
        let s = series(&[100.0; 30]);
        assert!(detect(&s).is_empty());
    }

    #[test]
    fn one_odd_run_is_not_a_change_point() {
        // In the middle, and as the newest run.
        let mut levels = vec![100.0; 12];
        levels[6] = 150.0;
        assert!(detect(&series(&levels)).is_empty());
        let mut levels = vec![100.0; 12];
        levels[11] = 150.0;
        assert!(detect(&series(&levels)).is_empty());
    }

    #[test]
    fn core_slowed_runs_alone_make_no_change_point() {
        let mut s = series(&[100.0; 10]);
        for p in &mut s[6..] {
            p.median_ns *= 1.8;
            p.usable = false;
        }
        assert!(detect(&s).is_empty());
        // With them usable, the same series has one at 6: the flag is what keeps it out.
        for p in &mut s[6..] {
            p.usable = true;
        }
        assert_eq!(detect(&s).iter().map(|c| c.index).collect::<Vec<_>>(), [6]);
    }

    #[test]
    fn a_change_point_skips_unusable_runs() {
        let mut s = series(&[100.0, 100.0, 100.0, 100.0, 90.0, 90.0, 90.0, 90.0]);
        s[4].usable = false;
        let cps = detect(&s);
        assert_eq!(cps.len(), 1);
        assert_eq!(cps[0].index, 5);
        assert!(cps[0].ratio < 1.0);
    }

    #[test]
    fn two_steps_both_found() {
        let mut levels = vec![100.0; 8];
        levels.extend([120.0; 8]);
        levels.extend([100.0; 8]);
        let cps = detect(&series(&levels));
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [8, 16]);
        assert!(cps[0].ratio > 1.15 && cps[1].ratio < 0.87);
    }

    #[test]
    fn a_regression_later_fixed_gives_two_change_points() {
        let mut levels = vec![100.0; 4];
        levels.extend([110.0; 3]);
        levels.extend([100.0; 3]);
        let cps = detect(&series(&levels));
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [4, 7]);
    }

    /// Gaussian noise from a seeded generator (Box–Muller on a 64-bit LCG).
    fn noisy(n: usize, sigma: f64, seed: u64) -> Vec<Point> {
        let mut state = seed;
        let mut uniform = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let z =
                    (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
                let m = 100.0 * (sigma * z).exp();
                Point {
                    median_ns: m,
                    ci95_ns: [m * 0.997, m * 1.003],
                    usable: true,
                }
            })
            .collect()
    }

    #[test]
    fn pure_noise_makes_no_change_point() {
        // Runs scattered by 1 % between them, around one level: long and short series.
        let mut false_alarms = 0;
        for seed in 1..=20 {
            for n in [7, 30, 200] {
                false_alarms += detect(&noisy(n, 0.01, seed)).len();
            }
        }
        // 60 series, each searched with a 1 % risk per accepted split.
        assert!(false_alarms <= 1, "{false_alarms} false change points");
    }

    #[test]
    fn a_step_in_noise_is_found() {
        let mut s = noisy(40, 0.01, 7);
        for p in &mut s[25..] {
            p.median_ns *= 1.05;
        }
        let cps = detect(&s);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert!((24..=26).contains(&cps[0].index), "{cps:?}");
        assert!(cps[0].ci95[0] < 1.05 && cps[0].ci95[1] > 1.05, "{cps:?}");
    }

    /// The split of `s` with the largest Q(τ), from the definition (O(n³)).
    fn direct_best_split(s: &[f64]) -> usize {
        let within = |w: &[f64]| {
            let mut t = 0.0;
            for i in 0..w.len() {
                for j in i + 1..w.len() {
                    t += (w[i] - w[j]).abs();
                }
            }
            t / (w.len() * (w.len() - 1) / 2) as f64
        };
        let q = |tau: usize| {
            let (a, b) = s.split_at(tau);
            let (m, k) = (a.len() as f64, b.len() as f64);
            let cross: f64 = a
                .iter()
                .flat_map(|u| b.iter().map(move |v| (u - v).abs()))
                .sum();
            m * k / (m + k) * (2.0 * cross / (m * k) - within(a) - within(b))
        };
        (MIN_SEGMENT..=s.len() - MIN_SEGMENT)
            .max_by(|&i, &j| q(i).total_cmp(&q(j)))
            .unwrap()
    }

    #[test]
    fn best_split_matches_the_direct_formula() {
        let x = [1.0, 1.2, 0.9, 3.0, 3.1, 2.8, 3.3];
        assert_eq!(direct_best_split(&x), 3);
        assert_eq!(best_split(&x), Some(3));
        // On noisy series the fast sums must agree with the direct ones.
        for seed in 1..=10 {
            let s: Vec<f64> = noisy(40, 0.01, seed)
                .iter()
                .map(|p| p.median_ns.ln())
                .collect();
            assert_eq!(best_split(&s), Some(direct_best_split(&s)), "seed {seed}");
        }
    }

    #[test]
    fn too_short_series_have_none() {
        assert!(detect(&series(&[100.0, 200.0, 200.0])).is_empty());
        assert!(detect(&[]).is_empty());
    }
}
