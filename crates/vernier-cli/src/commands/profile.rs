//! `vernier profile [--filter R] -- PROGRAM [ARGS]`: where each benchmark's measured loop
//! spends its instructions, function by function, counted under callgrind
//! (`crate::runner::profile`): the top functions in the terminal, the whole profile with
//! `--json`, and a flame graph per benchmark with `--html`. See docs/profile.md.

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
    #[arg(long, value_name = "SECONDS", default_value_t = crate::runner::sampled::DEFAULT_SECONDS, requires = "sampled")]
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
    let timeout = std::time::Duration::from_secs_f64(a.timeout);
    let file = if a.sampled {
        crate::runner::sampled::prepare("--time", a.time)?;
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
            &[],
            timeout,
            filter.as_ref(),
            a.time,
            &mut |p, b| print!("{}", crate::runner::profile::render(p, b, a.top)),
        )?
    } else {
        crate::runner::instructions::Callgrind::from_env().check()?;
        term::install_ctrlc();
        println!("vernier profile: counted under callgrind, the measured loop only; per iteration");
        crate::runner::profile::profile_program(
            &program,
            &args,
            &[],
            timeout,
            filter.as_ref(),
            &mut |p, b| print!("{}", crate::runner::profile::render(p, b, a.top)),
        )?
    };
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&file)?;
        vernier::result::write_atomic(path, (text + "\n").as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        println!("profile written to {}", path.display());
    }
    if let Some(path) = &a.html {
        let written = crate::html::write_profile(path, &file);
        crate::html::write_or_warn(path, written, a.json.as_deref());
    }
    if let Some(code) = term::interrupted_exit() {
        return Ok(code);
    }
    let failed = file.benchmarks.iter().filter(|b| b.error.is_some()).count();
    Ok(if failed > 0 { 1 } else { 0 })
}
