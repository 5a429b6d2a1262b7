// Threads and cache lines: each thread adding to its own counter on its own cache line,
// against all threads adding to one shared atomic, and against two counters written by two
// threads on one cache line (false sharing), at 1 and 2 threads; then more threads than CPUs,
// and a body that throws in one thread.
//
//   g++ -O2 -std=c++17 -pthread -Iinclude examples/cpp/sharing.cpp -o sharing
//   vernier run -- ./sharing
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "vernier.hpp"

struct alignas(64) Padded {
    std::atomic<std::uint64_t> n{0};
};

struct alignas(64) Pair {
    std::atomic<std::uint64_t> n[2];
};

int main(int argc, char** argv) {
    static Padded own[64];
    static std::atomic<std::uint64_t> shared{0};
    static Pair pair{};
    vernier::bench_threads("private", {1, 2}, [](int t) {
        return own[t].n.fetch_add(1, std::memory_order_relaxed);
    });
    vernier::bench_threads("shared", {1, 2}, [](int) {
        return shared.fetch_add(1, std::memory_order_relaxed);
    });
    vernier::bench_threads("false-shared", {1, 2}, [](int t) {
        return pair.n[t & 1].fetch_add(1, std::memory_order_relaxed);
    });
    const int cpus = static_cast<int>(std::thread::hardware_concurrency());
    vernier::bench_threads("oversubscribed", {cpus + 1}, [](int t) {
        return own[t % 64].n.fetch_add(1, std::memory_order_relaxed);
    });
    vernier::bench_threads("throws", {2}, [](int t) {
        if (t == 1) throw std::runtime_error("thread one gives up");
        return t;
    });
    return vernier::main(argc, argv);
}
