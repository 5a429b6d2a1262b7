#!/usr/bin/env bash
# One Google Benchmark program built twice, against libbenchmark and against vernier's layer
# (include/gbench, docs/gbench.md), and measured both ways on this machine: libbenchmark's
# median real time over repetitions beside the median `vernier run` measures for the layer's
# build, benchmark by benchmark, and their ratio.
#
#   scripts/gbench-vs-libbenchmark.sh [SOURCE.cc] [ARG...]
#
# SOURCE.cc: a Google Benchmark program (default: a sort, a hash over an array, a string
# compare and a map lookup, written below). ARGs go to both programs (a --benchmark_filter).
# Needs g++, libbenchmark-dev and the vernier runner ($VERNIER_BIN, `vernier` on the PATH, or
# target/release/vernier). Environment: REPS (libbenchmark's repetitions, default 5), TIME
# (vernier's --time per benchmark, default 1), CXXFLAGS (both builds; default -O2 -DNDEBUG).
#
# The two builds place the code differently: a loop that straddles a 64-byte boundary in one
# build and not in the other can run at half the speed there (BM_threads_sum below did, in
# libbenchmark's build, on an AMD EPYC guest: 575 ns against 294 ns, and 292 ns with
# CXXFLAGS="-O2 -DNDEBUG -falign-loops=64"). Compare with aligned loops to compare the
# measuring, not the placement.
#
# Threaded benchmarks: vernier's time per iteration is one thread's (a sample over one
# thread's iterations) and Google Benchmark's divides by all threads' iterations, so the
# layer's figure is divided by the thread count here before the ratio. libbenchmark's real
# time includes what PauseTiming/ResumeTiming cost it (the reads of two clocks per call),
# vernier's leaves them out: benchmarks that pause in every iteration differ by that.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$src" ]; then
  src=$work/program.cc
  cat > "$src" <<'CPP'
#include <benchmark/benchmark.h>
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

static void BM_sort(benchmark::State& state) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(state.range(0)));
    static std::uint64_t s = 0x9e3779b97f4a7c15ull;
    for (auto _ : state) {
        for (auto& x : v) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; x = static_cast<std::uint32_t>(s >> 32); }
        std::sort(v.begin(), v.end());
        benchmark::DoNotOptimize(v.data());
        benchmark::ClobberMemory();
    }
    state.SetComplexityN(state.range(0));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_sort)->RangeMultiplier(4)->Range(1 << 8, 1 << 16)->Complexity();

static void BM_hash(benchmark::State& state) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(state.range(0)), 7);
    for (auto _ : state) {
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (std::uint32_t x : v) h = (h ^ x) * 0x100000001b3ull;
        benchmark::DoNotOptimize(h);
    }
    state.SetComplexityN(state.range(0));
    state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}
BENCHMARK(BM_hash)->RangeMultiplier(4)->Range(1 << 8, 1 << 16)->Complexity(benchmark::oN);

static void BM_string_compare(benchmark::State& state) {
    std::string a(static_cast<std::size_t>(state.range(0)), 'x'), b = a;
    for (auto _ : state) benchmark::DoNotOptimize(a.compare(b));
}
BENCHMARK(BM_string_compare)->Arg(64)->Arg(4096);

static void BM_map_find(benchmark::State& state) {
    std::map<int, int> m;
    for (int i = 0; i < state.range(0); ++i) m[i * 7] = i;
    int k = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(m.find(k));
        k = (k + 7 * 13) % static_cast<int>(7 * state.range(0));
    }
}
BENCHMARK(BM_map_find)->Arg(1024);

static void BM_threads_sum(benchmark::State& state) {
    std::vector<std::uint64_t> v(1024, 3);  // 8 KiB: well inside L1 (4096 would fill it)
    for (auto _ : state) {
        std::uint64_t t = 0;
        for (auto x : v) t += x;
        benchmark::DoNotOptimize(t);
    }
}
BENCHMARK(BM_threads_sum)->Threads(1)->Threads(2);

BENCHMARK_MAIN();
CPP
fi

vernier=${VERNIER_BIN:-}
[ -z "$vernier" ] && vernier=$(command -v vernier || true)
[ -z "$vernier" ] && [ -x "$root/target/release/vernier" ] && vernier=$root/target/release/vernier
if [ -z "$vernier" ]; then
  echo "no vernier runner: cargo build --release -p vernier-cli, or set VERNIER_BIN" >&2
  exit 1
fi
[ -e /usr/include/benchmark/benchmark.h ] || { echo "libbenchmark is missing: apt-get install libbenchmark-dev" >&2; exit 1; }

cxx=${CXX:-g++}
read -r -a flags <<< "${CXXFLAGS:--O2 -DNDEBUG}"
"$cxx" "${flags[@]}" -std=c++17 "$src" -o "$work/lib" -lbenchmark -lpthread
"$cxx" "${flags[@]}" -std=c++17 -I"$root/include/gbench" -I"$root/include" "$src" -o "$work/gb" -pthread

echo "flags: ${flags[*]}; libbenchmark: $(dpkg-query -W -f='${Version}' libbenchmark-dev 2>/dev/null || echo '?'), ${REPS:-5} repetitions; vernier: $("$vernier" --version 2>/dev/null | head -1), --time ${TIME:-1}" >&2
"$work/lib" "$@" --benchmark_repetitions="${REPS:-5}" --benchmark_format=json > "$work/lib.json" 2> "$work/lib.err" \
  || { cat "$work/lib.err" >&2; exit 1; }
VERNIER_SELF_RUN=1 "$vernier" run --time "${TIME:-1}" --counters none --json "$work/gb.json" -- "$work/gb" "$@" > "$work/gb.out" 2>&1 \
  || { cat "$work/gb.out" >&2; exit 1; }

python3 - "$work/lib.json" "$work/gb.json" <<'PY'
import json, sys
lib = json.load(open(sys.argv[1]))
gb = json.load(open(sys.argv[2]))
scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
theirs = {}
for b in lib["benchmarks"]:
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
        theirs[b["run_name"]] = (b["real_time"] * scale[b["time_unit"]], b.get("threads", 1))
worst = 1.0
print(f"{'benchmark':40} {'libbenchmark':>14} {'vernier':>14} {'ratio':>7}")
for b in gb["benchmarks"]:
    name = b["name"]
    if name not in theirs or b.get("status") != "ok":
        print(f"{name:40} {'—':>14} {'—':>14}  ({b.get('status')})")
        continue
    t, threads = theirs[name]
    ours = b["per_iter"]["median_ns"] / threads
    r = ours / t
    worst = max(worst, r, 1 / r)
    flag = "  beyond 1.5×" if max(r, 1 / r) > 1.5 else ""
    print(f"{name:40} {t:11.1f} ns {ours:11.1f} ns {r:7.3f}{flag}")
print(f"largest ratio either way: {worst:.3f}")
PY
