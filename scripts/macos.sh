#!/usr/bin/env bash
# The vernier command's library and binary, and the Python package's native module (pyo3,
# abi3: no Python needed to check it), linted for macOS (aarch64-apple-darwin and
# x86_64-apple-darwin) without a Mac or Apple's SDK: the Rust is checked whole; the C parts of
# its dependencies (ring, SQLite) are not compiled (scripts/windows/no-sdk-cc stands in for the
# compiler, and nothing is linked). The user's crates and the header are checked by
# scripts/windows.sh. Not yet called by .ci/run (it builds the command's dependencies for two
# more targets: minutes on a 2-vCPU machine); run it by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
cc=$PWD/scripts/windows/no-sdk-cc
for t in aarch64-apple-darwin x86_64-apple-darwin; do
  rustup target list --installed | grep -qx "$t" || rustup target add "$t"
  start=$SECONDS
  env "CC_${t//-/_}=$cc" "AR_${t//-/_}=ar" \
    cargo clippy -q --locked -p vernier-cli --lib --bins -p vernier-python --target "$t" -- -D warnings
  echo "macos: clippy -D warnings: the vernier command and the Python module for $t ($((SECONDS - start)) s)"
done
