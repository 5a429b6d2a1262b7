//! Bencher's routine forms as Vernier routines: each borrows the closures of the `iter…` call
//! that made it, and lives only while that call runs.

use crate::settings::BatchSize;
use std::hint::black_box;
use std::time::Duration;
use vernier::timer::Timer;
use vernier::workload::routine::{vernier_measured_loop, Meter, Routine};

/// `iter`: Vernier's own measured loop, the routine and its result passing the barrier.
pub struct Iter<R>(pub R);

impl<O, R: FnMut() -> O> Routine for Iter<R> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        vernier_measured_loop(&mut self.0, meter, iters)
    }

    fn loop_addr(&self) -> usize {
        let f: fn(&mut R, &mut Meter<'_>, u64) -> u64 = vernier_measured_loop::<R, O>;
        f as usize
    }
}

/// `iter_with_large_drop`: the results are kept until the clock stops, then dropped.
pub struct LargeDrop<R, O> {
    pub routine: R,
    pub outputs: Vec<O>,
}

#[inline(never)]
fn vernier_measured_loop_keeping<R: FnMut() -> O, O>(
    f: &mut R,
    outputs: &mut Vec<O>,
    meter: &mut Meter,
    iters: u64,
) -> u64 {
    let t0 = meter.start();
    for _ in 0..iters {
        outputs.push(black_box(f()));
    }
    meter.stop(t0)
}

impl<O, R: FnMut() -> O> Routine for LargeDrop<R, O> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        self.outputs.clear();
        self.outputs.reserve(iters as usize);
        let t = vernier_measured_loop_keeping(&mut self.routine, &mut self.outputs, meter, iters);
        self.outputs.clear();
        t
    }

    fn loop_addr(&self) -> usize {
        let f: fn(&mut R, &mut Vec<O>, &mut Meter<'_>, u64) -> u64 =
            vernier_measured_loop_keeping::<R, O>;
        f as usize
    }
}

/// `iter_batched` and `iter_batched_ref`: inputs built by `setup` before each timed batch,
/// results and inputs dropped after it. The routine takes its input out of the slot (by
/// value) or uses it in place (by reference).
pub struct Batched<I, O, S, R> {
    setup: S,
    routine: R,
    size: BatchSize,
    inputs: Vec<Option<I>>,
    outputs: Vec<O>,
}

impl<I, O, S, R> Batched<I, O, S, R> {
    pub fn new(setup: S, routine: R, size: BatchSize) -> Self {
        Batched {
            setup,
            routine,
            size,
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    }
}

/// Iterations per batch for `iters` iterations in a sample, as Criterion documents each
/// [`BatchSize`]: ten batches (`SmallInput`), a thousand (`LargeInput`), one iteration each
/// (`PerIteration`), or the user's count.
fn per_batch(size: BatchSize, iters: u64) -> u64 {
    let n = match size {
        BatchSize::SmallInput => iters.div_ceil(10),
        BatchSize::LargeInput => iters.div_ceil(1000),
        BatchSize::PerIteration => 1,
        BatchSize::NumBatches(b) => iters.div_ceil(b.max(1)),
        BatchSize::NumIterations(n) => n,
    };
    n.clamp(1, iters.max(1))
}

#[inline(never)]
fn vernier_measured_loop_batch<I, O, R: FnMut(&mut Option<I>) -> O>(
    f: &mut R,
    inputs: &mut [Option<I>],
    outputs: &mut Vec<O>,
    timer: &Timer,
) -> u64 {
    let t0 = timer.start();
    for input in inputs.iter_mut() {
        outputs.push(black_box(f(black_box(input))));
    }
    timer.stop().wrapping_sub(t0)
}

impl<I, O, S: FnMut() -> I, R: FnMut(&mut Option<I>) -> O> Routine for Batched<I, O, S, R> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    /// The clock is read around each batch and the batches' times added; the counters (when
    /// on) are read around the whole sample, the set-up of the batches after the first
    /// included.
    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        let per = per_batch(self.size, iters);
        let mut left = iters;
        let mut ticks = 0u64;
        meter.counters_start();
        while left > 0 {
            let n = per.min(left);
            left -= n;
            self.inputs.clear();
            self.inputs.extend((0..n).map(|_| Some((self.setup)())));
            self.outputs.clear();
            self.outputs.reserve(n as usize);
            ticks = ticks.wrapping_add(vernier_measured_loop_batch(
                &mut self.routine,
                &mut self.inputs,
                &mut self.outputs,
                meter.timer,
            ));
            self.outputs.clear();
            self.inputs.clear();
        }
        meter.counters_stop();
        ticks
    }

    fn loop_addr(&self) -> usize {
        type Loop<R, I, O> = fn(&mut R, &mut [Option<I>], &mut Vec<O>, &Timer) -> u64;
        let f: Loop<R, I, O> = vernier_measured_loop_batch::<I, O, R>;
        f as usize
    }
}

/// `iter_custom`: the routine measures `iters` iterations itself.
pub struct Custom<R>(pub R);

impl<R: FnMut(u64) -> Duration> Routine for Custom<R> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        meter.counters_start();
        let d = (self.0)(iters);
        meter.counters_stop();
        ns_to_ticks(meter.timer, d.as_nanos() as f64)
    }
}

/// Nanoseconds as the timer's ticks (the samples are converted back with the same factor).
pub(crate) fn ns_to_ticks(timer: &Timer, ns: f64) -> u64 {
    const SCALE: u64 = 1 << 32;
    let ns_per_scale = timer.ticks_to_ns_f64(SCALE);
    (ns * SCALE as f64 / ns_per_scale).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_follow_criterion_s_documented_sizes() {
        assert_eq!(per_batch(BatchSize::SmallInput, 100), 10);
        assert_eq!(per_batch(BatchSize::LargeInput, 100), 1);
        assert_eq!(per_batch(BatchSize::LargeInput, 5000), 5);
        assert_eq!(per_batch(BatchSize::PerIteration, 100), 1);
        assert_eq!(per_batch(BatchSize::NumBatches(4), 100), 25);
        assert_eq!(per_batch(BatchSize::NumIterations(7), 100), 7);
        assert_eq!(per_batch(BatchSize::NumIterations(700), 100), 100);
        assert_eq!(per_batch(BatchSize::NumBatches(0), 3), 3);
    }

    #[test]
    fn every_input_is_built_once_and_used_once() {
        let timer = Timer::monotonic();
        let mut built = 0u64;
        let mut used = 0u64;
        {
            let mut b = Batched::new(
                || {
                    built += 1;
                    vec![1u8; 8]
                },
                |v: &mut Option<Vec<u8>>| {
                    used += 1;
                    v.take().unwrap().len()
                },
                BatchSize::SmallInput,
            );
            b.sample(&timer, 25);
            b.sample(&timer, 3);
        }
        assert_eq!((built, used), (28, 28));
    }

    #[test]
    fn a_custom_routine_s_duration_comes_back_as_its_ticks() {
        let timer = Timer::detect();
        let mut c = Custom(|iters| Duration::from_nanos(1000 * iters));
        let ticks = c.sample(&timer, 50);
        let ns = timer.ticks_to_ns(ticks);
        assert!((49_990..=50_010).contains(&ns), "{ns}");
    }
}
