//! The fleet's view of the store: `history --fleet --commit C` (which machines and shards
//! saved for a commit, which are missing) and `history --machines` (each benchmark's newest
//! figure on every machine, side by side). See `docs/fleet.md`.

use super::series::Series;
use super::store::RunSummary;
use std::collections::{BTreeMap, BTreeSet};
use vernier::report::{pad, text_width};

/// Exit status when a machine or a shard expected for the commit is missing.
pub const EXIT_INCOMPLETE: i32 = 2;

/// One machine's saves for a commit.
#[derive(Debug, Default)]
struct MachineAtCommit {
    /// Shards saved (`K/N`), and whether a run without a shard (the whole suite) was.
    shards: BTreeSet<(u64, u64)>,
    whole: bool,
    benchmarks: i64,
    attempts: BTreeSet<i64>,
}

/// The machines `--machines` lists, else every machine seen (sorted, once each).
fn listed_or_all<'a>(
    listed: Option<&[String]>,
    seen: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    match listed {
        Some(list) if !list.is_empty() => list.to_vec(),
        _ => seen.cloned().collect::<BTreeSet<_>>().into_iter().collect(),
    }
}

fn parse_shard(s: &str) -> Option<(u64, u64)> {
    let sh = vernier::shard::Shard::parse(s).ok()?;
    Some((sh.index, sh.count))
}

/// Prints which machines (the `expected` ones, else every machine that ever saved) and shards
/// saved for the commit starting with `commit`, and which are missing; the exit status.
pub fn fleet_report(runs: &[RunSummary], commit: &str, expected: Option<&[String]>) -> i32 {
    // A save again by the same identity (a retried job into a PostgreSQL store, which keeps
    // the earlier rows) stands in for the earlier one.
    let newest: BTreeMap<_, i64> = runs
        .iter()
        .filter_map(|r| {
            Some((
                (r.run_key.as_deref()?, r.attempt, &r.machine, &r.shard),
                r.run_id,
            ))
        })
        .collect();
    let at: Vec<&RunSummary> = runs
        .iter()
        .filter(|r| r.commit.as_deref().is_some_and(|c| c.starts_with(commit)))
        .filter(|r| match r.run_key.as_deref() {
            Some(k) => newest[&(k, r.attempt, &r.machine, &r.shard)] == r.run_id,
            None => true,
        })
        .collect();
    let machines = listed_or_all(expected, runs.iter().map(|r| &r.machine));
    let mut seen: BTreeMap<&str, MachineAtCommit> = BTreeMap::new();
    for r in &at {
        let m = seen.entry(r.machine.as_str()).or_default();
        match r.shard.as_deref().and_then(parse_shard) {
            Some(s) => {
                m.shards.insert(s);
            }
            None => m.whole = true,
        }
        m.benchmarks += r.benchmarks;
        m.attempts.extend(r.attempt);
    }
    // The shard counts the fleet used for this commit.
    let counts: BTreeSet<u64> = seen
        .values()
        .flat_map(|m| m.shards.iter().map(|s| s.1))
        .collect();
    println!(
        "fleet at commit {commit}: {} machine(s) expected{}",
        machines.len(),
        match counts.iter().map(|n| n.to_string()).collect::<Vec<_>>() {
            v if v.is_empty() => String::new(),
            v => format!(", in {} shards", v.join(" or ")),
        }
    );
    let mut missing: Vec<String> = Vec::new();
    for name in &machines {
        let Some(m) = seen.get(name.as_str()) else {
            println!("  {name}: MISSING: no run saved for this commit");
            missing.push(format!("{name} (no run)"));
            continue;
        };
        let complete_for = |n: u64| (1..=n).all(|k| m.shards.contains(&(k, n)));
        let lacking: Vec<String> = if m.whole || counts.iter().any(|&n| complete_for(n)) {
            Vec::new()
        } else {
            counts
                .iter()
                .flat_map(|&n| {
                    (1..=n)
                        .filter(move |&k| !m.shards.contains(&(k, n)))
                        .map(move |k| format!("{k}/{n}"))
                })
                .collect()
        };
        let saved: Vec<String> = m.shards.iter().map(|(k, n)| format!("{k}/{n}")).collect();
        let what = match (m.whole, saved.is_empty()) {
            (true, true) => "the whole suite".to_string(),
            (true, false) => format!("the whole suite and shards {}", saved.join(", ")),
            (false, _) => format!("shards {}", saved.join(", ")),
        };
        let attempts = if m.attempts.len() > 1 {
            format!(
                ", attempts {}",
                m.attempts
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        };
        if lacking.is_empty() {
            println!(
                "  {name}: complete ({what}; {} benchmarks{attempts})",
                m.benchmarks
            );
        } else {
            println!(
                "  {name}: MISSING shard {} (saved {what}; {} benchmarks{attempts})",
                lacking.join(", "),
                m.benchmarks
            );
            missing.push(format!("{name} (shard {})", lacking.join(", ")));
        }
    }
    for extra in seen.keys().filter(|k| !machines.iter().any(|m| m == *k)) {
        println!("  {extra}: saved for this commit, not among --machines");
    }
    if missing.is_empty() {
        println!("fleet complete: every expected machine saved every shard for {commit}");
        0
    } else {
        println!("fleet incomplete: missing {}", missing.join(", "));
        EXIT_INCOMPLETE
    }
}

/// A figure: median (ns), cycles per iteration, usable.
type Figure = (f64, Option<f64>, bool);

/// A series' newest figure: median (ns), cycles per iteration, and whether it is usable (not
/// core-slowed): the newest usable point, else the newest measured one.
fn newest(s: &Series) -> Option<Figure> {
    let measured = |p: &&super::store::StoredPoint| {
        !p.superseded && p.bench.median_ns.is_some_and(|m| m.is_finite() && m > 0.0)
    };
    let p = s
        .points
        .iter()
        .rev()
        .find(|p| Series::usable(p))
        .or_else(|| s.points.iter().rev().find(measured))?;
    Some((
        p.bench.median_ns?,
        p.bench.cycles_per_iter,
        Series::usable(p),
    ))
}

/// A machine's clocks differ from the reference's when their cycles per ns differ by more
/// than this share (the probe's own scatter between runs of one machine is well under it).
pub const CLOCK_DIFFERS: f64 = 0.03;

/// Each benchmark's newest figure on every machine (`machines`, else all), one row per
/// benchmark and one column per machine, as ratios to the reference machine (`reference`,
/// else the first machine); with a second table in cycles when the machines' clocks differ.
pub fn machines_table(
    all: &[Series],
    machines: Option<&[String]>,
    reference: Option<&str>,
    show: bool,
) -> anyhow::Result<serde_json::Value> {
    let cols = listed_or_all(machines, all.iter().map(|s| &s.machine));
    if cols.is_empty() {
        anyhow::bail!("the store holds no machine's run to compare");
    }
    let reference = reference
        .map(str::to_string)
        .unwrap_or_else(|| cols[0].clone());
    if !cols.contains(&reference) {
        anyhow::bail!(
            "--reference {reference} is not among the machines compared ({}): name one of them",
            cols.join(", ")
        );
    }
    let mut rows: Rows = BTreeMap::new();
    for s in all {
        if let (true, Some(v)) = (cols.contains(&s.machine), newest(s)) {
            rows.entry(&s.name).or_default().insert(&s.machine, v);
        }
    }
    let clocks: Vec<Option<f64>> = cols.iter().map(|m| clock(&rows, m)).collect();
    let ref_clock = clocks[cols.iter().position(|m| *m == reference).unwrap_or(0)];
    let differ = clocks.iter().any(|c| match (c, ref_clock) {
        (Some(c), Some(r)) => (c / r - 1.0).abs() > CLOCK_DIFFERS,
        _ => false,
    });
    let grid = Grid {
        rows: &rows,
        cols: &cols,
        reference: &reference,
    };
    if show {
        grid.print(
            "time per iteration",
            &|v| Some(v.0),
            &vernier::report::format_ns,
        );
    }
    let clock_line: Vec<String> = cols
        .iter()
        .zip(&clocks)
        .map(|(m, c)| {
            format!(
                "{m} {}",
                c.map(|g| format!("{g:.2} GHz"))
                    .unwrap_or_else(|| "unknown".into())
            )
        })
        .collect();
    if show {
        println!(
            "clocks (cycles per ns of the core-speed probe): {}",
            clock_line.join(", ")
        );
    }
    if show && differ {
        println!();
        grid.print("clocks differ: cycles per iteration", &|v| v.1, &|c| {
            format!("{c:.1} cyc")
        });
    }
    let json_rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|(name, r)| {
            let base = r.get(reference.as_str()).map(|v| v.0);
            serde_json::json!({
                "name": name,
                "machines": r.iter().map(|(m, (ns, c, usable))| (m.to_string(), serde_json::json!({
                    "median_ns": ns, "cycles_per_iter": c, "usable": usable,
                    "ratio": base.map(|b| ns / b),
                }))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    Ok(
        serde_json::json!({"reference": reference, "machines": cols, "clocks_differ": differ, "benchmarks": json_rows}),
    )
}

/// Each benchmark's newest figure on each machine, by benchmark, then by machine.
type Rows<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Figure>>;

/// Machine `m`'s clock: the median over benchmarks of cycles per ns.
fn clock(rows: &Rows, m: &str) -> Option<f64> {
    let mut g: Vec<f64> = rows
        .values()
        .filter_map(|r| r.get(m).and_then(|(ns, c, _)| c.map(|c| c / ns)))
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    g.sort_by(f64::total_cmp);
    (!g.is_empty()).then(|| g[g.len() / 2])
}

/// The table of the machines' figures: one row per benchmark, one column per machine.
struct Grid<'a> {
    rows: &'a Rows<'a>,
    cols: &'a [String],
    reference: &'a str,
}

impl Grid<'_> {
    /// The table of the figure `pick` takes, written with `unit`, each beside its ratio to the
    /// reference machine's.
    fn print(
        &self,
        title: &str,
        pick: &dyn Fn(&Figure) -> Option<f64>,
        unit: &dyn Fn(f64) -> String,
    ) {
        let (rows, cols, reference) = (self.rows, self.cols, self.reference);
        let width = rows.keys().map(|k| text_width(k)).max().unwrap_or(9).max(9);
        let cw = cols
            .iter()
            .map(|c| text_width(c))
            .max()
            .unwrap_or(0)
            .max(20);
        println!("{title} (ratio to {reference}; newest run of each machine)");
        print!("{:width$}", "benchmark");
        for c in cols {
            print!("  {}", pad(c, cw, true));
        }
        println!();
        for (name, r) in rows {
            print!("{}", pad(name, width, false));
            let base = r.get(reference).and_then(pick);
            for c in cols {
                let mark = match r.get(c.as_str()) {
                    Some((_, _, false)) => " *",
                    _ => "",
                };
                let cell = match (r.get(c.as_str()).and_then(pick), base) {
                    (Some(v), Some(b)) if c != reference => {
                        format!("{} ×{:.3}{mark}", unit(v), v / b)
                    }
                    (Some(v), _) => format!("{}{mark}", unit(v)),
                    (None, _) => "—".into(),
                };
                print!("  {cell:>cw$}");
            }
            println!();
        }
        if rows.values().any(|r| r.values().any(|v| !v.2)) {
            println!(
                "* the newest run there ran on a slowed core (core-slowed) or failed: no usable \
                 run of that machine to show"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::store::{BenchRow, StoredPoint};

    /// A series of one run on `machine`: `ns` per iteration, `cycles` per iteration.
    fn series(name: &str, machine: &str, ns: f64, cycles: f64, flags: &str) -> Series {
        let bench = BenchRow {
            name: name.into(),
            status: "ok".into(),
            median_ns: Some(ns),
            ci95_lo_ns: Some(ns * 0.99),
            ci95_hi_ns: Some(ns * 1.01),
            run_ci95_ns: [Some(ns * 0.99), Some(ns * 1.01)],
            flags: flags.into(),
            cycles_per_iter: Some(cycles),
            memory: [None, None],
            unit: None,
            cycles_run_ci95: [None, None],
            instructions_per_iter: None,
        };
        let p = StoredPoint {
            run_id: 1,
            time: "t".into(),
            commit: Some("c1".into()),
            branch: None,
            machine_id: machine.into(),
            bench,
            machine: machine.into(),
            run_key: None,
            attempt: None,
            superseded: false,
        };
        Series {
            name: name.into(),
            machine: machine.into(),
            points: vec![p],
            change_points: Vec::new(),
            unit: vernier::analyze::Unit::Ns,
        }
    }

    #[test]
    fn a_run_on_a_shared_core_is_evidence_in_neither_unit() {
        use vernier::analyze::Unit;
        let shared = &series("a", "m1", 10.0, 30.0, "core-shared").points[0];
        let slowed = &series("a", "m1", 10.0, 30.0, "core-slowed").points[0];
        let plain = &series("a", "m1", 10.0, 30.0, "").points[0];
        assert!(!Series::usable_in(shared, Unit::Ns) && !Series::usable_in(shared, Unit::Cycles));
        // A slowed clock leaves cycles alone; a neighbour does not.
        assert!(!Series::usable_in(slowed, Unit::Ns) && Series::usable_in(slowed, Unit::Cycles));
        assert!(Series::usable_in(plain, Unit::Ns) && Series::usable_in(plain, Unit::Cycles));
    }

    #[test]
    fn machines_of_different_clocks_are_compared_in_cycles_too() {
        // m1 at 3 GHz, m2 at 4 GHz: the same code takes the same cycles, 25 % less time on m2;
        // m3 at 3 GHz takes 10 % more cycles on `b` (another core design).
        let all = [
            series("a", "m1", 10.0, 30.0, ""),
            series("a", "m2", 7.5, 30.0, ""),
            series("a", "m3", 10.0, 30.0, ""),
            series("b", "m1", 20.0, 60.0, ""),
            series("b", "m2", 15.0, 60.0, "core-slowed"),
            series("b", "m3", 22.0, 66.0, ""),
        ];
        let v = machines_table(&all, None, None, false).unwrap();
        assert_eq!(v["reference"], "m1");
        assert_eq!(v["clocks_differ"], true, "{v}");
        let b = &v["benchmarks"][1];
        assert_eq!(b["name"], "b");
        assert!((b["machines"]["m2"]["ratio"].as_f64().unwrap() - 0.75).abs() < 1e-12);
        assert!((b["machines"]["m3"]["ratio"].as_f64().unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(
            b["machines"]["m2"]["usable"], false,
            "a core-slowed run is marked"
        );
        assert_eq!(b["machines"]["m3"]["cycles_per_iter"], 66.0);
        // The same clock everywhere: no table in cycles.
        let v = machines_table(&all[..1], None, None, false).unwrap();
        assert_eq!(v["clocks_differ"], false);
        let same = [
            all[0].clone(),
            all[2].clone(),
            all[3].clone(),
            all[5].clone(),
        ];
        let v = machines_table(&same, None, Some("m3"), false).unwrap();
        assert_eq!(
            (v["clocks_differ"].clone(), v["reference"].clone()),
            (false.into(), "m3".into())
        );
        // A reference that is not among the machines is refused, named.
        let e = machines_table(&all, None, Some("m9"), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--reference m9"), "{e}");
    }
}
