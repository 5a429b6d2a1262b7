// Three kernels of different kinds, the reference workloads of `scripts/compare-detection.sh`:
//
//   chain   a chain of n dependent one-cycle adds (compute-bound; n = CHAIN_N, default
//           KERNELS_CHAIN_N = 100): 100 against 101 is a 1 % change;
//   sqrt    x = sqrt(x + 1), one dependent square root per iteration (latency-bound);
//   chase   a pointer chase through a random cycle over 64 MiB (memory-bound: nearly every
//           step misses every cache and the TLB); MEM_STEPS steps per iteration (default
//           KERNELS_MEM_STEPS = 100): 100 against 105 is a 5 % change.
//
// Defaults are compile-time macros so that two *builds* can differ (-DKERNELS_CHAIN_N=101);
// the environment variables override them for quick experiments. STARTUP_MS (default 0) makes
// the program sleep that long before serving, to stand for a program with a slow start-up.

#include "add_chain.hpp"
#include "vernier.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <thread>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#ifndef KERNELS_CHAIN_N
#define KERNELS_CHAIN_N 100
#endif
#ifndef KERNELS_MEM_STEPS
#define KERNELS_MEM_STEPS 100
#endif

namespace {

std::uint64_t env_or(const char* name, std::uint64_t dflt) {
    const char* s = std::getenv(name);
    return s ? std::strtoull(s, nullptr, 10) : dflt;
}


constexpr std::size_t CHASE_BYTES = 64u << 20;
constexpr std::size_t HUGE_PAGE = 2u << 20;

// Read at every iteration (the barrier's memory clobber) but not on any chain: each lambda's
// only state is its accumulator, which the barrier then keeps in a register.
std::uint64_t chain_n = KERNELS_CHAIN_N;
std::uint64_t mem_steps = KERNELS_MEM_STEPS;
std::uint32_t* next = nullptr;

// One random cycle through every slot (Sattolo's algorithm), so a chase visits all of them.
// The array is aligned to 2 MiB so that every process gets the same huge-page coverage.
std::uint32_t* make_cycle(std::size_t n) {
    auto* order = static_cast<std::uint32_t*>(std::aligned_alloc(HUGE_PAGE, n * 4));
    auto* out = static_cast<std::uint32_t*>(std::aligned_alloc(HUGE_PAGE, n * 4));
    if (!order || !out) std::abort();
#if defined(__linux__)
    // Huge pages where the system allows them on request: fewer TLB misses, and the same
    // physical contiguity in every process.
    madvise(out, n * 4, MADV_HUGEPAGE);
#endif
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::uint64_t s = 0x9E3779B97F4A7C15u;
    for (std::size_t i = n - 1; i > 0; --i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        std::swap(order[i], order[s % i]);
    }
    for (std::size_t i = 0; i < n; ++i) out[order[i]] = order[(i + 1) % n];
    std::free(order);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    chain_n = env_or("CHAIN_N", KERNELS_CHAIN_N);
    mem_steps = env_or("MEM_STEPS", KERNELS_MEM_STEPS);
    if (std::uint64_t ms = env_or("STARTUP_MS", 0)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    next = make_cycle(CHASE_BYTES / sizeof(std::uint32_t));

    vernier::bench("chain", [acc = std::uint64_t{0}]() mutable {
        acc = examples::add_chain(acc, chain_n);
        return acc;
    });
    vernier::bench("sqrt", [x = 2.0]() mutable {
        x = std::sqrt(x + 1.0);
        return x;
    });
    vernier::bench("chase", [p = std::uint64_t{0}]() mutable {
        for (std::uint64_t i = 0; i < mem_steps; ++i) p = next[p];
        return p;
    });
    return vernier::main(argc, argv);
}
