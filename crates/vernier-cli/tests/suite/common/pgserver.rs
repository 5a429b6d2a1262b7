//! A PostgreSQL server of a test's own (initdb and pg_ctl in a temporary directory, on a free
//! loopback port), for the history store's tests.

use super::cli::text;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A PostgreSQL server of the test's own, in a temporary directory on a free loopback port,
/// stopped when dropped. Run as the `postgres` user when the tests run as root (the server
/// refuses root).
pub struct Postgres {
    pub url: String,
    bin: PathBuf,
    data: PathBuf,
    _dir: tempfile::TempDir,
    as_postgres: bool,
}

/// How a test's server is set up.
#[derive(Default)]
pub struct Options {
    /// Offer TLS with this certificate and key (PEM files, copied into the server's data).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Offer TLS with a self-signed certificate made with `openssl` (`CN=localhost`).
    pub self_signed: bool,
    /// Ask TCP clients for a password (SCRAM); the Unix socket stays trusted for `psql`.
    pub password: bool,
    /// Log each connection and its authorization (`log_connections`), in the file `log`.
    pub log_connections: bool,
    /// Admit TCP clients only over TLS with a certificate signed by this CA (PEM), whose
    /// common name is the user (`hostssl … cert`).
    pub client_ca: Option<PathBuf>,
}

impl Postgres {
    pub fn start() -> Postgres {
        Postgres::start_with(false)
    }

    /// A server that offers TLS (`ssl = on`, a self-signed certificate made with `openssl`)
    /// when `tls`.
    pub fn start_with(tls: bool) -> Postgres {
        Postgres::start_opts(Options {
            self_signed: tls,
            ..Options::default()
        })
    }

    pub fn start_opts(opts: Options) -> Postgres {
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
        let host_auth = if opts.password {
            "scram-sha-256"
        } else {
            "trust"
        };
        let o = pg
            .cmd("initdb")
            .args(["--auth-local=trust", "--auth-host", host_auth])
            .args(["-U", "vernier", "-D"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(o.status.success(), "initdb: {}", text(&o));
        let mut settings = String::new();
        if opts.self_signed {
            let o = Command::new("openssl")
                .args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                ])
                .args(["-subj", "/CN=localhost", "-keyout"])
                .arg(data.join("server.key"))
                .arg("-out")
                .arg(data.join("server.crt"))
                .output()
                .expect("openssl is not installed: apt-get install openssl");
            assert!(o.status.success(), "openssl: {}", text(&o));
        }
        if let Some((cert, key)) = &opts.tls {
            std::fs::copy(cert, data.join("server.crt")).unwrap();
            std::fs::copy(key, data.join("server.key")).unwrap();
        }
        if opts.self_signed || opts.tls.is_some() {
            for f in ["server.key", "server.crt"] {
                pg.own(&data.join(f), "600");
            }
            settings += " -c ssl=on";
        }
        if opts.log_connections {
            settings += " -c log_connections=on";
        }
        if let Some(ca) = &opts.client_ca {
            std::fs::copy(ca, data.join("client-ca.crt")).unwrap();
            pg.own(&data.join("client-ca.crt"), "644");
            std::fs::write(
                data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 cert\n",
            )
            .unwrap();
            pg.own(&data.join("pg_hba.conf"), "600");
            settings += " -c ssl_ca_file=client-ca.crt";
        }
        let o = pg
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-o")
            .arg(format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k {}{settings}",
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

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|t| t.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.join("log")).unwrap_or_default()
    }

    /// `sql` run by the superuser over the Unix socket (always trusted); its output.
    pub fn psql(&self, sql: &str) -> Output {
        self.cmd("psql")
            .arg("-h")
            .arg(&self.data)
            .args(["-p", &self.port().to_string()])
            .args([
                "-U",
                "vernier",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
                "postgres",
            ])
            .output()
            .unwrap()
    }

    /// `path` made private (`mode`) and owned by the server's user.
    fn own(&self, path: &std::path::Path, mode: &str) {
        let o = Command::new("chmod").arg(mode).arg(path).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        if self.as_postgres {
            let o = Command::new("chown")
                .arg("postgres")
                .arg(path)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
        }
    }

    pub fn cmd(&self, tool: &str) -> Command {
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

/// `vernier history migrate --db URL` (with `--writer ROLE` for each of `writers`): the
/// administrator's step before any job saves into a PostgreSQL store.
pub fn migrate(url: &str, writers: &[&str]) {
    let mut c = super::cli::vernier();
    c.args(["history", "migrate", "--db", url]);
    for w in writers {
        c.args(["--writer", w]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "history migrate: {}", text(&o));
}
