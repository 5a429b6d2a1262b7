//! A program's suite: the benchmarks it registers. Its options and why it cannot run are in
//! `options.rs` beside it, what its benchmarks declare (throughput, complexity) in
//! `declare.rs`; running it is the session's job.

use super::options::{Options, SuiteError};
use crate::workload::routine::{Latency, Plain, Pooled, Routine, WithInit, WithSetup};
use crate::workload::{cache, Entry};

/// A set of benchmarks.
pub struct Suite {
    pub(crate) entries: Vec<Entry>,
    pub(crate) options: Options,
    /// Paired comparisons (`compare`, `compare_benches`), run in this process after the
    /// benchmarks.
    pub(crate) pairs: Vec<PairEntry>,
    /// The first entry the last registering call added ([`Suite::throughput`] applies from it).
    pub(super) last_call: usize,
}

impl Default for Suite {
    fn default() -> Self {
        Suite::new(Options::default())
    }
}

/// One member of a registered comparison: its own routine, or a benchmark of the suite by name.
pub enum PairSide {
    Routine(Box<dyn Routine>),
    Bench(String),
}

/// A comparison registered with [`Suite::compare`] or [`Suite::compare_benches`].
pub struct PairEntry {
    pub name: String,
    pub old: PairSide,
    pub new: PairSide,
}

impl Suite {
    #[doc(hidden)]
    pub fn new(options: Options) -> Suite {
        Suite {
            entries: Vec::new(),
            options,
            pairs: Vec::new(),
            last_call: 0,
        }
    }

    /// A program's whole run: a suite configured from its arguments, `register` adding the
    /// benchmarks, then measured standalone or served to a runner (a worker when launched by
    /// one). Returns the exit status for `main` to return: 0, or the error's after printing
    /// it (`--help` is 0). What `vernier::main!` expands to.
    ///
    /// ```no_run
    /// fn main() -> std::process::ExitCode {
    ///     vernier::Suite::run_main(|s| {
    ///         s.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
    ///     })
    /// }
    /// ```
    pub fn run_main(register: impl FnOnce(&mut Suite)) -> std::process::ExitCode {
        let run = || -> Result<(), SuiteError> {
            let mut suite = Suite::try_from_args()?;
            register(&mut suite);
            suite.try_finish()
        };
        match run() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => e.report(),
        }
    }

    /// A suite configured from the process's arguments: the smallest form, for a program's
    /// `main`, with [`Suite::finish`]. A worker when launched by a runner. On `--help` or a
    /// bad argument it prints the message and ends the process (status 0 or 1);
    /// [`Suite::try_from_args`] returns the error instead, and [`Suite::run_main`] returns the
    /// exit status.
    ///
    /// ```no_run
    /// // The body of a program's `fn main()`:
    /// let mut suite = vernier::Suite::from_args();
    /// suite.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
    /// suite.finish();
    /// ```
    pub fn from_args() -> Suite {
        Suite::try_from_args().unwrap_or_else(|e| e.exit())
    }

    /// A suite configured from the process's arguments (a worker when launched by a runner),
    /// or why it cannot be.
    pub fn try_from_args() -> Result<Suite, SuiteError> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        Options::parse(&args).map(Suite::new).map_err(|e| {
            if e.starts_with("usage") {
                SuiteError::Usage(e)
            } else {
                SuiteError::Args(e)
            }
        })
    }

    #[doc(hidden)]
    pub fn options(&self) -> &Options {
        &self.options
    }

    #[doc(hidden)]
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    /// Register `f`: each iteration calls it, and the closure and its result pass the barrier.
    pub fn bench<F, R>(&mut self, name: impl Into<String>, f: F) -> &mut Self
    where
        F: FnMut() -> R + 'static,
    {
        self.add(name, Box::new(Plain(f)))
    }

    /// Register a threaded benchmark: `f(thread)` is the body each of T threads runs (`thread`
    /// in `0..T`), released together for each sample, for each T of `threads` (empty: the
    /// powers of two below the CPUs and the CPU count). Each T is its own benchmark, named
    /// `NAME/threads:T`; the threads are started once and kept (docs/threads.md).
    pub fn bench_threads<F, R>(
        &mut self,
        name: impl Into<String>,
        threads: &[usize],
        f: F,
    ) -> &mut Self
    where
        F: Fn(usize) -> R + Send + Sync + 'static,
        R: 'static,
    {
        let name = name.into();
        let counts = if threads.is_empty() {
            crate::workload::threads::default_counts()
        } else {
            threads.iter().map(|&t| t.max(1)).collect()
        };
        let first = self.entries.len();
        for (t, r) in crate::workload::threads::routines(f, &counts) {
            self.add(crate::result::threads::name(&name, t), Box::new(r));
        }
        self.last_call = first;
        self
    }

    /// Register the latency of `f`: each iteration computes `x = f(x)` from `x = init`, the
    /// value passing the barrier and carried from one iteration (and sample) to the next, so
    /// the iterations form one dependent chain and the time per iteration is `f`'s latency
    /// (`bench` gives its throughput: independent iterations that the core overlaps).
    pub fn bench_latency<T, F>(&mut self, name: impl Into<String>, init: T, f: F) -> &mut Self
    where
        T: 'static,
        F: FnMut(T) -> T + 'static,
    {
        self.add(name, Box::new(Latency { x: Some(init), f }))
    }

    /// Register `f` measured with cold caches: before every sample, outside the
    /// timed region, a buffer twice the last-level cache is read and written
    /// (`cache::Evictor`), and in this process each sample is one iteration (the timer's own
    /// cost, `sample_cost_ns` in the result, is then part of each sample). Under `vernier run`
    /// the runner chooses the iterations; `vernier run --cache cold` evicts before the
    /// samples of every benchmark.
    pub fn bench_cold<F, R>(&mut self, name: impl Into<String>, f: F) -> &mut Self
    where
        F: FnMut() -> R + 'static,
    {
        self.add(
            name,
            Box::new(cache::OwnedCold {
                inner: Plain(f),
                evictor: cache::Evictor::default(),
            }),
        )
    }

    /// Register `routine` with a fresh input from `setup` for each iteration; inputs are built
    /// before the clock starts and outputs dropped after it stops, so neither is measured.
    pub fn bench_with_setup<S, F, I, R>(
        &mut self,
        name: impl Into<String>,
        setup: S,
        routine: F,
    ) -> &mut Self
    where
        S: FnMut() -> I + 'static,
        F: FnMut(I) -> R + 'static,
        I: 'static,
        R: 'static,
    {
        self.add(
            name,
            Box::new(WithSetup {
                setup,
                routine,
                inputs: Vec::new(),
                outputs: Vec::new(),
            }),
        )
    }

    /// Register `routine` on a state that `init` builds once, before the first sample and
    /// outside the timed region (a large buffer, a data set): nothing is built for benchmarks
    /// that a filter leaves out.
    pub fn bench_with_init<S, I, F, R>(
        &mut self,
        name: impl Into<String>,
        init: I,
        routine: F,
    ) -> &mut Self
    where
        S: 'static,
        I: FnOnce() -> S + 'static,
        F: FnMut(&mut S) -> R + 'static,
    {
        self.add(
            name,
            Box::new(WithInit {
                init: Some(init),
                state: None,
                routine,
            }),
        )
    }

    /// Register `routine` fed from `pool` in turn (see `pool()`): with a pool larger than a
    /// branch predictor's memory, data-dependent branches behave as on fresh data.
    pub fn bench_with_pool<I, F, R>(
        &mut self,
        name: impl Into<String>,
        pool: Vec<I>,
        routine: F,
    ) -> &mut Self
    where
        I: 'static,
        F: FnMut(&I) -> R + 'static,
    {
        assert!(!pool.is_empty(), "bench_with_pool needs a non-empty pool");
        self.add(
            name,
            Box::new(Pooled {
                pool,
                next: 0,
                routine,
            }),
        )
    }

    /// Register a paired comparison of OLD (`old`) and NEW (`new`): measured alternately, in a
    /// random order within each pair, with the same iterations per sample, and reported as the
    /// ratio NEW/OLD with its interval and a verdict (see `vernier::measure::compare`). Comparisons run
    /// in this process only, on one CPU, both sides sharing this process's memory layout: the
    /// interval covers the noise within the process, not what would differ between processes
    /// (as a worker, a suite serves its benchmarks; `vernier compare` compares two executables
    /// over several process pairs).
    pub fn compare<A, RA, B, RB>(&mut self, name: impl Into<String>, old: A, new: B) -> &mut Self
    where
        A: FnMut() -> RA + 'static,
        B: FnMut() -> RB + 'static,
    {
        self.pairs.push(PairEntry {
            name: name.into(),
            old: PairSide::Routine(Box::new(Plain(old))),
            new: PairSide::Routine(Box::new(Plain(new))),
        });
        self
    }

    /// Register a paired comparison of two benchmarks of this suite, by name (they are also
    /// measured on their own).
    pub fn compare_benches(
        &mut self,
        name: impl Into<String>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> &mut Self {
        self.pairs.push(PairEntry {
            name: name.into(),
            old: PairSide::Bench(old.into()),
            new: PairSide::Bench(new.into()),
        });
        self
    }

    /// Names of the registered comparisons.
    #[doc(hidden)]
    pub fn comparison_names(&self) -> Vec<String> {
        self.pairs.iter().map(|p| p.name.clone()).collect()
    }

    /// Take the registered benchmarks out (to re-register a selection elsewhere).
    #[doc(hidden)]
    pub fn into_entries(self) -> Vec<(String, Box<dyn Routine>)> {
        self.entries
            .into_iter()
            .map(|e| (e.name, e.routine))
            .collect()
    }

    /// Register any `Routine`.
    #[doc(hidden)]
    pub fn add(&mut self, name: impl Into<String>, routine: Box<dyn Routine>) -> &mut Self {
        self.last_call = self.entries.len();
        self.entries.push(Entry {
            name: name.into(),
            routine,
            alloc_free: false,
            throughput: None,
            complexity: None,
        });
        self
    }

    /// Register `routine` once per argument, each benchmark named `NAME/ARG` as Google
    /// Benchmark names them (`sort/1024`): for each argument, `init(&arg)` builds its state
    /// before its first sample, outside the timed region (nothing for arguments a filter
    /// leaves out), and each iteration runs `routine(&mut state)`. Numeric arguments give the
    /// complexity fit under the table (`docs/parameters.md`); [`range`](crate::range) and
    /// [`dense_range`](crate::dense_range) make Google Benchmark's argument lists.
    ///
    /// ```no_run
    /// let mut s = vernier::Suite::from_args();
    /// s.bench_args("sort", vernier::range(256, 65536, 4), |&n| {
    ///     let mut r = vernier::Rng::new(7);
    ///     (0..n).map(|_| r.next_u64()).collect::<Vec<_>>()
    /// }, |v| { let mut w = v.clone(); w.sort_unstable(); w });
    /// s.finish();
    /// ```
    pub fn bench_args<A, S, I, F, R>(
        &mut self,
        name: impl Into<String>,
        args: impl IntoIterator<Item = A>,
        init: I,
        routine: F,
    ) -> &mut Self
    where
        A: std::fmt::Display + 'static,
        S: 'static,
        I: Fn(&A) -> S + Clone + 'static,
        F: FnMut(&mut S) -> R + Clone + 'static,
    {
        let name = name.into();
        let first = self.entries.len();
        for arg in args {
            let init = init.clone();
            let label = format!("{name}/{arg}");
            self.bench_with_init(label, move || init(&arg), routine.clone());
        }
        self.last_call = first;
        self
    }

    /// [`Suite::bench`], declared allocation-free: a run fails, naming it, when its iterations
    /// allocate (counted under `vernier run`, or on its own with [`crate::CountingAlloc`]
    /// installed; docs/memory.md).
    pub fn bench_alloc_free<F, R>(&mut self, name: impl Into<String>, f: F) -> &mut Self
    where
        F: FnMut() -> R + 'static,
    {
        self.bench(name, f);
        if let Some(e) = self.entries.last_mut() {
            e.alloc_free = true;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::complexity::Declared;
    use crate::stats::complexity::Class as Complexity;
    use crate::units::Throughput;

    #[test]
    fn arguments_name_their_benchmarks_and_a_throughput_applies_to_the_last_call() {
        let mut s = Suite::default();
        s.bench("plain", || 1);
        s.bench_args(
            "sort",
            crate::workload::range(8, 64, 8),
            |&n| vec![1u32; n as usize],
            |v| v.len(),
        )
        .throughput(Throughput::ItemsPerIter(8));
        s.bench("copy", || 2)
            .throughput(Throughput::BytesPerIter(4096));
        s.bench_threads("count", &[1, 2], |_| 3)
            .throughput(Throughput::ItemsPerIter(1));
        let listed: Vec<(String, Option<Throughput>)> = s
            .entries
            .iter()
            .map(|e| (e.name.clone(), e.throughput))
            .collect();
        let items = |n| Some(Throughput::ItemsPerIter(n));
        assert_eq!(
            listed,
            [
                ("plain".into(), None),
                ("sort/8".into(), items(8)),
                ("sort/64".into(), items(8)),
                ("copy".into(), Some(Throughput::BytesPerIter(4096))),
                ("count/threads:1".into(), items(1)),
                ("count/threads:2".into(), items(1)),
            ]
        );
        // The state of an argument is built before its first sample, not at registration.
        let built = std::rc::Rc::new(std::cell::Cell::new(0));
        let b = built.clone();
        let mut s = Suite::default();
        s.bench_args("lazy", [1u64, 2], move |&n| b.set(b.get() + n), |_| ());
        assert_eq!(built.get(), 0);
        s.entries[1].routine.prepare();
        assert_eq!(built.get(), 2);
    }

    #[test]
    fn a_complexity_applies_to_the_last_call_and_a_function_is_evaluated_at_each_n() {
        let mut s = Suite::default();
        s.bench_args("sort", [8u64, 64], |&n| n, |n| *n)
            .complexity(Complexity::NLogN);
        s.bench_args("pairs", [4u64, 16], |&n| n, |n| *n)
            .complexity_fn("N(N-1)/2", |n| n * (n - 1.0) / 2.0);
        s.bench("loose", || 1).complexity_fn("N", |n| n);
        s.bench("neg/3", || 1).complexity_fn("-N", |n| -n);
        s.bench("plain/8", || 1).complexity(Complexity::Custom);
        let got: Vec<(&str, Option<Declared>)> = s
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.complexity.clone()))
            .collect();
        let class = Some(Declared {
            class: Some(Complexity::NLogN),
            ..Declared::default()
        });
        let f = |v: f64| {
            Some(Declared {
                f: Some(v),
                function: Some("N(N-1)/2".into()),
                ..Declared::default()
            })
        };
        assert_eq!(
            got,
            [
                ("sort/8", class.clone()),
                ("sort/64", class),
                ("pairs/4", f(6.0)),
                ("pairs/16", f(120.0)),
                ("loose", None),
                ("neg/3", None),
                ("plain/8", None),
            ]
        );
    }
}
