//! What `vernier exec` keeps of each run of a whole command beside its wall time: the process's
//! resource use as `wait4` reports it (CPU time, peak resident memory, page faults, context
//! switches) and how it ended. Wall times are the samples themselves; these are stored apart
//! so that any figure of them can be computed again.

use serde::{Deserialize, Serialize};

/// One run of a command: its wall time from the runner's clock around start and end, and its
/// resource use from `wait4` (children it waited for included, as the kernel counts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub wall_ns: u64,
    pub user_ns: u64,
    pub system_ns: u64,
    /// Peak resident set size of the process (the largest of its waited-for children's too).
    pub max_rss_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// The exit status (`null` when a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended it (`null` when it exited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// A warm-up run asked for with `-w` (run before the measured ones, not analysed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

impl Run {
    /// Whether the command succeeded (exit status 0).
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// CPU time, user and system together.
    pub fn cpu_ns(&self) -> u64 {
        self.user_ns + self.system_ns
    }

    /// The run's time in `unit`.
    pub fn in_unit(&self, unit: Judged) -> u64 {
        match unit {
            Judged::Wall => self.wall_ns,
            Judged::Cpu => self.cpu_ns(),
        }
    }
}

/// The time two commands are compared in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Judged {
    /// Wall time: what a user waits for.
    #[default]
    Wall,
    /// CPU time (user + system): for commands that spend their time on a CPU, it does not
    /// grow while they wait for one, so a busy machine does not add its waits to the runs.
    Cpu,
}

impl Judged {
    pub fn as_str(self) -> &'static str {
        match self {
            Judged::Wall => "wall time",
            Judged::Cpu => "CPU time (user + system)",
        }
    }
}

/// A command is CPU-bound when its median CPU time is at least this share of its fastest
/// run's wall time: the fastest run is the least disturbed, and a command that waits (for a
/// disk, a network, a child it does not wait for) spends much of it off the CPU. Process start
/// and exit outside the command's own accounting take a few percent.
pub const CPU_BOUND_SHARE: f64 = 0.8;

/// ... or when its runs give up the CPU of their own accord at most this often (median): a
/// single-threaded program that never waits switches voluntarily once, at its end (measured
/// here: a dependent chain, `cat` of a cached file and `sh -c true` one each, `sleep 0.01`
/// two). On a machine so busy that even the fastest run waited for a CPU most of its time
/// (wall times 1.3 to 4.5 times the CPU time under a load average of 14 on 2 CPUs), the
/// share above cannot tell; the switches still can, as a wait for a CPU is an involuntary
/// switch.
pub const CPU_BOUND_VOLUNTARY: f64 = 1.0;

/// The unit commands whose runs are `runs` are compared in: CPU time when every one is
/// CPU-bound ([`CPU_BOUND_SHARE`], [`CPU_BOUND_VOLUNTARY`]), wall time otherwise.
pub fn judged_unit(runs: &[&[Run]]) -> Judged {
    let bound = |rs: &[Run]| {
        let measured: Vec<&Run> = rs.iter().filter(|r| !r.warmup).collect();
        let Some(min_wall) = measured.iter().map(|r| r.wall_ns).min() else {
            return false;
        };
        let median = |f: &dyn Fn(&Run) -> u64| {
            crate::stats::median(&measured.iter().map(|r| f(r) as f64).collect::<Vec<_>>())
        };
        let cpu = median(&|r| r.cpu_ns());
        let on_cpu = min_wall > 0 && cpu >= CPU_BOUND_SHARE * min_wall as f64;
        // No CPU time to judge in (a command that waits, or whose own time is within the
        // shell's start-up taken off it).
        cpu > 0.0 && (on_cpu || median(&|r| r.voluntary_switches) <= CPU_BOUND_VOLUNTARY)
    };
    if !runs.is_empty() && runs.iter().all(|rs| bound(rs)) {
        Judged::Cpu
    } else {
        Judged::Wall
    }
}

/// The `vernier exec` part of a comparison file: the unit the commands were compared in and
/// every run of each command.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub judged: Judged,
    pub commands: Vec<Command>,
    /// Commands run through a shell: what was taken off each of their runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_startup: Option<Startup>,
}

/// How a command's runs became its samples (`exec` of a benchmark in a result file).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    /// The time the samples hold, by one rule for one command and for several: CPU time when
    /// every command of the run is CPU-bound ([`judged_unit`]), wall time otherwise.
    pub judged: Judged,
    /// Commands run through a shell: what was taken off each run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_startup: Option<Startup>,
}

/// The shell's start-up (`SHELL -c ''`, measured in the same rounds as the commands run
/// through it): the median of its runs' wall, user and system times, taken off each run of
/// every command (at least 0 remains, as hyperfine clamps), so that the runs, the samples,
/// the figures, the verdicts and the exports are the command's own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Startup {
    pub command: String,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub system_ns: u64,
}

/// A command of `vernier exec` in a comparison file: its name, its command line and its runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub name: String,
    pub command: String,
    pub runs: Vec<Run>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(wall_ms: u64, cpu_ms: u64) -> Run {
        Run {
            wall_ns: wall_ms * 1_000_000,
            user_ns: cpu_ms * 1_000_000,
            exit_code: Some(0),
            // Waits for a CPU: involuntary switches.
            voluntary_switches: 1,
            involuntary_switches: 3,
            ..Run::default()
        }
    }

    #[test]
    fn commands_on_a_cpu_are_judged_in_cpu_time_and_waits_in_wall_time() {
        // Slowed by a busy machine (walls of 10-20 ms) but on a CPU 9 ms of its fastest 10.
        let busy = [run(10, 9), run(20, 9), run(15, 9)];
        // A sleeper: 1 ms on a CPU of 10 ms, and a voluntary switch for its sleep.
        let sleeper = [run(10, 1), run(11, 1)].map(|r| Run {
            voluntary_switches: 2,
            ..r
        });
        // A machine so busy that the fastest run waited for a CPU most of its time: the
        // switches were involuntary, the command is still on a CPU whenever it runs.
        let crowded = [run(40, 10), run(23, 10), run(60, 10)];
        assert_eq!(judged_unit(&[&crowded, &busy]), Judged::Cpu);
        let waits = crowded.map(|r| Run {
            voluntary_switches: 30,
            ..r
        });
        assert_eq!(judged_unit(&[&waits, &busy]), Judged::Wall);
        assert_eq!(judged_unit(&[&busy, &busy]), Judged::Cpu);
        assert_eq!(judged_unit(&[&busy, &sleeper]), Judged::Wall);
        assert_eq!(judged_unit(&[&busy, &[]]), Judged::Wall);
        // No CPU time at all (a command within the shell's start-up taken off it): nothing to
        // judge in CPU time, though it never waited.
        let none = [run(1, 0), run(1, 0)];
        assert_eq!(judged_unit(&[&none]), Judged::Wall);
        assert_eq!(busy[0].in_unit(Judged::Cpu), 9_000_000);
    }
}
