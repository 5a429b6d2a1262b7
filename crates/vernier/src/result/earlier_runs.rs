//! The result file's `earlier_runs`: what the same program's recent runs on this machine read
//! (kept in the machine's ledger, `crate::ledger::earlier`), and the interval joined to them
//! that holds for the next run.
//!
//! Why, and the figures behind it: docs/report.md, on `±next run` and the program's recent runs.
//!
//! Inputs the program's identity cannot see (a file the program reads, a rebuild that changed
//! the code) show as medians far apart: when the earlier runs' medians (with this run's, for
//! this build's runs) spread more than [`FAR_BEYOND_CLOCK`] times the clock's range, the
//! interval is not joined to them, and the report says why ([`EarlierRuns::beyond_clock`]).

use super::{BenchmarkResult, Status};
use crate::analyze::Unit;
use crate::diagnostic::{Code, Diagnostic, Finding};
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
    /// The medians spread far beyond the clock's range ([`FAR_BEYOND_CLOCK`]): a sign of other
    /// inputs or other code, so the interval was not joined to them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beyond_clock: bool,
    /// Their lowest and highest median in cycles of the core, from the runs judged in cycles
    /// (at least [`MIN_EARLIER_RUNS`] of them; this build's runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_cycles: Option<[f64; 2]>,
}

/// A benchmark's median in cycles when it is judged in cycles (what the ledger keeps beside
/// the median in ns).
pub fn headline_cycles(b: &BenchmarkResult) -> Option<f64> {
    (b.headline_unit == Unit::Cycles)
        .then(|| b.speed.as_ref()?.cycles_per_iter)
        .flatten()
        .filter(|c| c.is_finite() && *c > 0.0)
}

/// Beyond the earlier runs' range by more than the run's own interval and this share of the
/// median: `shifted`. Levels a few tenths of a percent apart are what runs of the same code
/// read whatever happened; the interval a run aims for is ±1 %.
pub const SHIFT_MIN: f64 = 0.01;

/// How far beyond the clock's range (the ratio of its fastest to its slowest state, 1 when
/// unknown) the medians of runs of the same code may spread before they are taken for runs
/// of other inputs or code. The widest spread seen between invocations of one executable with
/// the same inputs was a 64 MiB pointer chase's, 158–188 ns (×1.19: where the kernel placed
/// its memory); a benchmark sized by an environment variable (`CHAIN_N=100` and `200`) read
/// 27.07–54.14 ns (×2.00).
pub const FAR_BEYOND_CLOCK: f64 = 1.25;

/// How far beyond the levels a program has read between invocations (its earlier runs'
/// medians and this run's) the interval for the next run reaches, in their own spread
/// (highest over lowest) raised to this power either side: half of it. The range of three
/// levels alone misses the centre of the later runs' levels one time in six (normal levels,
/// simulated: 16 % at the third run, 5 % at the fourth); widened by half, 3.6 % and 0.4 %.
pub const LEVELS_WIDENED: f64 = 0.5;

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
            beyond_clock: false,
            median_cycles: None,
        })
    }

    /// The same with the range of the runs' medians in cycles (`None` where a run was judged
    /// in ns), when enough runs have one.
    pub fn with_cycles(self, cycles: &[Option<f64>]) -> EarlierRuns {
        let known: Vec<f64> = cycles.iter().flatten().copied().collect();
        EarlierRuns {
            median_cycles: EarlierRuns::from_medians(&known).map(|c| c.median_ns),
            ..self
        }
    }

    /// The same, for the runs of an earlier build (see [`EarlierRuns::earlier_build`]).
    pub fn of_earlier_build(medians: &[f64]) -> Option<EarlierRuns> {
        EarlierRuns::from_medians(medians).map(|e| EarlierRuns {
            earlier_build: true,
            ..e
        })
    }

    /// Whether the medians spread far beyond the clock's range `clock_ghz` (slowest and
    /// fastest state, GHz-equivalent; `None`: unknown, taken as no range): this build's earlier
    /// medians together with this run's `median_ns`, or an earlier build's among themselves
    /// (their level may differ from this build's).
    pub fn far_beyond_clock(&self, median_ns: f64, clock_ghz: Option<[f64; 2]>) -> bool {
        let [mut lo, mut hi] = self.median_ns;
        if !self.earlier_build && median_ns.is_finite() && median_ns > 0.0 {
            lo = lo.min(median_ns);
            hi = hi.max(median_ns);
        }
        let clock = match clock_ghz {
            Some([slow, fast]) if slow > 0.0 && fast >= slow => fast / slow,
            _ => 1.0,
        };
        hi / lo > clock * FAR_BEYOND_CLOCK
    }

    /// The medians another run may read, given this run's `median_ns`: for an earlier
    /// build's runs, their spread (highest over lowest) either side of this median, since this
    /// run may lie at either end of it. For this build's, the earlier medians themselves; in the
    /// unit the benchmark is judged in (`judged`), the levels this program has read between
    /// invocations (the earlier medians and this one), widened by half their spread either side
    /// ([`LEVELS_WIDENED`]). Of ten runs of an add chain on a host whose level between
    /// invocations moved 0.1–0.3 % (100.24–100.76 cycles, median 100.585), two unflagged
    /// intervals that covered their own processes and rounds missed that median: 100.658
    /// [100.591, 100.725] and 100.243 [99.903, 100.584].
    pub fn reach(&self, median_ns: f64, judged: bool) -> [f64; 2] {
        let [lo, hi] = self.median_ns;
        if self.earlier_build {
            let spread = hi / lo;
            return [median_ns / spread, median_ns * spread];
        }
        if !judged || !median_ns.is_finite() || median_ns <= 0.0 {
            return [lo, hi];
        }
        let (lo, hi) = (lo.min(median_ns), hi.max(median_ns));
        let widen = (hi / lo).powf(LEVELS_WIDENED);
        [lo / widen, hi * widen]
    }
}

/// Whether a run's median may stand among the earlier ones, and widen later intervals: a
/// figure that is valid and was not measured with the core slowed (whose diagnostic already
/// says how far it is from the machine's usual speed).
pub fn figure_worth_keeping(median_ns: f64, diagnostics: &[Diagnostic]) -> bool {
    median_ns.is_finite()
        && median_ns > 0.0
        && !diagnostics.iter().any(|d| {
            d.code.invalidates_figure() || matches!(d.code, Code::CoreSlowed | Code::CoreShared)
        })
}

/// The interval `ci95` joined to what the earlier runs' medians reach ([`EarlierRuns::reach`],
/// `judged`: in the unit the benchmark is judged in), or `None` when it does not grow, the
/// figure is not [`figure_worth_keeping`], or the medians spread far beyond the clock's range
/// ([`EarlierRuns::far_beyond_clock`]).
pub fn joined(
    median_ns: f64,
    ci95: [f64; 2],
    diagnostics: &[Diagnostic],
    earlier: &EarlierRuns,
    clock_ghz: Option<[f64; 2]>,
    judged: bool,
) -> Option<[f64; 2]> {
    let [lo, hi] = earlier.median_ns;
    let valid = lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi;
    if earlier.runs < MIN_EARLIER_RUNS
        || !valid
        || !figure_worth_keeping(median_ns, diagnostics)
        || earlier.far_beyond_clock(median_ns, clock_ghz)
    {
        return None;
    }
    let [lo, hi] = earlier.reach(median_ns, judged);
    let j = [ci95[0].min(lo), ci95[1].max(hi)];
    (j != ci95).then_some(j)
}

/// Join a measured benchmark's interval (`per_iter.ci95_ns`; `run_ci95_ns` stays the run's
/// own) to the earlier runs' medians, and keep them in `earlier_runs`, marked when they spread
/// far beyond the clock's range `clock_ghz` (`harness.clock_ghz`). Returns whether it grew.
pub fn join_result(
    r: &mut BenchmarkResult,
    earlier: &EarlierRuns,
    clock_ghz: Option<[f64; 2]>,
) -> bool {
    if r.status != Status::Ok {
        r.earlier_runs = Some(*earlier);
        return false;
    }
    r.earlier_runs = Some(EarlierRuns {
        beyond_clock: earlier.far_beyond_clock(r.per_iter.median_ns, clock_ghz),
        ..*earlier
    });
    let shift = shifted(r, earlier);
    let grew = match joined(
        r.per_iter.median_ns,
        r.per_iter.ci95_ns,
        &r.diagnostics,
        earlier,
        clock_ghz,
        r.headline_unit == Unit::Ns,
    ) {
        Some(j) => {
            r.per_iter.ci95_ns = j;
            true
        }
        None => false,
    };
    // In cycles, the next run's interval covers the earlier runs' cycles the same way.
    let cycles = headline_cycles(r).zip(earlier.median_cycles);
    if let (Some((c, range)), false) = (cycles, earlier.earlier_build) {
        let in_cycles = EarlierRuns {
            median_ns: range,
            ..*earlier
        };
        let sp = r.speed.as_mut().expect("cycles come from the speed");
        if let Some(j) = sp
            .cycles_ci95
            .and_then(|ci| joined(c, ci, &r.diagnostics, &in_cycles, None, true))
        {
            sp.cycles_ci95 = Some(j);
        }
    }
    if let Some(f) = shift {
        r.diagnostics.push(Diagnostic::from(&f));
    }
    grew
}

/// `shifted`: the run's median in its headline unit beyond the earlier runs' range (this
/// build's, at least [`MIN_EARLIER_RUNS`]) by more than its own interval and [`SHIFT_MIN`];
/// however far (a first run after a pause read 1.55× its next five, in cycles too).
fn shifted(r: &BenchmarkResult, earlier: &EarlierRuns) -> Option<Finding> {
    if earlier.earlier_build
        || earlier.runs < MIN_EARLIER_RUNS
        || !figure_worth_keeping(r.per_iter.median_ns, &r.diagnostics)
    {
        return None;
    }
    let (unit, median, own, range) = match (headline_cycles(r), earlier.median_cycles) {
        (Some(c), Some(range)) => {
            let own = r.speed.as_ref()?.cycles_run_ci95?;
            (Unit::Cycles, c, own, range)
        }
        _ if r.headline_unit == Unit::Ns => (
            Unit::Ns,
            r.per_iter.median_ns,
            r.per_iter.run_ci95_ns,
            earlier.median_ns,
        ),
        // Judged in cycles without earlier runs in cycles: nothing to weigh it against.
        _ => return None,
    };
    let [lo, hi] = range;
    let margin = |side: f64| side.max(SHIFT_MIN * median);
    let above = median > hi && median - hi > margin(median - own[0]);
    let below = median < lo && lo - median > margin(own[1] - median);
    (above || below).then(|| Finding::Shifted {
        unit: unit.as_str().into(),
        median,
        earlier: range,
        runs: earlier.runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_grows_to_cover_the_earlier_medians() {
        let e = EarlierRuns::from_medians(&[158.0, 188.0, 171.0]).unwrap();
        assert_eq!((e.runs, e.median_ns), (3, [158.0, 188.0]));
        assert_eq!(
            joined(180.0, [179.0, 181.0], &[], &e, None, false),
            Some([158.0, 188.0])
        );
        // Already covered: nothing changes.
        assert_eq!(joined(170.0, [150.0, 190.0], &[], &e, None, false), None);
    }

    #[test]
    fn in_the_judged_unit_the_levels_widen_by_half_their_spread() {
        // Two earlier levels and this run's, all on one side of where later runs centre (an
        // add chain's ten runs read 100.24–100.76 cycles, median 100.585; this one 100.243
        // [99.903, 100.584]): the range alone stops short, half the spread beyond covers.
        let e = EarlierRuns::from_medians(&[100.30, 100.50]).unwrap();
        let j = joined(100.243, [99.903, 100.584], &[], &e, None, true).unwrap();
        let widen = (100.50f64 / 100.243).sqrt();
        assert!((j[1] - 100.50 * widen).abs() < 1e-9, "{j:?}");
        assert!(j[1] >= 100.585, "{j:?}");
        assert_eq!(j[0], 99.903, "the run's own reaches further down");
        // In the other unit, only the earlier medians: already covered.
        assert_eq!(
            joined(100.243, [99.903, 100.584], &[], &e, None, false),
            None
        );
        // Levels that agree within the run's own interval widen nothing.
        let e = EarlierRuns::from_medians(&[100.2, 100.21]).unwrap();
        assert_eq!(joined(100.2, [100.1, 100.3], &[], &e, None, true), None);
    }

    #[test]
    fn an_earlier_build_lends_its_spread_not_its_level() {
        // The old build read 146–163 (x1.116); this one reads 100 on its first run.
        let e = EarlierRuns::of_earlier_build(&[146.0, 163.0, 155.0]).unwrap();
        assert!(e.earlier_build);
        let j = joined(100.0, [99.0, 101.0], &[], &e, None, false).unwrap();
        let spread = 163.0 / 146.0;
        assert!((j[0] - 100.0 / spread).abs() < 1e-9 && (j[1] - 100.0 * spread).abs() < 1e-9);
        // A run at the low end of that spread covers one at its high end.
        let j = joined(146.0, [145.0, 147.0], &[], &e, None, false).unwrap();
        assert!(j[1] >= 163.0 - 1e-9, "{j:?}");
        // Kept in the file only when set.
        let plain = serde_json::to_string(&EarlierRuns::from_medians(&[1.0, 2.0]).unwrap());
        assert!(!plain.unwrap().contains("earlier_build"));
        let back: EarlierRuns = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn medians_far_beyond_the_clock_s_range_are_other_inputs_and_widen_nothing() {
        // CHAIN_N=100 and 200 runs kept as one benchmark: ×2.03, not the clock.
        let e = EarlierRuns::from_medians(&[23.30, 47.22, 23.5]).unwrap();
        assert!(e.far_beyond_clock(24.2, Some([3.4, 4.1])));
        assert_eq!(
            joined(24.2, [23.94, 24.46], &[], &e, Some([3.4, 4.1]), false),
            None
        );
        // This run's median far from this build's earlier ones: the same.
        let e = EarlierRuns::from_medians(&[23.3, 23.7]).unwrap();
        assert_eq!(joined(47.2, [47.0, 47.4], &[], &e, None, false), None);
        // Within the clock's range and then some (the pointer chase's ×1.19): joined.
        let e = EarlierRuns::from_medians(&[158.0, 188.0]).unwrap();
        assert!(!e.far_beyond_clock(170.0, None));
        assert!(joined(170.0, [169.0, 171.0], &[], &e, None, false).is_some());
        // An earlier build's spread is judged among its own runs, not against this level.
        let e = EarlierRuns::of_earlier_build(&[23.3, 47.2]).unwrap();
        assert_eq!(joined(24.2, [23.94, 24.46], &[], &e, None, false), None);
        let e = EarlierRuns::of_earlier_build(&[23.3, 23.7]).unwrap();
        assert!(joined(47.2, [47.0, 47.4], &[], &e, None, false).is_some());
        // The result keeps the earlier runs, marked.
        let bytes = include_bytes!("../../tests/fixtures/results/run-cpp-v0.1.0.json");
        let mut r = crate::result::parse(bytes, "fixture").unwrap().benchmarks[0].clone();
        let m = r.per_iter.median_ns;
        let ci = r.per_iter.ci95_ns;
        let e = EarlierRuns::from_medians(&[m, 2.0 * m]).unwrap();
        assert!(!join_result(&mut r, &e, None));
        assert_eq!(r.per_iter.ci95_ns, ci);
        assert!(r.earlier_runs.is_some_and(|e| e.beyond_clock));
    }

    #[test]
    fn too_few_runs_or_a_figure_not_to_trust_widen_nothing() {
        assert!(EarlierRuns::from_medians(&[100.0]).is_none());
        assert!(EarlierRuns::from_medians(&[100.0, f64::NAN]).is_none());
        let e = EarlierRuns::from_medians(&[100.0, 120.0]).unwrap();
        for code in [Code::CoreSlowed, Code::CoreShared, Code::OptimizedAway] {
            let d = [Diagnostic::new(code, "x")];
            assert!(!figure_worth_keeping(60.0, &d));
            assert_eq!(joined(60.0, [59.0, 61.0], &d, &e, None, false), None);
        }
        assert_eq!(joined(f64::NAN, [59.0, 61.0], &[], &e, None, false), None);
    }

    #[test]
    fn a_result_keeps_its_run_s_own_interval() {
        let bytes = include_bytes!("../../tests/fixtures/results/run-cpp-v0.1.0.json");
        let file = crate::result::parse(bytes, "fixture").unwrap();
        let mut r = file.benchmarks[0].clone();
        assert_eq!(r.status, Status::Ok);
        let own = r.per_iter.run_ci95_ns;
        let m = r.per_iter.median_ns;
        let e = EarlierRuns::from_medians(&[m * 0.9, m * 1.1]).unwrap();
        assert!(join_result(&mut r, &e, None));
        // Judged in ns (a file of 0.1.0): the levels, widened by half their spread.
        let widen = (1.1f64 / 0.9).sqrt();
        let [lo, hi] = r.per_iter.ci95_ns;
        assert!((lo - m * 0.9 / widen).abs() < 1e-9 * m, "{lo}");
        assert!((hi - m * 1.1 * widen).abs() < 1e-9 * m, "{hi}");
        assert_eq!(r.per_iter.run_ci95_ns, own);
        r.status = Status::Failed;
        assert!(!join_result(
            &mut r,
            &EarlierRuns::from_medians(&[m * 0.5, m]).unwrap(),
            None
        ));
    }

    #[test]
    fn a_run_beyond_the_earlier_runs_in_its_headline_unit_is_shifted() {
        let bytes = include_bytes!("../../tests/fixtures/results/run-cpp-v0.1.0.json");
        let file = crate::result::parse(bytes, "fixture").unwrap();
        let base = file.benchmarks[0].clone();
        let m = base.per_iter.median_ns;
        let codes =
            |r: &BenchmarkResult| -> Vec<Code> { r.diagnostics.iter().map(|d| d.code).collect() };
        // In ns: 1.5× above two earlier runs (the first run after a pause), then one 0.5 %
        // from them (what runs of the same code read).
        let mut r = base.clone();
        r.per_iter.run_ci95_ns = [m * 0.99, m * 1.01];
        join_result(
            &mut r,
            &EarlierRuns::from_medians(&[m / 1.5, m / 1.45]).unwrap(),
            None,
        );
        assert!(codes(&r).contains(&Code::Shifted), "{:?}", codes(&r));
        let d = r
            .diagnostics
            .iter()
            .find(|d| d.code == Code::Shifted)
            .unwrap();
        assert!(d.text().contains("above the 2 recent runs"), "{}", d.text());
        // 10 % above them: shifted, and the next run's interval covers them.
        let mut r = base.clone();
        r.per_iter.run_ci95_ns = [m * 0.99, m * 1.01];
        join_result(
            &mut r,
            &EarlierRuns::from_medians(&[m / 1.1, m / 1.09]).unwrap(),
            None,
        );
        assert!(codes(&r).contains(&Code::Shifted));
        assert!(r.per_iter.ci95_ns[0] <= m / 1.1, "{:?}", r.per_iter.ci95_ns);
        let mut r = base.clone();
        r.per_iter.run_ci95_ns = [m * 0.999, m * 1.001];
        join_result(
            &mut r,
            &EarlierRuns::from_medians(&[m / 1.005, m / 1.004]).unwrap(),
            None,
        );
        assert!(!codes(&r).contains(&Code::Shifted));
        // In cycles: the time moved with the clock (no word), the cycles did not; then the
        // cycles moved 5 % (a regression, or a neighbour the clock does not show).
        let in_cycles = |cycles: f64| {
            let mut r = base.clone();
            r.headline_unit = Unit::Cycles;
            r.speed = Some(
                serde_json::from_value(serde_json::json!({
                    "fastest_ghz": 3.0, "reference": "probes",
                    "fast": {"samples": 100, "share": 1.0, "ghz": 3.0, "median_ns": m},
                    "slow": null, "split": false, "probed_batches": 10, "probe_share": 0.01,
                    "cycles_per_iter": cycles, "cycles_ci95": [cycles * 0.999, cycles * 1.001],
                    "cycles_run_ci95": [cycles * 0.999, cycles * 1.001]
                }))
                .unwrap(),
            );
            r.per_iter.run_ci95_ns = [m * 0.999, m * 1.001];
            let e = EarlierRuns::from_medians(&[m / 1.15, m / 1.12])
                .unwrap()
                .with_cycles(&[None, Some(100.0), Some(100.2)]);
            join_result(&mut r, &e, Some([2.5, 2.9]));
            r
        };
        let r = in_cycles(100.1);
        assert!(!codes(&r).contains(&Code::Shifted), "{:?}", codes(&r));
        let r = in_cycles(105.0);
        assert!(codes(&r).contains(&Code::Shifted));
        let ci = r.speed.as_ref().unwrap().cycles_ci95.unwrap();
        assert!(ci[0] <= 100.0 && ci[1] >= 105.0 * 1.001 - 1e-9, "{ci:?}");
    }
}
