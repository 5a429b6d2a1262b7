#!/usr/bin/env bash
# Vernier where benchmarks are written, checked from Debian (docs/platforms.md):
#   1. the tools: MinGW-w64 (posix threads) and Wine from Debian; rustup's standard libraries
#      for x86_64-pc-windows-gnu, aarch64-apple-darwin and x86_64-apple-darwin;
#   2. `cargo clippy -D warnings` of the user's crates (vernier, vernier-criterion) for the
#      three targets (macOS: compile-checked only, no Mac here);
#   3. the C++ header with MinGW (-Wall -Wextra -Werror), run by itself under Wine; its Apple
#      branch compiled against glibc with __linux__ undefined and Apple's two declarations
#      stubbed (how far a compiler gets without Apple's SDK);
#   4. under Wine: the crate's unit tests, and a fresh bench crate with the README's example
#      and a body without a barrier, run by cargo bench's binary: the three rows judged, the
#      fourth flagged optimized-away.
# Wine 8 lacks bcryptprimitives.dll (ProcessPrng, which Rust's standard library imports): a
# test shim (scripts/windows/processprng.c) is built and put beside the programs run, never
# shipped. Each step prints its time. Called by .ci/run; any failure fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "windows: $*"; }
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
step_start=$SECONDS
step() { say "$1 ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
export WINEDEBUG=-all
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
OUT=$target_dir/windows-checks
mkdir -p "$OUT"

# --- 1. The tools -------------------------------------------------------------------------------
missing=()
command -v x86_64-w64-mingw32-g++-posix >/dev/null 2>&1 || missing+=(g++-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || missing+=(wine wine64)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
TARGETS=(x86_64-pc-windows-gnu aarch64-apple-darwin x86_64-apple-darwin)
installed=$(rustup target list --installed)
for t in "${TARGETS[@]}"; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
step "tools ready"

# --- 2. The user's crates, linted for each target -----------------------------------------------
for t in "${TARGETS[@]}"; do
  cargo clippy -q --locked -p vernier -p vernier-criterion --all-targets --target "$t" -- -D warnings
  step "clippy -D warnings: vernier, vernier-criterion for $t"
done

# --- 3. The header ------------------------------------------------------------------------------
cat >"$OUT/bench.cpp" <<'CPP'
#include "vernier.hpp"
#include <cmath>
int main(int argc, char** argv) {
    double x = 4.2;
    vernier::bench("sqrt", [&] { return std::sqrt(x); });
    vernier::bench("sqrt(4.2) no barrier", [] { return std::sqrt(4.2); });
    return vernier::main(argc, argv);
}
CPP
x86_64-w64-mingw32-g++-posix -std=c++17 -O2 -Wall -Wextra -Werror -Iinclude -static \
  "$OUT/bench.cpp" -o "$OUT/bench.exe"
out=$(wine "$OUT/bench.exe" --standalone)
echo "$out"
grep -q '^sqrt  .*T_iter' <<<"$out"
grep -q '^sqrt(4.2) no barrier .*optimized away?' <<<"$out"
mkdir -p "$OUT/applestub/mach-o"
printf '#include <stdint.h>\nextern "C" int _NSGetExecutablePath(char*, uint32_t*);\n' \
  >"$OUT/applestub/mach-o/dyld.h"
g++ -std=c++17 -O2 -Wall -Wextra -Werror -U__linux__ -U__gnu_linux__ -Ulinux -D__APPLE__ \
  -DCLOCK_UPTIME_RAW=CLOCK_MONOTONIC -isystem "$OUT/applestub" -Iinclude -fsyntax-only \
  "$OUT/bench.cpp"
step "header: MinGW build without a warning, run under Wine; Apple branch compiled"

# --- 4. Under Wine ------------------------------------------------------------------------------
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -shared -o "$OUT/bcryptprimitives.dll" \
  scripts/windows/processprng.c -ladvapi32
tests=$(cargo test -q --locked -p vernier --lib --target x86_64-pc-windows-gnu --no-run \
  --message-format=json | python3 -c '
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "vernier":
        print(m["executable"])')
cp "$OUT/bcryptprimitives.dll" "$(dirname "$tests")/"
wine "$tests" -q
step "the crate's unit tests under Wine"

crate=$OUT/bench-crate
mkdir -p "$crate/benches" "$crate/src"
: >"$crate/src/lib.rs"
cat >"$crate/Cargo.toml" <<TOML
[workspace]
[package]
name = "maths"
version = "0.1.0"
edition = "2021"
[lib]
bench = false
[dev-dependencies]
vernier = { path = "$PWD/crates/vernier" }
[[bench]]
name = "maths"
harness = false
TOML
cat >"$crate/benches/maths.rs" <<'RS'
use vernier::{black_box, Suite};

fn maths(s: &mut Suite) {
    let x = 4.2f64;
    s.bench("sqrt", move || black_box(x).sqrt());
    s.bench_with_setup("sort 64", || vec![3u32; 64], |mut v| { v.sort(); v });
    let pool = vernier::pool(vernier::DEFAULT_POOL, 42, |r| r.next_u64());
    s.bench_with_pool("branchy", pool, |&v| if v & 1 == 0 { v / 3 } else { v * 3 });
    s.bench("sqrt(4.2) no barrier", || 4.2f64.sqrt());
}

vernier::main!(maths);
RS
bench=$(cd "$crate" && CARGO_TARGET_DIR=$target_dir cargo bench -q --bench maths \
  --target x86_64-pc-windows-gnu --no-run --message-format=json | python3 -c '
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "maths":
        print(m["executable"])')
cp "$OUT/bcryptprimitives.dll" "$(dirname "$bench")/"
out=$(wine "$bench" --quick --json "$OUT/maths.json")
echo "$out"
python3 - "$OUT/maths.json" <<'PY'
import json, sys
b = {r["name"]: r for r in json.load(open(sys.argv[1]))["benchmarks"]}
def codes(n):
    return [d["code"] for d in b[n].get("diagnostics", [])]
for n in ["sqrt", "sort 64", "branchy"]:
    assert "optimized-away" not in codes(n), (n, codes(n))
assert "optimized-away" in codes("sqrt(4.2) no barrier"), codes("sqrt(4.2) no barrier")
print("windows: three rows judged, the body without a barrier flagged optimized-away")
PY
step "a fresh bench crate under Wine"
