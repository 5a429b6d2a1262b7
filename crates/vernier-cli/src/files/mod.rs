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

/// The time of the file's last modification, as ISO 8601 in UTC (the date the formats of other
/// tools carry: Google Benchmark writes the local date and time of the run; the result file's
/// own time is the closest it records).
pub fn modified_utc(path: &std::path::Path) -> String {
    let secs = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
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
