//! The history file (`vernier history --json`, as docs/history.md gives it) as the report reads it: one
//! series per benchmark and machine, its points over commits and the change points found.
//! Fields the report does not need are ignored; text fields may be missing.

use serde::Deserialize;

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct History {
    pub series: Vec<Series>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Series {
    pub name: String,
    #[serde(default)]
    pub machine: String,
    pub points: Vec<HistoryPoint>,
    #[serde(default)]
    pub change_points: Vec<ChangePoint>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct HistoryPoint {
    #[serde(default)]
    pub commit: String,
    #[serde(default)]
    pub branch: String,
    #[serde(default)]
    pub time: String,
    pub median_ns: f64,
    /// `null` when the stored run had no interval.
    #[serde(default)]
    pub ci95_ns: Option<[f64; 2]>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ChangePoint {
    pub commit: String,
    pub ratio: f64,
    #[serde(default)]
    pub ci95: Option<[f64; 2]>,
    #[serde(default)]
    pub confidence: Option<f64>,
}

impl History {
    /// The first thing wrong with the file, named so it can be found: a series without
    /// points, a median that is not a positive number, a change point at an unknown commit.
    pub fn check(&self) -> Result<(), String> {
        for s in &self.series {
            if s.points.is_empty() {
                return Err(format!("series {:?} has no points", s.name));
            }
            for (i, p) in s.points.iter().enumerate() {
                if !(p.median_ns.is_finite() && p.median_ns > 0.0) {
                    return Err(format!(
                        "series {:?}, points[{i}] (commit {:?}): median_ns is {}, not a positive number",
                        s.name, p.commit, p.median_ns
                    ));
                }
            }
            for c in &s.change_points {
                if !s.points.iter().any(|p| p.commit == c.commit) {
                    return Err(format!(
                        "series {:?}: change point at commit {:?}, which none of its points has",
                        s.name, c.commit
                    ));
                }
            }
        }
        Ok(())
    }
}
