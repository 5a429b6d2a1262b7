//! `vernier`: the runner, as a library. Reads a command line, then runs one pipeline:
//! target → plan → measure → analyze → result → report. The `vernier` binary
//! (`main.rs`) and the Python package's console command both call [`main_with_args`].

mod args;
mod commands;
mod files;
mod history;
mod host;
mod html;
mod markdown;
mod runner;
mod scratch;
mod term;

use args::Common;
use commands::{analyze, asm, compare, demo, exec, export, load, report, run, sweep, system};
pub use term::install_pipe_hook;

/// Parsing callgrind's output and differencing two runs' counts, for the integration tests.
#[doc(hidden)]
pub use runner::instructions;

use anyhow::Result;
use clap::{Parser, Subcommand};

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
    /// The built-in suite: the lessons of docs/experiments.md, measured in this process.
    Demo(Common),
    /// Drive a benchmark executable (C++ header or Rust crate) as a worker.
    Run(run::RunArgs),
    /// Whole programs: each command run many times as a process of its own and judged as any
    /// benchmark; two or more compared paired and interleaved. Takes hyperfine's flags.
    Exec(Box<exec::ExecArgs>),
    /// Is NEW faster than OLD? Two executables (live, paired, interleaved) or two result files.
    Compare(compare::CompareArgs),
    /// Re-derive every figure of a result file from its raw samples (and check them against
    /// the stored ones).
    Analyze(analyze::AnalyzeArgs),
    /// A result file in the formats other tools read: Google Benchmark's JSON, Bencher's
    /// BMF, CSV, pyperf's JSON.
    Export(export::ExportArgs),
    /// A self-contained HTML report (plots) of result, comparison or history files.
    Report(report::ReportArgs),
    /// Audit, tune, undo, or measure the machine's noise floor.
    System(system::SystemArgs),
    /// A bounded background load generator for robustness experiments.
    Load(load::LoadArgs),
    /// The stored runs (`--save`) over commits, and where each benchmark shifted; `history
    /// check` exits 2 when the newest commit sits in a new, slower segment.
    History(commands::history::HistoryArgs),
    /// The layout experiment: one worker process per environment size (ASLR off), each
    /// benchmark's median per padding, its swing and period.
    Sweep(sweep::SweepArgs),
    /// The disassembly of each benchmark's measured loop (objdump), its loop body marked.
    Asm(asm::AsmArgs),
    /// Where each benchmark's loop spends its instructions, function by function (counted
    /// under callgrind): the top functions, and a flame graph with --html.
    Profile(commands::profile::ProfileArgs),
    /// Start a worker with the given process controls and print what it reports about itself
    /// (CPU, environment size, stack address, ASLR): a check of --cpu, --env-pad, --no-aslr.
    #[command(hide = true)]
    Probe(run::RunArgs),
    /// Serve the demo suite over the worker protocol (what `demo --instructions` runs).
    #[command(name = "__demo-worker", hide = true)]
    DemoWorker,
}

/// Runs as [`main_with_args`] does, for a front end whose executable is not the CLI itself:
/// `self_command` is the program and the arguments that start this same CLI (from the Python
/// package, `[python, -m, vernier]`), which the commands that start themselves again (the
/// demo's worker, a comparison against a baseline) run instead of the current executable.
pub fn main_with_self_command<I, T>(args: I, self_command: Vec<std::ffi::OsString>) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    args::set_self_command(self_command);
    main_with_args(args)
}

/// Keep `file` in the history store, as `--save` does (`db`: `--db`'s URL, `None`: the
/// default store; `commit`/`branch`: `None` asks git): for a front end that measured in its
/// own process (the pytest plugin). Prints where it was saved; the error says why not.
pub fn save_result(
    file: &vernier::result::ResultFile,
    db: Option<String>,
    commit: Option<String>,
    branch: Option<String>,
    command: &str,
) -> Result<(), String> {
    let args = args::SaveArgs {
        save: true,
        db,
        commit,
        branch,
        // The defaults of a fleet's names: $VERNIER_MACHINE and the CI's run identity.
        machine: None,
        run_id: None,
    };
    history::save_if_asked(&args, file, command, None).map_err(|e| format!("{e:#}"))
}

/// The allocation-counting interposer this command preloads into a run's counting process
/// (`docs/memory.md`), written to the cache directory on first use: for a front end's tests
/// that preload it themselves (the Python package's). The error says why there is none.
pub fn allocation_interposer() -> Result<std::path::PathBuf, String> {
    runner::memory::interposer_path()
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
            match args::negative_value(&e, &args) {
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

fn run(cli: Cli) -> Result<i32> {
    // Unwritable --json and --html are refused before anything is measured.
    let (json, html) = match &cli.command {
        Command::Demo(c) => (c.json.as_ref(), c.html.as_ref()),
        Command::Run(a) => (a.common.json.as_ref(), a.common.html.as_ref()),
        Command::Compare(a) => (a.json.as_ref(), a.html.as_ref()),
        Command::Exec(a) => (a.json.as_ref(), a.html.as_ref()),
        _ => (None, None),
    };
    args::check_outputs(json, html)?;
    match cli.command {
        Command::Demo(c) if c.instructions => {
            // The demo's suite served as a worker, counted as `run --instructions` counts any.
            let w = demo::counted_worker()?;
            let timeout = std::time::Duration::from_secs_f64(runner::worker::DEFAULT_TIMEOUT_S);
            run::instructions::run_instructions(&c, &w.program, &w.args, &w.env, timeout, "demo")
        }
        Command::Demo(c) => demo::demo_command(&c),
        Command::Run(a) if a.gbench.wanted() => run::gbench::run_as_gbench(&a),
        Command::Run(a) => run::run_command(&a),
        Command::Compare(a) if a.exec => exec::compare_exec(exec::FromCompare {
            old: a.old.to_string_lossy().into_owned(),
            new: a.new.as_ref().map(|n| n.to_string_lossy().into_owned()),
            time: a.time.or(a.quick.then_some(0.2)),
            threshold: a.threshold,
            fail_on_regression: a.fail_on_regression,
            json: a.json,
            html: a.html,
            cpu: a.process.cpu,
            no_aslr: a.process.no_aslr,
            save: a.save,
            md: a.md,
        }),
        Command::Compare(a) => compare::compare_command(&a),
        Command::Exec(a) => exec::exec_command(&a),
        Command::Analyze(a) => analyze::analyze_command(&a),
        Command::Export(a) => export::export_command(&a),
        Command::Report(a) => report::report_command(&a),
        Command::Probe(a) => run::probe_command(&a),
        Command::System(a) => system::system_command(a),
        Command::Load(a) => load::load_command(a),
        Command::History(a) => commands::history::history_command(&a),
        Command::Sweep(a) => sweep::sweep_command(&a),
        Command::Asm(a) => asm::asm_command(&a),
        Command::Profile(a) => commands::profile::profile_command(&a),
        Command::DemoWorker => demo::worker_command(),
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every help text of every command and subcommand, by its command path.
    fn helps(cmd: &mut clap::Command, path: String, out: &mut Vec<(String, String)>) {
        out.push((path.clone(), cmd.render_long_help().to_string()));
        for sub in cmd.get_subcommands_mut() {
            let p = format!("{path} {}", sub.get_name());
            helps(sub, p, out);
        }
    }

    #[test]
    fn help_texts_name_the_schemas_the_files_have() {
        let mut all = Vec::new();
        helps(&mut Cli::command(), "vernier".into(), &mut all);
        let result = format!("result file (schema {}", vernier::result::SCHEMA);
        let comparison = format!(
            "comparison file (schema {}",
            vernier::result::comparison::SCHEMA
        );
        let help = |path: &str| &all.iter().find(|(p, _)| p == path).unwrap().1;
        for cmd in ["vernier run", "vernier demo"] {
            assert!(help(cmd).contains(&result), "{cmd}: {}", help(cmd));
        }
        assert!(help("vernier compare").contains(&comparison));
        // Every text that names a schema by number names one of the two.
        for (path, text) in &all {
            for (i, _) in text.match_indices("(schema ") {
                let before = &text[..i];
                let named = if before.ends_with("result file ") {
                    vernier::result::SCHEMA
                } else if before.ends_with("comparison file ") {
                    vernier::result::comparison::SCHEMA
                } else {
                    panic!("{path}: a schema named without its file: {text}")
                };
                let n: String = text[i + 8..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                assert_eq!(n, named.to_string(), "{path}: {text}");
            }
        }
    }
}
