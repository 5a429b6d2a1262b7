//! Golden tests: `vernier::compare_stats` against scipy/statsmodels
//! (`scripts/gen_stats_fixtures.py`, fixtures under `tests/fixtures/stats/`).

use serde_json::Value;
use vernier::compare_stats as cs;

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
    let tol = REL_TOL * want.abs();
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
            cs::wilcoxon_signed_rank(&d),
            c["wilcoxon_p"].as_f64().unwrap(),
        );
        close(
            &format!("{name}: sign p"),
            cs::sign_test(&d),
            c["sign_p"].as_f64().unwrap(),
        );
        close(
            &format!("{name}: hl"),
            cs::hodges_lehmann_paired(&d),
            c["hl"].as_f64().unwrap(),
        );
        let ci = nums(&c["ci"]);
        assert_eq!(
            cs::hodges_lehmann_paired_ci(&d),
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
            cs::mann_whitney(&x, &y),
            c["mw_p"].as_f64().unwrap(),
        );
        close(
            &format!("{name}: hl shift"),
            cs::hodges_lehmann_shift(&x, &y),
            c["hl"].as_f64().unwrap(),
        );
        let ci = nums(&c["ci"]);
        assert_eq!(
            cs::hodges_lehmann_shift_ci(&x, &y),
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
        for (got, want) in cs::benjamini_hochberg(&p).iter().zip(nums(&c["bh"])) {
            close("bh", *got, want);
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
