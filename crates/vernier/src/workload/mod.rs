//! The first stage, what to measure: the routines a program registers (its suite, in
//! `crate::session::suite`, holds them as [`Entry`]s), their inputs and the fixed kernels.
//! Measuring them is a later stage's job: in this process (`crate::session`, standalone and
//! `cargo bench`) or for a runner through the worker protocol (`crate::protocol::serve`).
//!
//! - `routine`: the [`Routine`] trait, the [`Meter`](routine::Meter) and the
//!   measured loops, monomorphised per closure (dynamic dispatch happens once per sample, outside
//!   the timed region);
//! - `asynchronous`: async bodies, the [`Executor`](asynchronous::Executor) trait and the ready
//!   executors behind the crate's features;
//! - `input`: the seeded generator and input pools;
//! - `cache`: cold-cache routines (the evictor walked before each sample);
//! - `kernels`: fixed workloads (the add chain of the core-speed probe, pointer chases);
//! - `threads`: threaded benchmarks, a pool of threads released together for each sample;
//! - `thread_clock`: a thread's on-CPU time and run-queue wait, read outside the timed region.

#[doc(hidden)]
pub mod asynchronous;
#[doc(hidden)]
pub mod cache;
pub mod input;
pub mod kernels;
#[doc(hidden)]
pub mod routine;
#[doc(hidden)]
pub mod thread_clock;
pub mod threads;

use routine::Routine;

/// A registered benchmark.
#[doc(hidden)]
pub struct Entry {
    pub name: String,
    pub routine: Box<dyn Routine>,
    /// Declared allocation-free (`Suite::bench_alloc_free`).
    pub alloc_free: bool,
    /// The work one iteration does (`Suite::throughput`).
    pub throughput: Option<crate::units::Throughput>,
    /// How its complexity family is fitted (`Suite::complexity`, `Suite::complexity_fn`).
    pub complexity: Option<crate::stats::complexity::Declared>,
}

/// Google Benchmark's `Range(lo, hi)` with its `RangeMultiplier(mult)`: `lo`, the powers of
/// `mult` strictly between `lo` and `hi`, and `hi` (`range(8, 8 << 10, 8)`: 8, 64, 512, 4096,
/// 8192). For [`Suite::bench_args`](crate::Suite::bench_args).
pub fn range(lo: u64, hi: u64, mult: u64) -> Vec<u64> {
    let mult = mult.max(2);
    let mut out = vec![lo];
    let mut i: u64 = 1;
    while i < hi {
        if i > lo {
            out.push(i);
        }
        match i.checked_mul(mult) {
            Some(next) => i = next,
            None => break,
        }
    }
    if hi != lo {
        out.push(hi);
    }
    out
}

/// Google Benchmark's `DenseRange(lo, hi, step)`: `lo`, `lo + step`, … up to `hi`.
pub fn dense_range(lo: u64, hi: u64, step: u64) -> Vec<u64> {
    (lo..=hi).step_by(step.max(1) as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_google_benchmark_s() {
        assert_eq!(range(8, 8 << 10, 8), [8, 64, 512, 4096, 8192]);
        assert_eq!(range(256, 65536, 4), [256, 1024, 4096, 16384, 65536]);
        assert_eq!(range(1, 1, 2), [1]);
        assert_eq!(range(0, 5, 2), [0, 1, 2, 4, 5]);
        assert_eq!(dense_range(0, 10, 5), [0, 5, 10]);
        assert_eq!(dense_range(1, 3, 0), [1, 2, 3]);
    }
}
