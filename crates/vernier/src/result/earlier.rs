//! What the same program's recent runs on this machine read: an interval that holds for the
//! next run.
//!
//! A run's processes sample the machine for a few seconds. Some of what moves a figure changes
//! more slowly than that: where the kernel places a large working set in physical memory, a
//! neighbour's use of the memory bus, the host's state. Ten invocations of a 64 MiB pointer
//! chase each agreed within their own processes and still read 158–188 ns between
//! invocations. Nothing inside one run can see that spread; the runs before it can. The
//! `vernier` command keeps the medians of the recent runs of each benchmark of each executable
//! (same file, same arguments, same cache mode) and the analysis joins the interval to their
//! range, so that it covers what this machine has been reading for this very code.
//!
//! A rebuilt executable's figures may legitimately differ from the old build's, so its own
//! runs start afresh; until it has two of them, the interval borrows the *spread* of an
//! earlier build's runs of the same benchmark (same path, arguments and cache mode), not their
//! level: how far apart invocations of this benchmark land on this machine. After one
//! rebuild of a 64 MiB pointer chase, its first run read 146.3 ns with an interval of
//! [141.7, 151.3] while the next nine read 153.8–163.3.

use super::{BenchmarkResult, Status};
use crate::diagnostic::{Code, Diagnostic};
use serde::{Deserialize, Serialize};

/// The medians of the same benchmark in the same program's recent runs on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlierRuns {
    /// How many earlier runs.
    pub runs: usize,
    /// Their lowest and highest median, ns per iteration.
    pub median_ns: [f64; 2],
    /// The runs are of an earlier build of the same executable (this one has fewer than
    /// [`MIN_EARLIER_RUNS`] of its own): only their spread applies, around this run's median.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub earlier_build: bool,
}

/// Fewest earlier runs before their range widens an interval: one earlier run may itself be
/// the odd one out.
pub const MIN_EARLIER_RUNS: usize = 2;

impl EarlierRuns {
    /// The range of `medians` (finite, positive ones), or `None` below [`MIN_EARLIER_RUNS`].
    pub fn from_medians(medians: &[f64]) -> Option<EarlierRuns> {
        let ok: Vec<f64> = medians
            .iter()
            .copied()
            .filter(|m| m.is_finite() && *m > 0.0)
            .collect();
        if ok.len() < MIN_EARLIER_RUNS {
            return None;
        }
        let lo = ok.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ok.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(EarlierRuns {
            runs: ok.len(),
            median_ns: [lo, hi],
            earlier_build: false,
        })
    }

    /// The same, for the runs of an earlier build (see [`EarlierRuns::earlier_build`]).
    pub fn of_earlier_build(medians: &[f64]) -> Option<EarlierRuns> {
        EarlierRuns::from_medians(medians).map(|e| EarlierRuns {
            earlier_build: true,
            ..e
        })
    }

    /// The medians another run may read, given this run's `median_ns`: the earlier medians
    /// themselves for this build's runs; for an earlier build's, their spread (highest over
    /// lowest) either side of this median, since this run may lie at either end of it.
    pub fn reach(&self, median_ns: f64) -> [f64; 2] {
        let [lo, hi] = self.median_ns;
        if self.earlier_build {
            let spread = hi / lo;
            [median_ns / spread, median_ns * spread]
        } else {
            [lo, hi]
        }
    }
}

/// Whether a run's median may stand among the earlier ones, and widen later intervals: a
/// figure that is valid and was not measured with the core slowed (whose diagnostic already
/// says how far it is from the machine's usual speed).
pub fn figure_worth_keeping(median_ns: f64, diagnostics: &[Diagnostic]) -> bool {
    median_ns.is_finite()
        && median_ns > 0.0
        && !diagnostics
            .iter()
            .any(|d| d.code.invalidates_figure() || d.code == Code::CoreSlowed)
}

/// The interval `ci95` joined to the range of the earlier runs' medians, or `None` when it
/// does not grow or the figure is not [`figure_worth_keeping`].
pub fn joined(
    median_ns: f64,
    ci95: [f64; 2],
    diagnostics: &[Diagnostic],
    earlier: &EarlierRuns,
) -> Option<[f64; 2]> {
    let [lo, hi] = earlier.median_ns;
    let valid = lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi;
    if earlier.runs < MIN_EARLIER_RUNS || !valid || !figure_worth_keeping(median_ns, diagnostics) {
        return None;
    }
    let [lo, hi] = earlier.reach(median_ns);
    let j = [ci95[0].min(lo), ci95[1].max(hi)];
    (j != ci95).then_some(j)
}

/// Join a measured benchmark's interval (`per_iter.ci95_ns`; `run_ci95_ns` stays the run's
/// own) to the earlier runs' medians. Returns whether it grew.
pub fn join_result(r: &mut BenchmarkResult, earlier: &EarlierRuns) -> bool {
    if r.status != Status::Ok {
        return false;
    }
    match joined(
        r.per_iter.median_ns,
        r.per_iter.ci95_ns,
        &r.diagnostics,
        earlier,
    ) {
        Some(j) => {
            r.per_iter.ci95_ns = j;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_grows_to_cover_the_earlier_medians() {
        let e = EarlierRuns::from_medians(&[158.0, 188.0, 171.0]).unwrap();
        assert_eq!((e.runs, e.median_ns), (3, [158.0, 188.0]));
        assert_eq!(joined(180.0, [179.0, 181.0], &[], &e), Some([158.0, 188.0]));
        // Already covered: nothing changes.
        assert_eq!(joined(170.0, [150.0, 190.0], &[], &e), None);
    }

    #[test]
    fn an_earlier_build_lends_its_spread_not_its_level() {
        // The old build read 146–163 (x1.116); this one reads 100 on its first run.
        let e = EarlierRuns::of_earlier_build(&[146.0, 163.0, 155.0]).unwrap();
        assert!(e.earlier_build);
        let j = joined(100.0, [99.0, 101.0], &[], &e).unwrap();
        let spread = 163.0 / 146.0;
        assert!((j[0] - 100.0 / spread).abs() < 1e-9 && (j[1] - 100.0 * spread).abs() < 1e-9);
        // A run at the low end of that spread covers one at its high end.
        let j = joined(146.0, [145.0, 147.0], &[], &e).unwrap();
        assert!(j[1] >= 163.0 - 1e-9, "{j:?}");
        // Kept in the file only when set.
        let plain = serde_json::to_string(&EarlierRuns::from_medians(&[1.0, 2.0]).unwrap());
        assert!(!plain.unwrap().contains("earlier_build"));
        let back: EarlierRuns = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn too_few_runs_or_a_figure_not_to_trust_widen_nothing() {
        assert!(EarlierRuns::from_medians(&[100.0]).is_none());
        assert!(EarlierRuns::from_medians(&[100.0, f64::NAN]).is_none());
        let e = EarlierRuns::from_medians(&[100.0, 120.0]).unwrap();
        for code in [Code::CoreSlowed, Code::OptimizedAway] {
            let d = [Diagnostic::new(code, "x")];
            assert!(!figure_worth_keeping(60.0, &d));
            assert_eq!(joined(60.0, [59.0, 61.0], &d, &e), None);
        }
        assert_eq!(joined(f64::NAN, [59.0, 61.0], &[], &e), None);
    }

    #[test]
    fn a_result_keeps_its_run_s_own_interval() {
        let bytes = include_bytes!("../../tests/fixtures/results/run-cpp-v0.1.0.json");
        let file = crate::result::parse(bytes, "fixture").unwrap();
        let mut r = file.benchmarks[0].clone();
        assert_eq!(r.status, Status::Ok);
        let own = r.per_iter.run_ci95_ns;
        let m = r.per_iter.median_ns;
        let e = EarlierRuns::from_medians(&[m * 0.8, m * 1.2]).unwrap();
        assert!(join_result(&mut r, &e));
        assert_eq!(r.per_iter.ci95_ns, [m * 0.8, m * 1.2]);
        assert_eq!(r.per_iter.run_ci95_ns, own);
        r.status = Status::Failed;
        assert!(!join_result(
            &mut r,
            &EarlierRuns::from_medians(&[m * 0.5, m]).unwrap()
        ));
    }
}
