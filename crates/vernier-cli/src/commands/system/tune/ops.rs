//! The tuning operations, one per setting: each plans its changes from the machine's state,
//! applies them and rolls them back (the frequency governor, turbo boost, a fixed frequency,
//! irqbalance, where interrupts go, perf sampling, sysctls, transparent huge pages).

use super::*;

/// Governor to `performance` on every CPU that has one.
pub struct Governor;
impl Tuning for Governor {
    fn id(&self) -> &'static str {
        "governor"
    }
    fn describe(&self) -> &'static str {
        "scaling governor to performance on every CPU"
    }
    fn plan(&self, root: &SysRoot, ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        for cpu in ctx.online.iter() {
            let path = format!("{}/scaling_governor", machine::cpufreq_dir(cpu));
            let Some(orig) = root.read_raw(&path) else {
                continue;
            };
            if orig.trim() == "performance" {
                continue;
            }
            let avail = root.read(&format!(
                "{}/scaling_available_governors",
                machine::cpufreq_dir(cpu)
            ));
            if avail.is_some_and(|a| !a.split_whitespace().any(|g| g == "performance")) {
                s.notes
                    .push(format!("cpu{cpu}: no performance governor offered"));
                continue;
            }
            s.change(&path, orig, "performance");
        }
        s
    }
}

/// Turbo (Intel `intel_pstate/no_turbo`) or boost (`cpufreq/boost`) off.
pub struct Boost;
impl Tuning for Boost {
    fn id(&self) -> &'static str {
        "boost"
    }
    fn describe(&self) -> &'static str {
        "turbo/boost off (intel_pstate/no_turbo=1 or cpufreq/boost=0)"
    }
    fn plan(&self, root: &SysRoot, _ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        if let Some(sw) = machine::boost_switch(root) {
            for (path, value, off) in sw.off_writes() {
                if value != off {
                    let orig = root.read_raw(&path).unwrap_or(value);
                    s.change(&path, orig, off);
                }
            }
        }
        s
    }
}

/// Minimum frequency raised to the maximum on the benchmark CPUs. Runs after [`Boost`]:
/// turning turbo off lowers `scaling_max_freq` with `intel_pstate`, so the target is read
/// when applying, not when planning.
pub struct FixedFrequency;
impl Tuning for FixedFrequency {
    fn id(&self) -> &'static str {
        "frequency"
    }
    fn describe(&self) -> &'static str {
        "scaling_min_freq = scaling_max_freq on the benchmark CPUs"
    }
    fn plan(&self, root: &SysRoot, ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        for cpu in ctx.bench.iter() {
            let d = machine::cpufreq_dir(cpu);
            let (Some(min), Some(max)) = (
                root.read_raw(&format!("{d}/scaling_min_freq")),
                root.read(&format!("{d}/scaling_max_freq")),
            ) else {
                continue;
            };
            if min.trim() != max {
                s.change(&format!("{d}/scaling_min_freq"), min, &max);
            }
        }
        s
    }
    fn apply(&self, root: &SysRoot, state: &mut OpState) -> Result<()> {
        for ch in state.changes.iter_mut() {
            let max_path = ch.path.replace("scaling_min_freq", "scaling_max_freq");
            if let Some(max) = root.read(&max_path) {
                ch.target = max;
            }
        }
        apply_files(root, state, false)
    }
}

/// `irqbalance` stopped, before IRQs are moved (it would move them back).
pub struct Irqbalance;
impl Tuning for Irqbalance {
    fn id(&self) -> &'static str {
        "irqbalance"
    }
    fn describe(&self) -> &'static str {
        "stop irqbalance (systemctl), so it does not move IRQs back"
    }
    fn plan(&self, root: &SysRoot, _ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        if machine::processes_named(root, "irqbalance").is_empty() {
            return s;
        }
        if root.is_real() {
            s.service = Some(ServiceChange {
                name: "irqbalance".into(),
                applied: false,
            });
        } else {
            s.notes.push(
                "irqbalance runs in this tree but services are only stopped on the real root (would run `systemctl stop irqbalance`)".into(),
            );
        }
        s
    }
    fn apply(&self, _root: &SysRoot, state: &mut OpState) -> Result<()> {
        if let Some(svc) = state.service.as_mut() {
            systemctl("stop", &svc.name)?;
            svc.applied = true;
        }
        Ok(())
    }
    fn rollback(&self, _root: &SysRoot, state: &mut OpState) -> Result<()> {
        if let Some(svc) = state.service.as_mut().filter(|s| s.applied) {
            systemctl("start", &svc.name)?;
            svc.applied = false;
        }
        Ok(())
    }
}

fn systemctl(verb: &str, unit: &str) -> Result<()> {
    let st = std::process::Command::new("systemctl")
        .args([verb, unit])
        .status()
        .with_context(|| format!("cannot run `systemctl {verb} {unit}`"))?;
    if !st.success() {
        bail!("`systemctl {verb} {unit}` failed ({st})");
    }
    Ok(())
}

fn mask_width(mask: &str) -> usize {
    mask.trim().chars().filter(|c| *c != ',').count() * 4
}

/// New IRQs default to the housekeeping CPUs.
pub struct IrqDefaultAffinity;
impl Tuning for IrqDefaultAffinity {
    fn id(&self) -> &'static str {
        "irq-default-affinity"
    }
    fn describe(&self) -> &'static str {
        "/proc/irq/default_smp_affinity away from the benchmark CPUs"
    }
    fn plan(&self, root: &SysRoot, ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        let path = "/proc/irq/default_smp_affinity";
        let Some(orig) = root.read_raw(path) else {
            return s;
        };
        let Ok(set) = CpuSet::parse_mask(&orig) else {
            return s;
        };
        if ctx.housekeeping.is_empty() || !set.intersects(&ctx.bench) {
            return s;
        }
        let mut target = set.difference(&ctx.bench);
        if target.is_empty() {
            target = ctx.housekeeping.clone();
        }
        let t = target.to_mask(mask_width(&orig));
        s.change(path, orig, &t);
        s
    }
}

/// Each IRQ away from the benchmark CPUs. IRQs the kernel manages itself refuse
/// (`EIO`/`EINVAL`); they are skipped with a note, not treated as a failure.
pub struct IrqAffinity;
impl Tuning for IrqAffinity {
    fn id(&self) -> &'static str {
        "irq-affinity"
    }
    fn describe(&self) -> &'static str {
        "/proc/irq/*/smp_affinity away from the benchmark CPUs"
    }
    fn plan(&self, root: &SysRoot, ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        if ctx.housekeeping.is_empty() {
            return s;
        }
        for irq in machine::irqs(root) {
            if !irq.cpus.intersects(&ctx.bench) {
                continue;
            }
            let path = format!("/proc/irq/{}/smp_affinity", irq.number);
            let Some(orig) = root.read_raw(&path) else {
                continue;
            };
            let mut target = irq.cpus.difference(&ctx.bench);
            if target.is_empty() {
                target = ctx.housekeeping.clone();
            }
            let t = target.to_mask(mask_width(&orig));
            s.change(&path, orig, &t);
        }
        s
    }
    fn apply(&self, root: &SysRoot, state: &mut OpState) -> Result<()> {
        apply_files(root, state, true)?;
        for ch in state.changes.iter().filter(|c| c.skipped.is_some()) {
            state.notes.push(format!(
                "{} left as is ({})",
                ch.path,
                ch.skipped.as_deref().unwrap_or("")
            ));
        }
        Ok(())
    }
}

/// Perf sampling throttled: `perf_cpu_time_max_percent` first (the kernel refuses a new
/// `perf_event_max_sample_rate` while it is 0 or 100), then the sample rate.
pub struct PerfSampling;
impl Tuning for PerfSampling {
    fn id(&self) -> &'static str {
        "perf-sampling"
    }
    fn describe(&self) -> &'static str {
        "kernel.perf_cpu_time_max_percent=1, then kernel.perf_event_max_sample_rate=1"
    }
    fn plan(&self, root: &SysRoot, _ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        let pct = "/proc/sys/kernel/perf_cpu_time_max_percent";
        let rate = "/proc/sys/kernel/perf_event_max_sample_rate";
        let Some(rate_orig) = root.read_raw(rate) else {
            return s;
        };
        if rate_orig.trim().parse::<i64>().is_ok_and(|r| r <= 1) {
            return s;
        }
        if let Some(p) = root.read_raw(pct) {
            if p.trim() != "1" {
                s.change(pct, p, "1");
            }
        }
        s.change(rate, rate_orig, "1");
        s
    }
}

/// A sysctl set to one value when it differs (NMI watchdog, ASLR, perf_event_paranoid).
pub struct Sysctl {
    pub id: &'static str,
    pub describe: &'static str,
    pub path: &'static str,
    pub target: &'static str,
    /// Only change when the current value is above the target (never loosen further).
    pub only_if_above: bool,
}

impl Tuning for Sysctl {
    fn id(&self) -> &'static str {
        self.id
    }
    fn describe(&self) -> &'static str {
        self.describe
    }
    fn plan(&self, root: &SysRoot, _ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id);
        let Some(orig) = root.read_raw(self.path) else {
            return s;
        };
        let cur = orig.trim();
        let differs = if self.only_if_above {
            match (cur.parse::<i64>(), self.target.parse::<i64>()) {
                (Ok(c), Ok(t)) => c > t,
                _ => false,
            }
        } else {
            cur != self.target
        };
        if differs {
            s.change(self.path, orig, self.target);
        }
        s
    }
}

/// Transparent huge pages from `always` to `madvise`.
pub struct TransparentHugepages;
impl Tuning for TransparentHugepages {
    fn id(&self) -> &'static str {
        "thp"
    }
    fn describe(&self) -> &'static str {
        "transparent huge pages from always to madvise"
    }
    fn plan(&self, root: &SysRoot, _ctx: &TuneContext) -> OpState {
        let mut s = OpState::new(self.id());
        if let Some(orig) = root.read_raw(THP_ENABLED) {
            if selected_word(&orig).as_deref() == Some("always") {
                s.change(THP_ENABLED, orig, "madvise");
                s.changes[0].selector = true;
            }
        }
        s
    }
}
