//! The history store in an SQLite file (rusqlite, with SQLite built in: nothing to install).
//!
//! A store another process holds locked is waited for up to [`LOCK_WAIT`], then refused with
//! the reason; a file that is not an SQLite database, or not a vernier store, or of a newer
//! schema is refused and left untouched.

use super::store::{self, Dialect, MachineRow, RunRow, RunSummary, StoredPoint, StoredRun};
use anyhow::{Context as _, Result};
use rusqlite::{params, Connection, ErrorCode, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a save or a read waits for a lock held by another process (another `vernier
/// --save` finishing its transaction takes milliseconds).
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

/// An SQLite error in words a user can act on.
fn explain(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    let p = path.display();
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => anyhow::anyhow!(
            "the history store {p} is locked by another process (waited {} s): let the other \
             vernier or sqlite3 session finish, or give another store with --db",
            LOCK_WAIT.as_secs_f64()
        ),
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => anyhow::anyhow!(
            "the history store {p} is not a readable SQLite database (corrupt, or another kind \
             of file): move it aside (the next --save starts a new store there), or give \
             another store with --db"
        ),
        Some(ErrorCode::ReadOnly)
        | Some(ErrorCode::CannotOpen)
        | Some(ErrorCode::PermissionDenied) => {
            anyhow::anyhow!(
                "the history store {p} cannot be opened for writing ({e}): check the \
                 directory's permissions, or give another store with --db"
            )
        }
        _ => anyhow::anyhow!("the history store {p}: {e}"),
    }
}

impl SqliteStore {
    /// Open or create the store at `path` and bring it to [`store::SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<SqliteStore> {
        Self::open_at_version(path, store::SCHEMA_VERSION)
    }

    /// Open or create the store at `path`, migrating it up to `target` (tests make older
    /// stores with it).
    pub fn open_at_version(path: &Path, target: i64) -> Result<SqliteStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| {
                format!(
                    "cannot create the directory of the history store {}: give another store \
                     with --db",
                    path.display()
                )
            })?;
        }
        if path.is_dir() {
            anyhow::bail!(
                "the history store {} is a directory: give a file path with --db",
                path.display()
            );
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| explain(path, e))?;
        conn.busy_timeout(LOCK_WAIT).map_err(|e| explain(path, e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| explain(path, e))?;
        let mut s = SqliteStore {
            conn,
            path: path.to_path_buf(),
        };
        s.migrate(target)?;
        Ok(s)
    }

    /// The schema version of the store at `path` without changing it; `None` when there is
    /// no store there yet (no file, or an empty one).
    pub fn version_of(path: &Path) -> Result<Option<i64>> {
        if !path.is_file() {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| explain(path, e))?;
        Ok(Some(version_of(&conn, path)?).filter(|&v| v > 0))
    }

    fn migrate(&mut self, target: i64) -> Result<()> {
        // Reading the version takes no write lock: a store already at the target version is
        // read (by `history`) even where it cannot be written, and costs a save no commit.
        let version = version_of(&self.conn, &self.path)?;
        if version > store::SCHEMA_VERSION {
            return Err(store::newer_schema(
                &self.path.display().to_string(),
                version,
            ));
        }
        if version >= target {
            return Ok(());
        }
        if version == 0 {
            // Write-ahead logging: `history` reads while a run is being saved, and a save
            // commits with one sync of the log (`synchronous = NORMAL`, set per connection).
            self.conn
                .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
                .map_err(|e| explain(&self.path, e))?;
        }
        // An immediate transaction takes the write lock first, so two processes creating the
        // same store do not both run the migrations (the version is read again under it).
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| explain(&self.path, e))?;
        let version = version_of(&tx, &self.path)?;
        if version > store::SCHEMA_VERSION {
            return Err(store::newer_schema(
                &self.path.display().to_string(),
                version,
            ));
        }
        for v in version + 1..=target {
            for sql in store::migration(v as usize, Dialect::Sqlite) {
                tx.execute(&sql, []).map_err(|e| explain(&self.path, e))?;
            }
            tx.execute("UPDATE vernier_schema SET version = ?1", [v])
                .map_err(|e| explain(&self.path, e))?;
        }
        tx.commit().map_err(|e| explain(&self.path, e))
    }
}

/// The store's version: 0 for an empty file.
fn version_of(conn: &Connection, path: &Path) -> Result<i64> {
    let err = |e| explain(path, e);
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .map_err(err)?;
    let tables: Vec<String> = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    if tables.is_empty() {
        return Ok(0);
    }
    if !tables.iter().any(|t| t == "vernier_schema") {
        anyhow::bail!(
            "{} is an SQLite database but not a vernier history store (it has tables {} and no \
             vernier_schema): give another store with --db",
            path.display(),
            tables.join(", ")
        );
    }
    conn.query_row("SELECT version FROM vernier_schema", [], |r| r.get(0))
        .map_err(err)
}

impl store::Store for SqliteStore {
    fn save(&mut self, run: &RunRow) -> Result<i64> {
        let path = self.path.clone();
        let err = |e| explain(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let m = &run.machine;
        tx.execute(
            store::INSERT_MACHINE,
            params![
                m.id,
                m.cpu_model,
                m.logical_cpus,
                m.kernel,
                m.arch,
                m.hostname,
                m.audit
            ],
        )
        .map_err(err)?;
        let f = &run.fleet;
        let key = m.key(f);
        if let Some(rk) = &f.run_key {
            let mut st = tx.prepare(&store::delete_replaced()).map_err(err)?;
            for b in &run.benchmarks {
                st.execute(params![b.name, rk, f.attempt, key])
                    .map_err(err)?;
            }
        }
        let id: i64 = tx
            .query_row(
                store::INSERT_RUN,
                params![
                    run.time,
                    run.commit,
                    run.branch,
                    m.id,
                    run.command,
                    run.result,
                    f.machine_name,
                    f.run_key,
                    f.attempt,
                    f.shard
                ],
                |r| r.get(0),
            )
            .map_err(err)?;
        {
            let mut st = tx.prepare(store::INSERT_BENCH).map_err(err)?;
            for b in &run.benchmarks {
                st.execute(params![
                    id,
                    b.name,
                    b.status,
                    b.median_ns,
                    b.ci95_lo_ns,
                    b.ci95_hi_ns,
                    b.flags,
                    b.run_ci95_ns[0],
                    b.run_ci95_ns[1],
                    b.memory[0],
                    b.memory[1],
                    b.cycles_per_iter,
                    b.unit,
                    b.cycles_run_ci95[0],
                    b.cycles_run_ci95[1],
                    b.instructions_per_iter
                ])
                .map_err(err)?;
            }
        }
        if let Some(rk) = &f.run_key {
            tx.execute(&store::delete_emptied(), params![rk, f.attempt, key, id])
                .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    fn points(&mut self) -> Result<Vec<StoredPoint>> {
        let mut st = self
            .conn
            .prepare(store::SELECT_POINTS)
            .map_err(|e| explain(&self.path, e))?;
        let rows = st
            .query_map([], |r| store::point_of(r))
            .map_err(|e| explain(&self.path, e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| explain(&self.path, e))
    }

    fn machines(&mut self) -> Result<Vec<MachineRow>> {
        let mut st = self
            .conn
            .prepare(store::SELECT_MACHINES)
            .map_err(|e| explain(&self.path, e))?;
        let rows = st
            .query_map([], |r| store::machine_of(r))
            .map_err(|e| explain(&self.path, e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| explain(&self.path, e))
    }

    fn runs_at(&mut self, reference: &str) -> Result<Vec<StoredRun>> {
        let mut st = self
            .conn
            .prepare(store::SELECT_RUNS_AT)
            .map_err(|e| explain(&self.path, e))?;
        let rows = st
            .query_map(params![reference, format!("{reference}%")], |r| {
                store::run_of(r)
            })
            .map_err(|e| explain(&self.path, e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| explain(&self.path, e))
    }

    fn run_summaries(&mut self) -> Result<Vec<RunSummary>> {
        let mut st = self
            .conn
            .prepare(store::SELECT_RUN_SUMMARIES)
            .map_err(|e| explain(&self.path, e))?;
        let rows = st
            .query_map([], |r| store::summary_of(r))
            .map_err(|e| explain(&self.path, e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| explain(&self.path, e))
    }
}

impl store::Row for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn col<T: store::Column>(&self, i: usize) -> rusqlite::Result<T> {
        self.get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::store::Store as _;

    fn indexes(conn: &Connection) -> Vec<String> {
        let mut st = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn a_version_1_store_is_migrated_and_keeps_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        {
            let s = SqliteStore::open_at_version(&path, 1).unwrap();
            assert_eq!(version_of(&s.conn, &path).unwrap(), 1);
            assert!(indexes(&s.conn).is_empty());
            // A run as version 1 stored it.
            s.conn
                .execute_batch(
                    "INSERT INTO machines VALUES ('m1', 'cpu', 2, '6.1', 'x86_64', 'h', '{}');
                     INSERT INTO runs (time, commit_id, branch, machine_id, command, result)
                       VALUES ('2026-01-01T00:00:00Z', 'abc', 'main', 'm1', 'run', '{}');
                     INSERT INTO benchmarks VALUES (1, 'add', 'ok', 1.5, 1.4, 1.6, '');",
                )
                .unwrap();
        }
        let mut s = SqliteStore::open(&path).unwrap();
        assert_eq!(version_of(&s.conn, &path).unwrap(), store::SCHEMA_VERSION);
        assert_eq!(
            indexes(&s.conn),
            [
                "benchmarks_run",
                "runs_branch",
                "runs_commit",
                "runs_identity"
            ]
        );
        let points = s.points().unwrap();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].bench.median_ns, Some(1.5));
        // Saved before the run's own interval was kept: the headline one stands for it.
        assert_eq!(points[0].bench.run_ci95_ns, [None, None]);
        assert_eq!(points[0].bench.own_ci95_ns(), [1.4, 1.6]);
        assert_eq!(points[0].commit.as_deref(), Some("abc"));
        assert_eq!(s.runs_at("ab").unwrap().len(), 1);
        assert_eq!(s.runs_at("main").unwrap().len(), 1);
        assert!(s.runs_at("zz").unwrap().is_empty());
        // Opening again changes nothing.
        drop(s);
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(version_of(&s.conn, &path).unwrap(), store::SCHEMA_VERSION);
    }

    #[test]
    fn another_database_is_not_taken_for_a_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.sqlite");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE customers (id INTEGER)")
            .unwrap();
        let e = SqliteStore::open(&path).err().unwrap().to_string();
        assert!(
            e.contains("not a vernier history store") && e.contains("customers"),
            "{e}"
        );
    }
}
