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
mod drive;
mod entry;
mod routines;
mod session;

use routines::{Batched, Custom, Iter, LargeDrop};
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

pub use asynchronous::{async_executor, AsyncBencher};
pub use std::hint::black_box;

/// What a benchmark's time is measured with. Only wall time: Vernier's timer.
pub mod measurement {
    /// A way of measuring. Only [`WallTime`] implements it here.
    pub trait Measurement {}

    /// Wall-clock time, read by Vernier's timer (the TSC where it is invariant).
    #[derive(Clone, Copy, Debug, Default)]
    pub struct WallTime;

    impl Measurement for WallTime {}
}

use measurement::{Measurement, WallTime};

/// How many inputs of [`Bencher::iter_batched`] are built before each timed batch.
#[derive(Debug, Eq, PartialEq, Copy, Hash, Clone)]
#[non_exhaustive]
pub enum BatchSize {
    /// Every input of a sample built before it: one timed region per sample.
    SmallInput,
    /// A thousand batches per sample, each timed on its own.
    LargeInput,
    /// One input per batch: each iteration timed on its own.
    PerIteration,
    /// This many batches per sample.
    NumBatches(u64),
    /// Batches of this many iterations.
    NumIterations(u64),
}

/// The work one iteration does: the table, the result file and the exports then show its rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Throughput {
    /// Bytes per iteration (rates in binary units: KiB/s, MiB/s, GiB/s).
    Bytes(u64),
    /// Bytes per iteration; Vernier shows every byte rate in binary units.
    BytesDecimal(u64),
    /// Elements per iteration.
    Elements(u64),
}

impl Throughput {
    fn to_vernier(&self) -> vernier::Throughput {
        match *self {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                vernier::Throughput::BytesPerIter(n)
            }
            Throughput::Elements(n) => vernier::Throughput::ItemsPerIter(n),
        }
    }
}

/// Accepted and ignored: Vernier draws no plots in the bench program (`vernier report --html`
/// does, from the result file).
#[derive(Debug, Clone, Copy)]
pub enum AxisScale {
    Linear,
    Logarithmic,
}

/// Accepted and ignored (see [`AxisScale`]).
#[derive(Debug, Clone, Default)]
pub struct PlotConfiguration {
    _scale: Option<()>,
}

impl PlotConfiguration {
    pub fn summary_scale(self, _scale: AxisScale) -> PlotConfiguration {
        session::note(
            "PlotConfiguration",
            "Vernier draws no plots in the bench program",
        );
        self
    }
}

/// Accepted and ignored: Vernier chooses its iterations per sample itself.
#[derive(Debug, Clone, Copy)]
pub enum SamplingMode {
    Auto,
    Linear,
    Flat,
}

/// Accepted and ignored: Vernier draws no plots in the bench program.
#[derive(Debug, Clone, Copy)]
pub enum PlottingBackend {
    Gnuplot,
    Plotters,
}

/// Accepted and ignored: Vernier keeps no baselines in `target/criterion` (its result files
/// and `vernier compare`/`vernier history` do that job).
#[derive(Debug, Clone, Copy)]
pub enum Baseline {
    CompareLenient,
    CompareStrict,
    Save,
    Discard,
}

/// A benchmark's name within its group: a function name, a parameter, or both
/// (`function/parameter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchmarkId {
    function: Option<String>,
    parameter: Option<String>,
}

impl BenchmarkId {
    /// `function/parameter`.
    pub fn new<S: Into<String>, P: fmt::Display>(function_name: S, parameter: P) -> BenchmarkId {
        BenchmarkId {
            function: Some(function_name.into()),
            parameter: Some(parameter.to_string()),
        }
    }

    /// The parameter alone (in a group: `group/parameter`).
    pub fn from_parameter<P: fmt::Display>(parameter: P) -> BenchmarkId {
        BenchmarkId {
            function: None,
            parameter: Some(parameter.to_string()),
        }
    }

    fn label(&self) -> Option<String> {
        match (&self.function, &self.parameter) {
            (Some(f), Some(p)) => Some(format!("{f}/{p}")),
            (Some(f), None) => Some(f.clone()),
            (None, Some(p)) => Some(p.clone()),
            (None, None) => None,
        }
    }
}

impl fmt::Display for BenchmarkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label().unwrap_or_default())
    }
}

/// What a benchmark can be named with in a group: a `&str`, a `String` or a [`BenchmarkId`].
pub trait IntoBenchmarkId {
    fn into_benchmark_id(self) -> BenchmarkId;
}

impl IntoBenchmarkId for BenchmarkId {
    fn into_benchmark_id(self) -> BenchmarkId {
        self
    }
}

impl<S: Into<String>> IntoBenchmarkId for S {
    fn into_benchmark_id(self) -> BenchmarkId {
        BenchmarkId {
            function: Some(self.into()),
            parameter: None,
        }
    }
}

/// The benchmark manager of a `criterion_group!`: registers benchmarks. Its settings are
/// Criterion's; those without a meaning in Vernier are accepted and ignored (said once on
/// standard error).
pub struct Criterion<M: Measurement = WallTime> {
    _measurement: PhantomData<M>,
}

impl Default for Criterion<WallTime> {
    fn default() -> Self {
        Criterion {
            _measurement: PhantomData,
        }
    }
}

/// Criterion's settings of its own sampling and statistics: Vernier chooses the samples
/// (budget: `--time SECONDS` or `--quick` on the command line, or `vernier run --time`).
const SAMPLING: &str = "Vernier chooses its samples and iterations (budget: --time SECONDS)";
const STATISTICS: &str =
    "Vernier's intervals and verdicts are its own (vernier compare, vernier history)";
const PLOTS: &str = "Vernier draws no plots in the bench program (vernier report --html does)";

impl<M: Measurement> Criterion<M> {
    pub fn sample_size(self, _n: usize) -> Self {
        session::note("sample_size", SAMPLING);
        self
    }
    pub fn warm_up_time(self, _d: Duration) -> Self {
        session::note("warm_up_time", SAMPLING);
        self
    }
    pub fn measurement_time(self, _d: Duration) -> Self {
        session::note("measurement_time", SAMPLING);
        self
    }
    pub fn nresamples(self, _n: usize) -> Self {
        session::note("nresamples", STATISTICS);
        self
    }
    pub fn noise_threshold(self, _t: f64) -> Self {
        session::note("noise_threshold", STATISTICS);
        self
    }
    pub fn confidence_level(self, _cl: f64) -> Self {
        session::note("confidence_level", STATISTICS);
        self
    }
    pub fn significance_level(self, _sl: f64) -> Self {
        session::note("significance_level", STATISTICS);
        self
    }
    pub fn with_plots(self) -> Self {
        session::note("with_plots", PLOTS);
        self
    }
    pub fn without_plots(self) -> Self {
        self
    }
    pub fn plotting_backend(self, _b: PlottingBackend) -> Self {
        session::note("plotting_backend", PLOTS);
        self
    }
    pub fn save_baseline(self, _name: String) -> Self {
        session::note("save_baseline", STATISTICS);
        self
    }
    pub fn retain_baseline(self, _name: String, _strict: bool) -> Self {
        session::note("retain_baseline", STATISTICS);
        self
    }
    pub fn with_output_color(self, _enabled: bool) -> Self {
        self
    }
    pub fn output_directory(self, _path: &std::path::Path) -> Self {
        session::note(
            "output_directory",
            "Vernier writes its results with --json FILE",
        );
        self
    }
    pub fn profile_time(self, _t: Option<Duration>) -> Self {
        session::note("profile_time", SAMPLING);
        self
    }
    /// A filter set in code: Vernier takes its filter from the command line only.
    pub fn with_filter<S: Into<String>>(self, _filter: S) -> Self {
        session::note(
            "with_filter",
            "Vernier takes its filter from the command line (cargo bench -- FILTER)",
        );
        self
    }
    /// The command line is read once by `criterion_main!` (filter, `--list`, `--exact`,
    /// Vernier's `--time`, `--quick`, `--json`…): nothing to do here.
    pub fn configure_from_args(self) -> Self {
        self
    }
    /// Vernier prints its table as it goes and its summary after the last benchmark.
    pub fn final_summary(&self) {}

    /// A group of benchmarks named `group_name/…`, sharing a throughput.
    pub fn benchmark_group<S: Into<String>>(&mut self, group_name: S) -> BenchmarkGroup<'_, M> {
        let name = group_name.into();
        if name.is_empty() {
            session::refuse("a benchmark group's name is empty; give it a name");
        }
        BenchmarkGroup {
            _criterion: self,
            name,
            throughput: None,
            ids: Vec::new(),
        }
    }

    /// A benchmark named `id`.
    pub fn bench_function<F>(&mut self, id: &str, mut f: F) -> &mut Self
    where
        F: FnMut(&mut Bencher<'_, M>),
    {
        session::visit(id.to_string(), None, &mut |b| f(b));
        self
    }

    /// A benchmark named `function/parameter` on `input`.
    pub fn bench_with_input<F, I: ?Sized>(
        &mut self,
        id: BenchmarkId,
        input: &I,
        mut f: F,
    ) -> &mut Self
    where
        F: FnMut(&mut Bencher<'_, M>, &I),
    {
        if id.function.is_none() {
            session::refuse(
                "BenchmarkId::from_parameter names no function: Criterion::bench_with_input needs \
                 BenchmarkId::new(FUNCTION, PARAMETER) (or use a benchmark group)",
            );
            return self;
        }
        session::visit(id.to_string(), None, &mut |b| f(b, input));
        self
    }
}

/// Benchmarks named `group/…`, sharing a throughput; Criterion's sampling and plot settings
/// are accepted and ignored.
pub struct BenchmarkGroup<'a, M: Measurement = WallTime> {
    _criterion: &'a mut Criterion<M>,
    name: String,
    throughput: Option<Throughput>,
    ids: Vec<String>,
}

impl<M: Measurement> BenchmarkGroup<'_, M> {
    pub fn sample_size(&mut self, _n: usize) -> &mut Self {
        session::note("sample_size", SAMPLING);
        self
    }
    pub fn warm_up_time(&mut self, _d: Duration) -> &mut Self {
        session::note("warm_up_time", SAMPLING);
        self
    }
    pub fn measurement_time(&mut self, _d: Duration) -> &mut Self {
        session::note("measurement_time", SAMPLING);
        self
    }
    pub fn nresamples(&mut self, _n: usize) -> &mut Self {
        session::note("nresamples", STATISTICS);
        self
    }
    pub fn noise_threshold(&mut self, _t: f64) -> &mut Self {
        session::note("noise_threshold", STATISTICS);
        self
    }
    pub fn confidence_level(&mut self, _cl: f64) -> &mut Self {
        session::note("confidence_level", STATISTICS);
        self
    }
    pub fn significance_level(&mut self, _sl: f64) -> &mut Self {
        session::note("significance_level", STATISTICS);
        self
    }
    pub fn sampling_mode(&mut self, _m: SamplingMode) -> &mut Self {
        session::note("sampling_mode", SAMPLING);
        self
    }
    pub fn plot_config(&mut self, _c: PlotConfiguration) -> &mut Self {
        session::note("plot_config", PLOTS);
        self
    }
    /// The work one iteration does, for the benchmarks registered after it in this group.
    pub fn throughput(&mut self, t: Throughput) -> &mut Self {
        self.throughput = Some(t);
        self
    }

    /// A benchmark named `group/id`.
    pub fn bench_function<ID: IntoBenchmarkId, F>(&mut self, id: ID, mut f: F) -> &mut Self
    where
        F: FnMut(&mut Bencher<'_, M>),
    {
        if let Some(name) = self.full_name(id.into_benchmark_id()) {
            session::visit(
                name,
                self.throughput.as_ref().map(Throughput::to_vernier),
                &mut |b| f(b),
            );
        }
        self
    }

    /// A benchmark named `group/id` on `input`.
    pub fn bench_with_input<ID: IntoBenchmarkId, F, I: ?Sized>(
        &mut self,
        id: ID,
        input: &I,
        mut f: F,
    ) -> &mut Self
    where
        F: FnMut(&mut Bencher<'_, M>, &I),
    {
        if let Some(name) = self.full_name(id.into_benchmark_id()) {
            session::visit(
                name,
                self.throughput.as_ref().map(Throughput::to_vernier),
                &mut |b| f(b, input),
            );
        }
        self
    }

    /// The end of the group (nothing to do: each benchmark is measured when Vernier asks).
    pub fn finish(self) {}

    /// `group/label`; `None` (said on standard error) for a label used twice in the group,
    /// which Criterion refuses too.
    fn full_name(&mut self, id: BenchmarkId) -> Option<String> {
        let name = match id.label() {
            Some(label) => format!("{}/{label}", self.name),
            None => self.name.clone(),
        };
        if self.ids.contains(&name) {
            session::refuse(&format!(
                "benchmark '{name}' is registered twice in its group; give each benchmark its own id"
            ));
            return None;
        }
        self.ids.push(name.clone());
        Some(name)
    }
}

/// Times a benchmark's routine: the closure of `bench_function` calls one of its `iter`
/// methods once, with the routine to measure; Vernier then measures it there.
pub struct Bencher<'a, M: Measurement = WallTime> {
    slot: session::Slot<'a>,
    _measurement: PhantomData<M>,
}

impl<M: Measurement> Bencher<'_, M> {
    /// Each iteration calls `routine`; its result passes the optimisation barrier.
    pub fn iter<O, R: FnMut() -> O>(&mut self, routine: R) {
        self.slot.serve(&mut Iter(routine));
    }

    /// Each iteration calls `routine`; its results are dropped after the timed region.
    pub fn iter_with_large_drop<O, R: FnMut() -> O>(&mut self, routine: R) {
        self.slot.serve(&mut LargeDrop {
            routine,
            outputs: Vec::new(),
        });
    }

    /// Each iteration calls `routine` on an input `setup` built outside the timed region.
    pub fn iter_batched<I, O, S, R>(&mut self, setup: S, mut routine: R, size: BatchSize)
    where
        S: FnMut() -> I,
        R: FnMut(I) -> O,
    {
        self.slot.serve(&mut Batched::new(
            setup,
            move |i: &mut Option<I>| routine(i.take().expect("each input is used once")),
            size,
        ));
    }

    /// As [`Bencher::iter_batched`], the routine taking its input by reference (the inputs
    /// are dropped after the timed region).
    pub fn iter_batched_ref<I, O, S, R>(&mut self, setup: S, mut routine: R, size: BatchSize)
    where
        S: FnMut() -> I,
        R: FnMut(&mut I) -> O,
    {
        self.slot.serve(&mut Batched::new(
            setup,
            move |i: &mut Option<I>| {
                routine(
                    i.as_mut()
                        .expect("each input is built before the timed region"),
                )
            },
            size,
        ));
    }

    /// [`Bencher::iter_batched`] with one input per batch (Criterion's deprecated form).
    pub fn iter_with_setup<I, O, S, R>(&mut self, setup: S, routine: R)
    where
        S: FnMut() -> I,
        R: FnMut(I) -> O,
    {
        self.iter_batched(setup, routine, BatchSize::PerIteration);
    }

    /// The routine times `iters` iterations itself and returns the time they took.
    pub fn iter_custom<R: FnMut(u64) -> Duration>(&mut self, routine: R) {
        self.slot.serve(&mut Custom(routine));
    }
}

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
