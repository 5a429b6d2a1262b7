//! `vernier exec [OPTIONS] COMMAND...`: whole programs timed as benchmarks. Each command is
//! run as a process of its own, many times (`runner::exec`, behind the [`Launch`] seam), in
//! rounds that interleave the commands (`engine`); its runs go through the same analysis as
//! any benchmark (`figures`), and two or more commands are compared paired, round by round,
//! against the reference. hyperfine's flags keep hyperfine's meaning (`args`, `params`,
//! `hyperfine`), so that a script switches by changing the program's name; docs/exec.md says
//! where the meaning differs.

mod args;
mod counted;
mod engine;
mod figures;
mod hyperfine;
mod params;
mod summary;
#[cfg(test)]
mod tests;

use crate::args::SaveArgs;
use crate::runner::exec::{Launch, Runner};
use crate::term;
use anyhow::{bail, Context as _, Result};
pub use args::ExecArgs;
use engine::{Collected, Counts, Spec, Stop};
use std::path::PathBuf;
use vernier::measure::Progress;
use vernier::report;
use vernier::result::comparison::ComparisonFile;
use vernier::result::exec::{Judged, Run, Startup, Timed};
use vernier::result::{AnalysisSettings, Harness, ResultFile};

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
    pub md: crate::args::MarkdownArgs,
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
    a.md = c.md;
    exec_command(&a)
}

/// The commands as the command line gives them, expanded, and the reference among them.
struct Plan {
    specs: Vec<Spec>,
    values: Vec<params::Values>,
    params: Vec<params::Param>,
    reference: usize,
    /// A parameter scan: each command's figures, no comparison.
    scan: bool,
}

/// The commands expanded over the parameters, with `--reference`: one of them (by name or
/// command line), or else a command of its own, run first (hyperfine's meaning), named by
/// `--reference-name`.
fn plan(a: &ExecArgs) -> Result<Plan> {
    let params = a.params()?;
    let around = params::Around {
        setup: a.setup.as_deref(),
        prepare: &a.prepare,
        conclude: &a.conclude,
        cleanup: a.cleanup.as_deref(),
    };
    let lines = params::Lines { shell: a.shell() };
    let mut expanded = params::specs(&a.commands, &a.command_name, &params, &around, &lines)?;
    let mut reference = 0;
    if let Some(r) = &a.reference {
        match expanded
            .iter()
            .position(|(s, _)| s.name == *r || s.inv.line == *r)
        {
            Some(i) => reference = i,
            None => {
                // A command of its own: its hooks are those given once for every command.
                let once = |given: &[String]| -> Vec<String> {
                    if given.len() == 1 {
                        given.to_vec()
                    } else {
                        Vec::new()
                    }
                };
                let (prepare, conclude) = (once(&a.prepare), once(&a.conclude));
                let own = params::Around {
                    prepare: &prepare,
                    conclude: &conclude,
                    ..around
                };
                let mut spec = params::specs(std::slice::from_ref(r), &[], &[], &own, &lines)?;
                expanded.insert(0, spec.remove(0));
            }
        }
        if let Some(name) = &a.reference_name {
            expanded[reference].0.name.clone_from(name);
        }
    }
    let (specs, values) = expanded.into_iter().unzip();
    Ok(Plan {
        specs,
        values,
        scan: !params.is_empty(),
        params,
        reference,
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
    a.md.check()?;
    let counts = a.counts()?;
    let plan = plan(a)?;
    let control = a.control()?;
    if a.instructions {
        return exec_instructions(a, &plan);
    }
    let mut runner = Runner::new(control.clone(), control.timeout, a.input(), a.output())
        .map_err(anyhow::Error::msg)?;
    term::install_ctrlc();
    let audit = std::thread::spawn(crate::host::audit::audit_and_hint);
    let mut progress = term::ProgressLine::new().shown(a.style.progress());
    let collected = collect(
        a,
        &plan,
        &counts,
        &mut runner,
        &term::interrupted,
        &mut |label, p| progress.update(label, p),
    );
    progress.clear();
    let t = figures_of(
        a,
        &plan,
        collected,
        audit.join().unwrap_or_default(),
        threshold,
    );
    finish(a, &t)
}

/// The runs: the commands and, with a shell, its own start-up (`SHELL -c ''`) in the same
/// rounds, after them.
fn collect(
    a: &ExecArgs,
    plan: &Plan,
    counts: &Counts,
    launcher: &mut dyn Launch,
    interrupted: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str, &Progress),
) -> Collected {
    let startup = a.shell().map(figures::shell_startup);
    let measured: Vec<Spec> = plan.specs.iter().cloned().chain(startup).collect();
    engine::collect(launcher, &measured, counts, interrupted, progress)
}

/// What the timed runs gave: the figures of each command (and of the shell's start-up, last),
/// the comparison, and hyperfine's entries.
struct TimedRuns {
    file: ResultFile,
    names: Vec<String>,
    comparison: Option<ComparisonFile>,
    entries: Vec<hyperfine::Entry>,
    collected: Collected,
    /// With a shell: its start-up, taken off each command's runs.
    startup: Option<Run>,
    /// ... and the commands whose own time is within the start-up's spread.
    within_startup: Vec<String>,
    unit: Judged,
}

/// The figures of the runs: each command's runs net of the shell's start-up (with one), in
/// the unit every command is judged in (one rule for one command and for several), through the
/// benchmark pipeline; two or more commands compared against the reference.
fn figures_of(
    a: &ExecArgs,
    plan: &Plan,
    collected: Collected,
    audit: serde_json::Value,
    threshold: f64,
) -> TimedRuns {
    let n = plan.specs.len();
    let startup = a
        .shell()
        .and_then(|_| figures::startup_figure(collected.series.get(n)?));
    let series: Vec<engine::Series> = collected
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| match &startup {
            Some(st) if i < n => figures::net_of(s, st),
            _ => s.clone(),
        })
        .collect();
    let unit = figures::unit_of(&series[..n.min(series.len())]);
    let within_startup = match (&startup, series.get(n)) {
        (Some(_), Some(st)) => (0..n)
            .filter(|&i| figures::within_startup(&series[i], st))
            .map(|i| plan.specs[i].name.clone())
            .collect(),
        _ => Vec::new(),
    };
    let shell_startup = startup.map(|st| Startup {
        command: format!("{} -c ''", a.shell().unwrap_or("sh")),
        wall_ns: st.wall_ns,
        user_ns: st.user_ns,
        system_ns: st.system_ns,
    });
    let names: Vec<String> = plan
        .specs
        .iter()
        .map(|s| s.name.clone())
        .chain(a.shell().map(|sh| figures::shell_startup(sh).name))
        .collect();
    let mut file = session(audit, "time");
    let ctx = file.analysis_context();
    for (i, s) in series.iter().enumerate() {
        let error = collected
            .failure
            .as_ref()
            .filter(|f| f.command == i)
            .map(|f| f.message.clone());
        // A numeric scan's member declares its N and family, as a benchmark family does.
        let complexity = plan
            .specs
            .get(i)
            .and_then(|spec| numeric_member(&a.commands, &plan.params, &plan.values[i], spec));
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
        let mut r = figures::result(&names[i], s, collected.stop, error, &finish, unit);
        r.exec = Some(Timed {
            judged: unit,
            shell_startup: shell_startup.clone().filter(|_| i < n),
        });
        file.benchmarks.push(r);
    }
    let comparison = (n >= 2 && !plan.scan).then(|| {
        let mut c = figures::comparisons(
            &plan.specs,
            &series[..n],
            plan.reference,
            collected.stop,
            threshold,
            unit,
        );
        if let Some(e) = &mut c.exec {
            e.shell_startup.clone_from(&shell_startup);
        }
        c
    });
    let entries: Vec<hyperfine::Entry> = series[..n]
        .iter()
        .enumerate()
        .filter_map(|(i, s)| hyperfine::entry(&names[i], s, &plan.values[i]))
        .collect();
    TimedRuns {
        file,
        names,
        comparison,
        entries,
        collected,
        startup,
        within_startup,
        unit,
    }
}

/// Print the figures and the comparison, write the files, and the exit status.
fn finish(a: &ExecArgs, t: &TimedRuns) -> Result<i32> {
    let render = report::Render {
        style: a.style.style(),
        ..report::Render::for_stdout(a.verbose)
    };
    if !a.style.silent() {
        print_figures(a, t, render);
    }
    if let Some(f) = &t.collected.failure {
        eprintln!("vernier: error: {}", f.message);
        eprintln!("vernier: every run measured before it is kept");
    }
    if let Some(c) = t.comparison.as_ref().filter(|_| !a.style.silent()) {
        let shown = a.sort.comparison(c);
        print!("{}", vernier::report::compare::table_fitted(&shown, render));
    }
    write_files(a, &t.file, t.comparison.as_ref(), &t.entries)?;
    exit_status(a, &t.collected, t.comparison.as_ref())
}

/// Vernier's table of the commands' figures, and the lines under it: the figures' own
/// words, the time they are in, each command's resource use and, with a shell, what was taken
/// off each run.
fn print_figures(a: &ExecArgs, t: &TimedRuns, render: report::Render) {
    let file = &t.file;
    let table = report::Table::new(&t.names, render).with_explain(a.verbose);
    println!("{}", table.head());
    for b in &file.benchmarks {
        println!("{}", table.row(b));
    }
    print!("{}", report::after_table(file, &table));
    print!("{}", table.dim_wrapped(&figures::unit_line(t.unit)));
    if let Some(line) = figures::resources_line(file) {
        print!("{}", table.dim_wrapped(&line));
    }
    if let (Some(taken), Some(startup)) = (&t.startup, file.benchmarks.last()) {
        print!(
            "{}",
            table.dim_wrapped(&figures::net_of_shell_line(
                startup,
                taken,
                &t.within_startup
            ))
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
/// written is said; what was measured is in the others). `--save` keeps the result file: each
/// command a benchmark, so each its own series in the history, one command or several.
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
    summary::write_markdown(a, file, comparison)?;
    crate::history::save_if_asked(&a.save, file, "exec", None)
}

/// `--instructions`: each command counted twice under callgrind, children followed; one command
/// (or a scan) a result file of counts, two or more compared in counts against the reference.
fn exec_instructions(a: &ExecArgs, plan: &Plan) -> Result<i32> {
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
        Runner::new(control, limit, a.input(), a.output()).map_err(anyhow::Error::msg)?;
    term::install_ctrlc();
    let audit = std::thread::spawn(crate::host::audit::audit_and_hint);
    let counting = counted::count_all(&mut runner, &plan.specs, &a.accept()?, &term::interrupted)?;
    let mut file = session(audit.join().unwrap_or_default(), "instructions");
    file.benchmarks = counting.counted.iter().map(counted::result).collect();
    if !counting.counted.is_empty() && !a.style.silent() {
        print!("{}", counted::table(&counting.counted));
    }
    // The commands counted are the first ones, in order (counting stops at a failure or
    // Ctrl-C): compared against the reference when it is among them.
    let counted_all = &counting.counted;
    let reference = plan.reference;
    let comparison = (counted_all.len() >= 2 && !plan.scan && reference < counted_all.len())
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
