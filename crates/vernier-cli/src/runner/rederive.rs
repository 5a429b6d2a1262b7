//! A result file another run wrote (maybe another version), derived again with this build's
//! rules: every timed benchmark from its raw samples by the library's pipeline with the context
//! of the file's header, every counted one from its two counts. `vernier analyze` shows the
//! result against the file's own figures; `history save` and `compare --save` store it.

use super::counted;
use super::instructions::{difference, EventCounts};
use anyhow::{bail, Context as _, Result};
use serde_json::Value;
use vernier::pipeline;
use vernier::result::earlier_runs::EarlierRuns;
use vernier::result::{BenchmarkResult, ResultFile, Status};

/// Relative tolerance when comparing a re-derived figure with the stored one: the analysis is
/// deterministic, so only the JSON round trip of a float may differ, far below this.
pub const REL_TOLERANCE: f64 = 1e-12;

/// Every benchmark of `file` re-derived with this build's rules, in the file's order: what
/// `vernier analyze` shows and what `history save` stores. A timed benchmark is rebuilt from
/// its raw samples and analysed with the context of the file's header (the pipeline of a live
/// run), a counted one from its two stored counts; a threaded one is set beside its one-thread
/// run among `all` (the file's benchmarks, whatever a filter left out).
///
/// A benchmark that stopped before its first sample (failed, or interrupted) has nothing to
/// re-derive and stays as recorded. One with figures but no raw samples (a file trimmed of
/// them, or edited) cannot be re-derived: the error names it and why.
pub fn rederive(file: &ResultFile, all: &[BenchmarkResult]) -> Result<Vec<BenchmarkResult>> {
    rederive_weighed(file, all, &|b| b.earlier_runs)
}

/// [`rederive`], each timed benchmark weighed against the earlier runs `earlier` gives for it
/// (those the file stored, for [`rederive`]; the ledger's, for `analyze --runs-of`).
pub fn rederive_weighed(
    file: &ResultFile,
    all: &[BenchmarkResult],
    earlier: &dyn Fn(&BenchmarkResult) -> Option<EarlierRuns>,
) -> Result<Vec<BenchmarkResult>> {
    let instructions = file.mode == "instructions";
    let ctx = file.analysis_context();
    file.benchmarks
        .iter()
        .map(|b| {
            // What the file says was measured, which its raw samples must hold.
            let measured = if instructions {
                b.status == Status::Ok
            } else {
                b.per_iter.median_ns.is_finite()
            };
            let n = b.samples.ns.len();
            if measured && instructions && n != 2 {
                bail!(
                    "benchmark {:?} was counted but keeps {n} raw count(s), not the two (at N1 \
                     and N2 iterations) its figures are derived from",
                    b.name
                );
            }
            if measured && n == 0 {
                bail!(
                    "benchmark {:?} has a median but no raw samples (`samples.ns` is empty): \
                     its figures cannot be derived again",
                    b.name
                );
            }
            if instructions {
                recount(b)
            } else {
                Ok(pipeline::again(b, &ctx, earlier(b), all).unwrap_or_else(|| b.clone()))
            }
        })
        .collect::<Result<Vec<_>>>()
        .map(|mut all| {
            // The whole run's: the machine's codes said once when it disturbed most of them.
            vernier::result::machine_noise::explain_run(&mut all);
            all
        })
}

/// A result file written by another run (or another version) re-derived to be stored, with
/// how many of its benchmarks now read otherwise than the file recorded them.
pub struct Rederived {
    pub file: ResultFile,
    pub changed: usize,
}

/// `stored` with every benchmark re-derived ([`rederive`]), as `history save` and `compare
/// --save` store a file they were given.
pub fn rederive_file(stored: &ResultFile) -> Result<Rederived> {
    let derived = rederive(stored, &stored.benchmarks)?;
    let changed = stored
        .benchmarks
        .iter()
        .zip(&derived)
        .filter(|(was, now)| !differences(was, now).is_empty())
        .count();
    let mut file = stored.clone();
    file.benchmarks = derived;
    Ok(Rederived { file, changed })
}

/// The line that says result files were re-derived before being stored: `files` files holding
/// `benchmarks` benchmarks, `changed` of which read otherwise than recorded.
pub fn rederived_line(files: usize, benchmarks: usize, changed: usize) -> String {
    let what = if changed == 0 {
        "every figure as recorded".to_string()
    } else {
        format!(
            "{changed} of {benchmarks} benchmark(s) read otherwise than recorded (`vernier \
             analyze FILE` lists how)"
        )
    };
    format!(
        "re-derived {files} file(s) from their raw samples with this version's rules before \
         saving: {what}"
    )
}

/// A time-mode benchmark re-derived: its measurement rebuilt from the samples, analysed with
/// the run's context. A benchmark with no sample (it failed before its first) stays as stored.
/// An instructions-mode benchmark re-derived: its per-iteration counts are the difference of
/// the two stored counts (N1 and N2 iterations), as `--instructions` computed them. One that
/// failed keeps what it recorded.
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
    let totals = difference(s.iters[0], &at(0), s.iters[1], &at(1))
        .with_context(|| format!("benchmark {:?}", b.name))?;
    let per_iter = crate::runner::instructions::per_thread(
        &totals,
        crate::runner::instructions::threads_of(&b.name),
    );
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
