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

use crate::ledger::{self, Ledger};
use crate::machine::Machine;
use crate::measure::in_process::Metered;
use crate::measure::series::Series;
use crate::measure::{self, MonotonicClock, Progress};
use crate::pipeline;
use crate::protocol;
use crate::report;
use crate::result::{AnalysisSettings, BenchmarkResult, ResultFile};
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
        if let Some(line) = report::earlier_note(&file) {
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
        harness.earlier_runs_read = self.options.earlier_runs_read;
        let mut file = ResultFile::begin(crate::result::Session {
            mode: "time",
            machine: Machine::detect(),
            system: self.options.system.clone(),
            timer: timer.info(),
            harness: harness.clone(),
            analysis: AnalysisSettings::new(
                &plan,
                cfg!(debug_assertions),
                self.options.keep_interrupted,
            ),
        });
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
        let mut acc: Vec<Series> = selected.iter().map(|_| Series::new(plan.clone())).collect();
        let interrupted = || measure::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
        let mut done = vec![false; selected.len()];
        // Each async benchmark's executor, its empty future measured before any benchmark, as
        // the empty loop is.
        let mut empty_futures = asynchronous::EmptyFutures::default();
        let executors: Vec<_> = selected
            .iter()
            .map(|&i| empty_futures.of(self.entries[i].routine.as_mut(), &timer, &plan))
            .collect();
        for round in 0..rounds {
            for (k, &i) in selected.iter().enumerate() {
                if done[k] || interrupted() {
                    continue;
                }
                let name = self.entries[i].name.clone();
                on_event(Event::Start { name: &name });
                let mut plan_r = acc[k].next_plan();
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
                let go_on = acc[k].add(m, 0, round as u32);
                done[k] = !go_on || round + 1 == rounds;
            }
        }
        // Report in suite order; after Ctrl-C, whatever was measured is reported too, and a
        // benchmark whose rounds were not all run is marked as cut short.
        for (k, &i) in selected.iter().enumerate() {
            let m = acc[k].measurement();
            if m.samples.is_empty() && m.error.is_none() {
                continue;
            }
            if !done[k] && interrupted() {
                acc[k].interrupt();
            }
            let name = &self.entries[i].name;
            let finish = pipeline::Context {
                analysis: &ctx,
                cold: self.entries[i].routine.fixed_iters() == Some(1),
                earlier: self.options.earlier.get(name).copied(),
                env_pad: &|_| 0,
                throughput: self.entries[i].throughput,
                complexity: self.entries[i].complexity.clone(),
                others: &file.benchmarks,
                executor: executors[k].clone(),
            };
            let mut r = pipeline::finish(
                name,
                acc[k].measurement(),
                &finish,
                pipeline::Instructions::None,
            );
            if r.status != crate::result::Status::Failed {
                let routine = self.entries[i].routine.as_mut();
                r.memory = memory::in_process(routine, &timer, r.per_iter.median_ns, r.total_s);
                memory::check_alloc_free(self.entries[i].alloc_free, &mut r);
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
            let result = file.benchmarks.last().unwrap();
            on_event(Event::Done {
                name: &result.name,
                result,
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
