// add_chain(acc, n): a chain of n dependent one-cycle `add` instructions (x86-64 and aarch64
// inline assembly, the added value in a register; elsewhere the same chain in C++ behind the
// barrier), shared by chain.cpp and kernels.cpp. Eight adds per turn of an asm loop, then the
// remainder one at a time; the loop counter's own dec/jnz (subs/b.ne on aarch64) run beside
// the chain (on other ports), so they add no cycle to it.
#pragma once

#include "vernier.hpp"

#include <cstdint>

namespace examples {

#if defined(__x86_64__)
inline std::uint64_t add_chain(std::uint64_t acc, std::uint64_t n) {
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
#elif defined(__aarch64__)
inline std::uint64_t add_chain(std::uint64_t acc, std::uint64_t n) {
    std::uint64_t blocks = n / 8;
    std::uint64_t rest = n % 8;
    const std::uint64_t one = 1;
    if (blocks != 0) {
        asm volatile(
            "1:\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "subs %[blocks], %[blocks], #1\n\t"
            "b.ne 1b"
            : [acc] "+r"(acc), [blocks] "+r"(blocks)
            : [one] "r"(one)
            : "cc");
    }
    if (rest != 0) {
        asm volatile(
            "2:\n\t"
            "add %[acc], %[acc], %[one]\n\t"
            "subs %[rest], %[rest], #1\n\t"
            "b.ne 2b"
            : [acc] "+r"(acc), [rest] "+r"(rest)
            : [one] "r"(one)
            : "cc");
    }
    return acc;
}
#else
// Elsewhere: the same chain in C++, each step behind the barrier so it is not folded.
inline std::uint64_t add_chain(std::uint64_t acc, std::uint64_t n) {
    for (std::uint64_t s = 0; s < n; ++s) {
        acc += 1;
        vernier::do_not_optimize(acc);
    }
    return acc;
}
#endif

}  // namespace examples
