//! `vernier system`: audit the machine (`show`), tune it for benchmarking and undo that
//! (`tune`, `reset`), and measure its noise floor (`noise`).
//!
//! Every read and write of `/sys` and `/proc` goes through a [`SysRoot`] (`--root DIR` or
//! `VERNIER_SYSROOT`), so the whole module runs against fake trees in tests. The checks,
//! the tuning order, the state file and the noise method are described in `docs/system.md`.

pub mod noise;
pub mod share;
pub mod tune;

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::host::{affinity, audit};
use crate::host::{CpuSet, SysRoot};

/// Exit code when the system is not tuned (`system show`).
pub const EXIT_UNTUNED: i32 = 2;

/// `vernier system …`
#[derive(clap::Args, Debug)]
pub struct SystemArgs {
    /// Directory standing for `/` when reading /sys and /proc (default: $VERNIER_SYSROOT, else /)
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(subcommand)]
    pub command: SystemCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum SystemCommand {
    /// Audit every setting that moves benchmark figures; exit 0 when tuned, 2 when not
    Show(ShowArgs),
    /// Apply the run-time settings for benchmarking (needs root on the real machine)
    Tune(TuneArgs),
    /// Restore the settings saved by `tune`
    Reset(ResetArgs),
    /// Measure the noise floor (interruptions) of each CPU
    Noise(NoiseArgs),
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// Print the audit as JSON
    #[arg(long)]
    pub json: bool,
    /// The CPUs benchmarks will use (default: the isolated CPUs, else the last CPU)
    #[arg(long, alias = "cpu", value_name = "LIST")]
    pub cpus: Option<CpuSet>,
}

#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    /// The CPUs benchmarks will use: IRQs move away from them, their frequency is fixed
    #[arg(long, alias = "cpu", value_name = "LIST")]
    pub cpus: Option<CpuSet>,
    /// The state file (default: var/lib/vernier/tune-state.json under --root, else under /)
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Print what would change and change nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args, Debug)]
pub struct ResetArgs {
    /// The state file written by `tune` (default: var/lib/vernier/tune-state.json under --root, else under /)
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct NoiseArgs {
    /// The CPUs to measure, all at once (default: every CPU this process may use)
    #[arg(long, alias = "cpus", value_name = "LIST")]
    pub cpu: Option<CpuSet>,
    /// Seconds to measure
    #[arg(
        long,
        default_value_t = 2.0,
        value_name = "S",
        allow_negative_numbers = true
    )]
    pub duration: f64,
    /// Gap in nanoseconds above which the thread counts as interrupted (default: 10× the
    /// median read-to-read gap, at least 1000)
    #[arg(long, value_name = "NS")]
    pub threshold_ns: Option<u64>,
    /// Print the measurement as JSON
    #[arg(long)]
    pub json: bool,
}

/// Run `vernier system …`; returns the exit code.
pub fn system_command(args: SystemArgs) -> Result<i32> {
    let root = SysRoot::from_option(args.root.as_deref());
    match args.command {
        SystemCommand::Show(a) => show(&root, a),
        SystemCommand::Tune(a) => tune_cmd(&root, a),
        SystemCommand::Reset(a) => reset_cmd(&root, a),
        SystemCommand::Noise(a) => noise_cmd(a),
    }
}

fn show(root: &SysRoot, a: ShowArgs) -> Result<i32> {
    let audit = audit::audit(root, a.cpus.as_ref());
    if a.json {
        let mut v = serde_json::to_value(&audit)?;
        v["schema"] = 1.into();
        v["tuned"] = audit.tuned().into();
        v["failing"] = serde_json::to_value(audit.failing())?;
        v["summary"] = audit::summary_json(root, &audit);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", audit::render_table(&audit));
    }
    Ok(if audit.tuned() { 0 } else { EXIT_UNTUNED })
}

fn describe_op(id: &str) -> &'static str {
    tune::operations()
        .into_iter()
        .find(|o| o.id() == id)
        .map(|o| o.describe())
        .unwrap_or("")
}

fn print_ops(ops: &[tune::OpState], verb: &str) {
    for op in ops {
        if op.is_empty() && op.notes.is_empty() {
            continue;
        }
        println!("{:<21} {}", op.op, describe_op(&op.op));
        for ch in &op.changes {
            let status = if ch.skipped.is_some() {
                " (skipped)"
            } else {
                ""
            };
            println!(
                "    {verb} {}: {} -> {}{status}",
                ch.path,
                ch.original.trim(),
                ch.target
            );
        }
        if let Some(s) = &op.service {
            println!("    systemctl stop {}", s.name);
        }
        for n in &op.notes {
            println!("    note: {n}");
        }
    }
}

fn tune_cmd(root: &SysRoot, a: TuneArgs) -> Result<i32> {
    let audit = audit::audit(root, a.cpus.as_ref());
    let bench = CpuSet::parse_list(&audit.benchmark_cpus).unwrap_or_default();
    if bench.is_empty() {
        bail!("no benchmark CPU: pass --cpus LIST");
    }
    let report = tune::tune(root, &bench, a.state.as_deref(), a.dry_run)?;
    println!("benchmark CPUs: {bench} ({})", audit.benchmark_cpus_reason);
    let changed = report.state.ops.iter().any(|o| !o.is_empty());
    if report.dry_run {
        println!("dry run: nothing changed; `vernier system tune` would:");
        print_ops(&report.state.ops, "write");
    } else if changed {
        print_ops(&report.state.ops, "wrote");
        println!(
            "previous settings saved in {}; `vernier system reset` restores them",
            report.state_path.display()
        );
    } else {
        print_ops(&report.state.ops, "write");
        println!("nothing to change at run time");
    }
    if let Some(b) = &audit.boot_parameters {
        println!(
            "boot-time settings are not changed at run time; for full isolation add\n    {b}\nto the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, `sudo update-grub`, reboot)"
        );
    }
    Ok(0)
}

fn reset_cmd(root: &SysRoot, a: ResetArgs) -> Result<i32> {
    let report = tune::reset(root, a.state.as_deref())?;
    match report.state {
        None => println!(
            "nothing to reset: no state file at {}",
            report.state_path.display()
        ),
        Some(state) => {
            for op in state.ops.iter().rev() {
                for ch in op.changes.iter().rev().filter(|c| c.skipped.is_none()) {
                    println!("restored {}: {}", ch.path, ch.original.trim());
                }
                if let Some(s) = &op.service {
                    println!("started {}", s.name);
                }
            }
            println!(
                "settings from before `tune` restored; removed {}",
                report.state_path.display()
            );
        }
    }
    Ok(0)
}

fn noise_cmd(a: NoiseArgs) -> Result<i32> {
    if !(a.duration.is_finite() && a.duration > 0.0) {
        bail!("--duration must be a positive number of seconds");
    }
    let cpus: Vec<usize> = match a.cpu {
        Some(set) => set.iter().collect(),
        None => affinity::allowed_cpus().iter().collect(),
    };
    let cfg = noise::NoiseConfig {
        cpus,
        duration_ns: (a.duration * 1e9) as u64,
        threshold_ns: a.threshold_ns,
    };
    let mut report = noise::measure(&cfg)?;
    let known =
        vernier::ledger::Ledger::load(&vernier::machine::Machine::detect()).known_wide_ratio();
    for &cpu in &cfg.cpus {
        let t = std::thread::spawn(move || share::measure(cpu, share::SHARE_NS, known));
        let one = t
            .join()
            .map_err(|_| anyhow::anyhow!("the probe thread on CPU {cpu} panicked"))??;
        report.core_share.push(one);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", noise::render(&report));
        print!("{}", share::render(&report.core_share));
    }
    Ok(0)
}
