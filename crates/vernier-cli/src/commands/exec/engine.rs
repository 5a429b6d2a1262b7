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
//!
//! Beside each measured run, right before it, the launcher takes the core-speed probe (as the
//! in-process engine does before a batch): the run's time over the core's cycle time around
//! it gives the command's cycles.

use crate::runner::exec::{Ended, Invocation, Launch};
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

/// Which runs that exit with a non-zero status are runs like any other (hyperfine's `-i`,
/// `--ignore-failure[=CODES]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Accept {
    /// None: a non-zero status ends the measurement (the default).
    #[default]
    Success,
    /// Every exit status (`-i`, `--ignore-failure`, `--ignore-failure=all-non-zero`).
    AllNonZero,
    /// These exit statuses besides 0 (`--ignore-failure=1,2`).
    Codes(Vec<i32>),
}

impl Accept {
    /// `--ignore-failure`'s value as hyperfine reads it: `all-non-zero` (or nothing), or a
    /// comma-separated list of exit statuses.
    pub fn parse(value: Option<&str>) -> Result<Accept, String> {
        match value.map(str::trim) {
            None => Ok(Accept::Success),
            Some("" | "all-non-zero") => Ok(Accept::AllNonZero),
            Some(list) => list
                .split(',')
                .map(|c| {
                    c.trim().parse::<i32>().map_err(|_| {
                        format!(
                            "--ignore-failure={list}: '{}' is not an exit status; give                              all-non-zero or whole numbers separated by commas (e.g.                              --ignore-failure=1,2)",
                            c.trim()
                        )
                    })
                })
                .collect::<Result<Vec<i32>, String>>()
                .map(Accept::Codes),
        }
    }

    /// Whether a run that exited with `code` is kept (a run ended by a signal never is).
    pub fn accepts(&self, code: Option<i32>) -> bool {
        match (self, code) {
            (_, Some(0)) => true,
            (_, None) | (Accept::Success, _) => false,
            (Accept::AllNonZero, Some(_)) => true,
            (Accept::Codes(codes), Some(c)) => codes.contains(&c),
        }
    }

    /// The fix a failing run's message names.
    fn fix(&self) -> &'static str {
        match self {
            Accept::Codes(_) => "not among --ignore-failure's statuses; add it, or give -i to keep every failing run",
            _ => "give -i to keep failing runs too",
        }
    }
}

/// How many runs.
#[derive(Clone, Debug)]
pub struct Counts {
    pub warmup: usize,
    /// `-r`: exactly this many measured runs of each command.
    pub exact: Option<usize>,
    pub min: usize,
    pub max: Option<usize>,
    /// Budget per command, in ns: the rounds go on until `budget_ns` × the commands is spent.
    pub budget_ns: u64,
    /// `-i`: which non-zero exit statuses are runs like any other.
    pub accept: Accept,
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
    /// The core-speed probe taken right before each measured run (`(chain, wide)` ns of
    /// [`PROBE_ADDS`] additions; `None` when the launcher took none).
    pub probe: Vec<Option<(u64, u64)>>,
}

/// Additions of the core-speed probe taken beside each run (the in-process engine's).
pub const PROBE_ADDS: u64 = vernier::plan::PROBE_ADDS;

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
    runner: &mut dyn Launch,
    inv: &Invocation,
    role: &str,
    accept: &Accept,
) -> Result<Ended, String> {
    let e = runner.run(inv)?;
    let why = if e.timed_out {
        Some("did not end within --timeout and was killed".to_string())
    } else if let Some(sig) = e.run.signal {
        Some(format!("was killed by signal {sig} ({})", signal_name(sig)))
    } else if !accept.accepts(e.run.exit_code) {
        Some(format!(
            "exited with status {} ({})",
            e.run.exit_code.unwrap_or(-1),
            accept.fix()
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
    runner: &mut dyn Launch,
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
            if let Err(m) = step(runner, setup, "the --setup command", &Accept::Success) {
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
                if let Err(m) = step(runner, p, "the --prepare command", &Accept::Success) {
                    failure = fail(i, format!("{}: {m}", s.name));
                    break 'rounds;
                }
            }
            let probe = if warm { None } else { runner.probe(PROBE_ADDS) };
            let ended = step(runner, &s.inv, "the command", &counts.accept);
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
                        series[i].probe.push(probe);
                    }
                }
                Err(m) => {
                    let run_no = series[i].runs.len() + 1;
                    failure = fail(i, format!("{} (run {run_no}): {m}", s.name));
                    break 'rounds;
                }
            }
            if let Some(c) = &s.conclude {
                if let Err(m) = step(runner, c, "the --conclude command", &Accept::Success) {
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
            if let Err(m) = step(runner, c, "the --cleanup command", &Accept::Success) {
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
    fn ignore_failure_takes_every_status_or_a_list() {
        let codes = Accept::parse(Some("1, 3")).unwrap();
        assert_eq!(codes, Accept::Codes(vec![1, 3]));
        assert!(codes.accepts(Some(0)) && codes.accepts(Some(3)));
        assert!(!codes.accepts(Some(2)) && !codes.accepts(None));
        for all in [Some(""), Some("all-non-zero")] {
            let a = Accept::parse(all).unwrap();
            assert!(a.accepts(Some(2)) && !a.accepts(None), "{all:?}");
        }
        assert!(!Accept::parse(None).unwrap().accepts(Some(1)));
        let e = Accept::parse(Some("1,x")).unwrap_err();
        assert!(e.contains("'x' is not an exit status"), "{e}");
    }

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
            accept: Accept::Success,
        };
        // The budget is spent but too few runs: go on.
        assert!(!done(&c, 9, 10_000, 2));
        assert!(done(&c, 10, 10_000, 2));
        // Runs enough but budget left (for both commands together).
        assert!(!done(&c, 20, 1_500, 2));
        assert!(done(&c, 50, 0, 2));
        let exact = Counts {
            exact: Some(3),
            ..c.clone()
        };
        assert!(!done(&exact, 2, u64::MAX, 1));
        assert!(done(&exact, 3, 0, 1));
    }
}
