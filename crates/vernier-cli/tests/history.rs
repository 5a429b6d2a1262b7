//! `--save`, `vernier history [check]` and `compare --baseline`, driven through the real
//! binary: a 10 % regression found at the commit that made it, in SQLite and in a real
//! PostgreSQL server started for the test; a 5 % one found with the machine's speed file in
//! use, as a user saves runs; and every way a store can fail (locked, corrupt,
//! newer schema, unreachable) with the run's --json result kept.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/cpp.rs"]
mod cpp;

use cli::{serial, text, vernier, vernier_with_speed_file};
use cpp::{compile, repo_root};
use serde_json::Value;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kernels(chain_n: u32) -> PathBuf {
    let src = repo_root().join("examples/cpp/kernels.cpp");
    compile(
        &format!("history-k{chain_n}"),
        &[src],
        &["-O2", &format!("-DKERNELS_CHAIN_N={chain_n}")],
    )
}

/// `vernier run` of the `chain` kernel, saved at `commit`; the result file. `speed`: the
/// directory of the machine's speed file, as a user has one (`None`: no speed file).
fn run_saved(exe: &Path, db: &str, commit: &str, json: &Path, speed: Option<&Path>) -> Value {
    let o = speed
        .map(vernier_with_speed_file)
        .unwrap_or_else(vernier)
        .args([
            "run",
            "--quick",
            "--filter",
            "^chain$",
            "--counters",
            "none",
        ])
        .args([
            "--save", "--db", db, "--commit", commit, "--branch", "main", "--json",
        ])
        .arg(json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("saved run"),
        "{}",
        text(&o)
    );
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

fn core_slowed(result: &Value) -> bool {
    result["benchmarks"][0]["diagnostics"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["code"] == "core-slowed"))
}

fn history(db: &str, extra: &[&str]) -> Output {
    vernier()
        .args(["history", "--db", db, "--filter", "^chain$"])
        .args(extra)
        .output()
        .unwrap()
}

fn check(db: &str) -> i32 {
    let o = vernier()
        .args(["history", "check", "--db", db, "--filter", "^chain$"])
        .output()
        .unwrap();
    o.status.code().unwrap_or_else(|| panic!("{}", text(&o)))
}

/// The chain's one change point: (commit, ratio, ci95).
fn change_points(db: &str) -> Vec<(String, f64, [f64; 2])> {
    let o = history(db, &["--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    let series = h["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "one machine, one benchmark: {h}");
    assert!(series[0]["points"].as_array().unwrap().len() >= 7, "{h}");
    series[0]["change_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["commit"].as_str().unwrap().to_string(),
                c["ratio"].as_f64().unwrap(),
                [
                    c["ci95"][0].as_f64().unwrap(),
                    c["ci95"][1].as_f64().unwrap(),
                ],
            )
        })
        .collect()
}

/// Seven runs at c1–c4 (100 adds) and c5–c7 (`after` adds) into `db`; a run on a slowed
/// core is run again at its commit, up to five times (it is kept, shown, and not used as
/// evidence; the other tests of this binary run beside it and share the machine's cores, and
/// the probe's throughput half flags such runs). Returns the result files, in order.
fn seven_commits(db: &str, dir: &Path, after: u32, speed: Option<&Path>) -> Vec<PathBuf> {
    let (k100, slower) = (kernels(100), kernels(after));
    let mut files = Vec::new();
    for i in 1..=7 {
        let exe = if i <= 4 { &k100 } else { &slower };
        for attempt in 0..5 {
            let json = dir.join(format!("c{i}-{attempt}.json"));
            let r = run_saved(exe, db, &format!("c{i}"), &json, speed);
            files.push(json);
            if !core_slowed(&r) {
                break;
            }
        }
        if i == 4 {
            assert_eq!(check(db), 0, "c1–c4: the same code, no regression");
        }
    }
    files
}

fn assert_step_at_c5(db: &str) {
    let cps = change_points(db);
    assert_eq!(cps.len(), 1, "{cps:?}");
    let (commit, ratio, ci) = &cps[0];
    assert_eq!(commit, "c5");
    // 110 adds against 100, plus the loop around them: a little under 1.10. The machine is
    // shared, so the bound is looser than the documented target (scripts/history-demo.sh).
    assert!((1.04..1.16).contains(ratio), "{cps:?}");
    assert!(ci[0] < *ratio && *ratio < ci[1] && ci[0] > 1.0, "{cps:?}");
    assert_eq!(check(db), 2);
    let o = history(db, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("change at c5"), "{out}");
}

#[test]
fn a_regression_is_found_at_its_commit_in_sqlite_and_postgresql() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    let files = seven_commits(&db, dir.path(), 110, None);
    assert_step_at_c5(&db);

    // The same results, saved into PostgreSQL (`compare A B --save` keeps B as measured),
    // give the same history.
    let pg = Postgres::start();
    a_version_1_postgresql_store_is_migrated(&pg);
    for f in &files {
        let commit = f.file_name().unwrap().to_string_lossy()[..2].to_string();
        let o = vernier()
            .arg("compare")
            .args([&files[0], f])
            .args(["--save", "--db", &pg.url, "--commit", &commit])
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("saved run"),
            "{}",
            text(&o)
        );
    }
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

/// Runs saved with the machine's speed file in use carry a headline interval joined to the
/// clock range of the machine's recent runs (several percent wide); the change points are
/// detected on the runs' own intervals and the spread between runs, so a 5 % step (100 then
/// 105 dependent adds) is found at its commit.
#[test]
fn a_5_percent_step_is_found_with_the_machine_s_speed_file_in_use() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    // The speed file as a user's is after some use: the three kernels run seven times record
    // 21 speeds (`MIN_CLOCK_RUNS` is 20), so the saved runs' intervals cover the clock range.
    for _ in 0..7 {
        let o = vernier_with_speed_file(dir.path())
            .args(["run", "--quick", "--counters", "none", "--"])
            .arg(kernels(100))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let files = seven_commits(&db, dir.path(), 105, Some(dir.path()));
    let last: Value =
        serde_json::from_slice(&std::fs::read(files.last().unwrap()).unwrap()).unwrap();
    assert!(
        last["harness"]["clock_ghz"].is_array(),
        "the clock range is in use: {}",
        last["harness"]
    );
    // What holds in any state of the machine: no change point before the step (c1–c4 also
    // passed `history check` above), and none in the wrong direction. On a quiet machine the
    // step is found at c5, ×1.03–1.08 (105 adds against 100, plus the loop around them); with
    // the machine loaded, seven runs may not be evidence enough, and then nothing is claimed.
    let cps = change_points(&db);
    let shown = text(&history(&db, &[]));
    assert!(cps.len() <= 1, "{cps:?}\n{shown}");
    match cps.first() {
        Some((commit, ratio, ci)) => {
            assert_eq!(commit, "c5", "{cps:?}\n{shown}");
            assert!((1.0..1.16).contains(ratio), "{cps:?}");
            assert!(ci[0] < *ratio && *ratio < ci[1] && ci[0] > 1.0, "{cps:?}");
            assert_eq!(check(&db), 2, "{shown}");
        }
        None => assert_eq!(check(&db), 0, "{shown}"),
    }
}

#[test]
fn compare_baseline_measures_new_against_the_stored_commit() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    run_saved(
        &kernels(100),
        &db,
        "base",
        &dir.path().join("base.json"),
        None,
    );
    let out = dir.path().join("cmp.json");
    let o = vernier()
        .args([
            "compare",
            "--baseline",
            "base",
            "--quick",
            "--filter",
            "^chain$",
        ])
        .args(["--db", &db, "--json"])
        .arg(&out)
        .arg(kernels(110))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("unpaired"), "{stdout}");
    let c: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(c["mode"], "unpaired");
    let ratio = c["comparisons"][0]["ratio"].as_f64().unwrap();
    assert!((1.04..1.16).contains(&ratio), "{c}");
    // A reference that is not stored is refused before anything is measured.
    let o = vernier()
        .args(["compare", "--baseline", "nope", "--db", &db])
        .arg(kernels(110))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no stored run at commit or branch 'nope'"),
        "{}",
        text(&o)
    );
}

/// A store as version 1 made it (its tables, no index), with one run: `vernier history`
/// migrates it to the current version and shows the run.
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
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(h["series"][0]["points"][0]["median_ns"], 1.5);
    let version: i64 = c
        .query_one("SELECT version FROM vernier_schema", &[])
        .unwrap()
        .get(0);
    // Version 3: the run's own interval, NULL for the run saved before it; version 4: the
    // allocations per iteration, NULL too.
    assert_eq!(version, 4);
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
    // A loopback port nobody listens on.
    let port = free_port();
    save_fails_but_json_is_kept(
        &format!("postgres://vernier:secret@127.0.0.1:{port}/h"),
        "cannot reach the PostgreSQL history store postgres://vernier:***@127.0.0.1",
    );
}

#[test]
fn history_of_a_missing_store_says_how_to_make_one() {
    let _serial = serial();
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A PostgreSQL server of the test's own, in a temporary directory on a free loopback port,
/// stopped when dropped. Run as the `postgres` user when the tests run as root (the server
/// refuses root).
struct Postgres {
    url: String,
    bin: PathBuf,
    data: PathBuf,
    _dir: tempfile::TempDir,
    as_postgres: bool,
}

impl Postgres {
    fn start() -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").exists());
        let bin = bin.expect(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get \
             install postgresql, as .ci/run does",
        );
        // SAFETY: getuid has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        if root {
            let uid = Command::new("id")
                .args(["-u", "postgres"])
                .output()
                .unwrap();
            let gid = Command::new("id")
                .args(["-g", "postgres"])
                .output()
                .unwrap();
            let parse = |o: &Output| String::from_utf8_lossy(&o.stdout).trim().parse::<u32>();
            let (Ok(uid), Ok(gid)) = (parse(&uid), parse(&gid)) else {
                panic!(
                    "running as root and there is no `postgres` user to run the server: \
                     apt-get install postgresql creates it"
                );
            };
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        let port = free_port();
        let pg = Postgres {
            url: format!("postgres://vernier@127.0.0.1:{port}/postgres"),
            bin,
            data: data.clone(),
            _dir: dir,
            as_postgres: root,
        };
        let o = pg
            .cmd("initdb")
            .args(["-A", "trust", "-U", "vernier", "-D"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(o.status.success(), "initdb: {}", text(&o));
        let o = pg
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-o")
            .arg(format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k {}",
                pg.data.display()
            ))
            .arg("-l")
            .arg(data.join("log"))
            .args(["-w", "start"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "pg_ctl start: {}\n{}",
            text(&o),
            std::fs::read_to_string(data.join("log")).unwrap_or_default()
        );
        pg
    }

    fn cmd(&self, tool: &str) -> Command {
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(self.bin.join(tool));
            c
        } else {
            Command::new(self.bin.join(tool))
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-w", "stop"])
            .output();
    }
}
