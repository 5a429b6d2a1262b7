//! A threaded benchmark's figures as the result file holds them (`scaling`), and the step that
//! sets a thread count beside the same benchmark's one-thread run: speed-up, efficiency and the
//! `contended` diagnostic. Thread counts of one benchmark are named `NAME/threads:T`.

use super::BenchmarkResult;
use crate::analyze::nan::{nan_as_null, nan_pair};
use crate::analyze::threads::{
    judge, on_cpu_speedup, speedup, Speedup, ThreadFigures, ThreadTime, MIN_JUDGED_SAMPLE_NS,
};
use crate::diagnostic::{Code, Diagnostic, Finding, Interruption};
use serde::{Deserialize, Serialize};

/// The suffix of a threaded benchmark's name: `NAME/threads:T`.
pub const SUFFIX: &str = "/threads:";

/// The name of benchmark `base` at `threads` threads.
pub fn name(base: &str, threads: usize) -> String {
    format!("{base}{SUFFIX}{threads}")
}

/// `NAME` and `T` of a name `NAME/threads:T`.
pub fn split_name(name: &str) -> Option<(&str, usize)> {
    let (base, t) = name.rsplit_once(SUFFIX)?;
    Some((base, t.parse().ok()?))
}

/// A threaded benchmark's figures (`"scaling"` in the result file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    /// Operations of all threads per second, and its 95 % interval.
    #[serde(with = "nan_as_null")]
    pub throughput_per_s: f64,
    #[serde(with = "nan_pair")]
    pub throughput_ci95: [f64; 2],
    /// The time per operation as each thread sees it (its own time, release to finish).
    #[serde(with = "nan_as_null")]
    pub thread_per_iter_ns: f64,
    /// Median over the samples of (last thread's finish − first's) / last's.
    #[serde(with = "nan_as_null")]
    pub imbalance: f64,
    #[serde(with = "nan_as_null")]
    pub imbalance_max: f64,
    /// The CPUs the process could use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// Where the threads' time went (on a CPU, waiting for one), where the harness read it.
    #[serde(default, flatten)]
    pub time: ThreadTime,
    /// Against the same benchmark's one-thread run (absent without one).
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub against_one: Option<Speedup>,
    /// The speed-up with the waits for a CPU left out (of the time per operation less the
    /// run-queue wait, else of the on-CPU time), beside the one-thread run, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_cpu_speedup: Option<f64>,
}

impl Scaling {
    pub fn new(t: &ThreadFigures) -> Scaling {
        Scaling {
            throughput_per_s: t.throughput_per_s,
            throughput_ci95: t.throughput_ci95,
            thread_per_iter_ns: t.thread_per_iter_ns,
            imbalance: t.imbalance,
            imbalance_max: t.imbalance_max,
            cpus: t.cpus,
            time: t.time,
            against_one: None,
            on_cpu_speedup: None,
        }
    }
}

/// Whether `d` is a finding [`relate`] makes (replaced on a re-analysis).
fn related(d: &Diagnostic) -> bool {
    d.code == Code::Contended
        || matches!(
            d.finding(),
            Some(Finding::Interrupted(Interruption::ThreadsWaited { .. }))
        )
}

/// Set benchmark `r` beside its one-thread run among `others` (the same `NAME`, 1 thread,
/// measured): its speed-up and efficiency, and when throughput grows less than half as fast
/// as the threads, what [`judge`] makes of it (`contended`, or the threads' waits for a CPU).
/// Any earlier such finding on `r` is replaced (a re-analysis). Called by
/// [`crate::pipeline::finish`] alone: the step that sets every figure of a result.
pub(crate) fn relate(r: &mut BenchmarkResult, others: &[BenchmarkResult]) {
    let (Some(t), Some((base, _))) = (r.threads, split_name(&r.name)) else {
        return;
    };
    let base = base.to_string();
    r.diagnostics.retain(|d| !related(d));
    let one = others.iter().find(|o| {
        o.threads == Some(1)
            && o.status == super::Status::Ok
            && split_name(&o.name).is_some_and(|(b, _)| b == base)
    });
    let (Some(one), Some(scaling)) = (one, r.scaling.as_mut()) else {
        return;
    };
    scaling.against_one = speedup(&one.per_iter, &r.per_iter, t);
    let one_time = one.scaling.as_ref().map(|s| s.time).unwrap_or_default();
    // How long a sample's threads ran, with their waits for a CPU left out (the wall time
    // where the waits are unknown): too little, and the release's and the clock readings' own
    // cost weigh on the speed-up (`judge`). A contended body's samples hold few iterations, each
    // slow: their length, not their count at one thread's pace, is what the costs weigh against.
    let iters = r.iters_per_sample as f64;
    let work_ns = scaling
        .time
        .unwaited_per_iter_ns
        .map_or(r.per_iter.median_ns * iters, |u| u * iters);
    scaling.on_cpu_speedup =
        on_cpu_speedup(&one_time, &scaling.time, t).filter(|_| work_ns >= MIN_JUDGED_SAMPLE_NS);
    let found = scaling
        .against_one
        .as_ref()
        .and_then(|s| judge(s, t, scaling.cpus, work_ns, &one_time, &scaling.time));
    if let Some(f) = found {
        r.diagnostics.push(Diagnostic::from(&f));
    }
    r.drop_restated();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`relate`] every threaded benchmark of a file to its one-thread run.
    fn relate_all(benchmarks: &mut [BenchmarkResult]) {
        for i in 0..benchmarks.len() {
            let mut r = benchmarks[i].clone();
            relate(&mut r, benchmarks);
            benchmarks[i] = r;
        }
    }

    #[test]
    fn names_split_back() {
        assert_eq!(name("count", 4), "count/threads:4");
        assert_eq!(
            split_name("a/threads:b/threads:12"),
            Some(("a/threads:b", 12))
        );
        assert_eq!(split_name("count"), None);
        assert_eq!(split_name("count/threads:x"), None);
    }

    fn result(name: &str, threads: usize, median_ns: f64) -> BenchmarkResult {
        let mut r = BenchmarkResult::failed(name, String::new());
        r.status = super::super::Status::Ok;
        r.error = None;
        r.threads = Some(threads);
        r.per_iter.median_ns = median_ns;
        r.per_iter.run_ci95_ns = [median_ns * 0.99, median_ns * 1.01];
        r.iters_per_sample = 10_000;
        r.scaling = Some(Scaling {
            throughput_per_s: threads as f64 * 1e9 / median_ns,
            throughput_ci95: [1.0, 2.0],
            thread_per_iter_ns: median_ns,
            imbalance: 0.0,
            imbalance_max: 0.0,
            cpus: Some(2),
            time: ThreadTime::default(),
            against_one: None,
            on_cpu_speedup: None,
        });
        r
    }

    #[test]
    fn a_removed_body_has_no_rate_and_no_contention() {
        let removed = |mut r: BenchmarkResult| {
            r.diagnostics
                .push(Diagnostic::new(Code::OptimizedAway, "removed"));
            r
        };
        // Two threads of a constant: the release's cost reads as 0.8× one thread.
        let mut all = vec![
            removed(result("constant/threads:1", 1, 0.27)),
            removed(result("constant/threads:2", 2, 0.68)),
            result("shared/threads:1", 1, 2.0),
            result("shared/threads:2", 2, 5.0),
        ];
        relate_all(&mut all);
        let codes = |r: &BenchmarkResult| r.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>();
        assert_eq!(codes(&all[1]), [Code::OptimizedAway]);
        assert_eq!(codes(&all[3]), [Code::Contended]);
        // No throughput line for the removed body at any count; the working one keeps its.
        for r in &all[..2] {
            assert_eq!(crate::report::threads::line(r), None, "{}", r.name);
        }
        let line = crate::report::threads::line(&all[3]).unwrap();
        assert!(line.starts_with("2 threads: 400.0 Mops/s"), "{line}");
    }

    #[test]
    fn each_count_is_set_beside_its_own_one_thread_run() {
        let mut all = vec![
            result("private/threads:1", 1, 2.0),
            result("private/threads:2", 2, 2.1),
            result("shared/threads:1", 1, 2.0),
            result("shared/threads:2", 2, 5.0),
        ];
        relate_all(&mut all);
        let contended =
            |r: &BenchmarkResult| r.diagnostics.iter().any(|d| d.code == Code::Contended);
        let s = |i: usize| {
            all[i]
                .scaling
                .as_ref()
                .unwrap()
                .against_one
                .unwrap()
                .speedup
        };
        assert!((s(1) - 4.0 / 2.1).abs() < 1e-12 && !contended(&all[1]));
        assert!((s(3) - 0.8).abs() < 1e-12 && contended(&all[3]));
        // The one-thread runs are set beside themselves: 1×, never contended.
        assert!(!contended(&all[0]) && !contended(&all[2]));
        // A re-analysis replaces the diagnostic instead of adding a second one.
        relate_all(&mut all);
        assert_eq!(all[3].diagnostics.len(), 1);
        // The file round-trips with the figures.
        let json = serde_json::to_string(&all[3]).unwrap();
        assert!(json.contains("\"speedup\":0.8") && json.contains("\"threads\":2"));
        let back: BenchmarkResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back.scaling, all[3].scaling);
    }
}
