//! Criterion.rs benchmarks, unchanged, measured by Vernier.
//!
//! Rename the dependency and nothing else:
//!
//! ```toml
//! [dev-dependencies]
//! criterion = { package = "vernier-criterion", version = "0.1" }
//! ```
//!
//! The benches keep their `criterion_group!`/`criterion_main!`, their `Criterion`,
//! `BenchmarkGroup`, `Bencher`, `BenchmarkId` and `Throughput`. `cargo bench` measures them
//! in this process and prints Vernier's table; `vernier run -- target/release/deps/BENCH-…`
//! measures them across worker processes, as any Vernier worker. Each benchmark is named as
//! Criterion names it: `group/function/parameter`, and `function` alone for
//! `c.bench_function`.
//!
//! How it works: Criterion runs each closure where it is registered, borrowing the
//! registering function's locals, while a Vernier worker lists every benchmark before it
//! runs any. The group functions are therefore called more than once: a first pass records
//! each benchmark's name without running it; then, for each benchmark Vernier asks for, the
//! group functions run again with every other benchmark skipped, and the wanted one's
//! [`Bencher::iter`] (or a related method) hands its routine to Vernier, which measures it
//! there, for as long as it is asked for. A group function must therefore register the
//! same benchmarks, in the same order, each time it runs (code outside the closures runs
//! again each time). `docs/criterion.md` says what is supported and what is not.

mod args;
mod asynchronous;
mod bencher;
mod criterion;
mod drive;
mod entry;
mod ids;
pub mod measurement;
mod routines;
mod session;
mod settings;

pub use asynchronous::{async_executor, AsyncBencher};
pub use bencher::Bencher;
pub use criterion::{BenchmarkGroup, Criterion};
pub use ids::{BenchmarkId, IntoBenchmarkId};
pub use settings::{
    AxisScale, Baseline, BatchSize, PlotConfiguration, PlottingBackend, SamplingMode, Throughput,
};
pub use std::hint::black_box;

#[doc(hidden)]
pub mod __private {
    pub use crate::entry::main;
    pub use crate::session::target;
}

/// A function running the given benchmark functions, Criterion's two forms:
/// `criterion_group!(benches, f1, f2)` and
/// `criterion_group!{ name = benches; config = Criterion::default()…; targets = f1, f2 }`.
#[macro_export]
macro_rules! criterion_group {
    (name = $name:ident; config = $config:expr; targets = $( $target:path ),+ $(,)*) => {
        pub fn $name() {
            let mut criterion: $crate::Criterion<_> = $config.configure_from_args();
            $(
                $crate::__private::target(&mut criterion, $target);
            )+
        }
    };
    ($name:ident, $( $target:path ),+ $(,)*) => {
        $crate::criterion_group!{
            name = $name;
            config = $crate::Criterion::default();
            targets = $( $target ),+
        }
    };
}

/// The bench program's `main`: measures the groups' benchmarks standalone under
/// `cargo bench`, runs each once under `cargo test --benches`, and is a Vernier worker when
/// `vernier run` launched it.
#[macro_export]
macro_rules! criterion_main {
    ( $( $group:path ),+ $(,)* ) => {
        fn main() -> ::std::process::ExitCode {
            $crate::__private::main(&[ $( $group as fn() ),+ ])
        }
    };
}
