//! Stored rows → one series per benchmark and machine → its change points.
//!
//! A series holds one benchmark's runs on one machine (runs of different machines are never
//! put in one series). Its order is the order of commits: a commit takes the place of its
//! first saved run, and every run of that commit (re-runs saved later included) sits there,
//! in the order saved. A run without a commit is a place of its own, by time.

use super::changepoint::{self, ChangePoint};
use super::store::StoredPoint;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The diagnostic code of runs shown but not used as evidence of a change.
pub const CORE_SLOWED: &str = "core-slowed";

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub machine: String,
    pub points: Vec<StoredPoint>,
    pub change_points: Vec<ChangePoint>,
}

/// More allocations per iteration at the series' newest point than at the point before it
/// (counts are exact: any increase is one): (before, now, index of the newest point).
pub fn more_allocations(s: &Series) -> Option<(f64, f64, usize)> {
    let counted: Vec<(usize, f64)> = s
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.bench.status == "ok")
        .filter_map(|(i, p)| Some((i, p.bench.memory[0]?)))
        .collect();
    let [.., (_, before), (i, now)] = counted[..] else {
        return None;
    };
    (now > before).then_some((before, now, i))
}

impl Series {
    /// Whether the point may be evidence: measured, and not on a slowed core.
    pub fn usable(p: &StoredPoint) -> bool {
        p.bench.status == "ok"
            && !p.superseded
            && p.bench.median_ns.is_some_and(|m| m.is_finite() && m > 0.0)
            && !p.bench.flags.split(',').any(|f| f == CORE_SLOWED)
    }

    /// The commit of the newest place in the series, and the indices of its runs.
    pub fn newest_commit(&self) -> Option<(Option<&str>, Vec<usize>)> {
        let last = self.points.last()?;
        let c = last.commit.as_deref();
        let idx = (0..self.points.len())
            .filter(|&i| match c {
                Some(c) => self.points[i].commit.as_deref() == Some(c),
                None => self.points[i].run_id == last.run_id,
            })
            .collect();
        Some((c, idx))
    }
}

/// Whether `p` is of the machine `m`: its fleet name, or a prefix of its fingerprint.
pub fn of_machine(p: &StoredPoint, m: &str) -> bool {
    p.machine == m || p.machine_id.starts_with(m)
}

/// Every series of the stored rows whose benchmark matches `filter` and whose machine (its
/// fleet name, or a prefix of its fingerprint) is `machine`, sorted by name then machine, with
/// their change points. A machine is its `--machine` name when it was given one, else its
/// fingerprint. A point saved again by a later attempt of the same run id is marked
/// superseded.
pub fn build(
    mut rows: Vec<StoredPoint>,
    filter: Option<&regex::Regex>,
    machine: Option<&str>,
) -> Vec<Series> {
    let mut newest: BTreeMap<(&str, &str, &str), i64> = BTreeMap::new();
    for p in &rows {
        if let (Some(k), Some(a)) = (p.run_key.as_deref(), p.attempt) {
            let e = newest.entry((k, &p.machine, &p.bench.name)).or_insert(a);
            *e = (*e).max(a);
        }
    }
    let superseded: Vec<bool> = rows
        .iter()
        .map(|p| match (p.run_key.as_deref(), p.attempt) {
            (Some(k), Some(a)) => newest[&(k, p.machine.as_str(), p.bench.name.as_str())] > a,
            _ => false,
        })
        .collect();
    for (p, s) in rows.iter_mut().zip(superseded) {
        p.superseded = s;
    }
    // Where each commit sits: its first run.
    let mut first: BTreeMap<&str, i64> = BTreeMap::new();
    for p in &rows {
        if let Some(c) = &p.commit {
            first.entry(c.as_str()).or_insert(p.run_id);
        }
    }
    let place = |p: &StoredPoint| {
        (
            p.commit
                .as_deref()
                .and_then(|c| first.get(c).copied())
                .unwrap_or(p.run_id),
            p.run_id,
        )
    };
    let mut groups: BTreeMap<(String, String), Vec<StoredPoint>> = BTreeMap::new();
    for p in &rows {
        if filter.is_some_and(|re| !re.is_match(&p.bench.name)) {
            continue;
        }
        if machine.is_some_and(|m| !of_machine(p, m)) {
            continue;
        }
        groups
            .entry((p.bench.name.clone(), p.machine.clone()))
            .or_default()
            .push(p.clone());
    }
    groups
        .into_iter()
        .map(|((name, machine), mut points)| {
            points.sort_by_key(|p| place(p));
            let cps = changepoint::detect(
                &points
                    .iter()
                    .map(|p| changepoint::Point {
                        median_ns: p.bench.median_ns.unwrap_or(f64::NAN),
                        ci95_ns: p.bench.own_ci95_ns(),
                        usable: Series::usable(p),
                    })
                    .collect::<Vec<_>>(),
            );
            Series {
                name,
                machine,
                points,
                change_points: cps,
            }
        })
        .collect()
}

/// A confident slowdown the newest commit's runs sit after: the last change point of the
/// series, a slowdown whose whole interval lies above 1, with every usable run of the newest
/// commit in the segment it opens.
pub fn regression(s: &Series) -> Option<&ChangePoint> {
    let last = s.change_points.last()?;
    if !(last.ratio > 1.0 && last.ci95[0] > 1.0) {
        return None;
    }
    let (_, runs) = s.newest_commit()?;
    let usable: Vec<usize> = runs
        .into_iter()
        .filter(|&i| Series::usable(&s.points[i]))
        .collect();
    (!usable.is_empty() && usable.iter().all(|&i| i >= last.index)).then_some(last)
}

/// The contract's `history --json` document (with a few added fields: each point's `run`,
/// `status` and `flags`, each change point's `index` and `run`, and the machines).
#[derive(Serialize)]
pub struct HistoryJson<'a> {
    pub series: Vec<SeriesJson<'a>>,
    pub machines: Value,
}

#[derive(Serialize)]
pub struct SeriesJson<'a> {
    name: &'a str,
    machine: &'a str,
    points: Vec<PointJson<'a>>,
    change_points: Vec<ChangeJson<'a>>,
}

#[derive(Serialize)]
struct PointJson<'a> {
    commit: Option<&'a str>,
    branch: Option<&'a str>,
    time: &'a str,
    median_ns: Option<f64>,
    ci95_ns: [Option<f64>; 2],
    /// The run's own interval (what separates runs: change points are detected on it).
    #[serde(skip_serializing_if = "Option::is_none")]
    run_ci95_ns: Option<[f64; 2]>,
    run: i64,
    status: &'a str,
    flags: Vec<&'a str>,
    /// The run's identity (`--run-id`, or the CI's) and its attempt, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<i64>,
    /// A later attempt of the same run id saved this benchmark again on this machine.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    superseded: bool,
}

#[derive(Serialize)]
struct ChangeJson<'a> {
    commit: Option<&'a str>,
    ratio: f64,
    ci95: [f64; 2],
    confidence: f64,
    index: usize,
    run: i64,
}

fn num(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite())
}

pub fn to_json(series: &[Series], machines: Value) -> HistoryJson<'_> {
    let series = series
        .iter()
        .map(|s| SeriesJson {
            name: &s.name,
            machine: &s.machine,
            points: s
                .points
                .iter()
                .map(|p| PointJson {
                    commit: p.commit.as_deref(),
                    branch: p.branch.as_deref(),
                    time: &p.time,
                    median_ns: num(p.bench.median_ns),
                    ci95_ns: [num(p.bench.ci95_lo_ns), num(p.bench.ci95_hi_ns)],
                    run_ci95_ns: match p.bench.run_ci95_ns.map(num) {
                        [Some(lo), Some(hi)] => Some([lo, hi]),
                        _ => None,
                    },
                    run: p.run_id,
                    status: &p.bench.status,
                    flags: p.bench.flags.split(',').filter(|f| !f.is_empty()).collect(),
                    run_id: p.run_key.as_deref(),
                    attempt: p.run_key.as_ref().and(p.attempt),
                    superseded: p.superseded,
                })
                .collect(),
            change_points: s
                .change_points
                .iter()
                .map(|c| ChangeJson {
                    commit: s.points[c.index].commit.as_deref(),
                    ratio: c.ratio,
                    ci95: c.ci95,
                    confidence: c.confidence,
                    index: c.index,
                    run: s.points[c.index].run_id,
                })
                .collect(),
        })
        .collect();
    HistoryJson { series, machines }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::store::BenchRow;

    fn row(run: i64, commit: &str, machine: &str, median: f64, flags: &str) -> StoredPoint {
        StoredPoint {
            run_id: run,
            time: format!("2026-01-01T00:00:{run:02}Z"),
            commit: Some(commit.into()),
            branch: Some("main".into()),
            machine_id: machine.into(),
            bench: BenchRow {
                name: "add".into(),
                status: "ok".into(),
                median_ns: Some(median),
                ci95_lo_ns: Some(median * 0.998),
                ci95_hi_ns: Some(median * 1.002),
                run_ci95_ns: [Some(median * 0.998), Some(median * 1.002)],
                flags: flags.into(),
                cycles_per_iter: None,
                memory: [None, None],
            },
            machine: machine.into(),
            run_key: None,
            attempt: None,
            superseded: false,
        }
    }

    /// Seven runs with a 5 % step as the speed file makes them: medians within 1 % on each
    /// side, each run's own interval ±0.2 %, the headline one joined to a clock range of
    /// +9 % (a clock that moves between runs). Detected on the runs' own intervals: one
    /// change point, at c5; on the headline ones the step drowns.
    #[test]
    fn a_step_is_detected_on_the_runs_own_intervals_not_the_clock_widened_ones() {
        let m = [100.0, 100.6, 99.7, 100.3, 105.2, 104.8, 105.4];
        let rows: Vec<StoredPoint> = (0..7)
            .map(|i| {
                let mut r = row(i as i64 + 1, &format!("c{}", i + 1), "m", m[i], "");
                r.bench.ci95_lo_ns = Some(m[i] * 0.997);
                r.bench.ci95_hi_ns = Some(m[i] * 1.09);
                r
            })
            .collect();
        let s = build(rows.clone(), None, None);
        assert_eq!(s[0].change_points.len(), 1, "{:?}", s[0].change_points);
        assert_eq!(
            s[0].points[s[0].change_points[0].index].commit.as_deref(),
            Some("c5")
        );
        // Rows saved before the store kept the run's own interval: the headline one stands.
        let old: Vec<StoredPoint> = rows
            .into_iter()
            .map(|mut r| {
                r.bench.run_ci95_ns = [None, None];
                r
            })
            .collect();
        assert!(build(old, None, None)[0].change_points.is_empty());
    }

    fn step() -> Vec<StoredPoint> {
        let m = [100.0, 100.5, 99.6, 100.2, 110.3, 109.8, 110.1];
        (0..7)
            .map(|i| row(i as i64 + 1, &format!("c{}", i + 1), "m1", m[i], ""))
            .collect()
    }

    #[test]
    fn machines_are_never_mixed() {
        let mut rows = step();
        rows.extend((0..7).map(|i| {
            row(
                100 + i,
                &format!("c{}", i + 1),
                "m2",
                50.0 + i as f64 * 0.01,
                "",
            )
        }));
        let s = build(rows, None, None);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].machine, "m1");
        assert_eq!(s[0].points.len(), 7);
        assert_eq!(s[0].change_points.len(), 1);
        assert!(s[1].change_points.is_empty());
        assert!(regression(&s[0]).is_some());
        assert!(regression(&s[1]).is_none());
        let only = build(step(), None, Some("m2"));
        assert!(only.is_empty());
    }

    #[test]
    fn a_rerun_of_an_old_commit_sits_with_its_commit() {
        let mut rows = step();
        // c2 run again after c7: it belongs before c3, not at the end.
        rows.push(row(8, "c2", "m1", 100.1, ""));
        let s = &build(rows, None, None)[0];
        let order: Vec<&str> = s
            .points
            .iter()
            .map(|p| p.commit.as_deref().unwrap())
            .collect();
        assert_eq!(order, ["c1", "c2", "c2", "c3", "c4", "c5", "c6", "c7"]);
        assert_eq!(
            s.points[s.change_points[0].index].commit.as_deref(),
            Some("c5")
        );
        assert!(regression(s).is_some());
    }

    #[test]
    fn a_fix_ends_the_regression() {
        let mut rows = step();
        rows.extend(
            (8..11).map(|i| row(i, &format!("c{i}"), "m1", 100.0 + (i % 2) as f64 * 0.3, "")),
        );
        let s = &build(rows, None, None)[0];
        assert_eq!(s.change_points.len(), 2, "{:?}", s.change_points);
        assert!(regression(s).is_none());
    }

    #[test]
    fn slowed_newest_runs_do_not_fail_the_check() {
        let mut rows: Vec<StoredPoint> = step().into_iter().take(4).collect();
        rows.extend((5..8).map(|i| row(i, &format!("c{i}"), "m1", 180.0, CORE_SLOWED)));
        let s = &build(rows, None, None)[0];
        assert!(s.change_points.is_empty());
        assert!(regression(s).is_none());
        let j = serde_json::to_value(to_json(std::slice::from_ref(s), Value::Null)).unwrap();
        assert_eq!(j["series"][0]["points"][6]["flags"][0], CORE_SLOWED);
    }
}
