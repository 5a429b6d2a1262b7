//! `vernier exec` through a scripted launcher ([`Mock`], the [`Launch`] seam): each command
//! line's runs are given, so the figures, the units, the shell's start-up taken off, the cycles
//! from the probe beside the runs, the reference and the statuses accepted are checked exactly,
//! without a process or a clock.

use super::engine::Accept;
use super::*;
use crate::runner::exec::{Ended, Invocation};
use std::collections::BTreeMap;
use vernier::result::exec::Run;

/// A run of `ms` milliseconds of wall time, `cpu_ms` of them on a CPU (user), exiting 0.
fn run(ms: f64, cpu_ms: f64) -> Run {
    Run {
        wall_ns: (ms * 1e6) as u64,
        user_ns: (cpu_ms * 1e6) as u64,
        max_rss_bytes: 1 << 20,
        voluntary_switches: 1,
        exit_code: Some(0),
        ..Run::default()
    }
}

/// A command line's run, `k`: how many runs of that line came before.
type Script = Box<dyn FnMut(&str, usize) -> Run>;

/// A launcher that runs nothing: each command line's run is `script(line, k)` (`k`: how many
/// runs of that line came before), the probe beside each run `probe`.
pub struct Mock {
    script: Script,
    seen: BTreeMap<String, usize>,
    pub lines: Vec<String>,
    probe: Option<(u64, u64)>,
}

impl Mock {
    pub fn new(script: impl FnMut(&str, usize) -> Run + 'static) -> Mock {
        Mock {
            script: Box::new(script),
            seen: BTreeMap::new(),
            lines: Vec::new(),
            probe: None,
        }
    }

    fn probed(self, chain_ns: u64, wide_ns: u64) -> Mock {
        Mock {
            probe: Some((chain_ns, wide_ns)),
            ..self
        }
    }
}

impl Launch for Mock {
    fn run(&mut self, inv: &Invocation) -> Result<Ended, String> {
        let k = self.seen.entry(inv.line.clone()).or_insert(0);
        let run = (self.script)(&inv.line, *k);
        *k += 1;
        self.lines.push(inv.line.clone());
        Ok(Ended {
            run,
            timed_out: false,
        })
    }

    fn stderr_tail(&mut self) -> Vec<String> {
        vec!["the scripted reason".into()]
    }

    fn probe(&mut self, _adds: u64) -> Option<(u64, u64)> {
        self.probe
    }
}

fn args(argv: &[&str]) -> ExecArgs {
    use clap::FromArgMatches as _;
    let cmd = <ExecArgs as clap::Args>::augment_args(clap::Command::new("exec"));
    let m = cmd
        .try_get_matches_from(std::iter::once("exec").chain(argv.iter().copied()))
        .unwrap();
    ExecArgs::from_arg_matches(&m).unwrap()
}

/// `vernier exec ARGV` through `mock`: what the runs gave.
fn timed(argv: &[&str], mock: &mut Mock) -> TimedRuns {
    let a = args(argv);
    let plan = plan(&a).unwrap();
    let counts = a.counts().unwrap();
    let collected = collect(&a, &plan, &counts, mock, &|| false, &mut |_, _| {});
    figures_of(&a, &plan, collected, serde_json::Value::Null, 0.005)
}

/// A command `work N` that takes N ms on a CPU (±1 % by run, the same pattern for every
/// command), plus a shell's start-up when run through one: 1 ms of wall time, 0.4 ms of it
/// user and 0.4 ms system.
fn through_shell(line: &str, k: usize) -> Run {
    let jitter = 1.0 + 0.01 * ((k % 5) as f64 - 2.0) / 2.0;
    let mut r = run(1.0, 0.4);
    r.system_ns = 400_000;
    if let Some(n) = line.strip_prefix("work ") {
        let ms: f64 = n.parse().unwrap();
        r.wall_ns += (ms * jitter * 1e6) as u64;
        r.user_ns += (ms * jitter * 1e6) as u64;
    }
    r
}

fn walls(s: &[Run]) -> Vec<u64> {
    s.iter().filter(|r| !r.warmup).map(|r| r.wall_ns).collect()
}

#[test]
fn the_shells_start_up_is_taken_off_the_runs_the_figures_the_verdict_and_the_exports() {
    let mut mock = Mock::new(through_shell);
    let t = timed(&["-r", "12", "-S", "sh", "work 10", "work 12"], &mut mock);
    assert!(t.within_startup.is_empty());
    // The start-up was measured in the same rounds: a third series, run as `sh -c ''`.
    assert_eq!(mock.lines.iter().filter(|l| l.is_empty()).count(), 12);
    let taken = t.startup.unwrap();
    assert_eq!(
        (taken.wall_ns, taken.user_ns, taken.system_ns),
        (1_000_000, 400_000, 400_000)
    );
    let b = &t.file.benchmarks;
    assert_eq!(b.len(), 3);
    // Each run is the command's own: 10 ms ±1 %, not 11.
    let own = walls(&b[0].runs);
    assert!(
        own.iter().all(|w| (9_900_000..=10_100_000).contains(w)),
        "{own:?}"
    );
    let med = b[0].per_iter.median_ns;
    assert!((med / 10e6 - 1.0).abs() < 0.011, "{med}");
    let ci = b[0].per_iter.run_ci95_ns;
    assert!(ci[0] > 9.8e6 && ci[1] < 10.2e6, "{ci:?}");
    let said = b[0].exec.as_ref().unwrap().shell_startup.as_ref().unwrap();
    assert_eq!(
        (said.command.as_str(), said.wall_ns),
        ("sh -c ''", 1_000_000)
    );
    // The start-up's own row is as measured, and says nothing was taken off it.
    assert_eq!(walls(&b[2].runs), vec![1_000_000; 12]);
    assert!(b[2].exec.as_ref().unwrap().shell_startup.is_none());
    // The verdict is on the net times: 12/10, where the gross ones would read 13/11.
    let c = t.comparison.as_ref().unwrap();
    assert!(
        (c.comparisons[0].ratio - 1.2).abs() < 0.01,
        "{:?}",
        c.comparisons[0]
    );
    assert_eq!(
        c.exec
            .as_ref()
            .unwrap()
            .shell_startup
            .as_ref()
            .unwrap()
            .wall_ns,
        1_000_000
    );
    // hyperfine's exports hold the net times too, as hyperfine's do.
    let e = &t.entries[0];
    assert!((e.mean / 0.010 - 1.0).abs() < 0.011, "{}", e.mean);
    assert!(e.times.iter().all(|s| (0.0099..=0.0101).contains(s)));
    // A command quicker than the start-up reads 0 net, as hyperfine clamps.
    let mut mock = Mock::new(|line, _| match line {
        "" => run(2.0, 1.0),
        _ => run(1.5, 0.5),
    });
    let t = timed(&["-r", "10", "-S", "sh", "quick"], &mut mock);
    assert_eq!(walls(&t.file.benchmarks[0].runs), vec![0; 10]);
    assert_eq!(t.within_startup, ["quick"]);
}

#[test]
fn one_command_and_two_are_judged_in_the_same_time_by_the_same_rule() {
    // CPU-bound: 9 ms of 10 on a CPU, the wall time stretched by waits for a CPU.
    let cpu = |_: &str, k: usize| run(10.0 + (k % 3) as f64, 9.0);
    let t = timed(&["-r", "10", "work"], &mut Mock::new(cpu));
    let b = &t.file.benchmarks[0];
    assert_eq!(b.exec.as_ref().unwrap().judged, Judged::Cpu);
    assert_eq!(b.samples.ns, vec![9_000_000; 10]);
    let t2 = timed(&["-r", "10", "work", "work"], &mut Mock::new(cpu));
    assert_eq!(t2.comparison.unwrap().exec.unwrap().judged, Judged::Cpu);
    assert_eq!(
        t2.file.benchmarks[1].exec.as_ref().unwrap().judged,
        Judged::Cpu
    );
    // A sleeper waits of its own accord: wall time, alone or beside another.
    let sleeper = |_: &str, k: usize| Run {
        voluntary_switches: 3,
        ..run(10.0 + k as f64, 0.1)
    };
    let t = timed(&["-r", "10", "sleep"], &mut Mock::new(sleeper));
    let b = &t.file.benchmarks[0];
    assert_eq!(b.exec.as_ref().unwrap().judged, Judged::Wall);
    assert_eq!(b.samples.ns, walls(&b.runs));
    let t2 = timed(&["-r", "10", "sleep", "other"], &mut Mock::new(sleeper));
    assert_eq!(t2.comparison.unwrap().exec.unwrap().judged, Judged::Wall);
}

#[test]
fn a_whole_command_has_cycles_from_the_probe_beside_its_runs() {
    // The probe's chain of 16384 additions in 4096 ns: 0.25 ns a cycle (4 GHz).
    let adds = engine::PROBE_ADDS;
    let chain = adds / 4;
    let cpu = |_: &str, k: usize| run(10.0 + (k % 3) as f64, 9.0 + 0.01 * (k % 4) as f64);
    let mut mock = Mock::new(cpu).probed(chain, chain / 4);
    let t = timed(&["-r", "20", "work"], &mut mock);
    let b = &t.file.benchmarks[0];
    let speed = b.speed.as_ref().unwrap();
    assert_eq!(speed.probed_batches, 20);
    let cycles = speed.cycles_per_iter.unwrap();
    // Its time (CPU time, the unit judged) over the cycle time around it: the chain's time,
    // less one read of the clock, per addition.
    let cycle_ns = (chain as f64 - t.file.timer.overhead_ns) / adds as f64;
    let want = b.per_iter.median_ns / cycle_ns;
    assert!((cycles / want - 1.0).abs() < 1e-9, "{cycles} vs {want}");
    assert!(
        (speed.fastest_ghz * cycle_ns - 1.0).abs() < 1e-9,
        "{}",
        speed.fastest_ghz
    );
    // No probe, no cycles.
    let t = timed(&["-r", "20", "work"], &mut Mock::new(cpu));
    assert!(t.file.benchmarks[0]
        .speed
        .as_ref()
        .is_none_or(|s| s.cycles_per_iter.is_none()));
}

#[test]
fn a_reference_that_is_none_of_the_commands_runs_first_under_its_name() {
    let mut mock = Mock::new(|line, _| run(if line == "base" { 10.0 } else { 11.0 }, 9.0));
    let argv = [
        "-r",
        "6",
        "--reference",
        "base",
        "--reference-name",
        "before",
        "new",
    ];
    let t = timed(&argv, &mut mock);
    assert_eq!(t.names, ["before", "new"]);
    assert_eq!(mock.lines[..2], ["base", "new"]);
    let c = t.comparison.unwrap();
    assert_eq!((c.old.as_str(), c.new.as_str()), ("before", "new"));
    // One of the commands, by its line: it is the reference, renamed.
    let mut mock = Mock::new(|_, _| run(10.0, 9.0));
    let argv = [
        "-r",
        "6",
        "--reference",
        "b",
        "--reference-name",
        "B",
        "a",
        "b",
    ];
    let t = timed(&argv, &mut mock);
    assert_eq!(t.names, ["a", "B"]);
    assert_eq!(t.comparison.unwrap().old, "B");
    assert_eq!(
        plan(&args(&["--reference", "b", "a", "b"]))
            .unwrap()
            .reference,
        1
    );
}

#[test]
fn ignore_failure_keeps_the_statuses_listed_and_stops_at_another() {
    let exits = |line: &str, _| Run {
        exit_code: Some(line.trim_start_matches("exit ").parse().unwrap()),
        ..run(5.0, 4.0)
    };
    let t = timed(
        &["-r", "4", "--ignore-failure=3,5", "exit 3", "exit 5"],
        &mut Mock::new(exits),
    );
    assert!(t.collected.failure.is_none());
    assert_eq!(t.file.benchmarks[1].runs.len(), 4);
    let t = timed(
        &["-r", "4", "--ignore-failure=3", "exit 3", "exit 4"],
        &mut Mock::new(exits),
    );
    let f = t.collected.failure.unwrap();
    assert_eq!(f.command, 1);
    assert!(f.message.contains("exited with status 4"), "{}", f.message);
    assert!(
        f.message.contains("not among --ignore-failure"),
        "{}",
        f.message
    );
    assert!(f.message.contains("the scripted reason"), "{}", f.message);
    // `-i` alone accepts every status, and leaves the command line alone.
    let a = args(&["-i", "exit 4"]);
    assert_eq!(a.accept().unwrap(), Accept::AllNonZero);
    assert_eq!(a.commands, ["exit 4"]);
    assert_eq!(args(&["exit 4"]).accept().unwrap(), Accept::Success);
}

#[test]
fn hyperfines_input_null_and_short_conclude_are_taken() {
    let a = args(&["--input", "null", "-C", "echo done", "true"]);
    assert_eq!(a.input(), None);
    assert_eq!(a.conclude, ["echo done"]);
    assert_eq!(
        args(&["--input", "data.txt", "true"]).input(),
        Some("data.txt".into())
    );
}
