//! What could not be opened, and why: each failure classified from its errno and the
//! machine's settings (`perf_event_paranoid`, a hypervisor, a PMU that is not there), with the
//! fix when there is one, and the one sentence the report prints.

use super::{Event, EventKind};
use serde::{Deserialize, Serialize};

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
pub(super) fn does_not_fit(event: Event, evidence: &str) -> Unavailable {
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
