//! `vernier profile [--filter R] -- PROGRAM [ARGS]`: where each benchmark's measured loop
//! spends its instructions, function by function, counted under callgrind
//! (`crate::runner::profile`): the top functions in the terminal, the whole profile with
//! `--json`, and a flame graph per benchmark with `--html`. See docs/profile.md.

use crate::files::profile::{BenchProfile, ProfileFile};
use crate::term;
use anyhow::Result;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Args, Clone, Debug)]
pub struct ProfileArgs {
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Sample each benchmark's loop with perf instead of counting it under callgrind: shares
    /// of time (hardware cycles where the machine has a PMU, the software clock where not).
    #[arg(long)]
    pub sampled: bool,
    /// With --sampled: how long each benchmark is sampled, in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 1.0,
        requires = "sampled"
    )]
    pub time: f64,
    /// Functions shown per benchmark.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub top: usize,
    /// Write the profile (every function, every event, the folded stacks) as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HTML report with each benchmark's flame graph.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Longest wait for the worker's reply, natively, in seconds (under valgrind it is
    /// multiplied by 50).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::runner::worker::DEFAULT_TIMEOUT_S)]
    pub timeout: f64,
    /// The benchmark executable and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]")]
    pub program: Vec<OsString>,
}

pub fn profile_command(a: &ProfileArgs) -> Result<i32> {
    if !(a.timeout > 0.0 && a.timeout.is_finite()) {
        anyhow::bail!(
            "--timeout {}: expected a positive number of seconds",
            a.timeout
        );
    }
    let filter = crate::args::Selection::new(crate::args::parse_filter(a.filter.as_deref())?, None);
    let (program, args) = crate::runner::processes::split_program(&a.program);
    crate::runner::profile::check_symbols(&program)?;
    if !(a.time > 0.0 && a.time.is_finite()) {
        anyhow::bail!("--time {}: expected a positive number of seconds", a.time);
    }
    let timeout = std::time::Duration::from_secs_f64(a.timeout);
    let file = if a.sampled {
        crate::runner::sampled::check()?;
        term::install_ctrlc();
        println!(
            "vernier profile: sampled with perf, {} s per benchmark, the measured loop only; \
             event {}",
            a.time,
            {
                let (e, why) = crate::runner::sampled::event();
                format!("{e} ({why})")
            }
        );
        crate::runner::sampled::sample_program(
            &program,
            &args,
            timeout,
            filter.as_ref(),
            a.time,
            &mut |p, b| print!("{}", render(p, b, a.top)),
        )?
    } else {
        crate::runner::instructions::Callgrind::from_env().check()?;
        term::install_ctrlc();
        println!("vernier profile: counted under callgrind, the measured loop only; per iteration");
        crate::runner::profile::profile_program(
            &program,
            &args,
            timeout,
            filter.as_ref(),
            &mut |p, b| print!("{}", render(p, b, a.top)),
        )?
    };
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&file)?;
        std::fs::write(path, text + "\n")
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        println!("profile written to {}", path.display());
    }
    if let Some(path) = &a.html {
        let written = crate::html::write_profile(path, &file);
        crate::html::write_or_warn(path, written, a.json.as_deref());
    }
    let failed = file.benchmarks.iter().filter(|b| b.error.is_some()).count();
    Ok(if failed > 0 { 1 } else { 0 })
}

/// One benchmark's lines: its totals, then its top functions by own instructions (or own
/// samples).
pub fn render(p: &ProfileFile, b: &BenchProfile, top: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if let Some(e) = &b.error {
        let _ = writeln!(s, "\n{}: not profiled: {e}", b.name);
        return s;
    }
    if let Some(n) = b.samples {
        let _ = writeln!(s, "\n{}: {n} samples in the loop", b.name);
        let _ = writeln!(
            s,
            "  {:>6} {:>7} {:>9}  function",
            "own %", "total %", "samples"
        );
        for f in b.functions.iter().take(top) {
            let pct = |x: f64| 100.0 * x / n.max(1) as f64;
            let _ = writeln!(
                s,
                "  {:>6.1} {:>7.1} {:>9}  {}",
                pct(f.own[0]),
                pct(f.inclusive[0]),
                f.own[0],
                crate::files::profile::brief(&f.name)
            );
        }
        if b.functions.len() > top {
            let _ = writeln!(
                s,
                "  … {} more (--top N, or --json)",
                b.functions.len() - top
            );
        }
        return s;
    }
    let total = b.instructions_per_iter.unwrap_or(0.0);
    let _ = writeln!(
        s,
        "\n{}: {} instructions/iter{}",
        b.name,
        vernier::report::format_count(total),
        b.estimated_cycles_per_iter
            .map(|c| format!(
                ", estimated {} cycles/iter (L1 hits + 5 × LL hits + 35 × RAM)",
                vernier::report::format_count(c)
            ))
            .unwrap_or_default()
    );
    let ev = |f: &[f64], e: &str| p.event(e).and_then(|k| f.get(k).copied());
    let _ = writeln!(
        s,
        "  {:>6} {:>7} {:>12} {:>9} {:>9}  function",
        "own %", "total %", "own instr", "D1 miss", "LL miss"
    );
    for f in b.functions.iter().take(top) {
        let own = ev(&f.own, "Ir").unwrap_or(0.0);
        let inc = ev(&f.inclusive, "Ir").unwrap_or(0.0);
        let pct = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
        let sum = |a: &str, b: &str| Some(ev(&f.own, a)? + ev(&f.own, b)?);
        let miss = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "—".into());
        let _ = writeln!(
            s,
            "  {:>6.1} {:>7.1} {:>12.2} {:>9} {:>9}  {}",
            pct(own),
            pct(inc),
            own,
            miss(sum("D1mr", "D1mw")),
            miss(sum("DLmr", "DLmw")),
            crate::files::profile::brief(&f.name)
        );
    }
    if b.functions.len() > top {
        let _ = writeln!(
            s,
            "  … {} more (--top N, or --json)",
            b.functions.len() - top
        );
    }
    s
}
