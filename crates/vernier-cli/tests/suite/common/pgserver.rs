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

impl Postgres {
    pub fn start() -> Postgres {
        Postgres::start_with(false)
    }

    /// A server that offers TLS (`ssl = on`, a self-signed certificate made with `openssl`)
    /// when `tls`.
    pub fn start_with(tls: bool) -> Postgres {
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
        let mut ssl = String::new();
        if tls {
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
            for f in ["server.key", "server.crt"] {
                let o = Command::new("chmod")
                    .arg("600")
                    .arg(data.join(f))
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", text(&o));
                if pg.as_postgres {
                    let o = Command::new("chown")
                        .arg("postgres")
                        .arg(data.join(f))
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "{}", text(&o));
                }
            }
            ssl = " -c ssl=on".into();
        }
        let o = pg
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-o")
            .arg(format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k {}{ssl}",
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
