// Parameters, throughput and complexity (docs/parameters.md).
//
// - "sort/N": sorting N 32-bit values (a copy of one shuffled input each iteration), over
//   Google Benchmark's Range(1 << 8, 1 << 16): its complexity reads O(N log N).
// - "scan/N": summing N 32-bit values, the same sizes, each declaring N items per iteration
//   (a `rate` column): its complexity reads O(N) while the data stays in the caches near the
//   core (256 KiB at the largest).
// - "copy 64 KiB": a buffer copied, declaring its bytes (GiB/s).

#include "vernier.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

static std::vector<std::uint32_t> shuffled(std::int64_t n) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(n));
    std::uint64_t x = 0x9E3779B97F4A7C15u;
    for (auto& e : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        e = static_cast<std::uint32_t>(x);
    }
    return v;
}

int main(int argc, char** argv) {
    vernier::bench_args("sort", vernier::range(1 << 8, 1 << 16), [](std::int64_t n) {
        return [v = shuffled(n)] {
            auto w = v;
            std::sort(w.begin(), w.end());
            return w[w.size() / 2];
        };
    });
    for (std::int64_t n : vernier::range(1 << 8, 1 << 16)) {
        vernier::bench("scan/" + std::to_string(n), [v = shuffled(n)] {
            return std::accumulate(v.begin(), v.end(), std::uint32_t{0});
        });
        vernier::items_per_iter(static_cast<std::uint64_t>(n));
    }
    static std::vector<char> src(64 << 10, 'x'), dst(64 << 10);
    vernier::bench("copy 64 KiB", [] {
        std::memcpy(dst.data(), src.data(), src.size());
        vernier::clobber_memory();
    });
    vernier::bytes_per_iter(64 << 10);
    return vernier::main(argc, argv);
}
