//! Vernier: precision micro-benchmarking.
//!
//! This crate is what benchmarks link: the timer, the measuring engine, the statistics, the
//! analysis and a plain-text report. It stays light (no CLI parser, no plotting). The `vernier`
//! command (crate `vernier-cli`) drives benchmark executables, compares builds and audits the
//! machine with the same engine.
//!
//! The pipeline, one module per stage: target (`suite`) → plan (`plan`) → measure (`measure`,
//! `timer`) → raw samples (`samples`) → analyze (`steady`, `speed`, `stats`, `analyze`) → result
//! (`result`) → report (`report`).

pub mod analyze;
pub mod cache;
pub mod checkpoint;
pub mod compare;
pub mod compare_stats;
pub mod counters;
pub mod diagnostic;
pub mod earlier;
pub mod kernels;
pub mod machine;
pub mod measure;
pub mod plan;
pub mod protocol;
#[cfg(doctest)]
mod readme;
pub mod report;
pub mod result;
pub mod samples;
pub mod speed;
pub mod stats;
pub mod steady;
pub mod suite;
pub mod timer;
pub mod units;

pub use checkpoint::{checkpoint, checkpoint_summary};
pub use std::hint::black_box;
pub use suite::{pool, Options, Rng, Suite, SuiteError};

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
        fn main() {
            let mut suite = $crate::Suite::from_args();
            $( $group(&mut suite); )+
            suite.finish();
        }
    };
}
