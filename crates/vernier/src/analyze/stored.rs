//! The figures an analysis reports, in the shapes the result file stores them: the
//! per-iteration estimates and their intervals, outliers, warm-up, each process's median, and
//! the interrupted samples (`nan` writes an undefined figure as `null`).

use super::nan::{nan_as_null, nan_pair};
use crate::stats::steady::WarmupClass;
use serde::{Deserialize, Serialize};

/// Per-iteration estimates (ns), as the result file's `per_iter` holds them (NaN, written
/// `null`, when undefined).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerIter {
    #[serde(with = "nan_as_null")]
    pub median_ns: f64,
    #[serde(with = "nan_as_null")]
    pub min_ns: f64,
    #[serde(with = "nan_as_null")]
    pub mean_ns: f64,
    /// The σ of one iteration, σ_iter = σ_sample / √N, with the robust σ_sample = IQR/1.349 of sample times.
    #[serde(with = "nan_as_null")]
    pub sigma_ns: f64,
    /// The median's 95 % interval: the run's own (`run_ci95_ns`), joined to what another run
    /// on this machine would give at another clock (see `speed::clock_interval`).
    #[serde(with = "nan_pair")]
    pub ci95_ns: [f64; 2],
    /// The interval of this run's samples alone (processes and rounds included, the clock
    /// range not): how precisely this run measured, what `unstable` judges. The same as
    /// `ci95_ns` when the clock's range is unknown.
    #[serde(default = "nan_pair::none", with = "nan_pair")]
    pub run_ci95_ns: [f64; 2],
    /// The linearity fit T = a + b·N (NaN without one): b, a and R² (its standard error is in
    /// [`super::Analysis::fit`]).
    #[serde(with = "nan_as_null")]
    pub slope_ns: f64,
    #[serde(with = "nan_as_null")]
    pub intercept_ns: f64,
    #[serde(with = "nan_as_null")]
    pub r2: f64,
    /// Robust spread of the per-iteration mean of one sample (IQR/1.349 of ns/N).
    #[serde(default, with = "nan_as_null")]
    pub sample_sigma_ns: f64,
    /// MAD of the per-iteration means of the samples.
    #[serde(default, with = "nan_as_null")]
    pub mad_ns: f64,
}

impl PerIter {
    /// Every figure undefined (a benchmark with no sample to estimate from).
    pub fn undefined() -> PerIter {
        let nan = f64::NAN;
        PerIter {
            median_ns: nan,
            min_ns: nan,
            mean_ns: nan,
            sigma_ns: nan,
            ci95_ns: [nan, nan],
            run_ci95_ns: [nan, nan],
            slope_ns: nan,
            intercept_ns: nan,
            r2: nan,
            sample_sigma_ns: nan,
            mad_ns: nan,
        }
    }
}

/// Outliers among the steady samples (Tukey fences on per-iteration times).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outliers {
    /// Beyond 1.5 × IQR.
    pub mild: usize,
    /// Beyond 3 × IQR.
    pub far: usize,
    /// Median time between far outliers when they recur regularly (a timer tick, an IRQ).
    pub period_ns: Option<f64>,
}

/// Warm-up as reported.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    pub samples: usize,
    /// From the benchmark's start to its steady state, calibration included.
    pub seconds: f64,
    pub class: WarmupClass,
}

/// A worker process's share of the samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessFigure {
    pub index: u32,
    pub median_ns: f64,
    pub ci95_ns: (f64, f64),
    pub samples: usize,
}

/// Steady samples during which the thread was switched out or migrated, and how much they
/// move the estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interrupted {
    /// Steady samples with a context switch or a CPU migration.
    pub samples: usize,
    /// Steady samples in all.
    pub of: usize,
    /// samples / of.
    pub share: f64,
    /// Median per-iteration time with and without them.
    #[serde(with = "nan_as_null")]
    pub median_with_ns: f64,
    #[serde(with = "nan_as_null")]
    pub median_without_ns: f64,
    /// Whether the estimates exclude them (the default; `--keep-interrupted` keeps them).
    pub excluded: bool,
    /// A threaded benchmark's threads' share of their time in the steady samples spent
    /// waiting for a CPU, where known (a sample in which one waited counts as interrupted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_share: Option<f64>,
}
