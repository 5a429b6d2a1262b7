//! `compare --profile`: after the timed verdicts, both programs' benchmarks profiled under
//! callgrind (`crate::runner::profile`), and per benchmark the functions whose own
//! instructions per iteration changed most between OLD and NEW; under a `slower` verdict, the
//! function that grew most is named. With `--sampled`, both sides are sampled with perf
//! instead (`crate::runner::sampled`), and each function's own time per iteration is compared,
//! with its sampling error. With `--html`, a differential flame graph per benchmark joins the
//! comparison's report.

use super::CompareArgs;
use crate::files::profile::{BenchProfile, ProfileFile};
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
    let (old_env, new_env) = (
        super::parse_env(&a.old_env, "--old-env")?,
        super::parse_env(&a.new_env, "--new-env")?,
    );
    if a.sampled {
        let (event, why) = crate::runner::sampled::event();
        println!(
            "\nprofiles (sampled with perf, {} s per benchmark and side, event {event} ({why}), \
             the measured loop only; each function's own time per iteration: its share of the \
             samples × its side's median, ± its 95 % sampling error):",
            a.sample_time
        );
        let sample = |p: &Path, args: &[OsString], env: &[(OsString, OsString)]| {
            crate::runner::sampled::sample_program(
                p,
                args,
                env,
                timeout,
                filter.as_ref(),
                a.sample_time,
                &mut |_, _| {},
            )
        };
        let po = sample(old, &a.old_arg, &old_env)?;
        let pn = sample(new, &a.new_arg, &new_env)?;
        print!("{}", render_sampled(file, &po, &pn));
        return write_html(a, file, &po, &pn);
    }
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
    let po = profile(old, &a.old_arg, &old_env)?;
    let pn = profile(new, &a.new_arg, &new_env)?;
    print!("{}", render(file, &po, &pn));
    write_html(a, file, &po, &pn)
}

fn write_html(
    a: &CompareArgs,
    file: &ComparisonFile,
    po: &ProfileFile,
    pn: &ProfileFile,
) -> Result<()> {
    if let Some(path) = &a.html {
        // The comparison's report was written before the profiles: say what changed.
        match crate::html::write_comparison_profiled(path, file, po, pn) {
            Ok(()) => println!("the profiles added to the HTML report {}", path.display()),
            Err(e) => {
                crate::html::write_or_warn(path, Err(e), a.json.as_deref());
            }
        }
    }
    Ok(())
}

/// Per benchmark of two sampled profiles, the functions whose own time per iteration changed
/// most, each with its 95 % sampling error; under a `slower` verdict, the one that grew most
/// beyond its error, or that none did.
pub(super) fn render_sampled(file: &ComparisonFile, po: &ProfileFile, pn: &ProfileFile) -> String {
    use std::fmt::Write as _;
    use vernier::units::format_ns;
    let mut s = String::new();
    for c in &file.comparisons {
        let Some((o, n)) = both(&c.name, po, pn, &mut s) else {
            continue;
        };
        let _ = writeln!(
            s,
            "  {}: {} → {} per iteration ({} and {} samples)",
            c.name,
            format_ns(c.old_median_ns),
            format_ns(c.new_median_ns),
            o.samples.unwrap_or(0),
            n.samples.unwrap_or(0)
        );
        let d =
            crate::files::profile::sampled_differential(&o, &n, c.old_median_ns, c.new_median_ns);
        for x in d.iter().take(SHOWN) {
            let _ = writeln!(
                s,
                "    {:>10} ±{:<9} {:>10} → {:<10} {}",
                vernier::report::signed(x.change(), format_ns(x.change())),
                format_ns(x.half_width()),
                format_ns(x.before_ns),
                format_ns(x.after_ns),
                crate::files::profile::brief(&x.name)
            );
        }
        if c.verdict == Verdict::Slower {
            let grew = d
                .iter()
                .filter(|x| x.change() > 0.0 && x.beyond_error())
                .max_by(|a, b| a.change().total_cmp(&b.change()));
            if let Some(x) = grew {
                let _ = writeln!(
                    s,
                    "  {} is slower: {} grew most ({} ±{} per iteration, {} → {})",
                    c.name,
                    crate::files::profile::brief(&x.name),
                    vernier::report::signed(x.change(), format_ns(x.change())),
                    format_ns(x.half_width()),
                    format_ns(x.before_ns),
                    format_ns(x.after_ns)
                );
            } else {
                let _ = writeln!(
                    s,
                    "  {} is slower, and no function's time grew beyond its sampling error: \
                     sample longer (--sample-time) or count instructions (--profile without \
                     --sampled)",
                    c.name
                );
            }
        }
    }
    s
}

/// Benchmark `name` in both profiles, or `None` when a side lacks it or could not profile it
/// (then a line says why).
fn both(
    name: &str,
    po: &ProfileFile,
    pn: &ProfileFile,
    s: &mut String,
) -> Option<(BenchProfile, BenchProfile)> {
    use std::fmt::Write as _;
    let find = |p: &ProfileFile| p.benchmarks.iter().find(|b| b.name == name).cloned();
    let (o, n) = (find(po)?, find(pn)?);
    if let Some(e) = o.error.as_ref().or(n.error.as_ref()) {
        let _ = writeln!(s, "  {name}: not profiled: {e}");
        return None;
    }
    Some((o, n))
}

/// Per benchmark, the functions whose own instructions changed most, and the one that grew
/// most under a `slower` verdict.
pub(super) fn render(file: &ComparisonFile, po: &ProfileFile, pn: &ProfileFile) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let ir = po.event("Ir").unwrap_or(0);
    for c in &file.comparisons {
        let Some((o, n)) = both(&c.name, po, pn, &mut s) else {
            continue;
        };
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
