//! `vernier compare OLD NEW`: is NEW faster or slower than OLD?
//!
//! OLD and NEW are either two executables (two builds of a benchmark program, each a worker)
//! or two result files (`vernier run --json`, `vernier demo --json`); which one is detected
//! from the files themselves. Executables are compared live: both are launched, benchmarks are
//! paired by name, and the runner alternates batches between the two processes so that drift
//! cancels (`vernier::compare`). Result files are compared offline and unpaired, on the steady
//! samples each file holds, which leaves the comparison exposed to whatever changed on the
//! machine between the two runs; the output says so.

use crate::run::ProcessArgs;
use crate::worker::{Control, WorkerProcess, WorkerTarget};
use crate::{term, Common};
use anyhow::{bail, Context as _, Result};
use clap::Args;
use std::ffi::OsString;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use vernier::compare::{self as cmp, ComparisonFile, PairPlan};
use vernier::compare_stats::{self, Mode};
use vernier::measure::MonotonicClock;
use vernier::protocol::BenchRef;
use vernier::result::{BenchmarkResult, ResultFile, Status};
use vernier::timer::TimerInfo;

#[derive(Args, Clone, Debug)]
pub struct CompareArgs {
    /// OLD: a benchmark executable (a worker), or a result file (JSON from `vernier run
    /// --json` or `vernier demo --json`).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// NEW: of the same kind as OLD. Ratios are NEW/OLD: above 1, NEW is slower.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Write the comparison (schema 1, with every pair) to FILE, after each benchmark.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Hard time budget per benchmark, in seconds, both sides together (default 1; 0.2 with
    /// --quick). The comparison stops earlier once the verdict is settled.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub time: Option<f64>,
    /// A short run: about 0.2 s per benchmark.
    #[arg(long)]
    pub quick: bool,
    /// Noise threshold in percent: changes within ±THRESHOLD are reported as no-change.
    #[arg(long, value_name = "PERCENT", default_value = "0.5")]
    pub threshold: String,
    /// Exit with status 2 when any benchmark is `slower`.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// An environment variable for OLD only (repeatable), e.g. --old-env CHAIN_N=100.
    #[arg(long, value_name = "KEY=VALUE")]
    pub old_env: Vec<String>,
    /// An environment variable for NEW only (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub new_env: Vec<String>,
    /// An argument passed to OLD (repeatable, in order).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub old_arg: Vec<OsString>,
    /// An argument passed to NEW (repeatable, in order).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub new_arg: Vec<OsString>,
    /// Seed of the random order of OLD and NEW within each round (default: from the clock).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub process: ProcessArgs,
}

/// What an OLD or NEW argument turned out to be.
enum Input {
    Results(Box<ResultFile>),
    Program(PathBuf),
}

/// Parse `--threshold` (percent, an optional trailing `%`) into a fraction.
pub fn parse_threshold(s: &str) -> Result<f64> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0 && *v < 100.0)
        .ok_or_else(|| {
            anyhow::anyhow!("--threshold '{s}': expected a percentage such as 0.5 or 1%")
        })?;
    Ok(v / 100.0)
}

fn parse_env(list: &[String], flag: &str) -> Result<Vec<(OsString, OsString)>> {
    list.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.into(), v.into())),
            _ => bail!("{flag} '{kv}': expected KEY=VALUE"),
        })
        .collect()
}

/// A bare name (no '/') that is not a file here is looked up in PATH, as a shell would.
fn resolve(path: &Path) -> PathBuf {
    if path.exists() || path.to_string_lossy().contains('/') {
        return path.to_path_buf();
    }
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(path))
                .find(|c| c.is_file())
        })
        .unwrap_or_else(|| path.to_path_buf())
}

fn classify(which: &str, path: &Path) -> Result<Input> {
    let path = resolve(path);
    let meta = std::fs::metadata(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!(
                "{which} '{}': no such file (give a benchmark executable, or a result file \
                 written by `vernier run --json` or `vernier demo --json`)",
                path.display()
            )
        } else {
            anyhow::anyhow!("{which} '{}': {e}", path.display())
        }
    })?;
    if meta.is_dir() {
        bail!(
            "{which} '{}' is a directory, not an executable or a result file",
            path.display()
        );
    }
    let mut head = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .with_context(|| format!("{which} '{}': cannot read it", path.display()))?;
    let first = head.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'{') {
        return match ResultFile::load(&path) {
            Ok(f) => Ok(Input::Results(Box::new(f))),
            Err(e) => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let v: Option<serde_json::Value> = serde_json::from_str(&text).ok();
                if v.as_ref().is_some_and(|v| v.get("comparisons").is_some()) {
                    bail!(
                        "{which} '{}' is a comparison file (from `vernier compare --json`), not a \
                         result file; give a file from `vernier run --json` or `vernier demo --json`",
                        path.display()
                    );
                }
                bail!("{which}: {e}")
            }
        };
    }
    if meta.permissions().mode() & 0o111 != 0 {
        return Ok(Input::Program(path));
    }
    if head.starts_with(b"\x7fELF") || head.starts_with(b"#!") {
        bail!(
            "{which} '{}' is a program but not executable (chmod +x it)",
            path.display()
        );
    }
    bail!(
        "{which} '{}' is neither a vernier result file (JSON) nor an executable",
        path.display()
    )
}

pub fn compare_command(a: &CompareArgs) -> Result<i32> {
    let threshold = parse_threshold(&a.threshold)?;
    let old = classify("OLD", &a.old)?;
    let new = classify("NEW", &a.new)?;
    match (old, new) {
        (Input::Results(o), Input::Results(n)) => compare_files(a, &o, &n, threshold),
        (Input::Program(o), Input::Program(n)) => compare_programs(a, &o, &n, threshold),
        (Input::Results(_), Input::Program(_)) | (Input::Program(_), Input::Results(_)) => {
            bail!(
                "OLD and NEW must be of the same kind: one is a result file and the other an \
                 executable. Compare two executables (live, paired, interleaved) or two result \
                 files (offline, unpaired); to turn an executable into a result file: \
                 vernier run --json FILE -- PROGRAM"
            )
        }
    }
}

fn common(a: &CompareArgs) -> Common {
    Common {
        json: None,
        filter: a.filter.clone(),
        time: a.time,
        quick: a.quick,
        // Comparisons time the pairs; counters are not read there.
        counters: "none".into(),
        keep_interrupted: false,
        instructions: false,
    }
}

/// Names in both lists (in OLD's order) selected by the filter, and the names only one has.
fn match_names(
    old: &[String],
    new: &[String],
    filter: Option<&regex::Regex>,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let both: Vec<String> = old.iter().filter(|n| new.contains(n)).cloned().collect();
    let only_old = old.iter().filter(|n| !new.contains(n)).cloned().collect();
    let only_new = new.iter().filter(|n| !old.contains(n)).cloned().collect();
    let selected = both
        .into_iter()
        .filter(|n| filter.is_none_or(|re| re.is_match(n)))
        .collect();
    (selected, only_old, only_new)
}

fn check_names(
    selected: &[String],
    old_names: &[String],
    new_names: &[String],
    filter: bool,
) -> Result<()> {
    if selected.is_empty() {
        let in_both = old_names.iter().any(|n| new_names.contains(n));
        if filter && in_both {
            bail!("--filter matches no benchmark that OLD and NEW both have");
        }
        bail!(
            "OLD and NEW have no benchmark in common (benchmarks are paired by name).\n  OLD \
             has: {}\n  NEW has: {}",
            list_or_none(old_names),
            list_or_none(new_names)
        );
    }
    Ok(())
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

fn warn_one_sided(file: &ComparisonFile) {
    if !file.only_old.is_empty() {
        eprintln!(
            "vernier: note: only in OLD (not compared): {}",
            file.only_old.join(", ")
        );
    }
    if !file.only_new.is_empty() {
        eprintln!(
            "vernier: note: only in NEW (not compared): {}",
            file.only_new.join(", ")
        );
    }
}

fn write(file: &ComparisonFile, path: Option<&PathBuf>) -> Result<()> {
    if let Some(p) = path {
        file.write_atomic(p)
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

fn finish(a: &CompareArgs, file: &ComparisonFile) -> Result<i32> {
    let style = term::style();
    print!("{}", cmp::table(file, style));
    if !file.only_old.is_empty() || !file.only_new.is_empty() {
        println!(
            "not compared: only in OLD: {}; only in NEW: {}",
            list_or_none(&file.only_old),
            list_or_none(&file.only_new)
        );
    }
    if let Some(p) = &a.json {
        println!("comparison written to {}", p.display());
    }
    if term::interrupted() {
        eprintln!("vernier: interrupted; the benchmarks compared before Ctrl-C are kept");
        return Ok(130);
    }
    if a.fail_on_regression && file.has_regression() {
        let slower: Vec<&str> = file
            .comparisons
            .iter()
            .filter(|c| c.verdict == compare_stats::Verdict::Slower)
            .map(|c| c.name.as_str())
            .collect();
        eprintln!(
            "vernier: regression (--fail-on-regression): {}",
            slower.join(", ")
        );
        return Ok(2);
    }
    Ok(if file.failed.is_empty() { 0 } else { 1 })
}

// ---------------------------------------------------------------------------------------------
// Two result files: unpaired.

/// Per-iteration times of the samples a result's estimates rest on: the analysis's own
/// selection (steady main series, interrupted samples excluded), redone from the raw samples.
fn steady_per_iter(file: &ResultFile, b: &BenchmarkResult) -> Vec<f64> {
    if b.samples.ns.is_empty() {
        return Vec::new();
    }
    let m = b.measurement();
    let an = vernier::analyze::analyze(&m, &file.analysis_context());
    an.estimate_samples
        .iter()
        .map(|&i| m.samples.samples[i].per_iter_ns())
        .filter(|x| *x > 0.0)
        .collect()
}

fn compare_one_file_pair(
    (of, o): (&ResultFile, &BenchmarkResult),
    (nf, n): (&ResultFile, &BenchmarkResult),
) -> Result<cmp::Comparison, String> {
    for (side, b) in [("OLD", o), ("NEW", n)] {
        if b.status == Status::Failed {
            return Err(format!(
                "{side}: the benchmark failed in its result file: {}",
                b.error.as_deref().unwrap_or("no reason recorded")
            ));
        }
    }
    let (x, y) = (steady_per_iter(of, o), steady_per_iter(nf, n));
    for (side, v) in [("OLD", &x), ("NEW", &y)] {
        if v.is_empty() {
            return Err(format!(
                "{side}: the result file holds no steady samples for this benchmark"
            ));
        }
    }
    let e = compare_stats::unpaired(&x, &y).map_err(|e| e.to_string())?;
    Ok(cmp::Comparison {
        name: o.name.clone(),
        ratio: e.ratio,
        ci95: [e.ci95.0, e.ci95.1],
        p_value: e.p_value,
        verdict: compare_stats::Verdict::NoChange,
        seconds: o.total_s + n.total_s,
        p_value_raw: e.p_value,
        sign_p_value: None,
        pairs: e.n,
        warmup_pairs: 0,
        warmup: None,
        iters_per_sample: [o.iters_per_sample, n.iters_per_sample],
        old_median_ns: vernier::stats::median(&x),
        new_median_ns: vernier::stats::median(&y),
        stop: "offline".into(),
        rewarm: None,
        pair_samples: None,
    })
}

fn compare_files(
    a: &CompareArgs,
    old: &ResultFile,
    new: &ResultFile,
    threshold: f64,
) -> Result<i32> {
    let filter = common(a).filter()?;
    let names = |f: &ResultFile| {
        f.benchmarks
            .iter()
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    };
    let (on, nn) = (names(old), names(new));
    let (selected, only_old, only_new) = match_names(&on, &nn, filter.as_ref());
    check_names(&selected, &on, &nn, filter.is_some())?;
    let mut file = ComparisonFile::new(Mode::Unpaired, threshold);
    file.old = a.old.display().to_string();
    file.new = a.new.display().to_string();
    file.only_old = only_old;
    file.only_new = only_new;
    warn_one_sided(&file);
    if old.machine.cpu_model != new.machine.cpu_model {
        eprintln!(
            "vernier: warning: the files come from different CPUs ({} vs {}): the ratios compare \
             machines as much as code",
            old.machine.cpu_model, new.machine.cpu_model
        );
    }
    for name in &selected {
        let o = old.benchmarks.iter().find(|b| &b.name == name).unwrap();
        let n = new.benchmarks.iter().find(|b| &b.name == name).unwrap();
        match compare_one_file_pair((old, o), (new, n)) {
            Ok(c) => file.comparisons.push(c),
            Err(error) => file.failed.push(cmp::Failure {
                name: name.clone(),
                error,
            }),
        }
    }
    file.finalize();
    write(&file, a.json.as_ref())?;
    finish(a, &file)
}

// ---------------------------------------------------------------------------------------------
// Two executables: paired, interleaved.

/// How to launch one side.
struct Launch {
    which: &'static str,
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl Launch {
    fn spawn(&self, ctl: &Control) -> Result<WorkerProcess, String> {
        WorkerProcess::spawn_with_env(&self.program, &self.args, &self.env, ctl)
            .map_err(|e| format!("{}: {e}", self.which))
    }
}

/// The coarser of two timers: it sets the shortest acceptable sample.
fn coarser(a: TimerInfo, b: TimerInfo) -> TimerInfo {
    let cost = |t: &TimerInfo| t.overhead_ns.max(t.resolution_ns);
    if cost(&b) > cost(&a) {
        b
    } else {
        a
    }
}

fn compare_programs(a: &CompareArgs, old: &Path, new: &Path, threshold: f64) -> Result<i32> {
    let c = common(a);
    let plan = c.plan()?;
    let filter = c.filter()?;
    if a.process.processes.is_some_and(|p| p != 1) {
        bail!(
            "--processes: vernier compare runs one OLD and one NEW process per comparison \
             (layout effects are measured by `vernier run --processes N`)"
        );
    }
    let mut ctl = a.process.control()?;
    let mut seed_rng = vernier::suite::Rng::new(
        a.seed
            .unwrap_or_else(|| std::process::id() as u64 ^ vernier::timer::monotonic_ns()),
    );
    // The same environment padding for both sides, so their stacks start alike.
    ctl.env_pad = a
        .process
        .env_pad
        .unwrap_or_else(|| seed_rng.next_u64() % crate::run::MAX_ENV_PAD);
    let old_l = Launch {
        which: "OLD",
        program: old.to_path_buf(),
        args: a.old_arg.clone(),
        env: parse_env(&a.old_env, "--old-env")?,
    };
    let new_l = Launch {
        which: "NEW",
        program: new.to_path_buf(),
        args: a.new_arg.clone(),
        env: parse_env(&a.new_env, "--new-env")?,
    };
    if old_l.program == new_l.program && old_l.args == new_l.args && old_l.env == new_l.env {
        eprintln!(
            "vernier: note: OLD and NEW are the same program with the same arguments and \
             environment: this measures the noise floor (expect no-change)"
        );
    }
    term::install_ctrlc();
    let ow = old_l.spawn(&ctl).map_err(anyhow::Error::msg)?;
    let nw = new_l.spawn(&ctl).map_err(anyhow::Error::msg)?;
    for (l, w) in [(&old_l, &ow), (&new_l, &nw)] {
        if w.hello.debug_build {
            eprintln!(
                "vernier: warning: {} ({}) is a debug build: its timings say little about \
                 optimised code (build with --release)",
                l.which,
                l.program.display()
            );
        }
    }
    let (on, nn) = (ow.names.clone(), nw.names.clone());
    let (selected, only_old, only_new) = match_names(&on, &nn, filter.as_ref());
    check_names(&selected, &on, &nn, filter.is_some())?;
    let mut file = ComparisonFile::new(Mode::Paired, threshold);
    file.old = old.display().to_string();
    file.new = new.display().to_string();
    file.only_old = only_old;
    file.only_new = only_new;
    warn_one_sided(&file);
    let timer = coarser(ow.hello.timer, nw.hello.timer);
    let mut pair_plan = PairPlan::across_processes(&plan, threshold);
    let mut workers = Some((ow, nw));
    let mut progress = term::ProgressLine::new();
    for name in &selected {
        if term::interrupted() {
            break;
        }
        // A side that failed on the previous benchmark is started afresh.
        let (mut ow, mut nw) = match workers.take() {
            Some(w) => w,
            None => match old_l.spawn(&ctl).and_then(|o| Ok((o, new_l.spawn(&ctl)?))) {
                Ok(w) => w,
                Err(error) => {
                    file.failed.push(cmp::Failure {
                        name: name.clone(),
                        error,
                    });
                    file.finalize();
                    write(&file, a.json.as_ref())?;
                    continue;
                }
            },
        };
        let (io, inew) = match (
            ow.names.iter().position(|n| n == name),
            nw.names.iter().position(|n| n == name),
        ) {
            (Some(i), Some(j)) => (i, j),
            _ => {
                file.failed.push(cmp::Failure {
                    name: name.clone(),
                    error: "a restarted worker no longer lists this benchmark".into(),
                });
                continue;
            }
        };
        pair_plan.seed = seed_rng.next_u64();
        let m = {
            let mut to = WorkerTarget {
                worker: &mut ow,
                bench: BenchRef::Index(io),
                batch_costs_ns: Vec::new(),
            };
            let mut tn = WorkerTarget {
                worker: &mut nw,
                bench: BenchRef::Index(inew),
                batch_costs_ns: Vec::new(),
            };
            cmp::measure_pair(
                &mut to,
                &mut tn,
                &MonotonicClock,
                &pair_plan,
                &timer,
                &mut |p| progress.update(name, p),
            )
        };
        progress.clear();
        if m.error.is_some() {
            // Which side died is in the error; both are restarted for the next benchmark.
            ow.kill();
            nw.kill();
        } else {
            workers = Some((ow, nw));
        }
        file.push_paired(name, &m, true);
        write(&file, a.json.as_ref())?;
    }
    if let Some((ow, nw)) = workers {
        ow.quit();
        nw.quit();
    }
    finish(a, &file)
}

/// `vernier demo`: run the suite's variant pairs in process, after its benchmarks; with
/// `--json`, the result file gains a `comparison` member (a comparison file, schema 1).
pub fn demo_pairs(
    suite: &mut vernier::Suite,
    results: &ResultFile,
    json: Option<&Path>,
) -> Result<Option<ComparisonFile>> {
    if suite.comparison_names().is_empty() || term::interrupted() {
        return Ok(None);
    }
    let mut progress = term::ProgressLine::new();
    let file = cmp::run_suite_pairs(
        suite,
        compare_stats::DEFAULT_THRESHOLD,
        &mut |ev| match ev {
            cmp::PairEvent::Progress { name, progress: p } => progress.update(name, p),
            cmp::PairEvent::Done { .. } => progress.clear(),
            cmp::PairEvent::Start { .. } => {}
        },
    );
    progress.clear();
    if let Some(path) = json {
        let mut v = serde_json::to_value(results)?;
        v["comparison"] = serde_json::to_value(&file)?;
        vernier::result::write_atomic(path, &serde_json::to_vec(&v)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_a_percentage() {
        assert_eq!(parse_threshold("0.5").unwrap(), 0.005);
        assert_eq!(parse_threshold("1%").unwrap(), 0.01);
        assert_eq!(parse_threshold("0").unwrap(), 0.0);
        assert!(parse_threshold("-1").is_err());
        assert!(parse_threshold("abc").is_err());
    }

    #[test]
    fn env_pairs() {
        let v = parse_env(&["A=1".into(), "B=x=y".into()], "--old-env").unwrap();
        assert_eq!(v[1], ("B".into(), "x=y".into()));
        assert!(parse_env(&["=1".into()], "--old-env").is_err());
        assert!(parse_env(&["A".into()], "--old-env").is_err());
    }

    #[test]
    fn names_are_matched_and_reported() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (sel, oo, on) = match_names(&s(&["a", "b", "c"]), &s(&["c", "d", "a"]), None);
        assert_eq!(sel, s(&["a", "c"]));
        assert_eq!(oo, s(&["b"]));
        assert_eq!(on, s(&["d"]));
        let re = regex::Regex::new("^c").unwrap();
        let (sel, _, _) = match_names(&s(&["a", "c"]), &s(&["c", "a"]), Some(&re));
        assert_eq!(sel, s(&["c"]));
        let e = check_names(&[], &s(&["a"]), &s(&["b"]), false).unwrap_err();
        assert!(e.to_string().contains("no benchmark in common"), "{e}");
    }
}
