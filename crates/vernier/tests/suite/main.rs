//! The library's integration tests, one test binary with a module per subject. Each module is in
//! one of two tiers, named by its path, and `scripts/test.sh` selects the tiers by that path:
//!
//! - `deterministic`: fixtures, golden statistics, property tests with fixed seeds, mock clocks
//!   and the layers check. Every rule and number is checked exactly; this tier runs first, with
//!   the unit tests, and fails fast.
//! - `measuring`: real measurements on the machine the tests run on, asserting only what holds
//!   in any state of it (ratios measured side by side, an event read or explained).

mod deterministic;
mod measuring;

/// The name the harness gives `test` in `module` (its `module_path!()`): the path without the
/// crate's name, as `--exact` wants it when a test runs itself again in a process of its own.
fn harness_name(module: &str, test: &str) -> String {
    let path = module.split_once("::").map_or(module, |(_, path)| path);
    format!("{path}::{test}")
}
