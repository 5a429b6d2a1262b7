//! Performance counters around the timed region: cycles, instructions, branch and cache misses
//! from the CPU's PMU, and task-clock, context switches, migrations and page faults from the
//! kernel, read per sample through `perf_event_open(2)`.
//!
//! The system call is made by hand (`libc::syscall`) with a `perf_event_attr` defined here, so
//! the crate benchmarks link stays light. Everything that can be computed without a system call
//! — parsing a group read, scaling, per-sample deltas, the columns the engine keeps,
//! the note explaining what could not be opened — is a pure function with its own tests.
//!
//! # Groups and reads
//!
//! Events are opened for the calling thread only (`pid = 0`, `cpu = -1`, no `inherit`) in at
//! most two groups: one for the hardware events (PMU) and one for the software events (kernel).
//! Hardware and software events are kept apart so that the software counters stay exact when
//! the PMU has to multiplex the hardware group, and so that a machine without a PMU still gets
//! its software group. Each group is read with ONE `read(2)` (`PERF_FORMAT_GROUP`), so a sample
//! costs one read per group on each side of the region, nested so the hardware group sits
//! closest to the timer:
//!
//! ```text
//! read_start: read(software) read(hardware)   timer.start() … loop … timer.stop()
//! read_stop:  read(hardware) read(software)
//! ```
//!
//! # Multiplexing
//!
//! The default set fits the counters of common CPUs without multiplexing. At open time the
//! hardware group is checked to be schedulable (it must run at all); when it cannot be (too many
//! events for the PMU), events are dropped from the end of the list until it can, and each
//! dropped event is reported as unavailable. At run time, when another user of the PMU forces
//! rotation, a sample whose group ran for less time than it was enabled is *scaled*
//! (`value × enabled / running`) and flagged `scaled`; a sample in which the group never ran
//! has no value for its events (absent, never zero).
//!
//! # Fallback
//!
//! Whatever cannot be opened (no PMU in a virtual machine, `perf_event_paranoid`, a seccomp
//! filter) is listed as [`Unavailable`] with the reason and, when there is one, the fix;
//! [`unavailable_note`] turns the list into one sentence for the user. Missing events are
//! absent from every result, not zero.

use crate::samples::CounterColumn;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::os::raw::c_int;

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

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
const PERF_TYPE_HW_CACHE: u32 = 3;
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

    fn index(self) -> usize {
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
    /// reasons are then in `suite::counter_harness`'s note).
    pub fn open(&self) -> Option<CounterSet> {
        let events = self.events();
        (!events.is_empty()).then(|| CounterSet::open(&events))
    }
}

// ---------------------------------------------------------------------------------------------
// One sample's counter values
// ---------------------------------------------------------------------------------------------

/// The counter deltas of one sample. An event that was not opened, or whose group did not run
/// at all during the sample, has no value (`None`), never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CounterSample {
    values: [Option<u64>; Event::COUNT],
    /// Bit `e as usize` set: the value of `e` was scaled for multiplexing (an estimate).
    scaled: u16,
}

impl CounterSample {
    /// The delta of `event` in this sample, if it was counted.
    pub fn get(&self, event: Event) -> Option<u64> {
        self.values[event.index()]
    }

    /// Set (or clear) the value of `event`.
    pub fn set(&mut self, event: Event, value: Option<u64>, scaled: bool) {
        self.values[event.index()] = value;
        let bit = 1u16 << event.index();
        if scaled && value.is_some() {
            self.scaled |= bit;
        } else {
            self.scaled &= !bit;
        }
    }

    /// Whether the value of `event` was scaled (the PMU multiplexed its group).
    pub fn is_scaled(&self, event: Event) -> bool {
        self.scaled & (1 << event.index()) != 0
    }

    /// Whether any value of this sample was scaled.
    pub fn any_scaled(&self) -> bool {
        self.scaled != 0
    }

    /// The events that have a value, in [`Event::ALL`] order.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        Event::ALL
            .iter()
            .copied()
            .filter(move |e| self.values[e.index()].is_some())
    }

    /// This sample minus a baseline (e.g. the counters' own read cost), per event, saturating
    /// at 0. Events absent from either stay absent.
    pub fn saturating_sub(&self, baseline: &CounterSample) -> CounterSample {
        let mut out = *self;
        for e in Event::ALL {
            out.values[e.index()] = match (self.get(e), baseline.get(e)) {
                (Some(v), Some(b)) => Some(v.saturating_sub(b)),
                _ => None,
            };
        }
        out
    }
}

/// Serialized as a map from event name to value, counted events only (in [`Event::ALL`]
/// order); the scaled flags are not part of it.
impl Serialize for CounterSample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for e in self.events() {
            map.serialize_entry(e.name(), &self.get(e))?;
        }
        map.end()
    }
}

/// Whether the thread was switched out or migrated during the sample:
/// `context-switches > 0 || cpu-migrations > 0`. `None` when neither event was counted, since
/// an unknown is not a "no".
pub fn is_interrupted(sample: &CounterSample) -> Option<bool> {
    let cs = sample.get(Event::ContextSwitches);
    let mig = sample.get(Event::CpuMigrations);
    match (cs, mig) {
        (None, None) => None,
        _ => Some(cs.unwrap_or(0) > 0 || mig.unwrap_or(0) > 0),
    }
}

// ---------------------------------------------------------------------------------------------
// Group reads, deltas, scaling (pure)
// ---------------------------------------------------------------------------------------------

/// `read_format` bits.
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub const PERF_FORMAT_ID: u64 = 1 << 2;
pub const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// The `read_format` Vernier uses; the buffer of one group read is
/// `[nr, time_enabled, time_running, value0, id0, value1, id1, …]` (u64 each).
pub const READ_FORMAT: u64 = PERF_FORMAT_GROUP
    | PERF_FORMAT_TOTAL_TIME_ENABLED
    | PERF_FORMAT_TOTAL_TIME_RUNNING
    | PERF_FORMAT_ID;

/// Length in u64 words of a group read of `nr` events with [`READ_FORMAT`].
pub const fn group_read_len(nr: usize) -> usize {
    3 + 2 * nr
}

/// One parsed group read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRead {
    /// Nanoseconds the group has been enabled.
    pub time_enabled: u64,
    /// Nanoseconds the group has actually been on the PMU (less than enabled: multiplexed).
    pub time_running: u64,
    /// Raw (unscaled) counts, in group order.
    pub values: Vec<u64>,
}

/// Parse a group read buffer (`READ_FORMAT`). `ids`, when given, are the kernel's ids of the
/// group's events in order, and are checked against the buffer.
pub fn parse_group_read(buf: &[u64], ids: Option<&[u64]>) -> Result<GroupRead, CounterError> {
    let nr = check_group_read(buf, ids)?;
    Ok(GroupRead {
        time_enabled: buf[1],
        time_running: buf[2],
        values: (0..nr).map(|i| buf[3 + 2 * i]).collect(),
    })
}

fn check_group_read(buf: &[u64], ids: Option<&[u64]>) -> Result<usize, CounterError> {
    let Some(&nr) = buf.first() else {
        return Err(CounterError::BadRead("empty buffer".into()));
    };
    let nr = nr as usize;
    if buf.len() < group_read_len(nr) {
        return Err(CounterError::BadRead(format!(
            "{} events announced but only {} words read",
            nr,
            buf.len()
        )));
    }
    if let Some(ids) = ids {
        if ids.len() != nr {
            return Err(CounterError::BadRead(format!(
                "{} events read, {} expected",
                nr,
                ids.len()
            )));
        }
        for (i, &id) in ids.iter().enumerate() {
            if buf[4 + 2 * i] != id {
                return Err(CounterError::BadRead(format!(
                    "event {} has id {}, expected {}",
                    i,
                    buf[4 + 2 * i],
                    id
                )));
            }
        }
    }
    Ok(nr)
}

/// How a value was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// The group was on the PMU the whole time: the count is exact.
    Exact,
    /// The group was on the PMU part of the time: the count is extrapolated.
    Scaled,
    /// The group never ran: there is no count.
    NotCounted,
}

/// Scale a raw delta by the time its group was enabled over the time it ran.
pub fn scale(delta_value: u64, delta_enabled: u64, delta_running: u64) -> (Option<u64>, Scaling) {
    if delta_running >= delta_enabled {
        (Some(delta_value), Scaling::Exact)
    } else if delta_running == 0 {
        (None, Scaling::NotCounted)
    } else {
        let v = (delta_value as u128 * delta_enabled as u128 + delta_running as u128 / 2)
            / delta_running as u128;
        (Some(v.min(u64::MAX as u128) as u64), Scaling::Scaled)
    }
}

/// The per-sample deltas of one group, from its reads at the start and the end of the region,
/// written into `out` for `events` (the group's events, in group order).
pub fn group_delta(
    events: &[Event],
    start: &[u64],
    stop: &[u64],
    ids: Option<&[u64]>,
    out: &mut CounterSample,
) -> Result<Scaling, CounterError> {
    let n0 = check_group_read(start, ids)?;
    let n1 = check_group_read(stop, ids)?;
    if n0 != n1 || n0 != events.len() {
        return Err(CounterError::BadRead(format!(
            "{} and {} events read for a group of {}",
            n0,
            n1,
            events.len()
        )));
    }
    let d_enabled = stop[1].wrapping_sub(start[1]);
    let d_running = stop[2].wrapping_sub(start[2]);
    let mut how = Scaling::Exact;
    for (i, &e) in events.iter().enumerate() {
        let dv = stop[3 + 2 * i].wrapping_sub(start[3 + 2 * i]);
        let (v, s) = scale(dv, d_enabled, d_running);
        how = s;
        out.set(e, v, s == Scaling::Scaled);
    }
    Ok(how)
}

// ---------------------------------------------------------------------------------------------
// Columns (pure)
// ---------------------------------------------------------------------------------------------

/// A batch of samples' counters as the engine's columns (`Batch::counters`): one column per
/// event of `events` counted in at least one sample, in the order given; a sample in which the
/// event was not counted has no value (`None`, never 0); scaled values are flagged.
pub fn to_columns(events: &[Event], samples: &[CounterSample]) -> Vec<CounterColumn> {
    let mut out = Vec::new();
    if samples.is_empty() {
        return out;
    }
    for &e in events {
        if samples.iter().all(|s| s.get(e).is_none()) {
            continue;
        }
        let scaled = if samples.iter().any(|s| s.is_scaled(e)) {
            samples.iter().map(|s| s.is_scaled(e)).collect()
        } else {
            Vec::new()
        };
        out.push(CounterColumn {
            event: e.name().to_string(),
            values: samples.iter().map(|s| s.get(e)).collect(),
            scaled,
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// What could not be opened, and why (pure)
// ---------------------------------------------------------------------------------------------

/// An event that could not be opened (or was dropped to avoid multiplexing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unavailable {
    pub event: Event,
    /// Why, in words (with the errno's name when there is one).
    pub reason: String,
    /// What the user can do about it, when anything.
    pub fix: Option<String>,
}

/// What is known about the machine when classifying an `perf_event_open` failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Environment {
    /// `/proc/cpuinfo` has the `hypervisor` flag.
    pub virtual_machine: bool,
    /// `/sys/bus/event_source/devices/cpu*` exists: a core PMU is registered.
    pub cpu_pmu: bool,
    /// `/proc/sys/kernel/perf_event_paranoid`.
    pub paranoid: Option<i32>,
}

impl Environment {
    /// Read it from `/proc` and `/sys`.
    pub fn detect() -> Environment {
        let virtual_machine = std::fs::read_to_string("/proc/cpuinfo")
            .map(|s| {
                s.lines()
                    .filter(|l| l.starts_with("flags"))
                    .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
            })
            .unwrap_or(false);
        let cpu_pmu = std::fs::read_dir("/sys/bus/event_source/devices")
            .map(|d| {
                d.flatten().any(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n == "cpu" || n.starts_with("cpu_") || n.starts_with("armv8_")
                })
            })
            .unwrap_or(false);
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        Environment {
            virtual_machine,
            cpu_pmu,
            paranoid,
        }
    }
}

/// The name of an errno `perf_event_open` returns.
pub fn errno_name(errno: i32) -> String {
    let n = match errno {
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENOSYS => "ENOSYS",
        libc::EBUSY => "EBUSY",
        libc::E2BIG => "E2BIG",
        libc::ENOSPC => "ENOSPC",
        _ => return format!("errno {errno}"),
    };
    n.to_string()
}

/// The sysctl that lets unprivileged users count everything Vernier reads.
pub const PARANOID_FIX: &str = "sudo sysctl kernel.perf_event_paranoid=1";

/// Why `perf_event_open` failed for `event` with `errno`, and the fix.
pub fn classify_failure(event: Event, errno: i32, env: &Environment) -> Unavailable {
    let name = errno_name(errno);
    let (reason, fix) = match errno {
        libc::EACCES => {
            let current = env
                .paranoid
                .map(|p| format!("kernel.perf_event_paranoid is {p}"))
                .unwrap_or_else(|| "kernel.perf_event_paranoid forbids it".to_string());
            let what = if event.excludes_kernel() {
                "counting is not permitted for this user"
            } else {
                "counting scheduler events (kernel side) is not permitted for this user"
            };
            (
                format!("{what}: {current} ({name})"),
                Some(format!("{PARANOID_FIX} (or grant CAP_PERFMON)")),
            )
        }
        libc::EPERM => (
            format!(
                "perf_event_open is forbidden here: a seccomp filter (containers) or a security \
                 policy blocks it ({name})"
            ),
            Some(
                "allow perf_event_open in the container (e.g. docker run --cap-add PERFMON, or a \
                 seccomp profile that permits it)"
                    .to_string(),
            ),
        ),
        libc::ENOSYS => (
            format!("this kernel has no perf events support ({name})"),
            None,
        ),
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV if event.kind() == EventKind::Hardware => {
            if env.virtual_machine && !env.cpu_pmu {
                (
                    format!("no PMU is exposed to this virtual machine ({name})"),
                    Some("enable PMU passthrough, e.g. -cpu host / vPMU".to_string()),
                )
            } else if !env.cpu_pmu {
                (format!("no hardware PMU is available ({name})"), None)
            } else {
                (format!("this CPU's PMU does not support it ({name})"), None)
            }
        }
        libc::EMFILE => (
            format!("too many open files ({name})"),
            Some("raise the limit: ulimit -n".to_string()),
        ),
        libc::EBUSY => (
            format!("the PMU is held exclusively by another tool ({name})"),
            None,
        ),
        _ => (format!("perf_event_open failed ({name})"), None),
    };
    Unavailable { event, reason, fix }
}

/// A hardware event left out because the group would not fit the PMU's counters.
fn does_not_fit(event: Event, evidence: &str) -> Unavailable {
    Unavailable {
        event,
        reason: format!(
            "does not fit in the PMU's counters with the other selected events ({evidence})"
        ),
        fix: Some(
            "select fewer hardware events with --counters, or free a counter (sudo sysctl \
             kernel.nmi_watchdog=0)"
                .to_string(),
        ),
    }
}

/// One note for the user about everything that could not be read: the events grouped by
/// reason, each with its fix. `None` when the list is empty.
pub fn unavailable_note(list: &[Unavailable]) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let mut groups: Vec<(&str, Option<&str>, Vec<&str>)> = Vec::new();
    for u in list {
        match groups
            .iter_mut()
            .find(|g| g.0 == u.reason && g.1 == u.fix.as_deref())
        {
            Some(g) => g.2.push(u.event.name()),
            None => groups.push((&u.reason, u.fix.as_deref(), vec![u.event.name()])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(reason, fix, events)| {
            let mut s = format!("{}: {}", events.join(", "), reason);
            if let Some(fix) = fix {
                s.push_str(&format!("; fix: {fix}"));
            }
            s
        })
        .collect();
    Some(format!(
        "counters not read (absent from the results, not zero): {}.",
        parts.join(". ")
    ))
}

// ---------------------------------------------------------------------------------------------
// perf_event_open by hand
// ---------------------------------------------------------------------------------------------

/// `struct perf_event_attr` of `linux/perf_event.h`, up to `PERF_ATTR_SIZE_VER5` (112 bytes,
/// Linux ≥ 4.1). Unions are represented by their first member.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// `sample_period` / `sample_freq`.
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bit-field word: `disabled` is bit 0, `inherit` 1, `pinned` 2, `exclusive` 3,
    /// `exclude_user` 4, `exclude_kernel` 5, `exclude_hv` 6, `exclude_idle` 7, …
    pub flags: u64,
    /// `wakeup_events` / `wakeup_watermark`.
    pub wakeup_events: u32,
    pub bp_type: u32,
    /// `bp_addr` / `config1`.
    pub config1: u64,
    /// `bp_len` / `config2`.
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
}

/// `PERF_ATTR_SIZE_VER5`.
pub const PERF_ATTR_SIZE_VER5: u32 = 112;
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE_VER5 as usize);

pub const ATTR_FLAG_DISABLED: u64 = 1 << 0;
pub const ATTR_FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const ATTR_FLAG_EXCLUDE_HV: u64 = 1 << 6;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
// ioctls: _IO('$', n) and _IOR('$', 7, u64).
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_ID: libc::c_ulong = 0x8008_2407;
const PERF_IOC_FLAG_GROUP: libc::c_ulong = 1;

/// The attribute Vernier opens `event` with (leader: starts disabled, enabled once the group
/// is complete; members: enabled, they follow their leader).
pub fn attr_for(event: Event, leader: bool) -> PerfEventAttr {
    let (type_, config) = event.type_and_config();
    let mut flags = ATTR_FLAG_EXCLUDE_HV;
    if leader {
        flags |= ATTR_FLAG_DISABLED;
    }
    if event.excludes_kernel() {
        flags |= ATTR_FLAG_EXCLUDE_KERNEL;
    }
    PerfEventAttr {
        type_,
        size: PERF_ATTR_SIZE_VER5,
        config,
        read_format: READ_FORMAT,
        flags,
        ..PerfEventAttr::default()
    }
}

/// `perf_event_open(attr, 0, -1, group_fd, FD_CLOEXEC)`: the fd, or the errno.
fn perf_event_open(attr: &PerfEventAttr, group_fd: c_int) -> Result<c_int, i32> {
    // The kernel writes its own size into `size` when it rejects ours (E2BIG): give it a copy.
    let mut attr = *attr;
    // SAFETY: `attr` is a valid, initialised, writable perf_event_attr whose `size` field
    // matches its layout and which lives across the call; the other arguments are integers.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &mut attr as *mut PerfEventAttr,
            0 as libc::pid_t,
            -1 as c_int,
            group_fd,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL))
    } else {
        Ok(ret as c_int)
    }
}

fn close_fd(fd: c_int) {
    // SAFETY: `fd` was returned by perf_event_open and is owned by exactly one `Group`, which
    // closes it once.
    unsafe { libc::close(fd) };
}

/// One group read into `buf`; false when the read failed or was short.
#[inline(always)]
fn read_group(fd: c_int, buf: &mut [u64]) -> bool {
    let bytes = std::mem::size_of_val(buf);
    // SAFETY: `buf` is a live, writable buffer of exactly `bytes` bytes; `read` writes at most
    // that many.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), bytes) };
    n == bytes as isize
}

/// An open group: the leader's fd (reads return the whole group) and its members' fds.
#[derive(Debug)]
struct Group {
    fds: Vec<c_int>,
    events: Vec<Event>,
    ids: Option<Vec<u64>>,
    start: Vec<u64>,
    stop: Vec<u64>,
}

impl Drop for Group {
    fn drop(&mut self) {
        // Members first, the leader last.
        for &fd in self.fds.iter().rev() {
            close_fd(fd);
        }
    }
}

impl Group {
    /// Open `events` as one group; failures go to `unavailable`. `None` when nothing opened.
    fn open(
        events: &[Event],
        env: &Environment,
        unavailable: &mut Vec<Unavailable>,
    ) -> Option<Group> {
        let mut g = Group {
            fds: Vec::new(),
            events: Vec::new(),
            ids: None,
            start: Vec::new(),
            stop: Vec::new(),
        };
        for &e in events {
            let leader = g.fds.is_empty();
            let group_fd = if leader { -1 } else { g.fds[0] };
            match perf_event_open(&attr_for(e, leader), group_fd) {
                Ok(fd) => {
                    g.fds.push(fd);
                    g.events.push(e);
                }
                // x86 validates at open that the group fits the PMU's counters.
                Err(libc::EINVAL) if !leader && e.kind() == EventKind::Hardware => {
                    unavailable.push(does_not_fit(e, "EINVAL"))
                }
                Err(errno) => unavailable.push(classify_failure(e, errno, env)),
            }
        }
        if g.fds.is_empty() {
            return None;
        }
        let mut ids = Vec::with_capacity(g.fds.len());
        for &fd in &g.fds {
            let mut id = 0u64;
            // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer, which points to a
            // live local.
            let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
            if r != 0 {
                break;
            }
            ids.push(id);
        }
        if ids.len() == g.fds.len() {
            g.ids = Some(ids);
        }
        let len = group_read_len(g.fds.len());
        g.start = vec![0; len];
        g.stop = vec![0; len];
        // SAFETY: plain ioctl on the leader fd we own; the argument is a flag, not a pointer.
        let r = unsafe { libc::ioctl(g.fds[0], PERF_EVENT_IOC_ENABLE as _, PERF_IOC_FLAG_GROUP) };
        if r != 0 {
            // A group that never counts would read as zeros: report it instead.
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EINVAL);
            for &e in &g.events {
                unavailable.push(classify_failure(e, errno, env));
            }
            return None;
        }
        Some(g)
    }

    /// Whether the group gets onto the PMU at all: spin briefly, then compare running time.
    fn runs(&mut self) -> bool {
        let t0 = crate::timer::monotonic_ns();
        while crate::timer::monotonic_ns() - t0 < SCHEDULABLE_PROBE_NS {
            std::hint::spin_loop();
        }
        let mut buf = vec![0u64; self.start.len()];
        read_group(self.fds[0], &mut buf) && buf[2] > 0
    }
}

/// How long the hardware group is given to get onto the PMU before it is declared too big.
/// Group scheduling happens at enable and at each context switch or rotation tick (1 ms by
/// default), so a few ms tells a group that can never be scheduled from one that rotates.
const SCHEDULABLE_PROBE_NS: u64 = 4_000_000;

/// The cost of reading the counters, measured with nothing between the reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ReadCost {
    /// Wall time of one `read_start` + `read_stop` pair, median over batches, in ns.
    pub ns: f64,
    /// Each event's median delta over an empty region: what the reads themselves add to every
    /// sample (subtract it like the timer's overhead).
    pub baseline: CounterSample,
    /// Reads per side of the region (one per group).
    pub reads_per_side: usize,
}

/// Pairs of reads used to measure the read cost.
pub const READ_COST_PROBES: usize = 2_000;
/// Pairs timed together, so the clock's own cost is spread over many pairs.
const READ_COST_PAIRS_PER_BATCH: usize = 16;

/// The counters of the calling thread, opened as (at most) one hardware and one software group.
///
/// Not `Send`: counters count the thread that opened them.
#[derive(Debug)]
pub struct CounterSet {
    software: Option<Group>,
    hardware: Option<Group>,
    events: Vec<Event>,
    unavailable: Vec<Unavailable>,
    /// Cleared when a read fails: the sample then has no values.
    ok: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl CounterSet {
    /// Open `events` for the calling thread. Never fails as a whole: what cannot be opened is
    /// listed by [`CounterSet::unavailable`] (and explained by [`CounterSet::note`]).
    pub fn open(events: &[Event]) -> CounterSet {
        CounterSet::open_in(events, &Environment::detect())
    }

    /// [`CounterSet::open`] with a given environment (for the failure explanations).
    pub fn open_in(events: &[Event], env: &Environment) -> CounterSet {
        let mut unique: Vec<Event> = Vec::new();
        for &e in events {
            if !unique.contains(&e) {
                unique.push(e);
            }
        }
        let mut unavailable = Vec::new();
        let sw: Vec<Event> = unique
            .iter()
            .copied()
            .filter(|e| e.kind() == EventKind::Software)
            .collect();
        let mut hw: Vec<Event> = unique
            .iter()
            .copied()
            .filter(|e| e.kind() == EventKind::Hardware)
            .collect();
        let software = Group::open(&sw, env, &mut unavailable);
        let mut hardware = None;
        while !hw.is_empty() {
            let mut failed = Vec::new();
            let Some(mut g) = Group::open(&hw, env, &mut failed) else {
                unavailable.extend(failed);
                break;
            };
            if g.runs() {
                unavailable.extend(failed);
                hardware = Some(g);
                break;
            }
            // Too many events for the PMU: drop the last one that opened and try again.
            let dropped = *g.events.last().expect("a group has a leader");
            drop(g);
            hw.retain(|&e| e != dropped);
            unavailable.push(does_not_fit(dropped, "the group never ran"));
        }
        unavailable.sort_by_key(|u| u.event);
        let mut opened: Vec<Event> = Vec::new();
        for g in [&software, &hardware].into_iter().flatten() {
            opened.extend(&g.events);
        }
        opened.sort();
        CounterSet {
            software,
            hardware,
            events: opened,
            unavailable,
            ok: true,
            _not_send: std::marker::PhantomData,
        }
    }

    /// The events that are being read, in [`Event::ALL`] order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// What could not be opened, and why.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.unavailable
    }

    /// The note for the user about unavailable events (see [`unavailable_note`]).
    pub fn note(&self) -> Option<String> {
        unavailable_note(&self.unavailable)
    }

    /// Whether nothing at all is being read.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// `read(2)` calls on each side of the region (one per open group).
    pub fn reads_per_side(&self) -> usize {
        self.software.is_some() as usize + self.hardware.is_some() as usize
    }

    /// Read every group just before the timer starts (software first, hardware closest to
    /// the timer).
    #[inline(always)]
    pub fn read_start(&mut self) {
        let mut ok = true;
        if let Some(g) = &mut self.software {
            ok &= read_group(g.fds[0], &mut g.start);
        }
        if let Some(g) = &mut self.hardware {
            ok &= read_group(g.fds[0], &mut g.start);
        }
        self.ok = ok;
    }

    /// Read every group just after the timer stops (hardware first).
    #[inline(always)]
    pub fn read_stop(&mut self) {
        let mut ok = self.ok;
        if let Some(g) = &mut self.hardware {
            ok &= read_group(g.fds[0], &mut g.stop);
        }
        if let Some(g) = &mut self.software {
            ok &= read_group(g.fds[0], &mut g.stop);
        }
        self.ok = ok;
    }

    /// The deltas between the last `read_start` and `read_stop`. Events whose reads failed or
    /// whose group never ran during the region have no value.
    pub fn sample(&self) -> CounterSample {
        let mut s = CounterSample::default();
        if !self.ok {
            return s;
        }
        for g in [&self.software, &self.hardware].into_iter().flatten() {
            if group_delta(&g.events, &g.start, &g.stop, g.ids.as_deref(), &mut s).is_err() {
                for &e in &g.events {
                    s.set(e, None, false);
                }
            }
        }
        s
    }

    /// Measure the cost of the reads: [`READ_COST_PROBES`] start/stop pairs with nothing
    /// between them.
    pub fn read_cost(&mut self) -> ReadCost {
        self.read_cost_with(READ_COST_PROBES, || {})
    }

    /// Measure the cost of the reads with `inner` between them (e.g. the timer's start and
    /// stop, to get the counts an empty timed region carries), over `probes` pairs.
    pub fn read_cost_with(&mut self, probes: usize, mut inner: impl FnMut()) -> ReadCost {
        let probes = probes.max(READ_COST_PAIRS_PER_BATCH);
        // Warm the path (page in the buffers, the syscall entry).
        for _ in 0..READ_COST_PAIRS_PER_BATCH {
            self.read_start();
            inner();
            self.read_stop();
        }
        let batches = probes / READ_COST_PAIRS_PER_BATCH;
        let mut per_pair = Vec::with_capacity(batches);
        for _ in 0..batches {
            let t0 = crate::timer::monotonic_ns();
            for _ in 0..READ_COST_PAIRS_PER_BATCH {
                self.read_start();
                inner();
                self.read_stop();
            }
            let t1 = crate::timer::monotonic_ns();
            per_pair.push((t1 - t0) as f64 / READ_COST_PAIRS_PER_BATCH as f64);
        }
        let mut columns: Vec<Vec<u64>> = (0..Event::COUNT)
            .map(|_| Vec::with_capacity(probes))
            .collect();
        for _ in 0..probes {
            self.read_start();
            inner();
            self.read_stop();
            let s = self.sample();
            for e in s.events() {
                columns[e.index()].push(s.get(e).unwrap_or(0));
            }
        }
        let mut baseline = CounterSample::default();
        for e in self.events.clone() {
            let col = &mut columns[e.index()];
            if col.len() * 2 > probes {
                col.sort_unstable();
                baseline.set(e, Some(col[col.len() / 2]), false);
            }
        }
        per_pair.sort_by(|a, b| a.total_cmp(b));
        ReadCost {
            ns: per_pair.get(per_pair.len() / 2).copied().unwrap_or(0.0),
            baseline,
            reads_per_side: self.reads_per_side(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_layout_matches_the_kernel_header() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 112);
        let a = attr_for(Event::Cycles, true);
        assert_eq!(a.size, PERF_ATTR_SIZE_VER5);
        assert_eq!(a.read_format, 0b1111);
        assert_eq!(a.flags, 0b110_0001);
        let m = attr_for(Event::ContextSwitches, false);
        assert_eq!(m.flags, ATTR_FLAG_EXCLUDE_HV);
        assert_eq!(
            Event::L1dLoadMisses.type_and_config(),
            (PERF_TYPE_HW_CACHE, 0x10000)
        );
        // Field offsets of the kernel's struct.
        let base = &a as *const _ as usize;
        assert_eq!(&a.read_format as *const _ as usize - base, 32);
        assert_eq!(&a.flags as *const _ as usize - base, 40);
        assert_eq!(&a.config1 as *const _ as usize - base, 56);
        assert_eq!(&a.sample_regs_intr as *const _ as usize - base, 96);
        assert_eq!(&a.aux_watermark as *const _ as usize - base, 104);
    }

    #[test]
    fn names_round_trip() {
        for e in Event::ALL {
            assert_eq!(Event::from_name(e.name()), Some(e));
            assert_eq!(Event::ALL[e.index()], e);
        }
    }
}
