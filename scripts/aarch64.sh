#!/usr/bin/env bash
# Vernier on aarch64 Linux, proven under emulation (docs/platforms.md). On Debian 12 (root, or
# sudo), with only Debian's packages:
#   1. the cross toolchain: rustc-web (/usr/bin/rustc) and its standard library for arm64, the
#      aarch64 GNU compilers and binutils, qemu-user; an arm64 python3 for the Python worker;
#   2. the kernel hands every aarch64 executable to qemu (binfmt_misc), so that an x86-64
#      `vernier` drives aarch64 workers and an aarch64 `vernier` starts its own;
#   3. every part cross-built for aarch64: the CLI, a Rust benchmark of the crate, a Criterion
#      benchmark through vernier-criterion, C++ programs with the header, a Google Benchmark
#      program with the layer, the Python package's native module;
#   4. what does not time, run under qemu: the crate's unit tests, then the checks of
#      crates/vernier-cli/tests/suite/measuring/aarch64.rs (the protocol conformance of each
#      worker, `vernier demo --quick`, `vernier asm`, an x86-64 `vernier compare` of two
#      builds).
# Under emulation no figure means anything: the checks assert structure only. Each step is
# skipped when already done, so a second run only builds what changed. Called by .ci/run after
# the test command; any failure fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
say() { echo "aarch64: $*"; }
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi

TARGET=aarch64-unknown-linux-gnu
# Debian's packages for arm64, fetched apart from the system's own lists and caches.
CACHE=${VERNIER_AARCH64_CACHE:-/var/cache/vernier-aarch64}
# Cargo's target directory (shared with the x86-64 builds), and in it the builds the checks run.
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
OUT=$target_dir/$TARGET/checks

# --- 1. The cross toolchain --------------------------------------------------------------------
missing=()
# Debian 12's newer Rust, installed as /usr/bin/rustc (rustup's toolchain stays first on the
# PATH for everything else).
dpkg -s rustc-web >/dev/null 2>&1 || missing+=(rustc-web)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || missing+=(g++-aarch64-linux-gnu)
command -v aarch64-linux-gnu-objdump >/dev/null 2>&1 || missing+=(binutils-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
[ -e /usr/lib/binfmt.d/qemu-aarch64.conf ] || missing+=(qemu-user-binfmt)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# apt for arm64 alone, with lists and caches of its own (the system's are left as they are).
arm64_apt() {
  local tool=$1
  shift
  $SUDO "$tool" -qq -oAPT::Architecture=arm64 -oAPT::Architectures=arm64 \
    -oDir::State::Lists="$CACHE/lists" -oDir::Cache="$CACHE/cache" \
    -oAPT::Sandbox::User=root "$@"
}
arm64_lists_ready=
arm64_lists() {
  [ -n "$arm64_lists_ready" ] && return
  $SUDO mkdir -p "$CACHE/lists/partial" "$CACHE/cache/archives/partial" "$CACHE/debs"
  arm64_apt apt-get update
  arm64_lists_ready=1
}
# Fetch arm64 packages (NAME or NAME=VERSION) and unpack each into $1.
arm64_unpack() {
  local into=$1
  shift
  arm64_lists
  (cd "$CACHE/debs" && arm64_apt apt-get download "$@")
  $SUDO mkdir -p "$into"
  local p
  for p in "$@"; do
    $SUDO dpkg -x "$CACHE/debs/${p%%=*}_"*.deb "$into"
  done
}

# Rust's standard library for aarch64, of the very version of /usr/bin/rustc: rustc-web's
# libstd-rust-web-X.Y and libstd-rust-web-dev, at the installed package's version.
std_builds() {
  local probe
  probe=$(mktemp -d)
  echo 'pub fn f() -> Vec<u8> { Vec::new() }' >"$probe/lib.rs"
  /usr/bin/rustc --target "$TARGET" --crate-type lib --emit metadata \
    -o "$probe/lib.rmeta" "$probe/lib.rs" >/dev/null 2>&1
  local ok=$?
  rm -rf "$probe"
  return $ok
}
if ! std_builds; then
  rustc_version=$(/usr/bin/rustc --version | awk '{print $2}')   # 1.96.0
  deb_version=$(dpkg-query -W -f='${Version}' rustc-web)
  say "fetching Rust ${rustc_version%.*}'s standard library for arm64 ($deb_version)"
  std_root=$CACHE/rust-std
  $SUDO rm -rf "$std_root"
  arm64_unpack "$std_root" "libstd-rust-web-${rustc_version%.*}=$deb_version" \
    "libstd-rust-web-dev=$deb_version"
  sysroot=$(/usr/bin/rustc --print sysroot)
  $SUDO rm -rf "$sysroot/lib/rustlib/$TARGET"
  $SUDO cp -a "$std_root/usr/lib/rustlib/$TARGET" "$sysroot/lib/rustlib/"
  std_builds || { echo "aarch64: /usr/bin/rustc still cannot build for $TARGET" >&2; exit 1; }
fi

# --- 2. aarch64 programs run through qemu -------------------------------------------------------
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
  $SUDO mount -t binfmt_misc binfmt_misc "$binfmt"
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  $SUDO sh -c "cat /usr/lib/binfmt.d/qemu-aarch64.conf > $binfmt/register"
fi
# The aarch64 C library and loader, as an Arm machine has them in /.
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu

export RUSTC=/usr/bin/rustc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
mkdir -p "$OUT/bin"
echo 'int main(void) { return 42; }' >"$OUT/true.c"
aarch64-linux-gnu-gcc "$OUT/true.c" -o "$OUT/true"
set +e
"$OUT/true"
rc=$?
set -e
if [ $rc != 42 ]; then
  echo "aarch64: an aarch64 program does not run here (exit $rc): binfmt_misc has no qemu-aarch64" >&2
  exit 1
fi

# An arm64 python3 (Debian's, with the shared libraries its modules link), for the Python
# worker; started by a wrapper that gives it those libraries.
python_root=$CACHE/python
cat >"$OUT/bin/python3" <<EOF
#!/bin/sh
LD_LIBRARY_PATH=$python_root/usr/lib/aarch64-linux-gnu:$python_root/lib/aarch64-linux-gnu exec $python_root/usr/bin/python3 "\$@"
EOF
chmod +x "$OUT/bin/python3"
python_runs() { "$OUT/bin/python3" -c 'import ctypes, json, tempfile' >/dev/null 2>&1; }
if ! python_runs; then
  arm64_lists
  py=$(arm64_apt apt-cache depends python3-minimal | sed -n 's/.*Depends: \(python3\.[0-9]*-minimal\)$/\1/p' | head -1)
  [ -n "$py" ] || { echo "aarch64: no arm64 python3-minimal in Debian's lists" >&2; exit 1; }
  pyv=${py%-minimal}   # python3.11
  pkgs=(python3-minimal "$py" "lib$py" "lib$pyv-stdlib")
  # What they depend on directly: the shared libraries their modules link (the C library
  # comes with the cross compiler).
  deps=$(arm64_apt apt-cache depends --no-recommends --no-suggests "${pkgs[@]}" |
    sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \([^ <]*\)$/\2/p' | sort -u |
    grep -v -x -e libc6 -e dpkg -e "$py" -e "lib$py" -e "lib$pyv-stdlib" || true)
  say "fetching an arm64 $pyv"
  $SUDO rm -rf "$python_root"
  # shellcheck disable=SC2086
  arm64_unpack "$python_root" "${pkgs[@]}" $deps
  python_runs || { echo "aarch64: the arm64 $pyv does not run: $OUT/bin/python3 -c 'import ctypes'" >&2; exit 1; }
fi
say "toolchain ready in $((SECONDS - started)) s"

# --- 3. The cross builds ------------------------------------------------------------------------
build_started=$SECONDS
cxx=(aarch64-linux-gnu-g++ -O2 -std=c++17 -pthread -Iinclude)
# The C++ programs compile beside the Rust builds.
(
  "${cxx[@]}" examples/cpp/arithmetic.cpp -o "$OUT/arithmetic"
  "${cxx[@]}" -DKERNELS_CHAIN_N=100 examples/cpp/kernels.cpp -o "$OUT/kernels-100"
  "${cxx[@]}" -DKERNELS_CHAIN_N=200 examples/cpp/kernels.cpp -o "$OUT/kernels-200"
  "${cxx[@]}" -Iinclude/gbench cmake/gbench-consumer/main.cpp cmake/gbench/benchmark_main.cpp \
    -o "$OUT/gbench-consumer"
) &
cxx_job=$!
# The workspace's debug profile (vernier and vernier-cli are optimised in it), in one target
# directory with the x86-64 builds. One cargo command, so that the crates' features are unified
# once and each crate is built once. The CLI without the PostgreSQL store: the Python module
# leaves it out too, so both link one build of the CLI's library.
cargo build -q --target "$TARGET" -p vernier-cli --no-default-features --bin vernier \
  -p vernier --example chain -p vernier-criterion --example criterion_api \
  -p vernier-python --lib --features pyo3/extension-module
# The crate's unit tests check rules and numbers, not speed: unoptimised, they build in a
# fifth of the time.
unit_tests=(--config 'profile.dev.package.vernier.opt-level=0' --target "$TARGET" -p vernier --lib)
cargo test -q "${unit_tests[@]}" --no-run
wait $cxx_job
built=$target_dir/$TARGET/debug
cp "$built/vernier" "$built/examples/chain" "$built/examples/criterion_api" "$OUT/"
# The Python package as `pip install ./python` lays it out.
rm -rf "$OUT/python"
mkdir -p "$OUT/python/vernier"
cp python/vernier/*.py "$OUT/python/vernier/"
cp "$built/lib_native.so" "$OUT/python/vernier/_native.abi3.so"
say "built in $((SECONDS - build_started)) s"

# --- 4. Under qemu --------------------------------------------------------------------------------
check_started=$SECONDS
failed=()
# The crate's unit tests, less those that time (as in the test command's deterministic tier),
# and less the one that reads the page faults the kernel counts for the process, which
# qemu-user's own memory management hides from it (a reading of the machine, not a rule).
cargo test -q "${unit_tests[@]}" -- --skip measuring:: \
  --skip session::checkpoint::tests::phases_follow_the_work_they_enclose ||
  failed+=("the vernier crate's unit tests")
# The workers, the demo, asm and compare (crates/vernier-cli/tests/suite/measuring/aarch64.rs):
# ignored by the test command, run here with the builds above. The test binary is the one the
# test command built (the same toolchain and the same `--workspace --test suite`, so nothing is
# built again).
env -u RUSTC VERNIER_AARCH64="$OUT" \
  cargo test -q --workspace --test suite -- --ignored --test-threads=1 measuring::aarch64:: ||
  failed+=("measuring::aarch64")
say "checked in $((SECONDS - check_started)) s"
say "built and checked in $((SECONDS - started)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "aarch64: failed under qemu: ${failed[*]}" >&2
  exit 1
fi
