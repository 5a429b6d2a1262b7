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
    /// The sizes measured but left out of the fit: their median was flagged `unstable` or
    /// `no-steady-state`, and the family had at least three settled sizes without them. A
    /// least-squares fit through the origin leans on its largest sizes, so one median that a
    /// busy machine read 1.5 to 2 times too slow at the top of the range would otherwise decide
    /// the class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<u64>,
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

/// One benchmark of a family: its N, median, declaration, and whether its median was flagged
/// as not settled (`unstable`, `no-steady-state`).
struct Point<'a> {
    n: u64,
    t: f64,
    declared: Option<&'a Declared>,
    unsettled: bool,
}

/// The fit of every family with at least three sizes measured (benchmarks that failed or were
/// flagged `optimized-away` left out), in order of first appearance. A family whose first
/// benchmark declared a class is fitted in that class; one whose first declared a function, in
/// it, over the benchmarks that gave its value.
pub fn families(benchmarks: &[BenchmarkResult]) -> Vec<FamilyFit> {
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
                unsettled: has(Code::Unstable) || has(Code::NoSteadyState),
            });
        }
    }
    order
        .into_iter()
        .filter_map(|family| fit_family(family, points.remove(family)?))
        .collect()
}

fn fit_family(family: &str, mut p: Vec<Point>) -> Option<FamilyFit> {
    let first = p.first()?.declared.cloned().unwrap_or_default();
    if first.f.is_some() {
        p.retain(|x| x.declared.and_then(|d| d.f).is_some());
    }
    p.sort_by_key(|x| x.n);
    let settled: Vec<(f64, f64)> = p
        .iter()
        .filter(|x| !x.unsettled)
        .map(|x| (x.n as f64, x.t))
        .collect();
    let mut left_out = Vec::new();
    if settled.len() < p.len() && fittable(&settled) {
        left_out = p.iter().filter(|x| x.unsettled).map(|x| x.n).collect();
        p.retain(|x| !x.unsettled);
    }
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
    Some(FamilyFit {
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
    })
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
            let sizes: Vec<String> = self.left_out.iter().map(|n| n.to_string()).collect();
            tail.push_str(&format!("; N = {} left out: not settled", sizes.join(", ")));
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

    fn result(name: &str, median_ns: f64, d: Option<Declared>) -> BenchmarkResult {
        let mut r = BenchmarkResult::failed(name, String::new());
        r.status = Status::Ok;
        r.error = None;
        r.per_iter.median_ns = median_ns;
        r.complexity = d;
        r
    }

    const SIZES: [u64; 4] = [256, 2048, 16384, 65536];

    #[test]
    fn a_size_whose_median_is_not_settled_is_left_out_while_three_settled_sizes_remain() {
        // N·log₂N at five sizes, the largest read twice too slow: by least squares through the
        // origin that one median makes the family O(N^2).
        let sizes = [256u64, 1024, 4096, 16384, 65536];
        let nlogn = |n: u64| 1.5 * n as f64 * (n as f64).log2();
        let family = |flag: Option<Code>| -> Vec<BenchmarkResult> {
            sizes
                .iter()
                .map(|&n| {
                    let slow = if n == 65536 { 2.0 } else { 1.0 };
                    let mut r = result(&format!("sort/{n}"), slow * nlogn(n), None);
                    if let (Some(code), 65536) = (flag, n) {
                        r.diagnostics
                            .push(crate::diagnostic::Diagnostic::new(code, ""));
                    }
                    r
                })
                .collect()
        };
        let fit = &families(&family(None))[0];
        assert_eq!(
            (fit.class, fit.sizes.len()),
            (Class::Quadratic, 5),
            "{fit:?}"
        );
        assert!(fit.left_out.is_empty());
        for code in [Code::Unstable, Code::NoSteadyState] {
            let fit = &families(&family(Some(code)))[0];
            assert_eq!(fit.class, Class::NLogN, "{fit:?}");
            assert_eq!(
                (&fit.sizes[..], &fit.left_out[..]),
                (&sizes[..4], &[65536][..])
            );
            assert!((fit.coefficient_ns / 1.5 - 1.0).abs() < 1e-9, "{fit:?}");
            assert!(
                fit.line().ends_with("; N = 65536 left out: not settled)"),
                "{}",
                fit.line()
            );
        }
        // With no three settled sizes, every size is kept: a fit of unsettled medians, as
        // flagged on their rows, rather than none.
        let mut few = family(Some(Code::Unstable));
        for r in &mut few[..2] {
            r.diagnostics
                .push(crate::diagnostic::Diagnostic::new(Code::Unstable, ""));
        }
        let fit = &families(&few)[0];
        assert_eq!((fit.sizes.len(), fit.left_out.len()), (5, 0), "{fit:?}");
    }

    #[test]
    fn a_declared_function_is_fitted_through_its_values_beside_the_best_usual_class() {
        let f = |n: u64| (n as f64).powf(1.5);
        let given = |n| Declared {
            f: Some(f(n)),
            function: Some("N^1.5".into()),
            ..Declared::default()
        };
        let mut b: Vec<BenchmarkResult> = SIZES
            .iter()
            .map(|&n| result(&format!("walk/{n}"), 0.5 * f(n), Some(given(n))))
            .collect();
        // One size without the function's value is left out of a function's family.
        b.push(result("walk/100000", 9.0, None));
        let fits = families(&b);
        assert_eq!(fits.len(), 1, "{fits:?}");
        let fit = &fits[0];
        assert_eq!((fit.class, fit.declared), (Class::Custom, true));
        assert!(
            (fit.coefficient_ns - 0.5).abs() < 1e-9 && fit.rms < 1e-9,
            "{fit:?}"
        );
        assert_eq!(fit.sizes, SIZES.to_vec());
        assert_eq!(fit.f.len(), 4);
        let best = fit.best.unwrap();
        assert!(best.class != Class::Custom && best.rms > 0.05, "{best:?}");
        let line = fit.line();
        assert!(line.starts_with("walk: f(N) = N^1.5 as declared, 0.5000 ns·f(N) (RMS 0.0 %, 4 sizes 256–65536; the best usual class is "), "{line}");
        let fitted = fit.fitted_at_sizes();
        assert!((fitted[1].1 - 0.5 * f(2048)).abs() < 1e-6, "{fitted:?}");
        // The file keeps the declaration and the fit: both read back the same.
        let json = serde_json::to_string(&fits).unwrap();
        assert!(
            json.contains(r#""class":"f(N)""#) && json.contains(r#""function":"N^1.5""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Vec<FamilyFit>>(&json).unwrap(), fits);
    }

    #[test]
    fn a_declared_class_is_kept_even_where_another_fits_better_and_says_so() {
        let b: Vec<BenchmarkResult> = SIZES
            .iter()
            .map(|&n| {
                let d = Declared {
                    class: Some(Class::Quadratic),
                    ..Declared::default()
                };
                result(&format!("scan/{n}"), 0.3 * n as f64, Some(d))
            })
            .collect();
        let fit = &families(&b)[0];
        assert_eq!((fit.class, fit.declared), (Class::Quadratic, true));
        assert!(fit.rms > 0.1);
        assert_eq!(fit.best.unwrap().class, Class::Linear);
        let line = fit.line();
        assert!(
            line.contains("O(N^2) as declared") && line.contains("ns·N²"),
            "{line}"
        );
        assert!(
            line.contains("e-"),
            "a tiny coefficient in scientific notation: {line}"
        );
        assert!(
            line.ends_with("the best usual class is O(N), RMS 0.0 %)"),
            "{line}"
        );
        // Undeclared, the same medians read O(N), and no comparison is added.
        let plain: Vec<BenchmarkResult> = b
            .iter()
            .map(|r| result(&r.name, r.per_iter.median_ns, None))
            .collect();
        let fit = &families(&plain)[0];
        assert_eq!(
            (fit.class, fit.declared, fit.best),
            (Class::Linear, false, None)
        );
        assert!(!fit.line().contains("declared"));
    }

    #[test]
    fn a_declared_family_and_n_group_benchmarks_their_names_do_not() {
        // Google Benchmark's `Args({n, 2})` with `SetComplexityN(range(0))`: the N is not the
        // name's last argument, and the family is the name without its arguments.
        let b: Vec<BenchmarkResult> = SIZES
            .iter()
            .map(|&n| {
                let d = Declared {
                    family: Some("BM_x".into()),
                    n: Some(n),
                    ..Declared::default()
                };
                result(&format!("BM_x/{n}/2"), 2.0 * n as f64, Some(d))
            })
            .collect();
        let fits = families(&b);
        assert_eq!(fits.len(), 1, "{fits:?}");
        assert_eq!(
            (fits[0].family.as_str(), fits[0].class),
            ("BM_x", Class::Linear)
        );
        assert_eq!(member_of(&b[1]), Some(("BM_x", 2048)));
        // An N without a family: the name's own family, or the whole name when it has none.
        let d = Declared {
            n: Some(5),
            ..Declared::default()
        };
        assert_eq!(
            member_of(&result("BM_y", 1.0, Some(d.clone()))),
            Some(("BM_y", 5))
        );
        assert_eq!(
            member_of(&result("BM_y/8", 1.0, Some(d))),
            Some(("BM_y", 5))
        );
    }

    #[test]
    fn a_declaration_round_trips_through_its_list_options_and_bad_ones_are_named() {
        let d = Declared {
            family: Some("BM x".into()),
            n: Some(4096),
            class: None,
            f: Some(1.0 / 3.0),
            function: Some("N log N / 3".into()),
        };
        let line = d.options();
        assert!(
            line.contains(" family=BM%20x ") && line.contains(" n=4096"),
            "{line}"
        );
        let parsed = Declared::parse_options(line.split(' ').filter(|o| !o.is_empty()));
        assert_eq!(parsed, Ok(Some(d)));
        assert_eq!(Declared::parse_options(["bytes=8", "threads=2"]), Ok(None));
        let class = Declared::parse_options(["complexity=NlgN"])
            .unwrap()
            .unwrap();
        assert_eq!(class.class, Some(Class::NLogN));
        for (bad, needle) in [
            (vec!["complexity=N^4"], "the classes are"),
            (vec!["complexity=N", "f=2"], "not both"),
            (vec!["function=x"], "without f="),
            (vec!["f=-1"], "not negative"),
            (vec!["f=inf"], "not negative"),
            (vec!["f=x"], "not a number"),
            (vec!["n=-3"], "whole number"),
        ] {
            let e = Declared::parse_options(bad.iter().copied()).unwrap_err();
            assert!(e.contains(needle), "{bad:?}: {e}");
        }
    }
}
