//! `vernier export`: every format carries the result file's medians (to 1e-6 relative), in the
//! shape the other tool reads; a comparison file is refused with a message that says what to do.
//! pyperf itself, fetched from PyPI, reads the export in the registry tier (`registry::pyperf`).

use crate::common::cli;

use cli::{text, vernier};
use std::path::{Path, PathBuf};
use vernier::result::ResultFile;

pub(crate) fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vernier/tests/fixtures/results");
    ["demo-v0.1.0.json", "run-cpp-v0.1.0.json"]
        .iter()
        .map(|f| dir.join(f))
        .collect()
}

fn export(file: &Path, format: &str) -> String {
    let o = vernier()
        .arg("export")
        .arg(file)
        .args(["--format", format])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs()
}

#[test]
fn gbench_carries_the_medians_as_google_benchmark_writes_them() {
    for f in fixtures() {
        let r = ResultFile::load(&f).unwrap();
        let out = export(&f, "gbench");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        for key in [
            "date",
            "host_name",
            "executable",
            "num_cpus",
            "mhz_per_cpu",
            "cpu_scaling_enabled",
            "caches",
            "load_avg",
            "library_build_type",
        ] {
            assert!(v["context"].get(key).is_some(), "no context.{key}: {out}");
        }
        let runs = v["benchmarks"].as_array().unwrap();
        assert_eq!(runs.len(), r.benchmarks.len());
        for (b, run) in r.benchmarks.iter().zip(runs) {
            assert_eq!(run["name"], b.name.as_str());
            assert_eq!(run["run_name"], b.name.as_str());
            assert_eq!(run["run_type"], "iteration");
            assert_eq!(run["time_unit"], "ns");
            assert_eq!(run["threads"], b.threads.unwrap_or(1));
            assert!(run["iterations"].as_u64().unwrap() > 0);
            assert!(close(
                run["real_time"].as_f64().unwrap(),
                b.per_iter.median_ns
            ));
            assert!(run["cpu_time"].as_f64().unwrap() > 0.0);
        }
        // Keys in the reporter's own order (some readers are line-based).
        let at = |k: &str| out.find(&format!("\"{k}\"")).unwrap();
        assert!(at("name") < at("run_type") && at("run_type") < at("iterations"));
        assert!(at("iterations") < at("real_time") && at("real_time") < at("time_unit"));
        assert!(at("context") < at("benchmarks"));
    }
}

#[test]
fn bmf_carries_the_medians_and_their_intervals() {
    for f in fixtures() {
        let r = ResultFile::load(&f).unwrap();
        let v: serde_json::Value = serde_json::from_str(&export(&f, "bmf")).unwrap();
        for b in &r.benchmarks {
            let l = &v[&b.name]["latency"];
            assert!(close(l["value"].as_f64().unwrap(), b.per_iter.median_ns));
            assert!(close(
                l["lower_value"].as_f64().unwrap(),
                b.per_iter.ci95_ns[0]
            ));
            assert!(close(
                l["upper_value"].as_f64().unwrap(),
                b.per_iter.ci95_ns[1]
            ));
        }
    }
}

/// The fields of one CSV line (RFC 4180 quoting).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn csv_has_a_header_and_one_row_per_benchmark() {
    for f in fixtures() {
        let r = ResultFile::load(&f).unwrap();
        let out = export(&f, "csv");
        let mut lines = out.lines();
        let head = csv_fields(lines.next().unwrap());
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
        assert_eq!(rows.len(), r.benchmarks.len(), "{out}");
        for (b, row) in r.benchmarks.iter().zip(&rows) {
            assert_eq!(row.len(), head.len(), "{row:?}");
            assert_eq!(row[col("name")], b.name);
            let m: f64 = row[col("median_ns")].parse().unwrap();
            assert!(close(m, b.per_iter.median_ns));
            assert_eq!(row[col("steady_samples")], b.steady_samples.to_string());
        }
    }
}

#[test]
fn pyperf_runs_hold_the_steady_samples() {
    for f in fixtures() {
        let r = ResultFile::load(&f).unwrap();
        let v: serde_json::Value = serde_json::from_str(&export(&f, "pyperf")).unwrap();
        assert_eq!(v["version"], "1.0");
        let benches = v["benchmarks"].as_array().unwrap();
        assert_eq!(benches.len(), r.benchmarks.len());
        for (b, pb) in r.benchmarks.iter().zip(benches) {
            assert_eq!(pb["metadata"]["name"], b.name.as_str());
            assert_eq!(pb["metadata"]["unit"], "second");
            let mut values: Vec<f64> = pb["runs"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|r| r["values"].as_array().unwrap().clone())
                .map(|x| x.as_f64().unwrap())
                .collect();
            values.sort_by(f64::total_cmp);
            let n = values.len();
            let median = if n % 2 == 1 {
                values[n / 2]
            } else {
                (values[n / 2 - 1] + values[n / 2]) / 2.0
            };
            assert!(
                close(median * 1e9, b.per_iter.median_ns),
                "{}: {} vs {}",
                b.name,
                median * 1e9,
                b.per_iter.median_ns
            );
        }
    }
}

#[test]
fn a_comparison_file_and_bad_input_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let cmp = dir.path().join("cmp.json");
    std::fs::write(
        &cmp,
        r#"{"schema": 1, "mode": "unpaired", "comparisons": [], "geomean_ratio": null}"#,
    )
    .unwrap();
    let o = vernier()
        .arg("export")
        .arg(&cmp)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("comparison file") && e.contains("result file"),
        "{e}"
    );

    let o = vernier()
        .arg("export")
        .arg(&fixtures()[0])
        .args(["--format", "xml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gbench"));

    let out = dir.path().join("out.csv");
    let o = vernier()
        .arg("export")
        .arg(&fixtures()[1])
        .args(["--format", "csv", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("name,"));
}
