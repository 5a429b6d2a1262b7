//! The `vernier` command's integration tests, one test binary with a module per subject. Each
//! module is in one of three tiers, named by its path, and `scripts/test.sh` selects the tiers
//! by that path:
//!
//! - `deterministic`: fixtures of result files and sysfs trees, scripted input, a history store
//!   fed with given figures. Every rule and number is checked exactly; this tier runs first,
//!   with the unit tests, and fails fast.
//! - `measuring`: the real binary measuring real programs on the machine the tests run on,
//!   asserting only what holds in any state of it (a verdict never in the wrong direction, an
//!   interval that covers or a diagnostic that says why, a removed body flagged).
//! - `registry`: the measuring tests whose third-party suites are fetched at test time, from
//!   crates.io, PyPI and Debian's archive; one that cannot reach its registry fails saying
//!   which.
//!
//! `common` holds what the modules share: driving the binary, building the C++ and Rust example
//! workers, the protocol's conformance checks, a PostgreSQL server of the tests' own.

mod common;
mod deterministic;
mod measuring;
mod registry;
