//! The sweep document (`vernier sweep --json`, docs/experiments.md): each benchmark's median
//! per environment padding, and the swing and period found. `sweep` writes it and the HTML
//! report reads it, through these types; a figure the sweep could not measure is written as
//! `null` and read back as NaN. What a sweep does with them is in `commands/sweep/`.

use serde::{Deserialize, Deserializer, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepFile {
    #[serde(default = "one")]
    pub schema: u32,
    pub env_pad: Range,
    pub aslr: bool,
    pub points: Vec<Point>,
    #[serde(default)]
    pub summary: Vec<Summary>,
}

fn one() -> u32 {
    1
}

/// The paddings, in bytes: `start`, `start + step`, … up to `end`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub start: u64,
    pub end: u64,
    pub step: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub env_pad_bytes: u64,
    pub benchmarks: Vec<PointBench>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointBench {
    pub name: String,
    #[serde(deserialize_with = "nan_if_null")]
    pub median_ns: f64,
    #[serde(default = "nan_pair", deserialize_with = "nan_pair_if_null")]
    pub ci95_ns: [f64; 2],
    /// The median in cycles of the core at the time (each sample's time over the effective
    /// cycle time the probe measured around it), where the probe ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_iter: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_nan_pair_if_null"
    )]
    pub cycles_ci95: Option<[f64; 2]>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub name: String,
    /// (max − min) / min of the medians in ns.
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub swing: f64,
    /// The same in cycles, where every point has them: the swing the layout made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swing_cycles: Option<f64>,
    /// The period of the medians in cycles where known, else in ns.
    #[serde(default)]
    pub period_bytes: Option<u64>,
}

fn nan() -> f64 {
    f64::NAN
}

fn nan_pair() -> [f64; 2] {
    [f64::NAN; 2]
}

/// A number that is `null` when it was not finite (JSON has no NaN).
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// An interval that may be `null` as a whole or on either side.
fn nan_pair_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let v = Option::<[Option<f64>; 2]>::deserialize(d)?.unwrap_or([None, None]);
    Ok(v.map(|x| x.unwrap_or(f64::NAN)))
}

/// The same, absent when the field is.
fn some_nan_pair_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[f64; 2]>, D::Error> {
    nan_pair_if_null(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_is_written_reads_back_with_nulls_as_nan() {
        let file = SweepFile {
            schema: 1,
            env_pad: Range {
                start: 0,
                end: 64,
                step: 64,
            },
            aslr: false,
            points: vec![Point {
                env_pad_bytes: 64,
                benchmarks: vec![PointBench {
                    name: "a".into(),
                    median_ns: f64::NAN,
                    ci95_ns: [1.0, f64::NAN],
                    cycles_per_iter: Some(4.0),
                    cycles_ci95: Some([3.9, f64::NAN]),
                }],
            }],
            summary: vec![Summary {
                name: "a".into(),
                swing: f64::NAN,
                swing_cycles: None,
                period_bytes: None,
            }],
        };
        let v = serde_json::to_value(&file).unwrap();
        assert_eq!(v["points"][0]["benchmarks"][0]["median_ns"], json!(null));
        let back: SweepFile = serde_json::from_value(v).unwrap();
        let b = &back.points[0].benchmarks[0];
        assert!(b.median_ns.is_nan() && b.ci95_ns[0] == 1.0 && b.ci95_ns[1].is_nan());
        assert!(back.summary[0].swing.is_nan());
        assert!(b.cycles_ci95.is_some_and(|c| c[0] == 3.9 && c[1].is_nan()));
        // An older file without intervals or a summary reads too.
        let old = json!({"env_pad": {"start": 0, "end": 0, "step": 1}, "aslr": true,
                         "points": [{"env_pad_bytes": 0, "benchmarks": [{"name": "a", "median_ns": 2.0}]}]});
        let old: SweepFile = serde_json::from_value(old).unwrap();
        assert!(old.points[0].benchmarks[0].ci95_ns[0].is_nan() && old.summary.is_empty());
    }
}
