//! `vernier analyze FILE`: every figure of a result file re-derived from its raw samples by the
//! same analysis a live run uses, then compared with the figures stored in the file.
//!
//! The loader (`vernier::result::load`) refuses a damaged file with the benchmark and the field
//! named; the analysis context comes from the file's header (`ResultFile::analysis_context`,
//! the builder live runs use too), and each benchmark's measurement from its samples
//! (`BenchmarkResult::measurement`). A file written by this build re-derives to the same figures;
//! one written by an older build shows which figures this build's analysis now gives differently.
//! The re-derivation is `crate::runner::rederive`'s, which `history save` and `compare --save`
//! also use to bring a file another run wrote to this build's rules before storing it.

use crate::runner::rederive::{differences, rederive_weighed};
use crate::term;
use anyhow::{bail, Context as _, Result};
use clap::Args;
use std::path::PathBuf;
use vernier::report;
use vernier::result::ResultFile;

#[derive(Args, Clone, Debug)]
pub struct AnalyzeArgs {
    /// A result file (`--json` of demo, run or compare's runs).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Write the re-derived result (same schema, every raw sample) to OUT.
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    filter: Option<String>,
    /// Verbose report: each benchmark's counters, σ_sample/√N, fit and warm-up, and every
    /// diagnostic's own paragraph.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Weigh the file as a run of the program NAME on the file's machine: its intervals join
    /// the earlier runs the ledger keeps under NAME (not those the file stored), and its
    /// re-derived medians are added to them, as `vernier run` does. Recorded runs re-derived
    /// in order this way are each weighed against the ones before.
    #[arg(long, value_name = "NAME")]
    runs_of: Option<String>,
}

/// How many differing fields are listed per benchmark.
const SHOWN_DIFFERENCES: usize = 4;

pub fn analyze_command(a: &AnalyzeArgs) -> Result<i32> {
    let filter = a
        .filter
        .as_deref()
        .map(|f| {
            regex::Regex::new(f)
                .with_context(|| format!("--filter '{f}' is not a valid regular expression"))
        })
        .transpose()?;
    let stored = ResultFile::load(&a.file)?;
    let mut file = stored.clone();
    file.benchmarks
        .retain(|b| filter.as_ref().is_none_or(|re| re.is_match(&b.name)));
    if file.benchmarks.is_empty() {
        let names: Vec<&str> = stored.benchmarks.iter().map(|b| b.name.as_str()).collect();
        bail!(
            "--filter matches no benchmark; {} has: {}",
            a.file.display(),
            names.join(", ")
        );
    }
    let instructions = file.mode == "instructions";
    // With --runs-of: the program's earlier runs as the ledger keeps them, on the machine
    // that recorded the file (its speeds and clock range stay the file's own).
    let runs_of = a.runs_of.as_ref().map(|name| {
        let ledger = vernier::ledger::Ledger::load(&stored.machine);
        (format!("runs-of {name}"), ledger)
    });
    if let Some((_, ledger)) = &runs_of {
        file.harness.earlier_runs_read = ledger.in_use();
    }
    let earlier = |b: &vernier::result::BenchmarkResult| match &runs_of {
        Some((program, ledger)) => ledger.earlier_runs(program, &b.name),
        None => b.earlier_runs,
    };
    let derived = rederive_weighed(&file, &stored.benchmarks, &earlier).map_err(|e| {
        anyhow::anyhow!(
            "{} cannot be re-derived: {e:#} (a new run with --json writes a file that can)",
            a.file.display()
        )
    })?;
    let mut differing = Vec::new();
    for (b, again) in file.benchmarks.iter_mut().zip(derived) {
        let diffs = differences(b, &again);
        if !diffs.is_empty() {
            differing.push((b.name.clone(), diffs));
        }
        *b = again;
    }

    if let Some((program, ledger)) = &runs_of {
        ledger.record_medians(program, &file);
    }
    let style = term::style();
    if instructions {
        println!("{}", report::instructions_table_head(style));
        for b in &file.benchmarks {
            println!("{}", report::instructions_row(b, style));
        }
        println!("\n{}", report::instructions_legend(style));
    } else {
        let render = report::Render::for_stdout(a.verbose);
        print!("{}", report::render_file(&file, render));
        // Weighed against the ledger's runs: what they added to the intervals, or that
        // there were too few yet.
        if let Some(line) = runs_of.as_ref().and_then(|_| report::earlier_note(&file)) {
            for l in report::wrap(&line, render.width, 0, 2) {
                println!("{l}");
            }
        }
    }
    let n = file.benchmarks.len();
    let written_by = format!("vernier {}", stored.tool.version);
    if differing.is_empty() {
        println!(
            "\n{n} benchmark(s) re-derived from their raw samples; every figure equals the one stored by {written_by}."
        );
    } else {
        println!(
            "\n{} of {n} benchmark(s) re-derive to figures other than those stored by {written_by} \
             (this build's analysis, or an edited file):",
            differing.len()
        );
        for (name, diffs) in &differing {
            let shown: Vec<&str> = diffs
                .iter()
                .take(SHOWN_DIFFERENCES)
                .map(String::as_str)
                .collect();
            let more = diffs.len().saturating_sub(SHOWN_DIFFERENCES);
            let tail = if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            };
            println!("  {name}: {}{tail}", shown.join("; "));
        }
    }
    if let Some(out) = &a.json {
        file.write_atomic(out)
            .with_context(|| format!("cannot write {}", out.display()))?;
        println!("re-derived result written to {}", out.display());
    }
    Ok(0)
}
