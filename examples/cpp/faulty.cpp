// A worker that misbehaves on purpose, to test how the runner copes.
//
// - "ok": fast and well-behaved, but it prints to standard output on its first call (and the
//   program prints a banner at start-up): none of it may reach the protocol.
// - "segfault": raises SIGSEGV when its third batch (third `run` command) starts.
// - "hang": sleeps for ever as soon as it runs.
// - "throws": throws std::runtime_error("deliberate failure in 'throws'").

#include "vernier.hpp"

#include <csignal>
#include <cstdio>
#include <stdexcept>

#include <unistd.h>

int main(int argc, char** argv) {
    std::printf("faulty: banner on standard output\n");
    std::fflush(stdout);
    std::fprintf(stderr, "faulty: banner on standard error\n");

    int calls = 0;
    vernier::bench("ok", [&] {
        if (calls == 0) {
            std::printf("faulty: 'ok' runs for the first time\n");
            std::fflush(stdout);
        }
        return ++calls;
    });
    vernier::bench("segfault", [] {
        if (vernier::batch_number() >= 3) std::raise(SIGSEGV);
        return 0;
    });
    vernier::bench("hang", [] {
        for (;;) ::pause();
    });
    vernier::bench("throws", []() -> int { throw std::runtime_error("deliberate failure in 'throws'"); });
    return vernier::main(argc, argv);
}
