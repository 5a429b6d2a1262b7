//! `history check --markdown FILE`: the newest commit of each series against its history in
//! the store, as the summary a pull request's comment shows (the writer is `crate::markdown`).

use crate::history::changepoint::ChangePoint;
use crate::history::series::{self, Series};
use crate::markdown::{Caveat, Mark, Row, Summary};
use std::collections::BTreeSet;

/// The series' last change point when every usable run of its newest commit sits in the
/// segment it opens (the newest commit moved the series), with its direction.
fn newest_moved(s: &Series) -> Option<(&ChangePoint, Mark)> {
    if let Some(c) = series::regression(s) {
        return Some((c, Mark::Slower));
    }
    let last = s.change_points.last()?;
    if !(last.ratio < 1.0 && last.ci95[1] < 1.0) {
        return None;
    }
    series::newest_after(s, last).then_some((last, Mark::Faster))
}

/// The newest usable point's median over the one before it, in the series' unit.
fn last_step(s: &Series) -> f64 {
    let usable: Vec<f64> = s
        .points
        .iter()
        .filter(|p| Series::usable_in(p, s.unit))
        .filter_map(|p| Series::median_in(p, s.unit))
        .collect();
    match usable[..] {
        [.., before, now] if before > 0.0 => now / before,
        _ => f64::NAN,
    }
}

/// One row per series: `slower` (a confident regression, or more allocations), `faster`, or
/// unchanged; the commits compared are the newest one and the one before it.
pub(super) fn summary(all: &[Series]) -> Summary {
    let machines: BTreeSet<&str> = all.iter().map(|s| s.machine.as_str()).collect();
    let many = machines.len() > 1;
    let mut rows = Vec::with_capacity(all.len());
    for s in all {
        let name = if many {
            format!("{} on {}", s.name, s.machine)
        } else {
            s.name.clone()
        };
        let more = series::more_allocations(s);
        let counts = more
            .map(|(before, now, _)| {
                format!(
                    "allocs/iter {} → {}",
                    vernier::report::memory::format_allocs(before),
                    vernier::report::memory::format_allocs(now)
                )
            })
            .unwrap_or_default();
        let (mark, ratio, ci95) = match newest_moved(s) {
            Some((c, mark)) => (mark, c.ratio, c.ci95),
            None if more.is_some() => (Mark::Slower, last_step(s), [f64::NAN; 2]),
            None => (Mark::Unchanged, last_step(s), [f64::NAN; 2]),
        };
        rows.push(Row {
            name,
            mark,
            ratio,
            ci95,
            unit: s.unit.as_str().to_string(),
            counts,
        });
    }
    let newest = all
        .iter()
        .filter_map(|s| s.points.last())
        .max_by(|a, b| a.time.cmp(&b.time));
    let new = newest
        .and_then(|p| p.commit.clone())
        .unwrap_or_else(|| "(no commit)".into());
    let old = all
        .iter()
        .find_map(|s| {
            s.points
                .iter()
                .rev()
                .filter_map(|p| p.commit.as_deref())
                .find(|c| *c != new)
        })
        .unwrap_or("(none)")
        .to_string();
    let mut caveats = vec![Caveat {
        name: None,
        words: "each series is judged by its change points over the stored runs (E-Divisive \
                means): a row is `slower` or `faster` when the newest commit opens a new \
                segment, and its interval is the segment's"
            .into(),
    }];
    if many {
        caveats.push(Caveat {
            name: None,
            words: format!(
                "runs from {} machines, each machine's runs a series of its own",
                machines.len()
            ),
        });
    }
    Summary {
        compared: "the newest commit against the stored history, commits".into(),
        old,
        new,
        threshold: None,
        rows,
        failed: vec![],
        caveats,
    }
}
