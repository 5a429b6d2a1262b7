//! The checks of the CPUs' clock: the frequency governor, a fixed frequency, turbo boost.

use super::*;

pub(super) fn governor_check(root: &SysRoot, online: &CpuSet) -> Check {
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

pub(super) fn frequency_check(root: &SysRoot, bench: &CpuSet) -> Check {
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

pub(super) fn boost_check(root: &SysRoot) -> Check {
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
