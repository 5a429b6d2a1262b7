//! `--save`, `vernier history [check]` and `compare --save`, driven through the real binary,
//! nothing measured that an assertion reads: a 10 % regression made from a recorded run is
//! found at the commit that made it, in SQLite and in a real PostgreSQL server started for the
//! test, and every way a store can fail (locked, corrupt, newer schema, unreachable) keeps the
//! run's --json result. The measuring tests of the store are in `history_measured.rs`.

use crate::common::{cli, cpp, history, pgserver};

use cli::{text, vernier};
use cpp::repo_root;
use history::{change_points, check, history};
use pgserver::{free_port, migrate, Postgres};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Seven result files c1–c7 made from a recorded run of the chain kernel: its raw samples
/// times a fixed factor per commit (within ±0.2 % for c1–c4, and ×1.10 from c5 on), each
/// re-derived by `vernier analyze` as a run of that code would be. Nothing is measured, so
/// the history's figures and change points are exact.
fn seven_recorded(dir: &Path) -> Vec<PathBuf> {
    let fixture = repo_root().join("crates/vernier/tests/fixtures/results/run-cpp-v0.1.0.json");
    let recorded: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let factors = [1.000, 1.002, 0.998, 1.001, 1.099, 1.102, 1.098];
    let mut files = Vec::new();
    for (i, k) in factors.iter().enumerate() {
        let mut r = recorded.clone();
        let ns = &mut r["benchmarks"][0]["samples"]["ns"];
        *ns = ns
            .as_array()
            .unwrap()
            .iter()
            .map(|t| Value::from((t.as_f64().unwrap() * k).round() as u64))
            .collect();
        let scaled = dir.join(format!("scaled-c{}.json", i + 1));
        std::fs::write(&scaled, serde_json::to_vec(&r).unwrap()).unwrap();
        let json = dir.join(format!("c{}.json", i + 1));
        let o = vernier()
            .arg("analyze")
            .arg(&scaled)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        files.push(json);
    }
    files
}

/// Saves `files` (c1, c2, …) into `db` as `compare BASE FILE --save` does: each as measured,
/// at the commit its name gives.
fn save_files(base: &Path, files: &[PathBuf], db: &str) {
    for f in files {
        let commit = f.file_stem().unwrap().to_string_lossy().to_string();
        let o = vernier()
            .arg("compare")
            .args([base, f])
            .args(["--save", "--db", db, "--commit", &commit])
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("saved run"),
            "{}",
            text(&o)
        );
    }
}

fn assert_step_at_c5(db: &str) {
    let cps = change_points(db);
    assert_eq!(cps.len(), 1, "{cps:?}");
    let (commit, ratio, ci) = &cps[0];
    assert_eq!(commit, "c5");
    // ×1.10 (the samples' factors from c5 on against c1–c4's).
    assert!((1.09..1.11).contains(ratio), "{cps:?}");
    assert!(ci[0] < *ratio && *ratio < ci[1] && ci[0] > 1.0, "{cps:?}");
    assert_eq!(check(db), 2);
    let o = history(db, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("change at c5"), "{out}");
}

/// The recorded chain's samples ×1.10 from commit c5 on: the change point is at c5 with its
/// ratio, in SQLite and in PostgreSQL alike, and `history check` fails on it.
#[test]
fn a_regression_is_found_at_its_commit_in_sqlite_and_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    let files = seven_recorded(dir.path());
    save_files(&files[0], &files[..4], &db);
    assert_eq!(check(&db), 0, "c1–c4: the same code, no regression");
    save_files(&files[0], &files[4..], &db);
    assert_step_at_c5(&db);

    // The same results saved into PostgreSQL give the same history.
    let pg = Postgres::start();
    a_version_1_postgresql_store_is_migrated(&pg);
    migrate(&pg.url, &[]);
    save_files(&files[0], &files, &pg.url);
    assert_step_at_c5(&pg.url);
    let figures = |db: &str| {
        let h: Value = serde_json::from_slice(&history(db, &["--json"]).stdout).unwrap();
        h["series"][0]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["commit"].clone(),
                    p["median_ns"].clone(),
                    p["ci95_ns"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    // The same history, to the last bits a double keeps through either store's round trip.
    let (a, b) = (figures(&db), figures(&pg.url));
    assert_eq!(a.len(), b.len(), "{a:?}\n{b:?}");
    let close = |x: &Value, y: &Value| {
        let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
        (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
    };
    for (p, q) in a.iter().zip(&b) {
        assert_eq!(p.0, q.0, "the two stores hold the same commits");
        assert!(close(&p.1, &q.1), "{p:?} {q:?}");
        for k in 0..2 {
            assert!(close(&p.2[k], &q.2[k]), "{p:?} {q:?}");
        }
    }
    let (a, b) = (change_points(&db), change_points(&pg.url));
    assert_eq!(a.len(), b.len());
    assert!((a[0].1 - b[0].1).abs() < 1e-12 && a[0].0 == b[0].0);

    // Server down: a clear error, and the run's result is still written.
    let url = pg.url.clone();
    drop(pg);
    save_fails_but_json_is_kept(&url, "cannot reach the PostgreSQL history store");
}

/// A store as version 1 made it (its tables, no index), with one run: `vernier history`
/// refuses it naming the migration (jobs never change a PostgreSQL store's schema), `vernier
/// history migrate` brings it to the current version, and `history` then shows the run.
fn a_version_1_postgresql_store_is_migrated(pg: &Postgres) {
    let mut admin = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    admin.batch_execute("CREATE DATABASE v1").unwrap();
    let url = pg.url.replace("/postgres", "/v1");
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(
        "CREATE TABLE vernier_schema (version BIGINT NOT NULL);
         INSERT INTO vernier_schema (version) VALUES (1);
         CREATE TABLE machines (id TEXT PRIMARY KEY, cpu_model TEXT NOT NULL,
           logical_cpus BIGINT NOT NULL, kernel TEXT NOT NULL, arch TEXT NOT NULL,
           hostname TEXT NOT NULL, audit TEXT NOT NULL);
         CREATE TABLE runs (id BIGSERIAL PRIMARY KEY, time TEXT NOT NULL, commit_id TEXT,
           branch TEXT, machine_id TEXT NOT NULL REFERENCES machines(id),
           command TEXT NOT NULL, result TEXT NOT NULL);
         CREATE TABLE benchmarks (run_id BIGINT NOT NULL REFERENCES runs(id),
           name TEXT NOT NULL, status TEXT NOT NULL, median_ns DOUBLE PRECISION,
           ci95_lo_ns DOUBLE PRECISION, ci95_hi_ns DOUBLE PRECISION, flags TEXT NOT NULL);
         INSERT INTO machines VALUES ('m1', 'cpu', 2, '6.1', 'x86_64', 'h', '{}');
         INSERT INTO runs (time, commit_id, branch, machine_id, command, result)
           VALUES ('2026-01-01T00:00:00Z', 'abc', 'main', 'm1', 'run', '{}');
         INSERT INTO benchmarks VALUES (1, 'add', 'ok', 1.5, 1.4, 1.6, '');",
    )
    .unwrap();
    let o = vernier()
        .args(["history", "--json", "--db", &url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("has schema version 1, older than")
            && err.contains("vernier history migrate --db URL"),
        "{err}"
    );
    let o = vernier()
        .args(["history", "migrate", "--db", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("(from schema version 1)"),
        "{}",
        text(&o)
    );
    let o = vernier()
        .args(["history", "--json", "--db", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(h["series"][0]["points"][0]["median_ns"], 1.5);
    let version: i64 = c
        .query_one("SELECT version FROM vernier_schema", &[])
        .unwrap()
        .get(0);
    // Migrated past version 3 (the run's own interval, NULL for the run saved before it) to
    // the current one (later steps add columns: the fleet's, docs/fleet.md, and the
    // allocations per iteration).
    assert!(version >= 5, "{version}");
    assert!(
        h["series"][0]["points"][0].get("run_ci95_ns").is_none(),
        "{h}"
    );
    let indexes: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname IN \
             ('runs_commit', 'runs_branch', 'benchmarks_run')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(indexes, 3);
}

/// `vernier demo --quick --filter ^add$ --save --db DB --json JSON`: must fail with a message
/// containing `needle`, and leave a complete result in JSON.
fn save_fails_but_json_is_kept(db: &str, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = vernier()
        .args(["demo", "--quick", "--filter", "^add$", "--counters", "none"])
        .args(["--save", "--db", db, "--commit", "x", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(needle),
        "expected '{needle}' in:\n{}",
        text(&o)
    );
    assert!(err.contains("result is intact"), "{}", text(&o));
    let r = vernier::result::load(&json).expect("the --json result is written and valid");
    assert_eq!(r.benchmarks.len(), 1);
}

#[test]
fn a_locked_store_is_named_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        .unwrap();
    save_fails_but_json_is_kept(&path.display().to_string(), "is locked by another process");
    drop(conn);
}

#[test]
fn a_corrupt_store_is_named_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    std::fs::write(&path, vec![0x5a_u8; 8192]).unwrap();
    save_fails_but_json_is_kept(
        &path.display().to_string(),
        "not a readable SQLite database",
    );
    // Untouched.
    assert_eq!(std::fs::read(&path).unwrap(), vec![0x5a_u8; 8192]);
}

#[test]
fn a_store_of_a_newer_schema_is_refused_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE vernier_schema (version BIGINT NOT NULL); \
         INSERT INTO vernier_schema VALUES (99);",
    )
    .unwrap();
    drop(conn);
    save_fails_but_json_is_kept(&path.display().to_string(), "schema version 99, newer");
    let o = vernier()
        .args(["history", "--db"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("upgrade vernier"));
}

#[test]
fn an_unreachable_postgresql_is_named_and_nothing_is_lost() {
    // A loopback port nobody listens on.
    let port = free_port();
    save_fails_but_json_is_kept(
        &format!("postgres://vernier:secret@127.0.0.1:{port}/h"),
        "cannot reach the PostgreSQL history store postgres://vernier:***@127.0.0.1",
    );
}

#[test]
fn history_of_a_missing_store_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let o = vernier()
        .args(["history", "--db"])
        .arg(dir.path().join("none.sqlite"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no history store at") && err.contains("--save"),
        "{err}"
    );
    let o = vernier()
        .args(["history", "--db", "mysql://x/y"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown store kind 'mysql'"));
    // --commit without --save is a usage error.
    let o = vernier()
        .args(["demo", "--commit", "abc"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}

/// A loopback proxy to `target` that fails the connections as a network does: the first is
/// closed as soon as it is accepted; the second is cut when the client first sends an `INSERT`
/// (its machine's row, at the start of the save); the third when it inserts a benchmark's row
/// (mid-save, after the run's row, inside the transaction); the others are passed through. Returns the
/// proxy's port and the count of connections it accepted.
fn flaky_proxy(target: u16) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            if n == 1 {
                let _ = client.shutdown(Shutdown::Both);
                continue;
            }
            let server = TcpStream::connect(("127.0.0.1", target)).unwrap();
            let cut: &'static [u8] = match n {
                2 => b"INSERT",
                3 => b"INSERT INTO benchmarks",
                _ => b"",
            };
            let pipe = |mut from: TcpStream, mut to: TcpStream, cut: &'static [u8]| {
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    while let Ok(k) = from.read(&mut buf) {
                        let hit = !cut.is_empty() && buf[..k].windows(cut.len()).any(|w| w == cut);
                        if k == 0 || hit || to.write_all(&buf[..k]).is_err() {
                            break;
                        }
                    }
                    let _ = from.shutdown(Shutdown::Both);
                    let _ = to.shutdown(Shutdown::Both);
                })
            };
            pipe(
                client.try_clone().unwrap(),
                server.try_clone().unwrap(),
                cut,
            );
            pipe(server, client, b"");
        }
    });
    (port, accepted)
}

/// A connection closed at once, one dropped as the save starts and one in the middle of it: the
/// store connects again each time, the run is saved once (the cut transactions left nothing),
/// and the user is told.
#[test]
fn a_dropped_postgresql_connection_is_tried_again_and_saves_once() {
    let pg = Postgres::start();
    migrate(&pg.url, &[]);
    let port: u16 = pg
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (proxy, accepted) = flaky_proxy(port);
    let url = pg.url.replace(&format!(":{port}/"), &format!(":{proxy}/"));
    let dir = tempfile::tempdir().unwrap();
    let files = seven_recorded(dir.path());
    let o = vernier()
        .arg("compare")
        .args([&files[0], &files[1]])
        .args(["--save", "--db", &url, "--commit", "c2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("saved run"), "{}", text(&o));
    assert!(err.contains("dropped the connection"), "{}", text(&o));
    assert_eq!(
        err.matches("dropped the connection").count(),
        2,
        "{}",
        text(&o)
    );
    let connections = accepted.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(connections, 4, "{}", text(&o));
    // Saved once, straight into the server.
    let h: Value = serde_json::from_slice(&history(&pg.url, &["--json"]).stdout).unwrap();
    let points = h["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{h}");
    assert_eq!(points[0]["commit"], "c2");
}
