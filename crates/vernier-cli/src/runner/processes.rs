//! A benchmark measured across worker processes, as `vernier run` does it: the process
//! controls (`--processes`, `--cpu`, `--fifo`, `--no-aslr`, `--env-pad`, `--timeout`, shared
//! with `compare`), each process's environment padding (its memory layout: docs/experiments.md)
//! and hash seed, and [`measure_in_processes`]: one worker per padding, the first calibrating and
//! the others reusing its iteration count, their samples merged into one measurement.

use crate::runner::link::WorkerLink;
use crate::runner::worker::{Control, WorkerProcess};
use crate::term;
use anyhow::{bail, Result};
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;
use vernier::measure::series::Series;
use vernier::measure::{self, Batch, Measurement, WallClock};
use vernier::plan::Plan;
use vernier::Rng;

/// Process control, shared by `run` and `compare`.
#[derive(Args, Clone, Debug)]
pub struct ProcessArgs {
    /// Worker processes per benchmark, each with its own memory layout (default 3, 6 for a
    /// Python worker, fewer when --time is too short for each to reach a steady state). For
    /// `compare`: OLD/NEW process pairs (at least 4; default as many as fit --time, at most 10,
    /// up to 40 for a benchmark whose pairs fall into layout states while its --time lasts).
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
/// within tens of milliseconds, so the budget goes further as more, shorter processes
/// (`docs/python.md` has the figures).
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
pub fn paddings(p: &ProcessArgs, processes: usize, rng: &mut Rng) -> Vec<u64> {
    (0..processes)
        .map(|_| p.env_pad.unwrap_or_else(|| rng.next_u64() % MAX_ENV_PAD))
        .collect()
}

/// A bare program name (`objdump`) found in the directories of `PATH`, as a shell would.
pub fn find_on_path(name: &std::path::Path) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|c| c.is_file())
    })
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

/// Each process's hash seed in the benchmark's entry (`seeds`, by process index).
pub fn keep_hash_seeds(r: &mut vernier::result::BenchmarkResult, seeds: &[Option<String>]) {
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
pub fn launch_keeping_seed(
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
pub fn processes_for(
    p: &ProcessArgs,
    plan: &Plan,
    hello: &vernier::protocol::Hello,
) -> Result<usize> {
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
            ..Script::default()
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
