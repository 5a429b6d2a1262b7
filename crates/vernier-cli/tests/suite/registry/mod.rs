//! The tier of the tests that fetch third-party suites at test time, from the registries the
//! machine reaches: a crate's Criterion benches from crates.io (`criterion`), Google
//! Benchmark's test programs from Debian's archive (`gbench`), pyperf from PyPI (`pyperf`),
//! hyperfine's scripts from crates.io with the libraries they import from PyPI (`hyperfine`),
//! and the bench crates whose dependencies come from crates.io (tokio and smol for async
//! bodies, `asynchronous`).
//! `scripts/test.sh` runs it after the measuring tier (`cargo test --workspace --test suite
//! -- registry::`). A registry that cannot be reached fails its test with one line that names
//! the registry, what was fetched and the fetching command's own words, not a panic.

mod asynchronous;
mod criterion;
mod gbench;
mod hyperfine;
mod pyperf;

use crate::common::bench_crate::BenchCrate;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A registry a test could not fetch from: which one, what was asked of it, and the fetching
/// command's output. A test returns it as its error, which the test harness prints.
pub struct Unreachable {
    registry: &'static str,
    what: String,
    said: String,
}

impl Unreachable {
    /// `Ok` when the fetching command `o` succeeded; else the registry it could not reach.
    pub fn unless(o: &Output, registry: &'static str, what: &str) -> Result<(), Unreachable> {
        if o.status.success() {
            return Ok(());
        }
        Err(Unreachable {
            registry,
            what: what.to_string(),
            said: crate::common::cli::text(o).trim().to_string(),
        })
    }
}

/// The published source of the crate `name` `version`, fetched from crates.io by cargo (`cargo
/// vendor` of a scratch crate under `dir` that depends on it, through the registry cargo is set
/// up with) when it is not already there: its directory, which the caller reads and does not
/// change. `why` says what the test wants of it, for the error.
pub fn published_crate(
    dir: &Path,
    name: &str,
    version: &str,
    why: &str,
) -> Result<PathBuf, Unreachable> {
    let fetch = BenchCrate::package(
        dir.join("fetch"),
        "fetch",
        &format!("[dependencies]\n{name} = \"={version}\"\n"),
        &[("src/lib.rs", "")],
    );
    let src = fetch.dir().join(format!("vendor/{name}-{version}"));
    // cargo writes a crate's checksums once its files are in place.
    if !src.join(".cargo-checksum.json").exists() {
        let _ = std::fs::remove_dir_all(fetch.dir().join("vendor"));
        let o = Command::new(env!("CARGO"))
            .args(["vendor", "--versioned-dirs", "--quiet", "vendor"])
            .current_dir(fetch.dir())
            .output()
            .unwrap();
        Unreachable::unless(
            &o,
            "crates.io (the registry cargo is set up with)",
            &format!("`cargo vendor` of {name} {version}, {why}"),
        )?;
    }
    Ok(src)
}

/// `cargo fetch` of the crate's dependencies, from crates.io when cargo does not have them
/// yet; after it, the crate builds `--offline`. `what` names the crate for the error.
pub fn dependencies_fetched(c: &BenchCrate, what: &str) -> Result<(), Unreachable> {
    let o = c.command(&["fetch"]).output().unwrap();
    Unreachable::unless(
        &o,
        "crates.io (the registry cargo is set up with)",
        &format!("`cargo fetch` of the dependencies of {what}"),
    )
}

impl fmt::Debug for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} could not be reached: {} failed; this test needs it (the registry tier, \
             scripts/test.sh)\n{}",
            self.registry, self.what, self.said
        )
    }
}

#[test]
fn an_unreachable_registry_is_named_with_what_was_fetched() {
    let o = std::process::Command::new("sh")
        .args(["-c", "echo 'no route to host' >&2; exit 1"])
        .output()
        .unwrap();
    let e = Unreachable::unless(&o, "crates.io", "`cargo vendor` of adler").unwrap_err();
    let said = format!("{e:?}");
    assert!(
        said.starts_with("crates.io could not be reached: `cargo vendor` of adler failed"),
        "{said}"
    );
    assert!(said.contains("no route to host"), "{said}");
    let ok = std::process::Command::new("true").output().unwrap();
    assert!(Unreachable::unless(&ok, "PyPI", "pip").is_ok());
}
