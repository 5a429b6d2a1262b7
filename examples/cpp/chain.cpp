// A chain of n dependent one-cycle `add` instructions (x86-64 inline assembly): each add needs
// the previous one's result, so the chain takes n cycles at the core's clock, whatever the
// width of the machine. n is read at run time from the environment variable CHAIN_N (default
// 100).
//
// It is the reference workload for A/B comparisons: two builds or two runs with CHAIN_N=100
// and CHAIN_N=101 differ by exactly one cycle per iteration, a 1 % change that a comparison
// must detect, and two runs with the same CHAIN_N must come out as "no change".
//
//     CHAIN_N=100 vernier run -- ./chain
//     vernier compare "env CHAIN_N=100 ./chain" "env CHAIN_N=101 ./chain"

#include "vernier.hpp"

#include <cstdint>
#include <cstdlib>

namespace {

#if defined(__x86_64__)
// Eight adds per turn of an asm loop, then the remainder one at a time. The loop counter's
// own dec/jnz run beside the chain (on other ports), so they add no cycle to it.
std::uint64_t add_chain(std::uint64_t acc, std::uint64_t n) {
    std::uint64_t blocks = n / 8;
    std::uint64_t rest = n % 8;
    const std::uint64_t one = 1;
    if (blocks != 0) {
        asm volatile(
            "1:\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "add %[one], %[acc]\n\t"
            "dec %[blocks]\n\t"
            "jnz 1b"
            : [acc] "+r"(acc), [blocks] "+r"(blocks)
            : [one] "r"(one)
            : "cc");
    }
    if (rest != 0) {
        asm volatile(
            "2:\n\t"
            "add %[one], %[acc]\n\t"
            "dec %[rest]\n\t"
            "jnz 2b"
            : [acc] "+r"(acc), [rest] "+r"(rest)
            : [one] "r"(one)
            : "cc");
    }
    return acc;
}
#else
// Elsewhere: the same chain in C++, each step behind the barrier so it is not folded.
std::uint64_t add_chain(std::uint64_t acc, std::uint64_t n) {
    for (std::uint64_t s = 0; s < n; ++s) {
        acc += 1;
        vernier::do_not_optimize(acc);
    }
    return acc;
}
#endif

std::uint64_t chain_n = 100;

}  // namespace

int main(int argc, char** argv) {
    if (const char* s = std::getenv("CHAIN_N")) chain_n = std::strtoull(s, nullptr, 10);
    // The accumulator is the lambda's only state (8 bytes), so the barrier keeps it in a
    // register from one iteration to the next: the chain runs on across iterations instead
    // of restarting from a loaded value, which would let the out-of-order core overlap
    // successive short chains. chain_n is reloaded on each iteration (the barrier's memory
    // clobber) and is not on the chain.
    vernier::bench("chain", [acc = std::uint64_t{0}]() mutable {
        acc = add_chain(acc, chain_n);
        return acc;
    });
    return vernier::main(argc, argv);
}
