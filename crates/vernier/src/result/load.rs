//! Loading a result file: parse, upgrade an older layout, check every field, so that what the
//! analysis is given back is what a live run would have given it. A damaged file is refused
//! with the benchmark and the field named, never half-read and never a panic.

use super::{ResultFile, OLDEST_SCHEMA, SCHEMA};
use crate::plan::MAX_PROBE_ADDS;
use serde_json::Value;
use std::fmt;
use std::path::Path;

impl ResultFile {
    /// Read, upgrade and validate a result file (see [`load`]).
    pub fn load(path: &Path) -> Result<ResultFile, LoadError> {
        load(path)
    }
}

/// Errors reading a result file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a vernier result file (invalid JSON at line {line}, column {column}: {msg}); was it truncated? Re-run with --json to produce it again")]
    Json {
        path: String,
        line: usize,
        column: usize,
        msg: String,
    },
    #[error("{path} is not a vernier result file: {what}")]
    NotResult { path: String, what: String },
    #[error(
        "{path} has schema {found}, this vernier reads schemas {OLDEST_SCHEMA} to {SCHEMA}; upgrade vernier to read it"
    )]
    Schema { path: String, found: u64 },
    #[error("{path} is damaged: {invalid}; the file cannot be trusted: re-run with --json to produce it again")]
    Invalid { path: String, invalid: Invalid },
}

/// A field out of its type or range.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// The benchmark's name (or its index when the name itself is unreadable); `None` for the
    /// file's header.
    pub benchmark: Option<String>,
    /// The field, as a path inside the benchmark (or the file): `samples.phase`, `timer.overhead_ns`.
    pub field: String,
    pub problem: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.benchmark {
            Some(b) => write!(
                f,
                "benchmark {b:?}, field `{}`: {}",
                self.field, self.problem
            ),
            None => write!(f, "field `{}`: {}", self.field, self.problem),
        }
    }
}

/// Longest duration a field may hold: about 11 days, in ns. Beyond it a number is damage, not
/// a measurement, and arithmetic on it would lose every digit that matters.
pub const MAX_NS: f64 = 1e15;
/// Most iterations in one sample (the engine stops doubling far below).
pub const MAX_ITERS: u64 = 1 << 48;
/// Process and round indices share one key in the analysis (16 bits each).
pub const MAX_INDEX: u32 = u16::MAX as u32;

/// Read, upgrade and check the result file at `path`.
pub fn load(path: &Path) -> Result<ResultFile, LoadError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: p.clone(),
        source,
    })?;
    parse(&bytes, &p)
}

/// Parse, upgrade and check a result file's bytes; `origin` names it in errors.
pub fn parse(bytes: &[u8], origin: &str) -> Result<ResultFile, LoadError> {
    let path = origin.to_string();
    let mut v: Value = serde_json::from_slice(bytes).map_err(|e| LoadError::Json {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        msg: e.to_string(),
    })?;
    let not_result = |what: &str| LoadError::NotResult {
        path: path.clone(),
        what: what.to_string(),
    };
    let Some(obj) = v.as_object() else {
        return Err(not_result("its top level is not a JSON object"));
    };
    if obj.contains_key("comparisons") {
        return Err(not_result(
            "it is a comparison file (`vernier compare --json`), not a result file (`vernier run --json`, `vernier demo --json`)",
        ));
    }
    let schema = match obj.get("schema") {
        None => {
            return Err(not_result(
                "it has no `schema` field (write one with `vernier run --json` or `vernier demo --json`)",
            ))
        }
        Some(s) => s.as_u64().ok_or_else(|| {
            not_result(&format!("its `schema` is {s}, not a version number"))
        })?,
    };
    if !(OLDEST_SCHEMA as u64..=SCHEMA as u64).contains(&schema) {
        return Err(LoadError::Schema {
            path,
            found: schema,
        });
    }
    upgrade(&mut v);
    let invalid = |invalid: Invalid| LoadError::Invalid {
        path: path.clone(),
        invalid,
    };
    let file: ResultFile = serde_path_to_error::deserialize(&v).map_err(|e| {
        let (benchmark, field) = locate(&v, &e.path().to_string());
        invalid(Invalid {
            benchmark,
            field,
            problem: e.inner().to_string(),
        })
    })?;
    validate(&file).map_err(invalid)?;
    Ok(file)
}

/// Bring a file written by an older build to today's layout (schema 1 has no field that
/// version 2 reads differently: it only gains the version number).
///
/// - Files from before the `analysis` block (vernier 0.1.0) did not record whether the
///   benchmarks were a debug build: their `debug-build` diagnostic says it; the other settings
///   were the defaults, which [`super::AnalysisSettings::default`] gives.
/// - Files from before `per_iter.run_ci95_ns` had no clock range joined to their interval:
///   the run's own interval was `ci95_ns`.
fn upgrade(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    obj.insert("schema".into(), SCHEMA.into());
    if let Some(bs) = obj.get_mut("benchmarks").and_then(Value::as_array_mut) {
        for p in bs.iter_mut().filter_map(|b| b.get_mut("per_iter")) {
            if let Some(p) = p.as_object_mut() {
                if !p.contains_key("run_ci95_ns") {
                    if let Some(ci) = p.get("ci95_ns").cloned() {
                        p.insert("run_ci95_ns".into(), ci);
                    }
                }
            }
        }
    }
    if !obj.contains_key("analysis") {
        let debug = obj
            .get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|bs| {
                bs.iter().any(|b| {
                    b.get("diagnostics")
                        .and_then(Value::as_array)
                        .is_some_and(|ds| ds.iter().any(|d| d["code"] == "debug-build"))
                })
            });
        let mut settings = serde_json::to_value(super::AnalysisSettings::default())
            .expect("plain struct serialises");
        settings["debug_build"] = Value::Bool(debug);
        obj.insert("analysis".into(), settings);
    }
}

/// Split a serde path (`benchmarks[3].samples.ns[17]`) into the benchmark's name and the field.
fn locate(v: &Value, path: &str) -> (Option<String>, String) {
    let Some(rest) = path.strip_prefix("benchmarks[") else {
        return (None, path.to_string());
    };
    let Some((index, field)) = rest.split_once(']') else {
        return (None, path.to_string());
    };
    let name = index.parse::<usize>().ok().map(|i| {
        v["benchmarks"][i]["name"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{i}"))
    });
    (name, field.trim_start_matches('.').to_string())
}

fn bad(benchmark: Option<&str>, field: &str, problem: String) -> Invalid {
    Invalid {
        benchmark: benchmark.map(str::to_string),
        field: field.to_string(),
        problem,
    }
}

/// A duration or other non-negative figure: finite, ≥ 0 and ≤ [`MAX_NS`]; `null` (NaN) is
/// allowed where the writer uses it for "undefined".
fn check_nonneg(b: Option<&str>, field: &str, x: f64, null_ok: bool) -> Result<(), Invalid> {
    if x.is_nan() {
        return if null_ok {
            Ok(())
        } else {
            Err(bad(b, field, "is null; a number is required".into()))
        };
    }
    if !(0.0..=MAX_NS).contains(&x) {
        return Err(bad(
            b,
            field,
            format!("is {x}, outside the range 0 to {MAX_NS:e}"),
        ));
    }
    Ok(())
}

/// A time in seconds: finite, ≥ 0 and at most [`MAX_NS`] in ns.
fn check_seconds(b: Option<&str>, field: &str, x: f64) -> Result<(), Invalid> {
    if (0.0..=MAX_NS * 1e-9).contains(&x) {
        Ok(())
    } else {
        Err(bad(
            b,
            field,
            format!("is {x}, outside the range 0 to {:e} s", MAX_NS * 1e-9),
        ))
    }
}

/// Any finite figure (an intercept may be negative), or null.
fn check_finite(b: Option<&str>, field: &str, x: f64) -> Result<(), Invalid> {
    if x.is_nan() || x.abs() <= MAX_NS {
        Ok(())
    } else {
        Err(bad(b, field, format!("is {x}, beyond ±{MAX_NS:e}")))
    }
}

/// Check every field the analysis and the report rely on.
pub fn validate(f: &ResultFile) -> Result<(), Invalid> {
    if f.mode != "time" && f.mode != "instructions" {
        return Err(bad(
            None,
            "mode",
            format!("is {:?}; expected \"time\" or \"instructions\"", f.mode),
        ));
    }
    check_nonneg(None, "timer.resolution_ns", f.timer.resolution_ns, false)?;
    check_nonneg(None, "timer.overhead_ns", f.timer.overhead_ns, false)?;
    if let Some(hz) = f.timer.tsc_hz {
        if !(hz.is_finite() && hz > 0.0 && hz < 1e12) {
            return Err(bad(
                None,
                "timer.tsc_hz",
                format!("is {hz}, not a frequency"),
            ));
        }
    }
    check_nonneg(None, "harness.empty_iter_ns", f.harness.empty_iter_ns, true)?;
    check_nonneg(
        None,
        "harness.sample_cost_ns",
        f.harness.sample_cost_ns,
        true,
    )?;
    check_nonneg(None, "harness.cycle_ns", f.harness.cycle_ns, true)?;
    if let Some(c) = &f.harness.counters {
        for (event, x) in &c.baseline {
            check_nonneg(
                None,
                &format!("harness.counters.baseline.{event}"),
                *x,
                false,
            )?;
        }
    }
    let a = &f.analysis;
    if !(a.target_rel_ci > 0.0 && a.target_rel_ci < 1.0) {
        return Err(bad(
            None,
            "analysis.target_rel_ci",
            format!(
                "is {}, expected a fraction between 0 and 1",
                a.target_rel_ci
            ),
        ));
    }
    if !(1.0..=1e9).contains(&a.timer_factor) {
        return Err(bad(
            None,
            "analysis.timer_factor",
            format!("is {}, expected 1 to 1e9", a.timer_factor),
        ));
    }
    for b in &f.benchmarks {
        validate_benchmark(b)?;
    }
    Ok(())
}

fn validate_benchmark(r: &super::BenchmarkResult) -> Result<(), Invalid> {
    let name = if r.name.is_empty() {
        return Err(bad(None, "benchmarks[].name", "is empty".into()));
    } else {
        Some(r.name.as_str())
    };
    validate_samples(name, &r.samples)?;
    validate_figures(name, r)
}

/// The raw samples: one value per sample in every column, each within its bounds.
fn validate_samples(name: Option<&str>, s: &super::SamplesJson) -> Result<(), Invalid> {
    let n = s.ns.len();
    let same_len = |field: &str, len: usize, optional: bool| -> Result<(), Invalid> {
        if len == n || (optional && len == 0) {
            Ok(())
        } else {
            Err(bad(
                name,
                field,
                format!("has {len} values but `samples.ns` has {n}: every column needs one value per sample"),
            ))
        }
    };
    same_len("samples.iters", s.iters.len(), false)?;
    same_len("samples.t_s", s.t_s.len(), false)?;
    same_len("samples.phase", s.phase.len(), false)?;
    same_len("samples.process", s.process.len(), false)?;
    same_len("samples.round", s.round.len(), true)?;
    same_len("samples.interrupted", s.interrupted.len(), true)?;
    same_len("samples.probe_ns", s.probe_ns.len(), true)?;
    if !s.probe_ns.is_empty() && !(1..=MAX_PROBE_ADDS).contains(&s.probe_adds) {
        return Err(bad(
            name,
            "samples.probe_adds",
            format!(
                "is {}, expected 1 to {MAX_PROBE_ADDS} when `probe_ns` is present",
                s.probe_adds
            ),
        ));
    }
    same_len("samples.wide_ns", s.wide_ns.len(), true)?;
    for (field, cols) in [
        ("thread_ns", &s.thread_ns),
        ("thread_cpu_ns", &s.thread_cpu_ns),
        ("thread_wait_ns", &s.thread_wait_ns),
    ] {
        for (k, t) in cols.iter().enumerate() {
            same_len(&format!("samples.{field}[{k}]"), t.len(), false)?;
        }
    }
    if !s.wide_ns.is_empty() && s.probe_ns.is_empty() {
        return Err(bad(
            name,
            "samples.wide_ns",
            "is present without `samples.probe_ns`: the probe's two halves are run together".into(),
        ));
    }
    for (column, values) in [("probe_ns", &s.probe_ns), ("wide_ns", &s.wide_ns)] {
        for (i, p) in values.iter().enumerate() {
            if let Some(p) = *p {
                if p == 0 || p as f64 > MAX_NS {
                    return Err(bad(
                        name,
                        &format!("samples.{column}[{i}]"),
                        format!("is {p}, expected 1 to {MAX_NS:e} ns"),
                    ));
                }
            }
        }
    }
    for (event, col) in &s.counters {
        same_len(&format!("samples.counters.{event}"), col.len(), false)?;
    }
    for (event, col) in &s.counters_scaled {
        if !s.counters.contains_key(event) {
            return Err(bad(
                name,
                &format!("samples.counters_scaled.{event}"),
                "names an event with no column in `samples.counters`".into(),
            ));
        }
        same_len(
            &format!("samples.counters_scaled.{event}"),
            col.len(),
            false,
        )?;
    }
    for i in 0..n {
        if s.iters[i] == 0 || s.iters[i] > MAX_ITERS {
            return Err(bad(
                name,
                &format!("samples.iters[{i}]"),
                format!("is {}, expected 1 to {MAX_ITERS}", s.iters[i]),
            ));
        }
        if s.ns[i] as f64 > MAX_NS {
            return Err(bad(
                name,
                &format!("samples.ns[{i}]"),
                format!("is {}, beyond any sample ({MAX_NS:e} ns)", s.ns[i]),
            ));
        }
        check_seconds(name, &format!("samples.t_s[{i}]"), s.t_s[i])?;
        if s.process[i] > MAX_INDEX {
            return Err(bad(
                name,
                &format!("samples.process[{i}]"),
                format!("is {}, expected at most {MAX_INDEX}", s.process[i]),
            ));
        }
        if let Some(&round) = s.round.get(i) {
            if round > MAX_INDEX {
                return Err(bad(
                    name,
                    &format!("samples.round[{i}]"),
                    format!("is {round}, expected at most {MAX_INDEX}"),
                ));
            }
        }
    }
    Ok(())
}

/// The figures derived from the samples: finite, non-negative where they must be, ordered.
fn validate_figures(name: Option<&str>, r: &super::BenchmarkResult) -> Result<(), Invalid> {
    let n = r.samples.ns.len();
    // A benchmark may hold no sample at all (it failed, or Ctrl-C came before its first), or
    // only calibration samples (Ctrl-C during calibration): the analysis then has no main
    // series and says so; only an impossible count is damage.
    if r.iters_per_sample > MAX_ITERS {
        return Err(bad(
            name,
            "iters_per_sample",
            format!("is {}, expected at most {MAX_ITERS}", r.iters_per_sample),
        ));
    }
    let p = &r.per_iter;
    for (field, x) in [
        ("per_iter.median_ns", p.median_ns),
        ("per_iter.min_ns", p.min_ns),
        ("per_iter.mean_ns", p.mean_ns),
        ("per_iter.sigma_ns", p.sigma_ns),
        ("per_iter.ci95_ns[0]", p.ci95_ns[0]),
        ("per_iter.ci95_ns[1]", p.ci95_ns[1]),
        ("per_iter.run_ci95_ns[0]", p.run_ci95_ns[0]),
        ("per_iter.run_ci95_ns[1]", p.run_ci95_ns[1]),
        ("per_iter.sample_sigma_ns", p.sample_sigma_ns),
        ("per_iter.mad_ns", p.mad_ns),
    ] {
        check_nonneg(name, field, x, true)?;
    }
    for (field, x) in [
        ("per_iter.slope_ns", p.slope_ns),
        ("per_iter.intercept_ns", p.intercept_ns),
        ("per_iter.r2", p.r2),
    ] {
        check_finite(name, field, x)?;
    }
    if p.ci95_ns[0] > p.ci95_ns[1] {
        return Err(bad(
            name,
            "per_iter.ci95_ns",
            format!(
                "is [{}, {}]: its lower end is above its upper end",
                p.ci95_ns[0], p.ci95_ns[1]
            ),
        ));
    }
    check_seconds(name, "total_s", r.total_s)?;
    check_seconds(name, "warmup.seconds", r.warmup.seconds)?;
    if r.warmup.samples > n {
        return Err(bad(
            name,
            "warmup.samples",
            format!("is {}, more than the {n} samples", r.warmup.samples),
        ));
    }
    if let Some(c) = &r.counters {
        for (k, x) in c {
            check_finite(name, &format!("counters.{k}"), *x)?;
        }
    }
    for (i, pr) in r.processes.iter().enumerate() {
        if pr.index > MAX_INDEX {
            return Err(bad(
                name,
                &format!("processes[{i}].index"),
                format!("is {}, expected at most {MAX_INDEX}", pr.index),
            ));
        }
        check_nonneg(
            name,
            &format!("processes[{i}].median_ns"),
            pr.median_ns,
            true,
        )?;
    }
    Ok(())
}
