//! `vernier analyze FILE`: every figure of a result file re-derived from its raw samples by the
//! same analysis a live run uses, then compared with the figures stored in the file.
//!
//! The loader (`vernier::result::load`) refuses a damaged file with the benchmark and the field
//! named; the analysis context comes from the file's header (`ResultFile::analysis_context`,
//! the builder live runs use too), and each benchmark's measurement from its samples
//! (`BenchmarkResult::measurement`). A file written by this build re-derives to the same figures;
//! one written by an older build shows which figures this build's analysis now gives differently.

use crate::runner::counted;
use crate::runner::instructions::{difference, EventCounts};
use crate::term;
use anyhow::{bail, Context as _, Result};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;
use vernier::analyze;
use vernier::pipeline;
use vernier::report;
use vernier::result::{BenchmarkResult, ResultFile};

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
    /// the earlier runs the speed file keeps under NAME (not those the file stored), and its
    /// re-derived medians are added to them, as `vernier run` does. Recorded runs re-derived
    /// in order this way are each weighed against the ones before.
    #[arg(long, value_name = "NAME")]
    runs_of: Option<String>,
}

/// Relative tolerance when comparing a re-derived figure with the stored one: the analysis is
/// deterministic, so only the JSON round trip of a float may differ, far below this.
pub const REL_TOLERANCE: f64 = 1e-12;

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
    let ctx = file.analysis_context();
    // The program's earlier runs as the speed file keeps them, on the machine that recorded
    // the file (its speeds and clock range stay the file's own).
    let runs_of = a.runs_of.as_ref().map(|name| {
        let known = vernier::speed_file::KnownSpeed::load(&stored.machine);
        (format!("runs-of {name}"), known)
    });
    if let Some((_, known)) = &runs_of {
        file.harness.earlier_runs_read = known.in_use();
    }
    let mut differing = Vec::new();
    for b in &mut file.benchmarks {
        let old = b.clone();
        *b = if instructions {
            recount(b)?
        } else if let Some((program, known)) = &runs_of {
            pipeline::again(b, &ctx, known.earlier_runs(program, &b.name))
                .unwrap_or_else(|| b.clone())
        } else {
            reanalyze(b, &ctx)
        };
        vernier::result::threads::relate(b, &stored.benchmarks);
        let diffs = differences(&old, b);
        if !diffs.is_empty() {
            differing.push((b.name.clone(), diffs));
        }
    }

    if let Some((program, known)) = &runs_of {
        known.record_medians(program, &file);
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
        // Weighed against the speed file's runs: what they added to the intervals, or that
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

/// A time-mode benchmark re-derived: its measurement rebuilt from the samples, analysed with
/// the run's context. A benchmark with no sample (it failed before its first) stays as stored.
pub fn reanalyze(b: &BenchmarkResult, ctx: &analyze::Context) -> BenchmarkResult {
    pipeline::again(b, ctx, b.earlier_runs).unwrap_or_else(|| b.clone())
}

/// An instructions-mode benchmark re-derived: its per-iteration counts are the difference of
/// the two stored counts (N1 and N2 iterations), as `--instructions` computed them.
fn recount(b: &BenchmarkResult) -> Result<BenchmarkResult> {
    let s = &b.samples;
    if s.iters.len() != 2 {
        return Ok(b.clone());
    }
    let at = |k: usize| EventCounts {
        names: s
            .counters
            .iter()
            .filter(|(_, col)| col[k].is_some())
            .map(|(e, _)| e.clone())
            .collect(),
        values: s.counters.values().filter_map(|col| col[k]).collect(),
    };
    let per_iter = difference(s.iters[0], &at(0), s.iters[1], &at(1))
        .with_context(|| format!("benchmark {:?}", b.name))?;
    let mut r = b.clone();
    let mut counters = r.counters.take().unwrap_or_default();
    for (event, v) in per_iter {
        counters.insert(counted::key_of(&event), v);
    }
    r.counters = Some(counters);
    Ok(r)
}

/// Paths of the figures that differ between the stored and the re-derived entry: numbers
/// beyond [`REL_TOLERANCE`], anything else when not equal.
pub fn differences(stored: &BenchmarkResult, derived: &BenchmarkResult) -> Vec<String> {
    let mut out = Vec::new();
    let codes = |r: &BenchmarkResult| -> Vec<&str> {
        r.diagnostics.iter().map(|d| d.code.as_str()).collect()
    };
    let (was, now) = (codes(stored), codes(derived));
    if was != now {
        out.push(format!(
            "diagnostics stored [{}] re-derived [{}]",
            was.join(", "),
            now.join(", ")
        ));
    } else {
        // Their words exactly; their figures (`data`) within the tolerance of every other
        // figure: a number read back from JSON may differ from the one computed in the last
        // bit, and a figure derived from it (a duration summed from sample times) with it.
        let words = |r: &BenchmarkResult| -> Vec<String> {
            r.diagnostics.iter().map(|d| d.message.clone()).collect()
        };
        let data = |r: &BenchmarkResult| -> Value {
            Value::Array(
                r.diagnostics
                    .iter()
                    .map(|d| serde_json::to_value(&d.data).unwrap_or(Value::Null))
                    .collect(),
            )
        };
        let mut figures = Vec::new();
        diff_values("", &data(stored), &data(derived), &mut figures);
        if words(stored) != words(derived) || !figures.is_empty() {
            out.push("the diagnostics' figures or words".into());
        }
    }
    // The diagnostics were weighed above by their codes: their figures and words are not
    // listed one by one.
    let without = |r: &BenchmarkResult| {
        let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            o.remove("diagnostics");
        }
        v
    };
    diff_values("", &without(stored), &without(derived), &mut out);
    out
}

/// Two numbers with the fewest significant digits (four or more) that tell them apart.
fn apart(x: f64, y: f64) -> (String, String) {
    let sig = |v: f64, d: i32| {
        let digits = (d - 1 - v.abs().max(1e-300).log10().floor() as i32).clamp(0, 12) as usize;
        format!("{v:.digits$}")
    };
    // A number written with few digits (an edited figure, a count) is shown as it is.
    let short = |v: f64, d: i32| {
        let plain = v.to_string();
        let digits = plain.chars().filter(char::is_ascii_digit).count();
        if digits <= 6 {
            plain
        } else {
            sig(v, d)
        }
    };
    (4..=12)
        .map(|d| (short(x, d), short(y, d)))
        .find(|(a, b)| a != b)
        .unwrap_or_else(|| (x.to_string(), y.to_string()))
}

fn diff_values(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            let scale = x.abs().max(y.abs());
            if (x - y).abs() > REL_TOLERANCE * scale {
                let (x, y) = apart(x, y);
                out.push(format!("{path} stored {x} re-derived {y}"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = join(path, k);
                match y.get(k) {
                    Some(w) => diff_values(&p, v, w, out),
                    None => out.push(format!("{p} stored, not re-derived")),
                }
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(format!("{} re-derived, not stored", join(path, k)));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff_values(&format!("{path}[{i}]"), v, w, out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{path} stored {a} re-derived {b}")),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}
