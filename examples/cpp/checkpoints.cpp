// Checkpoints around a program's phases (docs/experiments.md), timed one after the other.
//
//     VERNIER_CHECKPOINTS_JSON=phases.json ./checkpoints
//
// prints each phase's time, its share of the total, the CPU time, page faults and context
// switches of the process during it, and writes the same as JSON.

#include "vernier.hpp"

#include <cstring>
#include <vector>

int main() {
    const std::size_t n = 1 << 16;
    std::vector<char> one(1024);
    vernier::checkpoint("start");
    std::vector<std::vector<char>> many(n, std::vector<char>(1024));
    vernier::checkpoint("allocate 64 MiB");
    for (std::size_t i = 0; i < n; ++i) std::memset(one.data(), int(i), one.size());
    vernier::do_not_optimize(one);
    vernier::checkpoint("set one event");
    for (std::size_t i = 0; i < n; ++i) std::memset(many[i].data(), int(i), many[i].size());
    vernier::do_not_optimize(many);
    vernier::checkpoint("set different events");
    return vernier::checkpoint_summary() ? 0 : 1;
}
