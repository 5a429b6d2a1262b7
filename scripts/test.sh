#!/usr/bin/env bash
# The test command: formatting, lints, the API documentation, every test of the workspace, then
# the Python package built in a fresh virtual environment and its tests. Every step runs, whatever
# the outcome of those before it (a failing tier must not hide the others' results); each says
# its time in seconds, and the command exits non-zero naming the steps that failed.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
timings=()
# step NAME COMMAND…: runs COMMAND, says how long it took and whether it passed.
step() {
  local name=$1 started=$SECONDS rc=0
  shift
  echo "── $name"
  "$@" || rc=$?
  local took=$((SECONDS - started))
  if [ $rc = 0 ]; then
    echo "── $name: passed in $took s"
    timings+=("$name $took s")
  else
    echo "── $name: FAILED (exit $rc) in $took s"
    timings+=("$name $took s (failed)")
    failed+=("$name")
  fi
}

step fmt cargo fmt --all -- --check
step clippy cargo clippy --workspace --all-targets -- -D warnings
doc() {
  # The API documentation builds without a broken link or stray tag.
  RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q || return
  # The vernier crate's user API (what its documentation shows, with every signature) as the
  # committed listing has it: a change to it is one a commit shows.
  scripts/public-api.sh
}
step doc doc
# Each crate's integration tests are one binary (`tests/suite/`), and a test's module path
# names its tier. The deterministic tier first, with the unit tests and the doctests: every
# test whose path has neither `measuring::` nor `registry::`. Mock clocks, scripted workers,
# fixtures, golden statistics, property tests; each checks a rule or a number exactly, and fails
# fast.
step deterministic cargo test -q --workspace -- --skip measuring:: --skip registry::
# Then the measuring tier, and only it: real benchmarks on this machine, asserting only what an
# honest tool guarantees in any state of it (a verdict never in the wrong direction, an
# interval that covers or a flag that says why, a constant flagged).
step measuring cargo test --workspace --test suite --no-fail-fast -- measuring:: \
  --skip measuring::system_noise
# The tests that load the CPUs on purpose (`vernier load`, `system noise`) run alone, one at a
# time, as they did in a binary of their own: beside another measuring test they would load it
# and read its load as the machine's noise.
step noise cargo test --workspace --test suite --no-fail-fast -- measuring::system_noise \
  --test-threads=1
# The registry tier: the measuring tests whose third-party suites or dependencies are fetched
# at test time (a crate's Criterion benches and the async bench crates' tokio and smol from
# crates.io, Google Benchmark's programs from Debian's archive, pyperf from PyPI). A registry
# that cannot be reached fails its test, saying which.
step registry cargo test --workspace --test suite --no-fail-fast -- registry::

# The Python package as a user installs it: `pip install ./python` into a fresh virtual
# environment (maturin builds the native module), then its tests. `--profile dev` and the
# `postgres` feature make it the build the tests above compiled: the CLI's library (optimised
# in that profile, as the measuring crates are) is the one they linked, with the PostgreSQL
# store they enable, not a second build of the whole library without the store. The package
# without the store, as users get it by default, is built by scripts/aarch64.sh.
venv_dir=$(mktemp -d)
trap 'rm -rf "$venv_dir"' EXIT
python_package() {
  local venv="$venv_dir/venv"
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install -q --disable-pip-version-check pytest pytest-xdist &&
    MATURIN_PEP517_ARGS="--profile dev --features postgres" "$venv/bin/pip" install -q \
      --disable-pip-version-check ./python &&
    "$venv/bin/python" -m pytest python/tests -p no:cacheprovider
}
step python python_package

echo "test command, each step's time: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g')"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test command: failed: ${failed[*]}" >&2
  exit 1
fi
