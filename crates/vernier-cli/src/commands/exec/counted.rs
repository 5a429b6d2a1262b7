//! `vernier exec --instructions`: each command counted under callgrind with its children
//! followed (`--trace-children=yes`), callgrind writing one file per process into a temporary
//! directory, the instructions of every process summed. Each command is counted twice, and the
//! two counts are said when they differ. Two or more commands are compared in counts as
//! `compare --instructions` compares them: the difference against a threshold, no interval.

use super::engine::Spec;
use crate::runner::counted::{key_of, VALGRIND_SLOWDOWN};
use crate::runner::exec::Invocation;
use crate::runner::instructions::{parse_callgrind_output, Callgrind};
use anyhow::{anyhow, bail, Context as _, Result};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
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

/// The instructions of every process that `inv` started, counted under callgrind.
fn count_once(
    callgrind: &Callgrind,
    inv: &Invocation,
    input: Option<&Path>,
    timeout: Duration,
) -> Result<(u64, Duration)> {
    let dir = crate::scratch::dir("vernier-callgrind-")?;
    let stderr_path = dir.path().join("stderr");
    let stdin = match input {
        Some(p) => Stdio::from(
            std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => Stdio::null(),
    };
    let mut out = OsString::from("--callgrind-out-file=");
    out.push(dir.path().join(format!("{OUT}.%p")));
    let mut cmd = Command::new(&callgrind.valgrind);
    // --vgdb=no: no gdbserver, whose pipes valgrind would otherwise make in $TMPDIR; -q:
    // valgrind says only its errors, so the last lines of standard error are the command's.
    cmd.args([
        "--tool=callgrind",
        "--trace-children=yes",
        "--vgdb=no",
        "-q",
    ])
    .arg(out)
    .arg(&inv.program)
    .args(&inv.args)
    .stdin(stdin)
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(&stderr_path)?);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", callgrind.valgrind.display()))?;
    let limit = timeout.saturating_mul(VALGRIND_SLOWDOWN);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > limit || crate::term::interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "`{}` under valgrind: stopped after {:.0} s (--timeout × {VALGRIND_SLOWDOWN}, \
                 valgrind's slowdown); raise --timeout",
                inv.line,
                start.elapsed().as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = start.elapsed();
    if !status.success() {
        let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        bail!(
            "`{}` under valgrind ended with {status}; its last lines:\n{}",
            inv.line,
            lines[lines.len().saturating_sub(10)..].join("\n")
        );
    }
    let mut total = 0u64;
    let mut files = 0usize;
    for entry in std::fs::read_dir(dir.path())? {
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
        bail!("`{}` under valgrind: callgrind wrote no counts", inv.line);
    }
    Ok((total, wall))
}

/// Each command counted twice, said on standard error first: it is slow.
pub fn count_all(specs: &[Spec], input: Option<&Path>, timeout: Duration) -> Result<Vec<Counted>> {
    let callgrind = Callgrind::from_env();
    let version = callgrind.check()?;
    eprintln!(
        "vernier: counting the instructions of {} command(s) under valgrind ({version}, \
         callgrind, children followed), each twice: slow, each count paying valgrind's \
         start-up and tens of times the command's own time",
        specs.len()
    );
    specs
        .iter()
        .map(|s| {
            let (c1, w1) = count_once(&callgrind, &s.inv, input, timeout)?;
            let (c2, w2) = count_once(&callgrind, &s.inv, input, timeout)?;
            Ok(Counted {
                name: s.name.clone(),
                counts: [c1, c2],
                wall: [w1, w2],
            })
        })
        .collect()
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
    use vernier::stats::compare::Verdict;

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
