//! Vernier: precision micro-benchmarking.
//!
//! A bench program registers its benchmarks on a [`Suite`] and hands it to [`main!`]: under
//! `cargo bench` the program measures them itself and prints the table; launched by the
//! `vernier` command (crate `vernier-cli`), it is a worker that the command measures over
//! several processes. What a bench program uses is here, at the crate's root, and in
//! [`workload`] (inputs, kernels of known cost, threads' helpers):
//!
//! - [`Suite`] and its builders (`bench`, `bench_threads`, `bench_with_setup`, `compare`,
//!   [`Throughput`], [`Complexity`], …), [`main!`] and [`black_box`];
//! - input pools ([`pool`], [`Rng`], [`DEFAULT_POOL`]) and argument ranges ([`range`],
//!   [`dense_range`]);
//! - [`CountingAlloc`], the allocator that counts a benchmark's allocations;
//! - [`checkpoint`] and [`checkpoint_summary`], phases of a whole program.
//!
//! The engine the `vernier` command and the Python module share with bench programs (the
//! stages below) is public to them and hidden from this documentation (`#[doc(hidden)]`): it
//! is not part of the API a bench program relies on, and changes with them. Its stages, in the
//! order data flows, one folder per stage; a stage uses only the stages to its left, and
//! `plan` and `samples`, the two descriptions they all share; the order is a table,
//! `layers.txt` beside `src/`, that a test holds every `crate::` path to:
//!
//! ```text
//! workload ──► plan ──► measure ──► samples ──► analyze ──► result ──► pipeline ──► report, protocol ──► session
//! ```
//!
//! - `workload`: what to measure — routines and their measured loops, inputs, cold-cache
//!   routines, reference kernels;
//! - `plan`: how — timer floor, sample length, budget, warm-up policy;
//! - `measure`: the engine — one sampling state machine (calibration, warm-up, collection,
//!   stopping) that one benchmark and a pair drive with their own policies; the
//!   in-process targets;
//! - `samples`: every raw sample, warm-up included;
//! - `analyze`: figures and diagnostics from the samples, core speed, comparisons from pairs;
//! - `result`: the result and comparison files (schema, loading, atomic writes);
//! - `ledger`: the machine's ledger of earlier runs — its known core speed, and each program's
//!   identity and recent medians;
//! - `pipeline`: the one step from a measurement to its result, that every path takes;
//! - `report`: the terminal tables and their words (units, style);
//! - `protocol`: the worker protocol, both sides, and the Rust suite's worker;
//! - `session`: runs in this process — the [`Suite`] a program registers its benchmarks on
//!   and its options, standalone `cargo bench`, registered comparisons, the harness's
//!   self-calibration, whole-program checkpoints.
//!
//! Beneath the stages, used by several: the instruments (`timer`, `counters`), the
//! statistics (`stats`: robust estimates, steady-state detection, comparison tests),
//! `machine`, `diagnostic` (codes, findings and their words) and `units` (durations for
//! people, which the diagnostics' words and the report both write). Beneath them all, `os`:
//! what differs by operating system, one module per concern, so that nothing else asks which
//! system it runs on.
//!
//! The user API is listed in `crates/vernier/public-api.txt`, which the test command checks
//! against the crate (scripts/public-api.sh): a change to it is seen in review.

#[doc(hidden)]
pub mod analyze;
#[doc(hidden)]
pub mod counters;
#[doc(hidden)]
pub mod diagnostic;
#[doc(hidden)]
pub mod ledger;
#[doc(hidden)]
pub mod machine;
#[doc(hidden)]
pub mod measure;
#[doc(hidden)]
pub mod memory;
#[doc(hidden)]
pub mod os;
#[doc(hidden)]
pub mod pipeline;
#[doc(hidden)]
pub mod plan;
#[doc(hidden)]
pub mod protocol;
#[cfg(doctest)]
mod readme;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod result;
#[doc(hidden)]
pub mod samples;
#[doc(hidden)]
pub mod session;
#[doc(hidden)]
pub mod shard;
#[doc(hidden)]
pub mod stats;
#[doc(hidden)]
pub mod timer;
#[doc(hidden)]
pub mod units;
#[doc(hidden)]
pub mod unpaired;
pub mod workload;

pub use memory::CountingAlloc;
pub use session::checkpoint::{checkpoint, checkpoint_summary, Phase, Summary, Usage};
#[doc(hidden)]
pub use session::options::Options;
pub use session::options::SuiteError;
pub use session::suite::Suite;
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
