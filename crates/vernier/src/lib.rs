//! Vernier: precision micro-benchmarking.
//!
//! This crate is what benchmarks link: the timer, the measuring engine, the statistics, the
//! analysis and a plain-text report. It stays light (no CLI parser, no plotting). The `vernier`
//! command (crate `vernier-cli`) drives benchmark executables, compares builds and audits the
//! machine with the same engine.
//!
//! The pipeline in the order data flows, one folder per stage. In the code a stage uses only the
//! stages to its left, and `plan` and `samples`, the two descriptions they all share (a suite's
//! `Options` carry its plan):
//!
//! ```text
//! target ──► plan ──► measure ──► samples ──► analyze ──► result ──► report ──► protocol ──► session
//! ```
//!
//! - [`target`]: what to measure — the [`Suite`] and its [`Options`], routines and their
//!   measured loops, inputs, cold-cache routines, reference kernels;
//! - [`plan`]: how — timer floor, sample length, budget, warm-up policy;
//! - [`measure`]: the engine — one sampling state machine (calibration, warm-up, collection,
//!   stopping) that one benchmark and a pair drive with their own policies; the
//!   in-process targets;
//! - [`samples`]: every raw sample, warm-up included;
//! - [`analyze`]: figures and diagnostics from the samples, core speed, comparisons from pairs;
//! - [`result`]: the result and comparison files (schema, loading, atomic writes);
//! - [`report`]: the terminal tables and their words (units, style);
//! - [`protocol`]: the worker protocol, both sides, and the Rust suite's worker;
//! - [`session`]: runs in this process — standalone `cargo bench`, registered comparisons,
//!   the harness's self-calibration, whole-program checkpoints.
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
pub mod plan;
pub mod protocol;
#[cfg(doctest)]
mod readme;
pub mod report;
pub mod result;
pub mod samples;
pub mod session;
pub mod stats;
pub mod target;
pub mod timer;
pub mod units;

// A short path still spelled out inside the body of `result/mod.rs` (`crate::speed`);
// crate-private, it goes when that body next changes.
pub(crate) use analyze::speed;

pub use session::checkpoint::{checkpoint, checkpoint_summary};
pub use std::hint::black_box;
pub use target::input::{pool, Rng};
pub use target::{Options, Suite, SuiteError};

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
