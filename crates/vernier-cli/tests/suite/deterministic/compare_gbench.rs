//! `vernier compare` with Google Benchmark JSON files as OLD or NEW: unpaired and said so; with
//! repetitions, a verdict from their medians' intervals; with one figure per benchmark, the
//! ratio and no verdict.

use crate::common::cli;

use cli::{text, vernier};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A Google Benchmark file: each benchmark `reps` repetitions around `base × scale` ns (a fixed
/// ±0.2 % pattern, so the test is deterministic), plus a `mean` aggregate that must be ignored.
fn gbench(dir: &Path, file: &str, scale: f64, reps: usize) -> PathBuf {
    let mut runs = Vec::new();
    for (name, base) in [("add", 0.8), ("div", 1.1)] {
        for r in 0..reps {
            let wiggle = 1.0 + 0.002 * ((r % 3) as f64 - 1.0);
            runs.push(json!({
                "name": name, "family_index": 0, "per_family_instance_index": 0,
                "run_name": name, "run_type": "iteration", "repetitions": reps,
                "repetition_index": r, "threads": 1, "iterations": 1000000,
                "real_time": base * scale * wiggle / 1000.0, "cpu_time": base,
                "time_unit": "us"
            }));
        }
        runs.push(json!({
            "name": format!("{name}_mean"), "run_name": name, "run_type": "aggregate",
            "aggregate_name": "mean", "real_time": 1e6, "cpu_time": 1e6, "time_unit": "ns",
            "repetitions": reps, "threads": 1, "iterations": reps
        }));
    }
    let path = dir.join(file);
    let v = json!({"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "h",
                               "num_cpus": 2, "mhz_per_cpu": 3000,
                               "cpu_scaling_enabled": false, "caches": [],
                               "load_avg": [], "library_build_type": "release"},
                   "benchmarks": runs});
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    path
}

/// `vernier compare OLD NEW --json`: standard output and the comparison file.
fn compare(dir: &Path, old: &Path, new: &Path) -> (String, Value) {
    let json = dir.join("cmp.json");
    let o = vernier()
        .args(["compare"])
        .arg(old)
        .arg(new)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), v)
}

#[test]
fn repetitions_give_an_unpaired_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let old = gbench(dir.path(), "old.json", 1.0, 10);
    let new = gbench(dir.path(), "new.json", 1.10, 10);
    let (so, v) = compare(dir.path(), &old, &new);
    assert!(
        so.contains("Unpaired") && so.contains("Google Benchmark"),
        "{so}"
    );
    assert_eq!(v["mode"], "unpaired");
    let c = v["comparisons"].as_array().unwrap();
    assert_eq!(c.len(), 2, "{v}");
    for c in c {
        // Medians in us were read as ns × 1000; the aggregate was left out.
        assert!((c["ratio"].as_f64().unwrap() - 1.10).abs() < 1e-9, "{c}");
        assert_eq!(c["verdict"], "slower", "{c}");
        let ci = c["ci95"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() < 1.10 && ci[1].as_f64().unwrap() > 1.10);
    }
}

#[test]
fn one_figure_per_benchmark_gives_a_ratio_without_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let old = gbench(dir.path(), "old.json", 1.0, 1);
    let new = gbench(dir.path(), "new.json", 1.5, 10);
    let (so, v) = compare(dir.path(), &old, &new);
    assert_eq!(so.matches("no verdict: ").count(), 2, "{so}");
    // OLD's one repetition is 0.2 % under its base.
    assert!(so.contains("NEW/OLD = 1.5030"), "{so}");
    assert!(!so.lines().any(|l| l.starts_with("add ")), "{so}");
    assert!(v["comparisons"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["failed"].as_array().unwrap().len(), 2, "{v}");
}

#[test]
fn a_google_benchmark_file_against_a_result_file() {
    let dir = tempfile::tempdir().unwrap();
    let result = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vernier/tests/fixtures/results/run-cpp-v0.1.0.json");
    // The result exported as Google Benchmark's JSON (one figure) compared with itself.
    let g = dir.path().join("g.json");
    let o = vernier()
        .arg("export")
        .arg(&result)
        .args(["--format", "gbench", "-o"])
        .arg(&g)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = vernier()
        .arg("compare")
        .arg(&g)
        .arg(&result)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let so = String::from_utf8_lossy(&o.stdout);
    assert!(
        so.contains("no verdict: chain") && so.contains("NEW/OLD = 1.0000"),
        "{so}"
    );
    // Against an executable: refused, saying what to do.
    let o = vernier()
        .arg("compare")
        .arg(&g)
        .arg(env!("CARGO_BIN_EXE_vernier"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("vernier run --json"));
}

#[test]
fn the_comparison_table_fits_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let old = gbench(dir.path(), "old.json", 1.0, 10);
    let new = gbench(dir.path(), "new.json", 1.02, 10);
    for width in [50usize, 80, 120] {
        let o = vernier()
            .arg("compare")
            .arg(&old)
            .arg(&new)
            .env("COLUMNS", width.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let so = String::from_utf8_lossy(&o.stdout);
        for l in so.lines() {
            assert!(l.chars().count() <= width, "{width}: {l}");
        }
        // The ratio, its interval and the verdict stay at any width.
        let row = so.lines().find(|l| l.starts_with("add ")).unwrap();
        assert!(
            row.contains("1.0200") && row.contains('[') && row.contains("slower"),
            "{row}"
        );
    }
}
