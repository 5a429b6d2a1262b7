//! The files the command writes and reads: the kinds of JSON file, told apart by their
//! top-level fields in one place for every command that takes a file (`report`, `export`,
//! `compare`), a report's inputs read whole (`load.rs`), and the documents whose writer and
//! reader are different commands (one type each, so the two cannot drift apart). The result and comparison files are the library's
//! (`vernier::result`).

use serde_json::{json, Value};

pub mod gbench;
pub mod history;
pub mod load;
pub mod profile;
pub mod sweep;

/// What a JSON document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A comparison file (`vernier compare --json`): `comparisons`, no `benchmarks`.
    Comparison,
    /// A history (`vernier history --json`): `series`.
    History,
    /// A sweep (`vernier sweep --json`): `env_pad` and `points`.
    Sweep,
    /// A profile (`vernier profile --json`): `profile` and `benchmarks`.
    Profile,
    /// Google Benchmark's JSON: a `context`, `benchmarks` whose entries carry `real_time` or
    /// `run_type`, and no vernier `schema`.
    GoogleBenchmark,
    /// A result file (`vernier run --json`, `vernier demo --json`): `benchmarks`.
    Result,
    /// None of these.
    Unknown,
}

/// The kind of `v`.
pub fn kind(v: &Value) -> Kind {
    let has = |k: &str| v.get(k).is_some();
    if has("comparisons") && !has("benchmarks") {
        Kind::Comparison
    } else if has("series") {
        Kind::History
    } else if has("env_pad") && has("points") {
        Kind::Sweep
    } else if has("profile") && has("benchmarks") {
        Kind::Profile
    } else if google_benchmark(v) {
        Kind::GoogleBenchmark
    } else if has("benchmarks") {
        Kind::Result
    } else {
        Kind::Unknown
    }
}

fn google_benchmark(v: &Value) -> bool {
    v.get("schema").is_none()
        && v.get("context").is_some_and(Value::is_object)
        && v.get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|b| {
                b.iter()
                    .all(|e| e.get("real_time").is_some() || e.get("run_type").is_some())
            })
}

/// A number for JSON: `null` when undefined (a benchmark that failed before any sample).
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// When the run in `file` (read from `path`) was measured, as ISO 8601 in UTC
/// (`2026-11-23T00:19:38+00:00`, the date the formats of other tools carry: Google Benchmark
/// writes the date of the run): its `recorded_at`, else, for a file written before that was
/// kept, the time `path` was last modified.
pub fn measured_utc(file: &vernier::result::ResultFile, path: &std::path::Path) -> String {
    let t = file.recorded_at.clone().unwrap_or_else(|| {
        let modified = std::fs::metadata(path).and_then(|m| m.modified());
        vernier::result::recorded::rfc3339_utc(modified.unwrap_or(std::time::UNIX_EPOCH))
    });
    match t.strip_suffix('Z') {
        Some(s) => format!("{s}+00:00"),
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_by_its_fields() {
        assert_eq!(kind(&json!({"comparisons": []})), Kind::Comparison);
        assert_eq!(kind(&json!({"series": []})), Kind::History);
        assert_eq!(kind(&json!({"env_pad": {}, "points": []})), Kind::Sweep);
        let p = json!({"profile": "exact", "benchmarks": []});
        assert_eq!(kind(&p), Kind::Profile);
        let gb = json!({"context": {}, "benchmarks": [{"real_time": 1.0}]});
        assert_eq!(kind(&gb), Kind::GoogleBenchmark);
        assert_eq!(kind(&json!({"schema": 1, "benchmarks": []})), Kind::Result);
        // A result file that carries its comparison is a result file.
        let both = json!({"schema": 1, "benchmarks": [], "comparisons": []});
        assert_eq!(kind(&both), Kind::Result);
        assert_eq!(kind(&json!({"x": 1})), Kind::Unknown);
    }
}
