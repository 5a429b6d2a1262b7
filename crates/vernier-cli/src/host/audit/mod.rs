//! The audit behind `vernier system show`: one [`Check`] per setting that moves benchmark
//! figures, each with its state, a verdict, and the exact command or kernel parameter that
//! fixes it. Reads only; a file that is missing makes a check "not available here".

mod cpus;
mod frequency;
mod kernel;

use cpus::{
    cpu_check, irq_check, irq_default_check, irqbalance_check, isolcpus_check, nohz_full_check,
    rcu_nocbs_check, smt_check,
};
use frequency::{boost_check, frequency_check, governor_check};
pub use kernel::THP_ENABLED;
use kernel::{
    aslr_check, load_check, nmi_check, paranoid_check, perf_sampling_check, swap_check, thp_check,
    virt_check,
};
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
        cpu_check(root, &online, &bench),
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
        "emulation": virt.emulation,
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
