// benchmark::benchmark_main: Google Benchmark's `main` for programs that link it instead of
// writing BENCHMARK_MAIN() (include/gbench, docs/gbench.md).
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
