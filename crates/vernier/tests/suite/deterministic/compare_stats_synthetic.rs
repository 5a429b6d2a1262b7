//! Behaviour of `vernier::stats::compare` on seeded synthetic benchmarks: interval coverage,
//! false alarms on A-vs-A, detection of a real shift, and the random-effects interval over
//! process pairs with random per-pair offsets. Deterministic (a fixed-seed generator
//! written here), so the rates below are the same on every run.

use vernier::stats::compare::{self as cs, Verdict};
use vernier::stats::{random_effects, student};

/// splitmix64 with Box–Muller normals.
struct Rng {
    state: u64,
    spare: Option<f64>,
}

impl Rng {
    fn new(seed: u64) -> Self {
        Rng {
            state: seed,
            spare: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let r = (-2.0 * self.unit().ln()).sqrt();
        let t = 2.0 * std::f64::consts::PI * self.unit();
        self.spare = Some(r * t.sin());
        r * t.cos()
    }
}

/// `n` interleaved pairs: a slow drift common to both members of a pair (the machine warming
/// up, another process starting), independent lognormal noise of log-sd `sigma` on each, and
/// NEW = `shift` × OLD in distribution.
fn paired_run(rng: &mut Rng, n: usize, shift: f64, sigma: f64) -> (Vec<f64>, Vec<f64>) {
    let phase = rng.unit() * 6.0;
    let (mut old, mut new) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let drift = (0.15 * (phase + i as f64 / 15.0).sin() + 0.05 * rng.normal()).exp();
        old.push(250.0 * drift * (sigma * rng.normal()).exp());
        new.push(250.0 * shift * drift * (sigma * rng.normal()).exp());
    }
    (old, new)
}

const TRIALS: usize = 500;

#[test]
fn paired_interval_covers_the_true_ratio_about_95_percent() {
    let mut rng = Rng::new(0xC0FF_EE01);
    let truth = 1.03;
    let mut covered = 0;
    for t in 0..TRIALS {
        // Both branches: exact distribution (n ≤ 50) and normal approximation.
        let n = [12, 30, 50, 120, 400][t % 5];
        let (old, new) = paired_run(&mut rng, n, truth, 0.02);
        let r = cs::paired(&old, &new).unwrap();
        if r.ci95.0 <= truth && truth <= r.ci95.1 {
            covered += 1;
        }
    }
    let rate = covered as f64 / TRIALS as f64;
    eprintln!("coverage {rate}");
    assert!((0.92..=0.98).contains(&rate), "coverage {rate}");
}

#[test]
fn unpaired_interval_covers_the_true_ratio_about_95_percent() {
    let mut rng = Rng::new(0xC0FF_EE02);
    let truth = 0.97;
    let mut covered = 0;
    for t in 0..TRIALS {
        let (n_old, n_new) = [(8, 11), (40, 50), (150, 120)][t % 3];
        let old: Vec<f64> = (0..n_old).map(|_| (0.05 * rng.normal()).exp()).collect();
        let new: Vec<f64> = (0..n_new)
            .map(|_| truth * (0.05 * rng.normal()).exp())
            .collect();
        let r = cs::unpaired(&old, &new).unwrap();
        if r.ci95.0 <= truth && truth <= r.ci95.1 {
            covered += 1;
        }
    }
    let rate = covered as f64 / TRIALS as f64;
    eprintln!("coverage {rate}");
    assert!((0.92..=0.98).contains(&rate), "coverage {rate}");
}

#[test]
fn a_versus_a_is_never_a_change() {
    // A-vs-A must not come out faster or slower; with few noisy samples the interval may stay
    // wider than the threshold (inconclusive), which is an honest answer, not a false alarm.
    let quiet = |v: Verdict| !matches!(v, Verdict::Slower | Verdict::Faster);
    let mut rng = Rng::new(0xC0FF_EE03);
    let mut paired_same = 0;
    let mut unpaired_same = 0;
    for t in 0..TRIALS {
        let n = [20, 60, 200][t % 3];
        let (old, new) = paired_run(&mut rng, n, 1.0, 0.02);
        let r = cs::paired(&old, &new).unwrap();
        if quiet(cs::verdict(
            r.ratio,
            r.ci95,
            r.p_value,
            cs::DEFAULT_THRESHOLD,
        )) {
            paired_same += 1;
        }
        // Unpaired: independent samples from one lognormal law (no common drift to cancel).
        let old: Vec<f64> = (0..n).map(|_| (0.02 * rng.normal()).exp()).collect();
        let new: Vec<f64> = (0..n + 7).map(|_| (0.02 * rng.normal()).exp()).collect();
        let r = cs::unpaired(&old, &new).unwrap();
        if quiet(cs::verdict(
            r.ratio,
            r.ci95,
            r.p_value,
            cs::DEFAULT_THRESHOLD,
        )) {
            unpaired_same += 1;
        }
    }
    let paired_rate = paired_same as f64 / TRIALS as f64;
    let unpaired_rate = unpaired_same as f64 / TRIALS as f64;
    eprintln!("no change: paired {paired_rate}, unpaired {unpaired_rate}");
    assert!(
        paired_rate >= 0.93,
        "paired rate without a change {paired_rate}"
    );
    assert!(
        unpaired_rate >= 0.93,
        "unpaired rate without a change {unpaired_rate}"
    );
}

#[test]
fn a_two_percent_shift_is_detected() {
    let mut rng = Rng::new(0xC0FF_EE04);
    for (shift, want) in [(1.02, Verdict::Slower), (1.0 / 1.02, Verdict::Faster)] {
        let (old, new) = paired_run(&mut rng, 100, shift, 0.005);
        let r = cs::paired(&old, &new).unwrap();
        let v = cs::verdict(r.ratio, r.ci95, r.p_value, cs::DEFAULT_THRESHOLD);
        assert_eq!(v, want, "{r:?}");
        assert!((r.ratio / shift - 1.0).abs() < 0.003, "{r:?}");
        assert!(r.sign_p_value.unwrap() < 1e-6, "{r:?}");
    }
}

#[test]
fn holm_keeps_a_suite_of_unchanged_benchmarks_quiet() {
    // 200 suites of 10 unchanged benchmarks: with Holm's adjustment, the share of suites that
    // report any change stays near α or below (no adjustment would give ≈ 1 − 0.95¹⁰ ≈ 40 %
    // before the threshold).
    let mut rng = Rng::new(0xC0FF_EE05);
    let suites = 200;
    let mut noisy_suites = 0;
    for _ in 0..suites {
        let results: Vec<cs::RatioEstimate> = (0..10)
            .map(|_| {
                let (old, new) = paired_run(&mut rng, 40, 1.0, 0.01);
                cs::paired(&old, &new).unwrap()
            })
            .collect();
        let p: Vec<f64> = results.iter().map(|r| r.p_value).collect();
        let adjusted = cs::holm(&p);
        let any = results.iter().zip(&adjusted).any(|(r, &pa)| {
            matches!(
                cs::verdict(r.ratio, r.ci95, pa, 0.0),
                Verdict::Slower | Verdict::Faster
            )
        });
        if any {
            noisy_suites += 1;
        }
    }
    let rate = noisy_suites as f64 / suites as f64;
    eprintln!("family-wise false alarm rate {rate}");
    assert!(rate <= 0.08, "family-wise false alarm rate {rate}");
}

#[test]
fn geomean_of_identical_ratios_is_that_ratio() {
    let g = cs::geomean(&[(1.1, (1.0, 1.21)), (1.1, (1.0, 1.21))]).unwrap();
    assert!((g.ratio - 1.1).abs() < 1e-12);
    // Two independent equal intervals: the mean's interval is narrower by √2.
    let half = (1.21f64.ln() - 1.0f64.ln()) / 2.0 / 2f64.sqrt();
    assert!((g.ci95.1.ln() - (1.1f64.ln() + half)).abs() < 1e-12);
    assert!(cs::geomean(&[]).is_none());
    assert!(cs::geomean(&[(0.0, (1.0, 1.0))]).is_none());
}

// Process pairs: per-pair offsets (layout, CPU) on top of the noise within each pair.

/// Mean and standard deviation (n − 1).
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// `k` pairs with a true log-ratio `shift`, a per-pair offset of sd `between` and per-round noise
/// of sd `noise` over `rounds` rounds: each pair's estimate and standard error, from its rounds.
fn pairs(
    rng: &mut Rng,
    k: usize,
    shift: f64,
    between: f64,
    noise: f64,
    rounds: usize,
) -> (Vec<f64>, Vec<f64>) {
    (0..k)
        .map(|_| {
            let offset = between * rng.normal();
            let d: Vec<f64> = (0..rounds)
                .map(|_| shift + offset + noise * rng.normal())
                .collect();
            let (mean, sd) = mean_sd(&d);
            (mean, sd / (rounds as f64).sqrt())
        })
        .unzip()
}

#[test]
fn coverage_with_random_per_pair_offsets_stays_near_95_percent() {
    let mut rng = Rng::new(0xC0FFEE);
    let trials = 2000;
    let (mut covered, mut naive_covered) = (0, 0);
    for _ in 0..trials {
        let (theta, se) = pairs(&mut rng, 6, 0.0, 0.004, 0.002, 100);
        let re = random_effects::random_effects(&theta, &se).unwrap();
        covered += usize::from(re.ci95.0 <= 1.0 && 1.0 <= re.ci95.1);
        // The interval of the within-pair noise alone (what one pooled process pair gives).
        let mean = theta.iter().sum::<f64>() / theta.len() as f64;
        let w = (se.iter().map(|s| s * s).sum::<f64>()).sqrt() / theta.len() as f64;
        naive_covered += usize::from(mean.abs() <= 1.96 * w);
        assert!(re.between_share > 0.5, "{re:?}");
    }
    let rate = covered as f64 / trials as f64;
    assert!((0.93..=0.97).contains(&rate), "coverage {rate}");
    // Ignoring the spread between pairs covers far less than 95 %.
    assert!(
        (naive_covered as f64) < 0.5 * trials as f64,
        "{naive_covered}"
    );
}

#[test]
fn a_fixed_shift_is_found_through_per_pair_offsets() {
    let mut rng = Rng::new(42);
    let mut found = 0;
    for _ in 0..200 {
        let (theta, se) = pairs(&mut rng, 8, 0.01f64.ln_1p(), 0.001, 0.002, 100);
        let re = random_effects::random_effects(&theta, &se).unwrap();
        let v = cs::verdict(re.ratio, re.ci95, re.p_value, 0.005);
        assert_ne!(v, cs::Verdict::Faster);
        found += usize::from(v == cs::Verdict::Slower);
        assert!(re.ci95.0 < 1.01 * 1.01 && re.ci95.1 > 1.01 / 1.01, "{re:?}");
    }
    assert!(found >= 190, "{found}/200");
}

#[test]
fn pairs_that_shared_their_cpu_count_for_less() {
    // Half the pairs are 8× noisier (a busy neighbour on their CPU); a small real spread
    // between pairs. The weighted interval keeps its coverage and is narrower than the plain
    // t-interval over the pairs, which gives every pair the same say.
    let mut rng = Rng::new(0xC0FF_EE07);
    let trials = 2000;
    let (mut covered, mut narrower) = (0, 0);
    for _ in 0..trials {
        let (mut theta, mut se) = (Vec::new(), Vec::new());
        for j in 0..8 {
            let noisy = j % 2 == 0;
            let (t, s) = pairs(
                &mut rng,
                1,
                0.0,
                0.0005,
                if noisy { 0.08 } else { 0.01 },
                100,
            );
            theta.push(t[0]);
            se.push(s[0]);
        }
        let re = random_effects::random_effects(&theta, &se).unwrap();
        covered += usize::from(re.ci95.0 <= 1.0 && 1.0 <= re.ci95.1);
        let (_, sd) = mean_sd(&theta);
        let plain = student::student_t_quantile(0.975, 7.0) * sd / 8f64.sqrt();
        narrower += usize::from((re.ci95.1.ln() - re.ci95.0.ln()) / 2.0 < plain);
    }
    let rate = covered as f64 / trials as f64;
    assert!((0.93..=0.985).contains(&rate), "coverage {rate}");
    assert!(narrower * 10 >= trials * 7, "{narrower}/{trials}");
}
