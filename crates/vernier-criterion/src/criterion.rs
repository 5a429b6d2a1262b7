//! [`Criterion`], the benchmark manager of a `criterion_group!`, and its [`BenchmarkGroup`]s:
//! each benchmark they register is visited by the session's pass (`session::visit`), which
//! enters its closure, with a [`Bencher`], only when it is the benchmark wanted.

use crate::bencher::Bencher;
use crate::ids::{BenchmarkId, IntoBenchmarkId};
use crate::measurement::{Measurement, WallTime};
use crate::session;
use crate::settings::{PlotConfiguration, PlottingBackend, SamplingMode, Throughput};
use std::marker::PhantomData;
use std::time::Duration;

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
        session::visit(id.to_string(), None, &mut |slot| f(&mut Bencher::new(slot)));
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
        if !id.has_function() {
            session::refuse(
                "BenchmarkId::from_parameter names no function: Criterion::bench_with_input needs \
                 BenchmarkId::new(FUNCTION, PARAMETER) (or use a benchmark group)",
            );
            return self;
        }
        session::visit(id.to_string(), None, &mut |slot| {
            f(&mut Bencher::new(slot), input)
        });
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
                &mut |slot| f(&mut Bencher::new(slot)),
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
                &mut |slot| f(&mut Bencher::new(slot), input),
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
