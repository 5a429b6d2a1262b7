//! What is measured, and how: the [`Routine`] trait, the [`Meter`] that reads the clock (and
//! the counters) around a timed region, and the measured loops of each closure form. The loops
//! are `inline(never)` and named `vernier_measured_loop*`, so a disassembly or `--instructions`
//! finds them.

use crate::counters::CounterSet;
use crate::timer::Timer;
use std::hint::black_box;

/// Something measurable: runs `iters` iterations between two clock reads and returns the
/// elapsed ticks. Implemented for the closure forms below.
pub trait Routine {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64;
    /// The same with the meter's counters read around the timed region. The default reads them
    /// around `sample`; the closure forms read them inside their measured loop, next to the
    /// clock.
    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        meter.counters_start();
        let t = self.sample(meter.timer, iters);
        meter.counters_stop();
        t
    }
    /// Build whatever the routine needs before its first sample (not timed, not budgeted).
    fn prepare(&mut self) {}
    /// Iterations per sample this routine must be measured with (cold caches: one), instead of
    /// the calibrated count.
    fn fixed_iters(&self) -> Option<u64> {
        None
    }
    /// Address of the measured-loop function instantiated for this routine, for `vernier asm`
    /// (0: not known).
    fn loop_addr(&self) -> usize {
        0
    }
    /// A threaded routine's last sample, per thread (`None` for a routine without threads).
    fn thread_times(&self) -> Option<&ThreadTimes> {
        None
    }
    /// A threaded routine's thread count.
    fn threads(&self) -> Option<usize> {
        None
    }
    /// The CPUs a threaded routine's process could use.
    fn cpus(&self) -> Option<u32> {
        None
    }
    /// An async routine's executor (`None` for a synchronous one).
    fn executor(&self) -> Option<ExecutorKind> {
        None
    }
    /// An async routine's empty future (`async {}`) on the same executor, measured as its
    /// body is: what awaiting a future costs there (`None` for a synchronous routine).
    fn empty_future(&mut self) -> Option<Box<dyn Routine + '_>> {
        None
    }
}

/// What an async routine says of the executor it runs on (`workload::asynchronous`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorKind {
    pub name: String,
    /// Whether the executor's work runs on the calling thread, so follows the probed core's
    /// clock (`Executor::on_calling_core`).
    pub on_calling_core: bool,
}

/// A threaded routine's last sample, one value per thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadTimes {
    /// Ticks from the release to the thread's finish.
    pub ticks: Vec<u64>,
    /// The thread's time on a CPU (ns) over its window: from its last reading before the
    /// release to its reading after its finish (`thread_clock`).
    pub cpu_ns: Vec<u64>,
    /// The thread's run-queue wait (ns) over the same window; empty where the kernel does not
    /// say.
    pub wait_ns: Vec<u64>,
}

/// The address of a function, as a number (for [`Routine::loop_addr`]).
macro_rules! fn_addr {
    ($f:expr, $t:ty) => {{
        let p: $t = $f;
        p as usize
    }};
}

/// The clock and, when counters are on, the counter groups, read around the same region.
///
/// The counters are read *outside* the clock: `read_start` (one `read(2)` per group), then the
/// first clock read, the loop, the second clock read, then `read_stop`. The timer's region is
/// then exactly what it is without counters (a system call inside it would add about a
/// microsecond and its noise to every measured time); the counters' region is the timer's plus
/// the two clock reads and half of each system call, which is what their baseline, measured
/// over an empty region with the same nesting, takes off again (see `docs/counters.md`).
pub struct Meter<'a> {
    pub timer: &'a Timer,
    counters: Option<&'a mut CounterSet>,
}

impl<'a> Meter<'a> {
    /// The clock alone.
    pub fn new(timer: &'a Timer) -> Meter<'a> {
        Meter {
            timer,
            counters: None,
        }
    }

    /// The clock and `counters` (when `Some`).
    pub fn with_counters(timer: &'a Timer, counters: Option<&'a mut CounterSet>) -> Meter<'a> {
        Meter { timer, counters }
    }

    /// Read the counters (if any), then the clock: the start of a timed region.
    #[inline(always)]
    pub fn start(&mut self) -> u64 {
        self.counters_start();
        self.timer.start()
    }

    /// Read the clock, then the counters (if any): the end of the region started at `t0`.
    /// Returns the elapsed ticks.
    #[inline(always)]
    pub fn stop(&mut self, t0: u64) -> u64 {
        let t = self.timer.stop().wrapping_sub(t0);
        self.counters_stop();
        t
    }

    #[inline(always)]
    pub fn counters_start(&mut self) {
        if let Some(c) = self.counters.as_deref_mut() {
            c.read_start();
        }
    }

    #[inline(always)]
    pub fn counters_stop(&mut self) {
        if let Some(c) = self.counters.as_deref_mut() {
            c.read_stop();
        }
    }
}

/// The timed loop. `inline(never)` and this name make it easy to find in a disassembly and
/// let `--instructions` switch valgrind's collection on around it. Both the closure and its
/// result pass the optimisation barrier on every iteration (`bench_iter` in the C++ talk), so the
/// compiler can neither hoist the work out of the loop nor drop an unused result.
#[inline(never)]
pub fn vernier_measured_loop<F: FnMut() -> R, R>(f: &mut F, meter: &mut Meter, iters: u64) -> u64 {
    let t0 = meter.start();
    for _ in 0..iters {
        let g = black_box(&mut *f);
        black_box(g());
    }
    meter.stop(t0)
}

pub(crate) struct Plain<F>(pub(crate) F);

impl<F: FnMut() -> R, R> Routine for Plain<F> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        vernier_measured_loop(&mut self.0, meter, iters)
    }

    fn loop_addr(&self) -> usize {
        fn_addr!(
            vernier_measured_loop::<F, R>,
            fn(&mut F, &mut Meter<'_>, u64) -> u64
        )
    }
}

/// State built once, before the first sample, outside every timed region.
pub(crate) struct WithInit<S, I, F> {
    pub(crate) init: Option<I>,
    pub(crate) state: Option<S>,
    pub(crate) routine: F,
}

impl<S, I: FnOnce() -> S, F: FnMut(&mut S) -> R, R> Routine for WithInit<S, I, F> {
    fn prepare(&mut self) {
        if let Some(init) = self.init.take() {
            self.state = Some(init());
        }
    }

    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        self.prepare();
        let state = self.state.as_mut().expect("prepare built the state");
        vernier_measured_loop_with_state(&mut self.routine, state, meter, iters)
    }

    fn loop_addr(&self) -> usize {
        fn_addr!(
            vernier_measured_loop_with_state::<S, F, R>,
            fn(&mut F, &mut S, &mut Meter<'_>, u64) -> u64
        )
    }
}

/// The timed loop of a routine on a state built once (`bench_with_init`): the routine and its
/// result pass the barrier on every iteration, as in [`vernier_measured_loop`].
#[inline(never)]
pub fn vernier_measured_loop_with_state<S, F: FnMut(&mut S) -> R, R>(
    f: &mut F,
    state: &mut S,
    meter: &mut Meter,
    iters: u64,
) -> u64 {
    let t0 = meter.start();
    for _ in 0..iters {
        let g = black_box(&mut *f);
        black_box(g(&mut *state));
    }
    meter.stop(t0)
}

/// A dependent chain (`bench_latency`): each iteration computes `x = f(x)`, the value passing
/// the barrier, so an iteration cannot start before the previous one has finished and the
/// time per iteration is `f`'s latency. The value is kept from sample to sample.
pub(crate) struct Latency<T, F> {
    pub(crate) x: Option<T>,
    pub(crate) f: F,
}

/// The timed loop of [`Suite::bench_latency`](crate::Suite::bench_latency). `black_box` takes the value's address, so each
/// iteration also stores and reloads `x` (a store-to-load forwarding, about 4–5 cycles on
/// current x86-64 cores): that is part of the figure; the C++ header's barrier keeps a scalar
/// in its register instead.
#[inline(never)]
pub fn vernier_measured_loop_latency<T, F: FnMut(T) -> T>(
    f: &mut F,
    mut x: T,
    meter: &mut Meter,
    iters: u64,
) -> (T, u64) {
    let t0 = meter.start();
    for _ in 0..iters {
        x = black_box(f(x));
    }
    (x, meter.stop(t0))
}

impl<T, F: FnMut(T) -> T> Routine for Latency<T, F> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        let x = self
            .x
            .take()
            .expect("the chain's value is put back after each sample");
        let (x, t) = vernier_measured_loop_latency(&mut self.f, x, meter, iters);
        self.x = Some(x);
        t
    }

    fn loop_addr(&self) -> usize {
        fn_addr!(
            vernier_measured_loop_latency::<T, F>,
            fn(&mut F, T, &mut Meter<'_>, u64) -> (T, u64)
        )
    }
}

/// Per-iteration inputs built before the clock starts; outputs dropped after it stops.
pub(crate) struct WithSetup<S, F, I, R> {
    pub(crate) setup: S,
    pub(crate) routine: F,
    pub(crate) inputs: Vec<I>,
    pub(crate) outputs: Vec<R>,
}

/// A sample's inputs made anew, one per iteration, before its clock starts, and room for its
/// outputs (dropped after the clock stops).
pub(super) fn fresh_inputs<I, R>(
    inputs: &mut Vec<I>,
    outputs: &mut Vec<R>,
    setup: &mut impl FnMut() -> I,
    iters: u64,
) {
    inputs.clear();
    inputs.extend((0..iters).map(|_| setup()));
    outputs.clear();
    outputs.reserve(iters as usize);
}

#[inline(never)]
fn vernier_measured_loop_with_input<F: FnMut(I) -> R, I, R>(
    f: &mut F,
    inputs: &mut Vec<I>,
    outputs: &mut Vec<R>,
    meter: &mut Meter,
) -> u64 {
    let t0 = meter.start();
    for input in inputs.drain(..) {
        outputs.push(black_box(f(black_box(input))));
    }
    meter.stop(t0)
}

impl<S: FnMut() -> I, F: FnMut(I) -> R, I, R> Routine for WithSetup<S, F, I, R> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        fresh_inputs(&mut self.inputs, &mut self.outputs, &mut self.setup, iters);
        let t = vernier_measured_loop_with_input(
            &mut self.routine,
            &mut self.inputs,
            &mut self.outputs,
            meter,
        );
        self.outputs.clear();
        t
    }

    fn loop_addr(&self) -> usize {
        fn_addr!(
            vernier_measured_loop_with_input::<F, I, R>,
            fn(&mut F, &mut Vec<I>, &mut Vec<R>, &mut Meter<'_>) -> u64
        )
    }
}

/// Inputs drawn in turn from a pool too large for a branch predictor to learn.
pub(crate) struct Pooled<I, F> {
    pub(crate) pool: Vec<I>,
    pub(crate) next: usize,
    pub(crate) routine: F,
}

#[inline(never)]
fn vernier_measured_loop_pool<F: FnMut(&I) -> R, I, R>(
    f: &mut F,
    pool: &[I],
    next: &mut usize,
    meter: &mut Meter,
    iters: u64,
) -> u64 {
    let len = pool.len();
    let mut i = *next;
    let t0 = meter.start();
    for _ in 0..iters {
        black_box(f(black_box(&pool[i])));
        i += 1;
        if i == len {
            i = 0;
        }
    }
    let t = meter.stop(t0);
    *next = i;
    t
}

impl<I, F: FnMut(&I) -> R, R> Routine for Pooled<I, F> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        vernier_measured_loop_pool(&mut self.routine, &self.pool, &mut self.next, meter, iters)
    }

    fn loop_addr(&self) -> usize {
        fn_addr!(
            vernier_measured_loop_pool::<F, I, R>,
            fn(&mut F, &[I], &mut usize, &mut Meter<'_>, u64) -> u64
        )
    }
}
