//! `vernier demo`: the experiments of `docs/experiments.md`, in Rust, in this process.
//!
//! The table of basic operations on a black-boxed `f64` and `rand()`, the `sqrt(4.2)` whose
//! result nobody uses (the compiler removes it: it must be flagged) beside the same with
//! barriers, a message copied into one event again and again versus into a large set of events
//! (hot vs cold memory), and two "equivalent" fraction-to-string implementations.

use crate::args::Common;
use crate::host::audit::audit_and_hint;
use crate::term;
use anyhow::{bail, Context as _, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use vernier::report;
use vernier::result::comparison::ComparisonFile;
use vernier::result::ResultFile;

/// The demo's budget per benchmark when neither `--time` nor `--quick` is given.
const DEMO_BUDGET_NS: u64 = 500_000_000;
use vernier::ledger::{self, Ledger};
use vernier::session::Event as SuiteEvent;
use vernier::Options;
use vernier::Suite;

mod kernels;
mod lesson;
mod sharing;

use kernels::{register, register_filtered, COLD_EVENTS_ENV, COLD_EVENTS_INSTRUCTIONS};
use lesson::{checkpoints, loops_without_and_with_barrier, summary, CHECKPOINTS};

/// A worker to count: the program, its arguments and the environment it needs.
pub struct Worker {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
}

/// What `vernier demo --instructions` counts, as `run --instructions` counts any worker: this
/// program serving the demo suite (`vernier __demo-worker`), with the environment that keeps
/// its cold set small enough for callgrind.
pub fn counted_worker() -> Result<Worker> {
    let (program, mut args) = crate::args::self_command()?;
    args.push("__demo-worker".into());
    let env = vec![(
        COLD_EVENTS_ENV.into(),
        COLD_EVENTS_INSTRUCTIONS.to_string().into(),
    )];
    Ok(Worker { program, args, env })
}

/// `vernier demo`: the suite measured in this process, its variant pairs compared, the
/// lessons in sentences.
///
/// Its benchmarks get half a second each unless `--time` or `--quick` says otherwise: the
/// lessons' figures settle well within it, and the tour of 26 benchmarks then takes about ten
/// seconds on two CPUs (`vernier run` keeps the library's second).
pub fn demo_command(c: &Common) -> Result<i32> {
    let filter = c.filter()?;
    let plan = match (c.time, c.quick) {
        (None, false) => vernier::plan::Plan::with_budget(DEMO_BUDGET_NS),
        _ => c.plan()?,
    };
    let ledger = Ledger::load(&vernier::machine::Machine::detect());
    // The demo's benchmarks are this executable's: their earlier runs here are its own.
    let identity = crate::args::self_command()
        .ok()
        .and_then(|(exe, mut args)| {
            args.push("demo".into());
            ledger::program_identity(&exe, &args, "hot")
        });
    let mut options = Options {
        system: audit_and_hint(),
        plan,
        json: c.json.clone(),
        quick: c.quick,
        counters: c.counters()?,
        keep_interrupted: c.keep_interrupted,
        ..Options::default()
    };
    options.fill_from_ledger(&ledger, identity.as_deref());
    let mut suite = demo_suite(options, filter.as_ref())?;
    term::install_ctrlc();
    let render = report::Render::for_stdout(c.verbose);
    let names = suite.names();
    // The command counts its own allocations (`CountingAlloc`, main.rs): their columns show.
    let table = report::Table::new(&names, render)
        .with_memory(vernier::memory::Source::detect().is_ok())
        .with_explain(c.explain || c.verbose || !ledger.seen_before());
    let started = std::time::Instant::now();
    let file = run_with_table(&mut suite, &table, names.len());
    ledger.record_run(&file, identity.as_deref());
    let pairs = demo_pairs(&mut suite, &file, c.json.as_deref())?;
    // After the result is kept: a report that cannot be written loses nothing measured.
    let html_failed = c.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_result(p, &file, pairs.as_ref());
        !crate::html::write_or_warn(p, written, c.json.as_deref())
    });
    print!("{}", report::after_table(&file, &table));
    if let Some(line) = report::earlier_note(&file) {
        print!("{}", table.dim_wrapped(&line));
    }
    print_lessons(&file, pairs.as_ref(), render, filter.as_ref());
    // Wrapped like every other line: its length moves with the seconds and the path.
    let closing = format!(
        "{} benchmarks in {:.1} s{}",
        file.benchmarks.len(),
        started.elapsed().as_secs_f64(),
        term::written_to(c.json.as_deref())
    );
    println!();
    for line in report::wrap(&closing, render.width, 0, 2) {
        println!("{line}");
    }
    crate::history::save_if_asked(&c.save, &file, "demo", c.pick.shard)?;
    if c.profile {
        let w = counted_worker()?;
        let html = c.html.as_deref().map(|p| (p, &file, pairs.as_ref()));
        crate::runner::profile::after_run(
            (&w.program, &w.args, &w.env),
            std::time::Duration::from_secs_f64(crate::runner::worker::DEFAULT_TIMEOUT_S),
            filter.as_ref(),
            html,
        )?;
    }
    if let Some(code) = term::interrupted_exit() {
        return Ok(code);
    }
    Ok(if html_failed { 1 } else { 0 })
}

/// The demo suite with `options`, its benchmarks those `filter` selects (which must select
/// one).
fn demo_suite(options: Options, filter: Option<&crate::args::Selection>) -> Result<Suite> {
    let mut suite = Suite::new(options);
    register(&mut suite);
    if let Some(re) = filter {
        let names = suite.names();
        if !names.iter().any(|n| re.is_match(n)) {
            bail!(
                "{} selects no benchmark; the demo has: {}",
                re.describe(),
                names.join(", ")
            );
        }
        suite = Suite::new(Options {
            filter: None,
            ..suite.options().clone()
        });
        register_filtered(&mut suite, re);
    }
    Ok(suite)
}

/// The suite measured in this process, each benchmark's row printed as it is done (under the
/// table's head, printed with the first) and the progress line meanwhile.
fn run_with_table(suite: &mut Suite, table: &report::Table, count: usize) -> ResultFile {
    let mut progress = term::ProgressLine::new().of(count);
    let mut head = false;
    let file = suite.run_in_process(&mut |ev| match ev {
        SuiteEvent::Start { .. } => {}
        SuiteEvent::Progress { name, progress: p } => progress.update(name, p),
        SuiteEvent::Done { result, .. } => {
            progress.clear();
            if !head {
                println!("{}", table.head());
                head = true;
            }
            println!("{}", table.row(result));
        }
    });
    progress.clear();
    file
}

/// The lessons in sentences, the variant pairs' table, and (unless interrupted) the
/// checkpoints and the loops without and with a barrier.
fn print_lessons(
    file: &ResultFile,
    pairs: Option<&ComparisonFile>,
    render: report::Render,
    filter: Option<&crate::args::Selection>,
) {
    let width = render.width;
    println!();
    for line in summary(file, pairs) {
        for l in report::wrap(&format!("• {line}"), width, 0, 2) {
            println!("{l}");
        }
    }
    if let Some(p) = pairs {
        println!();
        for l in report::wrap("Variants compared paired and interleaved in this process (ratio = NEW/OLD, the second named over the first):", width, 0, 0) {
            println!("{l}");
        }
        print!("{}", vernier::report::compare::table_fitted(p, render));
    }
    if !term::interrupted() {
        let wanted = |what: &str| filter.is_none_or(|re| re.is_match(what));
        if wanted(CHECKPOINTS) {
            println!();
            for l in checkpoints(width) {
                println!("{l}");
            }
        }
        for l in loops_without_and_with_barrier(file, width) {
            println!("{l}");
        }
    }
}

/// `vernier demo`: run the suite's variant pairs in process, after its benchmarks; with
/// `--json`, the result file gains a `comparison` member (a comparison file, schema 1).
fn demo_pairs(
    suite: &mut vernier::Suite,
    results: &ResultFile,
    json: Option<&Path>,
) -> Result<Option<ComparisonFile>> {
    if suite.comparison_names().is_empty() || term::interrupted() {
        return Ok(None);
    }
    let mut progress = term::ProgressLine::new().of(suite.comparison_names().len());
    let file = vernier::session::compare::run_suite_pairs(
        suite,
        vernier::stats::compare::DEFAULT_THRESHOLD,
        &mut |ev| match ev {
            SuiteEvent::Progress { name, progress: p } => progress.update(name, p),
            SuiteEvent::Done { .. } => progress.clear(),
            SuiteEvent::Start { .. } => {}
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

/// `__demo-worker`: the demo suite served over the worker protocol (what `demo
/// --instructions` runs).
pub fn worker_command() -> anyhow::Result<i32> {
    if std::env::var_os(vernier::protocol::FDS_ENV).is_none() {
        anyhow::bail!("__demo-worker is started by `vernier demo --instructions`, not by hand");
    }
    let mut suite = vernier::Suite::new(vernier::Options::default());
    register(&mut suite);
    suite.try_finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(0)
}
