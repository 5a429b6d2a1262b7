//! A program's suite: the benchmarks it registers, its options (parsed from its command line)
//! and why it cannot run ([`SuiteError`]). Running it is [`super`]'s job.

use crate::counters::CounterSelection;
use crate::plan::Plan;
use crate::result::complexity::Declared;
use crate::speed_file::KnownSpeed;
use crate::stats::complexity::Class as Complexity;
use crate::units::Throughput;
use crate::workload::routine::{Latency, Plain, Pooled, Routine, WithInit, WithSetup};
use crate::workload::{cache, Entry};
use std::path::PathBuf;

/// Why a benchmark program's suite cannot run. [`Suite::try_from_args`] and
/// [`Suite::try_finish`] return it; [`Suite::run_main`] (and so `vernier::main!`) prints it
/// and returns [`SuiteError::exit_code`] as the program's exit status; [`Suite::from_args`]
/// and [`Suite::finish`], the forms for a plain `fn main()`, print it and end the process.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// `--help`: the usage text (not an error: exit status 0).
    #[error("{0}")]
    Usage(String),
    /// A bad command-line argument.
    #[error("{0}")]
    Args(String),
    /// The `--json` destination cannot be written (checked before measuring).
    #[error("vernier: --json {0}")]
    Destination(String),
    /// Serving a runner failed (the link to it broke, or it sent nonsense).
    #[error("vernier worker: {0}")]
    Worker(String),
    /// Benchmarks failed (a panic, a body that stopped): everything else was measured, printed
    /// and saved; the status says the run is not whole, as under `vernier run`.
    #[error("vernier: {} benchmark(s) failed: {}", .0.len(), .0.join(", "))]
    Failed(Vec<String>),
    /// Ctrl-C: what was measured before it is printed and saved (status 130).
    #[error("vernier: interrupted; every benchmark measured before Ctrl-C is kept{0}")]
    Interrupted(String),
}

impl SuiteError {
    /// 0 for `--help`, 130 after Ctrl-C, 1 for anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            SuiteError::Usage(_) => 0,
            SuiteError::Interrupted(_) => 130,
            _ => 1,
        }
    }

    /// Print the message and end the process with [`SuiteError::exit_code`]. Only the
    /// entry points made for a program's `main` ([`Suite::from_args`], [`Suite::finish`])
    /// call it.
    pub fn exit(&self) -> ! {
        eprintln!("{self}");
        std::process::exit(self.exit_code())
    }

    /// Print the message on standard error and give the exit status a program ends with.
    pub fn report(&self) -> std::process::ExitCode {
        eprintln!("{self}");
        std::process::ExitCode::from(self.exit_code() as u8)
    }
}

/// Options of a suite run (parsed from the command line by `Suite::try_from_args`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Substring a benchmark name must contain.
    pub filter: Option<String>,
    pub exact: bool,
    pub plan: Plan,
    pub json: Option<PathBuf>,
    pub list: bool,
    pub quick: bool,
    /// Only the benchmarks of this shard (`--shard K/N`, see [`crate::shard`]).
    pub shard: Option<crate::shard::Shard>,
    /// The machine audit to record in the result (filled by the `vernier` command).
    pub system: serde_json::Value,
    /// Rounds over the suite (0: the default, `DEFAULT_ROUNDS`).
    pub rounds: usize,
    /// Counters read around each sample (`--counters`).
    pub counters: CounterSelection,
    /// Keep interrupted samples in the estimates (`--keep-interrupted`).
    pub keep_interrupted: bool,
    /// The machine's known speed from earlier runs, ns per addition of the core-speed probe
    /// (filled by the `vernier` command).
    pub known_cycle_ns: Option<f64>,
    /// The range of the core's clock over this machine's recent runs, GHz-equivalent
    /// ([slowest not core-slowed, fastest]; filled by the `vernier` command).
    pub clock_ghz: Option<[f64; 2]>,
    /// Per benchmark name, the medians of the same program's recent runs on this machine,
    /// which its interval is joined to (`result::recent_runs`; filled by the `vernier` command).
    pub earlier: std::collections::BTreeMap<String, crate::result::recent_runs::EarlierRuns>,
    /// The speed file was read for this program's earlier runs (`earlier` holds those with at
    /// least two; filled by the `vernier` command).
    pub earlier_runs_read: bool,
}

/// Benchmarks are measured in two rounds, one after the other over the whole suite, each with
/// half the budget: a change of the machine's state between rounds (another tenant, frequency)
/// widens the interval instead of passing unnoticed, as it would in one contiguous run.
pub const DEFAULT_ROUNDS: usize = 2;

impl Options {
    /// Parse the arguments of a benchmark executable (`cargo bench -- [FILTER] [OPTIONS]`).
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options::default();
        let mut time: Option<f64> = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--bench" | "--nocapture" | "--color=never" | "--color=auto" => {}
                "--quick" => o.quick = true,
                "--list" => o.list = true,
                "--keep-interrupted" => o.keep_interrupted = true,
                "--counters" => {
                    let v = it.next().ok_or("--counters needs a list (or none)")?;
                    o.counters = CounterSelection::parse(v)?;
                }
                "--exact" => o.exact = true,
                "--shard" => {
                    let v = it.next().ok_or("--shard needs K/N (e.g. --shard 1/4)")?;
                    o.shard = Some(crate::shard::Shard::parse(v)?);
                }
                "--time" => {
                    let v = it.next().ok_or("--time needs a number of seconds")?;
                    time = Some(
                        v.parse()
                            .ok()
                            .filter(|t: &f64| *t > 0.0 && t.is_finite())
                            .ok_or(format!("--time {v}: expected a positive number of seconds"))?,
                    );
                }
                "--json" => {
                    o.json = Some(it.next().ok_or("--json needs a file name")?.into());
                }
                "-h" | "--help" => {
                    return Err("usage: BENCH [FILTER] [--quick] [--time SECONDS] [--json FILE] [--list] [--exact]\n\
                                \x20            [--shard K/N]\n\
                                \x20            [--counters LIST|none] [--keep-interrupted]\n\
                                For the full analysis across processes: vernier run -- BENCH"
                        .into())
                }
                s if s.starts_with('-') => {
                    return Err(format!(
                        "unknown option '{s}' (expected FILTER, --quick, --time S, --json FILE, --list, --exact, --shard K/N, --counters LIST, --keep-interrupted)"
                    ))
                }
                s => o.filter = Some(s.to_string()),
            }
        }
        o.plan = match (time, o.quick) {
            (Some(t), _) => Plan::with_budget((t * 1e9) as u64),
            (None, true) => Plan::quick(),
            (None, false) => Plan::default(),
        };
        Ok(o)
    }

    /// Fill what a run in this process needs from the machine's speed file and was not
    /// given: the known speed, the clock's range, and the earlier runs of `program` (a
    /// [`program_identity`](crate::speed_file::program_identity)).
    pub fn fill_known(&mut self, known: &KnownSpeed, program: Option<&str>) {
        if self.known_cycle_ns.is_none() {
            self.known_cycle_ns = known.known_cycle_ns();
        }
        if self.clock_ghz.is_none() {
            self.clock_ghz = known.clock_ghz();
        }
        if let (true, Some(id)) = (self.earlier.is_empty(), program) {
            self.earlier = known.earlier_runs_of(id);
        }
        self.earlier_runs_read |= program.is_some() && known.in_use();
    }

    pub fn selects(&self, name: &str) -> bool {
        if self.shard.is_some_and(|s| !s.contains(name)) {
            return false;
        }
        match &self.filter {
            None => true,
            Some(f) if self.exact => name == f,
            Some(f) => name.contains(f.as_str()),
        }
    }
}

/// A set of benchmarks.
pub struct Suite {
    pub(crate) entries: Vec<Entry>,
    pub(crate) options: Options,
    /// Paired comparisons (`compare`, `compare_benches`), run in this process after the
    /// benchmarks.
    pub(crate) pairs: Vec<PairEntry>,
    /// The first entry the last registering call added ([`Suite::throughput`] applies from it).
    last_call: usize,
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

    /// The work one iteration does, for the benchmarks the previous call registered (all of
    /// them for [`Suite::bench_args`] and [`Suite::bench_threads`]): the table, the result
    /// file, the exports and `compare` then give its rate too (bytes per second in binary
    /// units, items per second).
    ///
    /// ```no_run
    /// use vernier::{Suite, Throughput};
    /// let mut s = Suite::from_args();
    /// let src = vec![0u8; 4096];
    /// s.bench("copy 4 KiB", move || src.clone())
    ///     .throughput(Throughput::BytesPerIter(4096));
    /// s.finish();
    /// ```
    pub fn throughput(&mut self, t: Throughput) -> &mut Self {
        let from = self.last_call.min(self.entries.len());
        for e in &mut self.entries[from..] {
            e.throughput = Some(t);
        }
        self
    }

    /// Fit the complexity of the benchmarks the previous call registered (a family `NAME/N`,
    /// as [`Suite::bench_args`] names them) in `class` rather than in the usual class that fits
    /// best: Google Benchmark's `Complexity(benchmark::oNLogN)`. The line under the table still
    /// names the best usual class when another fits better.
    ///
    /// ```no_run
    /// use vernier::Complexity;
    /// let mut s = vernier::Suite::from_args();
    /// s.bench_args("sort", vernier::range(256, 65536, 4), |&n| vec![7u32; n as usize],
    ///     |v| { let mut w = v.clone(); w.sort_unstable(); w })
    ///     .complexity(Complexity::NLogN);
    /// s.finish();
    /// ```
    pub fn complexity(&mut self, class: Complexity) -> &mut Self {
        if class == Complexity::Custom {
            eprintln!(
                "vernier: complexity(Complexity::Custom) has no function: give it with \
                 complexity_fn(name, f); the best usual class is fitted"
            );
            return self;
        }
        self.declare(|_| {
            Some(Declared {
                class: Some(class),
                ..Declared::default()
            })
        })
    }

    /// Fit the complexity of the benchmarks the previous call registered (a family `NAME/N`)
    /// as `c · f(N)` with the benchmark's own function `f`, named `name` for a reader (Google
    /// Benchmark's `Complexity(lambda)`). `f` is called here, once per benchmark, with the N its
    /// name ends in; a benchmark whose name has no N, or where `f` is not finite and positive
    /// or zero, is left out of the fit, said on standard error.
    ///
    /// ```no_run
    /// let mut s = vernier::Suite::from_args();
    /// s.bench_args("walk", vernier::range(256, 65536, 4), |&n| vec![1u32; n as usize],
    ///     |v| v.iter().sum::<u32>())
    ///     .complexity_fn("N^1.5", |n| n.powf(1.5));
    /// s.finish();
    /// ```
    pub fn complexity_fn(&mut self, name: &str, f: impl Fn(f64) -> f64) -> &mut Self {
        let function = name.to_string();
        self.declare(|bench| {
            let Some((_, n)) = crate::result::complexity::family_of(bench) else {
                eprintln!(
                    "vernier: complexity_fn(\"{function}\"): {bench} has no size in its name \
                     (NAME/N); it is left out of the fit"
                );
                return None;
            };
            let v = f(n as f64);
            if !(v.is_finite() && v >= 0.0) {
                eprintln!(
                    "vernier: complexity_fn(\"{function}\") gives {v} at N = {n} ({bench}); it \
                     is left out of the fit"
                );
                return None;
            }
            Some(Declared {
                f: Some(v),
                function: Some(function.clone()),
                ..Declared::default()
            })
        })
    }

    /// Set the complexity declaration of each benchmark the previous call registered.
    fn declare(&mut self, mut d: impl FnMut(&str) -> Option<Declared>) -> &mut Self {
        let from = self.last_call.min(self.entries.len());
        for e in &mut self.entries[from..] {
            e.complexity = d(&e.name);
        }
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
