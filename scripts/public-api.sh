#!/usr/bin/env bash
# The vernier crate's user API, what `cargo doc -p vernier` shows, each item with its signature
# (scripts/public_api.py reads it from rustdoc's JSON), against the listing committed in
# crates/vernier/public-api.txt. A change to the API a bench crate depends on fails here until
# the listing is updated in the same commit, where review sees it (and the version moves as
# semver asks). The engine, `#[doc(hidden)]`, is not listed.
#
# Why not cargo-semver-checks: it is not on the machine, and `cargo install cargo-semver-checks
# --locked` took 2,371 s here (the 2-core machine shared with other builds), where CI has about
# 3 minutes left of its 20-minute target. This check costs one rustdoc run of the crate (44 s
# here, most of it building its few dependencies once); it says that the API changed and how,
# not whether the change breaks semver: that is the reviewer's reading of the diff.
#
#   scripts/public-api.sh           check
#   scripts/public-api.sh --bless   write the listing anew
set -euo pipefail
cd "$(dirname "$0")/.."
listing=crates/vernier/public-api.txt
# rustdoc's JSON output is unstable on a stable toolchain: RUSTC_BOOTSTRAP lets the stable
# rustdoc write it. A target directory of its own keeps the variable out of the others' builds.
target=target/public-api
RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p vernier --lib --target-dir "$target" -- \
  -Z unstable-options --output-format json --document-hidden-items
now=$(mktemp)
trap 'rm -f "$now"' EXIT
python3 scripts/public_api.py "$target/doc/vernier.json" >"$now"
if [ "${1:-}" = --bless ]; then
  cp "$now" "$listing"
  echo "wrote $listing ($(wc -l <"$listing") items)"
  exit 0
fi
if ! diff -u "$listing" "$now"; then
  echo "the user API of crates/vernier changed (above, - before, + now): if it is meant, run" \
    "scripts/public-api.sh --bless and commit $listing with the change" >&2
  exit 1
fi
echo "user API: as listed in $listing ($(wc -l <"$listing") items)"
