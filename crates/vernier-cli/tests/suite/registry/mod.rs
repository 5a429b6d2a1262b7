//! The tier of the tests that fetch third-party suites at test time, from the registries the
//! machine reaches: a crate's Criterion benches from crates.io (`criterion`), Google
//! Benchmark's test programs from Debian's archive (`gbench`), pyperf from PyPI (`pyperf`),
//! hyperfine's scripts from crates.io with the libraries they import from PyPI (`hyperfine`).
//! `scripts/test.sh` runs it after the measuring tier (`cargo test --workspace --test suite
//! -- registry::`). A registry that cannot be reached fails its test with one line that names
//! the registry, what was fetched and the fetching command's own words, not a panic.

mod criterion;
mod gbench;
mod hyperfine;
mod pyperf;

use std::fmt;
use std::process::Output;

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
