//! The history tests' own helpers: the chain kernel built at a length, a run of it saved at a
//! commit, and what `history` says of a store.
#![allow(dead_code)]

use super::cli::{text, vernier, vernier_with_ledger};
use super::cpp::{compile, repo_root};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub fn kernels(chain_n: u32) -> PathBuf {
    let src = repo_root().join("examples/cpp/kernels.cpp");
    compile(
        &format!("history-k{chain_n}"),
        &[src],
        &["-O2", &format!("-DKERNELS_CHAIN_N={chain_n}")],
    )
}

/// `vernier run` of the `chain` kernel, saved at `commit`; the result file. `ledger`: the
/// directory of the machine's ledger, as a user has one (`None`: no ledger).
pub fn run_saved(exe: &Path, db: &str, commit: &str, json: &Path, ledger: Option<&Path>) -> Value {
    let o = ledger
        .map(vernier_with_ledger)
        .unwrap_or_else(vernier)
        .args([
            "run",
            "--quick",
            "--filter",
            "^chain$",
            "--counters",
            "none",
        ])
        .args([
            "--save", "--db", db, "--commit", commit, "--branch", "main", "--json",
        ])
        .arg(json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("saved run"),
        "{}",
        text(&o)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    // The run is stored at the time its file says its measuring started.
    let at = v["recorded_at"]
        .as_str()
        .expect("`vernier run --json` writes recorded_at");
    let h: Value = serde_json::from_slice(&history(db, &["--json"]).stdout).unwrap();
    let stored = h["series"].as_array().unwrap().iter().any(|s| {
        s["points"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["commit"] == commit && p["time"] == at)
    });
    assert!(stored, "no run of {commit} stored at {at}: {h}");
    v
}

pub fn history(db: &str, extra: &[&str]) -> Output {
    vernier()
        .args(["history", "--db", db, "--filter", "^chain$"])
        .args(extra)
        .output()
        .unwrap()
}

pub fn check(db: &str) -> i32 {
    let o = vernier()
        .args(["history", "check", "--db", db, "--filter", "^chain$"])
        .output()
        .unwrap();
    o.status.code().unwrap_or_else(|| panic!("{}", text(&o)))
}

/// The chain's one change point: (commit, ratio, ci95).
pub fn change_points(db: &str) -> Vec<(String, f64, [f64; 2])> {
    let o = history(db, &["--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    let series = h["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "one machine, one benchmark: {h}");
    assert!(series[0]["points"].as_array().unwrap().len() >= 7, "{h}");
    series[0]["change_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["commit"].as_str().unwrap().to_string(),
                c["ratio"].as_f64().unwrap(),
                [
                    c["ci95"][0].as_f64().unwrap(),
                    c["ci95"][1].as_f64().unwrap(),
                ],
            )
        })
        .collect()
}
