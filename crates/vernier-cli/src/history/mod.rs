//! History across commits: every run kept (`--save`), each benchmark's series over commits
//! and where it shifted (`vernier history`), a gate for CI (`vernier history check`), and a
//! comparison against a stored commit (`vernier compare --baseline`). See `docs/history.md`.
//!
//! - `store`: the schema, its migrations and the back-end interface; `sqlite` and `postgres`
//!   the two back ends, which use `store` and never each other ([`open_store`] picks one);
//! - `changepoint`: the detection (pure);
//! - `series`: stored rows → series → change points, and their JSON;
//! - `command`: the `history` command; `baseline`: `compare --baseline`.

pub mod changepoint;
pub mod fleet;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod series;
pub mod sqlite;
pub mod store;
pub mod when;

use crate::args::SaveArgs;
use anyhow::{Context as _, Result};
use std::process::Command;
use std::time::Instant;
use store::{BenchRow, FleetIdentity, Location, MachineRow, RunRow};
use vernier::result::{ResultFile, Status};

/// Open the store at `loc`, with the back end its kind names (the back ends stand beside each
/// other under `store`'s interface): a SQLite file is created or migrated as needed; a
/// PostgreSQL store must already be at this build's schema (`history migrate`).
pub fn open_store(loc: &Location) -> Result<Box<dyn store::Store>> {
    match loc {
        Location::Sqlite(p) => Ok(Box::new(sqlite::SqliteStore::open(p)?)),
        #[cfg(feature = "postgres")]
        Location::Postgres(u) => Ok(Box::new(postgres::PgStore::open(u)?)),
        #[cfg(not(feature = "postgres"))]
        Location::Postgres(u) => Err(without_postgres(u)),
    }
}

/// `history migrate`: the store at `loc` created or migrated to this build's schema, and each
/// of `writers` granted what saving needs (PostgreSQL only). The versions before (`None`: a
/// new store) and after.
pub fn migrate_store(loc: &Location, writers: &[String]) -> Result<(Option<i64>, i64)> {
    match loc {
        Location::Sqlite(p) => {
            if !writers.is_empty() {
                anyhow::bail!(
                    "--writer grants a PostgreSQL role: a SQLite store {} has no roles (its \
                     file's permissions say who may write it)",
                    p.display()
                );
            }
            let before = sqlite::SqliteStore::version_of(p)?;
            sqlite::SqliteStore::open(p)?;
            Ok((before, store::SCHEMA_VERSION))
        }
        #[cfg(feature = "postgres")]
        Location::Postgres(u) => postgres::PgStore::migrate(u, store::SCHEMA_VERSION, writers),
        #[cfg(not(feature = "postgres"))]
        Location::Postgres(u) => Err(without_postgres(u)),
    }
}

/// Why a PostgreSQL store cannot be opened by a build without the `postgres` feature, and how
/// to build one with it.
#[cfg_attr(feature = "postgres", allow(dead_code))]
fn without_postgres(url: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: this vernier was built without PostgreSQL support (the `postgres` feature). The \
         `vernier` command has it by default (cargo install --path crates/vernier-cli); the \
         Python package has it when installed with \
         MATURIN_PEP517_ARGS=\"--features postgres\" pip install ./python",
        store::redact(url)
    )
}

/// Audit checks left out of the machine fingerprint: they describe the moment, not the
/// machine (`load`: other processes running; `perf-sampling`: the kernel retunes the
/// sampling rate by itself).
pub const TRANSIENT_CHECKS: [&str; 2] = ["load", "perf-sampling"];

/// Save `file` when `--save` was given; prints one line saying where, and how long it took.
/// Called after the run's `--json` file is written, so a store that fails loses nothing.
pub fn save_if_asked(
    args: &SaveArgs,
    file: &ResultFile,
    command: &str,
    shard: Option<crate::args::Shard>,
) -> Result<()> {
    if !args.save {
        return Ok(());
    }
    if crate::term::interrupted() {
        eprintln!("vernier: the run was interrupted: not saved to the history");
        return Ok(());
    }
    save_file(args, file, command, shard).map(|_| ())
}

/// Save `file` to the store `args` name, under its commit, branch and fleet identity; prints
/// one line saying where, and how long it took. The run's id in the store.
pub fn save_file(
    args: &SaveArgs,
    file: &ResultFile,
    command: &str,
    shard: Option<crate::args::Shard>,
) -> Result<i64> {
    let started = Instant::now();
    let loc = Location::resolve(args.db.as_deref())?;
    let at = when::stored_at(file, std::time::SystemTime::now())?;
    let (commit, branch) = git_ref(args);
    let mut run = run_row(file, command, commit, branch, at.time())?;
    run.fleet = fleet_identity(args, shard, |k| std::env::var(k).ok());
    let saved = open_store(&loc).and_then(|mut s| s.save(&run));
    let id = saved.with_context(|| {
        "the run was not saved (its result is intact: written to --json when given; save it \
         later by running again with --save)"
            .to_string()
    })?;
    let f = &run.fleet;
    eprintln!(
        "vernier: saved run {id} (commit {}, branch {}, machine {}{}{}) to {} in {:.1} ms",
        run.commit.as_deref().map(short).unwrap_or("none"),
        run.branch.as_deref().unwrap_or("none"),
        match &f.machine_name {
            Some(n) => format!("{n}, fingerprint {}", run.machine.id),
            None => run.machine.id.clone(),
        },
        f.run_key
            .as_deref()
            .map(|k| format!(", run id {k} attempt {}", f.attempt))
            .unwrap_or_default(),
        f.shard
            .as_deref()
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default(),
        loc.describe(),
        started.elapsed().as_secs_f64() * 1e3
    );
    when::say(&at);
    Ok(id)
}

/// The environment variable naming the machine in the fleet (overridden by `--machine`).
pub const MACHINE_ENV: &str = "VERNIER_MACHINE";

/// The run's place in the fleet: the machine's name (`--machine`, else `VERNIER_MACHINE`),
/// the run's identity (`--run-id`, else the CI's own variables, read through `env`) and its
/// attempt, and the shard.
///
/// - GitHub Actions: `github:<GITHUB_REPOSITORY>/<GITHUB_RUN_ID>`, attempt `GITHUB_RUN_ATTEMPT`
///   (every job of a workflow run shares the run id; a re-run is the next attempt);
/// - Buildkite: `buildkite:<BUILDKITE_BUILD_ID>`, attempt `BUILDKITE_RETRY_COUNT` + 1;
/// - GitLab: `gitlab:<CI_PIPELINE_ID>`, attempt 1 (a retried GitLab job has a new job id
///   and no attempt number: it replaces what the pipeline saved from that machine).
///
/// With `--run-id` the attempt is still the CI's when there is one.
pub fn fleet_identity(
    args: &SaveArgs,
    shard: Option<crate::args::Shard>,
    env: impl Fn(&str) -> Option<String>,
) -> FleetIdentity {
    let var = |k: &str| {
        env(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let num = |k: &str| var(k).and_then(|v| v.parse::<i64>().ok());
    let (ci_key, attempt) = if let Some(id) = var("GITHUB_RUN_ID") {
        let repo = var("GITHUB_REPOSITORY").unwrap_or_default();
        (
            Some(format!("github:{repo}/{id}")),
            num("GITHUB_RUN_ATTEMPT").unwrap_or(1),
        )
    } else if let Some(id) = var("BUILDKITE_BUILD_ID") {
        (
            Some(format!("buildkite:{id}")),
            num("BUILDKITE_RETRY_COUNT").unwrap_or(0) + 1,
        )
    } else if let Some(id) = var("CI_PIPELINE_ID") {
        (Some(format!("gitlab:{id}")), 1)
    } else {
        (None, 1)
    };
    FleetIdentity {
        machine_name: args
            .machine
            .clone()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .or_else(|| var(MACHINE_ENV)),
        run_key: args
            .run_id
            .clone()
            .filter(|r| !r.trim().is_empty())
            .or(ci_key),
        attempt,
        shard: shard.map(|s| s.to_string()),
    }
}

/// The first 12 characters of a commit id.
pub fn short(c: &str) -> &str {
    c.get(..12).unwrap_or(c)
}

/// The commit and branch: `--commit`/`--branch`, else git's view of the current directory.
/// Prints a note when neither `--commit` nor git gives a commit.
fn git_ref(args: &SaveArgs) -> (Option<String>, Option<String>) {
    let (commit, branch) = match (&args.commit, &args.branch) {
        (Some(c), Some(b)) => (Some(c.clone()), Some(b.clone())),
        _ => {
            let (c, b) = git_head();
            (args.commit.clone().or(c), args.branch.clone().or(b))
        }
    };
    if commit.is_none() {
        eprintln!(
            "vernier: note: not in a git repository (or git is not installed) and no --commit \
             given: the run is saved without a commit; `history` places it by time"
        );
    }
    (commit, branch)
}

/// The current directory's commit and branch (`None` for a detached HEAD), from one `git`.
fn git_head() -> (Option<String>, Option<String>) {
    let Ok(out) = Command::new("git")
        .args(["rev-parse", "HEAD", "--abbrev-ref", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return (None, None);
    };
    if !out.status.success() {
        return (None, None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let commit = lines.next().map(str::to_string);
    let branch = lines.next().filter(|b| *b != "HEAD").map(str::to_string);
    (commit, branch)
}

/// The rows stored for a result, at `time` (RFC 3339, UTC: [`when::stored_at`]).
pub fn run_row(
    file: &ResultFile,
    command: &str,
    commit: Option<String>,
    branch: Option<String>,
    time: &str,
) -> Result<RunRow> {
    let result = serde_json::to_string(file).context("cannot serialise the result")?;
    let benchmarks = file
        .benchmarks
        .iter()
        .map(|b| {
            let f = |x: f64| x.is_finite().then_some(x);
            BenchRow {
                name: b.name.clone(),
                status: match b.status {
                    Status::Ok => "ok",
                    Status::Failed => "failed",
                    Status::Interrupted => "interrupted",
                }
                .into(),
                median_ns: f(b.per_iter.median_ns),
                ci95_lo_ns: f(b.per_iter.ci95_ns[0]),
                ci95_hi_ns: f(b.per_iter.ci95_ns[1]),
                run_ci95_ns: b.per_iter.run_ci95_ns.map(f),
                memory: b.memory.as_ref().map_or([None, None], |m| {
                    [Some(m.allocs_per_iter), Some(m.bytes_per_iter)]
                }),
                flags: b
                    .diagnostics
                    .iter()
                    .map(|d| d.code.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                // The probe's cycles of the core at that moment, else the cycles counter's.
                cycles_per_iter: b
                    .speed
                    .as_ref()
                    .and_then(|s| s.cycles_per_iter)
                    .or_else(|| b.counters.as_ref()?.get("cycles_per_iter").copied())
                    .and_then(f),
                unit: Some(b.headline_unit.as_str().to_string()),
                cycles_run_ci95: b
                    .speed
                    .as_ref()
                    .and_then(|s| s.cycles_run_ci95)
                    .map_or([None, None], |c| c.map(f)),
                instructions_per_iter: (b.headline_unit == vernier::analyze::Unit::Instructions)
                    .then(|| b.instructions_per_iter())
                    .flatten(),
            }
        })
        .collect();
    Ok(RunRow {
        time: time.to_string(),
        commit,
        branch,
        machine: machine_row(file),
        command: command.into(),
        result,
        benchmarks,
        fleet: FleetIdentity::default(),
    })
}

/// The machine's fingerprint, and its id: a hash of the CPU model, the number of CPUs, the
/// kernel, the architecture and the audit summary (less [`TRANSIENT_CHECKS`]). The hostname is
/// stored but not hashed: identical CI machines share one id, and their runs one series.
pub fn machine_row(file: &ResultFile) -> MachineRow {
    let m = &file.machine;
    let mut audit = file.system.clone();
    if let Some(obj) = audit.as_object_mut() {
        obj.remove("tuned");
        if let Some(f) = obj.get_mut("failing").and_then(|f| f.as_array_mut()) {
            f.retain(|c| !c.as_str().is_some_and(|c| TRANSIENT_CHECKS.contains(&c)));
        }
    }
    let audit = audit.to_string();
    let key = format!(
        "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        m.cpu_model, m.logical_cpus, m.kernel, m.arch, audit
    );
    MachineRow {
        id: format!("{:016x}", vernier::ledger::fnv1a(key.as_bytes())),
        cpu_model: m.cpu_model.clone(),
        logical_cpus: m.logical_cpus as i64,
        kernel: m.kernel.clone(),
        arch: m.arch.clone(),
        hostname: m.hostname.clone(),
        audit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result file with no benchmark, for the fingerprint's tests.
    pub fn empty_result() -> ResultFile {
        serde_json::from_value(serde_json::json!({
            "schema": 1,
            "tool": {"name": "vernier", "version": "0"},
            "machine": vernier::machine::Machine {
                cpu_model: "a CPU".into(),
                logical_cpus: 2,
                kernel: "6.1".into(),
                arch: "x86_64".into(),
                ..Default::default()
            },
            "timer": {"kind": "monotonic", "resolution_ns": 1.0, "overhead_ns": 20.0, "tsc_hz": null},
            "benchmarks": []
        }))
        .unwrap()
    }

    #[test]
    fn the_run_identity_comes_from_the_ci() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let args = SaveArgs::default();
        let gh = fleet_identity(
            &args,
            None,
            env(&[
                ("GITHUB_RUN_ID", "42"),
                ("GITHUB_RUN_ATTEMPT", "3"),
                ("GITHUB_REPOSITORY", "o/r"),
                ("VERNIER_MACHINE", "zen5"),
            ]),
        );
        assert_eq!(gh.run_key.as_deref(), Some("github:o/r/42"));
        assert_eq!((gh.attempt, gh.machine_name.as_deref()), (3, Some("zen5")));
        let bk = fleet_identity(
            &args,
            None,
            env(&[
                ("BUILDKITE_BUILD_ID", "b-1"),
                ("BUILDKITE_RETRY_COUNT", "1"),
            ]),
        );
        assert_eq!(
            (bk.run_key.as_deref(), bk.attempt),
            (Some("buildkite:b-1"), 2)
        );
        let gl = fleet_identity(&args, None, env(&[("CI_PIPELINE_ID", "7")]));
        assert_eq!((gl.run_key.as_deref(), gl.attempt), (Some("gitlab:7"), 1));
        let none = fleet_identity(&args, None, env(&[]));
        assert_eq!((none.run_key, none.machine_name), (None, None));
        let given = SaveArgs {
            machine: Some("m1".into()),
            run_id: Some("r9".into()),
            ..Default::default()
        };
        let shard = crate::args::Shard::parse("2/4").ok();
        let g = fleet_identity(&given, shard, env(&[("GITHUB_RUN_ID", "42")]));
        assert_eq!(g.run_key.as_deref(), Some("r9"));
        assert_eq!(g.machine_name.as_deref(), Some("m1"));
        assert_eq!(g.shard.as_deref(), Some("2/4"));
    }

    #[test]
    fn the_machine_id_ignores_the_load_and_the_hostname() {
        let mut f = empty_result();
        f.system = serde_json::json!({"tuned": false, "failing": ["isolcpus", "load"]});
        let a = machine_row(&f);
        f.system = serde_json::json!({"tuned": true, "failing": ["isolcpus"]});
        f.machine.hostname = "other".into();
        let b = machine_row(&f);
        assert_eq!(a.id, b.id);
        f.system = serde_json::json!({"tuned": true, "failing": []});
        assert_ne!(machine_row(&f).id, a.id);
        f.machine.cpu_model = "another CPU".into();
        f.system = serde_json::json!({"tuned": true, "failing": ["isolcpus"]});
        assert_ne!(machine_row(&f).id, a.id);
    }

    /// An Arm machine and an x86-64 one are two machines, however alike the rest of their
    /// fingerprints: the architecture is hashed into the id.
    #[test]
    fn the_machine_id_holds_the_architecture() {
        let mut f = empty_result();
        let x86 = machine_row(&f);
        f.machine.arch = "aarch64".into();
        let arm = machine_row(&f);
        assert_ne!(arm.id, x86.id);
        assert_eq!(
            (x86.arch.as_str(), arm.arch.as_str()),
            ("x86_64", "aarch64")
        );
    }

    #[test]
    fn a_build_without_postgresql_says_how_to_get_it() {
        let e = without_postgres("postgres://bob:secret@db/h").to_string();
        assert!(e.starts_with("postgres://bob:***@db/h: "), "{e}");
        assert!(e.contains("cargo install --path crates/vernier-cli"), "{e}");
        assert!(e.contains("--features postgres"), "{e}");
        #[cfg(not(feature = "postgres"))]
        {
            let loc = Location::parse("postgres://bob:secret@db/h").unwrap();
            let e = open_store(&loc).err().unwrap().to_string();
            assert!(e.contains("built without PostgreSQL support"), "{e}");
        }
    }
}
