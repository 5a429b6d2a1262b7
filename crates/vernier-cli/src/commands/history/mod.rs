//! `vernier history [check]`: each benchmark's series over commits with its change points;
//! `check` exits 2 when the newest commit's runs sit in a new, slower segment.

mod bisect;
mod markdown;
mod merge;
mod publish;
mod text;

use crate::history::series::{self, Series};
use crate::history::store::{self, Location};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::collections::BTreeSet;
use std::io::Write as _;

#[derive(Args, Clone, Debug)]
#[command(args_conflicts_with_subcommands = false)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    #[command(flatten)]
    pub query: QueryArgs,
}

#[derive(Subcommand, Clone, Debug)]
pub enum HistoryAction {
    /// Exit 2 when the newest commit's runs of some benchmark sit in a new, slower segment (a
    /// confident regression), 0 otherwise: a gate for CI.
    Check(QueryArgs),
    /// Store result files (of `run` or `demo`, `--json`) as `--save` would, each with the
    /// machine recorded in it: CI jobs upload their JSON, one job saves them. Each file is
    /// re-derived from its raw samples with this version's rules first (as `vernier analyze`
    /// does; --as-recorded keeps the file's own figures). Every file is read and re-derived
    /// before any is saved; a bad one is refused, naming it, and nothing is saved. Each run is
    /// stored at the time its file was recorded (`recorded_at`), not at the time of saving.
    Save(SaveFilesArgs),
    /// The first commit between --good and --bad where a benchmark moved: each commit built
    /// in a worktree of its own with --build, and PROGRAM measured against the good build (or
    /// counted with --instructions), in about log2(commits) builds.
    Bisect(bisect::BisectArgs),
    /// Create or migrate the store's tables to this vernier's schema (an administrator's step
    /// for a PostgreSQL store, whose jobs never change the schema), and with --writer grant a
    /// role what saving needs: SELECT and INSERT, no UPDATE or DELETE.
    Migrate(MigrateArgs),
    /// Write the store as a static site into DIR: an index of every series (filter, sort,
    /// sparklines), the change points newest first, a page per series. Files only, nothing
    /// fetched from elsewhere; a second publish rewrites only the pages that changed.
    Publish(publish::PublishArgs),
    /// Serve a published site on 127.0.0.1 for a look (`vernier history publish DIR` first).
    Serve(publish::ServeArgs),
}

#[derive(Args, Clone, Debug)]
pub struct MigrateArgs {
    /// The history store: sqlite:PATH, a file path, or postgres://USER@HOST:PORT/DATABASE
    /// (default: $VERNIER_DB, else ~/.local/share/vernier/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// A PostgreSQL role to grant what a save and the reads need (INSERT and SELECT on the
    /// tables), and nothing that erases; repeat for more roles.
    #[arg(long, value_name = "ROLE")]
    pub writer: Vec<String>,
}

/// `history migrate`: the store at this build's schema; says from which version.
fn migrate(a: &MigrateArgs) -> Result<i32> {
    let loc = Location::resolve(a.db.as_deref())?;
    let (before, after) = crate::history::migrate_store(&loc, &a.writer)?;
    let from = match before {
        None => "a new store".to_string(),
        Some(v) if v == after => "already current".to_string(),
        Some(v) => format!("from schema version {v}"),
    };
    println!(
        "history store {}: schema version {after} ({from})",
        loc.describe()
    );
    for w in &a.writer {
        println!("granted role {w} SELECT and INSERT on the tables (no UPDATE, DELETE or DDL)");
    }
    Ok(0)
}

#[derive(Args, Clone, Debug)]
pub struct SaveFilesArgs {
    /// The result files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// The commit to save the runs under (required).
    #[arg(long, value_name = "COMMIT")]
    pub commit: Option<String>,
    /// The branch to save the runs under.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// The history store: sqlite:PATH, a file path, or postgres://USER@HOST:PORT/DATABASE
    /// (default: $VERNIER_DB, else ~/.local/share/vernier/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The machine's name in the fleet, stored beside the fingerprint recorded in each file
    /// (default: $VERNIER_MACHINE, else the fingerprint alone).
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// The run's identity (default: the CI's own), as for `--save`.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Store each file's figures and verdicts as the run that wrote it derived them, instead
    /// of deriving them again from its raw samples with this version's rules.
    #[arg(long)]
    pub as_recorded: bool,
}

/// `history save FILE… --commit C`: read every file and re-derive it with this version's rules
/// (unless `--as-recorded`), then save each: a file that fails either step is refused before
/// anything is saved.
fn save_files(a: &SaveFilesArgs) -> Result<i32> {
    let Some(commit) = a.commit.clone() else {
        anyhow::bail!(
            "history save needs --commit COMMIT: the commit to save the runs under (nothing \
             was saved)"
        );
    };
    let mut files = Vec::new();
    let (mut benchmarks, mut changed) = (0, 0);
    let now = std::time::SystemTime::now();
    for path in &a.files {
        let f = vernier::result::ResultFile::load(path).map_err(|e| match not_a_run(path) {
            Some(what) => anyhow::anyhow!(
                "cannot save {}: it is {what} (nothing was saved)",
                path.display()
            ),
            None => anyhow::anyhow!(
                "cannot save {}: {e} (nothing was saved; `history save` takes result files \
                 written by `vernier run --json` or `vernier demo --json`)",
                path.display()
            ),
        })?;
        if f.benchmarks.is_empty() {
            anyhow::bail!(
                "cannot save {}: it holds no benchmark (nothing was saved)",
                path.display()
            );
        }
        crate::history::when::stored_at(&f, now).map_err(|e| {
            anyhow::anyhow!("cannot save {}: {e:#} (nothing was saved)", path.display())
        })?;
        if a.as_recorded {
            files.push(f);
            continue;
        }
        let again = crate::runner::rederive::rederive_file(&f).map_err(|e| {
            anyhow::anyhow!(
                "cannot save {}: {e:#}, so this version's rules cannot be applied to it \
                 (nothing was saved; save it with --as-recorded to keep the figures it \
                 recorded, or run the benchmark again)",
                path.display()
            )
        })?;
        benchmarks += f.benchmarks.len();
        changed += again.changed;
        files.push(again.file);
    }
    if !a.as_recorded {
        eprintln!(
            "vernier: {}; --as-recorded saves the files' own figures",
            crate::runner::rederive::rederived_line(files.len(), benchmarks, changed)
        );
    }
    let args = crate::args::SaveArgs {
        save: true,
        db: a.db.clone(),
        commit: Some(commit),
        branch: a.branch.clone(),
        machine: a.machine.clone(),
        run_id: a.run_id.clone(),
    };
    for f in &files {
        crate::history::save_file(&args, f, "history save", None)?;
    }
    Ok(0)
}

/// What a JSON file that is not a result file is, told by its fields, with what to save
/// instead; `None` for a result file (damaged) or a file of no known kind.
fn not_a_run(path: &std::path::Path) -> Option<&'static str> {
    use crate::files::Kind;
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    Some(match crate::files::kind(&v) {
        Kind::Comparison => {
            "a comparison file (`vernier compare --json`): ratios, not runs; save the result \
             files that were compared"
        }
        Kind::History => "a history (`vernier history --json`): its runs are in a store already",
        Kind::Sweep => {
            "a sweep file (`vernier sweep --json`): layouts, not a run of the benchmarks; save \
             a `vernier run --json` file"
        }
        Kind::Profile => {
            "a profile (`vernier profile --json`): costs by function, not a run; save a \
             `vernier run --json` file"
        }
        Kind::GoogleBenchmark => {
            "Google Benchmark's JSON, which keeps no raw samples to derive figures from; run \
             the program with `vernier run --json FILE -- PROGRAM` and save FILE"
        }
        Kind::Result | Kind::Unknown => return None,
    })
}

#[derive(Args, Clone, Debug, Default)]
pub struct QueryArgs {
    /// The history store: sqlite:PATH, a file path, or postgres://USER@HOST:PORT/DATABASE
    /// (default: $VERNIER_DB, else ~/.local/share/vernier/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Only runs of the machine named NAME (`--machine` when saved), or whose fingerprint
    /// starts with NAME (listed by `history`).
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Each benchmark's newest figure on every machine side by side, as ratios to the
    /// reference machine (with a list: those machines, the first the reference); with
    /// --fleet, the machines expected (default: every machine that ever saved).
    #[arg(long, value_name = "M1,M2,…", num_args = 0..=1, value_delimiter = ',')]
    pub machines: Option<Vec<String>>,
    /// The machine the others are compared to with --machines (default: the first).
    #[arg(long, value_name = "NAME")]
    pub reference: Option<String>,
    /// Which machines and shards saved for --commit C, and which are missing: exit 2 when one
    /// is missing, 0 when the fleet is complete.
    #[arg(long, requires = "commit")]
    pub fleet: bool,
    /// The commit (or its prefix) --fleet looks at.
    #[arg(long, value_name = "C")]
    pub commit: Option<String>,
    /// Print the history as JSON (the contract's `history --json`).
    #[arg(long)]
    pub json: bool,
    /// Also write the history as an HTML report (each series plotted with its change points).
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub md: crate::args::MarkdownArgs,
}

/// Exit status of `history check` when a regression is found.
pub const EXIT_REGRESSION: i32 = 2;

pub fn history_command(a: &HistoryArgs) -> Result<i32> {
    let (q, check) = match a.merged()? {
        Some(HistoryAction::Check(q)) => (q, true),
        Some(HistoryAction::Save(s)) => return save_files(&s),
        Some(HistoryAction::Bisect(b)) => return bisect::bisect_command(&b),
        Some(HistoryAction::Migrate(m)) => return migrate(&m),
        Some(HistoryAction::Publish(p)) => return publish::publish_command(&p),
        Some(HistoryAction::Serve(sv)) => return publish::serve_command(&sv),
        None => (a.query.clone(), false),
    };
    let filter = crate::args::parse_filter(q.filter.as_deref())?;
    if q.md.markdown.is_some() && !check {
        anyhow::bail!(
            "--markdown summarises a check: `vernier history check --markdown FILE` (the newest \
             commit against the stored history)"
        );
    }
    q.md.check()?;
    let loc = Location::resolve(q.db.as_deref())?;
    let mut st = open_existing(&loc)?;
    if q.fleet {
        let commit = q.commit.as_deref().unwrap_or_default();
        return Ok(crate::history::fleet::fleet_report(
            &st.run_summaries()?,
            commit,
            q.machines.as_deref(),
        ));
    }
    let rows = st.points()?;
    let machines = st.machines()?;
    let rows_machines = fingerprints(&rows, q.machine.as_deref());
    let all = series::build(rows, filter.as_ref(), q.machine.as_deref());
    if all.is_empty() {
        let why = match (&q.filter, &q.machine) {
            (None, None) => "the store holds no run yet".to_string(),
            _ => "no stored benchmark matches --filter / --machine".to_string(),
        };
        if check {
            eprintln!("vernier: history check: {why}: nothing to check");
            return Ok(0);
        }
        anyhow::bail!("{why} (store {})", loc.describe());
    }
    if let (Some(list), false) = (&q.machines, check) {
        let doc = crate::history::fleet::machines_table(
            &all,
            Some(list),
            q.reference.as_deref(),
            !q.json,
        )?;
        if q.json {
            println!("{}", serde_json::to_string_pretty(&doc)?);
        }
        return Ok(0);
    }
    let all: Vec<Series> = match q.machines.as_deref() {
        Some(list) if !list.is_empty() => all
            .into_iter()
            .filter(|s| list.contains(&s.machine))
            .collect(),
        _ => all,
    };
    let used: Vec<&store::MachineRow> = machines
        .iter()
        .filter(|m| rows_machines.iter().any(|(id, _)| id == &m.id))
        .collect();
    if let Some(path) = &q.html {
        vernier::result::check_destination(path).map_err(|e| anyhow::anyhow!("--html {e}"))?;
    }
    if (q.json || q.html.is_some()) && !check && write_documents(&q, &all, &used)? {
        return Ok(0);
    }
    let many = print_machines(&all, &used, &rows_machines);
    if check {
        if let Some(path) = &q.md.markdown {
            let md = crate::markdown::render(&markdown::summary(&all), crate::markdown::MAX_CHARS);
            crate::markdown::write(path, &md, q.md.no_summary)?;
            println!("summary (Markdown) written to {}", path.display());
        }
        return Ok(text::print_check(&all));
    }
    println!();
    for s in &all {
        text::print_series(s, many);
    }
    Ok(0)
}

/// The store at `loc`, which must exist already: a history is read from saved runs.
fn open_existing(loc: &Location) -> Result<Box<dyn store::Store>> {
    if let Location::Sqlite(p) = loc {
        if !p.exists() {
            anyhow::bail!(
                "no history store at {}: save runs into it first (vernier run --save …), or \
                 name another with --db or {}",
                p.display(),
                store::DB_ENV
            );
        }
    }
    crate::history::open_store(loc)
}

/// Each fingerprint saved (of the machine asked for, if any), with the fleet names it was
/// saved under.
fn fingerprints(rows: &[store::StoredPoint], machine: Option<&str>) -> BTreeSet<(String, String)> {
    rows.iter()
        .filter(|p| machine.is_none_or(|m| series::of_machine(p, m)))
        .map(|p| (p.machine_id.clone(), p.machine.clone()))
        .collect()
}

/// The series and the machines `used` as one document: written as the HTML report
/// (`--html`), printed as JSON (`--json`); whether it was printed, which ends the command.
fn write_documents(q: &QueryArgs, all: &[Series], used: &[&store::MachineRow]) -> Result<bool> {
    let mj: Vec<serde_json::Value> = used
        .iter()
        .map(|m| {
            serde_json::json!({
                "id": m.id, "cpu_model": m.cpu_model, "logical_cpus": m.logical_cpus,
                "kernel": m.kernel, "arch": m.arch, "hostname": m.hostname,
                "audit": serde_json::from_str::<serde_json::Value>(&m.audit)
                    .unwrap_or(serde_json::Value::Null),
            })
        })
        .collect();
    let doc = series::to_json(all, mj.into());
    if let Some(path) = &q.html {
        crate::html::write_history(path, &doc)?;
        eprintln!("HTML report written to {}", path.display());
    }
    if q.json {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(true);
    }
    Ok(false)
}

/// The machines the series were measured on, one line each (with the fleet names each was
/// saved under), after a note when there are several; whether there are.
fn print_machines(
    all: &[Series],
    used: &[&store::MachineRow],
    rows_machines: &BTreeSet<(String, String)>,
) -> bool {
    let names: BTreeSet<&str> = all.iter().map(|s| s.machine.as_str()).collect();
    if names.len() > 1 {
        println!(
            "Runs from {} machines: each machine's runs form series of their own, never mixed \
             (pick one with --machine NAME; compare them with --machines).",
            names.len()
        );
    }
    for m in used {
        let named: Vec<&str> = rows_machines
            .iter()
            .filter(|(id, name)| id == &m.id && name != &m.id)
            .map(|(_, name)| name.as_str())
            .collect();
        println!(
            "machine {}{}: {}, {} CPUs, {} {}, host {}",
            m.id,
            if named.is_empty() {
                String::new()
            } else {
                format!(" (named {})", named.join(", "))
            },
            m.cpu_model,
            m.logical_cpus,
            m.arch,
            m.kernel,
            m.hostname
        );
    }
    names.len() > 1
}
