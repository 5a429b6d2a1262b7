//! Typed diagnostics: a stable code (the contract's list, which scripts depend on), the figures
//! behind it as data ([`Finding`], what analysis produces), and a message in plain words that
//! names the fix ([`Diagnostic`], what the result file holds).
//!
//! Every diagnostic is worded in one place, [`words`], from its code and figures. It lives here,
//! below the stages that use it, rather than in `report`: the result file's `message` is worded
//! when the result is assembled, before any report, and a stage never depends on a later one.
//! Analysis never formats text; it only fills in a [`Finding`].

pub mod words;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Stable diagnostic codes. Never rename one; add new ones at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The per-iteration time is indistinguishable from an empty body, below a quarter of a
    /// cycle, or does not grow with the iteration count.
    OptimizedAway,
    /// T = a + b·N fits poorly, or its slope disagrees with the median.
    Nonlinear,
    /// The series never settled within the budget.
    NoSteadyState,
    /// The interval is too wide for the budget.
    Unstable,
    /// Samples are too short compared with the timer's cost or resolution.
    TimerLimited,
    /// Many samples far outside the bulk of the distribution.
    Outliers,
    /// Samples during which a context switch or migration happened.
    Interrupted,
    /// Processes with different memory layouts disagree beyond their intervals.
    LayoutSensitive,
    /// The benchmark was compiled without optimisation.
    DebugBuild,
    /// Some or all performance counters could not be read.
    CountersUnavailable,
    /// The core ran markedly slower than its own fastest state during the benchmark.
    CoreSlowed,
    /// A threaded benchmark's throughput grows less than half as fast as its threads.
    Contended,
    /// More threads than the CPUs the run may use.
    Oversubscribed,
    /// Allocations could not be counted (docs/memory.md), and why.
    MemoryUnavailable,
    /// The run's figure lies beyond the same program's recent runs on this machine, in the
    /// unit it is judged in.
    Shifted,
    /// Measured while a neighbour shared the core's issue width (the throughput half of the
    /// core-speed probe slow, its clock half not), and the benchmark's samples followed it.
    CoreShared,
}

impl Code {
    pub const ALL: [Code; 16] = [
        Code::OptimizedAway,
        Code::Nonlinear,
        Code::NoSteadyState,
        Code::Unstable,
        Code::TimerLimited,
        Code::Outliers,
        Code::Interrupted,
        Code::LayoutSensitive,
        Code::DebugBuild,
        Code::CountersUnavailable,
        Code::CoreSlowed,
        Code::Contended,
        Code::Oversubscribed,
        Code::MemoryUnavailable,
        Code::Shifted,
        Code::CoreShared,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::OptimizedAway => "optimized-away",
            Code::Nonlinear => "nonlinear",
            Code::NoSteadyState => "no-steady-state",
            Code::Unstable => "unstable",
            Code::TimerLimited => "timer-limited",
            Code::Outliers => "outliers",
            Code::Interrupted => "interrupted",
            Code::LayoutSensitive => "layout-sensitive",
            Code::DebugBuild => "debug-build",
            Code::CountersUnavailable => "counters-unavailable",
            Code::CoreSlowed => "core-slowed",
            Code::Contended => "contended",
            Code::Oversubscribed => "oversubscribed",
            Code::MemoryUnavailable => "memory-unavailable",
            Code::Shifted => "shifted",
            Code::CoreShared => "core-shared",
        }
    }

    /// Whether the figure itself should not be trusted (as opposed to a note).
    pub fn invalidates_figure(self) -> bool {
        matches!(self, Code::OptimizedAway | Code::DebugBuild)
    }

    /// Whether this code, on a row flagged `optimized-away`, only restates it: it judges the
    /// time figure against itself (its fit, its interval, its samples' spread and drift, its
    /// processes, its earlier runs, its scaling), and a body that costs nothing produces it by
    /// itself: a sample's time is then the loop's or the clock reads' alone, so it does not grow
    /// with the count (`nonlinear`), its interval and spread are wide against a median near
    /// zero (`unstable`, `outliers`, `no-steady-state`, `layout-sensitive`, `shifted`), samples
    /// stay short however the count grows (`timer-limited`), and more threads add nothing to
    /// nothing (`contended`). Such a row shows no figure, and the fix is the barrier, not a
    /// longer run. The codes about the run, the machine or the build hold whatever the body
    /// costs, and stay: `interrupted` (context switches counted), `core-slowed` (the probes
    /// between batches), `debug-build`, `counters-unavailable`, `memory-unavailable`,
    /// `oversubscribed`.
    pub fn restates_removed(self) -> bool {
        matches!(
            self,
            Code::Nonlinear
                | Code::NoSteadyState
                | Code::Unstable
                | Code::TimerLimited
                | Code::Outliers
                | Code::LayoutSensitive
                | Code::Contended
                | Code::Shifted
        )
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the analysis found, as data: the code (the variant's name, kebab-case) and the figures
/// behind it as named fields, units in their names. No words: [`words::message`] words it,
/// and the result file stores these fields as the diagnostic's `data`.
///
/// Typed rather than a map of names to numbers: each wording reads exactly the figures its
/// variant has (the compiler checks every key and every `match`), and the serde derive
/// documents the `data` keys of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", content = "data", rename_all = "kebab-case")]
pub enum Finding {
    /// The work was removed, or what was measured cannot be told from no work.
    OptimizedAway(Removed),
    /// T = a + b·N fits poorly (R² below `analyze::NONLINEAR_R2`), or its slope disagrees with
    /// the median.
    Nonlinear {
        intercept_ns: f64,
        slope_ns: f64,
        r2: f64,
        median_ns: f64,
    },
    /// No steady state within the benchmark's wall time.
    NoSteadyState { seconds: f64 },
    /// The run's own interval (relative half-width `rel_ci`) is wider than `limit_rel_ci`.
    Unstable {
        rel_ci: f64,
        limit_rel_ci: f64,
        seconds: f64,
        steady_samples: usize,
    },
    /// The median sample lasts `sample_ns`, under `timer_factor` × the timer's cost.
    TimerLimited {
        sample_ns: f64,
        timer_factor: f64,
        overhead_ns: f64,
        resolution_ns: f64,
    },
    /// `far` of `of` steady samples beyond 3 × IQR; their period when they recur.
    Outliers {
        far: usize,
        of: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        period_ns: Option<f64>,
    },
    /// Samples interrupted, or threads that waited for a CPU ([`Interruption`]).
    Interrupted(Interruption),
    /// The `processes` medians span `lo_ns`..`hi_ns` (relative `spread`), beyond their own
    /// intervals (largest relative half-width `within`).
    LayoutSensitive {
        processes: usize,
        spread: f64,
        lo_ns: f64,
        hi_ns: f64,
        within: f64,
    },
    /// Compiled without optimisation.
    DebugBuild,
    /// The `events` asked for and not read, and the run's note on why (with the fix).
    CountersUnavailable { events: Vec<String>, note: String },
    /// The core ran slower than its fastest state, or than the machine's known speed.
    CoreSlowed(Slowed),
    /// At `threads` threads, throughput is `speedup` × one thread's (95 % interval
    /// `speedup_ci95`), all of it below `below` (half the thread count's growth).
    /// `on_cpu_speedup`: the same with the waits for a CPU left out, and `cpu_wait_share`
    /// the share of the threads' time spent waiting for one, where known.
    Contended {
        threads: usize,
        speedup: f64,
        speedup_ci95: [f64; 2],
        below: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_cpu_speedup: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_wait_share: Option<f64>,
    },
    /// `threads` threads on `cpus` CPUs; `cpu_wait_share` of their time waiting for a CPU,
    /// where known.
    Oversubscribed {
        threads: usize,
        cpus: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_wait_share: Option<f64>,
    },
    /// Allocations were asked for and could not be counted; `reason` names the cause and fix.
    MemoryUnavailable { reason: String },
    /// This run's median, `median` in `unit` ("cycles" or "ns", the headline's) per
    /// iteration, lies beyond the range `earlier` of the medians of this program's `runs`
    /// recent runs on this machine, by more than the run's own interval and 1 %.
    Shifted {
        unit: String,
        median: f64,
        earlier: [f64; 2],
        runs: usize,
    },
    /// A neighbour shared the core's issue width while the benchmark ran, and its figure felt
    /// it.
    CoreShared(Shared),
}

/// A benchmark measured with the core shared (`core-shared`): `core_share` is the median share
/// of the core's best throughput the thread had (the best ratio of the probe's halves over the
/// ratio around each steady sample), `shared_share` the share of the steady samples taken
/// shared, `slowdown` how much slower they read than unshared ones (in the unit judged), and
/// `wholly` whether too few were unshared for a figure of their own: the headline is then the
/// shared core's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    pub core_share: f64,
    pub shared_share: f64,
    pub slowdown: f64,
    pub wholly: bool,
    /// The headline's median when it is the unshared samples' and the shared samples' median
    /// (ns); absent for a benchmark measured wholly shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unshared_median_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_median_ns: Option<f64>,
}

/// What interrupted a benchmark (`interrupted`), told apart by their figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Interruption {
    /// `samples` of `of` steady samples saw a context switch or a CPU migration, or (a
    /// threaded benchmark) a thread waiting for a CPU; `cpu_wait_share` of the threads' time
    /// in the steady samples was spent waiting for one, where known.
    Samples {
        samples: usize,
        of: usize,
        share: f64,
        median_with_ns: f64,
        /// `None` when every steady sample was interrupted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        median_without_ns: Option<f64>,
        estimates: Estimates,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_wait_share: Option<f64>,
    },
    /// At `threads` threads throughput is `speedup` × one thread's, below `below`, but with
    /// the waits for a CPU left out it is `on_cpu_speedup` ×: the threads waited for a CPU
    /// `cpu_wait_share` of their time (or, where that is unknown, were off their CPUs
    /// `off_cpu_share` of it). The scaling is the machine's load, not the code's.
    ThreadsWaited {
        threads: usize,
        speedup: f64,
        /// `None` when the samples held too little work to compute it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_cpu_speedup: Option<f64>,
        below: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_wait_share: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        off_cpu_share: Option<f64>,
    },
}

/// The evidence that a benchmark's work was removed (`optimized-away`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "evidence", rename_all = "kebab-case")]
pub enum Removed {
    /// The median is below a quarter of a cycle (`cycle`: the cycle time used, if known).
    BelowQuarterCycle {
        median_ns: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cycle: Option<Cycle>,
    },
    /// The median cannot be told from the harness's loop around an empty body.
    LikeEmptyLoop { median_ns: f64, empty_ns: f64 },
    /// The sample time does not grow with the iteration count.
    NoSlope { slope_ns: f64 },
    /// Callgrind counts no more instructions per iteration than the empty loop's, the loop's
    /// moves of a value it already holds (`moves_per_iter`, from its disassembly) aside;
    /// `median_ns` when a time was measured too (`None` in `--instructions` mode).
    Instructions {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        median_ns: Option<f64>,
        instructions_per_iter: f64,
        empty_instructions_per_iter: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        moves_per_iter: Option<f64>,
    },
}

/// A cycle time and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cycle {
    pub ns: f64,
    pub source: CycleSource,
}

/// Where a cycle time comes from (the names of `harness.cycle_source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CycleSource {
    /// The benchmark's own cycles and task-clock.
    Counters,
    /// The chain of dependent additions timed at start-up.
    AddChain,
}

/// What the estimates did with interrupted samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Estimates {
    /// Left out (the default).
    Excluded,
    /// Kept, as `--keep-interrupted` asked.
    KeptAsAsked,
    /// Kept because every steady sample was interrupted (nothing would be left).
    KeptAllInterrupted,
}

/// How the core ran slower (`core-slowed`); cycle times are ns per addition of the probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "speeds", rename_all = "kebab-case")]
pub enum Slowed {
    /// One state for the whole benchmark, behind the machine's known speed.
    BehindKnown {
        fast_cycle_ns: f64,
        known_cycle_ns: f64,
    },
    /// Two states, the headline the fast one's (bimodal).
    TwoStates {
        fast_cycle_ns: f64,
        fast_share: f64,
        fast_median_ns: f64,
        slow_cycle_ns: f64,
        slow_share: f64,
        slow_median_ns: f64,
        fastest_cycle_ns: f64,
        /// The slow state's time per addition of the probe's throughput half over the
        /// fastest (absent for a harness without it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        throughput_slowdown: Option<f64>,
    },
    /// Too many samples in the slow state for a fast figure: the headline is the slow one's.
    SlowState {
        slow_cycle_ns: f64,
        slow_share: f64,
        fastest_cycle_ns: f64,
        against: SpeedReference,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        throughput_slowdown: Option<f64>,
    },
}

/// What the fastest state's speed was measured against (`speed::Reference`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpeedReference {
    Probes,
    StartUp,
    Nominal,
    Known,
}

impl Finding {
    pub fn code(&self) -> Code {
        match self {
            Finding::OptimizedAway(_) => Code::OptimizedAway,
            Finding::Nonlinear { .. } => Code::Nonlinear,
            Finding::NoSteadyState { .. } => Code::NoSteadyState,
            Finding::Unstable { .. } => Code::Unstable,
            Finding::TimerLimited { .. } => Code::TimerLimited,
            Finding::Outliers { .. } => Code::Outliers,
            Finding::Interrupted(_) => Code::Interrupted,
            Finding::LayoutSensitive { .. } => Code::LayoutSensitive,
            Finding::DebugBuild => Code::DebugBuild,
            Finding::CountersUnavailable { .. } => Code::CountersUnavailable,
            Finding::CoreSlowed(_) => Code::CoreSlowed,
            Finding::Contended { .. } => Code::Contended,
            Finding::Oversubscribed { .. } => Code::Oversubscribed,
            Finding::MemoryUnavailable { .. } => Code::MemoryUnavailable,
            Finding::Shifted { .. } => Code::Shifted,
            Finding::CoreShared(_) => Code::CoreShared,
        }
    }
}

/// One diagnostic as the result file holds it: the code, the message worded from the finding
/// (the contract's field, for readers of the file), and the finding's figures as `data`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    /// The finding's figures by name (see [`Finding`]); empty for a diagnostic without figures,
    /// and in files written before diagnostics carried them (whose message then stands).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub data: serde_json::Map<String, serde_json::Value>,
    /// Set when the cause is not the benchmark's own but one the run names once for all its
    /// benchmarks (`result::machine_noise`): its row leaves the code out, the file keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained_by: Option<ExplainedBy>,
}

/// What explains a diagnostic instead of its benchmark (`explained_by` in the result file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExplainedBy {
    /// The machine disturbed most of the run's benchmarks: the machine line says why, once.
    Machine,
}

impl Diagnostic {
    /// A diagnostic with no figures: the message is all there is.
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            data: serde_json::Map::new(),
            explained_by: None,
        }
    }

    /// The finding behind this diagnostic, read from its `data`: `None` when it has none, or
    /// when the data lacks figures this build words (a file of an older build).
    pub fn finding(&self) -> Option<Finding> {
        if self.data.is_empty() {
            return None;
        }
        let tagged = serde_json::json!({"code": self.code, "data": self.data});
        serde_json::from_value(tagged).ok()
    }

    /// The diagnostic in words: worded from its finding, or the stored message when it has
    /// none (files written before diagnostics carried their figures keep their text).
    pub fn text(&self) -> String {
        self.finding()
            .map(|f| words::message(&f))
            .unwrap_or_else(|| self.message.clone())
    }

    /// The events a `counters-unavailable` diagnostic names (its `events` data, which files
    /// carried before the other figures); `None` for any other diagnostic or without them.
    pub fn unread_events(&self) -> Option<Vec<String>> {
        if self.code != Code::CountersUnavailable {
            return None;
        }
        let events = self.data.get("events")?.as_array()?;
        Some(
            events
                .iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect(),
        )
    }
}

impl From<&Finding> for Diagnostic {
    /// The finding worded, with its figures as data.
    fn from(f: &Finding) -> Diagnostic {
        let data = match serde_json::to_value(f) {
            Ok(serde_json::Value::Object(mut tagged)) => match tagged.remove("data") {
                Some(serde_json::Value::Object(m)) => m,
                _ => serde_json::Map::new(),
            },
            _ => serde_json::Map::new(),
        };
        Diagnostic {
            code: f.code(),
            message: words::message(f),
            data,
            explained_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_to_the_contract_names() {
        for c in Code::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }
}
