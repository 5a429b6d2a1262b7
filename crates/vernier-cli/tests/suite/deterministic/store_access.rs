//! Who may reach and write a PostgreSQL history store, against real servers the tests start:
//! TLS checked as libpq checks it (`verify-full` against a CA the test makes, refused before
//! anything is sent when the CA or the name does not match), a client certificate, passwords
//! from `PGPASSWORD` or a password file and never shown, and a runners' role that adds runs
//! and cannot change or erase them. Nothing is measured: each save is a recorded result file.

use crate::common::{cli, cpp, pgserver};

use cli::{text, vernier};
use cpp::repo_root;
use pgserver::{migrate, Options, Postgres};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A recorded result file, saved as CI's `history save` step would.
fn recorded() -> PathBuf {
    repo_root().join("crates/vernier/tests/fixtures/results/run-cpp-v0.1.0.json")
}

/// `vernier` with none of the caller's `PG*` variables, and `home` as its home (so that no
/// `~/.pgpass` or `~/.postgresql/` of the machine's is read).
fn isolated(home: &Path, env: &[(&str, &str)]) -> Command {
    let mut c = vernier();
    for (k, _) in std::env::vars() {
        if k.starts_with("PG") {
            c.env_remove(k);
        }
    }
    c.env("HOME", home);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// `vernier history save RECORDED --commit C --db URL` with `env`.
fn save(db: &str, home: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
    isolated(home, env)
        .args(["history", "save"])
        .arg(recorded())
        .args(["--commit", "c1", "--db", db])
        .args(extra)
        .output()
        .unwrap()
}

fn saved(o: &Output) {
    assert!(o.status.success(), "{}", text(o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("saved run"),
        "{}",
        text(o)
    );
}

/// Exit 1, with `needles` in the message.
fn refused(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(1), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    for n in needles {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl is not installed: apt-get install openssl, as .ci/run does");
    assert!(o.status.success(), "openssl {args:?}: {}", text(&o));
}

/// A CA of the test's own: `NAME.crt`, `NAME.key` in `dir`.
fn make_ca(dir: &Path, name: &str) -> PathBuf {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.crt"),
        ],
    );
    dir.join(format!("{name}.crt"))
}

/// A certificate signed by the CA `ca` for the common name `cn` (and, for a server, the DNS
/// name `localhost` only): `NAME.crt` and `NAME.key` (mode 600).
fn sign(dir: &Path, ca: &str, name: &str, cn: &str, server: bool) -> (PathBuf, PathBuf) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
        ],
    );
    let ext = if server {
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    } else {
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
    };
    std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{ca}.crt"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            &format!("{name}.crt"),
            "-extfile",
            &format!("{name}.ext"),
        ],
    );
    let key = dir.join(format!("{name}.key"));
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    (dir.join(format!("{name}.crt")), key)
}

/// How many connections the server has let in so far (its log, `log_connections`).
fn authorized(pg: &Postgres) -> usize {
    pg.log().matches("connection authorized").count()
}

#[test]
fn verify_full_saves_only_to_the_server_its_ca_signed_for_the_name_given() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ca = make_ca(d, "ca");
    let other = make_ca(d, "other");
    let (crt, key) = sign(d, "ca", "server", "localhost", true);
    let pg = Postgres::start_opts(Options {
        tls: Some((crt, key)),
        log_connections: true,
        ..Options::default()
    });
    migrate(&pg.url, &[]);
    let port = pg.port();
    let url = |host: &str, q: &str| format!("postgres://vernier@{host}:{port}/postgres?{q}");
    let root = |f: &Path| format!("sslrootcert={}", f.display());
    let h = home.path();

    // The CA given, the host named as its certificate names it: saved.
    saved(&save(
        &url("localhost", &format!("sslmode=verify-full&{}", root(&ca))),
        h,
        &[],
        &[],
    ));

    // Each of these is refused before the server lets anything in.
    let before = authorized(&pg);
    // No CA to check against (none given, none in ~/.postgresql/root.crt).
    refused(
        &save(&url("localhost", "sslmode=verify-full"), h, &[], &[]),
        &[
            "no CA to check it against",
            "sslrootcert=FILE",
            ".postgresql/root.crt",
        ],
    );
    // The server named by an address its certificate does not carry.
    refused(
        &save(
            &url("127.0.0.1", &format!("sslmode=verify-full&{}", root(&ca))),
            h,
            &[],
            &[],
        ),
        &[
            "certificate not valid for name \"127.0.0.1\"",
            "only valid for DnsName(\"localhost\")",
            "nothing was sent",
        ],
    );
    // A CA that did not sign the server's certificate.
    refused(
        &save(
            &url("localhost", &format!("sslmode=verify-ca&{}", root(&other))),
            h,
            &[],
            &[],
        ),
        &["not signed by a CA in sslrootcert", "nothing was sent"],
    );
    assert_eq!(authorized(&pg), before, "{}", pg.log());

    // verify-ca checks the chain only: the address is let through. The same names in the
    // environment.
    let ca_path = ca.display().to_string();
    saved(&save(
        &url("127.0.0.1", ""),
        h,
        &[("PGSSLMODE", "verify-ca"), ("PGSSLROOTCERT", &ca_path)],
        &[],
    ));
    // `require` encrypts without checking, as libpq's does.
    saved(&save(&url("127.0.0.1", "sslmode=require"), h, &[], &[]));
    // libpq's default CA file is read: ~/.postgresql/root.crt.
    std::fs::create_dir_all(h.join(".postgresql")).unwrap();
    std::fs::copy(&ca, h.join(".postgresql/root.crt")).unwrap();
    saved(&save(&url("localhost", "sslmode=verify-full"), h, &[], &[]));
    drop(pg);

    // A server without TLS is refused under verify-ca.
    let plain = Postgres::start();
    migrate(&plain.url, &[]);
    refused(
        &save(
            &format!("{}?sslmode=verify-ca&{}", plain.url, root(&ca)),
            h,
            &[],
            &[],
        ),
        &["does not offer TLS", "sslmode=verify-ca"],
    );
}

#[test]
fn a_client_certificate_is_shown_to_a_server_that_asks_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ca = make_ca(d, "ca");
    let (crt, key) = sign(d, "ca", "server", "localhost", true);
    let (client_crt, client_key) = sign(d, "ca", "client", "vernier", false);
    let pg = Postgres::start_opts(Options {
        tls: Some((crt, key)),
        client_ca: Some(ca.clone()),
        ..Options::default()
    });
    let url = format!(
        "postgres://vernier@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
        pg.port(),
        ca.display()
    );
    let with_cert = format!(
        "{url}&sslcert={}&sslkey={}",
        client_crt.display(),
        client_key.display()
    );
    migrate(&with_cert, &[]);
    saved(&save(&with_cert, home.path(), &[], &[]));
    // Without it, the server refuses.
    let o = save(&url, home.path(), &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // A key others may read is refused, as libpq refuses it.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&client_key, std::fs::Permissions::from_mode(0o644)).unwrap();
    refused(
        &save(&with_cert, home.path(), &[], &[]),
        &["others may read this private key", "chmod 600"],
    );
}

#[test]
fn passwords_come_from_the_environment_or_a_file_and_are_never_shown() {
    const PW: &str = "Pa55-w0rd-xyzzy";
    let pg = Postgres::start_opts(Options {
        password: true,
        ..Options::default()
    });
    let o = pg.psql(&format!("ALTER ROLE vernier PASSWORD '{PW}'"));
    assert!(o.status.success(), "{}", text(&o));
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut outputs: Vec<Output> = Vec::new();
    let o = isolated(h, &[("PGPASSWORD", PW)])
        .args(["history", "migrate", "--db", &pg.url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    outputs.push(o);

    // The password in PGPASSWORD only.
    let o = save(&pg.url, h, &[("PGPASSWORD", PW)], &[]);
    saved(&o);
    outputs.push(o);
    // In a password file only, at PGPASSFILE, then at ~/.pgpass.
    use std::os::unix::fs::PermissionsExt as _;
    let line = format!(
        "# vernier's store\n127.0.0.1:{}:postgres:vernier:{PW}\n",
        pg.port()
    );
    let file = h.join("passwords");
    std::fs::write(&file, &line).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = save(
        &pg.url,
        h,
        &[("PGPASSFILE", &file.display().to_string())],
        &[],
    );
    saved(&o);
    outputs.push(o);
    std::fs::rename(&file, h.join(".pgpass")).unwrap();
    let o = save(&pg.url, h, &[], &[]);
    saved(&o);
    outputs.push(o);
    // A password file others may read is ignored, and the user told how to mend it.
    std::fs::set_permissions(h.join(".pgpass"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = save(&pg.url, h, &[], &[]);
    refused(&o, &["chmod 600", "none was found", "PGPASSWORD"]);
    outputs.push(o);
    std::fs::remove_file(h.join(".pgpass")).unwrap();

    // A wrong one: refused, saying where it came from.
    let o = save(&pg.url, h, &[("PGPASSWORD", "wrong")], &[]);
    refused(&o, &["refused the password of user vernier", "PGPASSWORD"]);
    outputs.push(o);

    // In the URL on the command line: it works, with a warning that says where to put it.
    let in_url = pg.url.replace("vernier@", &format!("vernier:{PW}@"));
    let o = save(&in_url, h, &[], &[]);
    saved(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("carries a password on the command line") && err.contains("~/.pgpass"),
        "{err}"
    );
    outputs.push(o);
    // Neither the history, its JSON nor its HTML report (which names the command) shows it.
    let report = h.join("history.html");
    let o = isolated(h, &[])
        .args(["history", "--json", "--db", &in_url, "--html"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("vernier:***@"),
        "the report names the command"
    );
    assert!(!html.contains(PW));
    outputs.push(o);
    for o in &outputs {
        assert!(!text(o).contains(PW), "{}", text(o));
    }
    // Nor the store: a saved run keeps its command's name, not its options.
    let o =
        pg.psql("SELECT count(*) FROM runs WHERE result LIKE '%xyzzy%' OR command LIKE '%xyzzy%'");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "0",
        "{}",
        text(&o)
    );
}

#[test]
fn a_runners_role_adds_runs_and_cannot_change_or_erase_them() {
    let pg = Postgres::start();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let o = pg.psql("CREATE ROLE ci LOGIN");
    assert!(o.status.success(), "{}", text(&o));
    let ci = pg.url.replace("vernier@", "ci@");

    // A new store: the job does not make it, it names the administrator's step.
    refused(
        &save(&ci, h, &[], &[]),
        &[
            "has no vernier tables yet",
            "vernier history migrate --db URL",
        ],
    );
    let o = vernier()
        .args(["history", "migrate", "--db", &pg.url, "--writer", "ci"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(a new store)") && out.contains("granted role ci"),
        "{out}"
    );

    // The runners' role saves, twice with one run id (a retried job): both rows are kept, the
    // earlier marked superseded when read.
    for _ in 0..2 {
        saved(&save(&ci, h, &[], &["--run-id", "job-7"]));
    }
    let o = isolated(h, &[])
        .args(["history", "--json", "--db", &ci])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let points = v["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{v}");
    assert_eq!(points[0]["superseded"], true, "{v}");
    assert!(points[1].get("superseded").is_none(), "{v}");

    // What it may not do, tried as that role.
    let mut c = postgres::Client::connect(&ci, postgres::NoTls).unwrap();
    for sql in [
        "DELETE FROM runs",
        "DELETE FROM benchmarks",
        "UPDATE benchmarks SET median_ns = 0",
        "UPDATE runs SET commit_id = 'x'",
        "TRUNCATE runs CASCADE",
        "DROP TABLE benchmarks",
        "ALTER TABLE runs ADD COLUMN x TEXT",
        "UPDATE vernier_schema SET version = 0",
    ] {
        let e = c
            .batch_execute(sql)
            .err()
            .unwrap_or_else(|| panic!("{sql} was allowed"));
        let why = e.as_db_error().map(|d| d.message().to_string());
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("permission denied") || w.contains("must be owner")),
            "{sql}: {e:?}"
        );
    }
    let n: i64 = c
        .query_one("SELECT count(*) FROM benchmarks", &[])
        .unwrap()
        .get(0);
    assert!(n >= 2, "{n}");

    // A store of an older schema: the job exits 1 naming the migration.
    let o = pg.psql("CREATE DATABASE old");
    assert!(o.status.success(), "{}", text(&o));
    let old = pg.url.replace("/postgres", "/old");
    let mut a = postgres::Client::connect(&old, postgres::NoTls).unwrap();
    a.batch_execute(
        "CREATE TABLE vernier_schema (version BIGINT NOT NULL);
         INSERT INTO vernier_schema (version) VALUES (1);",
    )
    .unwrap();
    refused(
        &save(&old, h, &[], &[]),
        &[
            "schema version 1, older than",
            "vernier history migrate --db URL",
        ],
    );
}
