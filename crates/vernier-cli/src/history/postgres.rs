//! The history store in PostgreSQL (the `postgres` crate, synchronous): one store for a fleet
//! of CI machines. Same schema and migrations as the SQLite store.
//!
//! Two roles, two doors: [`PgStore::migrate`] (`vernier history migrate`, run by an
//! administrator) creates and migrates the tables under an advisory lock, and may grant a
//! role what a save needs; [`PgStore::open`] (every other command) never changes the schema:
//! a store that is not at this build's version is refused, naming the migration. A save only
//! inserts (a retried job's rows supersede the earlier ones when read, they are not deleted),
//! so the runners' role needs `INSERT` and `SELECT`, and cannot erase a past run.
//!
//! The connection is read as libpq reads it ([`conn`]: the URL, the `PG*` variables, the
//! password file) and secured with rustls ([`tls`]: `sslmode` up to `verify-full`, a client
//! certificate). A connection that fails or drops is tried again, [`ATTEMPTS`] times in all,
//! [`RETRY_PAUSE`] apart; a certificate that is refused is not tried again.

use super::store::{self, pg, Dialect, MachineRow, RunRow, RunSummary, StoredPoint, StoredRun};
use anyhow::Result;
use postgres::Client;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub mod conn;
pub mod tls;

/// How long to wait for the server to answer before calling it unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The advisory lock key taken while migrating ("vernier" in ASCII, as a number).
const MIGRATION_LOCK: i64 = 0x0076_6572_6e69_6572;

/// Connections tried before a store is called unreachable, a save before it is given up.
pub const ATTEMPTS: u32 = 3;
/// The pause before trying again (doubled each time).
pub const RETRY_PAUSE: Duration = Duration::from_millis(250);

/// The tables a save writes and reads (what `migrate --writer ROLE` grants).
const TABLES: [&str; 3] = ["machines", "runs", "benchmarks"];

pub struct PgStore {
    client: Client,
    url: String,
    target: conn::Target,
}

/// What `e` says, with its causes (the `postgres` crate's message names only the kind: "error
/// performing TLS handshake", "invalid configuration").
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text = format!("{text}: {c}");
        cause = c.source();
    }
    text
}

/// Whether `e` is final however often it is tried: a TLS failure (a refused certificate, a
/// server without TLS) or a configuration the server never saw (no password).
fn is_final(e: &postgres::Error) -> bool {
    let text = describe(e);
    e.as_db_error().is_none() && (text.contains("TLS") || text.contains("invalid configuration"))
}

fn explain(url: &str, t: &conn::Target, e: postgres::Error) -> anyhow::Error {
    let u = store::redact(url);
    let text = describe(&e);
    let mode = t.tls.mode.name();
    if text.contains("server does not support TLS") {
        return anyhow::anyhow!(
            "the PostgreSQL history store {u} does not offer TLS, and sslmode={mode} requires \
             it: nothing was sent. Turn TLS on at the server (ssl = on, docs/fleet.md), or give \
             sslmode=prefer only on a network you trust"
        );
    }
    if text.contains("password missing") {
        return anyhow::anyhow!(
            "the PostgreSQL history store {u} asks for a password and none was found: give it \
             in PGPASSWORD or a password file (~/.pgpass, or PGPASSFILE; docs/fleet.md), not \
             in the URL"
        );
    }
    if e.as_db_error().is_none() && text.contains("TLS") {
        let fix = if text.contains("not valid for name") {
            "verify-full checks the host named in the URL against the names the certificate \
             carries: connect by one of those names, or give the server a certificate that \
             carries this one"
        } else if text.contains("UnknownIssuer") || text.contains("issuer") {
            "the certificate is not signed by a CA in sslrootcert: give the certificate of the \
             CA that signed the server's"
        } else {
            "check the server's TLS set-up (ssl = on, its certificate and key) and the \
             sslrootcert, sslcert and sslkey given"
        };
        return anyhow::anyhow!(
            "the PostgreSQL history store {u} failed the TLS handshake under sslmode={mode} \
             ({text}): nothing was sent, not even the password. {fix}"
        );
    }
    if let Some(db) = e.as_db_error() {
        if db.code() == &postgres::error::SqlState::INVALID_PASSWORD {
            let from = match &t.password_from {
                conn::PasswordFrom::None => "no password was found: give it in PGPASSWORD or \
                     a password file (~/.pgpass, or PGPASSFILE)"
                    .to_string(),
                conn::PasswordFrom::Url => "the password is the URL's".to_string(),
                conn::PasswordFrom::Env => "the password is PGPASSWORD's".to_string(),
                conn::PasswordFrom::File(f) => {
                    format!("the password is the one in {} for this host", f.display())
                }
            };
            return anyhow::anyhow!(
                "the PostgreSQL history store {u} refused the password of user {} ({from})",
                t.config.get_user().unwrap_or_default()
            );
        }
    }
    if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
        return anyhow::anyhow!(
            "the PostgreSQL history store {u}: {text}: the role {} may not do this; an \
             administrator grants a saving role what it needs with `vernier history migrate \
             --db URL --writer ROLE` (docs/fleet.md)",
            t.config.get_user().unwrap_or_default()
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
    anyhow::anyhow!("the PostgreSQL history store {u}: {text}")
}

/// Says that the server at `url` dropped the connection, and waits before connecting again.
fn dropped(url: &str, e: &dyn std::fmt::Display) {
    eprintln!(
        "vernier: the PostgreSQL store {} dropped the connection ({e}): connecting again",
        store::redact(url)
    );
    std::thread::sleep(RETRY_PAUSE);
}

/// Prints each warning once in the process (a store is opened again after a drop).
fn warn_once(warnings: &[String]) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !warnings.is_empty() && !SAID.swap(true, Ordering::SeqCst) {
        for w in warnings {
            eprintln!("vernier: warning: {w}");
        }
    }
}

/// A client connected to the store at `url` (tried again while the server does not answer).
fn connect(url: &str) -> Result<(Client, conn::Target)> {
    let target = conn::Target::resolve(url, &store::redact(url), &conn::process_env)?;
    warn_once(&target.warnings);
    let mut config = target.config.clone();
    config.connect_timeout(CONNECT_TIMEOUT);
    let tls = tls::connector(&target.tls)?;
    let client = retry(|| config.connect(tls.clone())).map_err(|e| explain(url, &target, e))?;
    Ok((client, target))
}

/// The schema version of the store `client` is connected to; `None` when it has no tables.
fn schema_version(
    client: &mut impl postgres::GenericClient,
) -> Result<Option<i64>, postgres::Error> {
    let exists: bool = client
        .query_one("SELECT to_regclass('vernier_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(None);
    }
    Ok(Some(
        client
            .query_one("SELECT version FROM vernier_schema", &[])?
            .get(0),
    ))
}

/// The error for a store this build may not write until an administrator migrates it.
fn needs_migration(url: &str, found: Option<i64>) -> anyhow::Error {
    let u = store::redact(url);
    let what = match found {
        None => "has no vernier tables yet".to_string(),
        Some(v) => format!(
            "has schema version {v}, older than this vernier's ({})",
            store::SCHEMA_VERSION
        ),
    };
    anyhow::anyhow!(
        "the PostgreSQL history store {u} {what}: run `vernier history migrate --db URL` once \
         with a role that may create tables (an administrator's, docs/fleet.md); jobs that \
         save do not change the schema"
    )
}

impl PgStore {
    /// Connect to a store at this build's schema version; a newer one is refused, and an
    /// older or empty one is refused naming `vernier history migrate`.
    pub fn open(url: &str) -> Result<PgStore> {
        let mut left = ATTEMPTS;
        loop {
            let (client, target) = connect(url)?;
            let mut s = PgStore {
                client,
                url: url.to_string(),
                target,
            };
            match schema_version(&mut s.client) {
                // Dropped while reading the schema's version.
                Err(e) if s.client.is_closed() && left > 1 => {
                    left -= 1;
                    dropped(url, &e);
                }
                Err(e) => return Err(explain(url, &s.target, e)),
                Ok(Some(v)) if v == store::SCHEMA_VERSION => return Ok(s),
                Ok(Some(v)) if v > store::SCHEMA_VERSION => {
                    return Err(store::newer_schema(&store::redact(url), v))
                }
                Ok(other) => return Err(needs_migration(url, other)),
            }
        }
    }

    /// `vernier history migrate`: create or migrate the store at `url` up to `target`, under
    /// an advisory lock (two administrators at once do not both do it), and grant each of
    /// `writers` what a save needs and nothing more. The versions before and after.
    pub fn migrate(url: &str, target: i64, writers: &[String]) -> Result<(Option<i64>, i64)> {
        let (mut client, t) = connect(url)?;
        let err = |e| explain(url, &t, e);
        let mut tx = client.transaction().map_err(err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(err)?;
        let before = schema_version(&mut tx).map_err(err)?;
        let version = before.unwrap_or(0);
        if version > store::SCHEMA_VERSION {
            return Err(store::newer_schema(&store::redact(url), version));
        }
        for v in version + 1..=target {
            for sql in store::migration(v as usize, Dialect::Postgres) {
                tx.execute(sql.as_str(), &[]).map_err(err)?;
            }
            tx.execute("UPDATE vernier_schema SET version = $1", &[&v])
                .map_err(err)?;
        }
        for role in writers {
            grant_writer(&mut tx, role).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok((before, version.max(target)))
    }
}

/// Grants `role` what a save and the reads need: `SELECT` and `INSERT` on the tables, the run
/// ids' sequence, `SELECT` on the schema's version; no `UPDATE`, `DELETE`, `TRUNCATE` or DDL.
fn grant_writer(tx: &mut postgres::Transaction<'_>, role: &str) -> Result<(), postgres::Error> {
    let role = quote_ident(role);
    tx.execute(&format!("GRANT SELECT ON vernier_schema TO {role}"), &[])?;
    for t in TABLES {
        tx.execute(&format!("GRANT SELECT, INSERT ON {t} TO {role}"), &[])?;
    }
    tx.execute(
        &format!("GRANT USAGE ON SEQUENCE runs_id_seq TO {role}"),
        &[],
    )?;
    Ok(())
}

/// A role's name as an SQL identifier (double quotes, inner ones doubled).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `f` again while it fails without an answer from a server (refused, dropped, timed out),
/// [`ATTEMPTS`] times in all; a TLS failure is final.
fn retry<T>(mut f: impl FnMut() -> Result<T, postgres::Error>) -> Result<T, postgres::Error> {
    let mut pause = RETRY_PAUSE;
    let mut left = ATTEMPTS;
    loop {
        match f() {
            Err(e) if e.as_db_error().is_none() && !is_final(&e) && left > 1 => {
                left -= 1;
                std::thread::sleep(pause);
                pause *= 2;
            }
            other => return other,
        }
    }
}

impl PgStore {
    /// Save once, on this connection: inserts only (the runners' role may not update or
    /// delete), in one transaction.
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
                    &f.machine_name,
                    &f.run_key,
                    &f.attempt,
                    &f.shard,
                ],
            )?
            .get(0);
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
                    &b.cycles_per_iter,
                    &b.unit,
                    &b.cycles_run_ci95[0],
                    &b.cycles_run_ci95[1],
                    &b.instructions_per_iter,
                ],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }
}

impl store::Store for PgStore {
    /// Save in one transaction; on a dropped connection, connect again and save again (when a
    /// save whose commit was lost with the connection did land, the second copy supersedes it
    /// when read, as a retried job's does).
    fn save(&mut self, run: &RunRow) -> Result<i64> {
        let mut left = ATTEMPTS;
        loop {
            match self.save_once(run) {
                Err(e) if e.as_db_error().is_none() && left > 1 => {
                    left -= 1;
                    dropped(&self.url, &e);
                    *self = PgStore::open(&self.url)?;
                }
                other => return other.map_err(|e| explain(&self.url, &self.target, e)),
            }
        }
    }

    fn points(&mut self) -> Result<Vec<StoredPoint>> {
        let rows = self
            .client
            .query(store::SELECT_POINTS, &[])
            .map_err(|e| explain(&self.url, &self.target, e))?;
        rows.iter()
            .map(store::point_of)
            .collect::<Result<_, _>>()
            .map_err(|e| explain(&self.url, &self.target, e))
    }

    fn machines(&mut self) -> Result<Vec<MachineRow>> {
        let rows = self
            .client
            .query(store::SELECT_MACHINES, &[])
            .map_err(|e| explain(&self.url, &self.target, e))?;
        rows.iter()
            .map(store::machine_of)
            .collect::<Result<_, _>>()
            .map_err(|e| explain(&self.url, &self.target, e))
    }

    fn runs_at(&mut self, reference: &str) -> Result<Vec<StoredRun>> {
        let prefix = format!("{reference}%");
        let rows = self
            .client
            .query(pg(store::SELECT_RUNS_AT).as_str(), &[&reference, &prefix])
            .map_err(|e| explain(&self.url, &self.target, e))?;
        rows.iter()
            .map(store::run_of)
            .collect::<Result<_, _>>()
            .map_err(|e| explain(&self.url, &self.target, e))
    }

    fn run_summaries(&mut self) -> Result<Vec<RunSummary>> {
        let rows = self
            .client
            .query(store::SELECT_RUN_SUMMARIES, &[])
            .map_err(|e| explain(&self.url, &self.target, e))?;
        rows.iter()
            .map(store::summary_of)
            .collect::<Result<_, _>>()
            .map_err(|e| explain(&self.url, &self.target, e))
    }
}

impl store::Row for postgres::Row {
    type Error = postgres::Error;
    fn col<T: store::Column>(&self, i: usize) -> Result<T, postgres::Error> {
        self.try_get(i)
    }
}
