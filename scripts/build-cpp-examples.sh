#!/usr/bin/env bash
# Build the C++ examples every supported way and smoke-test the results:
#   1. the plain Makefile (examples/cpp/Makefile),
#   2. CMake from the top level (cmake -S . -B build && cmake --build build),
#   3. a consumer project with add_subdirectory(vernier),
#   4. `cmake --install`, then a consumer project with find_package(vernier),
#   5. with clang++ too, when it is installed.
# Every benchmark program is then asked for --list (checkpoints, not a benchmark program, is
# only built), and arithmetic measures its two sqrt benchmarks.
#
# usage: scripts/build-cpp-examples.sh [BUILD_DIR]    (default: target/cpp-build)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/cpp-build}
examples=(arithmetic ijk_loop pitfalls chain faulty pagefault kernels latency)
jobs=$(nproc 2>/dev/null || echo 2)
rm -rf "$out"
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

check_programs() { # DIR: every example lists its benchmarks
  for e in "${examples[@]}"; do
    "$1/$e" --list >/dev/null || { echo "$1/$e --list failed" >&2; exit 1; }
  done
}

step "Makefile (${CXX:-g++})"
make -s -C "$root/examples/cpp" BUILD="$out/make" CXXFLAGS="-O2 -g -Wall -Wextra -Werror" -j"$jobs"
check_programs "$out/make"

step "CMake, top level"
cmake -S "$root" -B "$out/cmake" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >/dev/null
cmake --build "$out/cmake" -j"$jobs"
check_programs "$out/cmake/examples/cpp"

step "CMake consumer, add_subdirectory"
cmake -S "$root/cmake/consumer" -B "$out/consumer-subdir" -DVERNIER_SOURCE_DIR="$root" >/dev/null
cmake --build "$out/consumer-subdir" -j"$jobs"
"$out/consumer-subdir/consumer" --list | grep -qx sqrt

step "CMake install, consumer with find_package"
cmake --install "$out/cmake" --prefix "$out/prefix" >/dev/null
test -f "$out/prefix/include/vernier.hpp"
cmake -S "$root/cmake/consumer" -B "$out/consumer-find" -DCMAKE_PREFIX_PATH="$out/prefix" >/dev/null
cmake --build "$out/consumer-find" -j"$jobs"
"$out/consumer-find/consumer" --list | grep -qx sqrt

if command -v clang++ >/dev/null 2>&1; then
  step "Makefile with clang++"
  make -s -C "$root/examples/cpp" BUILD="$out/clang" CXX=clang++ \
    CXXFLAGS="-O2 -g -Wall -Wextra -Wpedantic -Werror" -j"$jobs"
  check_programs "$out/clang"
else
  step "clang++ not installed: skipped"
fi

step "arithmetic, standalone"
"$out/cmake/examples/cpp/arithmetic" sqrt --time 0.2 --standalone

printf '\nall C++ builds OK (in %s)\n' "$out"
