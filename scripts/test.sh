#!/usr/bin/env bash
# The test command: formatting, lints, the API documentation, every test of the workspace, then
# the Python package built in a fresh virtual environment and its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The API documentation builds without a broken link or stray tag.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
# The deterministic tier first: mock clocks, scripted workers, fixtures, golden statistics,
# property tests. Each checks a rule or a number exactly, and fails fast.
cargo test -q -p vernier --lib --test layers --test stats_golden --test compare_stats_golden \
  --test compare_stats_synthetic --test counters_pure --test diagnostic_words --test options_parse \
  --test protocol_fuzz --test report_snapshot --test result_load --test shared_constants
cargo test -q -p vernier-cli --lib --test compare_gbench --test history --test instructions_parse \
  --test system_show --test system_tune
# Then everything, the measuring tier included: real benchmarks on this machine, asserting only
# what an honest tool guarantees in any state of it (a verdict never in the wrong direction, an
# interval that covers or a flag that says why, a constant flagged).
cargo test --workspace --no-fail-fast

# The Python package as a user installs it: `pip install ./python` into a fresh virtual
# environment (maturin builds the native module; `--profile dev` reuses the crates the tests
# above compiled, and the measuring crates are optimised in that profile too), then its tests.
python_start=$SECONDS
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check pytest pytest-xdist
MATURIN_PEP517_ARGS="--profile dev" "$venv/bin/pip" install -q --disable-pip-version-check ./python
"$venv/bin/python" -m pytest python/tests -p no:cacheprovider
echo "python package: built and tested in $((SECONDS - python_start)) s"
