//! `vernier`: the runner, as a library. Reads a command line, then runs one pipeline:
//! target → plan → measure → analyze → result → report. The `vernier` binary
//! (`main.rs`) and the Python package's console command both call [`main_with_args`].

mod commands;
mod history;
mod html;
mod runner;
mod term;

// The commands and the runner's parts by their short names (`crate::run`, `crate::worker`).
use commands::{analyze, asm, compare, demo, export, load, run, sweep, system};
use runner::{cold, counted, gbench, instructions, link, pairs, worker};
use vernier::result::known as known_speed;

use anyhow::{bail, Context as _, Result};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use vernier::counters::CounterSelection;
use vernier::Options;
use vernier::Suite;

#[derive(Parser)]
#[command(
    name = "vernier",
    version,
    about = "Precision micro-benchmarking: figures down to the clock's resolution, with how far to trust them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The built-in suite: the seeds' experiments, measured in this process.
    Demo(Common),
    /// Drive a benchmark executable (C++ header or Rust crate) as a worker.
    Run(run::RunArgs),
    /// Is NEW faster than OLD? Two executables (live, paired, interleaved) or two result files.
    Compare(compare::CompareArgs),
    /// Re-derive every figure of a result file from its raw samples (and check them against
    /// the stored ones).
    Analyze(analyze::AnalyzeArgs),
    /// A result file in the formats other tools read: Google Benchmark's JSON, Bencher's
    /// BMF, CSV, pyperf's JSON.
    Export(export::ExportArgs),
    /// A self-contained HTML report (plots) of result, comparison or history files.
    Report(html::ReportArgs),
    /// Audit, tune, undo, or measure the machine's noise floor.
    System(system::SystemArgs),
    /// A bounded background load generator for robustness experiments.
    Load(load::LoadArgs),
    /// The stored runs (`--save`) over commits, and where each benchmark shifted; `history
    /// check` exits 2 when the newest commit sits in a new, slower segment.
    History(history::command::HistoryArgs),
    /// Seed 003's layout experiment: one worker process per environment size (ASLR off), each
    /// benchmark's median per padding, its swing and period.
    Sweep(sweep::SweepArgs),
    /// The disassembly of each benchmark's measured loop (objdump), its loop body marked.
    Asm(asm::AsmArgs),
    /// Start a worker with the given process controls and print what it reports about itself
    /// (CPU, environment size, stack address, ASLR): a check of --cpu, --env-pad, --no-aslr.
    #[command(hide = true)]
    Probe(run::RunArgs),
    /// Serve the demo suite over the worker protocol (what `demo --instructions` runs).
    #[command(name = "__demo-worker", hide = true)]
    DemoWorker,
}

/// Options shared by `demo`, `run` and `compare`.
#[derive(Args, Clone, Debug)]
pub struct Common {
    /// Write the result (schema 1, every raw sample) to FILE, atomically, after each benchmark.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report (plots of every benchmark) to FILE after the run.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    filter: Option<String>,
    /// Measurement budget per benchmark, in seconds (default 1; 0.2 with --quick).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    time: Option<f64>,
    /// A short run: about 0.2 s per benchmark.
    #[arg(long)]
    quick: bool,
    /// Performance counters read around each sample: perf event names separated by commas
    /// (cycles, instructions, branches, branch-misses, cache-references, cache-misses,
    /// L1-dcache-load-misses, task-clock, context-switches, cpu-migrations, page-faults),
    /// `default`, or `none`.
    #[arg(long, value_name = "LIST", default_value = "default")]
    counters: String,
    /// Keep samples interrupted by a context switch or a CPU migration in the estimates
    /// (by default they are excluded, and reported).
    #[arg(long)]
    keep_interrupted: bool,
    /// Deterministic mode: count instructions and simulated cache misses and branch
    /// mispredictions per iteration under valgrind (callgrind) instead of timing.
    #[arg(long)]
    instructions: bool,
    /// Verbose report: each benchmark's counters, σ_run/√N_iter, fit and warm-up, and every
    /// diagnostic's own paragraph; with `run`, also the disassembly of the measured loop of a
    /// benchmark flagged `optimized-away` (as `vernier asm` shows it).
    #[arg(short = 'v', long)]
    verbose: bool,
    #[command(flatten)]
    save: history::SaveArgs,
}

impl Common {
    fn plan(&self) -> Result<vernier::plan::Plan> {
        Ok(match (self.time, self.quick) {
            (Some(t), _) if t > 0.0 && t.is_finite() => {
                vernier::plan::Plan::with_budget((t * 1e9) as u64)
            }
            (Some(t), _) => bail!("--time {t}: expected a positive number of seconds"),
            (None, true) => vernier::plan::Plan::quick(),
            (None, false) => vernier::plan::Plan::default(),
        })
    }

    fn counters(&self) -> Result<CounterSelection> {
        CounterSelection::parse(&self.counters).map_err(anyhow::Error::msg)
    }

    fn filter(&self) -> Result<Option<regex::Regex>> {
        parse_filter(self.filter.as_deref())
    }
}

/// A `--filter REGEX`, compiled; an invalid one is named.
pub fn parse_filter(filter: Option<&str>) -> Result<Option<regex::Regex>> {
    filter
        .map(|f| {
            regex::Regex::new(f)
                .with_context(|| format!("--filter '{f}' is not a valid regular expression"))
        })
        .transpose()
}

/// Ends the process quietly when stdout is a closed pipe (see the body); call once, first.
pub fn install_pipe_hook() {
    // Output piped into a command that stops reading (`vernier analyze r.json | head`) ends
    // the process quietly, as a shell expects of a Unix tool (status 141, as if by SIGPIPE),
    // instead of a panic in println!. SIGPIPE itself stays ignored: a worker that dies must
    // give an error on its pipe, not kill the runner.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info)
    }));
}

/// The command line that starts this CLI again, when it is not this executable alone (set once
/// by [`main_with_self_command`]).
static SELF_COMMAND: std::sync::OnceLock<Vec<std::ffi::OsString>> = std::sync::OnceLock::new();

/// Runs as [`main_with_args`] does, for a front end whose executable is not the CLI itself:
/// `self_command` is the program and the arguments that start this same CLI (from the Python
/// package, `[python, -m, vernier]`), which the commands that start themselves again (the
/// demo's worker, a comparison against a baseline) run instead of the current executable.
pub fn main_with_self_command<I, T>(args: I, self_command: Vec<std::ffi::OsString>) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    if !self_command.is_empty() {
        let _ = SELF_COMMAND.set(self_command);
    }
    main_with_args(args)
}

/// The program and leading arguments that start this CLI again: the current executable, or
/// what [`main_with_self_command`] was given.
pub(crate) fn self_command() -> Result<(PathBuf, Vec<std::ffi::OsString>)> {
    match SELF_COMMAND.get().and_then(|c| c.split_first()) {
        Some((program, args)) => Ok((PathBuf::from(program), args.to_vec())),
        None => Ok((
            std::env::current_exe().context("cannot find this executable")?,
            Vec::new(),
        )),
    }
}

/// Runs the command line `args` (the program's name first, as `std::env::args_os` gives it)
/// and returns the process's exit status: 0 success, 1 an error, 2 a check failed.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // Usage errors exit with 1 (an error), not clap's 2: 2 means a check failed.
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            match negative_value(&e, &args) {
                // clap's tip for a value that looks like an option is to write `-- -1`, which is
                // wrong here: `--` starts the benchmark program's command line.
                Some((opt, v)) => eprintln!(
                    "vernier: error: {opt} {v}: a negative number is not a valid value for {opt} \
                 (a value starting with '-' is read as an option; to pass it anyway, attach it: \
                 {opt}={v})"
                ),
                None => {
                    let _ = e.print();
                }
            }
            return code;
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vernier: error: {e:#}");
            1
        }
    }
}

/// The option and the negative number clap took for an unknown option, if that is what went
/// wrong (`--env-pad -5`).
fn negative_value(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<(String, String)> {
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

fn run(cli: Cli) -> Result<i32> {
    // An unwritable --json is refused before anything is measured.
    let json = match &cli.command {
        Command::Demo(c) => c.json.as_ref(),
        Command::Run(a) => a.common.json.as_ref(),
        Command::Compare(a) => a.json.as_ref(),
        _ => None,
    };
    if let Some(path) = json {
        vernier::result::check_destination(path).map_err(|e| anyhow::anyhow!("--json {e}"))?;
    }
    // And an unwritable --html.
    let html = match &cli.command {
        Command::Demo(c) => c.html.as_ref(),
        Command::Run(a) => a.common.html.as_ref(),
        Command::Compare(a) => a.html.as_ref(),
        _ => None,
    };
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
    if let Command::Demo(c) | Command::Run(run::RunArgs { common: c, .. }) = &cli.command {
        if c.save.save && c.instructions {
            bail!("--save keeps timed runs; --instructions counts are not stored in the history");
        }
    }
    match cli.command {
        Command::Demo(c) => demo::demo_command(&c),
        Command::Run(a) => run::run_command(&a),
        Command::Compare(a) => compare::compare_command(&a),
        Command::Analyze(a) => analyze::analyze_command(&a),
        Command::Export(a) => export::export_command(&a),
        Command::Report(a) => html::report_command(&a),
        Command::Probe(a) => run::probe_command(&a),
        Command::System(a) => system::system_command(a),
        Command::Load(a) => load::load_command(a),
        Command::History(a) => history::command::history_command(&a),
        Command::Sweep(a) => sweep::sweep_command(&a),
        Command::Asm(a) => asm::asm_command(&a),
        Command::DemoWorker => {
            if std::env::var_os(vernier::protocol::FDS_ENV).is_none() {
                bail!("__demo-worker is started by `vernier demo --instructions`, not by hand");
            }
            let mut suite = Suite::new(Options::default());
            demo::register(&mut suite);
            suite.try_finish().map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(0)
        }
    }
}

/// The audit summary for the result file; prints one line when the machine is not tuned.
pub fn audit_and_hint() -> serde_json::Value {
    let root = system::SysRoot::from_option(None);
    if let Some(h) = system::untuned_hint(&root) {
        eprintln!("vernier: {h}");
    }
    system::audit_summary(&root)
}
