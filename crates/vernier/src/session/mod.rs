//! The last stage, in this process: a suite measured standalone (`cargo bench`, `./bench`),
//! its registered comparisons ([`compare`]), the harness's measurement of its own costs
//! ([`calibrate`]) and whole-program checkpoints ([`checkpoint`]). It drives every earlier
//! stage: the plan, the engine, the analysis, the result file (written after each benchmark)
//! and the printed report.

pub mod asynchronous;
pub mod calibrate;
pub mod checkpoint;
pub mod compare;
mod declare;
pub mod memory;
pub mod options;
pub mod suite;

use crate::counters::CounterSet;
use crate::ledger::{self, Ledger};
use crate::machine::Machine;
use crate::measure::in_process::Metered;
use crate::measure::series::Series;
use crate::measure::{self, MonotonicClock, Progress};
use crate::pipeline;
use crate::plan::Plan;
use crate::protocol;
use crate::report;
use crate::result::{AnalysisSettings, BenchmarkResult, ExecutorJson, Harness, ResultFile};
use crate::timer::Timer;
use calibrate::{calibrate_harness, counter_harness};
use options::{SuiteError, DEFAULT_ROUNDS};
use std::path::Path;
use suite::Suite;

/// An event of an in-process run, for progress displays: of a benchmark (`R` is its
/// [`BenchmarkResult`]) or of a registered comparison (`R` is the
/// [`ComparisonFile`](crate::result::comparison::ComparisonFile) so far).
pub enum Event<'a, R> {
    Start {
        name: &'a str,
    },
    Progress {
        name: &'a str,
        progress: &'a Progress,
    },
    Done {
        name: &'a str,
        result: &'a R,
    },
}

impl Suite {
    /// Run as [`Suite::try_finish`] does, for the last line of a program's `main`: on an
    /// error it prints it and ends the process with status 1.
    pub fn finish(self) {
        if let Err(e) = self.try_finish() {
            e.exit()
        }
    }

    /// Run: as a worker if a runner launched this process, otherwise measure and print; or
    /// what went wrong (an unwritable `--json`, a broken link to the runner).
    pub fn try_finish(mut self) -> Result<(), SuiteError> {
        if let Ok(fds) = std::env::var(protocol::FDS_ENV) {
            return protocol::serve::serve_fds(&mut self.entries, &fds).map_err(SuiteError::Worker);
        }
        if self.options.list {
            // A shard's benchmarks (`--list --shard K/N`), or all of them.
            let shard = self.options.shard;
            for n in self.names() {
                if shard.is_none_or(|s| s.contains(&n)) {
                    println!("{n}");
                }
            }
            return Ok(());
        }
        if let Some(path) = &self.options.json {
            crate::result::check_destination(path).map_err(SuiteError::Destination)?;
        }
        // Ctrl-C stops the measuring and keeps what was measured (a second one ends the
        // process).
        measure::ctrlc::install_ctrlc();
        let render = report::Render::for_stdout(false);
        // Output errors (a closed pipe) stop the printing, never the measuring.
        use std::io::Write as _;
        let mut out = std::io::stdout();
        let mut printed_head = false;
        let names = self.names();
        // Allocations are counted with `CountingAlloc` installed: their columns then show.
        let table = report::Table::new(&names, render)
            .with_memory(crate::memory::Source::detect().is_ok())
            .with_rate(self.entries.iter().any(|e| e.throughput.is_some()));
        // What this machine and this program's earlier runs say, as under `vernier run`: the
        // known speed (`core-slowed` for a run wholly slowed), the clock's range and the
        // recent medians, which the intervals cover; this run is added to them after.
        let ledger = Ledger::load(&Machine::detect());
        let identity = std::env::current_exe()
            .ok()
            .and_then(|exe| ledger::program_identity(&exe, &[], "hot"));
        self.options.fill_from_ledger(&ledger, identity.as_deref());
        let file = self.run_in_process(&mut |ev| {
            if let Event::Done { result, .. } = ev {
                if !printed_head {
                    let _ = writeln!(out, "{}", table.head());
                    printed_head = true;
                }
                let _ = writeln!(out, "{}", table.row(result));
            }
        });
        let mut failures: Vec<String> = file
            .benchmarks
            .iter()
            .filter(|b| b.status == crate::result::Status::Failed)
            .map(|b| b.name.clone())
            .collect();
        if !self.pairs.is_empty() {
            let cf = compare::run_suite_pairs(
                &mut self,
                crate::stats::compare::DEFAULT_THRESHOLD,
                &mut |_| {},
            );
            if !cf.comparisons.is_empty() || !cf.failed.is_empty() {
                let _ = write!(out, "\n{}", report::compare::table_fitted(&cf, render));
            }
            failures.extend(cf.failed.iter().map(|f| f.name.clone()));
        }
        // Said at the end, after everything measured is printed and saved.
        let json = self.options.json.clone();
        let failed = || {
            if measure::ctrlc::interrupted() {
                let kept = json
                    .as_ref()
                    .map(|p| format!(" (in {})", p.display()))
                    .unwrap_or_default();
                Err(SuiteError::Interrupted(kept))
            } else if failures.is_empty() {
                Ok(())
            } else {
                Err(SuiteError::Failed(failures.clone()))
            }
        };
        if file.benchmarks.is_empty() {
            if self.pairs.is_empty() && !measure::ctrlc::interrupted() {
                let _ = writeln!(out, "no benchmark matches the filter");
            }
            return failed();
        }
        ledger.record_run(&file, identity.as_deref());
        let _ = write!(out, "{}", report::after_table(&file, &table));
        for line in [report::earlier_note(&file), report::time_alone_note(&file)]
            .into_iter()
            .flatten()
        {
            let _ = write!(out, "{}", table.dim_wrapped(&line));
        }
        let _ = writeln!(
            out,
            "For layout randomisation across processes and the full analysis: vernier run -- {}",
            std::env::args().next().unwrap_or_default()
        );
        failed()
    }

    /// Measure every selected benchmark in this process; `on_event` sees each step. Returns
    /// the result file's content (also written to `--json` after each benchmark).
    #[doc(hidden)]
    pub fn run_in_process(
        &mut self,
        on_event: &mut dyn FnMut(Event<BenchmarkResult>),
    ) -> ResultFile {
        let timer = Timer::detect();
        let mut plan = self.options.plan.clone();
        let mut counters = self.options.counters.open();
        let harness = self.harness(&timer, &mut plan, &mut counters);
        let file = ResultFile::begin(crate::result::Session {
            mode: "time",
            machine: Machine::detect(),
            system: self.options.system.clone(),
            timer: timer.info(),
            harness,
            analysis: AnalysisSettings::new(
                &plan,
                cfg!(debug_assertions),
                self.options.keep_interrupted,
            ),
        });
        let rounds = match self.options.rounds {
            0 => DEFAULT_ROUNDS,
            r => r,
        };
        let plan = plan.share(rounds);
        let selected: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.options.selects(&self.entries[i].name))
            .collect();
        let earlier = self.earlier_kept(&selected, &file.mode);
        // Each async benchmark's executor, its empty future measured before any benchmark, as
        // the empty loop is.
        let mut empty_futures = asynchronous::EmptyFutures::default();
        let executors: Vec<_> = selected
            .iter()
            .map(|&i| empty_futures.of(self.entries[i].routine.as_mut(), &timer, &plan))
            .collect();
        let mut run = InProcess {
            timer: &timer,
            counters,
            rounds,
            series: selected.iter().map(|_| Series::new(plan.clone())).collect(),
            done: vec![false; selected.len()],
            selected,
            executors,
            results: Results {
                file,
                earlier,
                json_failed: false,
            },
        };
        self.measure_rounds(&mut run, on_event);
        self.finish_results(&mut run, on_event);
        run.results.file
    }

    /// The harness's costs, measured once before any benchmark: the counters' (when any were
    /// asked for; `counters` becomes `None` when none could be opened), the timer's and the
    /// empty loop's, with what the options know of this machine's speed.
    fn harness(
        &self,
        timer: &Timer,
        plan: &mut Plan,
        counters: &mut Option<CounterSet>,
    ) -> Harness {
        let requested = self.options.counters.events();
        let counters_info = (!requested.is_empty())
            .then(|| counter_harness(&requested, counters.as_mut(), timer, plan));
        if counters.as_ref().is_some_and(|c| c.is_empty()) {
            *counters = None;
        }
        let mut harness = calibrate_harness(timer, plan);
        harness.counters = counters_info;
        harness.known_cycle_ns = self.options.known_cycle_ns;
        harness.clock_ghz = self.options.clock_ghz;
        harness.known_wide_ratio = self.options.known_wide_ratio;
        harness.earlier_runs_read = self.options.earlier_runs_read;
        harness
    }

    /// The benchmarks an earlier bench target wrote to `--json` ([`earlier_targets`]) that
    /// this run does not measure again: kept beside this run's in the file, and said once.
    fn earlier_kept(&self, selected: &[usize], mode: &str) -> Vec<BenchmarkResult> {
        let Some(path) = &self.options.json else {
            return Vec::new();
        };
        let mut earlier = earlier_targets(path, mode);
        earlier.retain(|b| !selected.iter().any(|&i| self.entries[i].name == b.name));
        if !earlier.is_empty() {
            eprintln!(
                "vernier: {} holds {} benchmark(s) from an earlier bench target of this `cargo \
                 bench`; they are kept beside this target's",
                path.display(),
                earlier.len()
            );
        }
        earlier
    }

    /// Every round of the selected benchmarks, each round visiting each benchmark not yet
    /// done, until the last round or Ctrl-C.
    fn measure_rounds(
        &mut self,
        run: &mut InProcess,
        on_event: &mut dyn FnMut(Event<BenchmarkResult>),
    ) {
        for round in 0..run.rounds {
            for (k, &i) in run.selected.iter().enumerate() {
                if run.done[k] || interrupted() {
                    continue;
                }
                let entry = &mut self.entries[i];
                let name = entry.name.clone();
                on_event(Event::Start { name: &name });
                let mut plan_r = run.series[k].next_plan();
                if let Some(n) = entry.routine.fixed_iters() {
                    plan_r.fixed_iters = Some(n);
                }
                let mut target = Metered {
                    routine: entry.routine.as_mut(),
                    timer: run.timer,
                    counters: run.counters.as_mut(),
                };
                let m = measure::measure(
                    &mut target,
                    &MonotonicClock,
                    &plan_r,
                    &run.timer.info(),
                    &mut |p| {
                        on_event(Event::Progress {
                            name: &name,
                            progress: p,
                        })
                    },
                );
                let go_on = run.series[k].add(m, 0, round as u32);
                run.done[k] = !go_on || round + 1 == run.rounds;
            }
        }
    }

    /// Each measured benchmark's result, in suite order, added to the file, saved and handed
    /// to `on_event`. After Ctrl-C, whatever was measured is reported too, and a benchmark
    /// whose rounds were not all run is marked as cut short.
    fn finish_results(
        &mut self,
        run: &mut InProcess,
        on_event: &mut dyn FnMut(Event<BenchmarkResult>),
    ) {
        let ctx = run.results.file.analysis_context();
        for (k, &i) in run.selected.iter().enumerate() {
            let m = run.series[k].measurement();
            if m.samples.is_empty() && m.error.is_none() {
                continue;
            }
            if !run.done[k] && interrupted() {
                run.series[k].interrupt();
            }
            let entry = &mut self.entries[i];
            let name = &entry.name;
            let finish = pipeline::Context {
                analysis: &ctx,
                cold: entry.routine.fixed_iters() == Some(1),
                earlier: self.options.earlier.get(name).copied(),
                env_pad: &|_| 0,
                throughput: entry.throughput,
                complexity: entry.complexity.clone(),
                others: &run.results.file.benchmarks,
                executor: run.executors[k].clone(),
            };
            let mut r = pipeline::finish(
                name,
                run.series[k].measurement(),
                &finish,
                pipeline::Instructions::None,
            );
            if r.status != crate::result::Status::Failed {
                let routine = entry.routine.as_mut();
                r.memory = memory::in_process(routine, run.timer, r.per_iter.median_ns, r.total_s);
                memory::check_alloc_free(entry.alloc_free, &mut r);
            }
            let result = run.results.push(r, self.options.json.as_deref());
            on_event(Event::Done {
                name: &result.name,
                result,
            });
        }
    }
}

/// An in-process run under way: what the harness opened, each selected benchmark's rounds so
/// far, and the result file they go to.
struct InProcess<'t> {
    timer: &'t Timer,
    counters: Option<CounterSet>,
    rounds: usize,
    /// The benchmarks measured, as indices into the suite's entries; the other fields' vectors
    /// follow this order.
    selected: Vec<usize>,
    series: Vec<Series>,
    /// Whether a benchmark's rounds are over (all run, or its series asked for no more).
    done: Vec<bool>,
    /// Each benchmark's async executor, as its result names it.
    executors: Vec<Option<ExecutorJson>>,
    results: Results,
}

/// The result file of an in-process run, written to `--json` after each benchmark.
struct Results {
    file: ResultFile,
    /// Benchmarks an earlier bench target wrote to `--json`, kept beside this run's.
    earlier: Vec<BenchmarkResult>,
    /// Whether writing `--json` failed (said once; not tried again).
    json_failed: bool,
}

impl Results {
    /// Add a benchmark's result and write the file so far, with the earlier targets'
    /// benchmarks first, to `json`; a failure is said once: the measurements go on, and are
    /// printed.
    fn push(&mut self, r: BenchmarkResult, json: Option<&Path>) -> &BenchmarkResult {
        self.file.benchmarks.push(r);
        // The run so far, as its rows are printed: the machine's codes said once for it when
        // it disturbed most of them.
        crate::result::machine_noise::explain_run(&mut self.file.benchmarks);
        if let (Some(path), false) = (json, self.json_failed) {
            let mut all = self.file.clone();
            all.benchmarks.splice(0..0, self.earlier.iter().cloned());
            if let Err(e) = all.write_atomic(path) {
                eprintln!(
                    "vernier: cannot write {}: {e}; the results are printed only",
                    path.display()
                );
                self.json_failed = true;
            }
        }
        self.file.benchmarks.last().unwrap()
    }
}

/// Whether Ctrl-C stopped the measuring.
fn interrupted() -> bool {
    measure::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Benchmarks an earlier bench target of the same `cargo bench` wrote to `path`: `cargo bench
/// --bench a --bench b -- --json f.json` runs each target in turn with the same arguments, so
/// each would replace the file. A file whose writer had the same parent process as this one,
/// when that parent is `cargo`, and was measured in the same `mode`, is merged into instead.
/// Anything else (another invocation, an unreadable file) is replaced, as usual.
fn earlier_targets(path: &Path, mode: &str) -> Vec<BenchmarkResult> {
    let Some(parent) = crate::os::host::cargo_parent() else {
        return Vec::new();
    };
    if !path.exists() {
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
