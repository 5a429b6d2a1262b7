//! `vernier compare --baseline COMMIT|BRANCH NEW`: NEW against a run kept in the history.
//!
//! NEW is a result file, or a benchmark executable measured here exactly as `vernier run`
//! measures it (this program runs itself as `vernier run --json`). The baseline is the newest
//! stored run at that commit (a prefix of its id) or on that branch, of this machine when there
//! is one. The two runs were measured at different times, so the comparison is unpaired (each
//! side's own interval, as for two result files) and says so; a baseline from another machine
//! is used only with a warning.

use super::CompareArgs;
use crate::history::store::{self, Location};
use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use vernier::result::ResultFile;

pub fn compare_baseline(a: &CompareArgs, reference: &str, threshold: f64) -> Result<i32> {
    if a.new.is_some() {
        bail!(
            "--baseline {reference} compares one program or result file (NEW) against the \
             store: give only NEW, not OLD and NEW"
        );
    }
    let loc = Location::resolve(a.save.db.as_deref())?;
    if let Location::Sqlite(p) = &loc {
        if !p.exists() {
            bail!(
                "no history store at {}: save a baseline first (vernier run --save …), or name \
                 the store with --db or {}",
                p.display(),
                store::DB_ENV
            );
        }
    }
    // Look the baseline up before measuring: a wrong reference costs nothing.
    let runs = crate::history::open_store(&loc)?.runs_at(reference)?;
    if runs.is_empty() {
        bail!(
            "no stored run at commit or branch '{reference}' in {}: save one there with `vernier \
             run --save` (or --commit {reference}), or see what is stored with `vernier history`",
            loc.describe()
        );
    }
    let (new, given_file) = new_result(a)?;
    let here = crate::history::machine_row(&new).id;
    let chosen = match runs.iter().find(|r| r.machine_id == here) {
        Some(r) => r,
        None => {
            let r = &runs[0];
            eprintln!(
                "vernier: warning: no run at '{reference}' from this machine ({here}); comparing \
                 with machine {}'s: the ratios compare machines as much as code",
                r.machine_id
            );
            r
        }
    };
    let old = vernier::result::parse(
        chosen.result.as_bytes(),
        &format!("stored run {}", chosen.run_id),
    )
    .map_err(|e| anyhow::anyhow!("the stored baseline cannot be read: {e}"))?;
    let label = format!(
        "baseline {reference} (commit {} on {}, run {}, {})",
        chosen
            .commit
            .as_deref()
            .map(crate::history::short)
            .unwrap_or("none"),
        chosen.branch.as_deref().unwrap_or("no branch"),
        chosen.run_id,
        chosen.time
    );
    println!("Against {label}: unpaired (measured at different times; each side's own interval).");
    let mut args = a.clone();
    args.old = PathBuf::from(&label);
    args.new = Some(a.old.clone());
    let code = super::files::compare_files(&args, &old, &new, threshold)?;
    if given_file {
        super::files::save_new(a, &new)?;
    } else {
        // Measured just now by this version: its figures are today's already.
        crate::history::save_if_asked(&a.save, &new, "compare", a.pick.shard)?;
    }
    Ok(code)
}

/// NEW's result: read from a result file (`true`), or measured by `vernier run` (`false`).
fn new_result(a: &CompareArgs) -> Result<(ResultFile, bool)> {
    let path = &a.old;
    if looks_like_json(path) {
        let file = ResultFile::load(path).map_err(|e| anyhow::anyhow!("NEW: {e}"))?;
        return Ok((file, true));
    }
    let (exe, args) = crate::args::self_command()?;
    let dir = crate::scratch::dir("vernier-baseline-")?;
    let tmp = dir.path().join("new.json");
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .arg("run")
        .arg("--json")
        .arg(&tmp)
        .arg("--counters")
        .arg("none");
    if let Some(f) = &a.pick.filter {
        cmd.arg("--filter").arg(f);
    }
    if let Some(s) = &a.pick.shard {
        cmd.arg("--shard").arg(s.to_string());
    }
    if let Some(t) = a.time {
        cmd.arg(format!("--time={t}"));
    }
    if a.quick {
        cmd.arg("--quick");
    }
    if let Some(c) = &a.process.cpu {
        cmd.arg("--cpu").arg(c);
    }
    if a.process.fifo {
        cmd.arg("--fifo");
    }
    if a.process.no_aslr {
        cmd.arg("--no-aslr");
    }
    cmd.arg("--").arg(path).args(&a.new_arg);
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", path.display()))?;
    let loaded = ResultFile::load(&tmp);
    drop(dir);
    if !status.success() {
        bail!(
            "measuring NEW ({}) failed (vernier run exited with {status})",
            path.display()
        );
    }
    let file = loaded.map_err(|e| anyhow::anyhow!("NEW: {e}"))?;
    Ok((file, false))
}

fn looks_like_json(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}
