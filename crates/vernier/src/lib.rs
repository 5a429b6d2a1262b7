//! Vernier: precision micro-benchmarking.
//!
//! This crate is what benchmarks link: the timer, the measuring engine, the statistics, the
//! analysis and a plain-text report. It stays light (no CLI parser, no plotting). The `vernier`
//! command (crate `vernier-cli`) drives benchmark executables, compares builds and audits the
//! machine with the same engine.
//!
//! The pipeline in the order data flows, one folder per stage. In the code a stage uses only the
//! stages to its left, and `plan` and `samples`, the two descriptions they all share; the
//! order is a table, `layers.txt` beside `src/`, that a test holds every `crate::` path to:
//!
//! ```text
//! workload ──► plan ──► measure ──► samples ──► analyze ──► result ──► pipeline ──► report, protocol ──► session
//! ```
//!
//! - [`workload`]: what to measure — routines and their measured loops, inputs, cold-cache
//!   routines, reference kernels;
//! - [`plan`]: how — timer floor, sample length, budget, warm-up policy;
//! - [`measure`]: the engine — one sampling state machine (calibration, warm-up, collection,
//!   stopping) that one benchmark and a pair drive with their own policies; the
//!   in-process targets;
//! - [`samples`]: every raw sample, warm-up included;
//! - [`analyze`]: figures and diagnostics from the samples, core speed, comparisons from pairs;
//! - [`result`]: the result and comparison files (schema, loading, atomic writes);
//! - [`speed_file`]: the machine's speed file — its known core speed, and each program's
//!   identity and recent medians;
//! - [`pipeline`]: the one step from a measurement to its result, that every path takes;
//! - [`report`]: the terminal tables and their words (units, style);
//! - [`protocol`]: the worker protocol, both sides, and the Rust suite's worker;
//! - [`session`]: runs in this process — the [`Suite`] a program registers its benchmarks on
//!   and its [`Options`], standalone `cargo bench`, registered comparisons, the harness's
//!   self-calibration, whole-program checkpoints.
//!
//! Beneath the stages, used by several: the instruments ([`timer`], [`counters`]), the
//! statistics ([`stats`]: robust estimates, steady-state detection, comparison tests),
//! [`machine`], [`diagnostic`] (codes, findings and their words) and [`units`] (durations for
//! people, which the diagnostics' words and the report both write).

pub mod analyze;
pub mod counters;
pub mod diagnostic;
pub mod machine;
pub mod measure;
pub mod memory;
pub mod pipeline;
pub mod plan;
pub mod protocol;
#[cfg(doctest)]
mod readme;
pub mod report;
pub mod result;
pub mod samples;
pub mod session;
pub mod shard;
pub mod speed_file;
pub mod stats;
pub mod timer;
pub mod units;
pub mod unpaired;
pub mod workload;

pub use memory::CountingAlloc;
pub use session::checkpoint::{checkpoint, checkpoint_summary};
pub use session::suite::{Options, Suite, SuiteError};
pub use stats::complexity::Class as Complexity;
pub use std::hint::black_box;
pub use units::Throughput;
/// The former name of [`workload`], kept so that code written against it still builds.
#[doc(hidden)]
pub use workload as target;
pub use workload::asynchronous::Executor;
#[cfg(feature = "futures")]
pub use workload::asynchronous::FuturesExecutor;
#[cfg(feature = "smol")]
pub use workload::asynchronous::SmolExecutor;
pub use workload::input::{pool, Rng, DEFAULT_POOL};
pub use workload::{dense_range, range};

/// Entry point for `benches/*.rs` with `harness = false`: each argument is a function taking
/// `&mut vernier::Suite`. The program measures standalone under `cargo bench`, and is a
/// worker when launched by `vernier run`.
///
/// ```no_run
/// fn arithmetic(s: &mut vernier::Suite) {
///     s.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
/// }
/// vernier::main!(arithmetic);
/// ```
#[macro_export]
macro_rules! main {
    ($($group:path),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::Suite::run_main(|suite| {
                $( $group(suite); )+
            })
        }
    };
}
