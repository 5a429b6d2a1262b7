//! `vernier compare --instructions OLD NEW`: the gate with no noise. Each side's benchmarks are
//! counted under callgrind (`crate::runner::counted`), as `vernier run --instructions` counts
//! them; a count per iteration repeats exactly from run to run, so the verdict is the
//! difference against a threshold in instructions per iteration, with no interval and no test:
//! one instruction more per iteration is `slower`, identical builds are `no-change` every time.

use super::{check_names, match_names, CompareArgs};
use crate::runner::counted::{compared, count_program, counts_table};
use crate::term;
use anyhow::Result;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;
use vernier::result::comparison::{ComparisonFile, Failure};
use vernier::result::{BenchmarkResult, ResultFile};
use vernier::stats::compare::Mode;

/// A benchmark's instructions per iteration in a counted run (`None`: failed or not counted).
fn per_iter(b: &BenchmarkResult) -> Option<f64> {
    b.instructions_per_iter()
}

/// Count one side, its rows not printed (the comparison's table is).
fn count_side(
    which: &str,
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    timeout: Duration,
) -> Result<ResultFile> {
    let counted = count_program(program, args, env, timeout, None, None, &mut |_| {})
        .map_err(|e| anyhow::anyhow!("{which} ({}): {e:#}", program.display()))?;
    Ok(counted.file)
}

pub(super) fn compare_instructions(
    a: &CompareArgs,
    old: &Path,
    new: &Path,
    threshold: f64,
) -> Result<i32> {
    let threshold = crate::args::instruction_threshold(threshold, "iteration")?;
    let filter = super::common(a).filter()?;
    let timeout = a.process.control()?.timeout;
    term::install_ctrlc();
    let env = |list: &[String], flag: &str| super::parse_env(list, flag);
    let old_file = count_side(
        "OLD",
        old,
        &a.old_arg,
        &env(&a.old_env, "--old-env")?,
        timeout,
    )?;
    let new_file = count_side(
        "NEW",
        new,
        &a.new_arg,
        &env(&a.new_env, "--new-env")?,
        timeout,
    )?;
    let names = |f: &ResultFile| {
        f.benchmarks
            .iter()
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    };
    let (old_names, new_names) = (names(&old_file), names(&new_file));
    let (selected, only_old, only_new) = match_names(&old_names, &new_names, filter.as_ref());
    check_names(&selected, &old_names, &new_names, filter.is_some())?;
    let mut file = ComparisonFile::new(Mode::Instructions, threshold);
    file.old = old.display().to_string();
    file.new = new.display().to_string();
    file.only_old = only_old;
    file.only_new = only_new;
    let find = |f: &ResultFile, n: &str| f.benchmarks.iter().find(|b| b.name == n).cloned();
    for name in &selected {
        let (o, n) = (find(&old_file, name), find(&new_file, name));
        match (o.as_ref().and_then(per_iter), n.as_ref().and_then(per_iter)) {
            (Some(o), Some(n)) => file.comparisons.push(compared(name, o, n, threshold)),
            _ => {
                let why = [("OLD", &o), ("NEW", &n)]
                    .iter()
                    .filter_map(|(side, b)| {
                        let b = b.as_ref()?;
                        (per_iter(b).is_none()).then(|| {
                            format!(
                                "{side}: {}",
                                b.error.clone().unwrap_or_else(|| "not counted".into())
                            )
                        })
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                file.failed.push(Failure {
                    name: name.clone(),
                    error: why,
                });
            }
        }
    }
    print!("{}", table(&file));
    super::write(&file, a.json.as_ref())?;
    super::conclude(a, &file)
}

/// The comparison's table: each benchmark's instructions per iteration on both sides, the
/// difference and the verdict, then the failures.
pub fn table(file: &ComparisonFile) -> String {
    counts_table(
        file,
        "instr/iter",
        &format!(
            "instructions per iteration counted under callgrind (the empty loop's taken off); \
             exact and repeatable, so the verdict is the difference against ±{} instructions \
             per iteration, with no interval",
            file.threshold
        ),
    )
}
