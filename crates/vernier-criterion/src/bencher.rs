//! [`Bencher`]: what a benchmark's closure is handed; its `iter…` methods give their routine,
//! as one of Vernier's (`routines`), to the driver through the benchmark's `session::Slot`.

use crate::measurement::{Measurement, WallTime};
use crate::routines::{Batched, Custom, Iter, LargeDrop};
use crate::session::Slot;
use crate::settings::BatchSize;
use std::marker::PhantomData;
use std::time::Duration;
use vernier::workload::routine::Routine;

/// Times a benchmark's routine: the closure of `bench_function` calls one of its `iter`
/// methods once, with the routine to measure; Vernier then measures it there.
pub struct Bencher<'a, M: Measurement = WallTime> {
    slot: Slot<'a>,
    _measurement: PhantomData<M>,
}

impl<'a, M: Measurement> Bencher<'a, M> {
    /// The bencher of the benchmark entered, linked to the driver by `slot`.
    pub(crate) fn new(slot: Slot<'a>) -> Self {
        Bencher {
            slot,
            _measurement: PhantomData,
        }
    }
}

impl<M: Measurement> Bencher<'_, M> {
    /// Hands `routine` to the driver (the first `iter…` call of the closure only).
    pub(crate) fn serve(&mut self, routine: &mut dyn Routine) {
        self.slot.serve(routine);
    }

    /// Each iteration calls `routine`; its result passes the optimisation barrier.
    pub fn iter<O, R: FnMut() -> O>(&mut self, routine: R) {
        self.serve(&mut Iter(routine));
    }

    /// Each iteration calls `routine`; its results are dropped after the timed region.
    pub fn iter_with_large_drop<O, R: FnMut() -> O>(&mut self, routine: R) {
        self.serve(&mut LargeDrop {
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
        self.serve(&mut Batched::new(
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
        self.serve(&mut Batched::new(
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
        self.serve(&mut Custom(routine));
    }
}
