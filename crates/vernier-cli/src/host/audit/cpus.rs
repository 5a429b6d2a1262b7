//! The checks of the CPUs benchmarks run on: isolation from the scheduler, the timer tick and
//! RCU callbacks, where interrupts go, and idle SMT siblings.

use super::*;

pub(super) fn cpu_check(root: &SysRoot, online: &CpuSet, bench: &CpuSet) -> Check {
    let Some(m) = machine::cpu_model(root) else {
        return unavailable("cpu", "no /proc/cpuinfo");
    };
    let state = format!(
        "{} ({}, {} CPUs online: {})",
        m.model,
        m.vendor.as_str(),
        online.len(),
        online
    );
    let detail = vec![format!("vendor: {}", m.vendor_raw)];
    let kinds = machine::core_kinds(root, online);
    if kinds.len() < 2 {
        return check("cpu", Status::Info, state).detail(detail);
    }
    // Big and little cores: a benchmark's figures depend on which kind it ran on.
    let named: Vec<String> = kinds
        .iter()
        .map(|k| {
            let capacity = k
                .capacity
                .map(|c| format!(", capacity {c}"))
                .unwrap_or_default();
            format!("{} ×{} (CPUs {}{capacity})", k.model, k.cpus.len(), k.cpus)
        })
        .collect();
    let state = format!("{state}; big and little cores: {}", named.join(", "));
    let on: Vec<&machine::CoreKind> = kinds.iter().filter(|k| k.cpus.intersects(bench)).collect();
    match on.as_slice() {
        [one] => check(
            "cpu",
            Status::Info,
            format!("{state}; the benchmark CPUs {bench} are {}", one.model),
        )
        .detail(detail),
        _ => check(
            "cpu",
            Status::Bad,
            format!("{state}; the benchmark CPUs {bench} mix kinds, which run at different speeds"),
        )
        .fix(format!(
            "benchmark on CPUs of one kind: {} ({}, the fastest), {TUNE}",
            kinds[0].cpus, kinds[0].model
        ))
        .detail(detail),
    }
}

pub(super) fn isolcpus_check(
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

pub(super) fn nohz_full_check(
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

pub(super) fn rcu_nocbs_check(
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

pub(super) fn irq_default_check(
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

pub(super) fn irq_check(root: &SysRoot, bench: &CpuSet, housekeeping: &CpuSet) -> Check {
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

pub(super) fn irqbalance_check(root: &SysRoot) -> Check {
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

pub(super) fn smt_check(root: &SysRoot, bench: &CpuSet) -> Check {
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
