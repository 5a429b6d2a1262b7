//! `vernier system tune` and `vernier system reset`: change what can change at run time,
//! remember exactly what was there before, and put it back.
//!
//! Each operation is one type implementing [`Tuning`]. They run in [`operations`] order
//! (see `docs/system.md` for why this order), and roll back in the reverse order. The whole
//! previous state is written to the state file before the first change; a failure half-way
//! rolls back what was already done and removes the state file.

mod ops;

use ops::{
    Boost, FixedFrequency, Governor, IrqAffinity, IrqDefaultAffinity, Irqbalance, PerfSampling,
    Sysctl, TransparentHugepages,
};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::host::audit::THP_ENABLED;
use crate::host::machine;
use crate::host::root::{selected_word, SysRoot};
use crate::host::CpuSet;

/// Where the state file lives under the root unless `--state` says otherwise.
pub const DEFAULT_STATE: &str = "/var/lib/vernier/tune-state.json";

/// Version of the state file layout.
pub const STATE_SCHEMA: u32 = 1;

/// One file the tuning writes: its bytes before, and the value written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileChange {
    /// The kernel path (`/proc/sys/kernel/nmi_watchdog`), relative to the root.
    pub path: String,
    /// The exact content before tuning; restored verbatim.
    pub original: String,
    /// The value written.
    pub target: String,
    /// A selector file (`always [madvise] never`): written as a bare word.
    #[serde(default)]
    pub selector: bool,
    /// Written by `tune` (so `reset` restores it).
    #[serde(default)]
    pub applied: bool,
    /// Why the kernel refused the change, when it did and that is expected (some IRQs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// A system service stopped by `tune` and started again by `reset`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServiceChange {
    pub name: String,
    #[serde(default)]
    pub applied: bool,
}

/// What one operation planned and did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpState {
    pub op: String,
    #[serde(default)]
    pub changes: Vec<FileChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceChange>,
    /// Things the user should know (skipped IRQs, services left alone on a fake root).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl OpState {
    fn new(op: &str) -> OpState {
        OpState {
            op: op.to_string(),
            changes: Vec::new(),
            service: None,
            notes: Vec::new(),
        }
    }
    fn change(&mut self, path: &str, original: String, target: &str) {
        self.changes.push(FileChange {
            path: path.to_string(),
            original,
            target: target.to_string(),
            selector: false,
            applied: false,
            skipped: None,
        });
    }
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.service.is_none()
    }
}

/// The state file: everything `reset` needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TuneState {
    pub schema: u32,
    pub root: String,
    pub benchmark_cpus: String,
    pub created_unix_s: u64,
    pub ops: Vec<OpState>,
}

/// What the operations need to know about the machine.
pub struct TuneContext {
    pub online: CpuSet,
    pub bench: CpuSet,
    /// Online CPUs that are not benchmark CPUs: where IRQs go.
    pub housekeeping: CpuSet,
}

/// One tuning operation. `plan` only reads; `apply` writes in order and marks what it
/// did; `rollback` undoes exactly what was marked, in reverse order.
pub trait Tuning {
    /// Stable name, as in the state file.
    fn id(&self) -> &'static str;
    /// One line: what it changes and why.
    fn describe(&self) -> &'static str;
    /// Read the current state and decide the changes (empty when already good).
    fn plan(&self, root: &SysRoot, ctx: &TuneContext) -> OpState;
    /// Make the planned changes, in order, marking each one applied.
    fn apply(&self, root: &SysRoot, state: &mut OpState) -> Result<()> {
        apply_files(root, state, false)
    }
    /// Undo the applied changes, last first.
    fn rollback(&self, root: &SysRoot, state: &mut OpState) -> Result<()> {
        rollback_files(root, state)
    }
}

fn apply_files(root: &SysRoot, state: &mut OpState, tolerate_refusal: bool) -> Result<()> {
    for ch in state.changes.iter_mut() {
        let res = if ch.selector {
            root.write_selector(&ch.path, &ch.target)
        } else {
            root.write(&ch.path, &ch.target)
        };
        match res {
            Ok(()) => ch.applied = true,
            Err(e) if tolerate_refusal && e.is_refused_value() => {
                ch.skipped = Some(format!("kernel refused: {}", e.source));
            }
            Err(e) => return Err(e).with_context(|| format!("{}: cannot apply", state.op)),
        }
    }
    Ok(())
}

fn rollback_files(root: &SysRoot, state: &mut OpState) -> Result<()> {
    let mut first_err = None;
    for ch in state.changes.iter_mut().rev().filter(|c| c.applied) {
        let res = if ch.selector {
            match selected_word(&ch.original) {
                Some(w) => root.write_selector(&ch.path, &w),
                None => root.write(&ch.path, &ch.original),
            }
        } else {
            root.write(&ch.path, &ch.original)
        };
        match res {
            Ok(()) => ch.applied = false,
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(anyhow::Error::new(e));
                }
            }
        }
    }
    match first_err {
        Some(e) => Err(e.context(format!("{}: cannot restore", state.op))),
        None => Ok(()),
    }
}

/// Every operation, in the order they are applied (reset runs them backwards).
pub fn operations() -> Vec<Box<dyn Tuning>> {
    vec![
        Box::new(Governor),
        Box::new(Boost),
        Box::new(FixedFrequency),
        Box::new(Irqbalance),
        Box::new(IrqDefaultAffinity),
        Box::new(IrqAffinity),
        Box::new(PerfSampling),
        Box::new(Sysctl {
            id: "nmi-watchdog",
            describe: "kernel.nmi_watchdog=0",
            path: "/proc/sys/kernel/nmi_watchdog",
            target: "0",
            only_if_above: false,
        }),
        Box::new(TransparentHugepages),
        Box::new(Sysctl {
            id: "perf-event-paranoid",
            describe:
                "kernel.perf_event_paranoid lowered to 2 when above (own user-space counters)",
            path: "/proc/sys/kernel/perf_event_paranoid",
            target: "2",
            only_if_above: true,
        }),
        Box::new(Sysctl {
            id: "aslr",
            describe: "kernel.randomize_va_space=2 (full ASLR; Vernier varies layouts on purpose)",
            path: "/proc/sys/kernel/randomize_va_space",
            target: "2",
            only_if_above: false,
        }),
    ]
}

fn op_by_id(id: &str) -> Option<Box<dyn Tuning>> {
    operations().into_iter().find(|o| o.id() == id)
}

/// Resolve the state file path: `--state` as given, else [`DEFAULT_STATE`] under the root.
pub fn state_path(root: &SysRoot, explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.path(DEFAULT_STATE))
}

fn write_state(path: &Path, state: &TuneState) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(state)? + "\n";
    vernier::result::write_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Remove the state file, and its directory when it is the default one and now empty.
fn remove_state(_root: &SysRoot, path: &Path, explicit: Option<&Path>) -> std::io::Result<()> {
    std::fs::remove_file(path)?;
    if explicit.is_none() {
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    Ok(())
}

fn is_root_user() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The outcome of `tune`, for printing.
pub struct TuneReport {
    pub state_path: PathBuf,
    pub state: TuneState,
    pub dry_run: bool,
}

/// Plan every operation against `root` for benchmark CPUs `bench`.
pub fn plan(root: &SysRoot, bench: &CpuSet) -> Vec<OpState> {
    let online = machine::online_cpus(root);
    let ctx = TuneContext {
        housekeeping: online.difference(bench),
        online,
        bench: bench.clone(),
    };
    operations()
        .iter()
        .map(|op| op.plan(root, &ctx))
        .filter(|s| !s.is_empty() || !s.notes.is_empty())
        .collect()
}

fn privileged_refusal(verb: &str, ops: &[OpState]) -> anyhow::Error {
    let mut paths: Vec<String> = ops
        .iter()
        .flat_map(|o| o.changes.iter().map(|c| c.path.clone()))
        .collect();
    paths.dedup();
    let services: Vec<String> = ops
        .iter()
        .filter_map(|o| {
            o.service
                .as_ref()
                .map(|s| format!("systemctl {verb} {}", s.name))
        })
        .collect();
    let mut what = String::new();
    for p in paths.iter().take(12) {
        what.push_str(&format!("\n  write {p}"));
    }
    if paths.len() > 12 {
        what.push_str(&format!("\n  … and {} more files", paths.len() - 12));
    }
    for s in services {
        what.push_str(&format!("\n  {s}"));
    }
    if what.is_empty() {
        what.push_str(" change nothing right now");
    }
    anyhow::anyhow!(
        "`vernier system {verb}` needs root privileges to change the running kernel's settings; run it with sudo. It would:{what}"
    )
}

/// Apply every operation; on failure roll back what was done. Nothing changes before the
/// state file is written.
pub fn tune(
    root: &SysRoot,
    bench: &CpuSet,
    state_file: Option<&Path>,
    dry_run: bool,
) -> Result<TuneReport> {
    let path = state_path(root, state_file);
    let mut ops = plan(root, bench);
    let state = TuneState {
        schema: STATE_SCHEMA,
        root: root.dir().display().to_string(),
        benchmark_cpus: bench.to_string(),
        created_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        ops: Vec::new(),
    };
    if dry_run {
        return Ok(TuneReport {
            state_path: path,
            state: TuneState { ops, ..state },
            dry_run: true,
        });
    }
    if root.is_real() && !is_root_user() {
        return Err(privileged_refusal("tune", &ops));
    }
    if path.exists() {
        bail!(
            "already tuned: {} holds the state from before; run `vernier system reset` first (tuning twice would lose the original settings)",
            path.display()
        );
    }
    let has_changes = ops.iter().any(|o| !o.is_empty());
    let mut state = TuneState {
        ops: ops.clone(),
        ..state
    };
    if !has_changes {
        return Ok(TuneReport {
            state_path: path,
            state,
            dry_run: false,
        });
    }
    write_state(&path, &state).context("cannot save the current settings; nothing was changed")?;

    let all = operations();
    for i in 0..ops.len() {
        let op = all.iter().find(|o| o.id() == ops[i].op).expect("known op");
        if let Err(e) = op.apply(root, &mut ops[i]) {
            let mut rollback_errors = Vec::new();
            for j in (0..=i).rev() {
                let op = all.iter().find(|o| o.id() == ops[j].op).expect("known op");
                if let Err(re) = op.rollback(root, &mut ops[j]) {
                    rollback_errors.push(format!("{re:#}"));
                }
            }
            if rollback_errors.is_empty() {
                let _ = remove_state(root, &path, state_file);
                return Err(e.context("tuning failed; everything already changed was rolled back"));
            }
            state.ops = ops;
            let _ = write_state(&path, &state);
            return Err(e.context(format!(
                "tuning failed and the rollback failed too ({}); the state is kept in {}, retry with `vernier system reset`",
                rollback_errors.join("; "),
                path.display()
            )));
        }
    }
    state.ops = ops;
    write_state(&path, &state)?;
    Ok(TuneReport {
        state_path: path,
        state,
        dry_run: false,
    })
}

/// The outcome of `reset`.
pub struct ResetReport {
    pub state_path: PathBuf,
    /// `None` when there was no state file (nothing to reset).
    pub state: Option<TuneState>,
}

/// Restore everything the state file says `tune` changed, last change first.
pub fn reset(root: &SysRoot, state_file: Option<&Path>) -> Result<ResetReport> {
    let path = state_path(root, state_file);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ResetReport {
                state_path: path,
                state: None,
            })
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut state: TuneState = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a vernier tune state file", path.display()))?;
    if state.schema != STATE_SCHEMA {
        bail!(
            "{} has state schema {}, this vernier reads {STATE_SCHEMA}",
            path.display(),
            state.schema
        );
    }
    if root.is_real() && !is_root_user() {
        return Err(privileged_refusal("reset", &state.ops));
    }
    // A tune that was killed half-way left its changes marked unapplied; restoring an
    // untouched file writes back the value it already has, so restore every change the
    // kernel did not refuse.
    for op_state in state.ops.iter_mut() {
        for ch in op_state.changes.iter_mut() {
            ch.applied = ch.skipped.is_none();
        }
        if let Some(svc) = op_state.service.as_mut() {
            svc.applied = true;
        }
    }
    let mut errors = Vec::new();
    for op_state in state.ops.iter_mut().rev() {
        let Some(op) = op_by_id(&op_state.op) else {
            errors.push(format!(
                "unknown operation {:?} in the state file",
                op_state.op
            ));
            continue;
        };
        if let Err(e) = op.rollback(root, op_state) {
            errors.push(format!("{e:#}"));
        }
    }
    if !errors.is_empty() {
        let _ = write_state(&path, &state);
        bail!(
            "reset incomplete: {}; what is left is kept in {}",
            errors.join("; "),
            path.display()
        );
    }
    remove_state(root, &path, state_file)
        .with_context(|| format!("cannot remove {}", path.display()))?;
    Ok(ResetReport {
        state_path: path,
        state: Some(state),
    })
}
