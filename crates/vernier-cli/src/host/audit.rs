//! The audit behind `vernier system show`: one [`Check`] per setting that moves benchmark
//! figures, each with its state, a verdict, and the exact command or kernel parameter that
//! fixes it. Reads only; a file that is missing makes a check "not available here".

use serde::Serialize;
use serde_json::json;

use crate::host::machine::{self, Vendor};
use crate::host::CpuSet;
use crate::host::SysRoot;

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Good for benchmarking.
    Good,
    /// Costs precision; the `fix` says how to change it.
    Bad,
    /// A fact worth knowing that no setting changes (CPU model, virtualisation).
    Info,
    /// The file behind the check does not exist on this machine.
    Unavailable,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Good => "ok",
            Status::Bad => "FIX",
            Status::Info => "info",
            Status::Unavailable => "n/a",
        }
    }
}

/// One line of the audit. `id` is stable (scripts and result files use it).
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub state: String,
    pub status: Status,
    /// The command to run, or the kernel parameter to add, when `status` is `bad`.
    pub fix: Option<String>,
    /// Per-CPU or per-IRQ lines behind the state.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<String>,
}

fn check(id: &'static str, status: Status, state: impl Into<String>) -> Check {
    Check {
        id,
        state: state.into(),
        status,
        fix: None,
        detail: Vec::new(),
    }
}

fn unavailable(id: &'static str, what: &str) -> Check {
    check(
        id,
        Status::Unavailable,
        format!("not available here ({what})"),
    )
}

impl Check {
    fn fix(mut self, f: impl Into<String>) -> Check {
        self.fix = Some(f.into());
        self
    }
    fn detail(mut self, d: Vec<String>) -> Check {
        self.detail = d;
        self
    }
}

/// The full audit.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    pub root: String,
    /// The CPUs the checks are about and why they were chosen.
    pub benchmark_cpus: String,
    pub benchmark_cpus_reason: &'static str,
    pub checks: Vec<Check>,
    /// Kernel parameters to add at boot (isolation cannot change at run time).
    pub boot_parameters: Option<String>,
}

impl Audit {
    pub fn failing(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Bad)
            .map(|c| c.id)
            .collect()
    }
    pub fn tuned(&self) -> bool {
        self.failing().is_empty()
    }
}

const TUNE: &str = "or `vernier system tune`";

/// Run every check against `root`, about the benchmark CPUs `cpus` (default: see
/// [`machine::benchmark_cpus`]).
pub fn audit(root: &SysRoot, cpus: Option<&CpuSet>) -> Audit {
    let (bench, reason) = machine::benchmark_cpus(root, cpus);
    let online = machine::online_cpus(root);
    let isolate = machine::isolation_set(root, &bench);
    let housekeeping = online.difference(&bench);
    let mut boot: Vec<String> = Vec::new();

    let mut checks = vec![
        cpu_check(root, &online),
        isolcpus_check(root, &online, &bench, &isolate, &mut boot),
        nohz_full_check(root, &bench, &isolate, &mut boot),
        rcu_nocbs_check(root, &bench, &isolate, &mut boot),
    ];
    checks.push(irq_default_check(root, &online, &bench, &housekeeping));
    checks.push(irq_check(root, &bench, &housekeeping));
    checks.push(irqbalance_check(root));
    checks.push(governor_check(root, &online));
    checks.push(frequency_check(root, &bench));
    checks.push(boost_check(root));
    checks.push(smt_check(root, &bench));
    checks.push(aslr_check(root));
    checks.push(paranoid_check(root));
    checks.push(perf_sampling_check(root));
    checks.push(nmi_check(root));
    checks.push(thp_check(root));
    checks.push(swap_check(root));
    checks.push(load_check(root));
    checks.push(virt_check(root));

    Audit {
        root: root.dir().display().to_string(),
        benchmark_cpus: bench.to_string(),
        benchmark_cpus_reason: reason,
        checks,
        boot_parameters: (!boot.is_empty()).then(|| boot.join(" ")),
    }
}

fn cpu_check(root: &SysRoot, online: &CpuSet) -> Check {
    match machine::cpu_model(root) {
        Some(m) => check(
            "cpu",
            Status::Info,
            format!(
                "{} ({}, {} CPUs online: {})",
                m.model,
                m.vendor.as_str(),
                online.len(),
                online
            ),
        )
        .detail(vec![format!("vendor: {}", m.vendor_raw)]),
        None => unavailable("cpu", "no /proc/cpuinfo"),
    }
}

fn isolcpus_check(
    root: &SysRoot,
    online: &CpuSet,
    bench: &CpuSet,
    isolate: &CpuSet,
    boot: &mut Vec<String>,
) -> Check {
    if online.len() < 2 {
        return check(
            "isolcpus",
            Status::Unavailable,
            "not available here (one CPU: nothing to isolate from)",
        );
    }
    let Some(iso) = machine::isolated_cpus(root) else {
        return unavailable("isolcpus", "no /sys/devices/system/cpu/isolated");
    };
    if !iso.is_empty() && iso.is_superset(bench) {
        return check("isolcpus", Status::Good, format!("isolated: {iso}"));
    }
    let p = format!("isolcpus={isolate}");
    boot.push(p.clone());
    let state = if iso.is_empty() {
        "no CPU isolated: the scheduler puts other tasks on the benchmark CPUs".to_string()
    } else {
        format!("isolated: {iso}, which does not cover benchmark CPUs {bench}")
    };
    check("isolcpus", Status::Bad, state).fix(format!("kernel command line: {p}"))
}

fn nohz_full_check(
    root: &SysRoot,
    bench: &CpuSet,
    isolate: &CpuSet,
    boot: &mut Vec<String>,
) -> Check {
    let path = "/sys/devices/system/cpu/nohz_full";
    let Some(raw) = root.read(path) else {
        return unavailable("nohz_full", "kernel built without CONFIG_NO_HZ_FULL");
    };
    let set = CpuSet::parse_list(&raw).unwrap_or_default();
    if !set.is_empty() && set.is_superset(bench) {
        return check(
            "nohz_full",
            Status::Good,
            format!("tickless on {set}: no scheduler tick while one task runs"),
        );
    }
    let p = format!("nohz_full={isolate}");
    boot.push(p.clone());
    check(
        "nohz_full",
        Status::Bad,
        if set.is_empty() {
            "off: the scheduler tick interrupts the benchmark CPUs (100-1000 Hz)".to_string()
        } else {
            format!("tickless on {set}, not on all of {bench}")
        },
    )
    .fix(format!("kernel command line: {p}"))
}

fn rcu_nocbs_check(
    root: &SysRoot,
    bench: &CpuSet,
    isolate: &CpuSet,
    boot: &mut Vec<String>,
) -> Check {
    if machine::cmdline(root).is_none() {
        return unavailable("rcu_nocbs", "no /proc/cmdline");
    }
    let nocbs = machine::cmdline_param(root, "rcu_nocbs")
        .and_then(|v| CpuSet::parse_list(&v).ok())
        .unwrap_or_default();
    let nohz = machine::cmdline_param(root, "nohz_full")
        .and_then(|v| CpuSet::parse_list(&v).ok())
        .unwrap_or_default();
    if !nocbs.is_empty() && nocbs.is_superset(bench) {
        return check(
            "rcu_nocbs",
            Status::Good,
            format!("RCU callbacks offloaded from {nocbs}"),
        );
    }
    if !nohz.is_empty() && nohz.is_superset(bench) {
        return check(
            "rcu_nocbs",
            Status::Good,
            format!("RCU callbacks offloaded from {nohz} (implied by nohz_full)"),
        );
    }
    let p = format!("rcu_nocbs={isolate}");
    boot.push(p.clone());
    check(
        "rcu_nocbs",
        Status::Bad,
        "RCU callbacks run on the benchmark CPUs",
    )
    .fix(format!("kernel command line: {p}"))
}

fn irq_default_check(
    root: &SysRoot,
    online: &CpuSet,
    bench: &CpuSet,
    housekeeping: &CpuSet,
) -> Check {
    let path = "/proc/irq/default_smp_affinity";
    let Some(mask) = root.read(path) else {
        return unavailable("irq-default-affinity", "no /proc/irq/default_smp_affinity");
    };
    let set = CpuSet::parse_mask(&mask).unwrap_or_default();
    if housekeeping.is_empty() {
        return check(
            "irq-default-affinity",
            Status::Unavailable,
            format!("{set} (mask {mask}); every CPU is a benchmark CPU: IRQs cannot move away"),
        );
    }
    if !set.intersects(bench) {
        return check(
            "irq-default-affinity",
            Status::Good,
            format!("new IRQs go to {set} (mask {mask})"),
        );
    }
    let target = housekeeping.to_mask(mask.chars().filter(|c| *c != ',').count() * 4);
    let _ = online;
    check(
        "irq-default-affinity",
        Status::Bad,
        format!("new IRQs may go to {set} (mask {mask}), including benchmark CPUs {bench}"),
    )
    .fix(format!(
        "echo {target} | sudo tee {path} (boot: irqaffinity={housekeeping}), {TUNE}"
    ))
}

fn irq_check(root: &SysRoot, bench: &CpuSet, housekeeping: &CpuSet) -> Check {
    let irqs = machine::irqs(root);
    if irqs.is_empty() {
        return unavailable("irq-affinity", "no /proc/irq/*/smp_affinity");
    }
    let on_bench: Vec<&machine::Irq> = irqs.iter().filter(|i| i.cpus.intersects(bench)).collect();
    if on_bench.is_empty() {
        return check(
            "irq-affinity",
            Status::Good,
            format!("none of {} IRQs may run on {bench}", irqs.len()),
        );
    }
    let detail = on_bench
        .iter()
        .map(|i| {
            format!(
                "irq {} ({}): CPUs {} (mask {})",
                i.number, i.name, i.cpus, i.mask
            )
        })
        .collect();
    let state = format!(
        "{} of {} IRQs may run on benchmark CPUs {bench}",
        on_bench.len(),
        irqs.len()
    );
    if housekeeping.is_empty() {
        return check(
            "irq-affinity",
            Status::Unavailable,
            state + " (no other CPU to move them to)",
        )
        .detail(detail);
    }
    let width = on_bench[0].mask.chars().filter(|c| *c != ',').count() * 4;
    check("irq-affinity", Status::Bad, state)
        .fix(format!(
            "for f in /proc/irq/*/smp_affinity; do echo {} | sudo tee $f; done, {TUNE}",
            housekeeping.to_mask(width)
        ))
        .detail(detail)
}

fn irqbalance_check(root: &SysRoot) -> Check {
    let pids = machine::processes_named(root, "irqbalance");
    if pids.is_empty() {
        check("irqbalance", Status::Good, "not running")
    } else {
        check(
            "irqbalance",
            Status::Bad,
            format!("running (pid {}): it moves IRQs back onto any CPU", pids[0]),
        )
        .fix(format!("sudo systemctl stop irqbalance, {TUNE}"))
    }
}

fn governor_check(root: &SysRoot, online: &CpuSet) -> Check {
    let freqs: Vec<machine::CpuFreq> = online
        .iter()
        .filter_map(|c| machine::cpufreq(root, c))
        .collect();
    if freqs.is_empty() {
        return unavailable(
            "governor",
            "no cpufreq: the frequency is set by firmware or the hypervisor",
        );
    }
    let detail: Vec<String> = freqs
        .iter()
        .map(|f| {
            let khz = |v: Option<u64>| v.map_or("?".to_string(), |v| format!("{}", v / 1000));
            format!(
                "cpu{}: {} ({}), {}-{} MHz (hardware {}-{} MHz)",
                f.cpu,
                f.governor.as_deref().unwrap_or("?"),
                f.driver.as_deref().unwrap_or("?"),
                khz(f.min_khz),
                khz(f.max_khz),
                khz(f.hw_min_khz),
                khz(f.hw_max_khz)
            )
        })
        .collect();
    let not_perf: CpuSet = freqs
        .iter()
        .filter(|f| f.governor.as_deref() != Some("performance"))
        .map(|f| f.cpu)
        .collect();
    if not_perf.is_empty() {
        return check("governor", Status::Good, "performance on every CPU").detail(detail);
    }
    let govs: std::collections::BTreeSet<&str> =
        freqs.iter().filter_map(|f| f.governor.as_deref()).collect();
    check(
        "governor",
        Status::Bad,
        format!(
            "{} on CPUs {not_perf}: the frequency follows the load",
            govs.into_iter().collect::<Vec<_>>().join("/")
        ),
    )
    .fix(format!(
        "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor, {TUNE}"
    ))
    .detail(detail)
}

fn frequency_check(root: &SysRoot, bench: &CpuSet) -> Check {
    let freqs: Vec<machine::CpuFreq> = bench
        .iter()
        .filter_map(|c| machine::cpufreq(root, c))
        .collect();
    if freqs.is_empty() {
        return unavailable("frequency", "no cpufreq on the benchmark CPUs");
    }
    let floating: Vec<&machine::CpuFreq> = freqs
        .iter()
        .filter(|f| f.min_khz.is_none() || f.min_khz != f.max_khz)
        .collect();
    if floating.is_empty() {
        return check(
            "frequency",
            Status::Good,
            format!(
                "fixed at {} MHz on {bench}",
                freqs[0].max_khz.unwrap_or(0) / 1000
            ),
        );
    }
    let cpus: CpuSet = floating.iter().map(|f| f.cpu).collect();
    let f = floating[0];
    check(
        "frequency",
        Status::Bad,
        format!(
            "may vary on {cpus}: min {} MHz < max {} MHz",
            f.min_khz.unwrap_or(0) / 1000,
            f.max_khz.unwrap_or(0) / 1000
        ),
    )
    .fix(format!(
        "cat {d}/scaling_max_freq | sudo tee {d}/scaling_min_freq (each benchmark CPU), {TUNE}",
        d = machine::cpufreq_dir(f.cpu)
    ))
}

fn boost_check(root: &SysRoot) -> Check {
    let vendor = machine::cpu_model(root).map_or(Vendor::Other, |m| m.vendor);
    let Some(sw) = machine::boost_switch(root) else {
        let why = match vendor {
            Vendor::Arm => "no cpufreq/boost: this ARM cpufreq driver has no boost switch",
            _ => "no intel_pstate/no_turbo nor cpufreq/boost",
        };
        return unavailable("boost", why);
    };
    let (what, path, off) = match &sw {
        machine::BoostSwitch::IntelNoTurbo { path, .. } => {
            ("turbo (intel_pstate)", path.clone(), "1")
        }
        machine::BoostSwitch::CpufreqBoost { path, .. } => ("boost (cpufreq)", path.clone(), "0"),
        machine::BoostSwitch::PerPolicy { paths } => (
            "boost (per policy)",
            paths
                .first()
                .map(|p| p.0.replace("policy0", "policy*"))
                .unwrap_or_default(),
            "0",
        ),
    };
    if sw.is_off() {
        check("boost", Status::Good, format!("{what} off"))
    } else {
        check(
            "boost",
            Status::Bad,
            format!("{what} on: the clock rises and falls with temperature and active cores"),
        )
        .fix(format!("echo {off} | sudo tee {path}, {TUNE}"))
    }
}

fn smt_check(root: &SysRoot, bench: &CpuSet) -> Check {
    if let Some(ctl) = root.read("/sys/devices/system/cpu/smt/control") {
        if ctl == "off" || ctl == "forceoff" || ctl == "notsupported" || ctl == "notimplemented" {
            return check(
                "smt",
                Status::Good,
                format!("SMT {ctl}: no sibling threads"),
            );
        }
    }
    let online = machine::online_cpus(root);
    let isolated = machine::isolated_cpus(root).unwrap_or_default();
    let mut detail = Vec::new();
    let mut busy_siblings = CpuSet::new();
    let mut any_topology = false;
    for c in bench.iter() {
        let Some(sib) = machine::thread_siblings(root, c) else {
            continue;
        };
        any_topology = true;
        let others: CpuSet = sib
            .iter()
            .filter(|s| *s != c && online.contains(*s))
            .collect();
        if others.is_empty() {
            detail.push(format!("cpu{c}: no online sibling"));
            continue;
        }
        detail.push(format!("cpu{c}: siblings {others}"));
        for o in others.iter() {
            // A sibling that is isolated, or is itself a benchmark CPU, runs no other work
            // (benchmarks run one at a time).
            if !isolated.contains(o) && !bench.contains(o) {
                busy_siblings.0.insert(o);
            }
        }
    }
    if !any_topology {
        return unavailable("smt", "no topology/thread_siblings_list");
    }
    if busy_siblings.is_empty() {
        return check(
            "smt",
            Status::Good,
            format!("the benchmark CPUs {bench} share no core with other work"),
        )
        .detail(detail);
    }
    let offline = busy_siblings
        .iter()
        .map(|s| format!("echo 0 | sudo tee /sys/devices/system/cpu/cpu{s}/online"))
        .collect::<Vec<_>>()
        .join("; ");
    check(
        "smt",
        Status::Bad,
        format!("sibling threads {busy_siblings} share a core with the benchmark CPUs and may run other work"),
    )
    .fix(format!("{offline} (or isolate them too, or boot with nosmt)"))
    .detail(detail)
}

fn sysctl_value(root: &SysRoot, name: &str) -> Option<i64> {
    root.read_num(&format!("/proc/sys/kernel/{name}"))
}

fn aslr_check(root: &SysRoot) -> Check {
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

fn paranoid_check(root: &SysRoot) -> Check {
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

fn perf_sampling_check(root: &SysRoot) -> Check {
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

fn nmi_check(root: &SysRoot) -> Check {
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

fn thp_check(root: &SysRoot) -> Check {
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

fn swap_check(root: &SysRoot) -> Check {
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

fn load_check(root: &SysRoot) -> Check {
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

fn virt_check(root: &SysRoot) -> Check {
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
    check("virtualization", Status::Info, state)
}

/// The compact summary embedded in result files (`"system"`).
pub fn summary_json(root: &SysRoot, audit: &Audit) -> serde_json::Value {
    let model = machine::cpu_model(root);
    let virt = machine::virtualization(root);
    json!({
        "tuned": audit.tuned(),
        "failing": audit.failing(),
        "cpu_vendor": model.as_ref().map(|m| m.vendor.as_str()),
        "cpu_model": model.as_ref().map(|m| m.model.clone()),
        "virtualization": virt.hypervisor,
        "container": virt.container,
        "hardware_counters": virt.pmu,
        "benchmark_cpus": audit.benchmark_cpus,
    })
}

/// Render the audit as the table `vernier system show` prints.
pub fn render_table(a: &Audit) -> String {
    let idw = a
        .checks
        .iter()
        .map(|c| c.id.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = String::new();
    out.push_str(&format!(
        "benchmark CPUs: {} ({})\n\n",
        if a.benchmark_cpus.is_empty() {
            "none"
        } else {
            &a.benchmark_cpus
        },
        a.benchmark_cpus_reason
    ));
    out.push_str(&format!("{:<idw$}  {:<4}  state / fix\n", "check", "ok?"));
    for c in &a.checks {
        out.push_str(&format!(
            "{:<idw$}  {:<4}  {}\n",
            c.id,
            c.status.label(),
            c.state
        ));
        for d in &c.detail {
            out.push_str(&format!("{:<idw$}        · {d}\n", ""));
        }
        if let Some(f) = &c.fix {
            out.push_str(&format!("{:<idw$}        fix: {f}\n", ""));
        }
    }
    out.push('\n');
    if let Some(b) = &a.boot_parameters {
        out.push_str(&format!(
            "boot-time settings (cannot change while running): add\n    {b}\nto the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then `sudo update-grub` and reboot)\n"
        ));
    }
    let failing = a.failing();
    if failing.is_empty() {
        out.push_str("tuned for benchmarking\n");
    } else {
        out.push_str(&format!(
            "not tuned for benchmarking: {} issue{} ({}); `vernier system tune` fixes what can change at run time\n",
            failing.len(),
            if failing.len() == 1 { "" } else { "s" },
            failing.join(", ")
        ));
    }
    out
}

// Called by the result writer (`"system"` in result files), not by the system commands.
/// The audit summary embedded in result files: `tuned`, the failing check ids, the CPU
/// model and the virtualisation.
pub fn audit_summary(root: &SysRoot) -> serde_json::Value {
    let a = audit(root, None);
    summary_json(root, &a)
}

// Called by `run`, `demo` and `compare` before measuring.
/// One line for other commands to print when the machine is not tuned, `None` when it is.
pub fn untuned_hint(root: &SysRoot) -> Option<String> {
    let a = audit(root, None);
    let n = a.failing().len();
    (n > 0).then(|| {
        format!(
            "system not tuned for benchmarking ({n} issue{}): see `vernier system show`",
            if n == 1 { "" } else { "s" }
        )
    })
}

/// The audit summary for the result file; prints one line when the machine is not tuned.
pub fn audit_and_hint() -> serde_json::Value {
    let root = SysRoot::from_option(None);
    if let Some(h) = untuned_hint(&root) {
        eprintln!("vernier: {h}");
    }
    audit_summary(&root)
}
