//! The events Vernier can count, their names (the contract's), the default set, and the
//! selection a command line makes (`--counters default|none|LIST`).

use super::CounterSet;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A counter Vernier can read. Names follow `perf list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    Cycles,
    Instructions,
    Branches,
    BranchMisses,
    CacheReferences,
    CacheMisses,
    L1dLoadMisses,
    TaskClock,
    ContextSwitches,
    CpuMigrations,
    PageFaults,
}

/// Where an event is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Counted by the CPU's performance monitoring unit (PMU).
    Hardware,
    /// Counted by the kernel.
    Software,
}

// perf_event_attr.type
const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
pub(super) const PERF_TYPE_HW_CACHE: u32 = 3;
// PERF_TYPE_HARDWARE configs
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_COUNT_HW_CACHE_REFERENCES: u64 = 2;
const PERF_COUNT_HW_CACHE_MISSES: u64 = 3;
const PERF_COUNT_HW_BRANCH_INSTRUCTIONS: u64 = 4;
const PERF_COUNT_HW_BRANCH_MISSES: u64 = 5;
// PERF_TYPE_HW_CACHE config = id | (op << 8) | (result << 16)
const PERF_COUNT_HW_CACHE_L1D: u64 = 0;
const PERF_COUNT_HW_CACHE_OP_READ: u64 = 0;
const PERF_COUNT_HW_CACHE_RESULT_MISS: u64 = 1;
// PERF_TYPE_SOFTWARE configs
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;

impl Event {
    /// Number of events.
    pub const COUNT: usize = 11;

    /// Every event, in a stable order (the order of columns and of the note).
    pub const ALL: [Event; Event::COUNT] = [
        Event::Cycles,
        Event::Instructions,
        Event::Branches,
        Event::BranchMisses,
        Event::CacheReferences,
        Event::CacheMisses,
        Event::L1dLoadMisses,
        Event::TaskClock,
        Event::ContextSwitches,
        Event::CpuMigrations,
        Event::PageFaults,
    ];

    /// The event's name, as `perf list` spells it; also its column and protocol name.
    pub fn name(self) -> &'static str {
        match self {
            Event::Cycles => "cycles",
            Event::Instructions => "instructions",
            Event::Branches => "branches",
            Event::BranchMisses => "branch-misses",
            Event::CacheReferences => "cache-references",
            Event::CacheMisses => "cache-misses",
            Event::L1dLoadMisses => "L1-dcache-load-misses",
            Event::TaskClock => "task-clock",
            Event::ContextSwitches => "context-switches",
            Event::CpuMigrations => "cpu-migrations",
            Event::PageFaults => "page-faults",
        }
    }

    /// The event with this name (exact match, as `perf` prints it).
    pub fn from_name(name: &str) -> Option<Event> {
        Event::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// Whether the PMU or the kernel counts it.
    pub fn kind(self) -> EventKind {
        match self {
            Event::TaskClock
            | Event::ContextSwitches
            | Event::CpuMigrations
            | Event::PageFaults => EventKind::Software,
            _ => EventKind::Hardware,
        }
    }

    /// `perf_event_attr.type` and `.config` of the event.
    pub fn type_and_config(self) -> (u32, u64) {
        match self {
            Event::Cycles => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
            Event::Instructions => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
            Event::Branches => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
            Event::BranchMisses => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES),
            Event::CacheReferences => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES),
            Event::CacheMisses => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES),
            Event::L1dLoadMisses => (
                PERF_TYPE_HW_CACHE,
                PERF_COUNT_HW_CACHE_L1D
                    | (PERF_COUNT_HW_CACHE_OP_READ << 8)
                    | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
            ),
            Event::TaskClock => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
            Event::ContextSwitches => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES),
            Event::CpuMigrations => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS),
            Event::PageFaults => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS),
        }
    }

    /// Whether the event is opened with `exclude_kernel = 1`.
    ///
    /// Hardware events count user space only: the benchmark's own code, not the kernel's work
    /// on its behalf, and not the counter reads themselves (which also makes them readable
    /// under `perf_event_paranoid = 2`). Task-clock ignores the flag (it is the thread's
    /// on-CPU time, user and kernel), and page faults are charged to the faulting user-mode
    /// instruction, so both keep it. Context switches and migrations happen inside the
    /// scheduler, in kernel mode: with `exclude_kernel = 1` they would always read 0, so they
    /// are opened without it, and need `perf_event_paranoid ≤ 1` or `CAP_PERFMON`.
    pub fn excludes_kernel(self) -> bool {
        !matches!(self, Event::ContextSwitches | Event::CpuMigrations)
    }

    pub(super) fn index(self) -> usize {
        self as usize
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        let name = String::deserialize(d)?;
        Event::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown counter `{name}`; valid counters: {}",
                valid_names()
            ))
        })
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The default selection: four hardware events and the four software events.
///
/// Four hardware events fit without multiplexing on the PMUs Vernier is used on: Intel cores
/// count cycles and instructions on fixed counters, leaving branch-misses and cache-misses two
/// of the 4 (hyper-threading on) or 8 general-purpose counters, with room for the NMI
/// watchdog's; AMD Zen has 6 general-purpose counters; common Arm cores have 6 plus a cycle
/// counter. Software events use no PMU counter.
pub const DEFAULT_EVENTS: [Event; 8] = [
    Event::Cycles,
    Event::Instructions,
    Event::BranchMisses,
    Event::CacheMisses,
    Event::TaskClock,
    Event::ContextSwitches,
    Event::CpuMigrations,
    Event::PageFaults,
];

/// Errors of this module (all about input; opening never fails as a whole, see
/// [`CounterSet::open`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterError {
    #[error("unknown counter `{name}`; valid counters: {valid}")]
    UnknownEvent { name: String, valid: String },
    #[error("empty counter list; valid counters: {valid}")]
    EmptyList { valid: String },
    #[error("malformed counter group read: {0}")]
    BadRead(String),
    #[error("malformed counter token `{token}`: {why}")]
    BadToken { token: String, why: String },
}

fn valid_names() -> String {
    let mut s: Vec<&str> = Event::ALL.iter().map(|e| e.name()).collect();
    s.push("default");
    s.join(", ")
}

/// Parse a `--counters` list: comma-separated event names (`perf`'s spelling), `default` for
/// [`DEFAULT_EVENTS`]. Order is kept, duplicates are dropped, whitespace around names is
/// ignored.
pub fn parse_event_list(list: &str) -> Result<Vec<Event>, CounterError> {
    let mut out: Vec<Event> = Vec::new();
    let add = |e: Event, out: &mut Vec<Event>| {
        if !out.contains(&e) {
            out.push(e);
        }
    };
    for raw in list.split(',') {
        let name = raw.trim();
        if name.is_empty() {
            continue;
        }
        if name == "default" {
            for e in DEFAULT_EVENTS {
                add(e, &mut out);
            }
            continue;
        }
        match Event::from_name(name) {
            Some(e) => add(e, &mut out),
            None => {
                return Err(CounterError::UnknownEvent {
                    name: name.to_string(),
                    valid: valid_names(),
                })
            }
        }
    }
    if out.is_empty() {
        return Err(CounterError::EmptyList {
            valid: valid_names(),
        });
    }
    Ok(out)
}

/// Which counters are read around each sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CounterSelection {
    /// `DEFAULT_EVENTS`, those of them that can be opened.
    #[default]
    Default,
    /// None (`--counters none`).
    Off,
    /// These events.
    Events(Vec<Event>),
}

impl CounterSelection {
    /// Parse a `--counters` value: `none`, `default`, or perf event names separated by commas.
    pub fn parse(list: &str) -> Result<CounterSelection, String> {
        match list.trim() {
            "none" | "off" => Ok(CounterSelection::Off),
            "default" => Ok(CounterSelection::Default),
            l => parse_event_list(l)
                .map(CounterSelection::Events)
                .map_err(|e| format!("--counters: {e}, or none")),
        }
    }

    /// The events asked for (empty when off).
    pub fn events(&self) -> Vec<Event> {
        match self {
            CounterSelection::Default => DEFAULT_EVENTS.to_vec(),
            CounterSelection::Off => Vec::new(),
            CounterSelection::Events(v) => v.clone(),
        }
    }

    /// Open the counters for the calling thread; `None` when off or when nothing opened (the
    /// reasons are then in `session::calibrate::counter_harness`'s note).
    pub fn open(&self) -> Option<CounterSet> {
        let events = self.events();
        (!events.is_empty()).then(|| CounterSet::open(&events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in Event::ALL {
            assert_eq!(Event::from_name(e.name()), Some(e));
            assert_eq!(Event::ALL[e.index()], e);
        }
    }
}
