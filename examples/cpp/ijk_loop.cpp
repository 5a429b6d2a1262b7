// The loop of "Producing Wrong Data Without Doing Anything Obviously Wrong!" (Mytkowicz et
// al., 2009), as retold in a blog post (docs/experiments.md): three global counters
// incremented by `inc`, whose run time was seen to change with nothing but the size of the
// environment (which moves the stack, and with it the loop's locals, relative to the globals:
// 4 KiB aliasing) and with ASLR.
//
// - "ijk loop": the whole loop, 65536 steps of `i += inc; j += inc; k += inc`, per iteration.
//   The loop counter and `inc` are volatile locals and the counters volatile globals, so every
//   access goes to memory as in the unoptimised build of the paper: the stack addresses
//   matter, which is the point of the experiment.
// - "ijk step": one step of the loop, the harness's own loop standing in for `g`.
//
// `inc` is read at run time (environment variable INC, default 1) so it cannot be folded.
// `vernier run --processes N -- ./ijk_loop` runs the benchmark in several processes with
// different environment sizes and reports how much the result depends on the layout.

#include "vernier.hpp"

#include <cstdlib>

namespace {

volatile int i = 0, j = 0, k = 0;
int inc_from_env = 1;

}  // namespace

int main(int argc, char** argv) {
    if (const char* s = std::getenv("INC")) inc_from_env = std::atoi(s);

    vernier::bench("ijk loop", [] {
        volatile int inc = inc_from_env;
        volatile int g = 0;
        while (g < 65536) {
            i = i + inc;
            j = j + inc;
            k = k + inc;
            g = g + 1;
        }
    });

    vernier::bench("ijk step", [] {
        const int inc = inc_from_env;
        i = i + inc;
        j = j + inc;
        k = k + inc;
    });

    return vernier::main(argc, argv);
}
