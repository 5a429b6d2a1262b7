//! The options of `vernier exec`: hyperfine's flags with hyperfine's meaning, and Vernier's
//! own, checked before anything runs.

use super::engine::{self, Accept, Counts};
use super::{hyperfine, params};
use crate::args::SaveArgs;
use crate::runner::exec::Output;
use crate::runner::worker::Control;
use crate::term;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

/// Default longest run, in seconds (`--timeout`).
pub const DEFAULT_RUN_TIMEOUT_S: f64 = 600.0;

#[derive(Args, Clone, Debug)]
pub struct ExecArgs {
    /// The commands: each a command line, split into words as a shell splits them and run
    /// directly (no shell: give --shell sh for pipes, redirections or a shell's builtins).
    #[arg(required = true, value_name = "COMMAND")]
    pub commands: Vec<String>,
    /// Warm-up: run each command at least NUM times before the measured runs (the analysis
    /// also cuts first runs a cold cache slowed, found from the data).
    #[arg(short = 'w', long = "warmup", value_name = "NUM", default_value_t = 0)]
    pub warmup: usize,
    /// Exactly NUM measured runs of each command (instead of --time's budget).
    #[arg(short = 'r', long = "runs", value_name = "NUM", conflicts_with_all = ["min_runs", "max_runs"])]
    pub runs: Option<usize>,
    /// At least NUM measured runs of each command (default 10).
    #[arg(short = 'm', long = "min-runs", value_name = "NUM")]
    pub min_runs: Option<usize>,
    /// At most NUM measured runs of each command.
    #[arg(short = 'M', long = "max-runs", value_name = "NUM")]
    pub max_runs: Option<usize>,
    /// A command run once before each command's runs (untimed).
    #[arg(short = 's', long = "setup", value_name = "CMD")]
    pub setup: Option<String>,
    /// A command run before each run (untimed): once for all commands, or once per command.
    #[arg(short = 'p', long = "prepare", value_name = "CMD")]
    pub prepare: Vec<String>,
    /// A command run after each run (untimed): once for all commands, or once per command.
    #[arg(short = 'C', long = "conclude", value_name = "CMD")]
    pub conclude: Vec<String>,
    /// A command run once after each command's runs (untimed).
    #[arg(short = 'c', long = "cleanup", value_name = "CMD")]
    pub cleanup: Option<String>,
    /// A parameter scan: each command for VAR = MIN, MIN+STEP, … MAX (`{VAR}` in the command
    /// is replaced); over whole numbers, the medians get a complexity fit.
    #[arg(short = 'P', long = "parameter-scan", num_args = 3, value_names = ["VAR", "MIN", "MAX"], allow_negative_numbers = true)]
    pub parameter_scan: Option<Vec<String>>,
    /// The step of --parameter-scan (default 1).
    #[arg(
        short = 'D',
        long = "parameter-step-size",
        value_name = "DELTA",
        requires = "parameter_scan"
    )]
    pub parameter_step_size: Option<String>,
    /// A parameter list: each command for each value (`{VAR}` replaced); repeatable.
    #[arg(short = 'L', long = "parameter-list", num_args = 2, value_names = ["VAR", "VALUES"], action = clap::ArgAction::Append)]
    pub parameter_list: Vec<String>,
    /// The commands' names (one per command, in order); `{VAR}` is replaced.
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub command_name: Vec<String>,
    /// Run each command line through SHELL -c (`none`: split and run directly, the default).
    /// The shell's own start-up is measured and said.
    #[arg(short = 'S', long = "shell", value_name = "SHELL")]
    pub shell: Option<String>,
    /// No shell (the default; hyperfine's `--shell=none`).
    #[arg(short = 'N', conflicts_with = "shell")]
    pub no_shell: bool,
    /// Time runs that exit with a non-zero status too (by default such a run ends the
    /// measurement with its status and the last lines of its standard error): `-i` or
    /// `--ignore-failure` every status, `--ignore-failure=1,2` only these.
    #[arg(
        short = 'i',
        long = "ignore-failure",
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "all-non-zero"
    )]
    pub ignore_failure: Option<String>,
    /// Where each run's standard input comes from: `null` (the default, /dev/null) or a file.
    #[arg(long, value_name = "WHERE")]
    pub input: Option<PathBuf>,
    /// Where each run's standard output goes: null (the default), pipe, inherit, or a file.
    #[arg(long, value_name = "WHERE")]
    pub output: Option<String>,
    /// Show each run's output and standard error (as --output inherit).
    #[arg(long, conflicts_with = "output")]
    pub show_output: bool,
    /// Write hyperfine's JSON (its `results` array: mean, stddev, median, times, exit codes)
    /// to FILE, for hyperfine's own scripts (`-` as FILE, here and for every --export-*:
    /// standard output).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write hyperfine's CSV summary to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write hyperfine's Markdown table to FILE (mean ± σ, min, max, relative to the fastest).
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write hyperfine's table as AsciiDoc to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_asciidoc: Option<PathBuf>,
    /// Write hyperfine's table as an Emacs Org table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_orgmode: Option<PathBuf>,
    /// The unit of the exported tables (Markdown, AsciiDoc, Org; default: from the first
    /// command's mean). Vernier's own table keeps a unit fitted to each figure.
    #[arg(short = 'u', long = "time-unit", value_name = "UNIT", value_enum)]
    pub time_unit: Option<hyperfine::TimeUnit>,
    /// The order of the comparison printed and of the exported tables (Vernier's own table,
    /// --json, and hyperfine's JSON and CSV keep the commands' order).
    #[arg(long, value_name = "METHOD", value_enum, default_value_t = hyperfine::Sort::Auto)]
    pub sort: hyperfine::Sort,
    /// Colour and the progress line (`none`: nothing on standard output; errors and notes
    /// still on standard error, files still written).
    #[arg(long, value_name = "TYPE", value_enum, default_value_t = term::OutputStyle::Auto)]
    pub style: term::OutputStyle,
    /// The baseline the other commands are compared against: one of the commands (as given,
    /// or its -n name), or else a command of its own, run first (default: the first command).
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,
    /// The name of the --reference command.
    #[arg(long, value_name = "NAME", requires = "reference")]
    pub reference_name: Option<String>,
    /// Write every run to FILE: a result file (schema 2) for one command or a scan, a
    /// comparison file (schema 1) for two or more commands.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report to FILE after the runs.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Budget per command, in seconds (default 1): the rounds go on until it is spent for
    /// every command, and at least --min-runs ran.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub time: Option<f64>,
    /// Noise threshold in percent: changes within ±THRESHOLD are reported as no-change.
    #[arg(long, value_name = "PERCENT", default_value = "0.5")]
    pub threshold: String,
    /// Exit with status 2 when any command is `slower` than the reference.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Pin every run to these CPUs (e.g. `1` or `2,3`).
    #[arg(long, value_name = "LIST")]
    pub cpu: Option<String>,
    /// Run without address-space layout randomisation.
    #[arg(long)]
    pub no_aslr: bool,
    /// The longest a run may take before it is killed and named, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_RUN_TIMEOUT_S, allow_negative_numbers = true)]
    pub timeout: f64,
    /// Count each command's instructions under callgrind, its children followed (exact and
    /// repeatable; the command runs tens of times slower).
    #[arg(long)]
    pub instructions: bool,
    /// With --instructions: the change in instructions per run that counts (one more
    /// instruction per run is a change at the default).
    #[arg(long, value_name = "N", default_value_t = crate::args::INSTRUCTION_THRESHOLD, requires = "instructions", allow_negative_numbers = true)]
    pub instruction_threshold: f64,
    /// Verbose report.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub md: crate::args::MarkdownArgs,
}

impl ExecArgs {
    pub(super) fn budget_ns(&self) -> Result<u64> {
        match self.time {
            Some(t) if t > 0.0 && t.is_finite() => Ok((t * 1e9) as u64),
            Some(t) => bail!("--time {t}: expected a positive number of seconds"),
            None => Ok(vernier::plan::DEFAULT_TIME_NS),
        }
    }

    pub(super) fn counts(&self) -> Result<Counts> {
        if self.runs == Some(0) {
            bail!("-r 0: at least one run is needed");
        }
        if let (Some(m), Some(mx)) = (self.min_runs, self.max_runs) {
            if mx < m {
                bail!("--max-runs {mx} is below --min-runs {m}");
            }
        }
        if self.max_runs == Some(0) {
            bail!("--max-runs 0: at least one run is needed");
        }
        Ok(Counts {
            warmup: self.warmup,
            exact: self.runs,
            min: self
                .min_runs
                .unwrap_or(engine::DEFAULT_MIN_RUNS.min(self.max_runs.unwrap_or(usize::MAX))),
            max: self.max_runs,
            budget_ns: self.budget_ns()?,
            accept: self.accept()?,
        })
    }

    /// `-i`, `--ignore-failure[=CODES]`.
    pub(super) fn accept(&self) -> Result<Accept> {
        Accept::parse(self.ignore_failure.as_deref()).map_err(anyhow::Error::msg)
    }

    /// `--input`: the file each run reads (`None`: /dev/null, hyperfine's `null`).
    pub(super) fn input(&self) -> Option<PathBuf> {
        self.input.clone().filter(|p| p.as_os_str() != "null")
    }

    pub(super) fn output(&self) -> Output {
        if self.show_output {
            return Output::Inherit;
        }
        self.output.as_deref().map_or(Output::Null, Output::parse)
    }

    pub(super) fn shell(&self) -> Option<&str> {
        self.shell.as_deref().filter(|s| *s != "none")
    }

    pub(super) fn params(&self) -> Result<Vec<params::Param>> {
        let mut out = Vec::new();
        if let Some(p) = &self.parameter_scan {
            out.push(params::scan(
                &p[0],
                &p[1],
                &p[2],
                self.parameter_step_size.as_deref(),
            )?);
        }
        for pair in self.parameter_list.chunks(2) {
            out.push(params::list(&pair[0], &pair[1])?);
        }
        Ok(out)
    }

    /// The controls of every run: `--cpu`, `--no-aslr`, `--timeout`, checked as `run` checks
    /// them.
    pub(super) fn control(&self) -> Result<Control> {
        crate::runner::processes::ProcessArgs {
            processes: None,
            cpu: self.cpu.clone(),
            fifo: false,
            no_aslr: self.no_aslr,
            env_pad: None,
            timeout: self.timeout,
        }
        .control()
    }
}
