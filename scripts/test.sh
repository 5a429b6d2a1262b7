#!/usr/bin/env bash
# The test command: formatting, lints, the API documentation, then every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The API documentation builds without a broken link or stray tag.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
cargo test --workspace
