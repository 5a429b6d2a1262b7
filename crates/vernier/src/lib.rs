//! Vernier: precision micro-benchmarking.
//!
//! This crate is what benchmarks link: the timer, the measuring engine, the statistics, the
//! analysis and a plain-text report. It stays light (no CLI parser, no plotting). The `vernier`
//! command (crate `vernier-cli`) drives benchmark executables, compares builds and audits the
//! machine with the same engine.
//!
//! The pipeline, one module per stage: target (`target`) → plan (`plan`) → measure (`measure`)
//! → raw samples (`samples`) → analyze (`analyze`) → result (`result`) → report (`report`), with
//! `protocol` for workers. Beneath the stages, used by several: the instruments (`timer`,
//! `counters`), the statistics (`stats`), `machine` and `diagnostic`.

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
pub mod stats;
pub mod target;
pub mod timer;

// Short paths still spelled out inside the bodies of `analyze/mod.rs` (`crate::units`) and
// `result/mod.rs` (`crate::speed`); crate-private, they go when those bodies next change.
pub(crate) use analyze::speed;
pub(crate) use report::units;

pub use std::hint::black_box;
pub use target::checkpoint::{checkpoint, checkpoint_summary};
pub use target::{pool, Options, Rng, Suite, SuiteError};

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
