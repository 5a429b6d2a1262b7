//! The asymptotic complexity of a benchmark over its input size N: the time per iteration at
//! each N fitted as `c · f(N)` for the usual classes (Google Benchmark's `Complexity()`,
//! nanobench's `complexityN`), by least squares through the origin, and the class whose fit
//! leaves the least root-mean-square error kept. The error is given relative to the mean time,
//! as Google Benchmark gives it, so that a reader can tell a clear fit (a few percent) from a
//! guess. A benchmark may instead declare the class (Google Benchmark's `Complexity(oN)`) or
//! its own function (`Complexity(lambda)`): the harness evaluates `f(N)` at each size and the
//! fit is then of `c · f` through the given values ([`fit_values`]).

use serde::{Deserialize, Serialize};

/// A complexity class: the shape `f(N)` of `time = c · f(N)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Class {
    #[serde(rename = "O(1)")]
    Constant,
    #[serde(rename = "O(log N)")]
    Log,
    #[serde(rename = "O(N)")]
    Linear,
    #[serde(rename = "O(N log N)")]
    NLogN,
    #[serde(rename = "O(N^2)")]
    Quadratic,
    #[serde(rename = "O(N^3)")]
    Cubic,
    /// The benchmark's own function, `f(N)` given at each size by its harness.
    #[serde(rename = "f(N)")]
    Custom,
}

impl Class {
    /// Every class, in the order a tie is broken (the simpler first).
    pub const ALL: [Class; 6] = [
        Class::Constant,
        Class::Log,
        Class::Linear,
        Class::NLogN,
        Class::Quadratic,
        Class::Cubic,
    ];

    /// `f(N)` (logarithms in base 2, as Google Benchmark's); NaN for [`Class::Custom`], whose
    /// values only its harness knows.
    pub fn f(self, n: f64) -> f64 {
        match self {
            Class::Constant => 1.0,
            Class::Log => n.log2(),
            Class::Linear => n,
            Class::NLogN => n * n.log2(),
            Class::Quadratic => n * n,
            Class::Cubic => n * n * n,
            Class::Custom => f64::NAN,
        }
    }

    /// As Google Benchmark prints it (`O(N log N)`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Constant => "O(1)",
            Class::Log => "O(log N)",
            Class::Linear => "O(N)",
            Class::NLogN => "O(N log N)",
            Class::Quadratic => "O(N^2)",
            Class::Cubic => "O(N^3)",
            Class::Custom => "f(N)",
        }
    }

    /// The term the coefficient multiplies (`N·log₂N`), for a reader.
    pub fn term(self) -> &'static str {
        match self {
            Class::Constant => "1",
            Class::Log => "log₂N",
            Class::Linear => "N",
            Class::NLogN => "N·log₂N",
            Class::Quadratic => "N²",
            Class::Cubic => "N³",
            Class::Custom => "f(N)",
        }
    }

    /// The class named as a `list` line's `complexity=` option gives it, which is Google
    /// Benchmark's JSON `big_o` notation (`1`, `lgN`, `N`, `NlgN`, `N^2`, `N^3`).
    pub fn parse_option(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.option() == s)
    }

    /// The class as a `list` line's `complexity=` option names it ([`Class::parse_option`]).
    pub fn option(self) -> &'static str {
        match self {
            Class::Constant => "1",
            Class::Log => "lgN",
            Class::Linear => "N",
            Class::NLogN => "NlgN",
            Class::Quadratic => "N^2",
            Class::Cubic => "N^3",
            Class::Custom => "f(N)",
        }
    }
}

/// How a benchmark asked to be fitted. Every field is optional: absent, the family and N come
/// from the name (`FAMILY/N`) and the best usual class is fitted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Declared {
    /// The family it is fitted in (a `list` line's `family=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Its size N (`n=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// A usual class to fit instead of the best (`complexity=NlgN`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    /// The benchmark's own function at its N (`f=`): the family is fitted as `c · f`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f: Option<f64>,
    /// That function's name, for a reader (`function=`, percent-encoded): `N^1.5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// A class fitted to `(N, time)` points.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub class: Class,
    /// `c` in `time = c · f(N)`, in the times' unit.
    pub coefficient: f64,
    /// Root-mean-square error of the fit, relative to the mean time.
    pub rms: f64,
}

/// Fewest distinct sizes a fit is made from: two points fit every class.
pub const MIN_POINTS: usize = 3;

/// The fit of `class` to `points` (`(N, time)`, N ≥ 1).
pub fn fit_class(points: &[(f64, f64)], class: Class) -> Option<Fit> {
    let values: Vec<(f64, f64)> = points.iter().map(|&(n, t)| (class.f(n), t)).collect();
    fit_values(&values, class)
}

/// The fit of `time = c · f` to `(f, time)` pairs, by least squares through the origin:
/// `c = Σ f·t / Σ f²`, and its RMS relative to the mean time. `None` when no `f` is positive,
/// or one is not finite.
pub fn fit_values(values: &[(f64, f64)], class: Class) -> Option<Fit> {
    let (mut sff, mut sft, mut st) = (0.0, 0.0, 0.0);
    for &(f, t) in values {
        sff += f * f;
        sft += f * t;
        st += t;
    }
    let mean = st / values.len() as f64;
    if !(sff > 0.0 && sff.is_finite() && mean > 0.0) {
        return None;
    }
    let c = sft / sff;
    let sse: f64 = values.iter().map(|&(f, t)| (t - c * f).powi(2)).sum();
    let rms = (sse / values.len() as f64).sqrt() / mean;
    (c.is_finite() && rms.is_finite()).then_some(Fit {
        class,
        coefficient: c,
        rms,
    })
}

/// Whether `points` (`(N, time)`) can be fitted: at least [`MIN_POINTS`] distinct sizes, every
/// N at least 1 and every time positive.
pub fn fittable(points: &[(f64, f64)]) -> bool {
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let valid = points
        .iter()
        .all(|&(n, t)| n.is_finite() && n >= 1.0 && t.is_finite() && t > 0.0);
    sizes.len() >= MIN_POINTS && valid
}

/// The class that fits `points` best (least relative RMS), from at least [`MIN_POINTS`]
/// distinct sizes of at least 1; `None` below that.
pub fn best_fit(points: &[(f64, f64)]) -> Option<Fit> {
    if !fittable(points) {
        return None;
    }
    Class::ALL
        .into_iter()
        .filter_map(|c| fit_class(points, c))
        .min_by(|a, b| a.rms.total_cmp(&b.rms))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of `t = c · f(N)` over Google Benchmark's `Range(1 << 8, 1 << 16)` (multiplier
    /// 8), each off by ±`noise` in turn.
    fn points(class: Class, c: f64, noise: f64) -> Vec<(f64, f64)> {
        [256.0, 2048.0, 16384.0, 65536.0]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                (n, c * class.f(n) * (1.0 + sign * noise))
            })
            .collect()
    }

    #[test]
    fn each_class_is_told_from_its_neighbours_through_a_few_percent_of_noise() {
        for class in Class::ALL {
            let fit = best_fit(&points(class, 3.5, 0.03)).unwrap();
            assert_eq!(fit.class, class, "{fit:?}");
            assert!((fit.coefficient / 3.5 - 1.0).abs() < 0.05, "{fit:?}");
            assert!(fit.rms < 0.05, "{fit:?}");
        }
    }

    #[test]
    fn an_exact_fit_has_no_error_and_too_few_sizes_have_no_fit() {
        let fit = best_fit(&points(Class::NLogN, 2.0, 0.0)).unwrap();
        assert_eq!(fit.class, Class::NLogN);
        assert!(fit.rms < 1e-12 && (fit.coefficient - 2.0).abs() < 1e-12);
        assert_eq!(best_fit(&[(8.0, 1.0), (64.0, 8.0), (8.0, 1.1)]), None);
        assert_eq!(best_fit(&[(0.0, 1.0), (64.0, 8.0), (512.0, 64.0)]), None);
        let json = serde_json::to_string(&fit.class).unwrap();
        assert_eq!(json, r#""O(N log N)""#);
    }

    #[test]
    fn a_given_function_is_fitted_through_its_values_and_classes_round_trip_as_options() {
        // t = 0.5 · N^1.5 at four sizes: the values of the user's function fit exactly, and
        // no usual class does.
        let f = |n: f64| n.powf(1.5);
        let pts: Vec<(f64, f64)> = [256.0, 2048.0, 16384.0, 65536.0]
            .iter()
            .map(|&n| (n, 0.5 * f(n)))
            .collect();
        let values: Vec<(f64, f64)> = pts.iter().map(|&(n, t)| (f(n), t)).collect();
        let fit = fit_values(&values, Class::Custom).unwrap();
        assert!(
            (fit.coefficient - 0.5).abs() < 1e-12 && fit.rms < 1e-12,
            "{fit:?}"
        );
        assert!(best_fit(&pts).unwrap().rms > 0.05);
        assert_eq!(fit_values(&[(0.0, 1.0), (0.0, 2.0)], Class::Custom), None);
        assert_eq!(fit_values(&[(f64::INFINITY, 1.0)], Class::Custom), None);
        for c in Class::ALL {
            assert_eq!(Class::parse_option(c.option()), Some(c));
        }
        assert_eq!(Class::parse_option("f(N)"), None);
        assert_eq!(Class::parse_option("N log N"), None);
    }
}
