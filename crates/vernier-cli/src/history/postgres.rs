//! The history store in PostgreSQL (the `postgres` crate, synchronous): one store for a fleet
//! of CI machines. Same schema and migrations as the SQLite store; migrations run under an
//! advisory lock so two machines opening a new store at once do not both create it.
//!
//! TLS (rustls, set up in [`tls`]) as libpq does it: `sslmode=prefer` (the default) uses TLS
//! when the server offers it, `sslmode=require` refuses a server without it, `disable` never
//! uses it. As with libpq's `require`, the server's certificate is not verified: the link is
//! encrypted, the server not authenticated. A connection that fails or drops is tried again,
//! [`ATTEMPTS`] times in all, [`RETRY_PAUSE`] apart.

use super::store::{self, pg, Dialect, MachineRow, RunRow, RunSummary, StoredPoint, StoredRun};
use anyhow::Result;
use postgres::{Client, Config};
use std::time::Duration;

pub mod tls;

/// How long to wait for the server to answer before calling it unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The advisory lock key taken while migrating ("vernier" in ASCII, as a number).
const MIGRATION_LOCK: i64 = 0x0076_6572_6e69_6572;

/// Connections tried before a store is called unreachable, a save before it is given up.
pub const ATTEMPTS: u32 = 3;
/// The pause before trying again (doubled each time).
pub const RETRY_PAUSE: Duration = Duration::from_millis(250);

pub struct PgStore {
    client: Client,
    url: String,
}

fn explain(url: &str, e: postgres::Error) -> anyhow::Error {
    let u = store::redact(url);
    if e.as_db_error().is_none() && e.to_string().contains("TLS") {
        return anyhow::anyhow!(
            "the PostgreSQL history store {u} did not complete a TLS handshake ({e}): with \
             sslmode=require the server must offer TLS (ssl = on in postgresql.conf); or give \
             the URL without sslmode=require"
        );
    }
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

/// Says that the server at `url` dropped the connection, and waits before connecting again.
fn dropped(url: &str, e: &dyn std::fmt::Display) {
    eprintln!(
        "vernier: the PostgreSQL store {} dropped the connection ({e}): connecting again",
        store::redact(url)
    );
    std::thread::sleep(RETRY_PAUSE);
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
        let tls = tls::connector(config.get_ssl_mode())?;
        let mut left = ATTEMPTS;
        loop {
            let client = retry(|| config.connect(tls.clone())).map_err(|e| explain(url, e))?;
            let mut s = PgStore {
                client,
                url: url.to_string(),
            };
            match s.migrate(target) {
                // Dropped while reading or migrating the schema (its transaction is undone).
                Err(e) if s.client.is_closed() && left > 1 => {
                    left -= 1;
                    dropped(url, &e);
                }
                other => return other.map(|()| s),
            }
        }
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

/// `f` again while it fails without an answer from a server (refused, dropped, timed out),
/// [`ATTEMPTS`] times in all.
fn retry<T>(mut f: impl FnMut() -> Result<T, postgres::Error>) -> Result<T, postgres::Error> {
    let mut pause = RETRY_PAUSE;
    let mut left = ATTEMPTS;
    loop {
        match f() {
            Err(e) if e.as_db_error().is_none() && left > 1 => {
                left -= 1;
                std::thread::sleep(pause);
                pause *= 2;
            }
            other => return other,
        }
    }
}

impl PgStore {
    /// Save once, on this connection.
    fn save_once(&mut self, run: &RunRow) -> Result<i64, postgres::Error> {
        let mut tx = self.client.transaction()?;
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
        )?;
        let f = &run.fleet;
        let key = m.key(f);
        if let Some(rk) = &f.run_key {
            // Saves of one identity (a retried job beside the first) one after the other.
            let lock = vernier::speed_file::fnv1a(format!("{rk}\u{1f}{key}").as_bytes()) as i64;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock])?;
            let st = tx.prepare(pg(&store::delete_replaced()).as_str())?;
            for b in &run.benchmarks {
                tx.execute(&st, &[&b.name, rk, &f.attempt, &key])?;
            }
        }
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
            )?
            .get(0);
        tx.execute(
            pg(store::SET_RUN_FLEET).as_str(),
            &[&f.machine_name, &f.run_key, &f.attempt, &f.shard, &id],
        )?;
        let cycles = tx.prepare(pg(store::SET_BENCH_CYCLES).as_str())?;
        let st = tx.prepare(pg(store::INSERT_BENCH).as_str())?;
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
            )?;
            tx.execute(
                &cycles,
                &[
                    &b.cycles_per_iter,
                    &b.unit,
                    &b.cycles_run_ci95[0],
                    &b.cycles_run_ci95[1],
                    &id,
                    &b.name,
                    &b.instructions_per_iter,
                ],
            )?;
        }
        if let Some(rk) = &f.run_key {
            tx.execute(
                pg(&store::delete_emptied()).as_str(),
                &[rk, &f.attempt, &key, &id],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }
}

impl store::Store for PgStore {
    /// Save in one transaction; on a dropped connection, connect again and save again (a save
    /// whose commit was lost with the connection is replaced when it has a run id).
    fn save(&mut self, run: &RunRow) -> Result<i64> {
        let mut left = ATTEMPTS;
        loop {
            match self.save_once(run) {
                Err(e) if e.as_db_error().is_none() && left > 1 => {
                    left -= 1;
                    dropped(&self.url, &e);
                    *self = PgStore::open(&self.url)?;
                }
                other => return other.map_err(|e| explain(&self.url, e)),
            }
        }
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
                    cycles_per_iter: r.get(16),
                    memory: [r.get(17), r.get(18)],
                    unit: r.get(19),
                    cycles_run_ci95: [r.get(20), r.get(21)],
                    instructions_per_iter: r.get(22),
                },
                machine: r.get(13),
                run_key: r.get(14),
                attempt: r.get(15),
                superseded: false,
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

    fn run_summaries(&mut self) -> Result<Vec<RunSummary>> {
        let rows = self
            .client
            .query(store::SELECT_RUN_SUMMARIES, &[])
            .map_err(|e| explain(&self.url, e))?;
        Ok(rows
            .iter()
            .map(|r| RunSummary {
                run_id: r.get(0),
                commit: r.get(1),
                machine: r.get(2),
                shard: r.get(3),
                attempt: r.get(4),
                run_key: r.get(5),
                benchmarks: r.get(6),
            })
            .collect())
    }
}
