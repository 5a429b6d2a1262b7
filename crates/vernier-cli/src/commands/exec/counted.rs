//! `vernier exec --instructions`: each command counted under callgrind with its children
//! followed (`--trace-children=yes`), callgrind writing one file per process into a temporary
//! directory, the instructions of every process summed. Each command is counted twice, and the
//! two counts are said when they differ. Two or more commands are compared in counts as
//! `compare --instructions` compares them: the difference against a threshold, no interval.
//!
//! Each count is a run of `valgrind … COMMAND` through the same [`Runner`] that times runs, so
//! it has the same controls (`--cpu`, `--no-aslr`, …), standard input and output, `-i`, and
//! messages; the hooks run around it as they run around a timed run (`--setup` once, then
//! `--prepare` and `--conclude` around each count, `--cleanup` at the end), uncounted.

use super::engine::{step, Accept, Spec};
use crate::runner::counted::key_of;
use crate::runner::exec::{Invocation, Launch};
use crate::runner::instructions::{parse_callgrind_output, Callgrind};
use anyhow::{anyhow, Context as _, Result};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;
use vernier::result::comparison::ComparisonFile;
use vernier::result::{BenchmarkResult, SamplesJson, Status};
use vernier::samples::Phase;
use vernier::stats::compare::Mode;

/// The prefix of callgrind's output files; `%p` makes one per process.
const OUT: &str = "callgrind.out";

/// One command's two counts and the wall time each took under valgrind.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    pub name: String,
    pub counts: [u64; 2],
    pub wall: [Duration; 2],
}

impl Counted {
    /// The count of one run (the first; the second repeats it when the count is exact).
    pub fn per_run(&self) -> u64 {
        self.counts[0]
    }

    pub fn repeated(&self) -> bool {
        self.counts[0] == self.counts[1]
    }
}

/// What counting the commands gave: every command counted twice before a failure or Ctrl-C.
#[derive(Debug, Default)]
pub struct Counting {
    pub counted: Vec<Counted>,
    /// What ended the counting early, naming the command (`None`: all were counted).
    pub failure: Option<String>,
    pub interrupted: bool,
}

/// `inv` as callgrind runs it, its output files in `dir`.
fn under_callgrind(callgrind: &Callgrind, inv: &Invocation, dir: &Path) -> Invocation {
    let mut out = OsString::from("--callgrind-out-file=");
    out.push(dir.join(format!("{OUT}.%p")));
    // --vgdb=no: no gdbserver, whose pipes valgrind would otherwise make in $TMPDIR; -q:
    // valgrind says only its errors, so the last lines of standard error are the command's.
    let mut args: Vec<OsString> = [
        "--tool=callgrind",
        "--trace-children=yes",
        "--vgdb=no",
        "-q",
    ]
    .map(OsString::from)
    .to_vec();
    args.push(out);
    args.push(inv.program.clone());
    args.extend(inv.args.iter().cloned());
    Invocation {
        program: callgrind.valgrind.clone().into_os_string(),
        args,
        line: inv.line.clone(),
    }
}

/// The instructions of every process whose callgrind file is in `dir`.
fn summed(dir: &Path, line: &str) -> Result<u64> {
    let mut total = 0u64;
    let mut files = 0usize;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(OUT))
        {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let counts =
            parse_callgrind_output(&text).with_context(|| format!("{}", path.display()))?;
        total += counts
            .get("Ir")
            .ok_or_else(|| anyhow!("{}: callgrind counted no `Ir`", path.display()))?;
        files += 1;
    }
    if files == 0 {
        return Err(anyhow!(
            "`{line}` under valgrind: callgrind wrote no counts"
        ));
    }
    Ok(total)
}

/// Counts commands through one runner, their hooks around them.
struct Counter<'a> {
    runner: &'a mut dyn Launch,
    callgrind: Callgrind,
    accept: &'a Accept,
    interrupted: &'a dyn Fn() -> bool,
}

impl Counter<'_> {
    /// A hook (`--setup`, `--prepare`, …), if given, run uncounted.
    fn hook(&mut self, inv: Option<&Invocation>, role: &str) -> Result<()> {
        match inv {
            Some(inv) => step(self.runner, inv, role, &Accept::Success)
                .map(drop)
                .map_err(anyhow::Error::msg),
            None => Ok(()),
        }
    }

    /// One count of `s`: its `--prepare`, the command under callgrind, its `--conclude`.
    /// `Ok(None)` when Ctrl-C cut it.
    fn once(&mut self, s: &Spec) -> Result<Option<(u64, Duration)>> {
        self.hook(s.prepare.as_ref(), "the --prepare command")?;
        let dir = crate::scratch::dir("vernier-callgrind-")?;
        let inv = under_callgrind(&self.callgrind, &s.inv, dir.path());
        let ended = step(self.runner, &inv, "the command under valgrind", self.accept);
        if (self.interrupted)() {
            return Ok(None);
        }
        let ended = ended.map_err(anyhow::Error::msg)?;
        let count = summed(dir.path(), &s.inv.line)?;
        self.hook(s.conclude.as_ref(), "the --conclude command")?;
        Ok(Some((count, Duration::from_nanos(ended.run.wall_ns))))
    }

    /// One command's `--setup`, then its two counts. `Ok(None)` when Ctrl-C cut it.
    fn set_up_and_count(&mut self, s: &Spec) -> Result<Option<Counted>> {
        self.hook(s.setup.as_ref(), "the --setup command")?;
        let Some((c1, w1)) = self.once(s)? else {
            return Ok(None);
        };
        let Some((c2, w2)) = self.once(s)? else {
            return Ok(None);
        };
        Ok(Some(Counted {
            name: s.name.clone(),
            counts: [c1, c2],
            wall: [w1, w2],
        }))
    }

    /// One command counted twice, between its `--setup` and its `--cleanup` (which runs
    /// whatever happened). `Ok(None)` when Ctrl-C cut it.
    fn command(&mut self, s: &Spec) -> Result<Option<Counted>> {
        let counted = self.set_up_and_count(s);
        let cleanup = self.hook(s.cleanup.as_ref(), "the --cleanup command");
        let counted = counted?;
        cleanup?;
        Ok(counted)
    }
}

/// Each command counted twice, said on standard error first (it is slow); a failure or Ctrl-C
/// ends the counting and keeps the commands counted before it.
pub fn count_all(
    runner: &mut dyn Launch,
    specs: &[Spec],
    accept: &Accept,
    interrupted: &dyn Fn() -> bool,
) -> Result<Counting> {
    let callgrind = Callgrind::from_env();
    let version = callgrind.check()?;
    eprintln!(
        "vernier: counting the instructions of {} command(s) under valgrind ({version}, \
         callgrind, children followed), each twice: slow, each count paying valgrind's \
         start-up and tens of times the command's own time",
        specs.len()
    );
    Ok(count_with(runner, callgrind, specs, accept, interrupted))
}

/// [`count_all`] with valgrind found (`callgrind`): the counting itself.
fn count_with(
    runner: &mut dyn Launch,
    callgrind: Callgrind,
    specs: &[Spec],
    accept: &Accept,
    interrupted: &dyn Fn() -> bool,
) -> Counting {
    let mut counter = Counter {
        runner,
        callgrind,
        accept,
        interrupted,
    };
    let mut out = Counting::default();
    for s in specs {
        if interrupted() {
            out.interrupted = true;
            break;
        }
        match counter.command(s) {
            Ok(Some(c)) => out.counted.push(c),
            Ok(None) => {
                out.interrupted = true;
                break;
            }
            Err(e) => {
                out.failure = Some(format!("{}: {e:#}", s.name));
                break;
            }
        }
    }
    out
}

/// The result entry of a counted command: its instructions per run (one iteration is one run),
/// the two counts kept as the samples' `Ir`.
pub fn result(c: &Counted) -> BenchmarkResult {
    let mut r = BenchmarkResult::failed(&c.name, String::new());
    r.status = Status::Ok;
    r.error = None;
    r.iters_per_sample = 1;
    r.total_s = c.wall.iter().map(Duration::as_secs_f64).sum();
    r.stop = "counted".into();
    r.headline_unit = vernier::analyze::Unit::Instructions;
    r.counters = Some([(key_of("Ir"), c.per_run() as f64)].into_iter().collect());
    r.samples = SamplesJson {
        iters: vec![1, 1],
        ns: c.wall.iter().map(|w| w.as_nanos() as u64).collect(),
        t_s: vec![0.0, 0.0],
        phase: vec![Phase::Measure, Phase::Measure],
        process: vec![0, 1],
        counters: [(
            "Ir".to_string(),
            c.counts.iter().map(|&n| Some(n)).collect(),
        )]
        .into_iter()
        .collect(),
        ..SamplesJson::default()
    };
    r
}

/// Each command's count per run, and whether its two counts agreed.
pub fn table(counted: &[Counted]) -> String {
    use std::fmt::Write as _;
    let w = counted
        .iter()
        .map(|c| c.name.chars().count())
        .chain(std::iter::once("command".len()))
        .max()
        .unwrap_or(7);
    let mut s = format!(
        "{:<w$}  {:>16}  counted twice\n",
        "command", "instructions/run"
    );
    for c in counted {
        let again = if c.repeated() {
            "equal".to_string()
        } else {
            format!("differ: {} then {}", c.counts[0], c.counts[1])
        };
        let _ = writeln!(s, "{:<w$}  {:>16}  {again}", c.name, c.per_run());
    }
    s
}

/// The comparison of the commands against the reference, in instructions per run.
pub fn comparison(counted: &[Counted], reference: usize, threshold: f64) -> ComparisonFile {
    let names: Vec<String> = counted.iter().map(|c| c.name.clone()).collect();
    let mut file = ComparisonFile::new(Mode::Instructions, threshold);
    (file.old, file.new) = super::figures::old_and_new(&names, reference);
    let old = counted[reference].per_run() as f64;
    for (i, c) in counted.iter().enumerate() {
        if i != reference {
            file.comparisons.push(crate::runner::counted::compared(
                &c.name,
                old,
                c.per_run() as f64,
                threshold,
            ));
        }
    }
    file
}

/// The comparison's table, as `compare --instructions` words it, per run.
pub fn comparison_table(file: &ComparisonFile) -> String {
    crate::runner::counted::counts_table(
        file,
        "instr/run",
        &format!(
            "instructions per run counted under callgrind, every process of the command \
             summed; exact and repeatable, so the verdict is the difference against ±{} \
             instructions per run, with no interval",
            file.threshold
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::exec::Ended;
    use std::cell::Cell;
    use std::rc::Rc;
    use vernier::stats::compare::Verdict;

    /// valgrind as a script: each run under callgrind writes a count of `1000 + its number`
    /// for one process, exits with `exit`, and the `stop_at`-th run under it is cut by
    /// Ctrl-C; every line run is logged (a hook's by its line, a count as `count LINE`).
    struct Valgrind {
        counted: u64,
        stop_at: u64,
        exit: i32,
        ctrl_c: Rc<Cell<bool>>,
        log: Vec<String>,
    }

    impl Launch for Valgrind {
        fn run(&mut self, inv: &Invocation) -> Result<Ended, String> {
            let out = inv
                .args
                .iter()
                .find_map(|a| a.to_str()?.strip_prefix("--callgrind-out-file="));
            let mut run = vernier::result::exec::Run {
                exit_code: Some(0),
                ..Default::default()
            };
            match out {
                Some(pattern) => {
                    self.counted += 1;
                    self.log.push(format!("count {}", inv.line));
                    let path = pattern.replace("%p", "1");
                    let text = format!("events: Ir\nsummary: {}\n", 1000 + self.counted);
                    std::fs::write(path, text).map_err(|e| e.to_string())?;
                    run.exit_code = Some(self.exit);
                    if self.counted == self.stop_at {
                        self.ctrl_c.set(true);
                    }
                }
                None => self.log.push(inv.line.clone()),
            }
            Ok(Ended {
                run,
                timed_out: false,
            })
        }

        fn stderr_tail(&mut self) -> Vec<String> {
            Vec::new()
        }

        fn probe(&mut self, _adds: u64) -> Option<(u64, u64)> {
            None
        }
    }

    fn spec(line: &str) -> Spec {
        let hook = |h: &str| Some(Invocation::split(h).unwrap());
        Spec {
            name: line.into(),
            inv: Invocation::split(line).unwrap(),
            setup: hook("setup"),
            prepare: hook("prepare"),
            conclude: hook("conclude"),
            cleanup: hook("cleanup"),
        }
    }

    #[test]
    fn ctrl_c_keeps_the_commands_counted_and_their_hooks_ran_around_each_count() {
        let ctrl_c = Rc::new(Cell::new(false));
        let mut valgrind = Valgrind {
            counted: 0,
            stop_at: 3,
            exit: 0,
            ctrl_c: ctrl_c.clone(),
            log: Vec::new(),
        };
        let specs = [spec("old"), spec("new")];
        let got = count_with(
            &mut valgrind,
            Callgrind::from_env(),
            &specs,
            &Accept::Success,
            &|| ctrl_c.get(),
        );
        // The first command counted twice is kept; the second was cut at its first count.
        assert!(got.interrupted && got.failure.is_none());
        assert_eq!(got.counted.len(), 1);
        assert_eq!(got.counted[0].counts, [1001, 1002]);
        let one = "setup prepare count old conclude prepare count old conclude cleanup";
        assert_eq!(
            valgrind.log.join(" "),
            format!("{one} setup prepare count new cleanup")
        );
    }

    #[test]
    fn the_statuses_ignore_failure_lists_are_counted_and_another_ends_the_counting() {
        let run = |exit: i32, accept: &Accept| {
            let mut valgrind = Valgrind {
                counted: 0,
                stop_at: 0,
                exit,
                ctrl_c: Rc::new(Cell::new(false)),
                log: Vec::new(),
            };
            count_with(
                &mut valgrind,
                Callgrind::from_env(),
                &[spec("tool")],
                accept,
                &|| false,
            )
        };
        let codes = Accept::Codes(vec![3]);
        assert_eq!(run(3, &codes).counted.len(), 1);
        let failed = run(4, &codes);
        assert!(failed.counted.is_empty());
        let why = failed.failure.unwrap();
        assert!(why.contains("exited with status 4"), "{why}");
        assert_eq!(run(4, &Accept::AllNonZero).counted.len(), 1);
    }

    fn counted(name: &str, counts: [u64; 2]) -> Counted {
        Counted {
            name: name.into(),
            counts,
            wall: [Duration::ZERO; 2],
        }
    }

    #[test]
    fn commands_are_compared_in_counts_against_the_reference_and_unequal_counts_are_said() {
        let list = [
            counted("new", [1020, 1020]),
            counted("old", [1000, 1000]),
            counted("same", [1000, 1003]),
        ];
        let file = comparison(&list, 1, 0.5);
        assert_eq!((file.old.as_str(), file.new.as_str()), ("old", "new, same"));
        let got: Vec<(&str, Verdict, f64)> = file
            .comparisons
            .iter()
            .map(|c| (c.name.as_str(), c.verdict, c.ratio))
            .collect();
        assert_eq!(
            got,
            [
                ("new", Verdict::Slower, 1.02),
                ("same", Verdict::NoChange, 1.0)
            ]
        );
        let t = table(&list);
        assert!(t.contains("differ: 1000 then 1003"), "{t}");
        assert_eq!(t.matches("equal").count(), 2, "{t}");
        let r = result(&list[2]);
        assert_eq!(r.instructions_per_iter(), Some(1000.0));
        assert_eq!(r.samples.counters["Ir"], [Some(1000), Some(1003)]);
    }
}
