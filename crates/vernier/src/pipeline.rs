//! One step from a measurement to its result, the same for every path: a suite measured in
//! this process, `vernier run`'s workers, `vernier analyze` re-deriving a file, and `vernier
//! compare` reading two. [`finish`] analyses the measurement, weighs the instruction counts
//! (counted when the analysis asks for them), builds the [`BenchmarkResult`], applies the
//! cold-cache rule, joins the earlier runs, sets a threaded benchmark beside its one-thread run
//! and records what the benchmark declared (its throughput and complexity); what differs
//! between the paths travels in the [`Context`], so that no rule applies on one path and not on
//! another. No caller sets a figure after it (`tests/suite/deterministic/one_step.rs` keeps it
//! so).

use crate::analyze::{self, Analysis, InstructionsCheck};
use crate::measure::Measurement;
use crate::result::complexity::Declared;
use crate::result::earlier_runs::{self, EarlierRuns};
use crate::result::{cold, threads, BenchmarkResult, ExecutorJson};
use crate::units::Throughput;

/// What the step needs beyond the measurement.
pub struct Context<'a> {
    /// The run's analysis context (timer, harness costs, speeds, counters' baseline).
    pub analysis: &'a analyze::Context,
    /// One iteration per sample with the caches evicted before each: time cannot tell such a
    /// body from an empty loop, and the checks that rest on it are dropped.
    pub cold: bool,
    /// The same program's recent medians on this machine, which the interval covers.
    pub earlier: Option<EarlierRuns>,
    /// The environment padding of each worker process, by its index.
    pub env_pad: &'a dyn Fn(u32) -> u64,
    /// What the benchmark declared it processes per iteration (`Suite::throughput`).
    pub throughput: Option<Throughput>,
    /// The size and complexity the benchmark declared (`Suite::complexity`).
    pub complexity: Option<Declared>,
    /// The run's other results (those measured before it, or a file's): a threaded benchmark
    /// is set beside its one-thread run among them (`result::threads::relate`).
    pub others: &'a [BenchmarkResult],
    /// An async benchmark's executor (`None` for synchronous code): the analysis is made in
    /// its context ([`for_executor`]) and the result keeps it.
    pub executor: Option<ExecutorJson>,
}

/// How the instructions of a benchmark are known: not at all, from a stored check, by counting
/// them when the analysis flags the benchmark `optimized-away` by time or finds it near the
/// empty loop's, or by counting them whatever its time (a threaded body whose count at another
/// thread count showed it removed: at more threads the release and the threads' waits for a
/// CPU can lift its time out of the empty loop's reach).
pub enum Instructions<'a> {
    None,
    Stored(InstructionsCheck),
    CountIfRemoved(&'a mut dyn FnMut(&Analysis) -> Option<InstructionsCheck>),
    Count(&'a mut dyn FnMut(&Analysis) -> Option<InstructionsCheck>),
}

/// The result of benchmark `name` from its measurement.
pub fn finish(
    name: &str,
    m: &Measurement,
    ctx: &Context,
    instructions: Instructions,
) -> BenchmarkResult {
    let analysis = for_executor(ctx.analysis, ctx.executor.as_ref());
    let mut an = analyze::analyze(m, &analysis);
    let check = match instructions {
        Instructions::None => None,
        Instructions::Stored(c) => Some(c),
        Instructions::CountIfRemoved(count) => {
            let removed = an
                .diagnostics
                .iter()
                .any(|d| d.code() == crate::diagnostic::Code::OptimizedAway);
            if removed || analyze::near_empty_loop(&an, &analysis) {
                count(&an)
            } else {
                None
            }
        }
        Instructions::Count(count) => count(&an),
    };
    if let Some(c) = &check {
        analyze::weigh_instructions(&mut an, c);
    }
    let mut r = BenchmarkResult::new(name, m, &an, ctx.env_pad);
    r.instructions_check = check;
    if ctx.cold {
        cold::drop_warm_checks(&mut r);
    }
    if let Some(e) = ctx.earlier {
        r.earlier_runs = Some(e);
        // The clock's range the run was given (`harness.clock_ghz`), from the context's cycle
        // times (fast, slow): medians further apart than it are other inputs or code.
        let clock_ghz = ctx
            .analysis
            .clock_cycle_ns
            .map(|(fast, slow)| [1.0 / slow, 1.0 / fast]);
        earlier_runs::join_result(&mut r, &e, clock_ghz);
    }
    r.drop_restated();
    threads::relate(&mut r, ctx.others);
    r.throughput = ctx.throughput;
    r.complexity = ctx.complexity.clone();
    r.executor = ctx.executor.clone();
    r
}

/// The analysis context of an async benchmark on `executor` (`None`: synchronous code, the
/// run's context as it is): the empty future's time on that executor stands for the empty
/// loop's (what awaiting a future costs is part of every iteration, and a body that awaits
/// nothing real measures no more than it: `optimized-away` by the same rule), and a runtime
/// whose work runs on other cores than the probed one is judged in ns.
pub fn for_executor<'a>(
    analysis: &'a analyze::Context,
    executor: Option<&ExecutorJson>,
) -> std::borrow::Cow<'a, analyze::Context> {
    match executor {
        None => std::borrow::Cow::Borrowed(analysis),
        Some(e) => std::borrow::Cow::Owned(analyze::Context {
            empty_iter_ns: Some(e.empty_future_ns).filter(|x| x.is_finite()),
            empty_iter_cycles: e.empty_future_cycles.filter(|x| x.is_finite()),
            off_calling_core: !e.on_calling_core,
            ..analysis.clone()
        }),
    }
}

/// A stored benchmark's result derived again from its raw samples through [`finish`], with
/// the run's analysis context and what the file kept: the cache mode, the counted
/// instructions, each process's padding, the throughput and complexity it declared; `earlier`,
/// the earlier runs to join (none for one side of an offline comparison); `others`, the file's
/// results among which a threaded benchmark finds its one-thread run. `None` when the benchmark
/// holds no sample.
pub fn again(
    b: &BenchmarkResult,
    analysis: &analyze::Context,
    earlier: Option<EarlierRuns>,
    others: &[BenchmarkResult],
) -> Option<BenchmarkResult> {
    if b.samples.ns.is_empty() {
        return None;
    }
    let pad = |p: u32| {
        b.processes
            .iter()
            .find(|q| q.index == p)
            .map_or(0, |q| q.env_pad_bytes)
    };
    let ctx = Context {
        analysis,
        cold: b.cache_cold,
        earlier,
        env_pad: &pad,
        // Declared by the benchmark, not measured: kept as the file has it.
        throughput: b.throughput,
        complexity: b.complexity.clone(),
        others,
        executor: b.executor.clone(),
    };
    let instructions = match b.instructions_check {
        Some(c) => Instructions::Stored(c),
        None => Instructions::None,
    };
    let mut r = finish(&b.name, &b.measurement(), &ctx, instructions);
    carry_measured_apart(b, &mut r);
    Some(r)
}

/// What the samples do not hold and the runner measured apart: the allocation counts (and a
/// declared allocation-free benchmark's failure), why they could not be counted, each
/// process's peak resident memory, and a whole command's runs and how they became its samples
/// (`vernier exec`).
fn carry_measured_apart(b: &BenchmarkResult, r: &mut BenchmarkResult) {
    r.runs = b.runs.clone();
    r.exec = b.exec.clone();
    r.memory = b.memory.clone();
    if b.memory
        .as_ref()
        .is_some_and(|m| m.alloc_free && m.allocates())
    {
        r.status = b.status;
        r.error = b.error.clone();
    }
    let unavailable = crate::diagnostic::Code::MemoryUnavailable;
    r.diagnostics.extend(
        b.diagnostics
            .iter()
            .filter(|d| d.code == unavailable)
            .cloned(),
    );
    for p in &mut r.processes {
        p.peak_rss_bytes = b
            .processes
            .iter()
            .find(|q| q.index == p.index)
            .and_then(|q| q.peak_rss_bytes);
    }
}
