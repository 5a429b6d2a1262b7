//! What the machine did to a whole run. When most of a run's ordinary benchmarks carry the
//! codes a disturbed machine gives (noise, drift, a slowed core), the cause is the machine's,
//! not each benchmark's: it is said once for the run (the report's machine line words
//! [`Disturbance`]), and those codes are marked `explained_by: "machine"` on each benchmark, so
//! that its row shows only the codes that are its own and the file keeps every one. A pure
//! function of the results: the run's table applies it to the rows measured so far as each is
//! printed ([`Tally`]), and to the whole run when it ends ([`explain_run`]); `vernier analyze`
//! re-derives it.

use super::{BenchmarkResult, Harness, Status};
use crate::diagnostic::{Code, ExplainedBy};
use serde::{Deserialize, Serialize};

/// The codes a disturbed machine gives any benchmark: other work or the hypervisor taking the
/// CPU (`outliers`, `unstable`), a level that drifts (`no-steady-state`, `nonlinear`), the
/// core's clock held down (`core-slowed`).
pub const MACHINE_CODES: [Code; 5] = [
    Code::Unstable,
    Code::Outliers,
    Code::NoSteadyState,
    Code::Nonlinear,
    Code::CoreSlowed,
];

/// The machine disturbed the run when more than this share of its ordinary benchmarks carry
/// a machine code: then it is not each benchmark's doing. Below it, the codes stay their rows'.
pub const MOST: f64 = 0.5;

/// Ordinary benchmarks a run needs before the machine can be told from its benchmarks: with
/// fewer, "most of them" is one or two, and the codes stay their rows'.
pub const MIN_ORDINARY: usize = 4;

/// Whether `b` is an ordinary benchmark: measured to the end, with its work present, on one
/// thread (a threaded one's codes may be its threads' doing).
pub fn ordinary(b: &BenchmarkResult) -> bool {
    b.status == Status::Ok && !b.removed() && b.threads.is_none()
}

/// Whether `code` is one a disturbed machine gives ([`MACHINE_CODES`]).
pub fn machine_code(code: Code) -> bool {
    MACHINE_CODES.contains(&code)
}

/// The run's ordinary benchmarks counted as they come: how many, how many carry a machine
/// code, and how many carry each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub ordinary: usize,
    pub disturbed: usize,
    /// For each of [`MACHINE_CODES`], the ordinary benchmarks that carry it.
    pub per_code: [usize; MACHINE_CODES.len()],
}

impl Tally {
    /// The tally over `benchmarks`.
    pub fn of(benchmarks: &[BenchmarkResult]) -> Tally {
        let mut t = Tally::default();
        for b in benchmarks {
            t.add(b);
        }
        t
    }

    /// Counts `b` in.
    pub fn add(&mut self, b: &BenchmarkResult) {
        if !ordinary(b) {
            return;
        }
        self.ordinary += 1;
        let mut any = false;
        for (i, code) in MACHINE_CODES.iter().enumerate() {
            if b.diagnostics.iter().any(|d| d.code == *code) {
                self.per_code[i] += 1;
                any = true;
            }
        }
        self.disturbed += usize::from(any);
    }

    /// The machine disturbed the benchmarks counted: enough of them, and most carry a
    /// machine code.
    pub fn machine_disturbed(&self) -> bool {
        self.ordinary >= MIN_ORDINARY && self.disturbed as f64 > MOST * self.ordinary as f64
    }
}

/// A run the machine disturbed, as its machine line says it: how many of its ordinary
/// benchmarks carried which machine codes, and the run's own measures of the machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Ordinary benchmarks that carried a machine code, of `ordinary`.
    pub disturbed: usize,
    pub ordinary: usize,
    /// Each machine code that occurred, with the ordinary benchmarks that carried it.
    pub codes: Vec<(Code, usize)>,
    /// The share of far outliers in the reference chain measured at start-up, before any
    /// benchmark (`harness.noise_far_share`): the machine's interruptions, as the run saw them.
    pub reference_far_share: Option<f64>,
    /// The core's clock over the run (GHz, slowest and fastest that the probe read), when the
    /// core was slowed in some of them.
    pub clock_ghz: Option<[f64; 2]>,
    /// The system audit's failing checks that disturb a run (`load`: other work competing for
    /// the CPU), and the hypervisor when the machine is a virtual one (it can steal time).
    pub audit: Vec<String>,
    pub hypervisor: Option<String>,
}

/// The audit's checks whose failure disturbs every benchmark of a run: other work competing
/// for the CPU.
const DISTURBING_CHECKS: [&str; 1] = ["load"];

/// The machine's disturbance of the whole run, `None` when it did not disturb most of its
/// ordinary benchmarks. `system` is the result file's audit summary.
pub fn disturbance(
    benchmarks: &[BenchmarkResult],
    harness: &Harness,
    system: &serde_json::Value,
) -> Option<Disturbance> {
    let t = Tally::of(benchmarks);
    if !t.machine_disturbed() {
        return None;
    }
    let codes: Vec<(Code, usize)> = MACHINE_CODES
        .iter()
        .zip(t.per_code)
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| (*c, n))
        .collect();
    let slowed = codes.iter().any(|(c, _)| *c == Code::CoreSlowed);
    let ghz: Vec<f64> = benchmarks
        .iter()
        .filter_map(|b| b.speed.as_ref())
        .flat_map(|s| std::iter::once(s.fast.ghz).chain(s.slow.as_ref().map(|x| x.ghz)))
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    let clock_ghz = match (
        ghz.iter().copied().reduce(f64::min),
        ghz.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) if slowed => Some([lo, hi]),
        _ => None,
    };
    let audit = system["failing"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str())
        .filter(|c| DISTURBING_CHECKS.contains(c))
        .map(str::to_string)
        .collect();
    Some(Disturbance {
        disturbed: t.disturbed,
        ordinary: t.ordinary,
        codes,
        reference_far_share: harness.noise_far_share,
        clock_ghz,
        audit,
        hypervisor: system["virtualization"].as_str().map(str::to_string),
    })
}

/// Marks the machine codes of `b` as the machine's (`explained`) or as its own.
pub fn mark(b: &mut BenchmarkResult, explained: bool) {
    let ordinary_codes = !b.removed() && b.status == Status::Ok;
    for d in &mut b.diagnostics {
        d.explained_by =
            (explained && ordinary_codes && machine_code(d.code)).then_some(ExplainedBy::Machine);
    }
}

/// The whole run: when the machine disturbed most of its ordinary benchmarks, every
/// benchmark's machine codes are marked as explained by it; otherwise every mark is cleared
/// (a mark made while the run's first rows were printed, which the whole run does not bear
/// out). Returns whether the machine explains them.
pub fn explain_run(benchmarks: &mut [BenchmarkResult]) -> bool {
    let explained = Tally::of(benchmarks).machine_disturbed();
    for b in benchmarks.iter_mut() {
        mark(b, explained);
    }
    explained
}

#[cfg(test)]
mod tests;
