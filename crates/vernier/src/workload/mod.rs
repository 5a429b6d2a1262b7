//! The first stage, what to measure: the routines a program registers (its suite, in
//! `crate::session::suite`, holds them as [`Entry`]s), their inputs and the fixed kernels.
//! Measuring them is a later stage's job: in this process (`crate::session`, standalone and
//! `cargo bench`) or for a runner through the worker protocol (`crate::protocol::serve`).
//!
//! - `routine`: the [`Routine`] trait, the [`Meter`](routine::Meter) and the
//!   measured loops, monomorphised per closure (dynamic dispatch happens once per sample, outside
//!   the timed region);
//! - `input`: the seeded generator and input pools;
//! - `cache`: cold-cache routines (the evictor walked before each sample);
//! - `kernels`: fixed workloads (the add chain of the core-speed probe, pointer chases);
//! - `threads`: threaded benchmarks, a pool of threads released together for each sample;
//! - `thread_clock`: a thread's on-CPU time and run-queue wait, read outside the timed region.

pub mod cache;
pub mod input;
pub mod kernels;
pub mod routine;
pub mod thread_clock;
pub mod threads;

use routine::Routine;

/// A registered benchmark.
pub struct Entry {
    pub name: String,
    pub routine: Box<dyn Routine>,
    /// Declared allocation-free (`Suite::bench_alloc_free`).
    pub alloc_free: bool,
}
