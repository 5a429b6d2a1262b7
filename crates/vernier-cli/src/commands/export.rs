//! `vernier export FILE --format gbench|bmf|csv|pyperf [-o OUT]`: a result file in the formats
//! other tools read (`docs/report.md` says what each carries). Every format carries the
//! result's own medians: nothing is re-estimated here.

use crate::files::gbench;
use crate::files::{measured_utc, num};
use anyhow::{bail, Context as _, Result};
use clap::{Args, ValueEnum};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::PathBuf;
use vernier::result::{BenchmarkResult, ResultFile, Status};
use vernier::samples::Phase;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A result file (`--json` of demo or run).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// gbench: Google Benchmark's JSON (github-action-benchmark's `googlecpp`, Bencher);
    /// bmf: Bencher Metric Format; csv: one row per benchmark; pyperf: pyperf's JSON.
    #[arg(long, value_enum)]
    format: Format,
    /// Write to OUT (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Gbench,
    Bmf,
    Csv,
    Pyperf,
}

pub fn export_command(a: &ExportArgs) -> Result<i32> {
    let file = load(&a.file)?;
    let text = render(&file, a.format, &a.file)?;
    if a.format == Format::Pyperf {
        for b in &file.benchmarks {
            if b.speed.as_ref().is_some_and(|s| s.split) {
                eprintln!(
                    "vernier: {}: the core ran in two states and the median rests on the faster \
                     one; pyperf's values hold both, so its median differs (the result's is in \
                     the benchmark's metadata, vernier_median_ns)",
                    b.name
                );
            }
        }
    }
    match &a.output {
        Some(out) => {
            vernier::result::write_atomic(out, text.as_bytes())
                .with_context(|| format!("cannot write {}", out.display()))?;
            eprintln!(
                "vernier: {} benchmark(s) exported as {:?} to {}",
                file.benchmarks.len(),
                a.format,
                out.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(0)
}

/// The result file, or an error that says what FILE is instead and what to export.
fn load(path: &std::path::Path) -> Result<ResultFile> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
        if crate::files::kind(&v) == crate::files::Kind::Comparison {
            bail!(
                "{} is a comparison file (`vernier compare --json`): export takes a result file; \
                 export the two result files compared instead (vernier run --json FILE writes one)",
                path.display()
            );
        }
    }
    let file = vernier::result::parse(&bytes, &path.display().to_string())?;
    if file.mode == "instructions" {
        bail!(
            "{} holds instruction counts (--instructions), not times: the export formats carry \
             times; export a timed run's result file",
            path.display()
        );
    }
    Ok(file)
}

/// The export of `file` in `format`.
pub fn render(file: &ResultFile, format: Format, path: &std::path::Path) -> Result<String> {
    Ok(match format {
        Format::Gbench => gbench::json(file, &measured_utc(file, path)),
        Format::Bmf => serde_json::to_string_pretty(&bmf(file))? + "\n",
        Format::Csv => csv(file),
        Format::Pyperf => serde_json::to_string(&pyperf(file, path))? + "\n",
    })
}

/// The Bencher Metric Format: `latency` in ns, the median with its 95 % interval as the lower
/// and upper values. Benchmarks without a figure (failed) are left out.
pub fn bmf(file: &ResultFile) -> Value {
    let mut o = Map::new();
    for b in &file.benchmarks {
        let p = &b.per_iter;
        if !p.median_ns.is_finite() {
            continue;
        }
        o.insert(
            b.name.clone(),
            json!({"latency": {
                "value": p.median_ns,
                "lower_value": num(p.ci95_ns[0]),
                "upper_value": num(p.ci95_ns[1]),
            }}),
        );
    }
    Value::Object(o)
}

/// The CSV's columns.
pub const CSV_HEADER: &str = "name,status,median_ns,ci95_lo_ns,ci95_hi_ns,min_ns,mean_ns,\
spread_pct,sample_sigma_ns,sigma_iter_ns,steady_samples,iters_per_sample,warmup_class,\
warmup_s,total_s,diagnostics";

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number for CSV: the shortest text that reads back to the same f64; empty when undefined.
fn cell(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// One row per benchmark, with a header (`CSV_HEADER`); times in ns, diagnostics as their codes
/// separated by spaces.
pub fn csv(file: &ResultFile) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{CSV_HEADER}");
    for b in &file.benchmarks {
        let p = &b.per_iter;
        let status = match b.status {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        };
        let codes: Vec<&str> = b.diagnostics.iter().map(|d| d.code.as_str()).collect();
        let row = [
            field(&b.name),
            status.into(),
            cell(p.median_ns),
            cell(p.ci95_ns[0]),
            cell(p.ci95_ns[1]),
            cell(p.min_ns),
            cell(p.mean_ns),
            cell(vernier::report::spread_pct(b)),
            cell(p.sample_sigma_ns),
            cell(p.sigma_ns),
            b.steady_samples.to_string(),
            b.iters_per_sample.to_string(),
            b.warmup.class.as_str().into(),
            cell(b.warmup.seconds),
            cell(b.total_s),
            field(&codes.join(" ")),
        ];
        let _ = writeln!(s, "{}", row.join(","));
    }
    s
}

/// The steady samples the headline rests on, per process, in seconds per iteration: phase
/// `measure` at the final iteration count, less the interrupted samples when the analysis
/// excluded them, less the slower state's samples when the core ran in two (`speed.split`).
fn steady_values(b: &BenchmarkResult) -> Vec<(u32, Vec<f64>)> {
    let s = &b.samples;
    let excluded = b.interrupted.as_ref().is_some_and(|i| i.excluded);
    let mut per: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    for i in 0..s.ns.len() {
        if s.phase.get(i) != Some(&Phase::Measure) || s.iters[i] != b.iters_per_sample {
            continue;
        }
        if excluded && s.interrupted.get(i).copied().unwrap_or(false) {
            continue;
        }
        let v = s.ns[i] as f64 / s.iters[i].max(1) as f64 * 1e-9;
        per.entry(s.process.get(i).copied().unwrap_or(0))
            .or_default()
            .push(v);
    }
    per.into_iter().filter(|(_, v)| !v.is_empty()).collect()
}

/// pyperf's JSON (version 1.0): one pyperf benchmark per benchmark (unit `second`), one run per
/// process whose values are the steady samples' times per iteration, and whose warm-ups are
/// the warm-up samples. Its median is the median of the steady samples: the result's median
/// except where the analysis set some aside (the slower state of a core that ran in two: see
/// `docs/report.md`); the result's own figures are in each benchmark's metadata.
pub fn pyperf(file: &ResultFile, path: &std::path::Path) -> Value {
    let benchmarks: Vec<Value> = file
        .benchmarks
        .iter()
        .filter(|b| b.per_iter.median_ns.is_finite())
        .filter_map(|b| {
            let s = &b.samples;
            let runs: Vec<Value> = steady_values(b)
                .into_iter()
                .map(|(proc_, values)| {
                    let warmups: Vec<Value> = (0..s.ns.len())
                        .filter(|&i| {
                            s.phase.get(i) == Some(&Phase::Warmup)
                                && s.process.get(i).copied().unwrap_or(0) == proc_
                                && s.iters[i] > 0
                        })
                        .map(|i| json!([s.iters[i], s.ns[i] as f64 / s.iters[i] as f64 * 1e-9]))
                        .collect();
                    json!({
                        "metadata": {"loops": b.iters_per_sample.max(1)},
                        "warmups": warmups,
                        "values": values,
                    })
                })
                .collect();
            (!runs.is_empty()).then(|| {
                json!({
                    "metadata": {
                        "name": b.name,
                        "unit": "second",
                        "loops": b.iters_per_sample.max(1),
                        "vernier_median_ns": b.per_iter.median_ns,
                        "vernier_ci95_lo_ns": num(b.per_iter.ci95_ns[0]),
                        "vernier_ci95_hi_ns": num(b.per_iter.ci95_ns[1]),
                    },
                    "runs": runs,
                })
            })
        })
        .collect();
    json!({
        "version": "1.0",
        "metadata": {
            "hostname": file.machine.hostname,
            "cpu_model_name": file.machine.cpu_model,
            "cpu_count": file.machine.logical_cpus,
            "platform": format!("{} {} {}", file.machine.os, file.machine.kernel, file.machine.arch),
            "date": measured_utc(file, path).replace("+00:00", ""),
            "perf_version": format!("vernier {}", file.tool.version),
        },
        "benchmarks": benchmarks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_with_commas_are_quoted() {
        assert_eq!(field("event copy, hot"), "\"event copy, hot\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("add"), "add");
    }
}
