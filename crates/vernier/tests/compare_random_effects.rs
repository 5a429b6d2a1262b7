//! The process-pair statistics of `vernier compare`: golden values from scipy
//! (`scripts/gen_random_effects_fixtures.py`, `tests/fixtures/stats/random_effects.json`), and
//! synthetic pairs with random per-pair offsets (seeded): the interval's coverage stays near
//! 95 % where an interval of the within-pair noise alone would not, and a fixed shift is found.

use serde_json::Value;
use vernier::compare_stats as cs;
use vernier::suite::Rng;

fn fixture() -> Value {
    let path = format!(
        "{}/tests/fixtures/stats/random_effects.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[track_caller]
fn close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs().max(1e-300) || got == want,
        "{what}: got {got:e}, want {want:e}"
    );
}

#[test]
fn student_t_matches_scipy() {
    for c in fixture()["t"].as_array().unwrap() {
        let df = c["df"].as_f64().unwrap();
        if let Some(sf) = c.get("sf") {
            let t = c["t"].as_f64().unwrap();
            close(
                &format!("sf({t}, {df})"),
                cs::student_t_sf(t, df),
                sf.as_f64().unwrap(),
                1e-9,
            );
        } else {
            let p = c["p"].as_f64().unwrap();
            close(
                &format!("ppf({p}, {df})"),
                cs::student_t_quantile(p, df),
                c["ppf"].as_f64().unwrap(),
                1e-9,
            );
        }
    }
}

#[test]
fn random_effects_match_scipy() {
    for c in fixture()["random_effects"].as_array().unwrap() {
        let re = cs::random_effects(&nums(&c["theta"]), &nums(&c["within_se"])).unwrap();
        close("ratio", re.ratio, c["ratio"].as_f64().unwrap(), 1e-12);
        let ci = nums(&c["ci95"]);
        close("ci lo", re.ci95.0, ci[0], 1e-10);
        close("ci hi", re.ci95.1, ci[1], 1e-10);
        close("p", re.p_value, c["p_value"].as_f64().unwrap(), 1e-8);
        close(
            "within",
            re.within_share,
            c["within_share"].as_f64().unwrap(),
            1e-10,
        );
        close(
            "detectable",
            re.smallest_detectable,
            c["smallest_detectable"].as_f64().unwrap(),
            1e-8,
        );
        assert!((re.within_share + re.between_share - 1.0).abs() < 1e-12);
    }
}

#[test]
fn offline_intervals_match_scipy() {
    for c in fixture()["from_intervals"].as_array().unwrap() {
        let (o, n) = (nums(&c["old"]), nums(&c["new"]));
        let e = cs::from_intervals(o[0], (o[1], o[2]), n[0], (n[1], n[2])).unwrap();
        close("ratio", e.ratio, c["ratio"].as_f64().unwrap(), 1e-12);
        let ci = nums(&c["ci95"]);
        close("lo", e.ci95.0, ci[0], 1e-10);
        close("hi", e.ci95.1, ci[1], 1e-10);
        close("p", e.p_value, c["p_value"].as_f64().unwrap(), 1e-8);
    }
    assert!(cs::from_intervals(1.0, (0.0, 2.0), 1.0, (0.9, 1.1)).is_err());
}

#[test]
fn too_few_pairs_is_an_error() {
    assert!(cs::random_effects(&[0.01], &[0.001]).is_err());
    assert!(cs::random_effects(&[0.01, f64::NAN], &[0.001, 0.001]).is_err());
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u = rng.next_f64().max(1e-300);
    let v = rng.next_f64();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
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
            let offset = between * normal(rng);
            let d: Vec<f64> = (0..rounds)
                .map(|_| shift + offset + noise * normal(rng))
                .collect();
            let mean = d.iter().sum::<f64>() / rounds as f64;
            let sd =
                (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (rounds - 1) as f64).sqrt();
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
        let re = cs::random_effects(&theta, &se).unwrap();
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
        let re = cs::random_effects(&theta, &se).unwrap();
        let v = cs::verdict(re.ratio, re.ci95, re.p_value, 0.005);
        assert_ne!(v, cs::Verdict::Faster);
        found += usize::from(v == cs::Verdict::Slower);
        assert!(re.ci95.0 < 1.01 * 1.01 && re.ci95.1 > 1.01 / 1.01, "{re:?}");
    }
    assert!(found >= 190, "{found}/200");
}
