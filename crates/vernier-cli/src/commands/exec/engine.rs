//! The runs of `vernier exec`: every command run as a whole process, again and again, in
//! rounds. A round runs each command once; the order reverses from one round to the next
//! (A B, B A, A B, …: ABBA), so that a machine that slows down or speeds up during the run
//! weighs on every command alike, and the runs of two commands in one round are a pair.
//!
//! | state    | does | leaves when |
//! |----------|------|-------------|
//! | `Setup`  | each command's `--setup`, once | all ran (a failure ends the run) |
//! | `Warmup` | `-w N` rounds whose runs are kept as warm-up, never analysed | N rounds ran |
//! | `Collect`| rounds of measured runs (`--prepare` before and `--conclude` after each run, untimed) | `-r N` rounds ran; or at least `-m` rounds (default [`DEFAULT_MIN_RUNS`]) and the budget (`--time` per command) is spent; or `-M` rounds ran; or a run failed; or Ctrl-C |
//! | `Cleanup`| each command's `--cleanup`, once | always, after the runs |
//!
//! Warm-up is also found from the data: the analysis cuts the first runs of a series that a
//! cold page cache slowed (MSER on the runs, as for any benchmark), so `-w` is a minimum.

use crate::runner::exec::{Ended, Invocation, Runner};
use vernier::measure::{Progress, State};
use vernier::result::exec::Run;

/// Fewest measured runs per command without `-r` or `-m` (hyperfine's own default).
pub const DEFAULT_MIN_RUNS: usize = 10;

/// One command to measure, with what runs around it.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub inv: Invocation,
    pub setup: Option<Invocation>,
    pub prepare: Option<Invocation>,
    pub conclude: Option<Invocation>,
    pub cleanup: Option<Invocation>,
}

/// How many runs.
#[derive(Clone, Copy, Debug)]
pub struct Counts {
    pub warmup: usize,
    /// `-r`: exactly this many measured runs of each command.
    pub exact: Option<usize>,
    pub min: usize,
    pub max: Option<usize>,
    /// Budget per command, in ns: the rounds go on until `budget_ns` × the commands is spent.
    pub budget_ns: u64,
    /// `-i`: a non-zero exit status is a run like any other.
    pub ignore_failure: bool,
}

/// Why collection stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Budget,
    Runs,
    Interrupted,
    Failed,
}

/// A command's runs: warm-up first (flagged), then the measured ones, with when each ended.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub runs: Vec<Run>,
    /// End of each measured run, ns since the first measured round started.
    pub t_ns: Vec<u64>,
    /// Wall time of the command's measured runs together.
    pub wall_ns: u64,
}

impl Series {
    /// The measured runs (warm-up left out).
    pub fn measured(&self) -> impl Iterator<Item = &Run> {
        self.runs.iter().filter(|r| !r.warmup)
    }
}

/// A run that failed: which command, and the message that names it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub command: usize,
    pub message: String,
}

/// Everything collected.
pub struct Collected {
    pub series: Vec<Series>,
    pub stop: Stop,
    pub failure: Option<Failure>,
}

/// Run one step (a setup, a prepare, a measured run) and say what went wrong, if anything.
pub(super) fn step(
    runner: &mut Runner,
    inv: &Invocation,
    role: &str,
    ignore_exit: bool,
) -> Result<Ended, String> {
    let e = runner.run(inv)?;
    let why = if e.timed_out {
        Some("did not end within --timeout and was killed".to_string())
    } else if let Some(sig) = e.run.signal {
        Some(format!("was killed by signal {sig} ({})", signal_name(sig)))
    } else if !e.run.succeeded() && !ignore_exit {
        Some(format!(
            "exited with status {} (give -i to keep failing runs too)",
            e.run.exit_code.unwrap_or(-1)
        ))
    } else {
        None
    };
    match why {
        None => Ok(e),
        Some(why) => {
            let tail = runner.stderr_tail();
            let mut msg = format!("{role} `{}` {why}", inv.line);
            if tail.is_empty() {
                msg.push_str("; it wrote nothing on standard error");
            } else {
                msg.push_str("; the last lines of its standard error:");
                for l in tail {
                    msg.push_str("\n    ");
                    msg.push_str(&l);
                }
            }
            Err(msg)
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGPIPE => "SIGPIPE",
        _ => "a signal",
    }
}

/// The order of round `r`: forward in even rounds, reversed in odd ones.
pub fn round_order(r: usize, n: usize) -> Vec<usize> {
    if r.is_multiple_of(2) {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

/// Whether the rounds are done after `rounds` measured rounds, `elapsed_ns` into collection.
fn done(c: &Counts, rounds: usize, elapsed_ns: u64, commands: usize) -> bool {
    match c.exact {
        Some(n) => rounds >= n,
        None => {
            c.max.is_some_and(|m| rounds >= m)
                || (rounds >= c.min && elapsed_ns >= c.budget_ns.saturating_mul(commands as u64))
        }
    }
}

/// Run the commands as the module says. `interrupted` is asked before every run (Ctrl-C);
/// `progress` is told after each round.
pub fn collect(
    runner: &mut Runner,
    specs: &[Spec],
    counts: &Counts,
    interrupted: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str, &Progress),
) -> Collected {
    let n = specs.len();
    let mut series = vec![Series::default(); n];
    let mut failure = None;
    let fail = |command: usize, message: String| Some(Failure { command, message });
    // Setup.
    for (i, s) in specs.iter().enumerate() {
        if let Some(setup) = &s.setup {
            if let Err(m) = step(runner, setup, "the --setup command", false) {
                failure = fail(i, format!("{}: {m}", s.name));
                break;
            }
        }
    }
    let start = vernier::timer::monotonic_ns();
    let mut stop = Stop::Failed;
    let mut rounds = 0;
    let total = counts.warmup + counts.exact.unwrap_or(0);
    'rounds: for r in 0.. {
        if failure.is_some() {
            break;
        }
        let warm = r < counts.warmup;
        let now = vernier::timer::monotonic_ns().saturating_sub(start);
        if !warm && done(counts, rounds, now, n) {
            stop = if counts.exact.is_some() || counts.max.is_some_and(|m| rounds >= m) {
                Stop::Runs
            } else {
                Stop::Budget
            };
            break;
        }
        for i in round_order(r, n) {
            let s = &specs[i];
            if interrupted() {
                stop = Stop::Interrupted;
                break 'rounds;
            }
            if let Some(p) = &s.prepare {
                if let Err(m) = step(runner, p, "the --prepare command", false) {
                    failure = fail(i, format!("{}: {m}", s.name));
                    break 'rounds;
                }
            }
            let ended = step(runner, &s.inv, "the command", counts.ignore_failure);
            if interrupted() {
                // The run was cut by the same Ctrl-C: not a run of the command.
                stop = Stop::Interrupted;
                break 'rounds;
            }
            match ended {
                Ok(e) => {
                    let mut run = e.run;
                    run.warmup = warm;
                    series[i].runs.push(run);
                    if !warm {
                        let t = vernier::timer::monotonic_ns().saturating_sub(start);
                        series[i].t_ns.push(t);
                        series[i].wall_ns += run.wall_ns;
                    }
                }
                Err(m) => {
                    let run_no = series[i].runs.len() + 1;
                    failure = fail(i, format!("{} (run {run_no}): {m}", s.name));
                    break 'rounds;
                }
            }
            if let Some(c) = &s.conclude {
                if let Err(m) = step(runner, c, "the --conclude command", false) {
                    failure = fail(i, format!("{}: {m}", s.name));
                    break 'rounds;
                }
            }
        }
        if !warm {
            rounds += 1;
        }
        let elapsed_ns = vernier::timer::monotonic_ns().saturating_sub(start);
        let p = Progress {
            state: if warm {
                State::Calibrate
            } else {
                State::Collect
            },
            elapsed_ns,
            budget_ns: counts.budget_ns.saturating_mul(n as u64),
            samples: rounds,
            rel_ci: None,
        };
        let label = match total {
            0 => format!("{n} command(s), round {}", r + 1),
            t => format!("{n} command(s), round {} of {t}", r + 1),
        };
        progress(&label, &p);
    }
    // Cleanup, whatever happened before.
    for (i, s) in specs.iter().enumerate() {
        if let Some(c) = &s.cleanup {
            if let Err(m) = step(runner, c, "the --cleanup command", false) {
                if failure.is_none() {
                    failure = fail(i, format!("{}: {m}", s.name));
                }
            }
        }
    }
    if failure.is_some() && stop != Stop::Interrupted {
        stop = Stop::Failed;
    }
    Collected {
        series,
        stop,
        failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_their_order() {
        let orders: Vec<Vec<usize>> = (0..4).map(|r| round_order(r, 2)).collect();
        assert_eq!(orders, vec![vec![0, 1], vec![1, 0], vec![0, 1], vec![1, 0]]);
        assert_eq!(round_order(1, 3), vec![2, 1, 0]);
    }

    #[test]
    fn the_counts_end_the_rounds() {
        let c = Counts {
            warmup: 0,
            exact: None,
            min: 10,
            max: Some(50),
            budget_ns: 1_000,
            ignore_failure: false,
        };
        // The budget is spent but too few runs: go on.
        assert!(!done(&c, 9, 10_000, 2));
        assert!(done(&c, 10, 10_000, 2));
        // Runs enough but budget left (for both commands together).
        assert!(!done(&c, 20, 1_500, 2));
        assert!(done(&c, 50, 0, 2));
        let exact = Counts {
            exact: Some(3),
            ..c
        };
        assert!(!done(&exact, 2, u64::MAX, 1));
        assert!(done(&exact, 3, 0, 1));
    }
}
