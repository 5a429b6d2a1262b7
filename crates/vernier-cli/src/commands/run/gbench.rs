//! `vernier run --gbench-format FORMAT [--gbench-out FILE [--gbench-out-format FORMAT]]`: the
//! run reports as Google Benchmark does. A program built on the Google Benchmark layer and run
//! by hand hands itself to the runner with these options (docs/gbench.md): its standard output
//! is then Google Benchmark's table, JSON or CSV, and its `--benchmark_out` file is written,
//! both from the run's result by `files::gbench`, the code of `vernier export --format
//! gbench`. The runner's own report goes to standard error.

use super::RunArgs;
use crate::files::{gbench, measured_utc};
use anyhow::{bail, Context as _, Result};
use clap::{Args, ValueEnum};
use std::io::Write as _;
use std::path::PathBuf;
use vernier::result::ResultFile;

#[derive(Args, Clone, Debug, Default)]
pub struct GbenchArgs {
    /// Report as Google Benchmark does: its console table, JSON or CSV on standard output,
    /// and the runner's own report on standard error (docs/gbench.md).
    #[arg(long, value_enum, value_name = "console|json|csv")]
    pub gbench_format: Option<GbenchFormat>,
    /// Also write Google Benchmark's JSON or CSV (`--gbench-out-format`) to FILE, atomically.
    #[arg(long, value_name = "FILE")]
    pub gbench_out: Option<PathBuf>,
    /// The format of `--gbench-out` (json by default).
    #[arg(long, value_enum, value_name = "json|csv", requires = "gbench_out")]
    pub gbench_out_format: Option<GbenchFormat>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GbenchFormat {
    Console,
    Json,
    Csv,
}

impl GbenchArgs {
    /// Whether the run reports as Google Benchmark does.
    pub fn wanted(&self) -> bool {
        self.gbench_format.is_some() || self.gbench_out.is_some()
    }
}

/// `text` of the run's result in Google Benchmark's `format`.
fn render(file: &ResultFile, format: GbenchFormat, date: &str) -> String {
    match format {
        GbenchFormat::Console => gbench::console(file),
        GbenchFormat::Json => gbench::json(file, date),
        GbenchFormat::Csv => gbench::csv(file),
    }
}

/// The standard output set aside while the run prints its own report to standard error, put
/// back when dropped.
struct StdoutAside {
    saved: libc::c_int,
}

impl StdoutAside {
    fn new() -> Result<Self> {
        std::io::stdout().flush()?;
        // SAFETY: dup and dup2 take and return plain descriptors; 1 and 2 are open in this
        // process (the standard streams), and `saved` is checked before it is used.
        let saved = unsafe { libc::dup(1) };
        if saved < 0 || unsafe { libc::dup2(2, 1) } < 0 {
            bail!(
                "cannot set standard output aside: {}",
                std::io::Error::last_os_error()
            );
        }
        Ok(StdoutAside { saved })
    }
}

impl Drop for StdoutAside {
    fn drop(&mut self) {
        let _ = std::io::stdout().flush();
        // SAFETY: `saved` is the descriptor dup returned in `new`, open until this close.
        unsafe {
            libc::dup2(self.saved, 1);
            libc::close(self.saved);
        }
    }
}

/// The run, its report in Google Benchmark's formats.
pub fn run_as_gbench(a: &RunArgs) -> Result<i32> {
    let g = &a.gbench;
    if a.common.instructions {
        bail!(
            "--gbench-format/--gbench-out write times, and --instructions counts instructions: \
             leave one out"
        );
    }
    if g.gbench_out_format == Some(GbenchFormat::Console) {
        bail!("--gbench-out-format console: a file is written as json or csv; choose one");
    }
    // The result file: the one asked for, else one in a directory of this run's own.
    let scratch = match &a.common.json {
        Some(_) => None,
        None => Some(crate::scratch::dir("vernier-gbench-")?),
    };
    let mut run = a.clone();
    if let Some(dir) = &scratch {
        run.common.json = Some(dir.path().join("result.json"));
    }
    let path = run.common.json.clone().unwrap_or_default();
    let status = {
        let _aside = g.gbench_format.map(|_| StdoutAside::new()).transpose()?;
        super::run_command(&run)?
    };
    let file = ResultFile::load(&path)
        .with_context(|| format!("cannot read the run's result {}", path.display()))?;
    let date = measured_utc(&file, &path);
    if let Some(format) = g.gbench_format {
        print!("{}", render(&file, format, &date));
        std::io::stdout().flush()?;
    }
    if let Some(out) = &g.gbench_out {
        let format = g.gbench_out_format.unwrap_or(GbenchFormat::Json);
        vernier::result::write_atomic(out, render(&file, format, &date).as_bytes())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(status)
}
