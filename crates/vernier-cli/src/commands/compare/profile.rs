//! `compare --profile`: after the timed verdicts, both programs' benchmarks profiled under
//! callgrind (`crate::runner::profile`), and per benchmark the functions whose own
//! instructions per iteration changed most between OLD and NEW; under a `slower` verdict, the
//! function that grew most is named. With `--html`, a differential flame graph per benchmark
//! joins the comparison's report.

use super::CompareArgs;
use crate::files::profile::ProfileFile;
use anyhow::Result;
use std::ffi::OsString;
use std::path::Path;
use vernier::result::comparison::ComparisonFile;
use vernier::stats::compare::Verdict;

/// Functions listed per benchmark.
const SHOWN: usize = 5;

pub(super) fn profile_pair(
    a: &CompareArgs,
    old: &Path,
    new: &Path,
    file: &ComparisonFile,
) -> Result<()> {
    if file.comparisons.is_empty() || crate::term::interrupted() {
        return Ok(());
    }
    crate::runner::profile::check_symbols(old)?;
    crate::runner::profile::check_symbols(new)?;
    let names: Vec<String> = file.comparisons.iter().map(|c| c.name.clone()).collect();
    let exact = names
        .iter()
        .map(|n| format!("^{}$", regex::escape(n)))
        .collect::<Vec<_>>()
        .join("|");
    let filter = crate::args::Selection::new(Some(regex::Regex::new(&exact)?), None);
    let timeout = a.process.control()?.timeout;
    println!("\nprofiles (counted under callgrind, the measured loop only; per iteration):");
    let profile = |p: &Path, args: &[std::ffi::OsString], env: &[(OsString, OsString)]| {
        crate::runner::profile::profile_program(
            p,
            args,
            env,
            timeout,
            filter.as_ref(),
            &mut |_, _| {},
        )
    };
    let po = profile(
        old,
        &a.old_arg,
        &super::programs::parse_env(&a.old_env, "--old-env")?,
    )?;
    let pn = profile(
        new,
        &a.new_arg,
        &super::programs::parse_env(&a.new_env, "--new-env")?,
    )?;
    print!("{}", render(file, &po, &pn));
    if let Some(path) = &a.html {
        let written = crate::html::write_comparison_profiled(path, file, &po, &pn);
        crate::html::write_or_warn(path, written, a.json.as_deref());
    }
    Ok(())
}

/// Per benchmark, the functions whose own instructions changed most, and the one that grew
/// most under a `slower` verdict.
pub(super) fn render(file: &ComparisonFile, po: &ProfileFile, pn: &ProfileFile) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let ir = po.event("Ir").unwrap_or(0);
    for c in &file.comparisons {
        let find = |p: &ProfileFile| p.benchmarks.iter().find(|b| b.name == c.name).cloned();
        let (Some(o), Some(n)) = (find(po), find(pn)) else {
            continue;
        };
        if let Some(e) = o.error.as_ref().or(n.error.as_ref()) {
            let _ = writeln!(s, "  {}: not profiled: {e}", c.name);
            continue;
        }
        let (ti, tn) = (
            o.instructions_per_iter.unwrap_or(0.0),
            n.instructions_per_iter.unwrap_or(0.0),
        );
        let _ = writeln!(
            s,
            "  {}: {} → {} instructions/iter",
            c.name,
            vernier::report::format_count(ti),
            vernier::report::format_count(tn)
        );
        let d = crate::runner::profile::differential(&o, &n, ir);
        if d.is_empty() {
            let _ = writeln!(s, "    no function's own instructions changed");
        }
        let mut by_size = d.clone();
        by_size.sort_by(|x, y| (y.2 - y.1).abs().total_cmp(&(x.2 - x.1).abs()));
        for (name, before, after) in by_size.iter().take(SHOWN) {
            let _ = writeln!(
                s,
                "    {:>+10.2}  {:>10.2} → {:<10.2} {}",
                after - before,
                before,
                after,
                crate::files::profile::brief(name)
            );
        }
        if c.verdict == Verdict::Slower {
            if let Some((name, before, after)) = d.first().filter(|(_, b, a)| a > b) {
                let _ = writeln!(
                    s,
                    "  {} is slower: {} grew most (+{:.2} instructions/iter, {:.2} → {:.2})",
                    c.name,
                    crate::files::profile::brief(name),
                    after - before,
                    before,
                    after
                );
            } else {
                let _ = writeln!(
                    s,
                    "  {} is slower, and no function runs more instructions: look at its cache \
                     misses (vernier profile --json) or at timing alone (layout, frequency)",
                    c.name
                );
            }
        }
    }
    s
}
