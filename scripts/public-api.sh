#!/usr/bin/env bash
# The vernier crate's user API, what `cargo doc -p vernier` shows, each item with its signature,
# its trait implementations and auto traits (scripts/public_api.py reads them from rustdoc's
# JSON), checked against crates/vernier/public-api.txt, the listing of the API as it was at the
# version on its first line:
# - the semver check (scripts/semver_check.py): each difference is classed by Cargo's SemVer
#   rules, breaking or additive, and the workspace version in Cargo.toml must move as the change
#   needs (a breaking change from 0.1.0 needs 0.2.0, an additive one 0.1.1);
# - then the listing must be the API now, so that a change to it is one a commit shows, where
#   review sees it.
# The engine, `#[doc(hidden)]`, is not listed.
#
# Why not cargo-semver-checks: it is not on the machine, and `cargo install cargo-semver-checks
# --locked` took 2,371 s here (the 2-core machine shared with other builds), more than CI's
# whole 20-minute target. This check costs one rustdoc run of the crate (20 to 44 s here). What
# it does not see that cargo-semver-checks would is said in scripts/semver_check.py.
#
#   scripts/public-api.sh           check
#   scripts/public-api.sh --bless   write the listing anew, at the workspace's version (refused
#                                   when that version does not cover the change)
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
version=$(cargo metadata -q --no-deps --format-version 1 |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "vernier"))')
items() { grep -v '^#' "$1"; }
if [ "${1:-}" = --bless ]; then
  # A listing of before the version line is taken as it is: it becomes the baseline.
  if grep -q '^# version ' "$listing"; then
    python3 scripts/semver_check.py "$listing" "$now" "$version"
  fi
  { echo "# version $version"; cat "$now"; } >"$listing"
  echo "wrote $listing ($(items "$listing" | wc -l) items, version $version)"
  exit 0
fi
python3 scripts/semver_check.py "$listing" "$now" "$version"
if ! diff -u <(items "$listing") "$now"; then
  echo "the user API of crates/vernier changed (above, - listed, + now), and version $version" \
    "covers it: run scripts/public-api.sh --bless and commit $listing with the change" >&2
  exit 1
fi
echo "user API: as listed in $listing ($(items "$listing" | wc -l) items, version $version)"
