// Latency and throughput, and cold caches (docs/experiments.md).
//
// - "sqrt": throughput, independent square roots that the core overlaps (arithmetic.cpp's form).
// - "sqrt latency": the same square root in a dependent chain, x = sqrt(x + c): each waits for
//   the previous one, so the figure is the instruction's latency.
// - "mul-add latency": a 4-cycle dependent chain, for scale.
// - "chase 16 loads in 8 KiB": 16 dependent loads in a random cycle through an 8 KiB buffer
//   (L1-resident). Hot by default; `vernier run --cache cold -- ./latency --filter chase`
//   evicts the caches before every sample, and each load then goes to memory.

#include "vernier.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

int main(int argc, char** argv) {
    double x = 4.2;
    vernier::bench("sqrt", [&] { return std::sqrt(x); });
    // sqrt(x) converges to 1; adding a constant keeps the value away from the fixed point
    // without changing the chain's structure (one add, one sqrt per iteration).
    vernier::bench_latency("sqrt latency", 4.2, [](double v) { return std::sqrt(v + 1.5); });
    // A multiply and an add: about 4 cycles of latency (3 + 1) on current x86-64 cores.
    vernier::bench_latency("mul-add latency", std::uint64_t{1},
                           [](std::uint64_t v) { return v * 0x9E3779B97F4A7C15u + 1; });

    // 8 KiB of 64-byte lines = 128 lines; a random cycle through 16 of them.
    constexpr std::size_t kLines = 128, kHops = 16, kStride = 64 / sizeof(std::uint64_t);
    static std::vector<std::uint64_t> buffer(kLines * kStride);
    std::uint64_t order[kHops];
    std::uint64_t seed = 0x9E3779B97F4A7C15u;
    for (std::size_t i = 0; i < kHops; ++i) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        order[i] = i * (kLines / kHops) + seed % (kLines / kHops);  // one line per 512 B
    }
    for (std::size_t i = 0; i < kHops; ++i) {
        buffer[order[i] * kStride] = order[(i + 1) % kHops] * kStride;
    }
    // A latency form: each iteration's 16 loads start where the previous iteration's ended, so
    // iterations cannot overlap (a `bench` restarting from the same line would let the core
    // run several chains at once).
    vernier::bench_latency("chase 16 loads in 8 KiB", order[0] * kStride, [](std::uint64_t p) {
        for (std::size_t i = 0; i < kHops; ++i) p = buffer[p];
        return p;
    });
    return vernier::main(argc, argv);
}
