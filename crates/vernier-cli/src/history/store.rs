//! The history store: where runs are kept, its schema and its migrations, shared by the
//! SQLite and PostgreSQL back ends.
//!
//! Tables (the same in both):
//! - `vernier_schema(version)`: one row, the schema version of the store;
//! - `machines(id, cpu_model, logical_cpus, kernel, arch, hostname, audit)`: each machine's
//!   fingerprint; `id` is a hash of the fingerprint (see `super::machine_id`);
//! - `runs(id, time, commit_id, branch, machine_id, command, result)`: one row per saved run,
//!   `result` the whole result file (JSON, every raw sample);
//! - `benchmarks(run_id, name, status, median_ns, ci95_lo_ns, ci95_hi_ns, flags,
//!   run_ci95_lo_ns, run_ci95_hi_ns)`: one row per benchmark of a run, what `history` reads (it
//!   never parses a result file back). `ci95_*` is the result's headline interval (joined to
//!   the clock range of the machine's recent runs), `run_ci95_*` the run's own
//!   (`per_iter.run_ci95_ns`), which change points are detected on.
//!
//! Version 1 made the tables; version 2 adds the indexes that lookups by commit and branch
//! (`compare --baseline`) and the join of benchmarks to their runs use; version 3 adds the
//! run's own interval (NULL in rows saved before it); the fleet's step adds to `runs` the
//! machine's name in the fleet (`machine_name`), the run's identity (`run_key`, `attempt`)
//! and its shard (`K/N`), and to `benchmarks` the time per iteration in cycles. version 5 the allocations and bytes per
//! iteration (`memory`, NULL when not counted). A store is migrated
//! step by step when it is opened; a store of a newer version than this build knows is
//! refused, never written.

use anyhow::Result;
use std::path::PathBuf;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = INSTRUCTIONS_STEP as i64;

/// The migration step that adds the fleet's columns.
pub const FLEET_STEP: usize = 4;
/// The migration step that adds the allocations and bytes per iteration.
pub const MEMORY_STEP: usize = 5;
/// The migration step that adds the unit each benchmark was judged in and its own interval in
/// cycles.
pub const UNIT_STEP: usize = 6;
/// The migration step that adds the instructions per iteration of runs counted under
/// callgrind (`--instructions`), which form series of their own.
pub const INSTRUCTIONS_STEP: usize = 7;

/// Which SQL dialect a statement is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    // Used by the PostgreSQL back end only (a build may leave it out).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

/// The statements that take a store from version `v - 1` to version `v` (index `v - 1`).
pub fn migration(step: usize, d: Dialect) -> Vec<String> {
    let id = match d {
        Dialect::Sqlite => "INTEGER PRIMARY KEY",
        Dialect::Postgres => "BIGSERIAL PRIMARY KEY",
    };
    match step {
        1 => vec![
            "CREATE TABLE vernier_schema (version BIGINT NOT NULL)".into(),
            "INSERT INTO vernier_schema (version) VALUES (0)".into(),
            "CREATE TABLE machines (id TEXT PRIMARY KEY, cpu_model TEXT NOT NULL, \
             logical_cpus BIGINT NOT NULL, kernel TEXT NOT NULL, arch TEXT NOT NULL, \
             hostname TEXT NOT NULL, audit TEXT NOT NULL)"
                .into(),
            format!(
                "CREATE TABLE runs (id {id}, time TEXT NOT NULL, commit_id TEXT, branch TEXT, \
                 machine_id TEXT NOT NULL REFERENCES machines(id), command TEXT NOT NULL, \
                 result TEXT NOT NULL)"
            ),
            "CREATE TABLE benchmarks (run_id BIGINT NOT NULL REFERENCES runs(id), \
             name TEXT NOT NULL, status TEXT NOT NULL, median_ns DOUBLE PRECISION, \
             ci95_lo_ns DOUBLE PRECISION, ci95_hi_ns DOUBLE PRECISION, flags TEXT NOT NULL)"
                .into(),
        ],
        2 => vec![
            "CREATE INDEX runs_commit ON runs (commit_id)".into(),
            "CREATE INDEX runs_branch ON runs (branch)".into(),
            "CREATE INDEX benchmarks_run ON benchmarks (run_id)".into(),
        ],
        3 => vec![
            "ALTER TABLE benchmarks ADD COLUMN run_ci95_lo_ns DOUBLE PRECISION".into(),
            "ALTER TABLE benchmarks ADD COLUMN run_ci95_hi_ns DOUBLE PRECISION".into(),
        ],
        FLEET_STEP => vec![
            "ALTER TABLE runs ADD COLUMN machine_name TEXT".into(),
            "ALTER TABLE runs ADD COLUMN run_key TEXT".into(),
            "ALTER TABLE runs ADD COLUMN attempt BIGINT".into(),
            "ALTER TABLE runs ADD COLUMN shard TEXT".into(),
            "ALTER TABLE benchmarks ADD COLUMN cycles_per_iter DOUBLE PRECISION".into(),
            "CREATE INDEX runs_identity ON runs (run_key, machine_name)".into(),
        ],
        MEMORY_STEP => vec![
            "ALTER TABLE benchmarks ADD COLUMN allocs_per_iter DOUBLE PRECISION".into(),
            "ALTER TABLE benchmarks ADD COLUMN bytes_per_iter DOUBLE PRECISION".into(),
        ],
        UNIT_STEP => vec![
            "ALTER TABLE benchmarks ADD COLUMN headline_unit TEXT".into(),
            "ALTER TABLE benchmarks ADD COLUMN cycles_run_lo DOUBLE PRECISION".into(),
            "ALTER TABLE benchmarks ADD COLUMN cycles_run_hi DOUBLE PRECISION".into(),
        ],
        INSTRUCTIONS_STEP => {
            vec!["ALTER TABLE benchmarks ADD COLUMN instructions_per_iter DOUBLE PRECISION".into()]
        }
        _ => Vec::new(),
    }
}

/// Where the store is: `--db`, else `VERNIER_DB`, else the default SQLite file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    /// A `postgres://` or `postgresql://` URL.
    Postgres(String),
}

/// The environment variable naming the store (overridden by `--db`).
pub const DB_ENV: &str = "VERNIER_DB";

impl Location {
    /// `sqlite:PATH`, `postgres://…` / `postgresql://…`, or a bare path.
    pub fn parse(s: &str) -> Result<Location> {
        let s = s.trim();
        if s.is_empty() {
            anyhow::bail!(
                "an empty store location: give sqlite:PATH, a file path, or postgres://HOST/DB"
            );
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(Location::Postgres(s.to_string()));
        }
        if let Some(p) = s.strip_prefix("sqlite:") {
            let p = p.strip_prefix("//").unwrap_or(p);
            if p.is_empty() {
                anyhow::bail!("'{s}': sqlite: needs a path, e.g. sqlite:/tmp/history.sqlite");
            }
            return Ok(Location::Sqlite(PathBuf::from(p)));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            anyhow::bail!(
                "'{s}': unknown store kind '{scheme}': give sqlite:PATH, a file path, or \
                 postgres://USER@HOST:PORT/DB"
            );
        }
        Ok(Location::Sqlite(PathBuf::from(s)))
    }

    /// The store named by `--db`, else by `VERNIER_DB`, else the default file:
    /// `$XDG_DATA_HOME/vernier/history.sqlite`, else `~/.local/share/vernier/history.sqlite`.
    pub fn resolve(db: Option<&str>) -> Result<Location> {
        if let Some(d) = db {
            let loc = Location::parse(d).map_err(|e| anyhow::anyhow!("--db {e}"))?;
            if let Location::Postgres(u) = &loc {
                warn_password_on_command_line(u);
            }
            return Ok(loc);
        }
        if let Some(v) = std::env::var_os(DB_ENV) {
            let v = v.to_string_lossy();
            return Location::parse(&v).map_err(|e| anyhow::anyhow!("{DB_ENV}={v}: {e}"));
        }
        let base = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("share"))
            })
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "no place for the history store: neither XDG_DATA_HOME nor HOME is set; \
                     give one with --db PATH or {DB_ENV}"
                )
            })?;
        Ok(Location::Sqlite(
            base.join("vernier").join("history.sqlite"),
        ))
    }

    /// For messages: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(u) => redact(u),
        }
    }
}

/// Warns, once per process, that a password given in `--db`'s URL is on the command line,
/// where every user of the machine sees it (`ps`) and CI logs keep it; and says where to put
/// it instead.
fn warn_password_on_command_line(url: &str) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if redact(url) != url && !SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
        eprintln!(
            "vernier: warning: --db {} carries a password on the command line, where other \
             users of this machine (ps) and CI logs see it: put it in PGPASSWORD or a password \
             file (~/.pgpass, or PGPASSFILE) and leave it out of the URL (docs/fleet.md)",
            redact(url)
        );
    }
}

pub use crate::args::redact;

/// A machine's fingerprint, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineRow {
    pub id: String,
    pub cpu_model: String,
    pub logical_cpus: i64,
    pub kernel: String,
    pub arch: String,
    pub hostname: String,
    /// The audit summary (JSON).
    pub audit: String,
}

impl MachineRow {
    /// The machine as the fleet names it: the run's `--machine` name, else this fingerprint.
    pub fn key(&self, f: &FleetIdentity) -> String {
        f.machine_name.clone().unwrap_or_else(|| self.id.clone())
    }
}

/// One benchmark of a run, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    pub name: String,
    pub status: String,
    pub median_ns: Option<f64>,
    pub ci95_lo_ns: Option<f64>,
    pub ci95_hi_ns: Option<f64>,
    /// The run's own interval (`per_iter.run_ci95_ns`; `None` in rows saved before the store
    /// kept it).
    pub run_ci95_ns: [Option<f64>; 2],
    /// Diagnostic codes, comma-separated (`core-slowed,outliers`).
    pub flags: String,
    /// The time per iteration in cycles of the core (`per_iter.cycles_per_iter`; `None` when
    /// not measured, or saved before the store kept it).
    pub cycles_per_iter: Option<f64>,
    /// Allocations and bytes per iteration (`memory`; `None` when not counted).
    pub memory: [Option<f64>; 2],
    /// The unit the run judged the benchmark in (`headline_unit`: `cycles` or `ns`; `None` in
    /// rows saved before the store kept it).
    pub unit: Option<String>,
    /// The run's own interval in cycles (`speed.cycles_run_ci95`).
    pub cycles_run_ci95: [Option<f64>; 2],
    /// Instructions per iteration of a run counted under callgrind (`--instructions`;
    /// `headline_unit` is then `instructions`).
    pub instructions_per_iter: Option<f64>,
}

impl BenchRow {
    /// The interval that says how precisely this run measured: the run's own, else (rows
    /// saved before the store kept it) the headline one. The headline interval is joined to
    /// the clock range of the machine's recent runs, wide enough to hold the next run whatever
    /// the clock does, and so too wide to tell runs apart by: a 5–9 % step drowns in it.
    pub fn own_ci95_ns(&self) -> [f64; 2] {
        match self.run_ci95_ns {
            [Some(lo), Some(hi)] => [lo, hi],
            _ => [
                self.ci95_lo_ns.unwrap_or(f64::NAN),
                self.ci95_hi_ns.unwrap_or(f64::NAN),
            ],
        }
    }
}

/// A run to save.
#[derive(Clone, Debug)]
pub struct RunRow {
    /// UTC, RFC 3339 (`2026-11-23T00:19:38Z`): sorts as text.
    pub time: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub machine: MachineRow,
    /// `run`, `demo` or `compare`.
    pub command: String,
    pub result: String,
    pub benchmarks: Vec<BenchRow>,
    /// Where the run sits in a fleet.
    pub fleet: FleetIdentity,
}

/// A run's place in a fleet: the machine's name, the run's identity, its shard.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetIdentity {
    /// `--machine` / `VERNIER_MACHINE`; `None`: the fingerprint names the machine.
    pub machine_name: Option<String>,
    /// `--run-id`, or the CI's own; `None`: a run of its own, never replaced.
    pub run_key: Option<String>,
    /// The CI's attempt (1 for the first); a different attempt is kept apart.
    pub attempt: i64,
    /// `K/N` when the run measured one shard.
    pub shard: Option<String>,
}

/// One benchmark of one stored run, as `history` reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredPoint {
    pub run_id: i64,
    pub time: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub machine_id: String,
    pub bench: BenchRow,
    /// The machine as the fleet names it: its `--machine` name, else its fingerprint.
    pub machine: String,
    pub run_key: Option<String>,
    pub attempt: Option<i64>,
    /// A later attempt of the same run id saved this benchmark on this machine again: the
    /// point is kept and shown, marked, but not evidence (set by `series::build`).
    pub superseded: bool,
}

/// A stored run's place in the fleet (for `history --fleet`).
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub run_id: i64,
    pub commit: Option<String>,
    /// The `--machine` name, else the fingerprint.
    pub machine: String,
    pub shard: Option<String>,
    pub attempt: Option<i64>,
    pub run_key: Option<String>,
    pub benchmarks: i64,
}

/// A stored run's header and its whole result (for `compare --baseline`).
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub run_id: i64,
    pub time: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub machine_id: String,
    pub result: String,
}

/// A value of a column both stores read into the same Rust type (SQLite's and PostgreSQL's).
#[cfg(feature = "postgres")]
pub trait Column: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a> {}
#[cfg(feature = "postgres")]
impl<T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>> Column for T {}
/// A value of a column the store reads into a Rust type (SQLite's).
#[cfg(not(feature = "postgres"))]
pub trait Column: rusqlite::types::FromSql {}
#[cfg(not(feature = "postgres"))]
impl<T: rusqlite::types::FromSql> Column for T {}

/// A row a query of either store returned, its columns read by index: each kind of row is
/// mapped to its type once, below, for both stores. A column of another type is an error of
/// the store's own kind, not a panic.
pub trait Row {
    type Error;
    fn col<T: Column>(&self, i: usize) -> std::result::Result<T, Self::Error>;
}

/// A row of [`SELECT_POINTS`].
pub fn point_of<R: Row>(r: &R) -> std::result::Result<StoredPoint, R::Error> {
    Ok(StoredPoint {
        run_id: r.col(0)?,
        time: r.col(1)?,
        commit: r.col(2)?,
        branch: r.col(3)?,
        machine_id: r.col(4)?,
        bench: BenchRow {
            name: r.col(5)?,
            status: r.col(6)?,
            median_ns: r.col(7)?,
            ci95_lo_ns: r.col(8)?,
            ci95_hi_ns: r.col(9)?,
            flags: r.col(10)?,
            run_ci95_ns: [r.col(11)?, r.col(12)?],
            cycles_per_iter: r.col(16)?,
            memory: [r.col(17)?, r.col(18)?],
            unit: r.col(19)?,
            cycles_run_ci95: [r.col(20)?, r.col(21)?],
            instructions_per_iter: r.col(22)?,
        },
        machine: r.col(13)?,
        run_key: r.col(14)?,
        attempt: r.col(15)?,
        superseded: false,
    })
}

/// A row of [`SELECT_MACHINES`].
pub fn machine_of<R: Row>(r: &R) -> std::result::Result<MachineRow, R::Error> {
    Ok(MachineRow {
        id: r.col(0)?,
        cpu_model: r.col(1)?,
        logical_cpus: r.col(2)?,
        kernel: r.col(3)?,
        arch: r.col(4)?,
        hostname: r.col(5)?,
        audit: r.col(6)?,
    })
}

/// A row of [`SELECT_RUNS_AT`].
pub fn run_of<R: Row>(r: &R) -> std::result::Result<StoredRun, R::Error> {
    Ok(StoredRun {
        run_id: r.col(0)?,
        time: r.col(1)?,
        commit: r.col(2)?,
        branch: r.col(3)?,
        machine_id: r.col(4)?,
        result: r.col(5)?,
    })
}

/// A row of [`SELECT_RUN_SUMMARIES`].
pub fn summary_of<R: Row>(r: &R) -> std::result::Result<RunSummary, R::Error> {
    Ok(RunSummary {
        run_id: r.col(0)?,
        commit: r.col(1)?,
        machine: r.col(2)?,
        shard: r.col(3)?,
        attempt: r.col(4)?,
        run_key: r.col(5)?,
        benchmarks: r.col(6)?,
    })
}

/// What every back end does.
pub trait Store {
    /// Save a run and its benchmarks in one transaction; the run's id.
    fn save(&mut self, run: &RunRow) -> Result<i64>;
    /// Every benchmark of every run, in the order the runs were saved.
    fn points(&mut self) -> Result<Vec<StoredPoint>>;
    /// Every machine.
    fn machines(&mut self) -> Result<Vec<MachineRow>>;
    /// Runs whose commit starts with `reference` or whose branch is `reference`, newest first.
    fn runs_at(&mut self, reference: &str) -> Result<Vec<StoredRun>>;
    /// Every run's place in the fleet, in the order saved.
    fn run_summaries(&mut self) -> Result<Vec<RunSummary>>;
}

/// The error for a store written by a newer vernier.
pub fn newer_schema(what: &str, found: i64) -> anyhow::Error {
    anyhow::anyhow!(
        "the history store {what} has schema version {found}, newer than this vernier knows \
         ({SCHEMA_VERSION}): it was written by a newer vernier; upgrade vernier, or give \
         another store with --db"
    )
}

pub const SELECT_POINTS: &str = "SELECT r.id, r.time, r.commit_id, r.branch, r.machine_id, \
     b.name, b.status, b.median_ns, b.ci95_lo_ns, b.ci95_hi_ns, b.flags, \
     b.run_ci95_lo_ns, b.run_ci95_hi_ns, \
     COALESCE(r.machine_name, r.machine_id), r.run_key, r.attempt, b.cycles_per_iter, \
     b.allocs_per_iter, b.bytes_per_iter, b.headline_unit, b.cycles_run_lo, b.cycles_run_hi, \
     b.instructions_per_iter \
     FROM benchmarks b JOIN runs r ON r.id = b.run_id ORDER BY r.id";

pub const SELECT_MACHINES: &str =
    "SELECT id, cpu_model, logical_cpus, kernel, arch, hostname, audit FROM machines ORDER BY id";

/// `?1` is the reference; `?2` the same followed by `%`.
pub const SELECT_RUNS_AT: &str =
    "SELECT id, time, commit_id, branch, machine_id, result FROM runs \
     WHERE commit_id LIKE ?2 OR branch = ?1 ORDER BY id DESC";

pub const INSERT_MACHINE: &str = "INSERT INTO machines \
     (id, cpu_model, logical_cpus, kernel, arch, hostname, audit) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING";

/// A run and its place in the fleet (`?7` machine name, `?8` run key, `?9` attempt, `?10`
/// shard): one statement, so that a save only inserts.
pub const INSERT_RUN: &str = "INSERT INTO runs \
     (time, commit_id, branch, machine_id, command, result, machine_name, run_key, attempt, \
     shard) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id";

/// A benchmark of a run, with its cycles per iteration (`?12`), headline unit, own interval in
/// cycles and counted instructions per iteration (`?16`).
pub const INSERT_BENCH: &str = "INSERT INTO benchmarks \
     (run_id, name, status, median_ns, ci95_lo_ns, ci95_hi_ns, flags, run_ci95_lo_ns, \
     run_ci95_hi_ns, allocs_per_iter, bytes_per_iter, cycles_per_iter, headline_unit, \
     cycles_run_lo, cycles_run_hi, instructions_per_iter) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";

/// The machine as the fleet names it, in SQL.
const MACHINE_KEY: &str = "COALESCE(machine_name, machine_id)";

/// Deletes what the same identity (`?2` run key, `?3` attempt, `?4` machine) saved before of
/// the benchmark `?1`: in a SQLite store a retried job replaces its points (a PostgreSQL
/// store only inserts, and the newer points supersede the older when read).
pub fn delete_replaced() -> String {
    format!(
        "DELETE FROM benchmarks WHERE name = ?1 AND run_id IN (SELECT id FROM runs WHERE \
         run_key = ?2 AND attempt = ?3 AND {MACHINE_KEY} = ?4)"
    )
}

/// Deletes the runs of the same identity left with no benchmark (`?4`: the run just saved).
pub fn delete_emptied() -> String {
    format!(
        "DELETE FROM runs WHERE run_key = ?1 AND attempt = ?2 AND {MACHINE_KEY} = ?3 AND \
         id <> ?4 AND NOT EXISTS (SELECT 1 FROM benchmarks b WHERE b.run_id = runs.id)"
    )
}

pub const SELECT_RUN_SUMMARIES: &str = "SELECT r.id, r.commit_id, \
     COALESCE(r.machine_name, r.machine_id), r.shard, r.attempt, r.run_key, \
     (SELECT COUNT(*) FROM benchmarks b WHERE b.run_id = r.id) FROM runs r ORDER BY r.id";

/// A statement in PostgreSQL's placeholder style (`$1`).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub fn pg(sql: &str) -> String {
    sql.replace('?', "$")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse() {
        assert_eq!(
            Location::parse("sqlite:/tmp/h.db").unwrap(),
            Location::Sqlite("/tmp/h.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:///tmp/h.db").unwrap(),
            Location::Sqlite("/tmp/h.db".into())
        );
        assert_eq!(
            Location::parse("h.db").unwrap(),
            Location::Sqlite("h.db".into())
        );
        assert!(matches!(
            Location::parse("postgresql://u@localhost/x").unwrap(),
            Location::Postgres(_)
        ));
        let e = Location::parse("mysql://x/y").unwrap_err().to_string();
        assert!(e.contains("unknown store kind 'mysql'"), "{e}");
        assert!(Location::parse("sqlite:").is_err());
        assert!(Location::parse(" ").is_err());
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("postgres://bob:secret@db:5432/h"),
            "postgres://bob:***@db:5432/h"
        );
        assert_eq!(redact("postgres://bob@db/h"), "postgres://bob@db/h");
        assert_eq!(redact("postgres://db/h"), "postgres://db/h");
        assert_eq!(
            redact("postgres://bob@db/h?sslmode=require&password=x&application_name=a"),
            "postgres://bob@db/h?sslmode=require&password=***&application_name=a"
        );
        assert_eq!(
            crate::args::redact_args(["run".into(), "--db=postgres://u:p@h/d".into()]),
            vec!["run".to_string(), "--db=postgres://u:***@h/d".to_string()]
        );
    }

    #[test]
    fn every_version_has_a_migration() {
        for v in 1..=SCHEMA_VERSION as usize {
            for d in [Dialect::Sqlite, Dialect::Postgres] {
                assert!(!migration(v, d).is_empty(), "version {v}");
            }
        }
        assert!(migration(SCHEMA_VERSION as usize + 1, Dialect::Sqlite).is_empty());
    }
}
