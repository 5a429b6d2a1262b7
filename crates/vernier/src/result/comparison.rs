//! The comparison file (`compare --json`, schema 1): every comparison, the failures, the
//! benchmarks only one side has, the geometric mean, and the multiple-testing correction that
//! sets each verdict.

use crate::analyze::pairs::{comparison_from_pair, Comparison};
pub use crate::analyze::pairs::{Code, CodeDetail};
use crate::measure::compare::PairMeasurement;
use crate::result::Tool;
use crate::stats::compare::{self, Mode, Verdict};
use serde::{Deserialize, Serialize};

/// Schema of the comparison file.
pub const SCHEMA: u32 = 1;

/// A benchmark that could not be compared, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub name: String,
    pub error: String,
}

/// The comparison file, schema 1 (`compare --json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonFile {
    pub schema: u32,
    pub mode: Mode,
    pub comparisons: Vec<Comparison>,
    /// Geometric mean of the ratios (`null` when nothing was compared).
    pub geomean_ratio: Option<f64>,
    pub geomean_ci95: Option<[f64; 2]>,
    pub threshold: f64,
    pub alpha: f64,
    /// Multiple-testing correction of `p_value`: `holm`.
    pub correction: String,
    #[serde(default)]
    pub failed: Vec<Failure>,
    /// Benchmarks only one side has (not compared).
    #[serde(default)]
    pub only_old: Vec<String>,
    #[serde(default)]
    pub only_new: Vec<String>,
    #[serde(default)]
    pub old: String,
    #[serde(default)]
    pub new: String,
    /// `vernier exec`: the unit the commands were compared in, and every run of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<crate::result::exec::Comparison>,
    pub tool: Tool,
}

impl ComparisonFile {
    pub fn new(mode: Mode, threshold: f64) -> ComparisonFile {
        ComparisonFile {
            schema: SCHEMA,
            mode,
            comparisons: Vec::new(),
            geomean_ratio: None,
            geomean_ci95: None,
            threshold,
            alpha: compare::ALPHA,
            correction: "holm".into(),
            failed: Vec::new(),
            only_old: Vec::new(),
            only_new: Vec::new(),
            old: String::new(),
            new: String::new(),
            exec: None,
            tool: Tool::default(),
        }
    }

    /// Adjust the p-values of all comparisons so far (Holm), redo every verdict and the
    /// geometric mean. Called after each comparison, so a file written part-way is coherent.
    pub fn finalize(&mut self) {
        let raw: Vec<f64> = self.comparisons.iter().map(|c| c.p_value_raw).collect();
        let adj = compare::holm(&raw);
        for (c, p) in self.comparisons.iter_mut().zip(adj) {
            c.p_value = p;
            c.verdict = compare::verdict(c.ratio, (c.ci95[0], c.ci95[1]), p, self.threshold);
            // Pairs that show layout states but are too few to have sampled them say nothing
            // of the states they missed: no verdict until the average can be judged.
            if c.layout_states.is_some_and(|s| !s.averaged) {
                c.verdict = Verdict::Inconclusive;
            }
            let plan = crate::analyze::pairs::layout_plan(c, self.threshold);
            if let Some(st) = c.layout_states.as_mut() {
                st.plan = plan;
            }
        }
        let items: Vec<(f64, (f64, f64))> = self
            .comparisons
            .iter()
            .map(|c| (c.ratio, (c.ci95[0], c.ci95[1])))
            .collect();
        let g = compare::geomean(&items);
        self.geomean_ratio = g.map(|g| g.ratio);
        self.geomean_ci95 = g.map(|g| [g.ci95.0, g.ci95.1]);
    }

    /// Add the outcome of a paired measurement (a comparison, or a failure).
    pub fn push_paired(&mut self, name: &str, m: &PairMeasurement, keep_samples: bool) {
        match comparison_from_pair(name, m, keep_samples) {
            Ok(c) => self.comparisons.push(c),
            Err(error) => self.failed.push(Failure {
                name: name.into(),
                error,
            }),
        }
        self.finalize();
    }

    /// The `slower` verdicts that count as regressions: those whose code is not known to be
    /// the same in OLD and NEW (with the same code, the difference is where it sits).
    pub fn regressions(&self) -> impl Iterator<Item = &Comparison> {
        self.comparisons
            .iter()
            .filter(|c| c.verdict == Verdict::Slower && c.code != Some(Code::Same))
    }

    /// Any regression (see [`regressions`](Self::regressions))?
    pub fn has_regression(&self) -> bool {
        self.regressions().next().is_some()
    }

    /// Write atomically (temporary file + rename).
    pub fn write_atomic(&self, path: &std::path::Path) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::result::write_atomic(path, &json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(name: &str, ratio: f64, ci95: [f64; 2], p: f64) -> Comparison {
        Comparison {
            name: name.into(),
            ratio,
            ci95,
            p_value: p,
            verdict: Verdict::NoChange,
            seconds: 1.0,
            p_value_raw: p,
            sign_p_value: None,
            pairs: 100,
            warmup_pairs: 0,
            warmup: None,
            iters_per_sample: [1, 1],
            old_median_ns: 1.0,
            new_median_ns: ratio,
            stop: "budget".into(),
            ..Comparison::default()
        }
    }

    #[test]
    fn holm_applies_across_the_file() {
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        for (i, p) in [0.03, 0.001].into_iter().enumerate() {
            f.comparisons
                .push(comparison(&format!("b{i}"), 1.02, [1.01, 1.03], p));
        }
        f.finalize();
        // 0.001·2 = 0.002 (slower); max(0.03·1, 0.002) = 0.03 stays under 0.05 (slower).
        assert_eq!(f.comparisons[1].p_value, 0.002);
        assert_eq!(f.comparisons[0].verdict, Verdict::Slower);
        f.comparisons[0].p_value_raw = 0.06;
        f.finalize();
        // No longer significant, and the interval [1.01, 1.03] is not within ±0.5 %.
        assert_eq!(f.comparisons[0].verdict, Verdict::Inconclusive);
        // The JSON has the contract's names.
        let v: serde_json::Value = serde_json::to_value(&f).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["mode"], "paired");
        assert_eq!(v["comparisons"][0]["verdict"], "inconclusive");
        assert_eq!(v["comparisons"][1]["verdict"], "slower");
        for k in ["name", "ratio", "ci95", "p_value", "verdict", "seconds"] {
            assert!(v["comparisons"][0].get(k).is_some(), "{k}");
        }
        assert!(v["geomean_ratio"].as_f64().is_some());
    }

    #[test]
    fn a_slower_verdict_on_the_same_code_is_not_a_regression() {
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        f.comparisons
            .push(comparison("sort", 1.016, [1.01, 1.022], 0.001));
        f.comparisons
            .push(comparison("mix", 4.0, [3.9, 4.1], 0.0001));
        f.comparisons[0].code = Some(Code::Same);
        f.comparisons[1].code = Some(Code::Changed);
        f.finalize();
        // The verdict stays what the interval says; the code says where it comes from.
        assert_eq!(f.comparisons[0].verdict, Verdict::Slower);
        let names: Vec<&str> = f.regressions().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["mix"]);
        f.comparisons.pop();
        assert!(!f.has_regression());
        // Code not compared (or not known) counts as before.
        f.comparisons[0].code = Some(Code::Unknown);
        assert!(f.has_regression());
        f.comparisons[0].code = None;
        assert!(f.has_regression());
        let v: serde_json::Value = serde_json::to_value(&f).unwrap();
        assert!(v["comparisons"][0].get("code").is_none());
        f.comparisons[0].code = Some(Code::Same);
        let v: serde_json::Value = serde_json::to_value(&f).unwrap();
        assert_eq!(v["comparisons"][0]["code"], "same");
    }
}
