//! `vernier report FILE… -o OUT.html`: one self-contained HTML report of result,
//! comparison, sweep and history files (read by `crate::files::load`, drawn by `crate::html`).

use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Clone, Debug)]
pub struct ReportArgs {
    /// Result files (`--json` of demo or run), comparison files (`compare --json`) or history
    /// files (`history --json`), in any mix; each becomes a section of the report.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "OUT.html")]
    output: PathBuf,
}

/// `vernier report FILE… -o OUT.html`.
pub fn report_command(a: &ReportArgs) -> Result<i32> {
    vernier::result::check_destination(&a.output).map_err(|e| anyhow::anyhow!("-o {e}"))?;
    let out = std::fs::canonicalize(&a.output).ok();
    if let Some(f) = a
        .files
        .iter()
        .find(|f| out.is_some() && std::fs::canonicalize(f).ok() == out)
    {
        bail!(
            "-o {} is one of the files to report on ({}): the report would replace it; give \
             the report its own name, such as report.html",
            a.output.display(),
            f.display()
        );
    }
    let docs = a
        .files
        .iter()
        .map(|p| crate::files::load::load(p).map(|d| (p.display().to_string(), d)))
        .collect::<Result<Vec<_>>>()?;
    let html = crate::html::page(&docs);
    crate::html::write(&a.output, &html)?;
    println!(
        "report written to {} ({} kB)",
        a.output.display(),
        html.len().div_ceil(1024)
    );
    Ok(0)
}
