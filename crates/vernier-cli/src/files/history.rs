//! The history document (`vernier history --json`, docs/history.md): one series per benchmark
//! and machine, its points over commits and the change points found. `history` writes it and
//! the HTML report reads it, through these types; a reader takes files written by older
//! versions (fields added since are optional) and the nulls a failed run leaves.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryFile {
    pub series: Vec<Series>,
    /// The machines the series were measured on (fingerprint, CPU, kernel, audit).
    #[serde(default)]
    pub machines: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    /// The `--machine` name when one was given, else the fingerprint.
    #[serde(default)]
    pub machine: String,
    pub points: Vec<Point>,
    #[serde(default)]
    pub change_points: Vec<ChangePoint>,
    /// The unit the change points were found in (`cycles` or `ns`; their ratios are in it).
    #[serde(default)]
    pub unit: vernier::analyze::Unit,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub time: String,
    /// `null` for a run in which the benchmark failed.
    pub median_ns: Option<f64>,
    /// `[null, null]` (or `null`) when the stored run had no interval.
    #[serde(default, deserialize_with = "pair")]
    pub ci95_ns: [Option<f64>; 2],
    /// The run's own interval (what separates runs: change points are detected on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_ci95_ns: Option<[f64; 2]>,
    /// The time per iteration in cycles of the core at the time, where the run measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_iter: Option<f64>,
    /// Allocations and bytes requested per iteration, where the run counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs_per_iter: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_iter: Option<f64>,
    /// Instructions per iteration of a run counted under callgrind (`--instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_iter: Option<f64>,
    /// The run's row in the store.
    #[serde(default)]
    pub run: i64,
    #[serde(default)]
    pub status: String,
    /// The diagnostic codes the run had.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The run's identity (`--run-id`, or the CI's) and its attempt, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<i64>,
    /// A later attempt of the same run id saved this benchmark again on this machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub superseded: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    #[serde(default)]
    pub commit: Option<String>,
    pub ratio: f64,
    #[serde(default, deserialize_with = "pair")]
    pub ci95: [Option<f64>; 2],
    #[serde(default)]
    pub confidence: Option<f64>,
    /// The point at which the new segment starts (index into `points`), when written by a
    /// version that gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(default)]
    pub run: i64,
}

/// An interval that may be `null` as a whole or on either side.
fn pair<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[Option<f64>; 2], D::Error> {
    Ok(Option::<[Option<f64>; 2]>::deserialize(d)?.unwrap_or([None, None]))
}

impl Series {
    /// The point a change point starts at: by its index, else the first point of its commit.
    pub fn start_of(&self, c: &ChangePoint) -> Option<usize> {
        c.index
            .filter(|&i| i < self.points.len())
            .or_else(|| self.points.iter().position(|p| p.commit == c.commit))
    }
}

impl HistoryFile {
    /// The first thing wrong with the file, named so it can be found: a series without
    /// points, a median that is not a positive number (a failed run's `null` is allowed), a
    /// change point at no point of its series.
    pub fn check(&self) -> Result<(), String> {
        for s in &self.series {
            if s.points.is_empty() {
                return Err(format!("series {:?} has no points", s.name));
            }
            for (i, p) in s.points.iter().enumerate() {
                if let Some(m) = p.median_ns.filter(|m| !(m.is_finite() && *m > 0.0)) {
                    return Err(format!(
                        "series {:?}, points[{i}] (commit {:?}): median_ns is {m}, not a \
                         positive number",
                        s.name,
                        p.commit.as_deref().unwrap_or("none")
                    ));
                }
            }
            for c in &s.change_points {
                if s.start_of(c).is_none() {
                    return Err(format!(
                        "series {:?}: change point at commit {:?}, which none of its points has",
                        s.name,
                        c.commit.as_deref().unwrap_or("none")
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_run_and_an_older_file_read() {
        let v = json!({"series": [{"name": "a", "points": [
            {"commit": "c1", "branch": null, "time": "t", "median_ns": 2.0, "ci95_ns": [1.0, 3.0]},
            {"commit": null, "median_ns": null, "ci95_ns": [null, null], "status": "failed"},
            {"commit": "c3", "median_ns": 2.5, "ci95_ns": null}],
            "change_points": [{"commit": "c3", "ratio": 1.25, "ci95": [1.2, 1.3], "confidence": 0.99}]}]});
        let h: HistoryFile = serde_json::from_value(v).unwrap();
        h.check().unwrap();
        let s = &h.series[0];
        assert_eq!(s.points[1].median_ns, None);
        assert_eq!(s.points[2].ci95_ns, [None, None]);
        assert_eq!(s.start_of(&s.change_points[0]), Some(2));
        // What is written reads back the same.
        let again: HistoryFile = serde_json::from_value(serde_json::to_value(&h).unwrap()).unwrap();
        assert_eq!(again, h);
    }

    #[test]
    fn a_wrong_file_is_named() {
        let bad = |v: Value| {
            serde_json::from_value::<HistoryFile>(v)
                .unwrap()
                .check()
                .unwrap_err()
        };
        let e = bad(json!({"series": [{"name": "a", "points": [{"median_ns": -1.0}]}]}));
        assert!(
            e.contains("points[0]") && e.contains("not a positive number"),
            "{e}"
        );
        let e = bad(json!({"series": [{"name": "a", "points": []}]}));
        assert!(e.contains("no points"), "{e}");
        let e = bad(
            json!({"series": [{"name": "a", "points": [{"commit": "x", "median_ns": 1.0}],
                                       "change_points": [{"commit": "y", "ratio": 2.0}]}]}),
        );
        assert!(e.contains("\"y\""), "{e}");
    }
}
