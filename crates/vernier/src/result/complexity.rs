//! Families of benchmarks over a numeric argument (`sort/256`, `sort/1024`, … as
//! `Suite::bench_args` and Google Benchmark name them) and the complexity each family's
//! medians fit (`stats::complexity`). Derived from the benchmarks alone: written with the
//! result file as `complexity`, shown under the table, and derived again by `vernier analyze`.
//!
//! A benchmark may declare how it is fitted ([`Declared`], the `list` line's options): its
//! family and N when its name does not give them (Google Benchmark's `SetComplexityN`), a class
//! to fit instead of the best (`Complexity(oN)`), or its own function, given as its value at
//! the benchmark's N (`Complexity(lambda)`): the harness evaluates the function, so the fit
//! needs no code of the user's.

use super::{BenchmarkResult, Status};
use crate::diagnostic::Code;
pub use crate::stats::complexity::Declared;
use crate::stats::complexity::{best_fit, fit_class, fit_values, fittable, Class, Fit};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A usual class's fit, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassFit {
    pub class: Class,
    pub coefficient_ns: f64,
    pub rms: f64,
}

impl From<Fit> for ClassFit {
    fn from(f: Fit) -> Self {
        ClassFit {
            class: f.class,
            coefficient_ns: f.coefficient,
            rms: f.rms,
        }
    }
}

/// A family's fit: `median_ns ≈ coefficient_ns · f(N)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilyFit {
    /// The benchmarks' name before their last `/N`, or the family they declared.
    pub family: String,
    /// The class that fits best (`"O(N log N)"`), the one declared, or `"f(N)"`: the
    /// benchmarks' own function.
    pub class: Class,
    /// `c` in `median = c · f(N)`, ns.
    pub coefficient_ns: f64,
    /// Root-mean-square error of the fit, relative to the mean median.
    pub rms: f64,
    /// The sizes N it was fitted over, smallest first.
    pub sizes: Vec<u64>,
    /// `f(N)`: the name of the benchmarks' own function, when they gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// `f(N)`: its value at each size, as the benchmarks gave it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub f: Vec<f64>,
    /// The class was declared by the benchmarks, not chosen as the best.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub declared: bool,
    /// Beside a declared class or function: the best usual class over the same medians, so a
    /// reader sees whether the declaration fits as well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<ClassFit>,
    /// The sizes measured but left out of the fit ([`fits`] says which): a least-squares fit
    /// through the origin leans on its largest sizes, so one median that a busy machine read
    /// 1.5 to 2 times too slow at the top of the range would otherwise decide the class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<u64>,
}

/// A family whose class cannot be told: at least three sizes measured, but fewer than three
/// of them [`precise`]. Its imprecise medians would decide any class fitted through them, so
/// none is claimed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Untold {
    pub family: String,
    /// Every size measured, smallest first.
    pub sizes: Vec<u64>,
    /// Those whose median is precise enough to rest a fit on (fewer than three).
    pub precise: Vec<u64>,
    /// The class a fit through every size would read, for a reader to weigh: the imprecise
    /// sizes decide it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_sizes_read: Option<Class>,
}

/// A size whose 95 % interval reaches further than this from its median, on either side, is
/// too imprecise to rest a fit on: at ±20 % one size can no longer tell O(N log N) from O(N)
/// over sizes a few times apart, and a median read −57 % / +2 % (a busy machine's) pulls a
/// sort to O(N^2).
pub const MAX_FIT_SPREAD: f64 = 0.20;

/// Whether `b`'s median is precise enough to rest a fit on: its 95 % interval within
/// [`MAX_FIT_SPREAD`] of it on either side (flagged or not: `unstable` is claimed from ±1 %).
pub fn precise(b: &BenchmarkResult) -> bool {
    let (m, [lo, hi]) = (b.per_iter.median_ns, b.per_iter.ci95_ns);
    let spread = ((m - lo) / m).max((hi - m) / m);
    // An interval not known (NaN) says nothing against the median.
    spread.is_nan() || spread <= MAX_FIT_SPREAD
}

/// Whether `b`'s median settled: [`precise`], and flagged neither `unstable` nor
/// `no-steady-state`.
pub fn settled(b: &BenchmarkResult) -> bool {
    let has = |code| b.diagnostics.iter().any(|d| d.code == code);
    precise(b) && !has(Code::Unstable) && !has(Code::NoSteadyState)
}

/// The family and N of a benchmark named `FAMILY/N` (N a whole number of at least 1).
pub fn family_of(name: &str) -> Option<(&str, u64)> {
    let (family, n) = name.rsplit_once('/')?;
    let n: u64 = n.parse().ok()?;
    (n >= 1 && !family.is_empty()).then_some((family, n))
}

/// The family and N a benchmark is fitted at: what it declared, else what its name gives.
pub fn member_of(b: &BenchmarkResult) -> Option<(&str, u64)> {
    let named = family_of(&b.name);
    let d = b.complexity.as_ref();
    let family = match d.and_then(|d| d.family.as_deref()) {
        Some(f) => f,
        None if d.and_then(|d| d.n).is_some() => named.map_or(b.name.as_str(), |x| x.0),
        None => named?.0,
    };
    let n = d.and_then(|d| d.n).or(named.map(|x| x.1))?;
    Some((family, n))
}

/// One benchmark of a family: its N, median, declaration, and whether its median is
/// [`settled`] and [`precise`].
struct Point<'a> {
    n: u64,
    t: f64,
    declared: Option<&'a Declared>,
    settled: bool,
    precise: bool,
}

/// The fit of every family whose class can be told ([`fits`]).
pub fn families(benchmarks: &[BenchmarkResult]) -> Vec<FamilyFit> {
    fits(benchmarks).0
}

/// The families with at least three sizes measured (benchmarks that failed or were flagged
/// `optimized-away` left out), in order of first appearance: those fitted, and those whose
/// class cannot be told. A family is fitted through its [`settled`] sizes when at least three
/// are, else through its [`precise`] ones (unstable medians all the same) when at least three
/// are; the others are `left_out`. With fewer than three precise sizes its class cannot be
/// told ([`Untold`]). A family whose first benchmark
/// declared a class is fitted in that class; one whose first declared a function, in it, over
/// the benchmarks that gave its value.
pub fn fits(benchmarks: &[BenchmarkResult]) -> (Vec<FamilyFit>, Vec<Untold>) {
    let mut order: Vec<&str> = Vec::new();
    let mut points: BTreeMap<&str, Vec<Point>> = BTreeMap::new();
    for b in benchmarks {
        let has = |code| b.diagnostics.iter().any(|d| d.code == code);
        let removed = has(Code::OptimizedAway);
        if b.status != Status::Ok || removed || !b.per_iter.median_ns.is_finite() {
            continue;
        }
        if let Some((family, n)) = member_of(b) {
            if !points.contains_key(family) {
                order.push(family);
            }
            points.entry(family).or_default().push(Point {
                n,
                t: b.per_iter.median_ns,
                declared: b.complexity.as_ref(),
                settled: settled(b),
                precise: precise(b),
            });
        }
    }
    let (mut told, mut untold) = (Vec::new(), Vec::new());
    for family in order {
        match points.remove(family).and_then(|p| fit_family(family, p)) {
            Some(Ok(fit)) => told.push(fit),
            Some(Err(u)) => untold.push(u),
            None => {}
        }
    }
    (told, untold)
}

/// A family's fit through the sizes [`fits`] names, or why its class cannot be told; `None`
/// with fewer than three sizes.
fn fit_family(family: &str, mut p: Vec<Point>) -> Option<Result<FamilyFit, Untold>> {
    let first = p.first()?.declared.cloned().unwrap_or_default();
    if first.f.is_some() {
        p.retain(|x| x.declared.and_then(|d| d.f).is_some());
    }
    p.sort_by_key(|x| x.n);
    let through = |keep: fn(&Point) -> bool| -> Vec<(f64, f64)> {
        p.iter()
            .filter(|x| keep(x))
            .map(|x| (x.n as f64, x.t))
            .collect()
    };
    let all = through(|_| true);
    let Some(keep) = [(|x: &Point| x.settled) as fn(&Point) -> bool, |x| x.precise]
        .into_iter()
        .find(|&keep| fittable(&through(keep)))
    else {
        return fittable(&all).then(|| {
            Err(Untold {
                family: family.to_string(),
                sizes: p.iter().map(|x| x.n).collect(),
                precise: p.iter().filter(|x| x.precise).map(|x| x.n).collect(),
                all_sizes_read: best_fit(&all).map(|f| f.class),
            })
        });
    };
    let left_out: Vec<u64> = p.iter().filter(|x| !keep(x)).map(|x| x.n).collect();
    p.retain(|x| keep(x));
    let xy: Vec<(f64, f64)> = p.iter().map(|x| (x.n as f64, x.t)).collect();
    if !fittable(&xy) {
        return None;
    }
    let best = best_fit(&xy);
    let (fit, f) = if first.f.is_some() {
        let f: Vec<f64> = p.iter().filter_map(|x| x.declared?.f).collect();
        let values: Vec<(f64, f64)> = f.iter().zip(&p).map(|(&f, x)| (f, x.t)).collect();
        (fit_values(&values, Class::Custom)?, f)
    } else if let Some(class) = first.class {
        (fit_class(&xy, class)?, Vec::new())
    } else {
        (best?, Vec::new())
    };
    let declared = first.f.is_some() || first.class.is_some();
    Some(Ok(FamilyFit {
        family: family.to_string(),
        class: fit.class,
        coefficient_ns: fit.coefficient,
        rms: fit.rms,
        sizes: p.iter().map(|x| x.n).collect(),
        function: first.function.filter(|_| first.f.is_some()),
        f,
        declared,
        best: best.filter(|_| declared).map(ClassFit::from),
        left_out,
    }))
}

/// Sizes for a reader: `256, 1024, 4096`.
fn sizes_text(sizes: &[u64]) -> String {
    let s: Vec<String> = sizes.iter().map(u64::to_string).collect();
    s.join(", ")
}

impl Untold {
    /// One line for a reader: that the class cannot be told, the sizes precise enough, and
    /// what every size would read.
    pub fn line(&self) -> String {
        let precise = match self.precise.len() {
            0 => "none precise enough".to_string(),
            k => format!(
                "only {k} precise enough (N = {})",
                sizes_text(&self.precise)
            ),
        };
        let read = self
            .all_sizes_read
            .map(|c| {
                format!(
                    "; through every size it would read {}, which they decide",
                    c.name()
                )
            })
            .unwrap_or_default();
        format!(
            "{}: the class cannot be told: of {} sizes, {precise}, 3 needed (the others' \
             interval reached past ±{:.0} % of their median){read}. Measure again on a quieter \
             machine (`vernier system noise` says how quiet it is)",
            self.family,
            self.sizes.len(),
            MAX_FIT_SPREAD * 100.0
        )
    }
}

/// A coefficient in ns with four significant digits, in scientific notation below 0.1 ns
/// (an N² or N³ coefficient is often a millionth of a ns).
fn coefficient_text(ns: f64) -> String {
    if ns.is_finite() && ns != 0.0 && ns.abs() < 0.1 {
        format!("{ns:.3e} ns")
    } else {
        crate::units::format_ns(ns)
    }
}

impl FamilyFit {
    /// One line for a reader: `sort: O(N log N), 2.103 ns·N·log₂N (RMS 1.2 %, 5 sizes 256–65536)`;
    /// a declared class or function says so, and which usual class fits best when another does.
    pub fn line(&self) -> String {
        let class = match (&self.function, self.class) {
            (Some(name), Class::Custom) => format!("f(N) = {name}"),
            (_, c) => c.name().to_string(),
        };
        let mut tail = String::new();
        if let Some(b) = self.best.filter(|b| b.class != self.class) {
            tail = format!(
                "; the best usual class is {}, RMS {:.1} %",
                b.class.name(),
                b.rms * 100.0
            );
        }
        if !self.left_out.is_empty() {
            tail.push_str(&format!(
                "; fitted through N = {}, N = {} left out: not settled",
                sizes_text(&self.sizes),
                sizes_text(&self.left_out)
            ));
        }
        format!(
            "{}: {}{}, {}·{} (RMS {:.1} %, {} sizes {}–{}{tail})",
            self.family,
            class,
            if self.declared { " as declared" } else { "" },
            coefficient_text(self.coefficient_ns),
            self.class.term(),
            self.rms * 100.0,
            self.sizes.len(),
            self.sizes.first().copied().unwrap_or(0),
            self.sizes.last().copied().unwrap_or(0),
        )
    }

    /// The fitted time at each size, `c · f(N)` (NaN where it is unknown).
    pub fn fitted_at_sizes(&self) -> Vec<(u64, f64)> {
        self.sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let f = match self.class {
                    Class::Custom => self.f.get(i).copied().unwrap_or(f64::NAN),
                    c => c.f(n as f64),
                };
                (n, self.coefficient_ns * f)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
