//! The command line's shared argument types: the options `demo`, `run` and `compare` have in
//! common, `--save` and its store, and the parsing of `--filter`. Below the commands and the
//! runner, which read them.

use anyhow::{bail, Context as _, Result};
use clap::Args;
use std::path::PathBuf;
use vernier::counters::CounterSelection;

/// Options shared by `demo`, `run` and `compare`.
#[derive(Args, Clone, Debug)]
pub struct Common {
    /// Write the result file (schema 2, every raw sample) to FILE, atomically, after each
    /// benchmark.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report (plots of every benchmark) to FILE after the run.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub pick: Pick,
    /// Measurement budget per benchmark, in seconds (default 1, 0.5 in the demo; 0.2 with --quick).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub time: Option<f64>,
    /// A short run: about 0.2 s per benchmark.
    #[arg(long)]
    pub quick: bool,
    /// Performance counters read around each sample: perf event names separated by commas
    /// (cycles, instructions, branches, branch-misses, cache-references, cache-misses,
    /// L1-dcache-load-misses, task-clock, context-switches, cpu-migrations, page-faults),
    /// `default`, or `none`.
    #[arg(long, value_name = "LIST", default_value = "default")]
    pub counters: String,
    /// Keep samples interrupted by a context switch or a CPU migration in the estimates
    /// (by default they are excluded, and reported).
    #[arg(long)]
    pub keep_interrupted: bool,
    /// Deterministic mode: count instructions and simulated cache misses and branch
    /// mispredictions per iteration under valgrind (callgrind) instead of timing.
    #[arg(long)]
    pub instructions: bool,
    /// After the run, profile each benchmark's loop under callgrind (as `vernier profile`):
    /// its top functions under the table, and a flame graph per benchmark in the --html report.
    #[arg(long, conflicts_with = "instructions")]
    pub profile: bool,
    /// Verbose report: each benchmark's counters, σ_run/√N_iter, fit and warm-up, and every
    /// diagnostic's own paragraph; with `run`, also the disassembly of the measured loop of a
    /// benchmark flagged `optimized-away` (as `vernier asm` shows it).
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Under the table, what each column means and the machine's lines in full (the timer,
    /// the counters read and why others could not be): given on a machine's first run, and
    /// with this flag; otherwise one line of the machine's conditions.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub save: SaveArgs,
}

impl Common {
    pub fn plan(&self) -> Result<vernier::plan::Plan> {
        Ok(match (self.time, self.quick) {
            (Some(t), _) if t > 0.0 && t.is_finite() => {
                vernier::plan::Plan::with_budget((t * 1e9) as u64)
            }
            (Some(t), _) => bail!("--time {t}: expected a positive number of seconds"),
            (None, true) => vernier::plan::Plan::quick(),
            (None, false) => vernier::plan::Plan::default(),
        })
    }

    pub fn counters(&self) -> Result<CounterSelection> {
        CounterSelection::parse(&self.counters).map_err(anyhow::Error::msg)
    }

    /// The benchmarks `--filter` and `--shard` select (`None`: all).
    pub fn filter(&self) -> Result<Option<Selection>> {
        self.pick.selection()
    }
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

/// `--filter` and `--shard`: which benchmarks `demo`, `run` and `compare` measure.
#[derive(Args, Clone, Debug, Default)]
pub struct Pick {
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Only shard K of N: a stable part of the suite, by a hash of each benchmark's name (the
    /// N shards are disjoint and together the whole suite; adding a benchmark moves no other).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
}

impl Pick {
    /// The benchmarks `--filter` and `--shard` select (`None`: all).
    pub fn selection(&self) -> Result<Option<Selection>> {
        Ok(Selection::new(
            parse_filter(self.filter.as_deref())?,
            self.shard,
        ))
    }
}

/// Which benchmarks a run measures: those `--filter REGEX` matches, of shard `--shard K/N`.
#[derive(Clone, Debug)]
pub struct Selection {
    pub re: Option<regex::Regex>,
    pub shard: Option<Shard>,
}

impl Selection {
    /// A selection, when there is anything to select by.
    pub fn new(re: Option<regex::Regex>, shard: Option<Shard>) -> Option<Selection> {
        (re.is_some() || shard.is_some()).then_some(Selection { re, shard })
    }

    /// Whether the benchmark `name` is selected.
    pub fn is_match(&self, name: &str) -> bool {
        self.shard.is_none_or(|s| s.contains(name))
            && self.re.as_ref().is_none_or(|re| re.is_match(name))
    }

    /// The options that made this selection, for messages (`--filter 'x' --shard 1/2`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(re) = &self.re {
            parts.push(format!("--filter '{}'", re.as_str()));
        }
        if let Some(s) = &self.shard {
            parts.push(format!("--shard {s}"));
        }
        parts.join(" ")
    }
}

pub use vernier::shard::Shard;

/// A `--filter REGEX`, compiled; an invalid one is named.
pub fn parse_filter(filter: Option<&str>) -> Result<Option<regex::Regex>> {
    filter
        .map(|f| {
            regex::Regex::new(f)
                .with_context(|| format!("--filter '{f}' is not a valid regular expression"))
        })
        .transpose()
}

/// `--markdown FILE` and `--no-summary`: the summary for a pull request's comment, shared by
/// `compare`, `exec` and `history check`.
#[derive(Args, Clone, Debug, Default)]
pub struct MarkdownArgs {
    /// Write a GitHub-flavoured Markdown summary of the comparison to FILE, sized for a pull
    /// request's comment (at most 65,000 characters); with GITHUB_STEP_SUMMARY set, it is
    /// appended there too.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<std::path::PathBuf>,
    /// With --markdown: leave GITHUB_STEP_SUMMARY alone.
    #[arg(long, requires = "markdown")]
    pub no_summary: bool,
}

impl MarkdownArgs {
    /// Refuse a destination that cannot be written, before anything is measured.
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(p) = &self.markdown {
            vernier::result::check_destination(p).map_err(|e| anyhow::anyhow!("--markdown {e}"))?;
        }
        Ok(())
    }
}

/// `--save` and where to: shared by `run`, `demo` and `compare`.
#[derive(Args, Clone, Debug, Default)]
pub struct SaveArgs {
    /// Keep this run in the history store (after --json is written), with the git commit and
    /// branch of the current directory, the time and the machine's fingerprint.
    #[arg(long)]
    pub save: bool,
    /// The history store: sqlite:PATH, a file path, or postgres://USER@HOST:PORT/DATABASE
    /// (default: $VERNIER_DB, else ~/.local/share/vernier/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The commit to save the run under (default: `git rev-parse HEAD` here).
    #[arg(long, value_name = "COMMIT", requires = "save")]
    pub commit: Option<String>,
    /// The branch to save the run under (default: the current git branch here).
    #[arg(long, value_name = "BRANCH", requires = "save")]
    pub branch: Option<String>,
    /// The machine's name in the fleet (a runner's name or label), stored beside its
    /// fingerprint: runs of one name form one series (default: $VERNIER_MACHINE, else the
    /// fingerprint alone).
    #[arg(long, value_name = "NAME", requires = "save")]
    pub machine: Option<String>,
    /// The run's identity: a save with the same run id and machine replaces the benchmarks
    /// that run saved before (a retried job never doubles a point). Default: the CI's own
    /// (GitHub Actions' run id and attempt, Buildkite's build and retry, GitLab's pipeline).
    #[arg(long, value_name = "ID", requires = "save")]
    pub run_id: Option<String>,
}

/// The indices of the benchmarks `filter` selects among `names` (all without a filter); an
/// error when the program has none, or the filter matches none.
pub fn select(
    program: &std::path::Path,
    names: &[String],
    filter: Option<&Selection>,
) -> Result<Vec<usize>> {
    if names.is_empty() {
        bail!("{} registers no benchmark", program.display());
    }
    let selected: Vec<usize> = (0..names.len())
        .filter(|&i| filter.is_none_or(|re| re.is_match(&names[i])))
        .collect();
    if selected.is_empty() {
        bail!(
            "{} selects no benchmark; {} has: {}",
            filter.map(Selection::describe).unwrap_or_default(),
            program.display(),
            names.join(", ")
        );
    }
    Ok(selected)
}

/// The option and the negative number clap took for an unknown option, if that is what went
/// wrong (`--env-pad -5`).
pub fn negative_value(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<(String, String)> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let v = match e.get(clap::error::ContextKind::InvalidArg) {
        Some(clap::error::ContextValue::String(s)) if s.parse::<f64>().is_ok_and(|v| v < 0.0) => {
            s.clone()
        }
        _ => return None,
    };
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let at = args.iter().position(|a| *a == v)?;
    let opt = args[..at].last().filter(|o| o.starts_with("--"))?;
    Some((opt.clone(), v))
}

/// `--json` and `--html` destinations that can be written, and are not one file: checked
/// before anything is measured.
pub fn check_outputs(json: Option<&PathBuf>, html: Option<&PathBuf>) -> Result<()> {
    if let Some(path) = json {
        vernier::result::check_destination(path).map_err(|e| anyhow::anyhow!("--json {e}"))?;
    }
    if let Some(path) = html {
        vernier::result::check_destination(path).map_err(|e| anyhow::anyhow!("--html {e}"))?;
        if json == Some(path) {
            bail!(
                "--html {0} and --json {0} name the same file: the report would replace the \
                 result; give the report its own name, such as report.html",
                path.display()
            );
        }
    }
    Ok(())
}

/// The command line that starts this CLI again, when it is not this executable alone (set once
/// by [`crate::main_with_self_command`]).
static SELF_COMMAND: std::sync::OnceLock<Vec<std::ffi::OsString>> = std::sync::OnceLock::new();

/// Records the program and leading arguments that start this CLI again (empty: the current
/// executable).
pub fn set_self_command(command: Vec<std::ffi::OsString>) {
    if !command.is_empty() {
        let _ = SELF_COMMAND.set(command);
    }
}

/// The program and leading arguments that start this CLI again: the current executable, or
/// what [`set_self_command`] was given.
pub fn self_command() -> Result<(PathBuf, Vec<std::ffi::OsString>)> {
    match SELF_COMMAND.get().and_then(|c| c.split_first()) {
        Some((program, args)) => Ok((PathBuf::from(program), args.to_vec())),
        None => Ok((
            std::env::current_exe().context("cannot find this executable")?,
            Vec::new(),
        )),
    }
}

/// Each argument of a command line with any PostgreSQL URL's password replaced by `***` (for
/// what a report shows of the command that made it).
pub fn redact_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    args.into_iter()
        .map(|a| match a.find("postgres") {
            Some(i) => format!("{}{}", &a[..i], redact(&a[i..])),
            None => a,
        })
        .collect()
}

/// A PostgreSQL URL with any password replaced by `***`.
pub fn redact(url: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((u, q)) => {
            let pairs: Vec<String> = q
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => p.to_string(),
                })
                .collect();
            (u, format!("?{}", pairs.join("&")))
        }
        None => (url, String::new()),
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return format!("{url}{query}");
    };
    let (auth, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match auth.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((u, _)) => format!("{scheme}://{u}:***@{host}{tail}{query}"),
            None => format!("{url}{query}"),
        },
        None => format!("{url}{query}"),
    }
}

/// The smallest change of an exact count (instructions per iteration, or per run) that is a
/// change: half an instruction, so that one instruction more is one and the same code is not.
/// The default of `--instruction-threshold`, and the threshold of a history's change points in
/// counts.
pub const INSTRUCTION_THRESHOLD: f64 = 0.5;

/// `--instruction-threshold`, checked: a positive number of instructions per `per`.
pub fn instruction_threshold(t: f64, per: &str) -> anyhow::Result<f64> {
    if !(t.is_finite() && t > 0.0) {
        anyhow::bail!(
            "--instruction-threshold {t}: expected a positive number of instructions per {per} \
             (the default {INSTRUCTION_THRESHOLD}: one instruction more is a change)"
        );
    }
    Ok(t)
}
