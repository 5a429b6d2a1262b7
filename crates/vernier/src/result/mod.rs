//! The result file, schema 1 (`docs/result-schema.md`): every figure, every raw sample, the
//! timer's calibration, the harness's own costs and the machine, as structured fields.
//! Written atomically (temporary file + rename) so a crash never leaves half a file.

pub mod cold;
pub mod comparison;
mod load;
pub mod memory;
pub mod recent_runs;
pub mod threads;

pub use load::{load, parse, Invalid, LoadError};

pub use crate::analyze::{Interrupted, Outliers, PerIter, Warmup};

use crate::analyze::nan::{nan_as_null, nan_pair};
use crate::analyze::{Analysis, Context};
use crate::diagnostic::Diagnostic;
use crate::machine::Machine;
use crate::measure::{Measurement, StopReason};
use crate::samples::{CounterColumn, Phase, Sample, Samples};
use crate::stats::steady::{SteadyState, WarmupClass};
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The schema version written by this crate.
pub const SCHEMA: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The process that wrote the file, and its parent: several bench targets of one `cargo
    /// bench` (same parent) merge their benchmarks into one `--json` file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_pid: Option<u32>,
}

impl Default for Tool {
    fn default() -> Self {
        Tool {
            name: "vernier".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            pid: Some(std::process::id()),
            parent_pid: Some(std::os::unix::process::parent_id()),
        }
    }
}

/// The harness's own costs, measured once at start-up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Harness {
    /// Per-iteration cost of the measuring loop around an empty body.
    #[serde(with = "nan_as_null")]
    pub empty_iter_ns: f64,
    /// Cost of one sample with zero iterations: timer reads plus the loop's entry and exit.
    #[serde(with = "nan_as_null")]
    pub sample_cost_ns: f64,
    /// Duration of one CPU cycle, and where it comes from (`add-chain`: a chain of dependent
    /// one-cycle additions timed at start-up; `counters`: cycles / task-clock).
    #[serde(with = "nan_as_null")]
    pub cycle_ns: f64,
    pub cycle_source: String,
    /// For workers: the runner's median cost between two batches (protocol round trip and
    /// bookkeeping, outside every timed region).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_batch_cost_ns: Option<f64>,
    /// Counters read around each sample; absent when counters are off (`--counters none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<CountersHarness>,
    /// The machine's own noise: the share of far outliers on the add chain measured at
    /// start-up (`outliers` is only claimed beyond it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_far_share: Option<f64>,
    /// The machine's known speed, ns per addition of the core-speed probe: what earlier runs
    /// on this machine measured in their fast state (the `vernier` command keeps them; see
    /// `docs/result-schema.md`). A benchmark measured wholly slower is `core-slowed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_cycle_ns: Option<f64>,
    /// The range of the core's clock over this machine's recent runs, GHz-equivalent of the
    /// core-speed probe: [slowest, fastest] of their fast-state speeds, leaving out runs wholly
    /// in a slow state (`core-slowed` against the known speed). A benchmark's
    /// interval covers its cycles at both ends (another run may find the core anywhere in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ghz: Option<[f64; 2]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    /// Cut short by Ctrl-C: the samples taken before it are kept and analysed, but the
    /// benchmark did not reach its precision target or spend its budget.
    Interrupted,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessJson {
    pub index: u32,
    pub env_pad_bytes: u64,
    #[serde(with = "nan_as_null")]
    pub median_ns: f64,
    #[serde(default, with = "nan_pair")]
    pub ci95_ns: [f64; 2],
    #[serde(default)]
    pub samples: usize,
    /// The process's hash seed, when its worker sent one (a Python worker's `PYTHONHASHSEED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_seed: Option<String>,
    /// The process's peak resident memory (`wait4`'s `ru_maxrss`), when the runner reaped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// The counters the harness read and what reading them costs (see `docs/counters.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CountersHarness {
    /// The events asked for.
    pub requested: Vec<String>,
    /// The events read (perf names).
    pub events: Vec<String>,
    /// The events that could not be read, why, and the fix.
    pub unavailable: Vec<crate::counters::Unavailable>,
    /// One sentence for the user about `unavailable`.
    pub note: Option<String>,
    /// Wall time counters add to each sample, in ns: the reads, the deltas and the columns, as
    /// the engine takes samples (in-process: empty samples timed with and without counters;
    /// in a worker: a batch's round trip with and without, per sample).
    #[serde(with = "nan_as_null")]
    pub read_cost_ns: f64,
    /// One `read_start` + `read_stop` pair alone, in ns (in-process only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pair_ns: Option<f64>,
    /// `read(2)` calls per side of the timed region (one per group).
    pub reads_per_side: usize,
    /// Each event's delta over an empty timed region: what the reads themselves add to every
    /// sample's counts; analysis subtracts it from each sample, as the timer's cost is
    /// accounted for in times.
    pub baseline: BTreeMap<String, f64>,
    /// The sample length the plan used (lengthened when the reads would otherwise cost more
    /// than `MAX_COUNTER_OVERHEAD` of a sample), in ns.
    pub target_sample_ns: u64,
    /// read_cost_ns / target_sample_ns.
    pub overhead: f64,
}

/// Raw samples, column by column.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplesJson {
    pub iters: Vec<u64>,
    pub ns: Vec<u64>,
    pub t_s: Vec<f64>,
    pub phase: Vec<Phase>,
    pub process: Vec<u32>,
    /// Round of each sample; absent when everything was measured in one round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round: Vec<u32>,
    /// Raw counter deltas per sample, one array per event (`null`: not counted in that
    /// sample, never a zero). The read cost's baseline (`harness.counters.baseline`) is not
    /// subtracted here; analysis subtracts it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Vec<Option<u64>>>,
    /// For events scaled by PMU multiplexing in at least one sample: which samples.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters_scaled: BTreeMap<String, Vec<bool>>,
    /// Samples during which the thread was switched out or migrated (absent when those
    /// events were not counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupted: Vec<bool>,
    /// The core-speed probe run before each sample's batch: elapsed ns of a chain of
    /// `probe_adds` dependent additions (`null`: that batch was not probed). Absent when
    /// nothing was probed (older files, harnesses without the probe).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probe_ns: Vec<Option<u64>>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub probe_adds: u64,
    /// The probe's throughput half beside `probe_ns`: elapsed ns of `probe_adds` additions
    /// in eight independent chains (`null` where not run). Absent when no batch had it
    /// (older files and harnesses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wide_ns: Vec<Option<u64>>,
    /// A threaded benchmark's threads: per thread, the ns from each sample's release to that
    /// thread's finish (`ns` is the last of them). Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_ns: Vec<Vec<Option<u64>>>,
    /// Per thread, its time on a CPU (ns) over each sample's window: from its clock reading
    /// before the release to the one after its finish (docs/threads.md). Absent when not
    /// read (older files and harnesses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_cpu_ns: Vec<Vec<Option<u64>>>,
    /// Per thread, its run-queue wait (ns runnable but waiting for a CPU) over the same
    /// window. Absent where the kernel does not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_wait_ns: Vec<Vec<Option<u64>>>,
    /// The CPUs the process running a threaded benchmark could use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// One state of the core (see `speed`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedStateJson {
    pub samples: usize,
    pub share: f64,
    /// GHz-equivalent: additions per ns of the probe's chain (median over the state).
    #[serde(with = "nan_as_null")]
    pub ghz: f64,
    #[serde(with = "nan_as_null")]
    pub median_ns: f64,
    /// Additions per ns of the probe's throughput half (eight independent chains), median
    /// over the state; absent for a harness without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<f64>,
}

/// The core's speed during the benchmark, from the probes between batches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedJson {
    /// The fastest state's speed (GHz-equivalent) and where it comes from: `probes`,
    /// `start-up` (the harness's add chain) or `nominal` (the TSC's rate).
    pub fastest_ghz: f64,
    pub reference: String,
    /// The best throughput of the probe's throughput half during the benchmark (additions
    /// per ns); absent for a harness without it. A slow state whose throughput fell further
    /// than its clock is one of shared units (a busy sibling thread), not of the clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_throughput: Option<f64>,
    pub fast: SpeedStateJson,
    /// The steady samples in a state at least `speed::SLOW_RATIO` slower, if any.
    pub slow: Option<SpeedStateJson>,
    /// Whether the headline rests on the fast state's samples only (bimodal: both states
    /// have a figure).
    pub split: bool,
    /// Batches probed.
    pub probed_batches: usize,
    /// Time the probes took, as a share of the benchmark's wall time.
    pub probe_share: f64,
    /// The machine's known speed (GHz-equivalent) when the benchmark's state ran at least
    /// `speed::KNOWN_SLOW_RATIO` slower than it; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_known_ghz: Option<f64>,
    /// The headline's time per iteration in cycles of the core at that moment (the probe's
    /// effective cycle time around each sample): median and 95 % interval. The same whatever
    /// the clock for code bound by the core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_iter: Option<f64>,
    /// The interval in cycles a next run on this machine should fall in (as
    /// `per_iter.ci95_ns` in ns): for a benchmark judged in cycles, the run's own widened by
    /// the spread between its processes and rounds and joined to its earlier runs' cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_ci95: Option<[f64; 2]>,
    /// This run's own interval in cycles (as `per_iter.run_ci95_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_run_ci95: Option<[f64; 2]>,
}

impl SpeedJson {
    fn new(s: &crate::analyze::speed::Speed) -> SpeedJson {
        let state = |f: &crate::analyze::speed::StateFigure| SpeedStateJson {
            samples: f.samples,
            share: f.share,
            ghz: 1.0 / f.cycle_ns,
            median_ns: f.median_ns,
            throughput: (f.wide_ns.is_finite() && f.wide_ns > 0.0).then(|| 1.0 / f.wide_ns),
        };
        SpeedJson {
            fastest_ghz: 1.0 / s.fastest_cycle_ns,
            reference: s.reference.as_str().into(),
            fastest_throughput: s.fastest_wide_ns.map(|w| 1.0 / w),
            fast: state(&s.fast),
            slow: s.slow.as_ref().map(state),
            split: s.split,
            probed_batches: s.probed_batches,
            probe_share: s.probe_share,
            behind_known_ghz: s.behind_known_cycle_ns.map(|c| 1.0 / c),
            cycles_per_iter: s.cycles_per_iter.map(|c| c.median),
            cycles_ci95: s
                .cycles_next_ci95
                .or(s.cycles_per_iter.map(|c| [c.lo, c.hi])),
            cycles_run_ci95: s.cycles_per_iter.map(|c| [c.lo, c.hi]),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    pub name: String,
    pub status: Status,
    pub error: Option<String>,
    pub iters_per_sample: u64,
    pub per_iter: PerIter,
    /// T_tot: the benchmark's whole wall time, calibration and warm-up included.
    pub total_s: f64,
    pub warmup: Warmup,
    /// Per-iteration counter figures: `<event>_per_iter` (median over the steady samples,
    /// the read cost's baseline subtracted) with `<event>_per_iter_ci95_lo` / `_hi`, and the
    /// derived `ipc`, `branch_miss_rate`, `cache_miss_rate`, `ghz` (each with its interval).
    /// In `instructions` mode: `instructions_per_iter`, `D1mr_per_iter`, … from callgrind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<BTreeMap<String, f64>>,
    /// Steady samples during which a context switch or CPU migration happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interrupted>,
    pub processes: Vec<ProcessJson>,
    pub diagnostics: Vec<Diagnostic>,
    #[serde(default)]
    pub steady_samples: usize,
    #[serde(default)]
    pub outliers: Outliers,
    #[serde(default)]
    pub worst_sigma: f64,
    /// Why sampling stopped: `precise`, `budget`, `interrupted`, `failed`.
    #[serde(default)]
    pub stop: String,
    /// The core's speed during the benchmark; absent when nothing was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<SpeedJson>,
    /// The unit the benchmark's judgements (steady state, stability, outliers, layout, the
    /// interval for the next run, earlier runs, history) were made in: `cycles` for code that
    /// follows the core's clock, `ns` otherwise (`analyze::unit`). Files written before it
    /// read as `ns`.
    #[serde(default)]
    pub headline_unit: crate::analyze::Unit,
    /// Instructions per iteration counted under callgrind for a benchmark whose time could not
    /// be told from the empty loop's (`optimized-away` by time alone): the evidence that
    /// confirms or clears it. Absent when no count was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_check: Option<crate::analyze::InstructionsCheck>,
    /// The range of this benchmark's medians in the same program's recent runs on this
    /// machine, which `per_iter.ci95_ns` was joined to (`vernier::result::recent_runs`). Absent when there
    /// were fewer than two, or for a run outside the `vernier` command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_runs: Option<recent_runs::EarlierRuns>,
    /// `true` for a benchmark measured with the caches evicted before every sample
    /// (`--cache cold`, `Suite::bench_cold`): the checks that need several iterations per
    /// sample were taken off (`cold::drop_warm_checks`), and `vernier analyze` does the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_cold: bool,
    /// A threaded benchmark's thread count (its name ends in `/threads:T`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// A threaded benchmark's figures: throughput, time per operation as each thread sees it,
    /// the threads' imbalance and, beside the one-thread run, the speed-up and efficiency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<threads::Scaling>,
    /// Allocations per iteration from the counting pass (docs/memory.md); absent when not
    /// counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<memory::MemoryJson>,
    pub samples: SamplesJson,
}

/// What the analysis is told beyond the samples, recorded so that `vernier analyze` redoes it
/// exactly. Files written before this block existed get the defaults of their time (see
/// `load::upgrade`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisSettings {
    /// The benchmarks were compiled without optimisation.
    pub debug_build: bool,
    /// The interval the plan aimed for (relative half-width).
    pub target_rel_ci: f64,
    /// Samples shorter than this many times the timer's cost are timer-limited.
    pub timer_factor: f64,
    /// Interrupted samples were kept in the estimates (`--keep-interrupted`).
    pub keep_interrupted: bool,
}

impl Default for AnalysisSettings {
    fn default() -> Self {
        AnalysisSettings {
            debug_build: false,
            target_rel_ci: crate::plan::DEFAULT_TARGET_REL_CI,
            timer_factor: crate::plan::TIMER_FACTOR,
            keep_interrupted: false,
        }
    }
}

impl AnalysisSettings {
    /// The settings of a run measured with `plan`.
    pub fn new(plan: &crate::plan::Plan, debug_build: bool, keep_interrupted: bool) -> Self {
        AnalysisSettings {
            debug_build,
            target_rel_ci: plan.target_rel_ci,
            timer_factor: plan.timer_factor,
            keep_interrupted,
        }
    }
}

/// A whole result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema: u32,
    pub tool: Tool,
    pub machine: Machine,
    /// Summary of the system audit (`vernier system show`), when the runner has one.
    #[serde(default)]
    pub system: serde_json::Value,
    pub timer: TimerInfo,
    #[serde(default)]
    pub harness: Harness,
    /// `time` (default) or `instructions` (deterministic counts under valgrind).
    #[serde(default = "default_mode")]
    pub mode: String,
    /// What the analysis was told beyond the samples.
    #[serde(default)]
    pub analysis: AnalysisSettings,
    pub benchmarks: Vec<BenchmarkResult>,
}

fn default_mode() -> String {
    "time".into()
}

fn stop_str(s: StopReason) -> &'static str {
    match s {
        StopReason::Precise => "precise",
        StopReason::Budget => "budget",
        StopReason::Interrupted => "interrupted",
        StopReason::Failed => "failed",
    }
}

/// One entry per process that took samples, in index order. A process with samples in the
/// headline has its figures from them (`samples` counts them); a process without (all its
/// samples in a slow state of the core, in warm-up or in calibration) is still listed, so
/// that its padding, hash seed and peak memory are kept, with the median of its own samples
/// past calibration (of all of them when it took no other) and `samples` 0.
fn process_entries(
    s: &[Sample],
    headline: &[crate::analyze::ProcessFigure],
    env_pad: &dyn Fn(u32) -> u64,
) -> Vec<ProcessJson> {
    let entry = |index: u32, median_ns: f64, ci: (f64, f64), samples: usize| ProcessJson {
        index,
        env_pad_bytes: env_pad(index),
        median_ns,
        ci95_ns: [ci.0, ci.1],
        samples,
        hash_seed: None,
        peak_rss_bytes: None,
    };
    let mut out: Vec<ProcessJson> = headline
        .iter()
        .map(|p| entry(p.index, p.median_ns, p.ci95_ns, p.samples))
        .collect();
    let mut by: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for x in s {
        if !headline.iter().any(|p| p.index == x.process) {
            let (past, all) = by.entry(x.process).or_default();
            if x.phase != Phase::Calibration {
                past.push(x.per_iter_ns());
            }
            all.push(x.per_iter_ns());
        }
    }
    for (index, (past, all)) in by {
        let v = if past.is_empty() { all } else { past };
        let ci = crate::stats::median_interval(&v);
        out.push(entry(index, ci.median, (ci.lo, ci.hi), 0));
    }
    out.sort_by_key(|p| p.index);
    out
}

impl BenchmarkResult {
    /// Assemble a benchmark's entry from its measurement and analysis.
    pub fn new(
        name: &str,
        m: &Measurement,
        a: &Analysis,
        env_pad: &dyn Fn(u32) -> u64,
    ) -> BenchmarkResult {
        let s = &m.samples.samples;
        BenchmarkResult {
            name: name.to_string(),
            status: if m.error.is_some() {
                Status::Failed
            } else if m.stop == crate::measure::StopReason::Interrupted {
                Status::Interrupted
            } else {
                Status::Ok
            },
            error: m.error.clone(),
            iters_per_sample: m.iters_per_sample,
            per_iter: a.per_iter,
            total_s: m.wall_ns as f64 * 1e-9,
            warmup: a.warmup,
            counters: (!a.counters.is_empty()).then(|| a.counters.clone()),
            interrupted: a.interrupted,
            processes: process_entries(s, &a.processes, env_pad),
            // Worded here, from the findings: the file's `message` is for its readers.
            diagnostics: a.diagnostics.iter().map(Diagnostic::from).collect(),
            steady_samples: a.steady_samples,
            outliers: a.outliers,
            worst_sigma: a.worst_sigma,
            stop: stop_str(m.stop).into(),
            speed: a.speed.as_ref().map(SpeedJson::new),
            headline_unit: a.headline_unit,
            instructions_check: None,
            earlier_runs: None,
            cache_cold: false,
            threads: a.threads.as_ref().map(|t| t.threads),
            scaling: a.threads.as_ref().map(threads::Scaling::new),
            memory: None,
            samples: SamplesJson {
                iters: s.iter().map(|x| x.iters).collect(),
                ns: s.iter().map(|x| x.ns).collect(),
                t_s: s.iter().map(|x| x.t_ns as f64 * 1e-9).collect(),
                phase: s.iter().map(|x| x.phase).collect(),
                process: s.iter().map(|x| x.process).collect(),
                round: if s.iter().any(|x| x.round > 0) {
                    s.iter().map(|x| x.round).collect()
                } else {
                    Vec::new()
                },
                counters: m
                    .samples
                    .counters
                    .iter()
                    .map(|c| (c.event.clone(), c.values.clone()))
                    .collect(),
                counters_scaled: m
                    .samples
                    .counters
                    .iter()
                    .filter(|c| c.scaled.contains(&true))
                    .map(|c| (c.event.clone(), c.scaled.clone()))
                    .collect(),
                interrupted: a.interrupted_samples.clone(),
                probe_ns: m.samples.probe_ns.clone(),
                probe_adds: m.samples.probe_adds,
                wide_ns: m.samples.wide_ns.clone(),
                thread_ns: m.samples.thread_ns.clone(),
                thread_cpu_ns: m.samples.thread_cpu_ns.clone(),
                thread_wait_ns: m.samples.thread_wait_ns.clone(),
                cpus: m.samples.cpus,
            },
        }
    }

    /// A benchmark that could not be measured at all.
    pub fn failed(name: &str, error: String) -> BenchmarkResult {
        BenchmarkResult {
            name: name.into(),
            status: Status::Failed,
            error: Some(error),
            iters_per_sample: 0,
            per_iter: PerIter::undefined(),
            total_s: 0.0,
            warmup: Warmup {
                samples: 0,
                seconds: 0.0,
                class: WarmupClass::Flat,
            },
            counters: None,
            interrupted: None,
            processes: vec![],
            diagnostics: vec![],
            steady_samples: 0,
            outliers: Outliers::default(),
            worst_sigma: 0.0,
            stop: "failed".into(),
            speed: None,
            headline_unit: crate::analyze::Unit::Ns,
            instructions_check: None,
            earlier_runs: None,
            cache_cold: false,
            threads: None,
            scaling: None,
            memory: None,
            samples: SamplesJson::default(),
        }
    }
}

/// What a run records about its session before its first benchmark: the header every result
/// file starts with, whichever command made it (`run`, `demo` and `cargo bench` in process,
/// `--instructions`).
pub struct Session {
    /// `time` or `instructions`.
    pub mode: &'static str,
    pub machine: Machine,
    /// The system audit (`vernier system show --json`), or null when none was made.
    pub system: serde_json::Value,
    pub timer: TimerInfo,
    pub harness: Harness,
    pub analysis: AnalysisSettings,
}

impl Harness {
    /// A harness whose costs were not measured (counting instructions measures no time).
    pub fn unmeasured() -> Harness {
        Harness {
            empty_iter_ns: f64::NAN,
            sample_cost_ns: f64::NAN,
            cycle_ns: f64::NAN,
            cycle_source: "none".into(),
            ..Harness::default()
        }
    }
}

impl ResultFile {
    /// A result file with its session's header and no benchmark yet.
    pub fn begin(session: Session) -> ResultFile {
        ResultFile {
            schema: SCHEMA,
            tool: Tool::default(),
            machine: session.machine,
            system: session.system,
            timer: session.timer,
            harness: session.harness,
            mode: session.mode.into(),
            analysis: session.analysis,
            benchmarks: Vec::new(),
        }
    }

    /// Write atomically: a temporary file beside the target, then a rename.
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        write_atomic(path, &json)
    }

    /// Read, upgrade and validate a result file (see [`load`]).
    pub fn load(path: &Path) -> Result<ResultFile, LoadError> {
        load::load(path)
    }

    /// The analysis context of this run, built from its header: the one place a `Context` is
    /// made, for a live run (after its header is assembled) and for `vernier analyze` alike.
    pub fn analysis_context(&self) -> Context {
        let counters = self.harness.counters.as_ref();
        Context {
            timer: self.timer,
            empty_iter_ns: Some(self.harness.empty_iter_ns).filter(|x| x.is_finite()),
            cycle_ns: Some(self.harness.cycle_ns).filter(|c| c.is_finite()),
            debug_build: self.analysis.debug_build,
            target_rel_ci: self.analysis.target_rel_ci,
            timer_factor: self.analysis.timer_factor,
            counter_baseline: counters.map(|c| c.baseline.clone()).unwrap_or_default(),
            counters_note: counters.and_then(|c| c.note.clone()),
            counters_unavailable: counters
                .map(|c| {
                    c.unavailable
                        .iter()
                        .map(|u| u.event.name().to_string())
                        .collect()
                })
                .unwrap_or_default(),
            keep_interrupted: self.analysis.keep_interrupted,
            known_cycle_ns: self.harness.known_cycle_ns,
            clock_cycle_ns: self
                .harness
                .clock_ghz
                .filter(|[lo, hi]| lo.is_finite() && *lo > 0.0 && hi >= lo)
                .map(|[lo, hi]| (1.0 / hi, 1.0 / lo)),
            noise_far_share: self.harness.noise_far_share,
        }
    }
}

impl BenchmarkResult {
    /// The measurement this entry was made from, rebuilt from its raw samples: the inverse of
    /// [`BenchmarkResult::new`] for everything the analysis reads. The entry must have passed
    /// validation (every column as long as `ns`), as every loaded file has.
    pub fn measurement(&self) -> Measurement {
        let c = &self.samples;
        let samples = (0..c.ns.len())
            .map(|i| Sample {
                iters: c.iters[i],
                ns: c.ns[i],
                t_ns: (c.t_s[i] * 1e9).round() as u64,
                process: c.process[i],
                round: c.round.get(i).copied().unwrap_or(0),
                phase: c.phase[i],
            })
            .collect();
        let counters = c
            .counters
            .iter()
            .map(|(event, values)| CounterColumn {
                event: event.clone(),
                values: values.clone(),
                scaled: c.counters_scaled.get(event).cloned().unwrap_or_default(),
            })
            .collect();
        let steady = self.samples.phase.iter().position(|p| *p == Phase::Measure);
        Measurement {
            samples: Samples {
                samples,
                counters,
                probe_ns: c.probe_ns.clone(),
                probe_adds: c.probe_adds,
                wide_ns: c.wide_ns.clone(),
                thread_ns: c.thread_ns.clone(),
                thread_cpu_ns: c.thread_cpu_ns.clone(),
                thread_wait_ns: c.thread_wait_ns.clone(),
                cpus: c.cpus,
            },
            iters_per_sample: self.iters_per_sample,
            wall_ns: (self.total_s * 1e9).round() as u64,
            stop: stop_of(&self.stop),
            steady: steady.map(|first| SteadyState {
                first,
                class: self.warmup.class,
            }),
            error: self.error.clone(),
            // A stored result holds the count it measured at.
            calibration: crate::measure::CalibrationEnd::Found,
        }
    }
}

fn stop_of(s: &str) -> StopReason {
    match s {
        "precise" => StopReason::Precise,
        "interrupted" => StopReason::Interrupted,
        "failed" => StopReason::Failed,
        _ => StopReason::Budget,
    }
}

/// Write bytes to `path` atomically (temporary file in the same directory, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Check, before anything is measured, that a result can be written to `path` the way
/// [`write_atomic`] will write it: `path` is not a directory, its directory exists, and a file
/// can be created there (one is created and removed). The error names the problem and the
/// fix, without the option's name (the caller adds it).
pub fn check_destination(path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err("an empty path: give a file name such as result.json".into());
    }
    if path.is_dir() {
        return Err(format!(
            "{shown} is a directory: give a file path, such as {}",
            path.join("result.json").display()
        ));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        return Err(format!(
            "{shown}: the directory {} does not exist (create it first: mkdir -p {})",
            dir.display(),
            dir.display()
        ));
    }
    if !dir.is_dir() {
        return Err(format!("{shown}: {} is not a directory", dir.display()));
    }
    let probe = dir.join(format!(
        ".{}.{}.probe",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "result".into()),
        std::process::id()
    ));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "{shown}: cannot create a file in {} ({e}): choose a directory you can write to",
            dir.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_columns_round_trip_and_older_files_load_without_them() {
        let s = SamplesJson {
            iters: vec![10, 10],
            ns: vec![100, 101],
            t_s: vec![0.1, 0.2],
            phase: vec![Phase::Measure, Phase::Measure],
            process: vec![0, 0],
            probe_ns: vec![Some(5874), None],
            probe_adds: crate::plan::PROBE_ADDS,
            ..SamplesJson::default()
        };
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["probe_ns"], serde_json::json!([5874, null]));
        assert_eq!(serde_json::from_value::<SamplesJson>(v).unwrap(), s);
        // A file written before the probe: no column, no count.
        let old: SamplesJson = serde_json::from_value(serde_json::json!({
            "iters": [10], "ns": [100], "t_s": [0.1], "phase": ["measure"], "process": [0]
        }))
        .unwrap();
        assert!(old.probe_ns.is_empty() && old.probe_adds == 0);
        let plain = serde_json::to_value(&old).unwrap();
        assert!(plain.get("probe_ns").is_none() && plain.get("probe_adds").is_none());
    }

    #[test]
    fn every_process_that_took_samples_is_listed_with_or_without_headline_samples() {
        let sample = |process, phase, ns| Sample {
            iters: 10,
            ns,
            t_ns: 0,
            process,
            round: 0,
            phase,
        };
        let s = [
            sample(0, Phase::Calibration, 900),
            sample(0, Phase::Measure, 300),
            sample(0, Phase::Measure, 310),
            sample(1, Phase::Measure, 100),
            sample(2, Phase::Calibration, 700),
        ];
        // Only process 1 is in the headline (process 0 ran in a slow state of the core,
        // process 2 ran out of time while it calibrated).
        let headline = [crate::analyze::ProcessFigure {
            index: 1,
            median_ns: 10.0,
            ci95_ns: (9.0, 11.0),
            samples: 1,
        }];
        let e = process_entries(&s, &headline, &|p| 64 * u64::from(p));
        let got: Vec<(u32, u64, f64, usize)> = e
            .iter()
            .map(|p| (p.index, p.env_pad_bytes, p.median_ns, p.samples))
            .collect();
        assert_eq!(got, [(0, 0, 30.5, 0), (1, 64, 10.0, 1), (2, 128, 70.0, 0)]);
    }
}
