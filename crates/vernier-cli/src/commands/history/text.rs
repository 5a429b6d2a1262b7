//! The text `vernier history` prints: each series as its segments between change points, and
//! the regressions `history check` finds.

use super::EXIT_REGRESSION;
use crate::history::series::{self, Series};
use std::collections::BTreeSet;
use vernier::analyze::Unit;

fn commit_name(c: Option<&str>) -> String {
    c.map(|c| crate::history::short(c).to_string())
        .unwrap_or_else(|| "(no commit)".into())
}

/// `x` in the series' unit, with the unit's name.
fn in_unit(unit: Unit, x: f64) -> String {
    match unit {
        Unit::Cycles => format!("{} cycles", vernier::report::format_count(x)),
        Unit::Ns => vernier::report::format_ns(x),
        Unit::Instructions => {
            format!("{} instructions", vernier::report::format_count(x))
        }
    }
}

/// The series as its segments (runs between change points, their typical time) and the
/// change points between them.
pub(super) fn print_series(s: &Series, show_machine: bool) {
    let m = if show_machine {
        format!("  [machine {}]", s.machine)
    } else {
        String::new()
    };
    let unit = s.unit;
    let set_aside = s
        .points
        .iter()
        .filter(|p| !Series::usable_in(p, unit))
        .count();
    println!(
        "{}{m}: {} runs, judged in {}{}",
        s.name,
        s.points.len(),
        unit.as_str(),
        if set_aside > 0 {
            match unit {
                Unit::Cycles => {
                    format!(
                        " ({set_aside} failed or without cycles: shown, not used to find changes)"
                    )
                }
                Unit::Ns => {
                    format!(" ({set_aside} core-slowed or failed: shown, not used to find changes)")
                }
                Unit::Instructions => {
                    format!(" ({set_aside} failed: shown, not used to find changes)")
                }
            }
        } else {
            String::new()
        }
    );
    print_segments(s);
    print_newest(s);
    println!();
}

/// Each segment of the series (its commits, runs and typical figure), after the change point
/// that opens it.
fn print_segments(s: &Series) {
    let unit = s.unit;
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(s.change_points.iter().map(|c| c.index));
    bounds.push(s.points.len());
    for k in 0..bounds.len() - 1 {
        if k > 0 {
            let c = &s.change_points[k - 1];
            println!(
                "    {} change at {}: ×{:.3} [{:.3}, {:.3}] (95 %), confidence {:.1} %",
                if c.ratio > 1.0 {
                    "▲ slower"
                } else {
                    "▼ faster"
                },
                commit_name(s.points[c.index].commit.as_deref()),
                c.ratio,
                c.ci95[0],
                c.ci95[1],
                c.confidence * 100.0
            );
        }
        let seg = &s.points[bounds[k]..bounds[k + 1]];
        let logs: Vec<f64> = seg
            .iter()
            .filter(|p| Series::usable_in(p, unit))
            .filter_map(|p| Series::median_in(p, unit).map(f64::ln))
            .collect();
        let typical = if logs.is_empty() {
            "—".to_string()
        } else {
            in_unit(unit, (logs.iter().sum::<f64>() / logs.len() as f64).exp())
        };
        let first = commit_name(seg.first().and_then(|p| p.commit.as_deref()));
        let last = commit_name(seg.last().and_then(|p| p.commit.as_deref()));
        println!(
            "  {first} … {last}: {} runs, typical {typical} (geometric mean of the medians)",
            seg.len()
        );
    }
}

/// The series' newest run: its count of instructions, or its median time with the interval.
fn print_newest(s: &Series) {
    let unit = s.unit;
    let flags = |p: &crate::history::store::StoredPoint| {
        if p.bench.flags.is_empty() {
            String::new()
        } else {
            format!("  ({})", p.bench.flags)
        }
    };
    if let (Some(p), Unit::Instructions) = (s.points.last(), unit) {
        let count = p
            .bench
            .instructions_per_iter
            .map_or_else(|| "—".into(), |x| in_unit(unit, x));
        println!(
            "  newest: {} {} {count} per iteration (counted){}",
            commit_name(p.commit.as_deref()),
            p.time,
            flags(p)
        );
    } else if let Some(p) = s.points.last() {
        let ns = |x: Option<f64>| {
            x.map(vernier::report::format_ns)
                .unwrap_or_else(|| "—".into())
        };
        let cycles = match (unit, p.bench.cycles_per_iter) {
            (Unit::Cycles, Some(c)) => format!(" = {}", in_unit(unit, c)),
            _ => String::new(),
        };
        println!(
            "  newest: {} {} {} [{}, {}]{cycles}{}",
            commit_name(p.commit.as_deref()),
            p.time,
            ns(p.bench.median_ns),
            ns(p.bench.ci95_lo_ns),
            ns(p.bench.ci95_hi_ns),
            flags(p)
        );
    }
}

/// The regressions of `history check`, one line each; the exit status.
pub(super) fn print_check(all: &[Series]) -> i32 {
    let mut found = 0;
    for s in all {
        if let Some(c) = series::regression(s) {
            found += 1;
            println!(
                "regression: {} (machine {}): ×{:.3} [{:.3}, {:.3}] since commit {}, confidence \
                 {:.1} %",
                s.name,
                s.machine,
                c.ratio,
                c.ci95[0],
                c.ci95[1],
                commit_name(s.points[c.index].commit.as_deref()),
                c.confidence * 100.0
            );
        }
    }
    for s in all {
        if let Some((before, now, i)) = series::more_allocations(s) {
            found += 1;
            println!(
                "regression: {} (machine {}): {} allocations per iteration, {} before, at commit {}",
                s.name,
                s.machine,
                vernier::report::memory::format_allocs(now),
                vernier::report::memory::format_allocs(before),
                commit_name(s.points[i].commit.as_deref())
            );
        }
    }
    // One line per machine, one exit status for the fleet.
    let machines: BTreeSet<&str> = all.iter().map(|s| s.machine.as_str()).collect();
    if machines.len() > 1 {
        for m in &machines {
            let of = all.iter().filter(|s| s.machine == *m);
            let n = of.clone().count();
            let bad = of
                .filter(|s| {
                    series::regression(s).is_some() || series::more_allocations(s).is_some()
                })
                .count();
            println!(
                "machine {m}: {} ({n} series)",
                if bad == 0 {
                    "no regression".to_string()
                } else {
                    format!("{bad} regression(s)")
                }
            );
        }
    }
    if found == 0 {
        println!(
            "no regression: no series' newest commit sits in a new, slower segment ({} series checked)",
            all.len()
        );
        0
    } else {
        EXIT_REGRESSION
    }
}
