//! `vernier exec [OPTIONS] COMMAND...`: whole programs timed as benchmarks. Each command is
//! run as a process of its own, many times (`runner::exec`), in rounds that interleave the
//! commands (`engine`); its runs go through the same analysis as any benchmark (`figures`),
//! and two or more commands are compared paired, round by round, against the reference.
//! hyperfine's flags keep hyperfine's meaning (`params`, `hyperfine`), so that a script
//! switches by changing the program's name; docs/exec.md says where the meaning differs.

mod counted;
mod engine;
mod figures;
mod hyperfine;
mod params;

use crate::args::SaveArgs;
use crate::runner::exec::{Output, Runner};
use crate::runner::worker::Control;
use crate::term;
use anyhow::{bail, Context as _, Result};
use clap::Args;
use engine::{Collected, Counts, Stop};
use std::path::PathBuf;
use vernier::report;
use vernier::result::comparison::ComparisonFile;
use vernier::result::{AnalysisSettings, Harness, ResultFile};

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
    #[arg(long = "conclude", value_name = "CMD")]
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
    /// measurement with its status and the last lines of its standard error).
    #[arg(short = 'i', long = "ignore-failure")]
    pub ignore_failure: bool,
    /// The file each run reads as its standard input (default: none, /dev/null).
    #[arg(long, value_name = "FILE")]
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
    /// The baseline the other commands are compared against (a command as given, or its -n
    /// name; default: the first).
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,
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
}

impl ExecArgs {
    fn budget_ns(&self) -> Result<u64> {
        match self.time {
            Some(t) if t > 0.0 && t.is_finite() => Ok((t * 1e9) as u64),
            Some(t) => bail!("--time {t}: expected a positive number of seconds"),
            None => Ok(vernier::plan::DEFAULT_TIME_NS),
        }
    }

    fn counts(&self) -> Result<Counts> {
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
            ignore_failure: self.ignore_failure,
        })
    }

    fn output(&self) -> Output {
        if self.show_output {
            return Output::Inherit;
        }
        self.output.as_deref().map_or(Output::Null, Output::parse)
    }

    fn shell(&self) -> Option<&str> {
        self.shell.as_deref().filter(|s| *s != "none")
    }

    fn params(&self) -> Result<Vec<params::Param>> {
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
    fn control(&self) -> Result<Control> {
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

/// What `vernier compare --exec OLD NEW` passes on: its two command lines and the options it
/// shares with `exec`.
pub struct FromCompare {
    pub old: String,
    pub new: Option<String>,
    pub time: Option<f64>,
    pub threshold: String,
    pub fail_on_regression: bool,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub cpu: Option<String>,
    pub no_aslr: bool,
    pub save: SaveArgs,
}

/// `vernier compare --exec OLD NEW`: the two command lines compared as `vernier exec OLD NEW`
/// compares them, with compare's own options.
pub fn compare_exec(c: FromCompare) -> Result<i32> {
    use clap::FromArgMatches as _;
    let Some(new) = c.new else {
        bail!("--exec compares two command lines: give OLD and NEW");
    };
    let cmd = <ExecArgs as clap::Args>::augment_args(clap::Command::new("exec"));
    let m = cmd
        .try_get_matches_from(["exec", "--", c.old.as_str(), new.as_str()])
        .context("the two command lines")?;
    let mut a = ExecArgs::from_arg_matches(&m).context("the two command lines")?;
    a.time = c.time;
    a.threshold = c.threshold;
    a.fail_on_regression = c.fail_on_regression;
    a.json = c.json;
    a.html = c.html;
    a.cpu = c.cpu;
    a.no_aslr = c.no_aslr;
    a.save = c.save;
    exec_command(&a)
}

/// The index of `--reference` among the specs (by name or command line).
fn reference_index(a: &ExecArgs, specs: &[engine::Spec]) -> Result<usize> {
    let Some(r) = &a.reference else {
        return Ok(0);
    };
    specs
        .iter()
        .position(|s| s.name == *r || s.inv.line == *r)
        .ok_or_else(|| {
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            anyhow::anyhow!(
                "--reference '{r}' is none of the commands; give one of: {}",
                names.join(", ")
            )
        })
}

/// The run's header: the machine, the audit, the runner's clock (what times each run).
fn session(audit: serde_json::Value, mode: &'static str) -> ResultFile {
    let timer = vernier::timer::Timer::monotonic().info();
    ResultFile::begin(vernier::result::Session {
        mode,
        machine: vernier::machine::Machine::detect(),
        system: audit,
        timer,
        harness: Harness {
            sample_cost_ns: timer.overhead_ns,
            ..Harness::unmeasured()
        },
        analysis: AnalysisSettings::default(),
    })
}

pub fn exec_command(a: &ExecArgs) -> Result<i32> {
    let threshold = crate::args::parse_threshold(&a.threshold)?;
    let counts = a.counts()?;
    let params = a.params()?;
    let around = params::Around {
        setup: a.setup.as_deref(),
        prepare: &a.prepare,
        conclude: &a.conclude,
        cleanup: a.cleanup.as_deref(),
    };
    let lines = params::Lines { shell: a.shell() };
    let expanded = params::specs(&a.commands, &a.command_name, &params, &around, &lines)?;
    let (specs, values): (Vec<engine::Spec>, Vec<_>) = expanded.into_iter().unzip();
    let reference = reference_index(a, &specs)?;
    let scan = !params.is_empty();
    let control = a.control()?;
    if a.instructions {
        return exec_instructions(a, &specs, reference, scan);
    }
    let mut runner = Runner::new(
        control.clone(),
        control.timeout,
        a.input.clone(),
        a.output(),
    )
    .map_err(anyhow::Error::msg)?;
    term::install_ctrlc();
    let audit = std::thread::spawn(crate::host::audit::audit_and_hint);
    let mut progress = term::ProgressLine::new().shown(a.style.progress());
    // With a shell, its own start-up (`SHELL -c ''`) is measured in the same rounds.
    let startup = a.shell().map(figures::shell_startup);
    let measured: Vec<engine::Spec> = specs.iter().cloned().chain(startup).collect();
    let collected = engine::collect(
        &mut runner,
        &measured,
        &counts,
        &term::interrupted,
        &mut |label, p| progress.update(label, p),
    );
    progress.clear();
    let names: Vec<String> = measured.iter().map(|s| s.name.clone()).collect();
    let mut file = session(audit.join().unwrap_or_default(), "time");
    let ctx = file.analysis_context();
    for (i, s) in collected.series.iter().enumerate() {
        let error = collected
            .failure
            .as_ref()
            .filter(|f| f.command == i)
            .map(|f| f.message.clone());
        // A numeric scan's member declares its N and family, as a benchmark family does.
        let complexity = specs
            .get(i)
            .and_then(|spec| numeric_member(&a.commands, &params, &values[i], spec));
        let finish = vernier::pipeline::Context {
            analysis: &ctx,
            cold: false,
            earlier: None,
            env_pad: &|_| 0,
            throughput: None,
            complexity,
            others: &file.benchmarks,
            executor: None,
        };
        let r = figures::result(&names[i], s, collected.stop, error, &finish);
        file.benchmarks.push(r);
    }
    let render = report::Render {
        style: a.style.style(),
        ..report::Render::for_stdout(a.verbose)
    };
    if !a.style.silent() {
        print_figures(a, &file, &names, render);
    }
    if let Some(f) = &collected.failure {
        eprintln!("vernier: error: {}", f.message);
        eprintln!("vernier: every run measured before it is kept");
    }
    let comparison = (specs.len() >= 2 && !scan).then(|| {
        figures::comparisons(
            &specs,
            &collected.series[..specs.len()],
            reference,
            collected.stop,
            threshold,
        )
    });
    if let Some(c) = comparison.as_ref().filter(|_| !a.style.silent()) {
        let shown = a.sort.comparison(c);
        print!("{}", vernier::report::compare::table_fitted(&shown, render));
    }
    let entries: Vec<hyperfine::Entry> = collected.series[..specs.len()]
        .iter()
        .enumerate()
        .filter_map(|(i, s)| hyperfine::entry(&names[i], s, &values[i]))
        .collect();
    write_files(a, &file, comparison.as_ref(), &entries)?;
    exit_status(a, &collected, comparison.as_ref())
}

/// Vernier's table of the commands' figures, and the lines under it: the figures' own
/// words, each command's resource use and, with a shell, each command net of its start-up.
fn print_figures(a: &ExecArgs, file: &ResultFile, names: &[String], render: report::Render) {
    let table = report::Table::new(names, render).with_explain(a.verbose);
    println!("{}", table.head());
    for b in &file.benchmarks {
        println!("{}", table.row(b));
    }
    print!("{}", report::after_table(file, &table));
    if let Some(line) = figures::resources_line(file) {
        print!("{}", table.dim_wrapped(&line));
    }
    if let (Some(_), Some((startup, own))) = (a.shell(), file.benchmarks.split_last()) {
        print!(
            "{}",
            table.dim_wrapped(&figures::net_of_shell_line(own, startup))
        );
    }
}

/// A scan over whole numbers: the command's family (its template) and N, for the complexity
/// fit of its medians.
fn numeric_member(
    templates: &[String],
    params: &[params::Param],
    values: &[(String, String)],
    spec: &engine::Spec,
) -> Option<vernier::result::complexity::Declared> {
    let p = params.iter().find(|p| p.numeric)?;
    let (_, v) = values.iter().find(|(k, _)| *k == p.name)?;
    let n: u64 = v.parse().ok().filter(|n| *n >= 1)?;
    let family = templates
        .iter()
        .find(|t| params::substitute(t, values) == spec.inv.line)
        .cloned()
        .unwrap_or_else(|| spec.name.clone());
    Some(vernier::result::complexity::Declared {
        family: Some(family),
        n: Some(n),
        ..Default::default()
    })
}

/// `--json`, `--html`, the exports and `--save`, after the runs (a file that cannot be
/// written is said; what was measured is in the others).
fn write_files(
    a: &ExecArgs,
    file: &ResultFile,
    comparison: Option<&ComparisonFile>,
    entries: &[hyperfine::Entry],
) -> Result<()> {
    if let Some(p) = &a.json {
        match comparison {
            Some(cf) => cf.write_atomic(p),
            None => file.write_atomic(p),
        }
        .with_context(|| format!("cannot write {}", p.display()))?;
        if !a.style.silent() {
            println!(
                "{} written to {}",
                if comparison.is_some() {
                    "comparison"
                } else {
                    "result"
                },
                p.display()
            );
        }
    }
    if let Some(p) = &a.html {
        let written = match comparison {
            Some(cf) => crate::html::write_comparison(p, cf),
            None => crate::html::write_result(p, file, None),
        };
        // `--style none` says only a failure to write it.
        if written.is_err() || !a.style.silent() {
            crate::html::write_or_warn(p, written, a.json.as_deref());
        }
    }
    hyperfine::export(a, entries)?;
    if comparison.is_none() {
        crate::history::save_if_asked(&a.save, file, "exec", None)?;
    } else if a.save.save {
        eprintln!(
            "vernier: note: --save keeps a result file; with two or more commands, save each \
             with its own `vernier exec --save COMMAND`"
        );
    }
    Ok(())
}

/// `--instructions`: each command counted twice under callgrind, children followed; one command
/// (or a scan) a result file of counts, two or more compared in counts against the reference.
fn exec_instructions(
    a: &ExecArgs,
    specs: &[engine::Spec],
    reference: usize,
    scan: bool,
) -> Result<i32> {
    if a.export_json.is_some()
        || a.export_csv.is_some()
        || a.export_markdown.is_some()
        || a.export_asciidoc.is_some()
        || a.export_orgmode.is_some()
    {
        bail!(
            "--export-json, --export-csv, --export-markdown, --export-asciidoc and \
             --export-orgmode hold times, and --instructions times nothing: write the counts \
             with --json FILE"
        );
    }
    let threshold = crate::args::instruction_threshold(a.instruction_threshold, "run")?;
    let control = a.control()?;
    // The runs' limit is --timeout times valgrind's slowdown.
    let limit = control
        .timeout
        .saturating_mul(crate::runner::counted::VALGRIND_SLOWDOWN);
    let mut runner =
        Runner::new(control, limit, a.input.clone(), a.output()).map_err(anyhow::Error::msg)?;
    term::install_ctrlc();
    let audit = std::thread::spawn(crate::host::audit::audit_and_hint);
    let counting = counted::count_all(&mut runner, specs, a.ignore_failure, &term::interrupted)?;
    let mut file = session(audit.join().unwrap_or_default(), "instructions");
    file.benchmarks = counting.counted.iter().map(counted::result).collect();
    if !counting.counted.is_empty() && !a.style.silent() {
        print!("{}", counted::table(&counting.counted));
    }
    // The commands counted are the first ones, in order (counting stops at a failure or
    // Ctrl-C): compared against the reference when it is among them.
    let counted_all = &counting.counted;
    let comparison = (counted_all.len() >= 2 && !scan && reference < counted_all.len())
        .then(|| counted::comparison(counted_all, reference, threshold));
    if let Some(c) = comparison.as_ref().filter(|_| !a.style.silent()) {
        print!("{}", counted::comparison_table(&a.sort.comparison(c)));
    }
    if let Some(f) = &counting.failure {
        eprintln!("vernier: error: {f}");
        eprintln!("vernier: every command counted before it is kept");
    }
    write_files(a, &file, comparison.as_ref(), &[])?;
    if counting.interrupted {
        if let Some(code) = term::interrupted_exit() {
            return Ok(code);
        }
    }
    if counting.failure.is_some() {
        return Ok(1);
    }
    Ok(regression_exit(a, comparison.as_ref()).unwrap_or(0))
}

/// Status 2 with `--fail-on-regression` when a command is `slower`, the commands named.
fn regression_exit(a: &ExecArgs, comparison: Option<&ComparisonFile>) -> Option<i32> {
    let cf = comparison.filter(|cf| a.fail_on_regression && cf.has_regression())?;
    let slower: Vec<&str> = cf.regressions().map(|c| c.name.as_str()).collect();
    eprintln!(
        "vernier: regression (--fail-on-regression): {}",
        slower.join(", ")
    );
    Some(2)
}

fn exit_status(a: &ExecArgs, c: &Collected, comparison: Option<&ComparisonFile>) -> Result<i32> {
    if c.stop == Stop::Interrupted {
        if let Some(code) = term::interrupted_exit() {
            return Ok(code);
        }
    }
    if c.failure.is_some() {
        return Ok(1);
    }
    Ok(regression_exit(a, comparison).unwrap_or(0))
}
