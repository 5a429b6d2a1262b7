//! Async benchmarks of a suite: their registration ([`Suite::bench_async`],
//! [`Suite::bench_async_with_setup`]) and, when they are measured in this process, the cost of
//! an empty future on each executor, measured once per run like the empty loop
//! (`EmptyFutures`) and said beside each result (`executor` in the result file).

use super::calibrate::self_measured;
use super::suite::Suite;
use crate::plan::Plan;
use crate::result::ExecutorJson;
use crate::timer::Timer;
use crate::workload::asynchronous::{AsyncPlain, AsyncWithSetup, Executor};
use crate::workload::routine::Routine;
use std::collections::BTreeMap;
use std::future::Future;

impl Suite {
    /// Register an async body: each iteration awaits the future `body()` makes, on
    /// `executor`. All the iterations of a sample run inside one `executor.block_on`, so
    /// entering the executor is paid once per sample, outside the timed region; what awaiting a
    /// future costs on it (an empty future's time, measured at the start of the run) is said
    /// beside the result and is the bar below which the body counts as `optimized-away`.
    ///
    /// The executor is any [`Executor`]: a tokio runtime (feature `tokio`), `SmolExecutor`
    /// (feature `smol`), `FuturesExecutor` (feature `futures`), or a reference, `Rc` or `Arc`
    /// of one (docs/async.md).
    ///
    /// ```no_run
    /// # #[cfg(feature = "futures")] {
    /// let mut s = vernier::Suite::from_args();
    /// s.bench_async("ready sum", vernier::FuturesExecutor, || async {
    ///     (0..64u64).map(vernier::black_box).sum::<u64>()
    /// });
    /// s.finish();
    /// # }
    /// ```
    pub fn bench_async<E, F, Fut>(
        &mut self,
        name: impl Into<String>,
        executor: E,
        body: F,
    ) -> &mut Self
    where
        E: Executor + 'static,
        F: FnMut() -> Fut + 'static,
        Fut: Future,
    {
        self.add(name, Box::new(AsyncPlain { executor, body }))
    }

    /// Register an async `routine` with a fresh input from `setup` for each iteration: the
    /// inputs are built before `block_on` and the outputs dropped after it, so neither is
    /// measured ([`Suite::bench_with_setup`] for async code).
    pub fn bench_async_with_setup<E, S, I, F, Fut>(
        &mut self,
        name: impl Into<String>,
        executor: E,
        setup: S,
        routine: F,
    ) -> &mut Self
    where
        E: Executor + 'static,
        S: FnMut() -> I + 'static,
        I: 'static,
        F: FnMut(I) -> Fut + 'static,
        Fut: Future + 'static,
    {
        self.add(
            name,
            Box::new(AsyncWithSetup {
                executor,
                setup,
                routine,
                inputs: Vec::new(),
                outputs: Vec::new(),
            }),
        )
    }
}

/// The cost of an empty future per executor, in ns and in cycles, measured the first time a
/// benchmark on it is (one executor's figure serves every benchmark on it for the rest of the
/// run).
#[derive(Default)]
pub(crate) struct EmptyFutures(BTreeMap<String, (f64, Option<f64>)>);

impl EmptyFutures {
    /// What `routine`'s result says of its executor: its name, the empty future's time per
    /// iteration on it (NaN when it could not be measured) and in cycles, and whether its work
    /// follows the calling core's clock. `None` for a synchronous routine.
    pub(crate) fn of(
        &mut self,
        routine: &mut dyn Routine,
        timer: &Timer,
        plan: &Plan,
    ) -> Option<ExecutorJson> {
        let kind = routine.executor()?;
        let (empty_future_ns, empty_future_cycles) = match self.0.get(&kind.name) {
            Some(&figure) => figure,
            None => {
                let mut empty = routine.empty_future()?;
                // A panic of the executor is caught by the engine: the figure is then NaN.
                let (ns, cycles, _) = self_measured(timer, plan, empty.as_mut());
                self.0.insert(kind.name.clone(), (ns, cycles));
                (ns, cycles)
            }
        };
        Some(ExecutorJson {
            name: kind.name,
            empty_future_ns,
            empty_future_cycles,
            on_calling_core: kind.on_calling_core,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::asynchronous::tests::Spin;
    use crate::workload::routine::Plain;

    #[test]
    fn an_executor_s_empty_future_is_measured_once_per_run_and_a_sync_routine_has_none() {
        let spin = std::rc::Rc::new(Spin::default());
        let timer = Timer::detect();
        let plan = Plan::quick();
        let mut empties = EmptyFutures::default();
        let mut a = AsyncPlain {
            executor: spin.clone(),
            body: || async { black_box_sum() },
        };
        let e = empties.of(&mut a, &timer, &plan).unwrap();
        assert_eq!(e.name, "spin");
        assert!(e.on_calling_core);
        assert!(
            e.empty_future_ns.is_finite() && e.empty_future_ns > 0.0,
            "{e:?}"
        );
        let entered = spin.entered.get();
        assert!(entered > 0);
        let mut b = AsyncPlain {
            executor: spin.clone(),
            body: || async {},
        };
        assert_eq!(empties.of(&mut b, &timer, &plan), Some(e));
        assert_eq!(spin.entered.get(), entered, "measured again");
        assert_eq!(empties.of(&mut Plain(|| 1), &timer, &plan), None);
    }

    fn black_box_sum() -> u64 {
        (0..8u64).map(std::hint::black_box).sum()
    }
}
