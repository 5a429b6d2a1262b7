// A Google Benchmark program without a main: benchmark::benchmark_main provides it.
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

static void BM_accumulate(benchmark::State& state) {
    std::vector<int> v(static_cast<std::size_t>(state.range(0)), 1);
    for (auto _ : state) benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_accumulate)->Arg(64)->Arg(4096);
