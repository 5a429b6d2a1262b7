// One page fault per iteration: each iteration writes one byte into a page it has never
// touched, so the kernel has to fault a fresh zero page in. The runner's counters show it as
// `page-faults_per_iter` ≈ 1, and the time per iteration is what a minor fault costs here.
//
//     vernier run -- ./pagefault
//     vernier run --counters page-faults,task-clock --json out.json -- ./pagefault
//
// The pages come from a ring of private anonymous memory. `bench_setup` hands each iteration
// its page before the clock starts, after giving the page back to the kernel with
// MADV_DONTNEED (the next write faults a zero page in again); the ring is larger than any
// sample's iteration count, so every page of a sample is distinct. The resident memory stays
// bounded by the ring (64 MiB), and nothing but the write runs while the clock runs.
// Transparent huge pages are turned off for the ring: one fault would otherwise map 2 MiB.

#include "vernier.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include <sys/mman.h>
#include <unistd.h>

namespace {

constexpr std::size_t kRingPages = 16384;

struct Ring {
    unsigned char* base = nullptr;
    std::size_t page = 4096;
    std::size_t next = 0;

    Ring() {
        const long p = sysconf(_SC_PAGESIZE);
        if (p > 0) page = static_cast<std::size_t>(p);
        void* m = mmap(nullptr, kRingPages * page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            std::perror("pagefault: mmap");
            std::exit(1);
        }
        base = static_cast<unsigned char*>(m);
#if defined(MADV_NOHUGEPAGE)
        madvise(m, kRingPages * page, MADV_NOHUGEPAGE);
#endif
    }

    /// The next page of the ring, unmapped from the process (its next access faults).
    unsigned char* fresh_page() {
        unsigned char* p = base + next * page;
        next = next + 1 == kRingPages ? 0 : next + 1;
        madvise(p, page, MADV_DONTNEED);
        return p;
    }
};

}  // namespace

int main(int argc, char** argv) {
    static Ring ring;
    vernier::bench_setup(
        "fresh page", [] { return ring.fresh_page(); },
        [](unsigned char* p) {
            *p = 1;
            vernier::clobber_memory();
        });
    return vernier::main(argc, argv);
}
