//! Async bodies: the [`Executor`] trait (block on a future), the ready executors behind the
//! crate's features (`tokio`, `smol`, `futures`), and the routines of `Suite::bench_async` and
//! `Suite::bench_async_with_setup`. All the iterations of a sample run inside one `block_on`:
//! the clock starts at the first poll of the measured future, after the executor was entered,
//! and stops before it is left, so entering the executor is paid once per sample, outside the
//! timed region. What remains per iteration beside the body is the cost of awaiting a future on
//! that executor; the engine measures it with an empty future (`async {}`), as it measures the
//! empty loop, and says it beside the result (`executor` in the result file).

pub use super::routine::ExecutorKind;
use super::routine::{fresh_inputs, Meter, Routine};
use crate::timer::Timer;
use std::future::Future;
use std::hint::black_box;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Something that runs a future to completion on the calling thread: Criterion's
/// `AsyncExecutor`, with a name for the report. Implemented for tokio's runtimes (feature
/// `tokio`), `SmolExecutor` (feature `smol`), `FuturesExecutor` (feature `futures`), and
/// through references, `Rc` and `Arc` of any executor.
pub trait Executor {
    /// Run `future` to completion and return its output.
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T;

    /// The executor's name, said beside each result (`tokio current-thread`, `smol`).
    fn name(&self) -> String {
        std::any::type_name::<Self>().to_string()
    }

    /// Whether the work of the futures it runs follows the clock of the core that calls
    /// `block_on`. `false` for a runtime whose worker threads run the work on other cores (tokio's
    /// multi-thread runtime): the benchmark is then judged in ns, as a threaded one is, since
    /// the core-speed probe measures the calling thread's core only.
    fn on_calling_core(&self) -> bool {
        true
    }
}

/// An executor behind a reference or a shared pointer is the executor itself.
macro_rules! forward_executor {
    ($($outer:ty),*) => {$(
        impl<E: Executor + ?Sized> Executor for $outer {
            fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
                (**self).block_on(future)
            }
            fn name(&self) -> String {
                (**self).name()
            }
            fn on_calling_core(&self) -> bool {
                (**self).on_calling_core()
            }
        }
    )*};
}

forward_executor!(&E, std::rc::Rc<E>, std::sync::Arc<E>);

/// tokio's runtimes, current-thread and multi-thread, as built by the user
/// (`tokio::runtime::Builder::new_current_thread().enable_all().build()`).
#[cfg(feature = "tokio")]
impl Executor for tokio::runtime::Runtime {
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        tokio::runtime::Runtime::block_on(self, future)
    }
    fn name(&self) -> String {
        match self.handle().runtime_flavor() {
            tokio::runtime::RuntimeFlavor::CurrentThread => "tokio current-thread".into(),
            tokio::runtime::RuntimeFlavor::MultiThread => "tokio multi-thread".into(),
            _ => "tokio".into(),
        }
    }
    fn on_calling_core(&self) -> bool {
        self.handle().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
    }
}

/// `smol::block_on` (feature `smol`).
#[cfg(feature = "smol")]
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolExecutor;

#[cfg(feature = "smol")]
impl Executor for SmolExecutor {
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        smol::block_on(future)
    }
    fn name(&self) -> String {
        "smol".into()
    }
}

/// `futures::executor::block_on` (feature `futures`).
#[cfg(feature = "futures")]
#[derive(Clone, Copy, Debug, Default)]
pub struct FuturesExecutor;

#[cfg(feature = "futures")]
impl Executor for FuturesExecutor {
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        futures::executor::block_on(future)
    }
    fn name(&self) -> String {
        "futures".into()
    }
}

/// What `e` says of itself, for the routines on it.
fn kind_of(e: &impl Executor) -> ExecutorKind {
    ExecutorKind {
        name: e.name(),
        on_calling_core: e.on_calling_core(),
    }
}

/// A future whose panics are caught at each poll: a panic of the body comes out as its
/// output, so that it is told from a panic of the executor itself.
struct Caught<F>(F);

impl<F: Future> Future for Caught<F> {
    type Output = std::thread::Result<F::Output>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `Caught` is a plain wrapper and never moves its field: the projection of a
        // pinned `Caught` to its only field is pinned as well.
        let inner = unsafe { self.map_unchecked_mut(|c| &mut c.0) };
        match panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(p) => Poll::Ready(Err(p)),
        }
    }
}

/// `executor.block_on(future)` in a function of the measured loop's name: the loop's state
/// machine is inlined into the executor's `block_on`, and `--instructions` switches callgrind's
/// collection on inside functions named `vernier_measured_loop*`. Entering and leaving the
/// executor is counted too, once per sample: the count per iteration (the difference between
/// two iteration counts) leaves it out. The timed code inside `block_on` is compiled as it would
/// be without this function.
#[inline(never)]
fn vernier_measured_loop_block_on<E: Executor, T>(
    executor: &E,
    future: impl Future<Output = T>,
) -> T {
    executor.block_on(future)
}

/// Run `future` on `executor`: a panic of the future (the body) is resumed as it came; a panic
/// of the executor itself, outside the body, is resumed with a message naming the executor and
/// the fix (the engine reports it as the benchmark's failure; earlier samples are kept).
pub fn run_on<E: Executor, T>(executor: &E, future: impl Future<Output = T>) -> T {
    match panic::catch_unwind(AssertUnwindSafe(|| {
        vernier_measured_loop_block_on(executor, Caught(future))
    })) {
        Ok(Ok(v)) => v,
        Ok(Err(body)) => panic::resume_unwind(body),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string panic)".into());
            panic::resume_unwind(Box::new(format!(
                "the executor `{}` panicked in block_on, outside the body: {msg}; give \
                 bench_async an executor that can run the body (a tokio runtime built with \
                 `enable_all()` for timers and I/O), built outside any async context",
                executor.name()
            )))
        }
    }
}

/// The timed loop of an async body: the clock starts at the measured future's first poll,
/// inside `block_on`, and stops before the future completes; each iteration awaits the body's
/// future, which and whose output pass the optimisation barrier, as in
/// [`vernier_measured_loop`](super::routine::vernier_measured_loop).
async fn vernier_measured_loop_async<F, Fut>(f: &mut F, meter: &mut Meter<'_>, iters: u64) -> u64
where
    F: FnMut() -> Fut,
    Fut: Future,
{
    let t0 = meter.start();
    for _ in 0..iters {
        let g = black_box(&mut *f);
        black_box(black_box(g()).await);
    }
    meter.stop(t0)
}

/// The timed loop of an async body fed an input per iteration (`bench_async_with_setup`).
async fn vernier_measured_loop_async_with_input<F, I, Fut>(
    f: &mut F,
    inputs: &mut Vec<I>,
    outputs: &mut Vec<Fut::Output>,
    meter: &mut Meter<'_>,
) -> u64
where
    F: FnMut(I) -> Fut,
    Fut: Future,
{
    let t0 = meter.start();
    for input in inputs.drain(..) {
        outputs.push(black_box(black_box(f(black_box(input))).await));
    }
    meter.stop(t0)
}

/// An async body (`Suite::bench_async`): a future made and awaited per iteration.
pub struct AsyncPlain<E, F> {
    pub executor: E,
    pub body: F,
}

impl<E: Executor, F: FnMut() -> Fut, Fut: Future> Routine for AsyncPlain<E, F> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        run_on(
            &self.executor,
            vernier_measured_loop_async(&mut self.body, meter, iters),
        )
    }

    fn executor(&self) -> Option<ExecutorKind> {
        Some(kind_of(&self.executor))
    }

    fn empty_future(&mut self) -> Option<Box<dyn Routine + '_>> {
        Some(empty_on(&self.executor))
    }
}

/// The empty future (`async {}`) on `executor`, measured as an async body: its time per
/// iteration is what awaiting a future adds there beside the loop.
fn empty_on<E: Executor>(executor: &E) -> Box<dyn Routine + '_> {
    Box::new(EmptyFuture(executor))
}

/// The routine of [`empty_on`] (a routine of its own, with no empty future of its own).
struct EmptyFuture<'a, E>(&'a E);

impl<E: Executor> Routine for EmptyFuture<'_, E> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        run_on(
            self.0,
            vernier_measured_loop_async(&mut || async {}, meter, iters),
        )
    }
}

/// An async body fed a fresh input per iteration (`Suite::bench_async_with_setup`): the inputs
/// are built before `block_on` and the outputs dropped after it, neither measured.
pub struct AsyncWithSetup<E, S, F, I, R> {
    pub executor: E,
    pub setup: S,
    pub routine: F,
    pub inputs: Vec<I>,
    pub outputs: Vec<R>,
}

impl<E, S, F, I, Fut> Routine for AsyncWithSetup<E, S, F, I, Fut::Output>
where
    E: Executor,
    S: FnMut() -> I,
    F: FnMut(I) -> Fut,
    Fut: Future,
{
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.sample_metered(&mut Meter::new(timer), iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        fresh_inputs(&mut self.inputs, &mut self.outputs, &mut self.setup, iters);
        let t = run_on(
            &self.executor,
            vernier_measured_loop_async_with_input(
                &mut self.routine,
                &mut self.inputs,
                &mut self.outputs,
                meter,
            ),
        );
        self.outputs.clear();
        t
    }

    fn executor(&self) -> Option<ExecutorKind> {
        Some(kind_of(&self.executor))
    }

    fn empty_future(&mut self) -> Option<Box<dyn Routine + '_>> {
        Some(empty_on(&self.executor))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;
    use std::task::{RawWaker, RawWakerVTable, Waker};

    /// The smallest executor: polls on the calling thread until ready, counting its entries.
    #[derive(Default)]
    pub(crate) struct Spin {
        pub(crate) entered: Cell<u32>,
    }

    fn noop_waker() -> Waker {
        fn clone(_: *const ()) -> RawWaker {
            RawWaker::new(std::ptr::null(), &VTABLE)
        }
        fn noop(_: *const ()) {}
        static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
        // SAFETY: every function of the vtable ignores its (null) data pointer.
        unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
    }

    impl Executor for Spin {
        fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
            self.entered.set(self.entered.get() + 1);
            let mut f = std::pin::pin!(future);
            let waker = noop_waker();
            let mut cx = Context::from_waker(&waker);
            loop {
                if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                    return v;
                }
            }
        }
        fn name(&self) -> String {
            "spin".into()
        }
    }

    /// Ready on the second poll.
    struct YieldOnce(bool);
    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    #[test]
    fn every_iteration_of_a_sample_runs_inside_one_block_on() {
        let spin = Spin {
            entered: Cell::new(0),
        };
        let runs = Cell::new(0u64);
        let mut r = AsyncPlain {
            executor: &spin,
            body: || async {
                YieldOnce(false).await;
                runs.set(runs.get() + 1);
            },
        };
        let timer = Timer::detect();
        for _ in 0..3 {
            r.sample(&timer, 1000);
        }
        assert_eq!((spin.entered.get(), runs.get()), (3, 3000));
        assert_eq!(
            r.executor(),
            Some(ExecutorKind {
                name: "spin".into(),
                on_calling_core: true
            })
        );
        // The empty future runs on the same executor.
        r.empty_future().unwrap().sample(&timer, 10);
        assert_eq!((spin.entered.get(), runs.get()), (4, 3000));
    }

    #[test]
    fn inputs_are_built_outside_block_on_and_each_fed_once() {
        let spin = Spin {
            entered: Cell::new(0),
        };
        let made = Cell::new(0u64);
        let mut r = AsyncWithSetup {
            executor: &spin,
            setup: || {
                made.set(made.get() + 1);
                made.get()
            },
            routine: |x: u64| async move { x * 2 },
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        r.sample(&Timer::detect(), 500);
        assert_eq!((spin.entered.get(), made.get()), (1, 500));
        assert!(r.inputs.is_empty() && r.outputs.is_empty());
    }

    /// Panics in `block_on` itself, before polling.
    struct Broken;
    impl Executor for Broken {
        fn block_on<T>(&self, _future: impl Future<Output = T>) -> T {
            panic!("no reactor")
        }
        fn name(&self) -> String {
            "broken".into()
        }
    }

    fn message(p: Box<dyn std::any::Any + Send>) -> String {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap()
    }

    #[test]
    fn a_panicking_executor_is_named_with_the_fix_and_a_panicking_body_is_left_as_it_is() {
        let timer = Timer::detect();
        let mut r = AsyncPlain {
            executor: Broken,
            body: || async {},
        };
        let p = panic::catch_unwind(AssertUnwindSafe(|| r.sample(&timer, 5))).unwrap_err();
        let m = message(p);
        assert!(
            m.starts_with(
                "the executor `broken` panicked in block_on, outside the body: no reactor"
            ) && m.contains("enable_all()"),
            "{m}"
        );
        let spin = Spin {
            entered: Cell::new(0),
        };
        let mut r = AsyncPlain {
            executor: &spin,
            body: || async { panic!("body failed") },
        };
        let p = panic::catch_unwind(AssertUnwindSafe(|| r.sample(&timer, 5))).unwrap_err();
        assert_eq!(message(p), "body failed");
    }
}
