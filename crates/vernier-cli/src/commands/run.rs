//! `vernier run [OPTIONS] -- PROGRAM [ARGS]`: drive a benchmark executable as a worker.
//!
//! For each selected benchmark, `--processes` worker processes are started one after the
//! other, each with its own randomised environment padding (the layout effect of seed 003);
//! the first calibrates the iteration count and the others reuse it so all samples are
//! comparable. The engine decides everything; the worker only measures. A worker that
//! crashes, hangs or babbles fails its benchmark, with the reason and the tail of its output,
//! and the run goes on; the result file is rewritten after every benchmark.

use crate::args::Common;
use crate::runner::link::WorkerLink;
use crate::runner::worker::{Control, WorkerProcess, WorkerTarget};
use crate::term;
use anyhow::{bail, Result};
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use vernier::counters::CounterSelection;
use vernier::counters::{CounterSet, Event as CounterEvent, Unavailable};
use vernier::diagnostic::Code;
use vernier::measure::series::Series;
use vernier::measure::{self, Batch, Measurement, MonotonicClock, WallClock};
use vernier::pipeline;
use vernier::plan::Plan;
use vernier::protocol::BenchRef;
use vernier::report;
use vernier::result::{AnalysisSettings, CountersHarness, Harness, ResultFile};
use vernier::samples::Samples;
use vernier::Rng;

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub process: ProcessArgs,
    /// `cold`: evict the caches before every sample (outside the timed region), one iteration
    /// per sample (docs/experiments.md). `hot` (the default): the caches as the loop leaves
    /// them.
    #[arg(long, value_name = "hot|cold", default_value = "hot")]
    pub cache: crate::runner::cold::CacheMode,
    /// Do not count allocations (by default each benchmark's allocations per iteration are
    /// counted in a process of their own, apart from the timed ones: docs/memory.md).
    #[arg(long)]
    pub no_memory: bool,
    /// The benchmark executable and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]")]
    pub program: Vec<OsString>,
}

/// Process control, shared by `run` and `compare`.
#[derive(Args, Clone, Debug)]
pub struct ProcessArgs {
    /// Worker processes per benchmark, each with its own memory layout (default 3, 6 for a
    /// Python worker, fewer when --time is too short for each to reach a steady state). For
    /// `compare`: OLD/NEW process pairs (at least 4; default as many as fit --time, at most 10).
    #[arg(long, value_name = "N")]
    pub processes: Option<usize>,
    /// Pin workers to these CPUs (e.g. `1` or `2,3` or `0-3`).
    #[arg(long, value_name = "LIST")]
    pub cpu: Option<String>,
    /// Run workers under SCHED_FIFO (needs root or CAP_SYS_NICE).
    #[arg(long)]
    pub fifo: bool,
    /// Run workers without address-space layout randomisation.
    #[arg(long)]
    pub no_aslr: bool,
    /// Fixed environment padding in bytes for every worker (default: random per process).
    #[arg(long, value_name = "BYTES")]
    pub env_pad: Option<u64>,
    /// Longest wait for a worker's reply before it is declared hung, in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = crate::runner::worker::DEFAULT_TIMEOUT_S,
        allow_negative_numbers = true
    )]
    pub timeout: f64,
}

/// Largest random environment padding: a few pages moves the stack across alignments.
pub const MAX_ENV_PAD: u64 = 4096;
/// Each process needs at least this much of the budget to calibrate and settle.
pub const MIN_PROCESS_BUDGET_NS: u64 = 100_000_000;
/// Default number of processes.
pub const DEFAULT_PROCESSES: usize = 3;
/// Default number of processes for a Python worker (one that sends its hash seed): each
/// process has a hash seed and a heap of its own besides its layout, and on a loaded machine
/// each is a snapshot of the machine's state too; its samples settle to a tight figure
/// within tens of milliseconds, so the budget goes further as more, shorter processes (with
/// `sum(x)` over 1000 and 1050 ints under a load of 6-7 on 2 CPUs, five runs of each: their
/// medians spread 0.49 % and 5.24 % with 3 processes, 0.07-0.37 % with 6).
pub const PYTHON_PROCESSES: usize = 6;
/// SCHED_FIFO priority for --fifo: above normal tasks, below the kernel's own threads (50).
pub const FIFO_PRIORITY: i32 = 10;

/// Parse a CPU list: `1`, `0,2`, `0-3`, `0-1,4`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let bad = || anyhow::anyhow!("--cpu '{s}': expected CPU numbers like 1, 0,2 or 0-3");
    if s.chars()
        .any(|c| !(c.is_ascii_digit() || c == ',' || c == '-'))
    {
        return Err(bad());
    }
    let out: Vec<usize> = crate::host::CpuSet::parse_list(s)
        .map_err(|_| bad())?
        .0
        .into_iter()
        .collect();
    // SAFETY: sysconf only reads a system value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
    if let Some(c) = out.iter().find(|&&c| c >= online) {
        bail!(
            "--cpu {c}: no such CPU (this machine has CPUs 0-{})",
            online - 1
        );
    }
    if out.is_empty() {
        bail!("--cpu '{s}': no CPU given");
    }
    Ok(out)
}

impl ProcessArgs {
    pub fn control(&self) -> Result<Control> {
        if !(self.timeout > 0.0 && self.timeout.is_finite()) {
            bail!(
                "--timeout {}: expected a positive number of seconds",
                self.timeout
            );
        }
        Ok(Control {
            cpus: self
                .cpu
                .as_deref()
                .map(parse_cpu_list)
                .transpose()?
                .unwrap_or_default(),
            fifo: self.fifo.then_some(FIFO_PRIORITY),
            no_aslr: self.no_aslr,
            env_pad: self.env_pad.unwrap_or(0),
            timeout: Duration::from_secs_f64(self.timeout),
            run_options: Vec::new(),
            env: Vec::new(),
        })
    }

    /// `--processes`, else `default` or as many as fit the budget.
    pub fn process_count(&self, plan: &Plan, default: usize) -> Result<usize> {
        let fit = (plan.time_budget_ns / MIN_PROCESS_BUDGET_NS).max(1) as usize;
        match self.processes {
            Some(0) => bail!("--processes 0: at least one process is needed"),
            Some(n) => Ok(n),
            None => Ok(default.min(fit)),
        }
    }
}

/// Each process's environment padding: `--env-pad`, else random below [`MAX_ENV_PAD`].
fn paddings(p: &ProcessArgs, processes: usize, rng: &mut Rng) -> Vec<u64> {
    (0..processes)
        .map(|_| p.env_pad.unwrap_or_else(|| rng.next_u64() % MAX_ENV_PAD))
        .collect()
}

/// Splits a program path from its arguments.
pub fn split_program(v: &[OsString]) -> (PathBuf, Vec<OsString>) {
    (PathBuf::from(&v[0]), v[1..].to_vec())
}

/// Run `measure` for one benchmark in one worker per padding of `pads` (`launch` starts one,
/// given its padding: a real process, or a scripted one in tests) and merge their samples.
/// The budget is shared between them; the first calibrates, the others use its iteration
/// count. A worker that cannot be started or fails ends the series with its error; what the
/// earlier ones measured is kept.
#[allow(clippy::too_many_arguments)] // the seam: each argument is a separate input or output
pub fn measure_in_processes(
    launch: &mut dyn FnMut(u64) -> Result<Box<dyn WorkerLink>, String>,
    clock: &dyn WallClock,
    index: usize,
    plan: &Plan,
    pads: &[u64],
    batch_costs: &mut Vec<f64>,
    peaks: &mut Vec<Option<u64>>,
    on_progress: &mut dyn FnMut(&measure::Progress),
) -> Measurement {
    let mut series = Series::new(plan.share(pads.len().max(1)));
    for (p, &pad) in pads.iter().enumerate() {
        if term::interrupted() {
            series.interrupt();
            break;
        }
        let started = clock.now_ns();
        let mut worker = match launch(pad) {
            Ok(w) => w,
            Err(e) => {
                series.fail(e);
                break;
            }
        };
        // The process's start (an interpreter's, for a script) is spent from its share, the
        // budget being the benchmark's wall time; at most half of it, so that a start slowed
        // by a loaded machine leaves the process time to measure.
        let mut plan = series.next_plan();
        let start_ns = clock.now_ns().saturating_sub(started);
        plan.time_budget_ns -= start_ns.min(plan.time_budget_ns / 2);
        let timer = worker.timer();
        let mut target = CostedTarget {
            link: worker.as_mut(),
            index,
            clock,
            batch_costs_ns: Vec::new(),
        };
        let m = measure::measure(&mut target, clock, &plan, &timer, on_progress);
        batch_costs.extend(target.batch_costs_ns.iter().copied());
        if !series.add(m, p as u32, 0) {
            break;
        }
        peaks.resize(p, None);
        peaks.push(worker.quit());
    }
    series.into_measurement()
}

/// One benchmark of a worker, as the engine's target, with the runner's own cost between
/// batches recorded (the batch's wall time less the samples' time: the protocol round trip
/// and bookkeeping, outside every timed region).
struct CostedTarget<'a> {
    link: &'a mut dyn WorkerLink,
    index: usize,
    clock: &'a dyn WallClock,
    batch_costs_ns: Vec<f64>,
}

impl measure::Target for CostedTarget<'_> {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        let t0 = self.clock.now_ns();
        let before = out.ns.len();
        self.link.run(self.index, iters, count, out)?;
        let inside = out.ns[before..]
            .iter()
            .fold(0u64, |a, &b| a.saturating_add(b));
        let total = self.clock.now_ns().saturating_sub(t0);
        self.batch_costs_ns
            .push((total as f64 - inside as f64).max(0.0));
        Ok(())
    }
}

/// `vernier probe`: one worker with the requested controls, its `probe` line on stdout.
pub fn probe_command(a: &RunArgs) -> Result<i32> {
    let mut ctl = a.process.control()?;
    ctl.env_pad = a.process.env_pad.unwrap_or(0);
    let (program, args) = split_program(&a.program);
    let mut w = WorkerProcess::spawn(&program, &args, &ctl).map_err(anyhow::Error::msg)?;
    let line = w.probe().map_err(anyhow::Error::msg)?;
    w.quit();
    println!("{line}");
    Ok(0)
}

/// Samples per batch when measuring the counters' cost and baseline in a worker.
const COUNTER_PROBE_SAMPLES: usize = 256;
/// Batches per setting (the first, which opens the counters, is dropped).
const COUNTER_PROBE_BATCHES: usize = 8;

/// Counters in a worker: each `run` asks for `counters=<list>`; the worker opens them and
/// returns `ctr.` tokens for those it reads. Here, on an empty loop of one iteration:
/// - the baseline: each event's median delta per sample (what the reads add to every sample,
///   subtracted by the analysis);
/// - the cost: wall time per sample of a batch with the counters minus one without;
/// - what was not read: requested events absent from the reply, explained by opening the same
///   events in this process (same machine, same permissions); an event this process can read
///   but the worker does not return is put down to the worker's harness.
///
/// Sets `ctl.run_options` and lengthens `plan`'s samples when the reads cost more than
/// `MAX_COUNTER_OVERHEAD` of a sample. `None` when counters are off.
pub fn worker_counters(
    worker: &mut WorkerProcess,
    selection: &CounterSelection,
    ctl: &mut Control,
    plan: &mut Plan,
) -> Result<Option<CountersHarness>, String> {
    let requested = selection.events();
    if requested.is_empty() {
        return Ok(None);
    }
    let list: Vec<&str> = requested.iter().map(|e| e.name()).collect();
    let option = vec![("counters".to_string(), list.join(","))];
    let timed = |worker: &mut WorkerProcess| -> Result<(f64, Samples), String> {
        let mut times = Vec::new();
        let mut all = Samples::default();
        for k in 0..COUNTER_PROBE_BATCHES {
            let mut b = Batch::default();
            let t0 = Instant::now();
            worker.run(BenchRef::Empty, 1, COUNTER_PROBE_SAMPLES, &mut b)?;
            if k > 0 {
                times.push(t0.elapsed().as_nanos() as f64);
                let s: Vec<vernier::samples::Sample> =
                    b.ns.iter()
                        .map(|&ns| vernier::samples::Sample {
                            iters: 1,
                            ns,
                            t_ns: 0,
                            process: 0,
                            round: 0,
                            phase: vernier::samples::Phase::Calibration,
                        })
                        .collect();
                all.push_batch(&s, &b.counters);
            }
        }
        Ok((vernier::stats::median(&times), all))
    };
    // One batch first: a harness that returns none of the requested events (a Python
    // worker sends its garbage collections only) needs no measure of their cost, and is not
    // kept busy for it.
    worker.set_run_options(option.clone());
    let mut first = Batch::default();
    worker.run(BenchRef::Empty, 1, COUNTER_PROBE_SAMPLES, &mut first)?;
    let answered = |c: &vernier::samples::CounterColumn| list.contains(&c.event.as_str());
    let (without, with, batch) = if !first.counters.iter().any(answered) {
        (0.0, 0.0, Samples::default())
    } else {
        worker.set_run_options(Vec::new());
        let (without, _) = timed(worker)?;
        worker.set_run_options(option.clone());
        let (with, batch) = timed(worker)?;
        (without, with, batch)
    };

    let read: Vec<CounterEvent> = CounterEvent::ALL
        .iter()
        .copied()
        .filter(|e| {
            batch
                .counters
                .iter()
                .any(|c| c.event == e.name() && c.values.iter().any(|v| v.is_some()))
        })
        .collect();
    let own = CounterSet::open(&requested);
    let mut unavailable: Vec<Unavailable> = requested
        .iter()
        .filter(|e| !read.contains(e))
        .map(|&e| {
            own.unavailable()
                .iter()
                .find(|u| u.event == e)
                .cloned()
                .unwrap_or_else(|| Unavailable {
                    event: e,
                    reason: "the worker did not return it (its harness does not read counters, \
                             or could not open this one)"
                        .into(),
                    fix: None,
                })
        })
        .collect();
    unavailable.sort_by_key(|u| u.event);
    let baseline = batch
        .counters
        .iter()
        .filter_map(|c| {
            let v: Vec<f64> = c.values.iter().flatten().map(|&x| x as f64).collect();
            (!v.is_empty()).then(|| (c.event.clone(), vernier::stats::median(&v)))
        })
        .collect();
    let cost = ((with - without) / COUNTER_PROBE_SAMPLES as f64).max(0.0);
    if !read.is_empty() {
        ctl.run_options = option;
        plan.target_sample_ns = vernier::plan::sample_ns_for_counters(plan.target_sample_ns, cost);
    } else {
        worker.set_run_options(Vec::new());
    }
    let groups = read
        .iter()
        .map(|e| e.kind())
        .collect::<std::collections::HashSet<_>>()
        .len();
    Ok(Some(CountersHarness {
        requested: list.iter().map(|s| s.to_string()).collect(),
        events: read.iter().map(|e| e.name().to_string()).collect(),
        note: vernier::counters::unavailable_note(&unavailable),
        unavailable,
        read_cost_ns: if read.is_empty() { f64::NAN } else { cost },
        read_pair_ns: None,
        reads_per_side: groups,
        baseline,
        target_sample_ns: plan.target_sample_ns,
        overhead: cost / plan.target_sample_ns as f64,
    }))
}

/// Budget of the worker's empty-loop measurement. Its median serves only to tell a body from
/// the loop around it (`optimized-away`), which needs it to a few percent: 40 ms of samples
/// give that with room (they were 80 ms, a tenth of a one-second run spent on it).
const EMPTY_LOOP_BUDGET_NS: u64 = 40_000_000;

/// The worker harness's empty-loop cost per iteration, measured once in the first worker.
fn empty_loop_ns(first: &mut WorkerProcess, plan: &Plan) -> Option<f64> {
    let empty_plan = plan.rebudget(EMPTY_LOOP_BUDGET_NS);
    let timer = first.hello.timer;
    let mut t = WorkerTarget {
        worker: first,
        bench: BenchRef::Empty,
    };
    let m = measure::measure(&mut t, &MonotonicClock, &empty_plan, &timer, &mut |_| {});
    vernier::session::calibrate::self_measurement(&m, &empty_plan, &timer)
}

/// The counters' cost and baseline in the worker; a worker that cannot serve counters still
/// gets its benchmarks measured, without them (and a worker that cannot serve anything fails
/// each benchmark with the reason).
fn counters_or_none(
    first: &mut WorkerProcess,
    selection: &CounterSelection,
    ctl: &mut Control,
    plan: &mut Plan,
) -> Option<CountersHarness> {
    match worker_counters(first, selection, ctl, plan) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vernier: counters are off for this run: measuring their cost in the worker failed: {e}");
            ctl.run_options.retain(|(k, _)| k != "counters");
            None
        }
    }
}

/// What `vernier run` prints under its table: the notes and legend, the worker and the
/// runner's cost, the benchmarks whose interval covers earlier runs.
fn print_after_table(
    file: &ResultFile,
    table: &report::Table,
    hello: &vernier::protocol::Hello,
    processes: usize,
) {
    let worker = match &hello.interp {
        Some(i) => format!("{} ({i})", hello.implementation),
        None => hello.implementation.clone(),
    };
    print!("{}", report::after_table(file, table));
    if let Some(c) = file.harness.runner_batch_cost_ns {
        print!(
            "{}",
            table.dim_wrapped(&format!(
                "worker {} · {} process(es) per benchmark · runner's cost between batches {} (outside every timed region)",
                worker, processes, report::format_ns(c)
            ))
        );
    }
    if let Some(line) = report::earlier_note(file) {
        print!("{}", table.dim_wrapped(&line));
    }
}

/// Each process's hash seed in the benchmark's entry (`seeds`, by process index).
fn keep_hash_seeds(r: &mut vernier::result::BenchmarkResult, seeds: &[Option<String>]) {
    for p in &mut r.processes {
        p.hash_seed = seeds.get(p.index as usize).cloned().flatten();
    }
}

/// The variable that fixes a Python process's hash seed.
const PYTHON_HASH_SEED: &str = "PYTHONHASHSEED";

/// A worker process for one of a benchmark's processes, its hash seed (a Python worker's)
/// kept in `seeds`: processes start in index order, so the seed of process `p` is `seeds[p]`.
/// A `python` worker (one that sent a hash seed) varies its hash seed per process: drawn here
/// from `rng` (unless the user fixed one), it needs no restart of its own to draw it.
fn launch_keeping_seed(
    program: &std::path::Path,
    args: &[OsString],
    ctl: &Control,
    pad: u64,
    hello: &vernier::protocol::Hello,
    rng: &mut Rng,
    seeds: &mut Vec<Option<String>>,
) -> Result<Box<dyn WorkerLink>, String> {
    let mut c = ctl.clone();
    c.env_pad = pad;
    if hello.hash_seed.is_some() && std::env::var_os(PYTHON_HASH_SEED).is_none() {
        let seed = 1 + rng.next_u64() % u64::from(u32::MAX);
        c.env
            .push((PYTHON_HASH_SEED.into(), seed.to_string().into()));
    }
    let w = WorkerProcess::spawn(program, args, &c)?;
    seeds.push(w.hello.hash_seed.clone());
    Ok(Box::new(w))
}

/// Processes per benchmark: `--processes`, else the default for the worker (a Python worker
/// sends its hash seed).
fn processes_for(p: &ProcessArgs, plan: &Plan, hello: &vernier::protocol::Hello) -> Result<usize> {
    let python = hello.hash_seed.is_some();
    p.process_count(
        plan,
        if python {
            PYTHON_PROCESSES
        } else {
            DEFAULT_PROCESSES
        },
    )
}

pub fn run_command(a: &RunArgs) -> Result<i32> {
    let (program, args) = split_program(&a.program);
    if a.common.instructions {
        let timeout = a.process.control()?.timeout;
        return crate::runner::counted::run_instructions(&a.common, &program, &args, &[], timeout);
    }
    let mut plan = a.common.plan()?;
    let filter = a.common.filter()?;
    let selection = a.common.counters()?;
    let mut ctl = a.process.control()?;
    a.process.process_count(&plan, DEFAULT_PROCESSES)?; // `--processes 0`: before any start
    term::install_ctrlc();
    // The system's audit (reading /proc and /sys) while the first worker starts.
    let audit = std::thread::spawn(crate::host::audit::audit_and_hint);

    // Handshake once: names, the worker's timer, and the harness's empty-loop cost.
    let mut first = WorkerProcess::spawn(&program, &args, &ctl).map_err(anyhow::Error::msg)?;
    let processes = processes_for(&a.process, &plan, &first.hello)?;
    let names = first.names.clone();
    let selected = crate::args::select(&program, &names, filter.as_ref())?;
    let hello = first.hello.clone();
    let runner_timer = vernier::timer::Timer::detect();
    let own = vernier::session::calibrate::calibrate_cycle(&runner_timer, &plan);
    let empty = empty_loop_ns(&mut first, &plan);
    let counters = counters_or_none(&mut first, &selection, &mut ctl, &mut plan);
    let mut counting =
        crate::runner::memory::CountingPass::unless(a.no_memory, &program, &args, &ctl, &first);
    first.quit();
    crate::runner::cold::apply(a.cache, &mut plan, &mut ctl);

    let mut machine = vernier::machine::Machine::detect();
    let known = vernier::result::known::KnownSpeed::load(&machine);
    machine.worker_impl = Some(hello.implementation.clone());
    machine.worker_interp = hello.interp.clone();
    let mut file = ResultFile::begin(vernier::result::Session {
        machine,
        system: audit.join().unwrap_or_default(),
        timer: hello.timer,
        harness: Harness {
            empty_iter_ns: empty.unwrap_or(f64::NAN),
            sample_cost_ns: hello.timer.overhead_ns,
            cycle_ns: own.cycle_ns,
            cycle_source: own.cycle_source.clone(),
            runner_batch_cost_ns: None,
            counters,
            noise_far_share: own.noise_far_share,
            known_cycle_ns: known.known_cycle_ns(),
            clock_ghz: known.clock_ghz(),
        },
        mode: "time",
        analysis: AnalysisSettings::new(&plan, hello.debug_build, a.common.keep_interrupted),
    });
    let ctx = file.analysis_context();
    let identity = vernier::result::known::program_identity(&program, &args, a.cache.name());
    let render = report::Render::for_stdout(a.common.verbose);
    let table = report::Table::new(
        &selected
            .iter()
            .map(|&i| names[i].as_str())
            .collect::<Vec<_>>(),
        render,
    )
    .with_memory(counting.as_ref().is_some_and(|c| c.can_count()));
    let mut progress = term::ProgressLine::new().of(selected.len());
    let mut rng = Rng::new(std::process::id() as u64 ^ vernier::timer::monotonic_ns());
    let mut batch_costs = Vec::new();
    let mut failed = 0;
    println!("{}", table.head());
    for &i in &selected {
        if term::interrupted() {
            break;
        }
        let pads = paddings(&a.process, processes, &mut rng);
        let name = &names[i];
        let mut peaks = Vec::new();
        let mut seeds = Vec::new();
        let mut launch =
            |pad| launch_keeping_seed(&program, &args, &ctl, pad, &hello, &mut rng, &mut seeds);
        let m = measure_in_processes(
            &mut launch,
            &MonotonicClock,
            i,
            &plan,
            &pads,
            &mut batch_costs,
            &mut peaks,
            &mut |p| progress.update(name, p),
        );
        let cold = a.cache == crate::runner::cold::CacheMode::Cold;
        let finish = pipeline::Context {
            analysis: &ctx,
            cold,
            // What the same program read here in its recent runs: the interval covers it too.
            earlier: identity
                .as_deref()
                .and_then(|id| known.earlier_runs(id, name)),
            env_pad: &|p| pads.get(p as usize).copied().unwrap_or(0),
        };
        // A body that time cannot tell from the empty loop is counted under callgrind; with
        // cold caches one iteration per sample cannot be told from an empty loop by time, and
        // the diagnostic is not reported: nothing to count.
        let mut count = |_: &vernier::analyze::Analysis| {
            if cold || term::interrupted() {
                return None;
            }
            progress.status(&format!(
                "{name}: counting instructions under callgrind (optimized-away by time)"
            ));
            crate::runner::counted::check_instructions(&program, &args, &ctl, i).ok()
        };
        let mut r = pipeline::finish(
            name,
            &m,
            &finish,
            pipeline::Instructions::CountIfRemoved(&mut count),
        );
        vernier::result::threads::relate(&mut r, &file.benchmarks);
        crate::runner::memory::after_timed(counting.as_mut(), i, &peaks, &mut r);
        progress.clear();
        keep_hash_seeds(&mut r, &seeds);
        if r.status == vernier::result::Status::Failed {
            failed += 1;
        }
        println!("{}", table.row(&r));
        let removed = |d: &vernier::diagnostic::Diagnostic| d.code == Code::OptimizedAway;
        if a.common.verbose && r.diagnostics.iter().any(removed) {
            print!(
                "{}",
                crate::runner::disasm::for_benchmark(&program, &args, i)
            );
        }
        file.benchmarks.push(r);
        if !batch_costs.is_empty() {
            file.harness.runner_batch_cost_ns = Some(vernier::stats::median(&batch_costs));
        }
        if let Some(path) = &a.common.json {
            file.write_atomic(path)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    known.record_run(&file, identity.as_deref());
    // After the result is kept: a report that cannot be written loses nothing measured.
    let html_failed = a.common.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_result(p, &file, None);
        !crate::html::write_or_warn(p, written, a.common.json.as_deref())
    });
    print_after_table(&file, &table, &hello, processes);
    crate::runner::cold::note(a.cache, &file);
    crate::history::save_if_asked(&a.common.save, &file, "run", a.common.pick.shard)?;
    if let Some(code) = term::interrupted_exit() {
        return Ok(code);
    }
    Ok(if failed > 0 || html_failed { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::link::mock::{Clock, MockLink, Script};
    use vernier::samples::Phase;

    fn script() -> Script {
        Script {
            names: vec!["a".into(), "b".into()],
            base_ns: vec![2.0, 40.0],
            cpu_speed: vec![1.0],
            process_offset: 0.0,
            noise: 0.001,
        }
    }

    /// `vernier run`'s processes, on scripted workers and a mock clock: each padding gets its
    /// own worker, the first calibrates and the others keep its iteration count, every sample
    /// says which process took it, and a worker that cannot start ends the series with its
    /// error while what was measured before it is kept.
    #[test]
    fn each_padding_gets_a_worker_and_the_first_one_s_iteration_count() {
        let clock = Clock::default();
        let pads = [0u64, 640, 4096];
        let mut launched = Vec::new();
        // The processes differ (their layouts): 1.0, 1.1 and 0.95 times the script.
        let speeds = [1.0, 1.1, 0.95];
        let mut launch = |pad: u64| {
            let k = launched.len();
            launched.push(pad);
            Ok(
                Box::new(MockLink::new(script(), clock.clone(), speeds[k], k as u64))
                    as Box<dyn WorkerLink>,
            )
        };
        let mut costs = Vec::new();
        let mut reports = 0;
        let m = measure_in_processes(
            &mut launch,
            &clock,
            1,
            &Plan::quick(),
            &pads,
            &mut costs,
            &mut Vec::new(),
            &mut |_| reports += 1,
        );
        assert_eq!(launched, pads);
        assert!(m.error.is_none(), "{:?}", m.error);
        assert!(reports > 0 && !costs.is_empty());
        let s = &m.samples.samples;
        for p in 0..3u32 {
            let mine: Vec<_> = s.iter().filter(|x| x.process == p).collect();
            assert!(!mine.is_empty(), "process {p} took no sample");
            // Only the first process searches for the count (calibration samples at several
            // counts); the others start at the count it found.
            let mut counts: Vec<u64> = mine
                .iter()
                .filter(|x| x.phase == Phase::Calibration)
                .map(|x| x.iters)
                .collect();
            counts.dedup();
            if p == 0 {
                assert!(counts.len() > 1, "{counts:?}");
            } else {
                assert!(
                    counts.iter().all(|&c| c == m.iters_per_sample),
                    "{counts:?}"
                );
            }
            assert!(mine
                .iter()
                .any(|x| x.phase == Phase::Measure && x.iters == m.iters_per_sample));
        }
        // The scripted speeds come back in each process's samples: 40 ns × its factor.
        let median_of = |p: u32| {
            let v: Vec<f64> = s
                .iter()
                .filter(|x| x.process == p && x.iters == m.iters_per_sample)
                .map(|x| x.per_iter_ns())
                .collect();
            vernier::stats::median(&v)
        };
        for (p, f) in speeds.iter().enumerate() {
            let r = median_of(p as u32) / 40.0;
            assert!((r - f).abs() < 0.01, "process {p}: {r}");
        }

        // The second worker cannot be started: the first one's samples stay, with the error.
        let mut n = 0;
        let mut launch = |_pad: u64| {
            n += 1;
            if n == 2 {
                Err("cannot start the worker".to_string())
            } else {
                Ok(Box::new(MockLink::new(script(), clock.clone(), 1.0, 7)) as Box<dyn WorkerLink>)
            }
        };
        let m = measure_in_processes(
            &mut launch,
            &clock,
            0,
            &Plan::quick(),
            &pads,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut |_| {},
        );
        assert_eq!(n, 2, "nothing is launched after a failure");
        assert_eq!(m.stop, measure::StopReason::Failed);
        assert_eq!(m.error.as_deref(), Some("cannot start the worker"));
        assert!(!m.samples.samples.is_empty());
        assert!(m.samples.samples.iter().all(|x| x.process == 0));
    }
}
