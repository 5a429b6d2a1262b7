//! The history store in PostgreSQL (the `postgres` crate, synchronous): one store for a fleet
//! of CI machines. Same schema and migrations as the SQLite store; migrations run under an
//! advisory lock so two machines opening a new store at once do not both create it.

use super::store::{self, pg, Dialect, MachineRow, RunRow, StoredPoint, StoredRun};
use anyhow::Result;
use postgres::{Client, Config, NoTls};
use std::time::Duration;

/// How long to wait for the server to answer before calling it unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The advisory lock key taken while migrating ("vernier" in ASCII, as a number).
const MIGRATION_LOCK: i64 = 0x0076_6572_6e69_6572;

pub struct PgStore {
    client: Client,
    url: String,
}

fn explain(url: &str, e: postgres::Error) -> anyhow::Error {
    let u = store::redact(url);
    if e.as_db_error().is_none() {
        // No answer from a server: connection refused, name not resolved, timeout, closed.
        return anyhow::anyhow!(
            "cannot reach the PostgreSQL history store {u} ({e}): start the server, or fix the \
             URL given with --db or {}",
            store::DB_ENV
        );
    }
    anyhow::anyhow!("the PostgreSQL history store {u}: {e}")
}

impl PgStore {
    pub fn open(url: &str) -> Result<PgStore> {
        Self::open_at_version(url, store::SCHEMA_VERSION)
    }

    /// Connect and migrate up to `target` (tests make older stores with it).
    pub fn open_at_version(url: &str, target: i64) -> Result<PgStore> {
        let mut config: Config = url.parse().map_err(|e| {
            anyhow::anyhow!(
                "--db {}: not a PostgreSQL URL ({e}): expected postgres://USER@HOST:PORT/DATABASE",
                store::redact(url)
            )
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        let client = config.connect(NoTls).map_err(|e| explain(url, e))?;
        let mut s = PgStore {
            client,
            url: url.to_string(),
        };
        s.migrate(target)?;
        Ok(s)
    }

    fn migrate(&mut self, target: i64) -> Result<()> {
        let url = self.url.clone();
        let err = |e| explain(&url, e);
        let mut tx = self.client.transaction().map_err(err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(err)?;
        let exists: bool = tx
            .query_one("SELECT to_regclass('vernier_schema') IS NOT NULL", &[])
            .map_err(err)?
            .get(0);
        let version: i64 = if exists {
            tx.query_one("SELECT version FROM vernier_schema", &[])
                .map_err(err)?
                .get(0)
        } else {
            0
        };
        if version > store::SCHEMA_VERSION {
            return Err(store::newer_schema(&store::redact(&url), version));
        }
        for v in version + 1..=target {
            for sql in store::migration(v as usize, Dialect::Postgres) {
                tx.execute(sql.as_str(), &[]).map_err(err)?;
            }
            tx.execute("UPDATE vernier_schema SET version = $1", &[&v])
                .map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}

impl store::Store for PgStore {
    fn save(&mut self, run: &RunRow) -> Result<i64> {
        let url = self.url.clone();
        let err = |e| explain(&url, e);
        let mut tx = self.client.transaction().map_err(err)?;
        let m = &run.machine;
        tx.execute(
            pg(store::INSERT_MACHINE).as_str(),
            &[
                &m.id,
                &m.cpu_model,
                &m.logical_cpus,
                &m.kernel,
                &m.arch,
                &m.hostname,
                &m.audit,
            ],
        )
        .map_err(err)?;
        let id: i64 = tx
            .query_one(
                pg(store::INSERT_RUN).as_str(),
                &[
                    &run.time,
                    &run.commit,
                    &run.branch,
                    &m.id,
                    &run.command,
                    &run.result,
                ],
            )
            .map_err(err)?
            .get(0);
        let st = tx.prepare(pg(store::INSERT_BENCH).as_str()).map_err(err)?;
        for b in &run.benchmarks {
            tx.execute(
                &st,
                &[
                    &id,
                    &b.name,
                    &b.status,
                    &b.median_ns,
                    &b.ci95_lo_ns,
                    &b.ci95_hi_ns,
                    &b.flags,
                    &b.run_ci95_ns[0],
                    &b.run_ci95_ns[1],
                    &b.memory[0],
                    &b.memory[1],
                ],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    fn points(&mut self) -> Result<Vec<StoredPoint>> {
        let rows = self
            .client
            .query(store::SELECT_POINTS, &[])
            .map_err(|e| explain(&self.url, e))?;
        Ok(rows
            .iter()
            .map(|r| StoredPoint {
                run_id: r.get(0),
                time: r.get(1),
                commit: r.get(2),
                branch: r.get(3),
                machine_id: r.get(4),
                bench: store::BenchRow {
                    name: r.get(5),
                    status: r.get(6),
                    median_ns: r.get(7),
                    ci95_lo_ns: r.get(8),
                    ci95_hi_ns: r.get(9),
                    flags: r.get(10),
                    run_ci95_ns: [r.get(11), r.get(12)],
                    memory: [r.get(13), r.get(14)],
                },
            })
            .collect())
    }

    fn machines(&mut self) -> Result<Vec<MachineRow>> {
        let rows = self
            .client
            .query(store::SELECT_MACHINES, &[])
            .map_err(|e| explain(&self.url, e))?;
        Ok(rows
            .iter()
            .map(|r| MachineRow {
                id: r.get(0),
                cpu_model: r.get(1),
                logical_cpus: r.get(2),
                kernel: r.get(3),
                arch: r.get(4),
                hostname: r.get(5),
                audit: r.get(6),
            })
            .collect())
    }

    fn runs_at(&mut self, reference: &str) -> Result<Vec<StoredRun>> {
        let prefix = format!("{reference}%");
        let rows = self
            .client
            .query(pg(store::SELECT_RUNS_AT).as_str(), &[&reference, &prefix])
            .map_err(|e| explain(&self.url, e))?;
        Ok(rows
            .iter()
            .map(|r| StoredRun {
                run_id: r.get(0),
                time: r.get(1),
                commit: r.get(2),
                branch: r.get(3),
                machine_id: r.get(4),
                result: r.get(5),
            })
            .collect())
    }
}
