//! The checks of the kernel's settings and the machine's state: ASLR, perf permissions and
//! sampling, the NMI watchdog, transparent huge pages, swap, the load, virtualisation.

use super::*;

fn sysctl_value(root: &SysRoot, name: &str) -> Option<i64> {
    root.read_num(&format!("/proc/sys/kernel/{name}"))
}

pub(super) fn aslr_check(root: &SysRoot) -> Check {
    let Some(v) = sysctl_value(root, "randomize_va_space") else {
        return unavailable("aslr", "no /proc/sys/kernel/randomize_va_space");
    };
    match v {
        2 => check(
            "aslr",
            Status::Good,
            "full randomization (2): each worker process gets a new layout, which Vernier uses to measure layout sensitivity (`--no-aslr` fixes one for reproduction)",
        ),
        _ => check(
            "aslr",
            Status::Bad,
            format!("{v} (partly or not randomized): every process gets the same layout, so layout sensitivity goes unseen"),
        )
        .fix(format!("sudo sysctl -w kernel.randomize_va_space=2, {TUNE}")),
    }
}

pub(super) fn paranoid_check(root: &SysRoot) -> Check {
    let Some(v) = sysctl_value(root, "perf_event_paranoid") else {
        return unavailable("perf-event-paranoid", "no perf events in this kernel");
    };
    if v <= 2 {
        check(
            "perf-event-paranoid",
            Status::Good,
            format!("{v}: counters of a process's own user-space code are allowed"),
        )
    } else {
        check(
            "perf-event-paranoid",
            Status::Bad,
            format!("{v}: unprivileged processes cannot open hardware counters"),
        )
        .fix(format!(
            "sudo sysctl -w kernel.perf_event_paranoid=2, {TUNE}"
        ))
    }
}

pub(super) fn perf_sampling_check(root: &SysRoot) -> Check {
    let rate = sysctl_value(root, "perf_event_max_sample_rate");
    let pct = sysctl_value(root, "perf_cpu_time_max_percent");
    let Some(rate) = rate else {
        return unavailable("perf-sampling", "no perf_event_max_sample_rate");
    };
    let state = format!(
        "perf_event_max_sample_rate={rate}, perf_cpu_time_max_percent={}",
        pct.map_or("?".to_string(), |p| p.to_string())
    );
    if rate <= 1 {
        check(
            "perf-sampling",
            Status::Good,
            state + ": sampling interrupts minimal",
        )
    } else {
        check(
            "perf-sampling",
            Status::Bad,
            state + ": profilers may interrupt up to that many times a second, and the kernel retunes the rate (and logs) while benchmarks run",
        )
        .fix(format!(
            "sudo sysctl -w kernel.perf_cpu_time_max_percent=1 kernel.perf_event_max_sample_rate=1, {TUNE}"
        ))
    }
}

pub(super) fn nmi_check(root: &SysRoot) -> Check {
    let Some(v) = sysctl_value(root, "nmi_watchdog") else {
        return unavailable("nmi-watchdog", "no /proc/sys/kernel/nmi_watchdog");
    };
    if v == 0 {
        check("nmi-watchdog", Status::Good, "off")
    } else {
        check(
            "nmi-watchdog",
            Status::Bad,
            "on: a periodic NMI on every CPU, and it holds one hardware counter",
        )
        .fix(format!("sudo sysctl -w kernel.nmi_watchdog=0, {TUNE}"))
    }
}

pub const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

pub(super) fn thp_check(root: &SysRoot) -> Check {
    let Some(raw) = root.read(THP_ENABLED) else {
        return unavailable("thp", "no transparent huge pages");
    };
    let sel = crate::host::root::selected_word(&raw).unwrap_or(raw.clone());
    if sel == "always" {
        check(
            "thp",
            Status::Bad,
            "always: page faults and khugepaged compaction vary run to run",
        )
        .fix(format!("echo madvise | sudo tee {THP_ENABLED}, {TUNE}"))
    } else {
        check("thp", Status::Good, sel)
    }
}

fn meminfo_kb(root: &SysRoot, key: &str) -> Option<u64> {
    root.read_raw("/proc/meminfo")?.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.split_whitespace().next()?.parse().ok())?
    })
}

pub(super) fn swap_check(root: &SysRoot) -> Check {
    let (Some(total), Some(free)) = (meminfo_kb(root, "SwapTotal"), meminfo_kb(root, "SwapFree"))
    else {
        return unavailable("swap", "no /proc/meminfo");
    };
    if total == 0 {
        return check("swap", Status::Good, "no swap");
    }
    let used = total.saturating_sub(free);
    if used == 0 {
        check(
            "swap",
            Status::Good,
            format!("{} MiB of swap, none used", total / 1024),
        )
    } else {
        check(
            "swap",
            Status::Bad,
            format!(
                "{} MiB of {} MiB swapped out: memory pressure; page faults may hit the disk",
                used / 1024,
                total / 1024
            ),
        )
        .fix("sudo swapoff -a (needs enough free memory), or free memory")
    }
}

pub(super) fn load_check(root: &SysRoot) -> Check {
    let Some(raw) = root.read("/proc/loadavg") else {
        return unavailable("load", "no /proc/loadavg");
    };
    let load1: f64 = raw
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0);
    let state = format!("load average {raw}");
    if load1 < 1.0 {
        check("load", Status::Good, state)
    } else {
        check(
            "load",
            Status::Bad,
            state + ": other work competes for CPU time and caches",
        )
        .fix("stop or wait for the other work (see `top`), or isolate the benchmark CPUs")
    }
}

pub(super) fn virt_check(root: &SysRoot) -> Check {
    let v = machine::virtualization(root);
    let pmu = if v.pmu {
        "hardware counters exposed"
    } else {
        "no hardware PMU exposed: cycle and instruction counters unavailable"
    };
    let state = match (&v.hypervisor, &v.container) {
        (None, None) => format!("bare metal; {pmu}"),
        (None, Some(c)) => format!("container ({c}) on this kernel; {pmu}"),
        (Some(h), c) => format!(
            "virtual machine ({h}{}): the hypervisor can steal time and the timer may be paravirtual; {}",
            c.as_ref().map_or(String::new(), |c| format!(", in a {c} container")),
            if v.pmu {
                "counters are virtualised (they may count hypervisor exits)"
            } else {
                pmu
            }
        ),
    };
    let state = match &v.emulation {
        Some(e) => format!(
            "emulated: {e}: every time measured is the emulator's translation of the code, \
             not the hardware's; {state}"
        ),
        None => state,
    };
    check("virtualization", Status::Info, state)
}
