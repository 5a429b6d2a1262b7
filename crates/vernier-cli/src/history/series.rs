//! Stored rows → one series per benchmark and machine → its change points.
//!
//! A series holds one benchmark's runs on one machine (runs of different machines are never
//! put in one series). Its order is the order of commits: a commit takes the place of its
//! first saved run, and every run of that commit (re-runs saved later included) sits there,
//! in the order saved. A run without a commit is a place of its own, by time.

use super::changepoint::{self, ChangePoint};
use super::store::StoredPoint;
use crate::files::history::{self as doc, HistoryFile};
use serde_json::Value;
use std::collections::BTreeMap;

/// The diagnostic code of runs shown but not used as evidence of a change.
pub const CORE_SLOWED: &str = "core-slowed";
/// The code of runs measured with the core shared by a neighbour: not evidence of a change in
/// either unit (a neighbour moves the cycles of throughput-bound code as well as its time).
pub const CORE_SHARED: &str = "core-shared";

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub machine: String,
    pub points: Vec<StoredPoint>,
    pub change_points: Vec<ChangePoint>,
    /// The unit its change points were found in: `cycles` when most of its usable runs were
    /// judged in cycles (and every such run has them), else `ns`.
    pub unit: vernier::analyze::Unit,
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
        Self::measured(p)
            && p.bench.median_ns.is_some_and(|m| m.is_finite() && m > 0.0)
            && !p.bench.flags.split(',').any(|f| f == CORE_SLOWED)
            && !Self::shared(p)
    }

    /// Measured with the core shared by a neighbour (`core-shared`).
    fn shared(p: &StoredPoint) -> bool {
        p.bench.flags.split(',').any(|f| f == CORE_SHARED)
    }

    /// Measured, and not replaced by a later save of the same run.
    fn measured(p: &StoredPoint) -> bool {
        p.bench.status == "ok" && !p.superseded
    }

    /// Whether the point may be evidence in `unit`: in cycles, a run on a slowed core is
    /// (its cycles are what the slowing does not touch), in ns it is not.
    pub fn usable_in(p: &StoredPoint, unit: vernier::analyze::Unit) -> bool {
        match unit {
            vernier::analyze::Unit::Instructions => {
                Self::measured(p) && p.bench.instructions_per_iter.is_some_and(f64::is_finite)
            }
            vernier::analyze::Unit::Cycles => {
                Self::measured(p)
                    && !Self::shared(p)
                    && p.bench
                        .cycles_per_iter
                        .is_some_and(|c| c.is_finite() && c > 0.0)
            }
            vernier::analyze::Unit::Ns => Self::usable(p),
        }
    }

    /// The point's median in `unit` (cycles per iteration, or ns).
    pub fn median_in(p: &StoredPoint, unit: vernier::analyze::Unit) -> Option<f64> {
        match unit {
            vernier::analyze::Unit::Cycles => p.bench.cycles_per_iter,
            vernier::analyze::Unit::Ns => p.bench.median_ns,
            vernier::analyze::Unit::Instructions => p.bench.instructions_per_iter,
        }
    }

    /// The unit a series of these points is judged in: cycles when more than half of its
    /// usable points were judged in cycles by their runs, else ns (rows saved before the store
    /// kept the unit are ns).
    pub fn unit_of(points: &[StoredPoint]) -> vernier::analyze::Unit {
        if points.iter().any(counted) {
            return vernier::analyze::Unit::Instructions;
        }
        let usable: Vec<&StoredPoint> = points.iter().filter(|p| Self::usable(p)).collect();
        let in_cycles = usable
            .iter()
            .filter(|p| {
                p.bench.unit.as_deref() == Some("cycles") && p.bench.cycles_per_iter.is_some()
            })
            .count();
        if !usable.is_empty() && 2 * in_cycles > usable.len() {
            vernier::analyze::Unit::Cycles
        } else {
            vernier::analyze::Unit::Ns
        }
    }

    /// A point as the change-point search reads it, in `unit`: its median and the run's own
    /// interval (in cycles: the stored one, else the interval in ns scaled to the cycles).
    pub fn in_unit(p: &StoredPoint, unit: vernier::analyze::Unit) -> changepoint::Point {
        let b = &p.bench;
        let own = b.own_ci95_ns();
        match (unit, b.cycles_per_iter) {
            (vernier::analyze::Unit::Cycles, Some(c)) => {
                let scale = c / b.median_ns.unwrap_or(f64::NAN);
                let ci = match b.cycles_run_ci95 {
                    [Some(lo), Some(hi)] => [lo, hi],
                    _ => [own[0] * scale, own[1] * scale],
                };
                changepoint::Point {
                    median_ns: c,
                    ci95_ns: ci,
                    usable: Self::usable_in(p, vernier::analyze::Unit::Cycles),
                }
            }
            (vernier::analyze::Unit::Cycles, None) => changepoint::Point {
                median_ns: f64::NAN,
                ci95_ns: [f64::NAN; 2],
                usable: false,
            },
            (vernier::analyze::Unit::Instructions, _) => changepoint::Point {
                median_ns: b.instructions_per_iter.unwrap_or(f64::NAN),
                ci95_ns: [b.instructions_per_iter.unwrap_or(f64::NAN); 2],
                usable: Self::usable_in(p, vernier::analyze::Unit::Instructions),
            },
            (vernier::analyze::Unit::Ns, _) => changepoint::Point {
                median_ns: b.median_ns.unwrap_or(f64::NAN),
                ci95_ns: own,
                usable: Self::usable(p),
            },
        }
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

/// Whether `p` was counted under callgrind (`--instructions`): such runs form series of their
/// own, apart from the same benchmark's timed runs.
pub fn counted(p: &StoredPoint) -> bool {
    p.bench.unit.as_deref() == Some("instructions")
}

/// Whether `p` is of the machine `m`: its fleet name, or a prefix of its fingerprint.
pub fn of_machine(p: &StoredPoint, m: &str) -> bool {
    p.machine == m || p.machine_id.starts_with(m)
}

/// Every series of the stored rows whose benchmark matches `filter` and whose machine (its
/// fleet name, or a prefix of its fingerprint) is `machine`, sorted by name then machine, with
/// their change points. A machine is its `--machine` name when it was given one, else its
/// fingerprint. A point saved again by a later attempt of the same run id, or again by the
/// same attempt (a PostgreSQL store keeps both rows), is marked superseded.
pub fn build(
    mut rows: Vec<StoredPoint>,
    filter: Option<&regex::Regex>,
    machine: Option<&str>,
) -> Vec<Series> {
    // The newest save of each run identity's benchmark: its latest attempt, and of that
    // attempt the latest save (a PostgreSQL store keeps a retried job's earlier rows).
    let mut newest: BTreeMap<(&str, &str, &str), (i64, i64)> = BTreeMap::new();
    for p in &rows {
        if let (Some(k), Some(a)) = (p.run_key.as_deref(), p.attempt) {
            let e = newest
                .entry((k, &p.machine, &p.bench.name))
                .or_insert((a, p.run_id));
            *e = (*e).max((a, p.run_id));
        }
    }
    let superseded: Vec<bool> = rows
        .iter()
        .map(|p| match (p.run_key.as_deref(), p.attempt) {
            (Some(k), Some(a)) => {
                newest[&(k, p.machine.as_str(), p.bench.name.as_str())] > (a, p.run_id)
            }
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
    let mut groups: BTreeMap<(String, String, bool), Vec<StoredPoint>> = BTreeMap::new();
    for p in &rows {
        if filter.is_some_and(|re| !re.is_match(&p.bench.name)) {
            continue;
        }
        if machine.is_some_and(|m| !of_machine(p, m)) {
            continue;
        }
        groups
            .entry((p.bench.name.clone(), p.machine.clone(), counted(p)))
            .or_default()
            .push(p.clone());
    }
    groups
        .into_iter()
        .map(|((name, machine, _), mut points)| {
            points.sort_by_key(|p| place(p));
            let unit = Series::unit_of(&points);
            let series: Vec<changepoint::Point> =
                points.iter().map(|p| Series::in_unit(p, unit)).collect();
            // Counts repeat exactly: any change of at least the threshold is one.
            let cps = if unit == vernier::analyze::Unit::Instructions {
                changepoint::detect_exact(&series, changepoint::EXACT_THRESHOLD)
            } else {
                changepoint::detect(&series)
            };
            Series {
                name,
                machine,
                points,
                change_points: cps,
                unit,
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
    newest_after(s, last).then_some(last)
}

/// Whether every usable run of the series' newest commit (and at least one) sits in the
/// segment the change point `c` opens.
pub fn newest_after(s: &Series, c: &ChangePoint) -> bool {
    let Some((_, runs)) = s.newest_commit() else {
        return false;
    };
    let usable: Vec<usize> = runs
        .into_iter()
        .filter(|&i| Series::usable_in(&s.points[i], s.unit))
        .collect();
    !usable.is_empty() && usable.iter().all(|&i| i >= c.index)
}

fn num(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite())
}

/// The contract's `history --json` document (with a few added fields: each point's `run`,
/// `status` and `flags`, each change point's `index` and `run`, and the machines).
pub fn to_json(series: &[Series], machines: Value) -> HistoryFile {
    let series = series
        .iter()
        .map(|s| doc::Series {
            name: s.name.clone(),
            machine: s.machine.clone(),
            unit: s.unit,
            points: s
                .points
                .iter()
                .map(|p| doc::Point {
                    commit: p.commit.clone(),
                    branch: p.branch.clone(),
                    time: p.time.clone(),
                    median_ns: num(p.bench.median_ns),
                    ci95_ns: [num(p.bench.ci95_lo_ns), num(p.bench.ci95_hi_ns)],
                    run_ci95_ns: match p.bench.run_ci95_ns.map(num) {
                        [Some(lo), Some(hi)] => Some([lo, hi]),
                        _ => None,
                    },
                    cycles_per_iter: num(p.bench.cycles_per_iter),
                    allocs_per_iter: num(p.bench.memory[0]),
                    bytes_per_iter: num(p.bench.memory[1]),
                    instructions_per_iter: num(p.bench.instructions_per_iter),
                    run: p.run_id,
                    status: p.bench.status.clone(),
                    flags: p
                        .bench
                        .flags
                        .split(',')
                        .filter(|f| !f.is_empty())
                        .map(str::to_string)
                        .collect(),
                    run_id: p.run_key.clone(),
                    attempt: p.run_key.as_ref().and(p.attempt),
                    superseded: p.superseded,
                })
                .collect(),
            change_points: s
                .change_points
                .iter()
                .map(|c| doc::ChangePoint {
                    commit: s.points[c.index].commit.clone(),
                    ratio: c.ratio,
                    ci95: c.ci95.map(Some),
                    confidence: Some(c.confidence),
                    index: Some(c.index),
                    run: s.points[c.index].run_id,
                })
                .collect(),
        })
        .collect();
    HistoryFile { series, machines }
}
