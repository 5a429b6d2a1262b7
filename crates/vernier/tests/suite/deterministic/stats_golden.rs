//! Golden tests: `vernier::stats` against values computed once with numpy/scipy
//! (`scripts/gen_stats_fixtures.py`, fixtures committed under `tests/fixtures/stats/`),
//! plus property tests on the same functions.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::Value;
use vernier::stats;

const REL_TOL: f64 = 1e-9;

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/stats/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(num).collect()
}

#[track_caller]
fn close(what: &str, got: f64, want: f64) {
    let tol = REL_TOL * want.abs().max(1e-300);
    assert!(
        (got - want).abs() <= tol || got == want,
        "{what}: got {got:e}, want {want:e}"
    );
}

#[test]
fn descriptive_statistics_match_numpy() {
    let cases = fixture("descriptive.json");
    for c in cases.as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let data = nums(&c["data"]);
        let s = stats::sorted(&data);
        let at = |k: &str| format!("{name}: {k}");
        close(&at("median"), stats::median(&data), num(&c["median"]));
        close(&at("q25"), stats::quantile_sorted(&s, 0.25), num(&c["q25"]));
        close(&at("q75"), stats::quantile_sorted(&s, 0.75), num(&c["q75"]));
        close(&at("mean"), stats::mean(&data), num(&c["mean"]));
        close(&at("std"), stats::std_dev(&data), num(&c["std"]));
        close(
            &at("iqr_sigma"),
            stats::iqr_sigma_sorted(&s),
            num(&c["iqr_sigma"]),
        );
        close(&at("mad"), stats::mad_sorted(&s), num(&c["mad"]));
        match c["median_ci_rank"].as_u64() {
            Some(j) => assert_eq!(stats::median_ci_rank(data.len()), j as usize, "{name}"),
            None => assert!(data.len() < 6, "{name}"),
        }
        let (lo, hi) = stats::median_ci_sorted(&s);
        let ci = nums(&c["median_ci"]);
        assert_eq!((lo, hi), (ci[0], ci[1]), "{name}: median CI");
        for (k, key) in [(1.5, "tukey_1_5"), (3.0, "tukey_3")] {
            let (lo, hi) = stats::tukey_fences_sorted(&s, k);
            let want = nums(&c[key]);
            close(&at(key), lo, want[0]);
            close(&at(key), hi, want[1]);
        }
    }
}

#[test]
fn median_ci_ranks_match_the_exact_binomial() {
    let cases = fixture("median_ci_ranks.json");
    for c in cases.as_array().unwrap() {
        let n = c["n"].as_u64().unwrap() as usize;
        match c["j"].as_u64() {
            Some(j) => assert_eq!(stats::median_ci_rank(n), j as usize, "n = {n}"),
            // No rank reaches 95 %: the interval is the whole range.
            None => {
                assert!(n < 6, "n = {n}");
                assert_eq!(stats::median_ci_rank(n), 0);
            }
        }
    }
}

#[test]
fn linear_fit_matches_scipy_linregress() {
    let cases = fixture("regression.json");
    for c in cases.as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let f = stats::linear_fit(&nums(&c["x"]), &nums(&c["y"])).unwrap();
        close(&format!("{name}: slope"), f.slope, num(&c["slope"]));
        close(
            &format!("{name}: intercept"),
            f.intercept,
            num(&c["intercept"]),
        );
        close(&format!("{name}: r2"), f.r2, num(&c["r2"]));
        close(
            &format!("{name}: slope_se"),
            f.slope_se,
            num(&c["slope_se"]),
        );
    }
}

#[test]
fn normal_tail_matches_scipy() {
    let cases = fixture("normal_sf.json");
    for c in cases.as_array().unwrap() {
        let z = num(&c["z"]);
        close(&format!("sf({z})"), stats::normal_sf(z), num(&c["sf"]));
    }
}

#[test]
fn binomial_tail_matches_scipy_binomtest() {
    // Two-sided sign-test p-values from scipy.stats.binomtest(k, n, 0.5): for p = ½ they are
    // min(1, 2·P(B ≤ min(k, n − k))).
    let cases = fixture("sign_test.json");
    for c in cases.as_array().unwrap() {
        let k = c["k"].as_u64().unwrap() as usize;
        let n = c["n"].as_u64().unwrap() as usize;
        let p = (2.0 * stats::binom_half_cdf(k.min(n - k), n)).min(1.0);
        close(&format!("binomtest({k}, {n})"), p, num(&c["p"]));
    }
}

// ---- properties ----

fn config() -> Config {
    Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x5EED_57A7),
        failure_persistence: None,
        ..Config::default()
    }
}

fn data() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1e6f64..1e6, 1..200)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn median_lies_within_the_range(xs in data()) {
        let s = stats::sorted(&xs);
        let m = stats::median_sorted(&s);
        prop_assert!(s[0] <= m && m <= s[s.len() - 1]);
    }

    #[test]
    fn median_ci_contains_the_median(xs in data()) {
        let s = stats::sorted(&xs);
        let m = stats::median_sorted(&s);
        let (lo, hi) = stats::median_ci_sorted(&s);
        prop_assert!(lo <= m && m <= hi);
        let iv = stats::median_interval(&xs);
        prop_assert!(iv.lo <= iv.median && iv.median <= iv.hi);
    }

    #[test]
    fn quantiles_are_monotone(xs in data(), a in 0.0f64..=1.0, b in 0.0f64..=1.0) {
        let s = stats::sorted(&xs);
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(stats::quantile_sorted(&s, a) <= stats::quantile_sorted(&s, b));
    }

    #[test]
    fn location_and_scale_are_equivariant(xs in data(), shift in -1e3f64..1e3, scale in 0.01f64..100.0) {
        let ys: Vec<f64> = xs.iter().map(|x| x * scale + shift).collect();
        let (sx, sy) = (stats::sorted(&xs), stats::sorted(&ys));
        let tol = |v: f64| 1e-9 * (v.abs() + scale * 1e6 + shift.abs());
        let m = stats::median_sorted(&sx) * scale + shift;
        prop_assert!((stats::median_sorted(&sy) - m).abs() <= tol(m));
        let (lx, hx) = stats::median_ci_sorted(&sx);
        let (ly, hy) = stats::median_ci_sorted(&sy);
        prop_assert!((ly - (lx * scale + shift)).abs() <= tol(ly));
        prop_assert!((hy - (hx * scale + shift)).abs() <= tol(hy));
        let q = stats::quantile_sorted(&sx, 0.3) * scale + shift;
        prop_assert!((stats::quantile_sorted(&sy, 0.3) - q).abs() <= tol(q));
        // Spreads scale and ignore the shift.
        let iqr = stats::iqr_sigma_sorted(&sx) * scale;
        prop_assert!((stats::iqr_sigma_sorted(&sy) - iqr).abs() <= tol(iqr));
        let mad = stats::mad_sorted(&sx) * scale;
        prop_assert!((stats::mad_sorted(&sy) - mad).abs() <= tol(mad));
        let sd = stats::std_dev(&xs) * scale;
        prop_assert!((stats::std_dev(&ys) - sd).abs() <= tol(sd));
    }

    #[test]
    fn linear_fit_is_exact_on_lines(
        xs in prop::collection::btree_set(-1000i32..1000, 2..50),
        a in -1e3f64..1e3,
        b in -1e3f64..1e3,
    ) {
        let xs: Vec<f64> = xs.into_iter().map(f64::from).collect();
        let ys: Vec<f64> = xs.iter().map(|x| a + b * x).collect();
        let f = stats::linear_fit(&xs, &ys).unwrap();
        let scale = a.abs() + 1000.0 * b.abs() + 1.0;
        prop_assert!((f.slope - b).abs() <= 1e-9 * scale);
        prop_assert!((f.intercept - a).abs() <= 1e-9 * scale);
        prop_assert!(f.slope_se <= 1e-9 * scale);
        if b != 0.0 {
            prop_assert!((f.r2 - 1.0).abs() <= 1e-9);
        }
    }

    #[test]
    fn median_ci_rank_is_the_exact_binomial_rank(n in 6usize..3000) {
        let j = stats::median_ci_rank(n);
        prop_assert!(stats::binom_half_cdf(j, n) <= 0.025);
        prop_assert!(stats::binom_half_cdf(j + 1, n) > 0.025);
    }
}
