//! Criterion's async forms: [`Bencher::to_async`] and its [`AsyncBencher`], over Vernier's
//! async routines (`vernier::workload::asynchronous`): every iteration of a sample runs inside
//! one `block_on` of the executor, as in Criterion.

use crate::bencher::Bencher;
use crate::measurement::{Measurement, WallTime};
use crate::routines::ns_to_ticks;
use crate::settings::BatchSize;
use std::future::Future;
use std::time::Duration;
use vernier::timer::Timer;
use vernier::workload::asynchronous::{run_on, AsyncPlain, AsyncWithSetup};
use vernier::workload::routine::{Meter, Routine};

/// Criterion's executors: [`AsyncExecutor`] is Vernier's `Executor` (one `block_on`, the same
/// signature), implemented for tokio's runtimes (feature `async_tokio`), `SmolExecutor`
/// (`async_smol`) and `FuturesExecutor` (`async_futures`).
pub mod async_executor {
    pub use vernier::Executor as AsyncExecutor;
    #[cfg(feature = "async_futures")]
    pub use vernier::FuturesExecutor;
    #[cfg(feature = "async_smol")]
    pub use vernier::SmolExecutor;
}

use async_executor::AsyncExecutor;

impl<'a, M: Measurement> Bencher<'a, M> {
    /// The async forms of this bencher, on `runner`: `b.to_async(&runtime).iter(|| async { … })`.
    pub fn to_async<'b, A: AsyncExecutor>(&'b mut self, runner: A) -> AsyncBencher<'a, 'b, A, M> {
        AsyncBencher { b: self, runner }
    }
}

/// A [`Bencher`] with an executor: each `iter…` method awaits the routine's futures, all the
/// iterations of a sample inside one `block_on`.
pub struct AsyncBencher<'a, 'b, A: AsyncExecutor, M: Measurement = WallTime> {
    b: &'b mut Bencher<'a, M>,
    runner: A,
}

impl<A: AsyncExecutor, M: Measurement> AsyncBencher<'_, '_, A, M> {
    /// Each iteration awaits `routine()`; the output passes the optimisation barrier.
    pub fn iter<O, R, F>(&mut self, routine: R)
    where
        R: FnMut() -> F,
        F: Future<Output = O>,
    {
        self.b.serve(&mut AsyncPlain {
            executor: &self.runner,
            body: routine,
        });
    }

    /// The routine awaits `iters` iterations itself and returns the time they took.
    pub fn iter_custom<R, F>(&mut self, routine: R)
    where
        R: FnMut(u64) -> F,
        F: Future<Output = Duration>,
    {
        self.b.serve(&mut AsyncCustom {
            executor: &self.runner,
            routine,
        });
    }

    /// Each iteration awaits `routine(input)` on an input `setup` built outside `block_on`.
    pub fn iter_with_setup<I, O, S, R, F>(&mut self, setup: S, routine: R)
    where
        S: FnMut() -> I,
        R: FnMut(I) -> F,
        F: Future<Output = O>,
    {
        self.iter_batched(setup, routine, BatchSize::PerIteration);
    }

    /// Each iteration awaits `routine()`; the outputs are dropped after the timed region.
    pub fn iter_with_large_drop<O, R, F>(&mut self, mut routine: R)
    where
        R: FnMut() -> F,
        F: Future<Output = O>,
    {
        self.iter_batched(|| (), move |()| routine(), BatchSize::SmallInput);
    }

    /// [`AsyncBencher::iter_with_setup`] (Criterion's older name).
    pub fn iter_with_large_setup<I, O, S, R, F>(&mut self, setup: S, routine: R)
    where
        S: FnMut() -> I,
        R: FnMut(I) -> F,
        F: Future<Output = O>,
    {
        self.iter_batched(setup, routine, BatchSize::NumBatches(1));
    }

    /// Each iteration awaits `routine(input)` on an input `setup` built outside the timed
    /// region. All the inputs of a sample are built before its `block_on` and the outputs
    /// dropped after it, whatever the `BatchSize` (one timed region per sample).
    pub fn iter_batched<I, O, S, R, F>(&mut self, setup: S, routine: R, _size: BatchSize)
    where
        S: FnMut() -> I,
        R: FnMut(I) -> F,
        F: Future<Output = O>,
    {
        self.b.serve(&mut AsyncWithSetup {
            executor: &self.runner,
            setup,
            routine,
            inputs: Vec::new(),
            outputs: Vec::new(),
        });
    }

    /// As [`AsyncBencher::iter_batched`], the routine taking its input by reference: each
    /// input is dropped with the outputs, after the timed region.
    pub fn iter_batched_ref<I, O, S, R, F>(&mut self, setup: S, mut routine: R, size: BatchSize)
    where
        S: FnMut() -> I,
        R: FnMut(&mut I) -> F,
        F: Future<Output = O>,
    {
        self.iter_batched(
            setup,
            move |mut input: I| {
                let future = routine(&mut input);
                async move { (future.await, input) }
            },
            size,
        );
    }
}

/// `to_async(…).iter_custom`: the routine's future times `iters` iterations itself.
struct AsyncCustom<E, R> {
    executor: E,
    routine: R,
}

impl<E: AsyncExecutor, R: FnMut(u64) -> F, F: Future<Output = Duration>> Routine
    for AsyncCustom<E, R>
{
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        meter.counters_start();
        let d = run_on(&self.executor, (self.routine)(iters));
        meter.counters_stop();
        ns_to_ticks(meter.timer, d.as_nanos() as f64)
    }
}
