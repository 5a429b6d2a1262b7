//! Steady-state detection: where does warm-up end?
//!
//! Method: MSER-5 (the Marginal Standard Error Rule of White, 1997, with batches of five), the
//! standard truncation rule for initialisation bias in simulation output analysis, made robust:
//! it runs on the *logarithm* of per-iteration times (multiplicative effects become shifts) and
//! on the *median* of each batch of five (a lone scheduler spike cannot move a batch). For each
//! candidate truncation point d it computes the squared standard error of the mean of what
//! remains, Σ(y − ȳ)²/(m − d)², and keeps the d that minimises it: cutting a transient removes
//! variance faster than it removes data. A minimum in the second half of the series means the
//! series never settled: `no-steady-state`.
//!
//! The cut is then classified by comparing the median of what it removed with the median of
//! what remains: slower before → `warmup` (caches, page faults, lazy binding, frequency ramp-up),
//! faster before → `slowdown` (turbo budget spent, thermal throttling, memory filling up), and a
//! difference within noise → `flat` (nothing is excluded).

use crate::stats;
use serde::{Deserialize, Serialize};

/// How the series behaved before its steady state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarmupClass {
    Flat,
    Warmup,
    Slowdown,
    NoSteadyState,
}

impl WarmupClass {
    pub fn as_str(self) -> &'static str {
        match self {
            WarmupClass::Flat => "flat",
            WarmupClass::Warmup => "warmup",
            WarmupClass::Slowdown => "slowdown",
            WarmupClass::NoSteadyState => "no-steady-state",
        }
    }
}

/// The result of steady-state detection on a series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyState {
    /// Index of the first steady element of the series.
    pub first: usize,
    pub class: WarmupClass,
}

/// MSER batch size (the "5" of MSER-5).
pub const MSER_BATCH: usize = 5;
/// Fewest batches MSER is run on; shorter series are reported as not yet steady.
pub const MSER_MIN_BATCHES: usize = 8;
/// A warm-up whose median differs from the steady median by less than this (relative) is
/// treated as flat: 1 % is below what any decision about code speed rests on.
pub const WARMUP_MIN_SHIFT: f64 = 0.01;
/// ... and it must also stand this many standard errors out of the steady state's noise.
pub const WARMUP_MIN_SIGMAS: f64 = 3.0;

/// Detect the steady state of a series of per-iteration times (positive, in time order).
/// Returns `None` when the series is too short to tell.
pub fn detect(series: &[f64]) -> Option<SteadyState> {
    let m = series.len() / MSER_BATCH;
    if m < MSER_MIN_BATCHES {
        return None;
    }
    // Batch medians of the log series.
    let y: Vec<f64> = (0..m)
        .map(|b| {
            let mut chunk: Vec<f64> = series[b * MSER_BATCH..(b + 1) * MSER_BATCH]
                .iter()
                .map(|x| x.max(f64::MIN_POSITIVE).ln())
                .collect();
            chunk.sort_by(|a, b| a.total_cmp(b));
            chunk[MSER_BATCH / 2]
        })
        .collect();
    // Suffix sums let each candidate d be scored in O(1).
    let mut suf_s = vec![0.0; m + 1];
    let mut suf_q = vec![0.0; m + 1];
    for i in (0..m).rev() {
        suf_s[i] = suf_s[i + 1] + y[i];
        suf_q[i] = suf_q[i + 1] + y[i] * y[i];
    }
    // Candidates stop short of the end: the last few batches alone always look "stable".
    let last = m - MSER_MIN_BATCHES / 2;
    let mut best = (0usize, f64::INFINITY);
    for d in 0..last {
        let k = (m - d) as f64;
        let ss = (suf_q[d] - suf_s[d] * suf_s[d] / k).max(0.0);
        let score = ss / (k * k);
        if score < best.1 {
            best = (d, score);
        }
    }
    let d = best.0;
    if d > m / 2 {
        return Some(SteadyState {
            first: d * MSER_BATCH,
            class: WarmupClass::NoSteadyState,
        });
    }
    let first = d * MSER_BATCH;
    if first == 0 {
        return Some(SteadyState {
            first: 0,
            class: WarmupClass::Flat,
        });
    }
    let head = stats::sorted(&series[..first]);
    let tail = stats::sorted(&series[first..]);
    let head_med = stats::median_sorted(&head);
    let tail_med = stats::median_sorted(&tail);
    let shift = (head_med / tail_med).ln();
    // Noise of the steady state, in log units, and the standard error of the head's median.
    let rel_sigma = stats::iqr_sigma_sorted(&tail) / tail_med;
    let se = rel_sigma * 1.2533 / (first as f64).sqrt(); // √(π/2): s.e. of a median
    if shift.abs() < WARMUP_MIN_SHIFT || shift.abs() < WARMUP_MIN_SIGMAS * se {
        return Some(SteadyState {
            first: 0,
            class: WarmupClass::Flat,
        });
    }
    Some(SteadyState {
        first,
        class: if shift > 0.0 {
            WarmupClass::Warmup
        } else {
            WarmupClass::Slowdown
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-noise in ±amp (relative).
    fn noisy(n: usize, base: f64, amp: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                base * (1.0 + amp * (2.0 * u - 1.0))
            })
            .collect()
    }

    #[test]
    fn flat_series_is_flat() {
        let s = noisy(500, 10.0, 0.02, 1);
        let st = detect(&s).unwrap();
        assert_eq!(st.class, WarmupClass::Flat);
        assert_eq!(st.first, 0);
    }

    #[test]
    fn decaying_warmup_is_cut() {
        let mut s = noisy(1000, 10.0, 0.02, 2);
        for (i, x) in s.iter_mut().enumerate().take(200) {
            *x *= 1.0 + 2.0 * (-(i as f64) / 40.0).exp();
        }
        let st = detect(&s).unwrap();
        assert_eq!(st.class, WarmupClass::Warmup);
        assert!((60..=300).contains(&st.first), "cut at {}", st.first);
    }

    #[test]
    fn early_fast_phase_is_a_slowdown() {
        let mut s = noisy(1000, 10.0, 0.02, 3);
        for x in s.iter_mut().take(150) {
            *x *= 0.8;
        }
        let st = detect(&s).unwrap();
        assert_eq!(st.class, WarmupClass::Slowdown);
        assert!((140..=170).contains(&st.first), "cut at {}", st.first);
    }

    #[test]
    fn steady_decline_never_settles() {
        let s: Vec<f64> = (0..1000).map(|i| 100.0 - 0.09 * i as f64).collect();
        let st = detect(&s).unwrap();
        assert_eq!(st.class, WarmupClass::NoSteadyState);
    }

    #[test]
    fn isolated_spikes_do_not_move_the_cut() {
        let mut s = noisy(1000, 10.0, 0.01, 4);
        for i in (0..1000).step_by(97) {
            s[i] *= 20.0;
        }
        let st = detect(&s).unwrap();
        assert_eq!(st.class, WarmupClass::Flat);
    }

    #[test]
    fn too_short_is_undecided() {
        assert!(detect(&[1.0; 20]).is_none());
    }
}
