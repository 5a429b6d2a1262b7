//! `vernier compare OLD NEW`: is NEW faster or slower than OLD?
//!
//! OLD and NEW are either two executables (two builds of a benchmark program, each a worker)
//! or two result files (`vernier run --json`, `vernier demo --json`); which one is detected
//! from the files themselves. Executables are compared live over several OLD/NEW process pairs
//! (`crate::runner::pairs`): benchmarks are paired by name, each pair alternates batches between its
//! two processes on one CPU so that drift cancels (`vernier::measure::pairs`), and the interval is
//! taken over the pairs. Result files are compared offline from each file's own interval,
//! which leaves the comparison exposed to whatever changed on the machine between the two
//! runs; the output says so.

mod baseline;
mod gbench;
use crate::args::Common;
use crate::runner::code;
use crate::runner::link::{Launch, ProcessLauncher};
use crate::runner::pairs::{self, PairsConfig};
use crate::runner::processes::ProcessArgs;
use crate::term;
use anyhow::{bail, Context as _, Result};
use clap::Args;
use gbench as gb;
use std::ffi::OsString;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use vernier::measure::pairs::{default_process_pairs, Side, MIN_PROCESS_PAIRS};
use vernier::measure::MonotonicClock;
use vernier::report::compare::table_fitted;
use vernier::result::comparison::{Code, ComparisonFile, Failure};
use vernier::result::ResultFile;
use vernier::stats::{self, compare::Mode};

#[derive(Args, Clone, Debug)]
pub struct CompareArgs {
    /// OLD: a benchmark executable (a worker), or a result file (JSON from `vernier run
    /// --json` or `vernier demo --json`).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// NEW: of the same kind as OLD. Ratios are NEW/OLD: above 1, NEW is slower. With
    /// --baseline, the one argument given is NEW.
    #[arg(value_name = "NEW", required_unless_present = "baseline")]
    pub new: Option<PathBuf>,
    /// Compare NEW (a benchmark executable, run as `vernier run` does, or a result file)
    /// against the run stored (`--save`) at this commit or branch: unpaired.
    #[arg(long, value_name = "COMMIT|BRANCH")]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub save: crate::args::SaveArgs,
    /// Write the comparison (schema 1, with every pair) to FILE, after each benchmark.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report of the comparison (plots of the pairs) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub pick: crate::args::Pick,
    /// Measurement budget per benchmark, in seconds, both sides and all process pairs together
    /// (default 2 for executables; 0.2 with --quick). A benchmark stops earlier once its
    /// interval over the pairs is settled against the threshold.
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
    /// Seed of the random choices: the order of OLD and NEW within each round, the first CPU,
    /// which side starts first, the environment paddings (default: from the clock).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub process: ProcessArgs,
}

impl CompareArgs {
    /// NEW's path (given unless --baseline is).
    pub fn new_path(&self) -> &Path {
        self.new.as_deref().unwrap_or(Path::new(""))
    }
}

/// What an OLD or NEW argument turned out to be.
enum Input {
    Results(Box<ResultFile>),
    Program(PathBuf),
    /// Google Benchmark's JSON (compared unpaired: `gbench.rs`).
    Gbench(Box<gbench::GbFile>),
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
                if let Some(g) = gbench::load_if(&path).with_context(|| which.to_string())? {
                    return Ok(Input::Gbench(Box::new(g)));
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let v: Option<serde_json::Value> = serde_json::from_str(&text).ok();
                if v.as_ref()
                    .is_some_and(|v| crate::files::kind(v) == crate::files::Kind::Comparison)
                {
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
    if let Some(reference) = &a.baseline {
        return baseline::compare_baseline(a, reference, threshold);
    }
    let old = classify("OLD", &a.old)?;
    let new = classify("NEW", a.new_path())?;
    match (old, new) {
        (Input::Results(o), Input::Results(n)) => {
            let code = compare_files(a, &o, &n, threshold)?;
            crate::history::save_if_asked(&a.save, &n, "compare", a.pick.shard)?;
            Ok(code)
        }
        (Input::Program(_), Input::Program(_)) if a.save.save => bail!(
            "--save keeps a whole result, and a live comparison of two executables makes none: \
             save each side with `vernier run --save -- PROGRAM`, or compare against a saved \
             run with `vernier compare --baseline COMMIT NEW --save`"
        ),
        (Input::Program(o), Input::Program(n)) => compare_programs(a, &o, &n, threshold),
        (Input::Gbench(o), Input::Gbench(n)) => {
            gb::compare(a, gb::Side::Gbench(&o), gb::Side::Gbench(&n), threshold)
        }
        (Input::Gbench(o), Input::Results(n)) => {
            gb::compare(a, gb::Side::Gbench(&o), gb::Side::Vernier(&n), threshold)
        }
        (Input::Results(o), Input::Gbench(n)) => {
            gb::compare(a, gb::Side::Vernier(&o), gb::Side::Gbench(&n), threshold)
        }
        (Input::Gbench(_), Input::Program(_)) | (Input::Program(_), Input::Gbench(_)) => bail!(
            "a Google Benchmark file can be compared with a result file or another Google \
             Benchmark file, not with an executable: run it first (vernier run --json FILE -- \
             PROGRAM)"
        ),
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

pub(crate) fn common(a: &CompareArgs) -> Common {
    Common {
        json: None,
        html: None,
        pick: a.pick.clone(),
        time: a.time,
        quick: a.quick,
        // Comparisons time the pairs; counters are not read there.
        counters: "none".into(),
        keep_interrupted: false,
        instructions: false,
        verbose: false,
        save: Default::default(),
    }
}

/// Names in both lists (in OLD's order) selected by the filter, and the names only one has.
pub(crate) fn match_names(
    old: &[String],
    new: &[String],
    filter: Option<&crate::args::Selection>,
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

pub(crate) fn check_names(
    selected: &[String],
    old_names: &[String],
    new_names: &[String],
    filter: bool,
) -> Result<()> {
    if selected.is_empty() {
        let in_both = old_names.iter().any(|n| new_names.contains(n));
        if filter && in_both {
            bail!("--filter / --shard select no benchmark that OLD and NEW both have");
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

pub(crate) fn warn_one_sided(file: &ComparisonFile) {
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

pub(crate) fn finish(a: &CompareArgs, file: &ComparisonFile) -> Result<i32> {
    print!(
        "{}",
        table_fitted(file, vernier::report::Render::for_stdout(false))
    );
    if !file.only_old.is_empty() || !file.only_new.is_empty() {
        println!(
            "not compared: only in OLD: {}; only in NEW: {}",
            list_or_none(&file.only_old),
            list_or_none(&file.only_new)
        );
    }
    for c in &file.comparisons {
        if let Some(words) = vernier::report::memory::comparison_words(c) {
            println!("{}: {words}", c.name);
        }
    }
    if let Some(p) = &a.json {
        println!("comparison written to {}", p.display());
    }
    let html_failed = a.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_comparison(p, file);
        !crate::html::write_or_warn(p, written, a.json.as_deref())
    });
    if term::interrupted() {
        eprintln!("vernier: interrupted; the benchmarks compared before Ctrl-C are kept");
        return Ok(130);
    }
    if a.fail_on_regression {
        let placed: Vec<&str> = file
            .comparisons
            .iter()
            .filter(|c| c.verdict == stats::compare::Verdict::Slower && c.code == Some(Code::Same))
            .map(|c| c.name.as_str())
            .collect();
        if !placed.is_empty() {
            eprintln!(
                "vernier: note: not counted as regressions, their code is the same in OLD and \
                 NEW (the difference is where it sits): {}",
                placed.join(", ")
            );
        }
        if file.has_regression() {
            let slower: Vec<&str> = file.regressions().map(|c| c.name.as_str()).collect();
            eprintln!(
                "vernier: regression (--fail-on-regression): {}",
                slower.join(", ")
            );
            return Ok(2);
        }
    }
    Ok(if file.failed.is_empty() && !html_failed {
        0
    } else {
        1
    })
}

// ---------------------------------------------------------------------------------------------
// Two result files: unpaired (`vernier::unpaired`).

fn kind(mode: &str) -> String {
    match mode {
        "time" => "times".into(),
        "instructions" => "instruction counts".into(),
        m => format!("'{m}' figures"),
    }
}

pub(crate) fn compare_files(
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
    if old.mode != new.mode {
        bail!(
            "OLD holds {} and NEW {}: a comparison needs files of the same kind (both \
             `vernier run --json`, or both `vernier run --instructions --json`)",
            kind(&old.mode),
            kind(&new.mode)
        );
    }
    let (on, nn) = (names(old), names(new));
    let (selected, only_old, only_new) = match_names(&on, &nn, filter.as_ref());
    check_names(&selected, &on, &nn, filter.is_some())?;
    let mut file = ComparisonFile::new(Mode::Unpaired, threshold);
    file.old = a.old.display().to_string();
    file.new = a.new_path().display().to_string();
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
        match vernier::unpaired::compare((old, o), (new, n)) {
            Ok(mut c) => {
                c.memory = crate::runner::memory::change(o.memory.as_ref(), n.memory.as_ref());
                file.comparisons.push(c)
            }
            Err(error) => file.failed.push(Failure {
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

/// The default budget per benchmark of a live comparison, over all its process pairs.
pub const DEFAULT_TIME_S: f64 = 2.0;

/// How many process pairs are allowed (`--processes`, or the default for the budget) and the
/// CPUs they are pinned to in turn (those given, or else those this process may use).
fn pairs_and_cpus(
    a: &CompareArgs,
    plan: &vernier::plan::Plan,
    ctl: &crate::runner::worker::Control,
) -> Result<(usize, Vec<usize>)> {
    let pairs = match a.process.processes {
        Some(n) if n < MIN_PROCESS_PAIRS => bail!(
            "--processes {n}: a comparison needs at least {} OLD/NEW process pairs, to estimate \
             how much pairs differ from one another (the default fits --time: {} pairs for {} s)",
            MIN_PROCESS_PAIRS,
            default_process_pairs(plan.time_budget_ns),
            plan.time_budget_ns as f64 / 1e9
        ),
        Some(n) => n,
        None => default_process_pairs(plan.time_budget_ns),
    };
    // The pairs are pinned in turn to the CPUs given, or else to those this process may use.
    let cpus = if ctl.cpus.is_empty() {
        crate::host::affinity::allowed_cpus().iter().collect()
    } else {
        ctl.cpus.clone()
    };
    Ok((pairs, cpus))
}

/// The line after a live comparison: the pairs used of those allowed, the CPUs, the wall time.
fn say_pairs_used(file: &ComparisonFile, cfg: &PairsConfig, started: std::time::Instant) {
    let pairs_used = file
        .comparisons
        .iter()
        .filter_map(|c| c.spread.map(|s| s.process_pairs))
        .max()
        .unwrap_or(0);
    println!(
        "{} process pair(s) of {} allowed, CPUs {}; wall time {:.1} s",
        pairs_used,
        cfg.pairs,
        if cfg.cpus.is_empty() {
            "unpinned".to_string()
        } else {
            cfg.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        },
        started.elapsed().as_secs_f64()
    );
}

fn compare_programs(a: &CompareArgs, old: &Path, new: &Path, threshold: f64) -> Result<i32> {
    let mut c = common(a);
    if c.time.is_none() && !c.quick {
        c.time = Some(DEFAULT_TIME_S);
    }
    let plan = c.plan()?;
    let filter = c.filter()?;
    let ctl = a.process.control()?;
    let (pairs, cpus) = pairs_and_cpus(a, &plan, &ctl)?;
    let seed = a
        .seed
        .unwrap_or_else(|| std::process::id() as u64 ^ vernier::timer::monotonic_ns());
    let mut launcher = ProcessLauncher {
        old: Launch {
            which: Side::Old,
            program: old.to_path_buf(),
            args: a.old_arg.clone(),
            env: parse_env(&a.old_env, "--old-env")?,
        },
        new: Launch {
            which: Side::New,
            program: new.to_path_buf(),
            args: a.new_arg.clone(),
            env: parse_env(&a.new_env, "--new-env")?,
        },
        ctl,
    };
    let same = launcher.old.program == launcher.new.program
        && launcher.old.args == launcher.new.args
        && launcher.old.env == launcher.new.env;
    if same {
        eprintln!(
            "vernier: note: OLD and NEW are the same program with the same arguments and \
             environment: this measures the noise floor (the spread between process pairs and \
             the smallest change a comparison can detect here)"
        );
    }
    let cfg = PairsConfig {
        pairs,
        plan,
        threshold,
        cpus,
        env_pad: a.process.env_pad,
        max_env_pad: crate::runner::processes::MAX_ENV_PAD,
        seed,
    };
    let mut file = ComparisonFile::new(Mode::Paired, threshold);
    file.old = old.display().to_string();
    file.new = new.display().to_string();
    term::install_ctrlc();
    let started = std::time::Instant::now();
    let mut progress = term::ProgressLine::new();
    let mut warned = false;
    let mut label = String::new();
    let json = a.json.clone();
    let mut only = (Vec::new(), Vec::new());
    let outcome = pairs::run(
        &mut launcher,
        &MonotonicClock,
        &cfg,
        &mut file,
        &mut |on, nn| {
            let (selected, only_old, only_new) = match_names(on, nn, filter.as_ref());
            check_names(&selected, on, nn, filter.is_some()).map_err(|e| e.to_string())?;
            only = (only_old, only_new);
            Ok(selected)
        },
        &term::interrupted,
        &mut |ev| match ev {
            pairs::Event::PairStarted { setup, old, new } => {
                label = format!(
                    "pair {}/{}{}",
                    setup.index + 1,
                    cfg.pairs,
                    setup.cpu.map(|c| format!(" cpu {c}")).unwrap_or_default()
                );
                if !warned {
                    warned = true;
                    for (which, l, p) in [
                        ("OLD", old, &a.old),
                        ("NEW", new, &a.new_path().to_path_buf()),
                    ] {
                        if l.debug_build() {
                            progress.clear();
                            eprintln!(
                                "vernier: warning: {which} ({}) is a debug build: its timings say \
                                 little about optimised code (build with --release)",
                                p.display()
                            );
                        }
                    }
                }
            }
            pairs::Event::Progress { name, progress: p } => {
                progress.update(&format!("{name} ({label})"), p)
            }
            pairs::Event::PairDone { file, .. } => {
                progress.clear();
                if let Some(p) = &json {
                    // Written after each pair, so an interrupted run keeps what it measured.
                    let _ = file.write_atomic(p);
                }
            }
        },
    );
    progress.clear();
    outcome.map_err(anyhow::Error::msg)?;
    let same_inputs =
        launcher.old.args == launcher.new.args && launcher.old.env == launcher.new.env;
    mark_code(&mut file, (old, &a.old_arg), (new, &a.new_arg), same_inputs);
    crate::runner::memory::count_comparisons(
        &mut file,
        [&launcher.old, &launcher.new],
        &launcher.ctl,
    );
    file.only_old = only.0;
    file.only_new = only.1;
    warn_one_sided(&file);
    write(&file, a.json.as_ref())?;
    say_pairs_used(&file, &cfg, started);
    if same {
        print_noise_floor(&file);
    }
    finish(a, &file)
}

/// Whether each compared benchmark's measured code is the same in OLD and NEW (read after the
/// measurement, so that it does not disturb it). Sides run with different arguments or
/// environment are not compared: what each measures may differ by its inputs.
fn mark_code(
    file: &mut ComparisonFile,
    old: (&Path, &[OsString]),
    new: (&Path, &[OsString]),
    same_inputs: bool,
) {
    if file.comparisons.is_empty() || term::interrupted() {
        return;
    }
    let names: Vec<String> = file.comparisons.iter().map(|c| c.name.clone()).collect();
    let checks = if same_inputs {
        code::compare_code(old, new, &names)
    } else {
        let why = "OLD and NEW run with different arguments or environment: what each measures \
                   may differ by its inputs, so the code is not compared";
        names
            .iter()
            .map(|n| (n.clone(), code::unknown(why.into())))
            .collect()
    };
    for (c, (_, (code, detail))) in file.comparisons.iter_mut().zip(checks) {
        c.code = Some(code);
        c.code_detail = Some(detail);
    }
}

/// `compare a a`: the noise floor of this machine, per benchmark.
fn print_noise_floor(file: &ComparisonFile) {
    println!("noise floor (OLD and NEW are the same program):");
    for c in &file.comparisons {
        if let (Some(s), Some(d)) = (c.spread, c.smallest_detectable) {
            println!(
                "  {}: spread between process pairs (sd) {:.2}%, within a pair (se) {:.2}%; \
                 smallest detectable change {:.2}%",
                c.name,
                s.spread_sd * 100.0,
                s.within_se * 100.0,
                d * 100.0
            );
        }
    }
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
        let re = crate::args::Selection::new(Some(regex::Regex::new("^c").unwrap()), None);
        let (sel, _, _) = match_names(&s(&["a", "c"]), &s(&["c", "a"]), re.as_ref());
        assert_eq!(sel, s(&["c"]));
        let e = check_names(&[], &s(&["a"]), &s(&["b"]), false).unwrap_err();
        assert!(e.to_string().contains("no benchmark in common"), "{e}");
    }
}
