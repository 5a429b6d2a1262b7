//! `vernier compare OLD.json NEW.json`: two result files, compared offline (unpaired) from
//! each file's own interval (`vernier::unpaired`).

use super::{check_names, common, finish, match_names, warn_one_sided, write, CompareArgs};
use anyhow::{bail, Result};
use vernier::result::comparison::{ComparisonFile, Failure};
use vernier::result::ResultFile;
use vernier::stats::compare::Mode;

fn kind(mode: &str) -> String {
    match mode {
        "time" => "times".into(),
        "instructions" => "instruction counts".into(),
        m => format!("'{m}' figures"),
    }
}

pub(super) fn compare_files(
    a: &CompareArgs,
    old: &ResultFile,
    new: &ResultFile,
    threshold: f64,
) -> Result<i32> {
    let filter = common(a).filter()?;
    let names = |f: &ResultFile| {
        f.benchmarks
            .iter()
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    };
    if old.mode != new.mode {
        bail!(
            "OLD holds {} and NEW {}: a comparison needs files of the same kind (both \
             `vernier run --json`, or both `vernier run --instructions --json`)",
            kind(&old.mode),
            kind(&new.mode)
        );
    }
    let (on, nn) = (names(old), names(new));
    let (selected, only_old, only_new) = match_names(&on, &nn, filter.as_ref());
    check_names(&selected, &on, &nn, filter.is_some())?;
    let mut file = ComparisonFile::new(Mode::Unpaired, threshold);
    file.old = a.old.display().to_string();
    file.new = a.new_path().display().to_string();
    file.only_old = only_old;
    file.only_new = only_new;
    warn_one_sided(&file);
    if old.machine.cpu_model != new.machine.cpu_model {
        eprintln!(
            "vernier: warning: the files come from different CPUs ({} vs {}): the ratios compare \
             machines as much as code",
            old.machine.cpu_model, new.machine.cpu_model
        );
    }
    for name in &selected {
        let o = old.benchmarks.iter().find(|b| &b.name == name).unwrap();
        let n = new.benchmarks.iter().find(|b| &b.name == name).unwrap();
        match vernier::unpaired::compare((old, o), (new, n)) {
            Ok(mut c) => {
                c.memory = crate::runner::memory::change(o.memory.as_ref(), n.memory.as_ref());
                c.set_throughput(n.throughput, [o.removed(), n.removed()]);
                file.comparisons.push(c)
            }
            Err(error) => file.failed.push(Failure {
                name: name.clone(),
                error,
            }),
        }
    }
    file.finalize();
    write(&file, a.json.as_ref())?;
    finish(a, &file)
}

/// NEW, a result file this comparison was given, kept in the history when `--save` asks: first
/// re-derived from its raw samples with this version's rules, as `history save` stores a file
/// (the comparison itself re-derived it too), and said so.
pub(super) fn save_new(a: &CompareArgs, new: &ResultFile) -> Result<()> {
    if !a.save.save {
        return Ok(());
    }
    let again = crate::runner::rederive::rederive_file(new).map_err(|e| {
        anyhow::anyhow!(
            "NEW was compared but not saved: {e:#}, so this version's rules cannot be applied to \
             it (`vernier history save NEW --as-recorded` keeps the figures it recorded; or run \
             the benchmark again)"
        )
    })?;
    eprintln!(
        "vernier: {}",
        crate::runner::rederive::rederived_line(1, new.benchmarks.len(), again.changed)
    );
    crate::history::save_if_asked(&a.save, &again.file, "compare", a.pick.shard)
}
