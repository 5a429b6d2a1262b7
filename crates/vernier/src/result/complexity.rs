//! Families of benchmarks over a numeric argument (`sort/256`, `sort/1024`, … as
//! `Suite::bench_args` and Google Benchmark name them) and the complexity each family's
//! medians fit (`stats::complexity`). Derived from the benchmarks alone: written with the
//! result file as `complexity`, shown under the table, and derived again by `vernier analyze`.

use super::{BenchmarkResult, Status};
use crate::stats::complexity::{best_fit, Class, Fit};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A family's fit: `median_ns ≈ coefficient_ns · f(N)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilyFit {
    /// The benchmarks' name before their last `/N`.
    pub family: String,
    /// The class that fits best (`"O(N log N)"`).
    pub class: Class,
    /// `c` in `median = c · f(N)`, ns.
    pub coefficient_ns: f64,
    /// Root-mean-square error of the fit, relative to the mean median.
    pub rms: f64,
    /// The sizes N it was fitted over, smallest first.
    pub sizes: Vec<u64>,
}

/// The family and N of a benchmark named `FAMILY/N` (N a whole number of at least 1).
pub fn family_of(name: &str) -> Option<(&str, u64)> {
    let (family, n) = name.rsplit_once('/')?;
    let n: u64 = n.parse().ok()?;
    (n >= 1 && !family.is_empty()).then_some((family, n))
}

/// The fit of every family with at least three sizes measured (benchmarks that failed or were
/// flagged `optimized-away` left out), in order of first appearance.
pub fn families(benchmarks: &[BenchmarkResult]) -> Vec<FamilyFit> {
    let mut order: Vec<&str> = Vec::new();
    let mut points: BTreeMap<&str, Vec<(u64, f64)>> = BTreeMap::new();
    for b in benchmarks {
        let removed = b
            .diagnostics
            .iter()
            .any(|d| d.code == crate::diagnostic::Code::OptimizedAway);
        if b.status != Status::Ok || removed || !b.per_iter.median_ns.is_finite() {
            continue;
        }
        if let Some((family, n)) = family_of(&b.name) {
            if !points.contains_key(family) {
                order.push(family);
            }
            points
                .entry(family)
                .or_default()
                .push((n, b.per_iter.median_ns));
        }
    }
    order
        .into_iter()
        .filter_map(|family| {
            let mut p = points.remove(family)?;
            p.sort_by_key(|x| x.0);
            let xy: Vec<(f64, f64)> = p.iter().map(|&(n, t)| (n as f64, t)).collect();
            let Fit {
                class,
                coefficient,
                rms,
            } = best_fit(&xy)?;
            Some(FamilyFit {
                family: family.to_string(),
                class,
                coefficient_ns: coefficient,
                rms,
                sizes: p.iter().map(|x| x.0).collect(),
            })
        })
        .collect()
}

impl FamilyFit {
    /// One line for a reader: `sort: O(N log N), 2.103 ns·N·log₂N (RMS 1.2 %, 5 sizes 256–65536)`.
    pub fn line(&self) -> String {
        format!(
            "{}: {}, {}·{} (RMS {:.1} %, {} sizes {}–{})",
            self.family,
            self.class.name(),
            crate::units::format_ns(self.coefficient_ns),
            self.class.term(),
            self.rms * 100.0,
            self.sizes.len(),
            self.sizes.first().copied().unwrap_or(0),
            self.sizes.last().copied().unwrap_or(0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_the_name_before_a_whole_number() {
        assert_eq!(family_of("sort/1024"), Some(("sort", 1024)));
        assert_eq!(family_of("copy/a/8"), Some(("copy/a", 8)));
        assert_eq!(family_of("counter/threads:2"), None);
        assert_eq!(family_of("sort/0"), None);
        assert_eq!(family_of("/8"), None);
        assert_eq!(family_of("sqrt"), None);
    }
}
