//! `vernier run [OPTIONS] -- PROGRAM [ARGS]`: drive a benchmark executable as a worker.
//!
//! For each selected benchmark, `--processes` worker processes are started one after the
//! other, each with its own randomised environment padding (the environment's size moves the
//! stack); the first calibrates the iteration count and the others reuse it so all samples are
//! comparable. The engine decides everything; the worker only measures. A worker that
//! crashes, hangs or babbles fails its benchmark, with the reason and the tail of its output,
//! and the run goes on; the result file is rewritten after every benchmark.

pub mod gbench;
pub mod instructions;

use crate::args::Common;
use crate::runner::harness::{counters_or_none, empty_futures, empty_loop};
use crate::runner::processes::{
    keep_hash_seeds, launch_keeping_seed, measure_in_processes, paddings, processes_for,
    split_program, ProcessArgs, DEFAULT_PROCESSES,
};
use crate::runner::worker::WorkerProcess;
use crate::term;
use anyhow::Result;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use vernier::diagnostic::Code;
use vernier::measure::MonotonicClock;
use vernier::pipeline;
use vernier::report;
use vernier::result::{AnalysisSettings, Harness, ResultFile};
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
    #[command(flatten)]
    pub gbench: gbench::GbenchArgs,
    /// The benchmark executable and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]")]
    pub program: Vec<OsString>,
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

/// The benchmarks whose time was near the empty loop's and whose instructions could not be
/// counted (no valgrind, a count that failed): whether their work was removed rests on time
/// alone, said once under the table with the reason.
#[derive(Default)]
struct Uncounted {
    names: Vec<String>,
    reason: Option<String>,
}

impl Uncounted {
    /// The count of benchmark `name`, or `None` with the benchmark and why kept for the note.
    fn keep<T>(&mut self, name: &str, counted: Result<T>) -> Option<T> {
        counted
            .map_err(|why| {
                self.names.push(name.to_string());
                self.reason.get_or_insert_with(|| format!("{why:#}"));
            })
            .ok()
    }

    fn line(&self) -> Option<String> {
        let reason = self.reason.as_ref()?;
        Some(format!(
            "{} ran within a few cycles of the empty loop and could not be counted under \
             callgrind, so whether the compiler removed their work rests on time alone: {reason}",
            list_names(&self.names)
        ))
    }
}

/// Whether the same threaded body as benchmark `name` (`NAME/threads:T`) was counted under
/// callgrind and found removed at another thread count among `done`: it is counted then whatever
/// its time, which the release and the threads' waits can lift out of the empty loop's reach.
fn counted_removed_elsewhere(name: &str, done: &[vernier::result::BenchmarkResult]) -> bool {
    use vernier::result::threads::split_name;
    split_name(name).is_some_and(|(base, _)| {
        done.iter().any(|b| {
            b.instructions_check.is_some_and(|c| c.removed())
                && split_name(&b.name).is_some_and(|(o, _)| o == base)
        })
    })
}

/// `a`, `a and b`, `a, b and 3 more`.
fn list_names(names: &[String]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        2..=3 => format!("{} and {}", q[..q.len() - 1].join(", "), q[q.len() - 1]),
        n => format!("{} and {} more", q[..2].join(", "), n - 2),
    }
}

/// The result so far, written after each benchmark (with the runner's cost between batches
/// as measured so far): an interrupted run keeps every benchmark it finished.
fn keep_so_far(
    file: &mut ResultFile,
    batch_costs: &[f64],
    json: Option<&std::path::Path>,
) -> Result<()> {
    if !batch_costs.is_empty() {
        file.harness.runner_batch_cost_ns = Some(vernier::stats::median(batch_costs));
    }
    if let Some(path) = json {
        file.write_atomic(path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// What the runner measured itself (the cycle time and the machine's noise, on its own add
/// chain) and what the machine's ledger knows, as the run's harness; the worker's costs
/// are filled in by the caller.
fn runner_harness(
    own: Harness,
    ledger: &vernier::ledger::Ledger,
    identity: Option<&str>,
) -> Harness {
    Harness {
        runner_batch_cost_ns: None,
        known_cycle_ns: ledger.known_cycle_ns(),
        clock_ghz: ledger.clock_ghz(),
        known_wide_ratio: ledger.known_wide_ratio(),
        earlier_runs_read: identity.is_some() && ledger.in_use(),
        ..own
    }
}

pub fn run_command(a: &RunArgs) -> Result<i32> {
    let (program, args) = split_program(&a.program);
    if a.common.instructions {
        let timeout = a.process.control()?.timeout;
        return instructions::run_instructions(&a.common, &program, &args, &[], timeout, "run");
    }
    let mut run = Run::prepare(a, program, args)?;
    println!("{}", run.table.head());
    for k in 0..run.selected.len() {
        if term::interrupted() {
            break;
        }
        run.measure_one(k)?;
    }
    run.conclude()
}

/// The run's table of the benchmarks `names`: with a memory column when their allocations
/// are counted, a rate column when one declared its work per iteration, and the columns
/// explained when asked or on a machine that has not run before.
fn run_table(
    a: &RunArgs,
    names: &[&str],
    memory: bool,
    rate: bool,
    seen_before: bool,
) -> report::Table {
    let render = report::Render::for_stdout(a.common.verbose);
    report::Table::new(names, render)
        .with_memory(memory)
        .with_rate(rate)
        .with_explain(a.common.explain || a.common.verbose || !seen_before)
}

/// A run under way: what the first worker told, the result so far and the table it prints.
struct Run<'a> {
    a: &'a RunArgs,
    program: PathBuf,
    args: Vec<OsString>,
    plan: vernier::plan::Plan,
    ctl: crate::runner::worker::Control,
    filter: Option<crate::args::Selection>,
    processes: usize,
    names: Vec<String>,
    throughput: Vec<Option<vernier::units::Throughput>>,
    complexity: Vec<Option<vernier::result::complexity::Declared>>,
    selected: Vec<usize>,
    hello: vernier::protocol::Hello,
    executors: Vec<Option<vernier::result::ExecutorJson>>,
    counting: Option<crate::runner::memory::CountingPass>,
    ledger: vernier::ledger::Ledger,
    identity: Option<String>,
    file: ResultFile,
    ctx: vernier::analyze::Context,
    table: report::Table,
    progress: term::ProgressLine,
    rng: Rng,
    batch_costs: Vec<f64>,
    failed: usize,
    uncounted: Uncounted,
}

impl<'a> Run<'a> {
    /// The handshake with a first worker (names, the worker's timer, the harness's empty-loop
    /// cost), the runner's own calibration and the system's audit, the result file begun and
    /// the table laid out.
    fn prepare(a: &'a RunArgs, program: PathBuf, args: Vec<OsString>) -> Result<Run<'a>> {
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
        let throughput = first.throughput.clone();
        let complexity = first.complexity.clone();
        let selected = crate::args::select(&program, &names, filter.as_ref())?;
        let hello = first.hello.clone();
        let runner_timer = vernier::timer::Timer::detect();
        let own = vernier::session::calibrate::calibrate_cycle(&runner_timer, &plan);
        let empty = empty_loop(&mut first, &plan);
        let executors = empty_futures(&mut first, &plan, &selected);
        let counters = counters_or_none(&mut first, &selection, &mut ctl, &mut plan);
        let counting =
            crate::runner::memory::CountingPass::unless(a.no_memory, &program, &args, &ctl, &first);
        crate::runner::worker::tell(&program.display().to_string(), &first.quit_and_tell());
        crate::runner::cold::apply(a.cache, &mut plan, &mut ctl);

        let mut machine = vernier::machine::Machine::detect();
        let ledger = vernier::ledger::Ledger::load(&machine);
        machine.worker_impl = Some(hello.implementation.clone());
        machine.worker_interp = hello.interp.clone();
        let identity = vernier::ledger::program_identity(&program, &args, a.cache.name());
        let file = ResultFile::begin(vernier::result::Session {
            machine,
            system: audit.join().unwrap_or_default(),
            timer: hello.timer,
            harness: Harness {
                empty_iter_ns: empty.map_or(f64::NAN, |e| e.0),
                empty_iter_cycles: empty.and_then(|e| e.1),
                sample_cost_ns: hello.timer.overhead_ns,
                counters,
                ..runner_harness(own, &ledger, identity.as_deref())
            },
            mode: "time",
            analysis: AnalysisSettings::new(&plan, hello.debug_build, a.common.keep_interrupted),
        });
        let ctx = file.analysis_context();
        let table = run_table(
            a,
            &selected
                .iter()
                .map(|&i| names[i].as_str())
                .collect::<Vec<_>>(),
            counting.as_ref().is_some_and(|c| c.can_count()),
            selected
                .iter()
                .any(|&i| throughput.get(i).is_some_and(Option::is_some)),
            ledger.seen_before(),
        );
        let progress = term::ProgressLine::new().of(selected.len());
        Ok(Run {
            a,
            program,
            args,
            plan,
            ctl,
            filter,
            processes,
            names,
            throughput,
            complexity,
            selected,
            hello,
            executors,
            counting,
            ledger,
            identity,
            file,
            ctx,
            table,
            progress,
            rng: Rng::new(std::process::id() as u64 ^ vernier::timer::monotonic_ns()),
            batch_costs: Vec::new(),
            failed: 0,
            uncounted: Uncounted::default(),
        })
    }

    /// The `k`th selected benchmark: measured in its processes, analysed, its row printed and
    /// the result file rewritten with it.
    fn measure_one(&mut self, k: usize) -> Result<()> {
        let a = self.a;
        let i = self.selected[k];
        let (program, args, ctl) = (&self.program, &self.args, &self.ctl);
        let pads = paddings(&a.process, self.processes, &mut self.rng);
        let name = &self.names[i];
        let mut peaks = Vec::new();
        let mut seeds = Vec::new();
        let (hello, rng, progress) = (&self.hello, &mut self.rng, &mut self.progress);
        let mut launch =
            |pad| launch_keeping_seed(program, args, ctl, pad, hello, &mut *rng, &mut seeds);
        let m = measure_in_processes(
            &mut launch,
            &MonotonicClock,
            i,
            &self.plan,
            &pads,
            &mut self.batch_costs,
            &mut peaks,
            &mut |p| progress.update(name, p),
        );
        let cold = a.cache == crate::runner::cold::CacheMode::Cold;
        let finish = pipeline::Context {
            analysis: &self.ctx,
            cold,
            // What the same program read here in its recent runs: the interval covers it too.
            earlier: self
                .identity
                .as_deref()
                .and_then(|id| self.ledger.earlier_runs(id, name)),
            env_pad: &|p| pads.get(p as usize).copied().unwrap_or(0),
            throughput: self.throughput.get(i).copied().flatten(),
            complexity: self.complexity.get(i).cloned().flatten(),
            others: &self.file.benchmarks,
            executor: self.executors[k].clone(),
        };
        let uncounted = &mut self.uncounted;
        let on_executor = self.executors[k].is_some();
        // A body within a few cycles of the empty loop is counted under callgrind: time alone
        // cannot tell a removed body from a little work there. With cold caches one iteration
        // per sample cannot be told from an empty loop by time, and the diagnostic is not
        // reported: nothing to count.
        let mut count = |an: &vernier::analyze::Analysis| {
            if cold || term::interrupted() {
                return None;
            }
            progress.status(&format!(
                "{name}: counting instructions under callgrind (its time is near the empty loop's)"
            ));
            let threads = an.threads.as_ref().map_or(1, |t| t.threads);
            let counted = crate::runner::counted::check_instructions(
                program,
                args,
                ctl,
                (i, threads, on_executor),
            );
            uncounted.keep(name, counted)
        };
        let instructions = if counted_removed_elsewhere(name, &self.file.benchmarks) {
            pipeline::Instructions::Count(&mut count)
        } else {
            pipeline::Instructions::CountIfRemoved(&mut count)
        };
        let mut r = pipeline::finish(name, &m, &finish, instructions);
        crate::runner::memory::after_timed(self.counting.as_mut(), i, &peaks, &mut r);
        self.progress.clear();
        keep_hash_seeds(&mut r, &seeds);
        self.keep(i, r)
    }

    /// The result `r` of benchmark `i`: counted if it failed, its row printed (with the disassembly
    /// under `--verbose` when its work was removed) and the result file rewritten with it.
    fn keep(&mut self, i: usize, r: vernier::result::BenchmarkResult) -> Result<()> {
        if r.status == vernier::result::Status::Failed {
            self.failed += 1;
        }
        self.file.benchmarks.push(r);
        // The run so far: the machine's codes said once for it when it disturbed most of them.
        vernier::result::machine_noise::explain_run(&mut self.file.benchmarks);
        let r = self.file.benchmarks.last().expect("just pushed");
        println!("{}", self.table.row(r));
        let removed = |d: &vernier::diagnostic::Diagnostic| d.code == Code::OptimizedAway;
        if self.a.common.verbose && r.diagnostics.iter().any(removed) {
            print!(
                "{}",
                crate::runner::disasm::for_benchmark(&self.program, &self.args, i)
            );
        }
        keep_so_far(
            &mut self.file,
            &self.batch_costs,
            self.a.common.json.as_deref(),
        )
    }

    /// After the last benchmark: the run recorded in the ledger, the HTML report, the
    /// notes under the table, the save and the profile; the exit code.
    fn conclude(self) -> Result<i32> {
        let (a, file, table) = (self.a, &self.file, &self.table);
        self.ledger.record_run(file, self.identity.as_deref());
        // After the result is kept: a report that cannot be written loses nothing measured.
        let html_failed = a.common.html.as_ref().is_some_and(|p| {
            let written = crate::html::write_result(p, file, None);
            !crate::html::write_or_warn(p, written, a.common.json.as_deref())
        });
        print_after_table(file, table, &self.hello, self.processes);
        if let Some(line) = self.uncounted.line() {
            print!("{}", table.dim_wrapped(&line));
        }
        let program = (self.program.as_path(), self.args.as_slice());
        save_and_profile(a, file, program, self.ctl.timeout, self.filter.as_ref())?;
        if let Some(code) = term::interrupted_exit() {
            return Ok(code);
        }
        Ok(if self.failed > 0 || html_failed { 1 } else { 0 })
    }
}

/// After the run's table: the cache's note, the save (`--save`) and the profile (`--profile`).
fn save_and_profile(
    a: &RunArgs,
    file: &ResultFile,
    (program, args): (&std::path::Path, &[std::ffi::OsString]),
    timeout: std::time::Duration,
    filter: Option<&crate::args::Selection>,
) -> Result<()> {
    crate::runner::cold::note(a.cache, file);
    crate::history::save_if_asked(&a.common.save, file, "run", a.common.pick.shard)?;
    if a.common.profile {
        let html = a.common.html.as_deref().map(|p| (p, file, None));
        crate::runner::profile::after_run((program, args, &[]), timeout, filter, html)?;
    }
    Ok(())
}
