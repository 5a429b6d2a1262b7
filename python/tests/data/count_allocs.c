/* A small allocation-counting interposer for the tests: the C ABI the runner's interposer
 * exports (docs/protocol.md, memory=1), counting malloc/calloc/realloc/free. Built by the
 * tests with `cc -shared -fPIC` and preloaded with LD_PRELOAD. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>

struct vernier_alloc_counts { uint64_t allocs, bytes, frees, freed_bytes; };
static struct vernier_alloc_counts totals;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);

/* dlsym may itself call calloc before the real one is known: served from here. */
static char early[4096];
static size_t early_used;

static int resolving;

static void resolve(void) {
    if (real_malloc || resolving) return;
    resolving = 1;
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    resolving = 0;
}

static void count(size_t n) {
    __atomic_add_fetch(&totals.allocs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals.bytes, n, __ATOMIC_RELAXED);
}

static void uncount(void *p) {
    if (!p) return;
    __atomic_add_fetch(&totals.frees, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals.freed_bytes, malloc_usable_size(p), __ATOMIC_RELAXED);
}

void vernier_alloc_counts_read(struct vernier_alloc_counts *out) {
    out->allocs = __atomic_load_n(&totals.allocs, __ATOMIC_RELAXED);
    out->bytes = __atomic_load_n(&totals.bytes, __ATOMIC_RELAXED);
    out->frees = __atomic_load_n(&totals.frees, __ATOMIC_RELAXED);
    out->freed_bytes = __atomic_load_n(&totals.freed_bytes, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
    resolve();
    count(n);
    return real_malloc(n);
}

void *calloc(size_t k, size_t n) {
    resolve();
    if (!real_calloc) {
        void *p = early + early_used;
        early_used += (k * n + 15) & ~(size_t)15;
        return p;
    }
    count(k * n);
    return real_calloc(k, n);
}

void *realloc(void *p, size_t n) {
    resolve();
    if (p) uncount(p);
    count(n);
    return real_realloc(p, n);
}

void free(void *p) {
    if ((char *)p >= early && (char *)p < early + sizeof early) return;
    resolve();
    uncount(p);
    real_free(p);
}
