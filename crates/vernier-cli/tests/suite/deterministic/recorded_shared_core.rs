//! Result files recorded on a host whose cores are shared with a neighbour (an AMD EPYC Zen 3
//! KVM guest, 2 vCPUs, no PMU; `tests/fixtures/zen3-vm/`, gzipped), re-derived with today's
//! rules by `vernier analyze`: `throughput/tN` are six `vernier run` of one C++ program with a
//! chain of 64 dependent adds (`lat64`) and 64 rounds of 8 independent adds (`thr64x8`);
//! `python-async/rN` six of a Python script with two coroutines of 300 and 330 loop trips.
//! Deterministic: the raw samples are fixed.

use super::recorded_hosts::rederived_on;
use std::path::Path;
use vernier::diagnostic::Code;
use vernier::result::{BenchmarkResult, ResultFile};

/// The recorded file `rel` re-derived by `vernier analyze`.
fn rederived(rel: &str, dir: &Path) -> ResultFile {
    ResultFile::load(&rederived_on("zen3-vm", rel, dir)).unwrap()
}

fn flagged(b: &BenchmarkResult, code: Code) -> bool {
    b.diagnostics.iter().any(|d| d.code == code)
}

fn bench<'a>(f: &'a ResultFile, name: &str) -> &'a BenchmarkResult {
    f.benchmarks.iter().find(|b| b.name == name).unwrap()
}

#[test]
fn a_throughput_bound_run_wholly_shared_is_core_shared_and_a_latency_bound_one_never() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<ResultFile> = (1..=6)
        .map(|i| rederived(&format!("throughput/t{i}.json"), dir.path()))
        .collect();
    // The chain of dependent adds: a neighbour does not slow it, 0 of 6 flagged, though the
    // core was shared for most of its samples.
    for f in &files {
        let b = bench(f, "lat64");
        assert!(
            !flagged(b, Code::CoreShared) && !flagged(b, Code::CoreSlowed),
            "{b:?}"
        );
        let sp = b.speed.as_ref().unwrap();
        assert!(sp.core_share.unwrap() < 0.8 && sp.shared_share.unwrap() > 0.5);
    }
    // The independent adds: t2 was measured wholly shared, and is flagged; the five others
    // set their shared samples apart and agree with each other, their next-run intervals
    // covering the median of the five.
    let thr: Vec<&BenchmarkResult> = files.iter().map(|f| bench(f, "thr64x8")).collect();
    assert!(
        flagged(thr[1], Code::CoreShared),
        "{:?}",
        thr[1].diagnostics
    );
    assert!(thr[1].speed.as_ref().unwrap().shared_share.unwrap() > 0.99);
    let others: Vec<&&BenchmarkResult> = thr
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, b)| b)
        .collect();
    let cycles: Vec<f64> = others
        .iter()
        .map(|b| b.speed.as_ref().unwrap().cycles_per_iter.unwrap())
        .collect();
    let mut sorted = cycles.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[2];
    for b in &others {
        assert!(!flagged(b, Code::CoreShared) && !flagged(b, Code::CoreSlowed));
        let [lo, hi] = b.speed.as_ref().unwrap().cycles_ci95.unwrap();
        assert!(
            lo <= median && median <= hi,
            "{} not in [{lo}, {hi}]",
            median
        );
    }
    // The shared run read far above them (a ratio of the same run's figures, not a time).
    let shared = thr[1].speed.as_ref().unwrap().cycles_per_iter.unwrap();
    assert!(shared / median > 1.4, "{shared} against {median}");
    assert!(sorted[4] / sorted[0] < 1.01, "{cycles:?}");
}

#[test]
fn a_python_run_wholly_shared_is_named_and_every_unflagged_interval_covers_the_median() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<ResultFile> = (1..=6)
        .map(|i| rederived(&format!("python-async/r{i}.json"), dir.path()))
        .collect();
    for name in ["job", "job_more"] {
        let b: Vec<&BenchmarkResult> = files.iter().map(|f| bench(f, name)).collect();
        let mut medians: Vec<f64> = b.iter().map(|b| b.per_iter.median_ns).collect();
        medians.sort_by(f64::total_cmp);
        let median = (medians[2] + medians[3]) / 2.0;
        for b in b.iter().filter(|b| !flagged(b, Code::CoreShared)) {
            let [lo, hi] = b.per_iter.ci95_ns;
            assert!(
                lo <= median && median <= hi,
                "{name}: {median} not in [{lo}, {hi}]"
            );
        }
    }
    // The third run's 330 trips were measured wholly shared, and say so.
    assert!(flagged(bench(&files[2], "job_more"), Code::CoreShared));
}
