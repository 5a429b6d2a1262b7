//! The result file, schema [`SCHEMA`] (`docs/result-schema.md`; files of schema 1 are read too): every figure, every raw sample, the
//! timer's calibration, the harness's own costs and the machine, as structured fields. This
//! file holds the schema; `convert.rs` makes an entry from a measurement and back, `load.rs`
//! reads a file and `write.rs` writes one, atomically (temporary file + rename) so a crash
//! never leaves half a file.

pub mod cold;
pub mod comparison;
pub mod complexity;
mod convert;
pub mod earlier_runs;
pub mod exec;
mod load;
pub mod machine_noise;
pub mod memory;
pub mod recorded;
pub mod threads;
mod write;

pub use load::{load, parse, Invalid, LoadError};
pub use write::{check_destination, create_exclusive, write_atomic};

pub use crate::analyze::{Interrupted, Outliers, PerIter, Warmup};

use crate::analyze::nan::{nan_as_null, nan_pair};
use crate::diagnostic::Diagnostic;
use crate::machine::Machine;
use crate::samples::Phase;
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version written by this crate. Version 2 adds each benchmark's declared
/// `throughput` and the file's `complexity` fits (docs/result-schema.md); a version-1 file is
/// read and brought to version 2 by the loader.
pub const SCHEMA: u32 = 2;
/// The oldest schema version the loader reads.
pub const OLDEST_SCHEMA: u32 = 1;

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
            parent_pid: crate::os::host::parent_id(),
        }
    }
}

/// The harness's own costs, measured once at start-up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Harness {
    /// Per-iteration cost of the measuring loop around an empty body.
    #[serde(with = "nan_as_null")]
    pub empty_iter_ns: f64,
    /// The same loop's cost per iteration in cycles of the core at the time it was measured
    /// (each sample's time over the core-speed probe's cycle around it): the bar of
    /// `optimized-away` for a benchmark judged in cycles, which a clock that moved between the
    /// two measurements leaves in place. Absent when the loop's samples were not probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_iter_cycles: Option<f64>,
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
    /// How long that add chain's samples lasted (median, ns): a benchmark whose samples last
    /// longer is hit by the machine's interruptions more often (`analyze::machine_far_share`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_sample_ns: Option<f64>,
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
    /// The core's best throughput measured at start-up, as the ratio of the core-speed
    /// probe's two halves (time per addition of eight independent chains over one dependent
    /// chain's, the fastest of each: `kernels::best_wide_ratio`): 0.25 on a core that retires
    /// four additions a cycle and was whole at start-up. A benchmark's `core_share` is the
    /// best ratio known over the ratio around its samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wide_ratio: Option<f64>,
    /// The machine's known best ratio of the probe's two halves, kept across runs (the
    /// `vernier` command keeps it beside the known speed): what the core gives one thread when
    /// no neighbour shares it, even for a run spent wholly shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_wide_ratio: Option<f64>,
    /// This program's earlier runs on this machine were looked up in the ledger: a
    /// benchmark without `earlier_runs` had fewer than two there, and its interval for the
    /// next run could not cover the level between invocations (the report says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub earlier_runs_read: bool,
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
    /// The share of the core's best throughput the thread had, 0–1, median over the steady
    /// samples: the best ratio of the probe's two halves known (`wide_ratio_best`) over the
    /// ratio around each sample. Below 0.91 a neighbour shared the core's issue width
    /// (`core-shared`). Absent for a harness without the probe's throughput half.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_share: Option<f64>,
    /// The share of the steady samples taken with the core shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_share: Option<f64>,
    /// The best ratio of the probe's halves `core_share` was measured against, and where it
    /// comes from (`probes`, `start-up`, `known`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wide_ratio_best: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wide_ratio_reference: Option<String>,
    /// The benchmark's own lowest ratio of the probe's halves (its smoothed probes): what the
    /// ledger keeps of this run toward the machine's known best.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wide_ratio: Option<f64>,
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
    /// machine, which `per_iter.ci95_ns` was joined to (`vernier::result::earlier_runs`). Absent when there
    /// were fewer than two, or for a run outside the `vernier` command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_runs: Option<earlier_runs::EarlierRuns>,
    /// Stretches of a process's round that ran markedly slower than the rest of the run, in
    /// the headline unit, left out of the figures (`vernier::analyze::stretch`). Absent when
    /// there was none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowed_stretches: Vec<crate::analyze::Stretch>,
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
    /// The work one iteration does, as the benchmark declared it (`Suite::throughput`, the
    /// header's `.bytes(n)` / `.items(n)`; the `list` line's `bytes=N` / `items=N`):
    /// `{"bytes_per_iter": N}` or `{"items_per_iter": N}`. The rate is that over
    /// `per_iter.median_ns`. Absent when none was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<crate::units::Throughput>,
    /// How the benchmark asked to be fitted for complexity (its family and N, a class, or its
    /// own function's value at its N; `complexity::Declared`). Absent when it declared
    /// nothing: its name (`FAMILY/N`) places it, and the best usual class is fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complexity: Option<complexity::Declared>,
    /// `vernier exec`: every run of the command, warm-up runs first, with what `wait4`
    /// reported of it (`exec::Run`); the samples hold the measured runs' wall times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<exec::Run>,
    /// `vernier exec`: the time the samples hold (`judged`: `wall` or `cpu`) and, through a
    /// shell, the start-up taken off each run (`shell_startup`). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<exec::Timed>,
    /// An async benchmark's executor (`Suite::bench_async`, `Bencher::to_async`): its name,
    /// what an empty future costs on it, and whether its work follows the calling core's clock.
    /// Absent for synchronous code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<ExecutorJson>,
    pub samples: SamplesJson,
}

/// The executor an async benchmark ran on (`executor` in the result file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecutorJson {
    /// `tokio current-thread`, `tokio multi-thread`, `smol`, `futures`, or the name a user's
    /// executor gives itself.
    pub name: String,
    /// Time per iteration of an empty future (`async {}`) on this executor, measured at the
    /// start of the run as the empty loop is (`harness.empty_iter_ns`): part of every
    /// iteration's time, and the bar of `optimized-away` for this benchmark. `null` when it
    /// could not be measured.
    #[serde(with = "nan_as_null")]
    pub empty_future_ns: f64,
    /// The same in cycles of the core at the time it was measured (as
    /// `harness.empty_iter_cycles`); absent when its samples were not probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_future_cycles: Option<f64>,
    /// `false` when the executor runs the work on other cores than the one that waits for it
    /// (tokio's multi-thread runtime): the benchmark is then judged in ns.
    pub on_calling_core: bool,
}

impl BenchmarkResult {
    /// How many cycles per iteration the body took beyond its bar (the harness's empty loop,
    /// or the empty future on its executor for an async body), from the figures stored:
    /// [`net_cycles`](crate::analyze::net_cycles) of this result against `harness`.
    pub fn cycles_over_bar(&self, harness: &Harness) -> Option<f64> {
        let bar = match &self.executor {
            Some(e) => (e.empty_future_ns, e.empty_future_cycles),
            None => (harness.empty_iter_ns, harness.empty_iter_cycles),
        };
        crate::analyze::net_cycles(
            self.speed.as_ref().and_then(|s| s.cycles_per_iter),
            self.per_iter.median_ns,
            bar,
            harness.cycle_ns,
        )
    }

    /// Flagged `optimized-away`: the compiler removed the body, and no figure of its time
    /// (nor a rate from it) is shown.
    pub fn removed(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.code == crate::diagnostic::Code::OptimizedAway)
    }

    /// On a removed body, leaves out the codes that only restate it
    /// ([`Code::restates_removed`](crate::diagnostic::Code::restates_removed)).
    pub fn drop_restated(&mut self) {
        if self.removed() {
            self.diagnostics.retain(|d| !d.code.restates_removed());
        }
    }

    /// Instructions per iteration counted under callgrind (`--instructions`), when this
    /// benchmark was counted and the count is a number.
    pub fn instructions_per_iter(&self) -> Option<f64> {
        (self.status == Status::Ok)
            .then(|| {
                self.counters
                    .as_ref()?
                    .get("instructions_per_iter")
                    .copied()
            })
            .flatten()
            .filter(|v| v.is_finite())
    }
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
    /// When its measuring started: UTC, RFC 3339 to the second (`2026-11-23T00:19:38Z`),
    /// written by every run ([`recorded::now`]); absent from files written before it was kept.
    /// `history save` stores the run at this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
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
            empty_iter_cycles: None,
            sample_cost_ns: f64::NAN,
            cycle_ns: f64::NAN,
            cycle_source: "none".into(),
            ..Harness::default()
        }
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
}
