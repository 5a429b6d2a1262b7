//! The plain settings of Criterion's API: how inputs are batched ([`BatchSize`]), the work of
//! an iteration ([`Throughput`]), and the sampling and plot settings accepted and ignored.

use crate::session;

/// How many inputs of [`Bencher::iter_batched`](crate::Bencher::iter_batched) are built
/// before each timed batch.
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
    pub(crate) fn to_vernier(&self) -> vernier::Throughput {
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
