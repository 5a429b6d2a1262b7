//! The asymptotic complexity of a benchmark over its input size N: the time per iteration at
//! each N fitted as `c · f(N)` for the usual classes (Google Benchmark's `Complexity()`,
//! nanobench's `complexityN`), by least squares through the origin, and the class whose fit
//! leaves the least root-mean-square error kept. The error is given relative to the mean time,
//! as Google Benchmark gives it, so that a reader can tell a clear fit (a few percent) from a
//! guess.

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

    /// `f(N)` (logarithms in base 2, as Google Benchmark's).
    pub fn f(self, n: f64) -> f64 {
        match self {
            Class::Constant => 1.0,
            Class::Log => n.log2(),
            Class::Linear => n,
            Class::NLogN => n * n.log2(),
            Class::Quadratic => n * n,
            Class::Cubic => n * n * n,
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
        }
    }
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
    let (mut sff, mut sft, mut st) = (0.0, 0.0, 0.0);
    for &(n, t) in points {
        let f = class.f(n);
        sff += f * f;
        sft += f * t;
        st += t;
    }
    let mean = st / points.len() as f64;
    if !(sff > 0.0 && mean > 0.0) {
        return None;
    }
    let c = sft / sff;
    let sse: f64 = points
        .iter()
        .map(|&(n, t)| (t - c * class.f(n)).powi(2))
        .sum();
    let rms = (sse / points.len() as f64).sqrt() / mean;
    (c.is_finite() && rms.is_finite()).then_some(Fit {
        class,
        coefficient: c,
        rms,
    })
}

/// The class that fits `points` best (least relative RMS), from at least [`MIN_POINTS`]
/// distinct sizes of at least 1; `None` below that.
pub fn best_fit(points: &[(f64, f64)]) -> Option<Fit> {
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let valid = points
        .iter()
        .all(|&(n, t)| n.is_finite() && n >= 1.0 && t.is_finite() && t > 0.0);
    if sizes.len() < MIN_POINTS || !valid {
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
}
