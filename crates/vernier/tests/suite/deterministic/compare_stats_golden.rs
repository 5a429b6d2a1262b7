//! Golden tests: `vernier::stats` (compare, rank, student, random_effects) against
//! scipy/statsmodels (`scripts/gen_stats_fixtures.py` and
//! `scripts/gen_random_effects_fixtures.py`, fixtures under `tests/fixtures/stats/`).

use serde_json::Value;
use vernier::stats::compare as cs;
use vernier::stats::{random_effects, rank, student};

const REL_TOL: f64 = 1e-9;

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/stats/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[track_caller]
fn close(what: &str, got: f64, want: f64) {
    close_rel(what, got, want, REL_TOL)
}

#[track_caller]
fn close_rel(what: &str, got: f64, want: f64, rel: f64) {
    let tol = rel * want.abs();
    assert!(
        (got - want).abs() <= tol || got == want,
        "{what}: got {got:e}, want {want:e}"
    );
}

#[test]
fn paired_statistics_match_scipy() {
    for c in fixture("paired.json").as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let d = nums(&c["d"]);
        close(
            &format!("{name}: wilcoxon p"),
            rank::wilcoxon_signed_rank(&d),
            c["wilcoxon_p"].as_f64().unwrap(),
        );
        close(
            &format!("{name}: sign p"),
            rank::sign_test(&d),
            c["sign_p"].as_f64().unwrap(),
        );
        close(
            &format!("{name}: hl"),
            rank::hodges_lehmann_paired(&d),
            c["hl"].as_f64().unwrap(),
        );
        let ci = nums(&c["ci"]);
        assert_eq!(
            rank::hodges_lehmann_paired_ci(&d),
            (ci[0], ci[1]),
            "{name}: CI (order statistics of the Walsh averages)"
        );
        // The public entry point on times: old = 1, new = exp(d) reproduces d to an ulp.
        let old = vec![1.0; d.len()];
        let new: Vec<f64> = d.iter().map(|x| x.exp()).collect();
        let r = cs::paired(&old, &new).unwrap();
        close(
            &format!("{name}: ratio"),
            r.ratio.ln(),
            c["hl"].as_f64().unwrap(),
        );
        assert!(r.ci95.0 <= r.ratio && r.ratio <= r.ci95.1, "{name}");
    }
}

#[test]
fn unpaired_statistics_match_scipy() {
    for c in fixture("unpaired.json").as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let (x, y) = (nums(&c["x"]), nums(&c["y"]));
        close(
            &format!("{name}: mann-whitney p"),
            rank::mann_whitney(&x, &y),
            c["mw_p"].as_f64().unwrap(),
        );
        close(
            &format!("{name}: hl shift"),
            rank::hodges_lehmann_shift(&x, &y),
            c["hl"].as_f64().unwrap(),
        );
        let ci = nums(&c["ci"]);
        assert_eq!(
            rank::hodges_lehmann_shift_ci(&x, &y),
            (ci[0], ci[1]),
            "{name}: CI (order statistics of the differences)"
        );
    }
}

#[test]
fn multiple_testing_adjustments_match_statsmodels() {
    for c in fixture("multiple_testing.json").as_array().unwrap() {
        let p = nums(&c["p"]);
        for (got, want) in cs::holm(&p).iter().zip(nums(&c["holm"])) {
            close("holm", *got, want);
        }
    }
}

#[test]
fn geometric_mean_matches_reference() {
    for c in fixture("geomean.json").as_array().unwrap() {
        let (r, lo, hi) = (nums(&c["ratios"]), nums(&c["lo"]), nums(&c["hi"]));
        let items: Vec<(f64, (f64, f64))> = (0..r.len()).map(|i| (r[i], (lo[i], hi[i]))).collect();
        let g = cs::geomean(&items).unwrap();
        let ci = nums(&c["ci"]);
        close("geomean", g.ratio, c["geomean"].as_f64().unwrap());
        close("geomean lo", g.ci95.0, ci[0]);
        close("geomean hi", g.ci95.1, ci[1]);
    }
}

// Process pairs (`scripts/gen_random_effects_fixtures.py`): Student's t, the random-effects
// interval over pairs, the offline combination of two files' intervals.

#[test]
fn student_t_matches_scipy() {
    for c in fixture("random_effects.json")["t"].as_array().unwrap() {
        let df = c["df"].as_f64().unwrap();
        if let Some(sf) = c.get("sf") {
            let t = c["t"].as_f64().unwrap();
            close_rel(
                &format!("sf({t}, {df})"),
                student::student_t_sf(t, df),
                sf.as_f64().unwrap(),
                1e-9,
            );
        } else {
            let p = c["p"].as_f64().unwrap();
            close_rel(
                &format!("ppf({p}, {df})"),
                student::student_t_quantile(p, df),
                c["ppf"].as_f64().unwrap(),
                1e-9,
            );
        }
    }
}

#[test]
fn random_effects_match_scipy() {
    for c in fixture("random_effects.json")["random_effects"]
        .as_array()
        .unwrap()
    {
        let re =
            random_effects::random_effects(&nums(&c["theta"]), &nums(&c["within_se"])).unwrap();
        close_rel("ratio", re.ratio, c["ratio"].as_f64().unwrap(), 1e-12);
        let ci = nums(&c["ci95"]);
        close_rel("ci lo", re.ci95.0, ci[0], 1e-10);
        close_rel("ci hi", re.ci95.1, ci[1], 1e-10);
        close_rel("p", re.p_value, c["p_value"].as_f64().unwrap(), 1e-8);
        close_rel(
            "within",
            re.within_share,
            c["within_share"].as_f64().unwrap(),
            1e-10,
        );
        close_rel(
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
    for c in fixture("random_effects.json")["from_intervals"]
        .as_array()
        .unwrap()
    {
        let (o, n) = (nums(&c["old"]), nums(&c["new"]));
        let e = cs::from_intervals(o[0], (o[1], o[2]), n[0], (n[1], n[2])).unwrap();
        close_rel("ratio", e.ratio, c["ratio"].as_f64().unwrap(), 1e-12);
        let ci = nums(&c["ci95"]);
        close_rel("lo", e.ci95.0, ci[0], 1e-10);
        close_rel("hi", e.ci95.1, ci[1], 1e-10);
        close_rel("p", e.p_value, c["p_value"].as_f64().unwrap(), 1e-8);
    }
    assert!(cs::from_intervals(1.0, (0.0, 2.0), 1.0, (0.9, 1.1)).is_err());
}

#[test]
fn too_few_pairs_is_an_error() {
    assert!(random_effects::random_effects(&[0.01], &[0.001]).is_err());
    assert!(random_effects::random_effects(&[0.01, f64::NAN], &[0.001, 0.001]).is_err());
}
