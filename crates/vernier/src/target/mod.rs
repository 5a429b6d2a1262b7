//! The Rust API: register benchmarks as closures, then either measure them in this process
//! (standalone, `cargo bench`) or serve them to a runner (`vernier run`) through the worker
//! protocol. The timed loop is monomorphised per closure; dynamic dispatch happens once per
//! sample, outside the timed region.

pub mod checkpoint;
pub mod kernels;

use crate::analyze;
pub use crate::counters::CounterSelection;
use crate::counters::{self, CounterSample, CounterSet, Event as CounterEvent};
use crate::machine::Machine;
use crate::measure::{self, Batch, Measurement, MonotonicClock, Progress, Target};
use crate::plan::Plan;
use crate::protocol::{self, BenchRef, Hello, Worker};
use crate::report;
use crate::result::{
    AnalysisSettings, BenchmarkResult, CountersHarness, Harness, ResultFile, Tool, SCHEMA,
};
use crate::timer::Timer;
use std::hint::black_box;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

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
/// result pass the optimisation barrier on every iteration (the seed's `bench_iter`), so the
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

struct Plain<F>(F);

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
struct WithInit<S, I, F> {
    init: Option<I>,
    state: Option<S>,
    routine: F,
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
struct Latency<T, F> {
    x: Option<T>,
    f: F,
}

/// The timed loop of [`Suite::bench_latency`]. `black_box` takes the value's address, so each
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
struct WithSetup<S, F, I, R> {
    setup: S,
    routine: F,
    inputs: Vec<I>,
    outputs: Vec<R>,
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
        self.inputs.clear();
        self.inputs.extend((0..iters).map(|_| (self.setup)()));
        self.outputs.clear();
        self.outputs.reserve(iters as usize);
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
struct Pooled<I, F> {
    pool: Vec<I>,
    next: usize,
    routine: F,
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

/// A small, seeded generator (SplitMix64) for input pools: reproducible, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Default pool size: 64 Ki inputs, beyond what branch predictors learn (they memorise a few
/// thousand outcomes of a repeated pattern), yet small enough to stay in L2 for scalar inputs.
pub const DEFAULT_POOL: usize = 1 << 16;

/// Build a pool of `size` inputs from a seeded generator.
pub fn pool<I>(size: usize, seed: u64, mut make: impl FnMut(&mut Rng) -> I) -> Vec<I> {
    let mut rng = Rng::new(seed);
    (0..size).map(|_| make(&mut rng)).collect()
}

/// A registered benchmark.
pub struct Entry {
    pub name: String,
    pub(crate) routine: Box<dyn Routine>,
}

/// Why a benchmark program's suite cannot run. [`Suite::try_from_args`] and
/// [`Suite::try_finish`] return it; [`Suite::from_args`], [`Suite::finish`] and
/// `vernier::main!` print it and end the process with [`SuiteError::exit_code`].
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
}

impl SuiteError {
    /// 0 for `--help`, 1 for anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            SuiteError::Usage(_) => 0,
            _ => 1,
        }
    }

    /// Print the message and end the process with [`SuiteError::exit_code`]: the only place
    /// the library ends a process, for the entry points that promise it.
    pub fn exit(&self) -> ! {
        eprintln!("{self}");
        std::process::exit(self.exit_code())
    }
}

/// Options of a suite run (parsed from the command line by `Suite::from_args`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Substring a benchmark name must contain.
    pub filter: Option<String>,
    pub exact: bool,
    pub plan: Plan,
    pub json: Option<PathBuf>,
    pub list: bool,
    pub quick: bool,
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
    /// ([10th, 90th] percentile; filled by the `vernier` command).
    pub clock_ghz: Option<[f64; 2]>,
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
                                \x20            [--counters LIST|none] [--keep-interrupted]\n\
                                For the full analysis across processes: vernier run -- BENCH"
                        .into())
                }
                s if s.starts_with('-') => {
                    return Err(format!(
                        "unknown option '{s}' (expected FILTER, --quick, --time S, --json FILE, --list, --exact, --counters LIST, --keep-interrupted)"
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

    pub fn selects(&self, name: &str) -> bool {
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
    options: Options,
    /// Paired comparisons (`compare`, `compare_benches`), run in this process after the
    /// benchmarks.
    pub(crate) pairs: Vec<crate::measure::pairs::PairEntry>,
}

impl Default for Suite {
    fn default() -> Self {
        Suite::new(Options::default())
    }
}

/// An event of an in-process run, for progress displays.
pub enum Event<'a> {
    Start {
        name: &'a str,
    },
    Progress {
        name: &'a str,
        progress: &'a Progress,
    },
    Done {
        result: &'a BenchmarkResult,
    },
}

impl Suite {
    pub fn new(options: Options) -> Suite {
        Suite {
            entries: Vec::new(),
            options,
            pairs: Vec::new(),
        }
    }

    /// A suite configured from the process's arguments; a worker when launched by a runner.
    /// On `--help` or a bad argument it prints the message and ends the process (0 or 1): it
    /// is a program's entry point, as `vernier::main!` is. [`Suite::try_from_args`] returns the
    /// error instead.
    pub fn from_args() -> Suite {
        Suite::try_from_args().unwrap_or_else(|e| e.exit())
    }

    /// A suite configured from the process's arguments, or why it cannot be.
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

    pub fn options(&self) -> &Options {
        &self.options
    }

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

    /// Register `f` measured with cold caches (seed 004): before every sample, outside the
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
            Box::new(crate::measure::cache::OwnedCold {
                inner: Plain(f),
                evictor: crate::measure::cache::Evictor::default(),
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
    /// ratio NEW/OLD with its interval and a verdict (see `vernier::measure::pairs`). Comparisons run
    /// in this process only, on one CPU, both sides sharing this process's memory layout: the
    /// interval covers the noise within the process, not what would differ between processes
    /// (as a worker, a suite serves its benchmarks; `vernier compare` compares two executables
    /// over several process pairs).
    pub fn compare<A, RA, B, RB>(&mut self, name: impl Into<String>, old: A, new: B) -> &mut Self
    where
        A: FnMut() -> RA + 'static,
        B: FnMut() -> RB + 'static,
    {
        self.pairs.push(crate::measure::pairs::PairEntry {
            name: name.into(),
            old: crate::measure::pairs::PairSide::Routine(Box::new(Plain(old))),
            new: crate::measure::pairs::PairSide::Routine(Box::new(Plain(new))),
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
        self.pairs.push(crate::measure::pairs::PairEntry {
            name: name.into(),
            old: crate::measure::pairs::PairSide::Bench(old.into()),
            new: crate::measure::pairs::PairSide::Bench(new.into()),
        });
        self
    }

    /// Names of the registered comparisons.
    pub fn comparison_names(&self) -> Vec<String> {
        self.pairs.iter().map(|p| p.name.clone()).collect()
    }

    /// Take the registered benchmarks out (to re-register a selection elsewhere).
    pub fn into_entries(self) -> Vec<(String, Box<dyn Routine>)> {
        self.entries
            .into_iter()
            .map(|e| (e.name, e.routine))
            .collect()
    }

    /// Register any `Routine`.
    pub fn add(&mut self, name: impl Into<String>, routine: Box<dyn Routine>) -> &mut Self {
        self.entries.push(Entry {
            name: name.into(),
            routine,
        });
        self
    }

    /// Run: as a worker if a runner launched this process, otherwise measure and print. On an
    /// error (an unwritable `--json`, a broken link to the runner) it prints it and ends the
    /// process with status 1: it is a program's last step, as in `vernier::main!`.
    /// [`Suite::try_finish`] returns the error instead.
    pub fn finish(self) {
        if let Err(e) = self.try_finish() {
            e.exit()
        }
    }

    /// Run as [`Suite::finish`] does, returning what went wrong instead of ending the process.
    pub fn try_finish(mut self) -> Result<(), SuiteError> {
        if let Ok(fds) = std::env::var(protocol::FDS_ENV) {
            return self.serve_fds(&fds).map_err(SuiteError::Worker);
        }
        if self.options.list {
            for n in self.names() {
                println!("{n}");
            }
            return Ok(());
        }
        if let Some(path) = &self.options.json {
            crate::result::check_destination(path).map_err(SuiteError::Destination)?;
        }
        let render = report::Render::for_stdout(false);
        // Output errors (a closed pipe) stop the printing, never the measuring.
        use std::io::Write as _;
        let mut out = std::io::stdout();
        let mut printed_head = false;
        let names = self.names();
        let table = report::Table::new(&names, render);
        let file = self.run_in_process(&mut |ev| {
            if let Event::Done { result } = ev {
                if !printed_head {
                    let _ = writeln!(out, "{}", table.head());
                    printed_head = true;
                }
                let _ = writeln!(out, "{}", table.row(result));
            }
        });
        if !self.pairs.is_empty() {
            let cf = crate::measure::pairs::run_suite_pairs(
                &mut self,
                crate::stats::compare::DEFAULT_THRESHOLD,
                &mut |_| {},
            );
            if !cf.comparisons.is_empty() || !cf.failed.is_empty() {
                let _ = write!(
                    out,
                    "\n{}",
                    crate::measure::pairs::table_fitted(&cf, render)
                );
            }
        }
        if file.benchmarks.is_empty() {
            if self.pairs.is_empty() {
                let _ = writeln!(out, "no benchmark matches the filter");
            }
            return Ok(());
        }
        let _ = write!(out, "{}", report::after_table(&file, &table));
        let _ = writeln!(
            out,
            "For layout randomisation across processes and the full analysis: vernier run -- {}",
            std::env::args().next().unwrap_or_default()
        );
        Ok(())
    }

    fn serve_fds(&mut self, fds: &str) -> Result<(), String> {
        use std::os::fd::FromRawFd;
        let (r, w) = fds
            .split_once(',')
            .and_then(|(r, w)| Some((r.parse::<i32>().ok()?, w.parse::<i32>().ok()?)))
            .ok_or_else(|| format!("{}='{fds}' is not 'R,W'", protocol::FDS_ENV))?;
        // SAFETY: the runner opened these descriptors for this process and nothing else in
        // the process owns them; each File takes sole ownership of one.
        let (input, mut output) =
            unsafe { (std::fs::File::from_raw_fd(r), std::fs::File::from_raw_fd(w)) };
        let mut input = std::io::BufReader::new(input);
        let mut worker = SuiteWorker {
            suite: self,
            timer: Timer::detect(),
            empty: Box::new(Plain(|| ())),
            counters: None,
            evictor: crate::measure::cache::Evictor::default(),
        };
        protocol::serve(&mut worker, &mut input, &mut output).map_err(|e| e.to_string())
    }

    /// Measure every selected benchmark in this process; `on_event` sees each step. Returns
    /// the result file's content (also written to `--json` after each benchmark).
    pub fn run_in_process(&mut self, on_event: &mut dyn FnMut(Event)) -> ResultFile {
        let timer = Timer::detect();
        let mut plan = self.options.plan.clone();
        let requested = self.options.counters.events();
        let mut counter_set = self.options.counters.open();
        let counters_info = (!requested.is_empty())
            .then(|| counter_harness(&requested, counter_set.as_mut(), &timer, &mut plan));
        if counter_set.as_ref().is_some_and(|c| c.is_empty()) {
            counter_set = None;
        }
        let mut harness = calibrate_harness(&timer, &plan);
        harness.counters = counters_info;
        harness.known_cycle_ns = self.options.known_cycle_ns;
        harness.clock_ghz = self.options.clock_ghz;
        let mut file = ResultFile {
            schema: SCHEMA,
            tool: Tool::default(),
            machine: Machine::detect(),
            system: self.options.system.clone(),
            timer: timer.info(),
            harness: harness.clone(),
            mode: "time".into(),
            analysis: AnalysisSettings::new(
                &plan,
                cfg!(debug_assertions),
                self.options.keep_interrupted,
            ),
            benchmarks: Vec::new(),
        };
        let ctx = file.analysis_context();
        let rounds = match self.options.rounds {
            0 => DEFAULT_ROUNDS,
            r => r,
        };
        let plan = plan.share(rounds);
        let selected: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.options.selects(&self.entries[i].name))
            .collect();
        let mut earlier = match &self.options.json {
            Some(path) => earlier_targets(path, &file.mode),
            None => Vec::new(),
        };
        earlier.retain(|b| !selected.iter().any(|&i| self.entries[i].name == b.name));
        if let (Some(path), false) = (&self.options.json, earlier.is_empty()) {
            eprintln!(
                "vernier: {} holds {} benchmark(s) from an earlier bench target of this `cargo \
                 bench`; they are kept beside this target's",
                path.display(),
                earlier.len()
            );
        }
        let mut json_failed = false;
        let mut acc: Vec<Measurement> = selected.iter().map(|_| Measurement::empty()).collect();
        let interrupted = || measure::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
        let mut done = vec![false; selected.len()];
        for round in 0..rounds {
            for (k, &i) in selected.iter().enumerate() {
                if done[k] || interrupted() {
                    continue;
                }
                let name = self.entries[i].name.clone();
                on_event(Event::Start { name: &name });
                let mut plan_r = plan.clone();
                if round > 0 {
                    plan_r.fixed_iters = Some(acc[k].iters_per_sample);
                }
                if let Some(n) = self.entries[i].routine.fixed_iters() {
                    plan_r.fixed_iters = Some(n);
                }
                let mut target = Metered {
                    routine: self.entries[i].routine.as_mut(),
                    timer: &timer,
                    counters: counter_set.as_mut(),
                };
                let m = measure::measure(
                    &mut target,
                    &MonotonicClock,
                    &plan_r,
                    &timer.info(),
                    &mut |p| {
                        on_event(Event::Progress {
                            name: &name,
                            progress: p,
                        })
                    },
                );
                acc[k].append(m, 0, round as u32);
                done[k] = acc[k].error.is_some() || round + 1 == rounds;
            }
        }
        // Report in suite order; after Ctrl-C, whatever was measured is reported too, and a
        // benchmark whose rounds were not all run is marked as cut short.
        for (k, &i) in selected.iter().enumerate() {
            if acc[k].samples.is_empty() && acc[k].error.is_none() {
                continue;
            }
            if !done[k] && interrupted() {
                acc[k].stop = measure::StopReason::Interrupted;
            }
            let a = analyze::analyze(&acc[k], &ctx);
            let mut r = BenchmarkResult::new(&self.entries[i].name, &acc[k], &a, &|_| 0);
            if self.entries[i].routine.fixed_iters() == Some(1) {
                crate::measure::cache::drop_warm_checks(&mut r);
            }
            file.benchmarks.push(r);
            if let (Some(path), false) = (&self.options.json, json_failed) {
                let mut all = file.clone();
                all.benchmarks.splice(0..0, earlier.iter().cloned());
                if let Err(e) = all.write_atomic(path) {
                    // Said once: the measurements go on, and are printed.
                    eprintln!(
                        "vernier: cannot write {}: {e}; the results are printed only",
                        path.display()
                    );
                    json_failed = true;
                }
            }
            on_event(Event::Done {
                result: file.benchmarks.last().unwrap(),
            });
        }
        file
    }
}

/// Benchmarks an earlier bench target of the same `cargo bench` wrote to `path`: `cargo bench
/// --bench a --bench b -- --json f.json` runs each target in turn with the same arguments, so
/// each would replace the file. A file whose writer had the same parent process as this one,
/// when that parent is `cargo`, and was measured in the same `mode`, is merged into instead.
/// Anything else (another invocation, an unreadable file) is replaced, as usual.
fn earlier_targets(path: &Path, mode: &str) -> Vec<BenchmarkResult> {
    let parent = std::os::unix::process::parent_id();
    let parent_is_cargo =
        std::fs::read_to_string(format!("/proc/{parent}/comm")).is_ok_and(|c| c.trim() == "cargo");
    if !parent_is_cargo || !path.exists() {
        return Vec::new();
    }
    match ResultFile::load(path) {
        Ok(f)
            if f.tool.parent_pid == Some(parent)
                && f.tool.pid != Some(std::process::id())
                && f.mode == mode =>
        {
            f.benchmarks
        }
        _ => Vec::new(),
    }
}

/// The in-process target: samples a routine with this process's timer. A panic in the
/// benchmark becomes an error (the samples before it are kept by the engine).
pub struct InProcess<'a> {
    pub routine: &'a mut dyn Routine,
    pub timer: &'a Timer,
}

impl Target for InProcess<'_> {
    fn prepare(&mut self) -> Result<(), String> {
        let routine = &mut *self.routine;
        panic::catch_unwind(AssertUnwindSafe(|| routine.prepare()))
            .map_err(|p| format!("benchmark set-up panicked: {}", panic_message(&p)))
    }

    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        probe_before(self.timer, out);
        sample_routine(&mut *self.routine, self.timer, None, iters, count, out)
    }
}

/// The in-process target with counters: like [`InProcess`], reading `counters` (when `Some`)
/// around each sample's timed region.
pub struct Metered<'a> {
    pub routine: &'a mut dyn Routine,
    pub timer: &'a Timer,
    pub counters: Option<&'a mut CounterSet>,
}

impl Target for Metered<'_> {
    fn prepare(&mut self) -> Result<(), String> {
        InProcess {
            routine: &mut *self.routine,
            timer: self.timer,
        }
        .prepare()
    }

    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        probe_before(self.timer, out);
        let counters = self.counters.as_deref_mut();
        sample_routine(&mut *self.routine, self.timer, counters, iters, count, out)
    }
}

/// Run the core-speed probe the engine asked for (`out.probe_adds`), before the batch and
/// outside every timed region, on this thread.
fn probe_before(timer: &Timer, out: &mut Batch) {
    if out.probe_adds > 0 {
        out.probe_ns = Some(crate::target::kernels::speed_probe(timer, out.probe_adds));
    }
}

/// `count` samples of `iters` iterations of `routine` into `out`: times, and with `counters`
/// one counter column per event read (computed after the batch, outside every region). A
/// panic becomes an error; the samples before it are kept.
pub fn sample_routine(
    routine: &mut dyn Routine,
    timer: &Timer,
    mut counters: Option<&mut CounterSet>,
    iters: u64,
    count: usize,
    out: &mut Batch,
) -> Result<(), String> {
    let ns = &mut out.ns;
    let first = ns.len();
    let mut deltas: Vec<CounterSample> = Vec::new();
    if counters.is_some() {
        deltas.reserve(count);
    }
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        for _ in 0..count {
            let mut meter = Meter::with_counters(timer, counters.as_deref_mut());
            let ticks = routine.sample_metered(&mut meter, iters);
            ns.push(timer.ticks_to_ns(ticks));
            if let Some(c) = counters.as_deref() {
                deltas.push(c.sample());
            }
        }
    }))
    .map_err(|p| format!("benchmark panicked: {}", panic_message(&p)));
    if let Some(c) = counters.as_deref() {
        if first == 0 && !deltas.is_empty() {
            deltas.truncate(out.ns.len());
            out.counters = counters::to_columns(c.events(), &deltas);
        }
    }
    r
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic)".into())
}

struct SuiteWorker<'a> {
    suite: &'a mut Suite,
    timer: Timer,
    empty: Box<dyn Routine>,
    /// The counters of the last `counters=` option, kept open while it does not change.
    counters: Option<(String, CounterSet)>,
    /// The buffer `cache=cold` walks before each sample (allocated on first use).
    evictor: crate::measure::cache::Evictor,
}

impl Worker for SuiteWorker<'_> {
    fn hello(&self) -> Hello {
        Hello {
            version: protocol::VERSION,
            implementation: format!("vernier-rust/{}", env!("CARGO_PKG_VERSION")),
            timer: self.timer.info(),
            debug_build: cfg!(debug_assertions),
            pid: std::process::id(),
        }
    }

    fn names(&self) -> Vec<String> {
        self.suite.names()
    }

    fn loop_addrs(&self) -> Vec<usize> {
        self.suite
            .entries
            .iter()
            .map(|e| e.routine.loop_addr())
            .collect()
    }

    fn run(
        &mut self,
        bench: BenchRef,
        iters: u64,
        samples: usize,
        extra: &[(String, String)],
        out: &mut Batch,
    ) -> Result<(), String> {
        // `counters=<event,…>`: open them (once per distinct list) and read them per sample.
        let wanted = extra.iter().find(|(k, _)| k == "counters").map(|(_, v)| v);
        let counters = match wanted {
            None => None,
            Some(list) => {
                if self.counters.as_ref().is_none_or(|(l, _)| l != list) {
                    let events = counters::parse_event_list(list).map_err(|e| e.to_string())?;
                    self.counters = Some((list.clone(), CounterSet::open(&events)));
                }
                self.counters
                    .as_mut()
                    .map(|(_, c)| c)
                    .filter(|c| !c.is_empty())
            }
        };
        let count = self.suite.entries.len();
        let routine: &mut dyn Routine = match bench {
            BenchRef::Empty => self.empty.as_mut(),
            BenchRef::Index(i) if i < count => self.suite.entries[i].routine.as_mut(),
            BenchRef::Index(i) => return Err(format!("no benchmark {i} (there are {count})")),
        };
        // `probe=<adds>`: the core-speed probe before the batch (`probe_ns=` in the reply).
        out.probe_adds = extra
            .iter()
            .find(|(k, _)| k == "probe")
            .and_then(|(_, v)| protocol::parse_probe_adds(v))
            .unwrap_or(0);
        // `cache=cold`: the caches are evicted before each sample, outside its timed region.
        let cold = match extra
            .iter()
            .find(|(k, _)| k == "cache")
            .map(|(_, v)| v.as_str())
        {
            None | Some("hot") => false,
            Some("cold") => true,
            Some(v) => return Err(format!("bad option 'cache={v}' (expected hot or cold)")),
        };
        let mut cold_routine;
        let routine: &mut dyn Routine = if cold {
            cold_routine = crate::measure::cache::Cold {
                inner: routine,
                evictor: &mut self.evictor,
            };
            &mut cold_routine
        } else {
            routine
        };
        let mut t = Metered {
            routine,
            timer: &self.timer,
            counters,
        };
        t.measure(iters, samples, out).map_err(|e| match bench {
            BenchRef::Index(i) => format!("benchmark {i} failed: {e}"),
            BenchRef::Empty => format!("benchmark empty failed: {e}"),
        })
    }

    fn probe(&self) -> String {
        probe_line()
    }
}

/// Facts about this process for the runner's tests: CPU, environment size, a stack address,
/// whether address-space randomisation is on.
pub fn probe_line() -> String {
    let local = 0u8;
    // SAFETY: sched_getcpu has no preconditions; personality(0xffffffff) only queries.
    let (cpu, pers) = unsafe { (libc::sched_getcpu(), libc::personality(0xffff_ffff)) };
    let env_bytes: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2)
        .sum();
    let aslr = if pers >= 0 && (pers & libc::ADDR_NO_RANDOMIZE) != 0 {
        0
    } else {
        1
    };
    format!(
        "probe pid={} cpu={cpu} env_bytes={env_bytes} stack={:p} aslr={aslr}",
        std::process::id(),
        &local as *const u8
    )
}

/// The per-iteration median of a self-measurement (empty loop, add chain), or `None` when
/// calibration could not lengthen its samples to the plan's minimum (a loaded machine, a
/// budget too short): a harness cost taken from samples dominated by the timer would be wrong,
/// and everything compared with it too.
pub fn self_measurement(
    m: &Measurement,
    plan: &Plan,
    timer: &crate::timer::TimerInfo,
) -> Option<f64> {
    let per: Vec<f64> = m
        .samples
        .samples
        .iter()
        .filter(|s| s.iters == m.iters_per_sample && s.phase == crate::samples::Phase::Measure)
        .map(|s| s.per_iter_ns())
        .collect();
    if per.is_empty() || m.error.is_some() {
        return None;
    }
    let median = crate::stats::median(&per);
    let sample_ns = median * m.iters_per_sample as f64;
    (sample_ns >= plan.min_sample_ns(timer) as f64 / 2.0).then_some(median)
}

/// Budget for each start-up self-measurement (empty loop, add chain).
const SELF_BUDGET_NS: u64 = 80_000_000;
/// Additions per chain when estimating the cycle time.
const CHAIN_LEN: u64 = 1000;

/// Measure the harness's own costs with the engine itself: the per-iteration cost of the loop
/// around an empty body, the cost of a sample with no iterations, and the cycle time (from a
/// chain of dependent one-cycle additions).
pub fn calibrate_harness(timer: &Timer, plan: &Plan) -> Harness {
    let short = plan.rebudget(SELF_BUDGET_NS);
    let measured = |routine: &mut dyn Routine| -> (f64, Measurement) {
        let mut t = InProcess { routine, timer };
        let m = measure::measure(&mut t, &MonotonicClock, &short, &timer.info(), &mut |_| {});
        let median = self_measurement(&m, &short, &timer.info()).unwrap_or(f64::NAN);
        (median, m)
    };
    let (empty_iter_ns, _) = measured(&mut Plain(|| ()));
    let mut x = 0u64;
    let (chain, chain_m) = measured(&mut Plain(move || {
        x = crate::target::kernels::add_chain(x, black_box(CHAIN_LEN));
        x
    }));
    let mut zero = Plain(|| ());
    let mut costs: Vec<f64> = (0..2000)
        .map(|_| timer.ticks_to_ns_f64(zero.sample(timer, 0)))
        .collect();
    costs.sort_by(|a, b| a.total_cmp(b));
    Harness {
        empty_iter_ns,
        sample_cost_ns: costs[costs.len() / 2],
        cycle_ns: chain / CHAIN_LEN as f64,
        cycle_source: "add-chain".into(),
        runner_batch_cost_ns: None,
        counters: None,
        noise_far_share: analyze::far_outlier_share(&chain_m),
        known_cycle_ns: None,
        clock_ghz: None,
    }
}

/// Measure what reading `set` around a sample costs, the way the samples read it: pairs of
/// `read_start` / `read_stop` around an empty timed region (the two clock reads). The wall
/// time of a pair is the read cost; each event's median delta over the empty region is the
/// baseline analysis subtracts from every sample. When the cost exceeds
/// [`plan::MAX_COUNTER_OVERHEAD`](crate::plan::MAX_COUNTER_OVERHEAD) of the plan's sample
/// length, the plan's samples are lengthened. `set` is `None` when nothing could be opened.
pub fn counter_harness(
    requested: &[CounterEvent],
    set: Option<&mut CounterSet>,
    timer: &Timer,
    plan: &mut Plan,
) -> CountersHarness {
    let mut h = CountersHarness {
        requested: requested.iter().map(|e| e.name().to_string()).collect(),
        read_cost_ns: f64::NAN,
        target_sample_ns: plan.target_sample_ns,
        ..CountersHarness::default()
    };
    let Some(set) = set else {
        return h;
    };
    h.events = set.events().iter().map(|e| e.name().to_string()).collect();
    h.unavailable = set.unavailable().to_vec();
    h.note = set.note();
    if set.is_empty() {
        return h;
    }
    let cost = set.read_cost_with(counters::READ_COST_PROBES, || {
        let t0 = timer.start();
        black_box(timer.stop().wrapping_sub(t0));
    });
    h.read_pair_ns = Some(cost.ns);
    h.read_cost_ns = pipeline_cost(set, timer).max(cost.ns);
    h.reads_per_side = cost.reads_per_side;
    h.baseline = cost
        .baseline
        .events()
        .map(|e| {
            (
                e.name().to_string(),
                cost.baseline.get(e).unwrap_or(0) as f64,
            )
        })
        .collect();
    plan.target_sample_ns =
        crate::plan::sample_ns_for_counters(plan.target_sample_ns, h.read_cost_ns);
    h.target_sample_ns = plan.target_sample_ns;
    h.overhead = h.read_cost_ns / plan.target_sample_ns as f64;
    h
}

/// Samples per batch, and batches per setting, when timing what counters add to a sample.
const PIPELINE_PROBE_SAMPLES: usize = 256;
const PIPELINE_PROBE_BATCHES: usize = 9;

/// Wall time the counters add to one sample as the engine takes it (the reads, the deltas and
/// the columns): batches of empty samples with the counters minus the same without, per
/// sample; medians over batches, the two settings alternated.
fn pipeline_cost(set: &mut CounterSet, timer: &Timer) -> f64 {
    let mut empty = Plain(|| ());
    let mut batch = Batch::default();
    let mut with = Vec::new();
    let mut without = Vec::new();
    for k in 0..PIPELINE_PROBE_BATCHES * 2 {
        let on = k % 2 == 0;
        batch.clear();
        let t0 = crate::timer::monotonic_ns();
        let counters = if on { Some(&mut *set) } else { None };
        let _ = sample_routine(
            &mut empty,
            timer,
            counters,
            0,
            PIPELINE_PROBE_SAMPLES,
            &mut batch,
        );
        let dt = (crate::timer::monotonic_ns() - t0) as f64 / PIPELINE_PROBE_SAMPLES as f64;
        if on { &mut with } else { &mut without }.push(dt);
    }
    (crate::stats::median(&with) - crate::stats::median(&without)).max(0.0)
}
