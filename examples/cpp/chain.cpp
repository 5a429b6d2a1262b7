// A chain of n dependent one-cycle `add` instructions (x86-64 and aarch64 inline assembly,
// add_chain.hpp): each add needs the previous one's result, so the chain takes n cycles at the
// core's clock, whatever the width of the machine. n is read at run time from the environment
// variable CHAIN_N (default 100).
//
// It is the reference workload for A/B comparisons: two builds or two runs with CHAIN_N=100
// and CHAIN_N=101 differ by exactly one cycle per iteration, a 1 % change that a comparison
// must detect, and two runs with the same CHAIN_N must come out as "no change".
//
//     CHAIN_N=100 vernier run -- ./chain
//     vernier compare "env CHAIN_N=100 ./chain" "env CHAIN_N=101 ./chain"

#include "add_chain.hpp"
#include "vernier.hpp"

#include <cstdint>
#include <cstdlib>

namespace {

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
        acc = examples::add_chain(acc, chain_n);
        return acc;
    });
    return vernier::main(argc, argv);
}
