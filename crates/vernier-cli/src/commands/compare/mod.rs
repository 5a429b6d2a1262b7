//! `vernier compare OLD NEW`: is NEW faster or slower than OLD?
//!
//! OLD and NEW are either two executables (two builds of a benchmark program, each a worker)
//! or two result files (`vernier run --json`, `vernier demo --json`); which one is detected
//! from the files themselves. Executables are compared live over several OLD/NEW process pairs
//! (`crate::runner::compare`): benchmarks are paired by name, each pair alternates batches between its
//! two processes on one CPU so that drift cancels (`vernier::measure::compare`), and the interval is
//! taken over the pairs. Result files are compared offline from each file's own interval,
//! which leaves the comparison exposed to whatever changed on the machine between the two
//! runs; the output says so.

mod baseline;
mod files;
mod gbench;
mod instructions;
mod profile;
mod programs;
use crate::args::{parse_threshold, Common};
use crate::runner::processes::ProcessArgs;
use crate::term;
use anyhow::{bail, Context as _, Result};
use clap::Args;
use gbench as gb;
use std::ffi::OsString;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use vernier::report::compare::table_fitted;
use vernier::result::comparison::{Code, ComparisonFile};
use vernier::result::ResultFile;
use vernier::stats;

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
    /// Write the comparison file (schema 1, with every pair) to FILE, after each benchmark.
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
    /// Compare instruction counts under callgrind instead of time (two executables): exact
    /// and repeatable, so the verdict needs no interval; a benchmark is slower or faster when
    /// its instructions per iteration differ by at least --instruction-threshold.
    #[arg(long)]
    pub instructions: bool,
    /// With --instructions: the change in instructions per iteration that counts (one more
    /// instruction per iteration is a change at the default).
    #[arg(long, value_name = "N", default_value_t = crate::args::INSTRUCTION_THRESHOLD, requires = "instructions", allow_negative_numbers = true)]
    pub instruction_threshold: f64,
    /// After the verdicts, profile both programs under callgrind and name, per benchmark, the
    /// functions whose instructions per iteration changed most (the one that grew most under
    /// a `slower` verdict); with --html, a differential flame graph per benchmark.
    #[arg(long)]
    pub profile: bool,
    /// With --profile: sample each side's loops with perf instead of counting them under
    /// callgrind; each function's time per iteration (its share of the samples times its
    /// side's median), with its sampling error.
    #[arg(long, requires = "profile")]
    pub sampled: bool,
    /// With --sampled: how long each benchmark of each side is sampled, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::runner::sampled::DEFAULT_SECONDS, requires = "sampled")]
    pub sample_time: f64,
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
    #[command(flatten)]
    pub md: crate::args::MarkdownArgs,
    /// OLD and NEW are command lines, run as whole programs and compared paired and
    /// interleaved as `vernier exec OLD NEW` compares them (with --time, --quick,
    /// --threshold, --fail-on-regression, --json, --html, --cpu, --no-aslr, --save).
    #[arg(long)]
    pub exec: bool,
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

/// A bare name (no '/') that is not a file here is looked up in PATH, as a shell would.
fn resolve(path: &Path) -> PathBuf {
    if path.exists() || path.to_string_lossy().contains('/') {
        return path.to_path_buf();
    }
    crate::runner::processes::find_on_path(path).unwrap_or_else(|| path.to_path_buf())
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
    a.md.check()?;
    if a.instructions && a.baseline.is_some() {
        bail!(
            "--instructions compares two executables counted now; against a stored run, \
             compare two counted result files instead (`vernier run --instructions --json`)"
        );
    }
    if let Some(reference) = &a.baseline {
        return baseline::compare_baseline(a, reference, threshold);
    }
    let old = classify("OLD", &a.old)?;
    let new = classify("NEW", a.new_path())?;
    if a.profile && !(matches!(old, Input::Program(_)) && matches!(new, Input::Program(_))) {
        bail!(
            "--profile profiles two executables under callgrind; OLD and NEW must both be \
             programs (a result file keeps no profile: make one with `vernier profile --json`)"
        );
    }
    if a.sampled {
        // Before the timed comparison, not after it.
        crate::runner::sampled::prepare("--sample-time", a.sample_time)?;
    }
    if a.instructions {
        return match (old, new) {
            (Input::Program(o), Input::Program(n)) if !a.save.save => {
                instructions::compare_instructions(a, &o, &n, a.instruction_threshold)
            }
            (Input::Program(_), Input::Program(_)) => bail!(
                "--save keeps a whole result, and a comparison of two executables makes none: \
                 save each side with `vernier run --instructions --save -- PROGRAM`"
            ),
            _ => bail!(
                "--instructions counts two executables (workers) under callgrind; OLD and NEW \
                 must both be programs (result files are compared without --instructions)"
            ),
        };
    }
    match (old, new) {
        (Input::Results(o), Input::Results(n)) => {
            let code = files::compare_files(a, &o, &n, threshold)?;
            files::save_new(a, &n)?;
            Ok(code)
        }
        (Input::Program(_), Input::Program(_)) if a.save.save => bail!(
            "--save keeps a whole result, and a live comparison of two executables makes none: \
             save each side with `vernier run --save -- PROGRAM`, or compare against a saved \
             run with `vernier compare --baseline COMMIT NEW --save`"
        ),
        (Input::Program(o), Input::Program(n)) => programs::compare_programs(a, &o, &n, threshold),
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

/// The `KEY=VALUE` pairs of `--old-env` or `--new-env` (`flag`), for a side's environment.
pub(crate) fn parse_env(list: &[String], flag: &str) -> Result<Vec<(OsString, OsString)>> {
    list.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.into(), v.into())),
            _ => bail!("{flag} '{kv}': expected KEY=VALUE"),
        })
        .collect()
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
        profile: false,
        verbose: false,
        explain: false,
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

pub(crate) fn write(file: &ComparisonFile, path: Option<&PathBuf>) -> Result<()> {
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
    conclude(a, file)
}

/// After a comparison's table: the benchmarks not compared, the memory changes, the files
/// written, and the exit status (2 for a regression with --fail-on-regression).
pub(crate) fn conclude(a: &CompareArgs, file: &ComparisonFile) -> Result<i32> {
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
        if let Some([old, new]) = c.rates() {
            println!("{}: rate {old} → {new}", c.name);
        }
    }
    if let Some(p) = &a.json {
        println!("comparison written to {}", p.display());
    }
    let html_failed = a.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_comparison(p, file);
        !crate::html::write_or_warn(p, written, a.json.as_deref())
    });
    if let Some(p) = &a.md.markdown {
        write_markdown(a, file, p)?;
    }
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

/// `--markdown`: the comparison's summary for a pull request, with the machine's state (of this
/// machine for a live comparison, as each result file recorded it for one of files).
fn write_markdown(a: &CompareArgs, file: &ComparisonFile, path: &Path) -> Result<()> {
    let (compared, untuned) = match file.mode {
        // Counts do not move with the machine's state.
        stats::compare::Mode::Instructions => ("programs, instructions counted in", None),
        stats::compare::Mode::Paired => (
            "programs",
            crate::host::audit::untuned_hint(&crate::host::root::SysRoot::from_option(None)),
        ),
        stats::compare::Mode::Unpaired => {
            let system = |p: &Path| -> Option<serde_json::Value> {
                let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
                v.get("system").cloned()
            };
            let lines: Vec<String> = [
                ("OLD's machine was", &a.old),
                ("NEW's machine was", &a.new_path().to_path_buf()),
            ]
            .into_iter()
            .filter_map(|(which, p)| crate::markdown::untuned_line(which, &system(p)?))
            .collect();
            (
                "result files",
                (!lines.is_empty()).then(|| lines.join("; ")),
            )
        }
    };
    let summary = crate::markdown::of_comparison(file, compared, untuned);
    let md = crate::markdown::render(&summary, crate::markdown::MAX_CHARS);
    crate::markdown::write(path, &md, a.md.no_summary)?;
    println!("summary (Markdown) written to {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_pairs() {
        let v = parse_env(&["A=1".into(), "B=x=y".into()], "--old-env").unwrap();
        assert_eq!(v[1], ("B".into(), "x=y".into()));
        assert!(parse_env(&["=1".into()], "--old-env").is_err());
        assert!(parse_env(&["A".into()], "--old-env").is_err());
    }

    #[test]
    fn threshold_is_a_percentage() {
        assert_eq!(parse_threshold("0.5").unwrap(), 0.005);
        assert_eq!(parse_threshold("1%").unwrap(), 0.01);
        assert_eq!(parse_threshold("0").unwrap(), 0.0);
        assert!(parse_threshold("-1").is_err());
        assert!(parse_threshold("abc").is_err());
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
