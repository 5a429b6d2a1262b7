//! Where and how to connect to a PostgreSQL store, read as libpq reads it: the URL first, then
//! the `PG*` environment variables, then libpq's defaults.
//!
//! - Server and account: `host`, `port`, `user`, `dbname` from the URL, else `PGHOST`,
//!   `PGPORT`, `PGUSER` (else the login name), `PGDATABASE` (else the user's name).
//! - Password: the URL's, else `PGPASSWORD`, else the password file (`passfile=` in the URL,
//!   else `PGPASSFILE`, else `~/.pgpass`; `host:port:database:user:password` lines, `*` for
//!   any, a file that others can read is ignored with a warning, as libpq does).
//! - TLS: `sslmode` (`disable`, `prefer`, `require`, `verify-ca`, `verify-full`; default
//!   `prefer`), `sslrootcert` (a PEM file of the CAs to trust, or `system` for the system's
//!   roots), `sslcert` and `sslkey` (a client certificate), else `PGSSLMODE`, `PGSSLROOTCERT`,
//!   `PGSSLCERT`, `PGSSLKEY`, else `~/.postgresql/root.crt`, `postgresql.crt` and
//!   `postgresql.key` when they exist.
//!
//! The rest of the URL's parameters (`connect_timeout`, `application_name`, …) are the
//! `postgres` crate's to read. Nothing here connects: [`Target::resolve`] only reads.

use anyhow::Result;
use percent_encoding::percent_decode_str;
use postgres::config::{Host, SslMode};
use postgres::Config;
use std::path::{Path, PathBuf};

/// How far TLS goes, libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    /// TLS, and the server's certificate signed by a trusted CA.
    VerifyCa,
    /// As `VerifyCa`, and the certificate names the host connected to.
    VerifyFull,
}

impl Mode {
    fn parse(s: &str, from: &str) -> Result<Mode> {
        Ok(match s {
            "disable" => Mode::Disable,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            "allow" => anyhow::bail!(
                "{from}: sslmode=allow (TLS only when a connection without it is refused) is \
                 not supported: give prefer, require, verify-ca or verify-full"
            ),
            other => anyhow::bail!(
                "{from}: unknown sslmode '{other}': give disable, prefer, require, verify-ca or \
                 verify-full"
            ),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }

    /// Whether the server's certificate is checked against the trusted CAs.
    pub fn verifies(self) -> bool {
        matches!(self, Mode::VerifyCa | Mode::VerifyFull)
    }
}

/// The CAs a server's certificate must be signed by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// A PEM file.
    File(PathBuf),
    /// The system's trusted roots (`sslrootcert=system`).
    System,
}

/// What TLS a connection uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsOptions {
    pub mode: Mode,
    /// `None`: no roots (and then a verifying mode is refused before connecting).
    pub roots: Option<Roots>,
    /// The client's certificate chain and key (PEM files).
    pub client: Option<(PathBuf, PathBuf)>,
}

/// Where the password came from, for messages (never the password itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordFrom {
    None,
    Url,
    Env,
    File(PathBuf),
}

/// A store's connection, resolved.
pub struct Target {
    pub config: Config,
    pub tls: TlsOptions,
    pub password_from: PasswordFrom,
    /// Warnings to print once (a password file others can read, …).
    pub warnings: Vec<String>,
}

/// The URL's own parameters that this module reads (the others are the `postgres` crate's).
const OURS: [&str; 5] = ["sslmode", "sslrootcert", "sslcert", "sslkey", "passfile"];

/// The environment, as a function (tests give their own).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's environment, empty values taken as unset (as libpq does).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Target {
    /// Reads `url` and the environment `env`; `shown` is the URL as messages show it
    /// (password hidden).
    pub fn resolve(url: &str, shown: &str, env: Env<'_>) -> Result<Target> {
        let (base, ours) = split_params(url);
        let get = |k: &str| ours.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let mut config: Config = base.parse().map_err(|e| {
            anyhow::anyhow!(
                "--db {shown}: not a PostgreSQL URL ({e}): expected \
                 postgres://USER@HOST:PORT/DATABASE"
            )
        })?;
        fill_from_env(&mut config, env)?;
        let home = env("HOME").map(PathBuf::from);
        let dot = |f: &str| home.as_ref().map(|h| h.join(".postgresql").join(f));
        let mut warnings = Vec::new();

        let password_from = if config.get_password().is_some() {
            PasswordFrom::Url
        } else if let Some(p) = env("PGPASSWORD") {
            config.password(p);
            PasswordFrom::Env
        } else {
            let file = get("passfile")
                .or_else(|| env("PGPASSFILE"))
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".pgpass")));
            match file {
                Some(f) => match password_from_file(&f, &config, &mut warnings) {
                    Some(p) => {
                        config.password(p);
                        PasswordFrom::File(f)
                    }
                    None => PasswordFrom::None,
                },
                None => PasswordFrom::None,
            }
        };

        let root = get("sslrootcert").or_else(|| env("PGSSLROOTCERT"));
        let mode = match get("sslmode") {
            Some(m) => Some(Mode::parse(&m, &format!("--db {shown}"))?),
            None => env("PGSSLMODE")
                .map(|m| Mode::parse(&m, "PGSSLMODE"))
                .transpose()?,
        };
        let roots = match root.as_deref() {
            Some("system") => Some(Roots::System),
            Some(f) => Some(Roots::File(PathBuf::from(f))),
            None => dot("root.crt").filter(|p| p.exists()).map(Roots::File),
        };
        let mode = match (mode, &roots) {
            // libpq: the system's roots only with the host checked.
            (None, Some(Roots::System)) => Mode::VerifyFull,
            (Some(m), Some(Roots::System)) if m != Mode::VerifyFull => anyhow::bail!(
                "--db {shown}: sslrootcert=system checks the server's name: give \
                 sslmode=verify-full with it (sslmode={} was given)",
                m.name()
            ),
            // libpq: with a root file, `require` checks the chain as `verify-ca` does.
            (Some(Mode::Require), Some(Roots::File(f))) if f.exists() => Mode::VerifyCa,
            (m, _) => m.unwrap_or(Mode::Prefer),
        };
        let roots = if mode.verifies() { roots } else { None };
        if mode.verifies() && roots.is_none() {
            let default = dot("root.crt")
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.postgresql/root.crt".into());
            anyhow::bail!(
                "--db {shown}: sslmode={} checks the server's certificate, and no CA to check \
                 it against was given ({default} does not exist): give the CA's certificate \
                 with sslrootcert=FILE in the URL or PGSSLROOTCERT, or sslrootcert=system for \
                 the system's roots",
                mode.name()
            );
        }
        let client = client_cert(
            get("sslcert").or_else(|| env("PGSSLCERT")),
            get("sslkey").or_else(|| env("PGSSLKEY")),
            dot("postgresql.crt"),
            dot("postgresql.key"),
            shown,
        )?;
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        });
        Ok(Target {
            config,
            tls: TlsOptions {
                mode,
                roots,
                client: if mode == Mode::Disable { None } else { client },
            },
            password_from,
            warnings,
        })
    }
}

/// The URL without this module's parameters, and those (decoded).
fn split_params(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
    let mut kept = Vec::new();
    let mut ours = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = decode(k);
        if OURS.contains(&k.as_str()) {
            ours.push((k, decode(v)));
        } else {
            kept.push(pair);
        }
    }
    let base = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (base, ours)
}

/// libpq's defaults for what the URL left out: `PGHOST` (else `localhost`), `PGPORT`, `PGUSER`
/// (else the login name), `PGDATABASE`.
fn fill_from_env(config: &mut Config, env: Env<'_>) -> Result<()> {
    if config.get_hosts().is_empty() {
        let hosts = env("PGHOST").unwrap_or_else(|| "localhost".into());
        for h in hosts.split(',') {
            if h.starts_with('/') {
                config.host_path(h);
            } else {
                config.host(h);
            }
        }
    }
    if config.get_ports().is_empty() {
        if let Some(p) = env("PGPORT") {
            let port = p.parse::<u16>().map_err(|_| {
                anyhow::anyhow!("PGPORT={p}: not a port number: give one from 1 to 65535")
            })?;
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        match env("PGUSER")
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
        {
            Some(u) => {
                config.user(&u);
            }
            None => anyhow::bail!(
                "no user to connect to the PostgreSQL store as: give it in the URL \
                 (postgres://USER@HOST/DATABASE) or in PGUSER"
            ),
        }
    }
    if config.get_dbname().is_none() {
        if let Some(d) = env("PGDATABASE") {
            config.dbname(&d);
        }
    }
    Ok(())
}

/// The host a password file line is matched against: the first host, `localhost` for a
/// Unix socket (as libpq does).
fn first_host(config: &Config) -> String {
    match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        _ => "localhost".into(),
    }
}

/// The password for `config`'s host, port, database and user in the password file `path`;
/// `None` when the file does not exist, matches no line, or may be read by others (a warning).
fn password_from_file(path: &Path, config: &Config, warnings: &mut Vec<String>) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        warnings.push(format!(
            "the password file {} is ignored: others may read it (chmod 600 {} makes it yours \
             alone)",
            path.display(),
            path.display()
        ));
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let user = config.get_user().unwrap_or_default();
    let want = [
        first_host(config),
        config
            .get_ports()
            .first()
            .copied()
            .unwrap_or(5432)
            .to_string(),
        config.get_dbname().unwrap_or(user).to_string(),
        user.to_string(),
    ];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(pgpass_fields)
        .find(|f| {
            f[..4]
                .iter()
                .zip(&want)
                .all(|(got, w)| got == "*" || got == w)
        })
        .map(|f| f[4].clone())
}

/// A password file line's five fields (`\:` and `\\` unescaped), or `None` for fewer.
fn pgpass_fields(line: &str) -> Option<[String; 5]> {
    let mut fields: Vec<String> = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.extend(chars.next()),
            // The password is the rest of the line, colons and all.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    fields.try_into().ok()
}

/// The client certificate and key: both given, or neither (then libpq's default files when
/// both exist).
fn client_cert(
    cert: Option<String>,
    key: Option<String>,
    default_cert: Option<PathBuf>,
    default_key: Option<PathBuf>,
    shown: &str,
) -> Result<Option<(PathBuf, PathBuf)>> {
    match (cert, key) {
        (Some(c), Some(k)) => Ok(Some((c.into(), k.into()))),
        (Some(_), None) | (None, Some(_)) => anyhow::bail!(
            "--db {shown}: a client certificate needs both sslcert=FILE and sslkey=FILE (or \
             PGSSLCERT and PGSSLKEY)"
        ),
        (None, None) => Ok(default_cert
            .zip(default_key)
            .filter(|(c, k)| c.exists() && k.exists())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(url: &str, vars: &[(&str, &str)]) -> Result<Target> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Target::resolve(url, url, &|k| m.get(k).cloned())
    }

    #[test]
    fn the_url_wins_over_the_environment_and_the_environment_over_defaults() {
        let t = resolve(
            "postgres://ci@db.example:6000/bench?sslmode=require&application_name=x",
            &[
                ("PGUSER", "other"),
                ("PGSSLMODE", "disable"),
                ("PGHOST", "h2"),
            ],
        )
        .unwrap();
        assert_eq!(t.config.get_user(), Some("ci"));
        assert_eq!(t.config.get_hosts(), &[Host::Tcp("db.example".into())]);
        assert_eq!(t.config.get_ports(), &[6000]);
        assert_eq!(t.tls.mode, Mode::Require);
        assert_eq!(t.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(t.password_from, PasswordFrom::None);

        let t = resolve(
            "postgres:///bench",
            &[
                ("PGUSER", "ci"),
                ("PGHOST", "db.example"),
                ("PGPORT", "6001"),
                ("PGSSLMODE", "disable"),
                ("PGPASSWORD", "s3cret"),
            ],
        )
        .unwrap();
        assert_eq!(t.config.get_user(), Some("ci"));
        assert_eq!(t.config.get_hosts(), &[Host::Tcp("db.example".into())]);
        assert_eq!(t.config.get_ports(), &[6001]);
        assert_eq!(t.tls.mode, Mode::Disable);
        assert_eq!(t.config.get_password(), Some(&b"s3cret"[..]));
        assert_eq!(t.password_from, PasswordFrom::Env);
    }

    #[test]
    fn verifying_modes_need_roots_and_say_where_to_put_them() {
        let e = resolve(
            "postgres://ci@h/db?sslmode=verify-full",
            &[("HOME", "/nonexistent")],
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("sslrootcert=FILE"), "{e}");
        assert!(e.contains("/nonexistent/.postgresql/root.crt"), "{e}");
        let t = resolve(
            "postgres://ci@h/db?sslmode=verify-ca&sslrootcert=%2Ftmp%2Fca.pem",
            &[],
        )
        .unwrap();
        assert_eq!(t.tls.roots, Some(Roots::File("/tmp/ca.pem".into())));
        assert_eq!(t.tls.mode, Mode::VerifyCa);
        // `system` implies verify-full, and refuses a weaker mode given with it.
        let t = resolve("postgres://ci@h/db?sslrootcert=system", &[]).unwrap();
        assert_eq!(t.tls.mode, Mode::VerifyFull);
        let e = resolve("postgres://ci@h/db?sslrootcert=system&sslmode=require", &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("verify-full"), "{e}");
        // Environment names: PGSSLMODE and PGSSLROOTCERT.
        let t = resolve(
            "postgres://ci@h/db",
            &[
                ("PGSSLMODE", "verify-full"),
                ("PGSSLROOTCERT", "/etc/ca.pem"),
            ],
        )
        .unwrap();
        assert_eq!(t.tls.mode, Mode::VerifyFull);
        assert_eq!(t.tls.roots, Some(Roots::File("/etc/ca.pem".into())));
    }

    #[test]
    fn bad_modes_and_half_a_client_certificate_are_refused_with_the_fix() {
        let e = resolve("postgres://ci@h/db?sslmode=verify", &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown sslmode 'verify'"), "{e}");
        let e = resolve("postgres://ci@h/db?sslmode=allow", &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not supported"), "{e}");
        let e = resolve("postgres://ci@h/db?sslcert=/c.pem", &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sslkey=FILE"), "{e}");
        let e = resolve("postgres://h/db", &[]).err().unwrap().to_string();
        assert!(e.contains("PGUSER"), "{e}");
        let e = resolve("postgres:///db", &[("PGUSER", "ci"), ("PGPORT", "x")])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("PGPORT=x"), "{e}");
    }

    #[test]
    fn password_file_lines_match_as_libpq_matches_them() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(
            &f,
            "# comment\nother:5432:*:ci:wrong\ndb.example:*:bench:ci:pa\\:ss:word\n*:*:*:*:any\n",
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let pf = f.display().to_string();
        let t = resolve("postgres://ci@db.example/bench", &[("PGPASSFILE", &pf)]).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"pa:ss:word"[..]));
        assert_eq!(t.password_from, PasswordFrom::File(f.clone()));
        let t = resolve("postgres://x@elsewhere/db", &[("PGPASSFILE", &pf)]).unwrap();
        assert_eq!(t.config.get_password(), Some(&b"any"[..]));
        // PGPASSWORD wins over the file; the URL over both.
        let t = resolve(
            "postgres://ci@db.example/bench",
            &[("PGPASSFILE", &pf), ("PGPASSWORD", "env")],
        )
        .unwrap();
        assert_eq!(t.config.get_password(), Some(&b"env"[..]));
        let t = resolve(
            "postgres://ci:url@db.example/bench",
            &[("PGPASSWORD", "env")],
        )
        .unwrap();
        assert_eq!(t.config.get_password(), Some(&b"url"[..]));
        assert_eq!(t.password_from, PasswordFrom::Url);
        // A file others may read is ignored, and said.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let t = resolve("postgres://ci@db.example/bench", &[("PGPASSFILE", &pf)]).unwrap();
        assert_eq!(t.config.get_password(), None);
        assert!(t.warnings[0].contains("chmod 600"), "{:?}", t.warnings);
    }

    #[test]
    fn our_parameters_are_taken_out_and_the_others_kept() {
        let (base, ours) =
            split_params("postgres://h/db?connect_timeout=3&sslmode=verify-full&sslkey=%2Fk");
        assert_eq!(base, "postgres://h/db?connect_timeout=3");
        assert_eq!(
            ours,
            vec![
                ("sslmode".into(), "verify-full".into()),
                ("sslkey".into(), "/k".into())
            ]
        );
        assert_eq!(
            pgpass_fields("a:b:c:d:e:f"),
            Some(["a", "b", "c", "d", "e:f"].map(String::from))
        );
        assert_eq!(pgpass_fields("a:b:c:d"), None);
    }
}
