// vernier.hpp: precision micro-benchmarks in C++17, one header.
//
//     #include "vernier.hpp"
//     #include <cmath>
//
//     int main(int argc, char** argv) {
//         double x = 4.2;
//         vernier::bench("sqrt", [&] { return std::sqrt(x); });  // lambda and result pass the barrier
//         return vernier::main(argc, argv);
//     }
//
// Run on its own, the program runs itself through the `vernier` runner when one is on the
// PATH (`vernier run -- ./prog`); without one it prints a quick estimate for each benchmark
// (the median of a few samples, no interval). Launched by the runner, it is a *worker*: it
// answers the line protocol of docs/protocol.md on the file descriptors named by
// `VERNIER_FDS` and leaves every decision (iterations, warm-up, when to stop) and all the
// statistics to the runner.
//
// Layout of this file:
//   1. version macros
//   2. the public API: do_not_optimize, clobber_memory, bench, bench_setup, bench_latency,
//      main, batch_number, checkpoint, checkpoint_summary
//   3. inline templates for the hot loop (the only code that runs while the clock runs)
//   4. the implementation: timer, performance counters, registry, worker protocol, and
//      the program run by hand (handed to the runner, or a quick estimate)
//
// Requirements: C++17, GCC or Clang (inline assembly); Linux, macOS or Windows (MinGW-w64 or
// Clang). Nothing beyond the standard
// library and system calls. Every function is `inline`: include the header from as many
// translation units as you like.
//
// SPDX-License-Identifier: MIT OR Apache-2.0

#ifndef VERNIER_HPP_INCLUDED
#define VERNIER_HPP_INCLUDED

// ---------------------------------------------------------------------------------------------
// 1. Version
// ---------------------------------------------------------------------------------------------

#define VERNIER_VERSION_MAJOR 0
#define VERNIER_VERSION_MINOR 1
#define VERNIER_VERSION_PATCH 0
#define VERNIER_VERSION "0.1.0"
/// Version of the worker protocol this header speaks (docs/protocol.md).
#define VERNIER_PROTOCOL_VERSION 1

#define VERNIER_STRINGIFY_(x) #x
#define VERNIER_STRINGIFY(x) VERNIER_STRINGIFY_(x)

#if !defined(__GNUC__)
#error "vernier.hpp needs GCC-style inline assembly (GCC or Clang)"
#endif
#if __cplusplus < 201703L
#error "vernier.hpp needs C++17 (-std=c++17)"
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#define VERNIER_ALWAYS_INLINE inline __attribute__((always_inline))
#if defined(__has_attribute)
#if __has_attribute(noipa)
// noipa: callers know nothing about the loop function, so no constant from the call site
// (iteration count, benchmark state) is propagated into it and no clone is specialised.
#define VERNIER_LOOP_ATTRIBUTES __attribute__((noinline, noipa))
#endif
#endif
#ifndef VERNIER_LOOP_ATTRIBUTES
#define VERNIER_LOOP_ATTRIBUTES __attribute__((noinline))
#endif

// ---------------------------------------------------------------------------------------------
// 2. Public API
// ---------------------------------------------------------------------------------------------

namespace vernier {

namespace detail {
// Which register class holds a value of type T in an asm operand: 'x' (SSE register) for
// float and double on x86-64, 'w' (FP/SIMD register) on AArch64, 'r' (general register) for
// other trivially copyable values of 1, 2, 4 or 8 bytes, none (memory) for everything else.
template <class T>
constexpr bool in_fp_register =
#if defined(__x86_64__) || defined(__aarch64__)
    std::is_floating_point<T>::value && sizeof(T) <= 8;
#else
    false;
#endif
template <class T>
constexpr bool in_gp_register = !in_fp_register<T> && std::is_trivially_copyable<T>::value &&
                                !std::is_empty<T>::value &&
                                (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 ||
                                 sizeof(T) == 8);
/// The unsigned integer of `N` bytes (1, 2, 4 or 8).
template <std::size_t N>
using bits_t = std::conditional_t<
    N == 1, std::uint8_t,
    std::conditional_t<N == 2, std::uint16_t,
                       std::conditional_t<N == 4, std::uint32_t, std::uint64_t>>>;
}  // namespace detail

/// The optimisation barrier. As far as the compiler knows, `value` is read and then
/// overwritten with an unknown value by code it cannot see, and any memory may have been read
/// or written. Use it on a benchmark's inputs (so they cannot be constant-folded or hoisted
/// out of the loop) and on its outputs (so the computation cannot be removed).
///
/// A register-sized value stays in its register (no store/reload is added to the measured
/// code); a larger object, or one that is not trivially copyable, is forced to memory.
///
/// Every type is accepted, including classes with `const` members (a lambda capturing a
/// `const` variable by copy), which cannot be named as an asm output: a register-sized class
/// passes through the register as its bytes, and a larger object is hidden by handing its
/// address to the asm, which may read and write any memory.
template <class T>
VERNIER_ALWAYS_INLINE void do_not_optimize(T& value) {
    if constexpr (detail::in_fp_register<T>) {
#if defined(__x86_64__)
        asm volatile("" : "+x"(value) : : "memory");
#elif defined(__aarch64__)
        asm volatile("" : "+w"(value) : : "memory");
#endif
    } else if constexpr (detail::in_gp_register<T> && std::is_scalar<T>::value) {
        asm volatile("" : "+r"(value) : : "memory");
    } else if constexpr (detail::in_gp_register<T>) {
        detail::bits_t<sizeof(T)> bits;
        std::memcpy(&bits, static_cast<const void*>(std::addressof(value)), sizeof(T));
        asm volatile("" : "+r"(bits) : : "memory");
        std::memcpy(static_cast<void*>(std::addressof(value)), &bits, sizeof(T));
    } else if constexpr (std::is_empty<T>::value) {
        asm volatile("" : : : "memory");  // no state to hide
    } else {
        asm volatile("" : : "r"(std::addressof(value)) : "memory");
    }
}

/// The barrier on a value the compiler must consider read (but not modified).
template <class T>
VERNIER_ALWAYS_INLINE void do_not_optimize(const T& value) {
    if constexpr (detail::in_fp_register<T>) {
#if defined(__x86_64__)
        asm volatile("" : : "x"(value) : "memory");
#elif defined(__aarch64__)
        asm volatile("" : : "w"(value) : "memory");
#endif
    } else if constexpr (detail::in_gp_register<T>) {
        asm volatile("" : : "r"(value) : "memory");
    } else if constexpr (std::is_empty<T>::value) {
        asm volatile("" : : : "memory");
    } else {
        asm volatile("" : : "m"(value) : "memory");
    }
}

/// The barrier on a temporary: `do_not_optimize(f(x))`.
template <class T>
VERNIER_ALWAYS_INLINE std::enable_if_t<!std::is_lvalue_reference<T>::value> do_not_optimize(
    T&& value) {
    do_not_optimize(static_cast<T&>(value));
}

/// Tell the compiler that any memory may have been read and written here: pending stores
/// must be done and values cached in registers must be reloaded. No instruction is emitted.
VERNIER_ALWAYS_INLINE void clobber_memory() { asm volatile("" : : : "memory"); }

/// Register a benchmark: `routine` is called once per iteration; the routine object and its
/// result (unless it returns void) pass through do_not_optimize on every iteration. It may
/// throw: the benchmark is then reported as failed. Register before calling vernier::main.
template <class Routine>
void bench(std::string name, Routine&& routine);

/// Register a benchmark whose iterations each need fresh input prepared outside the timed
/// region: before each sample, `setup()` is called once per iteration and its results are
/// stored in a buffer; then the clock starts and `routine(input)` runs on each stored input
/// (`Input&`, which it may modify or consume). The inputs are destroyed after the clock stops.
template <class Setup, class Routine>
void bench_setup(std::string name, Setup&& setup, Routine&& routine);

/// Register the latency of `f`: each iteration computes `x = f(x)` from `x = init`, the value
/// passing do_not_optimize (a scalar stays in its register) and carried from one iteration
/// (and sample) to the next, so the iterations form one dependent chain and the time per
/// iteration is `f`'s latency (`bench` gives its throughput: independent iterations that the
/// core overlaps). `T` must be copyable; `f` takes a `T` and returns one.
template <class T, class F>
void bench_latency(std::string name, T init, F&& f);

/// Register a threaded benchmark: `body(thread)` is run by each of T threads (`thread` in
/// 0..T-1), released together for each sample, for each T of `threads` (empty: the powers of
/// two below the CPUs this process may use, and that count). Each T is its own benchmark,
/// named `NAME/threads:T`. The threads are started once and kept; a body that throws in any
/// thread fails that benchmark, every thread joined (docs/threads.md).
template <class Body>
void bench_threads(std::string name, std::vector<int> threads, Body&& body);

/// Register `make(arg)`'s routine once per argument, each benchmark named `NAME/ARG` as Google
/// Benchmark names them (`sort/1024`): `make` is called at registration with each argument and
/// returns the routine for it (build its input there: it is not timed), which is then measured
/// as `bench` measures one. Numeric arguments give the complexity fit under the table
/// (docs/parameters.md); `range(lo, hi, mult)` and `dense_range(lo, hi, step)` make Google
/// Benchmark's argument lists.
template <class Make>
void bench_args(std::string name, const std::vector<std::int64_t>& args, Make&& make);

/// Google Benchmark's `Range(lo, hi)` with `RangeMultiplier(mult)`: `lo`, the powers of
/// `mult` strictly between `lo` and `hi`, and `hi`.
inline std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t mult = 8);

/// Google Benchmark's `DenseRange(lo, hi, step)`: `lo`, `lo + step`, … up to `hi`.
inline std::vector<std::int64_t> dense_range(std::int64_t lo, std::int64_t hi,
                                             std::int64_t step = 1);

/// The bytes (or items) one iteration of the benchmarks the previous `bench…` call registered
/// processes: the table, the result file, the exports and `compare` then give its rate too.
inline void bytes_per_iter(std::uint64_t bytes);
inline void items_per_iter(std::uint64_t items);

/// A complexity class: Google Benchmark's `o1`, `oLogN`, `oN`, `oNLogN`, `oNSquared`,
/// `oNCubed`.
enum class Complexity { Constant, Log, Linear, NLogN, Quadratic, Cubic };

/// Fit the complexity of the benchmarks the previous `bench…` call registered (a family
/// `NAME/N`, as `bench_args` names them) in `c` rather than in the usual class that fits best
/// (Google Benchmark's `Complexity(benchmark::oNLogN)`). The line under the table still names
/// the best usual class when another fits better.
inline void complexity(Complexity c);

/// Fit it as `c · f(N)` with your own function `f` (`double f(double n)`), named `name` for a
/// reader (Google Benchmark's `Complexity(lambda)`). `f` is called here, once per benchmark,
/// with the N its name ends in; a benchmark whose name has no N, or where `f` is not finite
/// and positive or zero, is left out of the fit, said on standard error.
template <class F>
void complexity_fn(const std::string& name, F&& f);

/// Close the whole-program phase that began at the previous checkpoint and call it `name`
/// (the first call only marks the start; `docs/experiments.md`). Records the time (the TSC
/// where it is invariant) and the process's kernel counters (getrusage: CPU time, page faults,
/// context switches) since the previous checkpoint.
inline void checkpoint(const char* name);

/// Print the phases recorded by checkpoint() (name, time, share of the total, counters) on
/// standard output; with `VERNIER_CHECKPOINTS_JSON=FILE` in the environment, also write them
/// to FILE as JSON. Returns false (and says why on standard error) when FILE cannot be written.
inline bool checkpoint_summary();

/// Run the registered benchmarks. With `VERNIER_FDS=R,W` in the environment (set by the
/// `vernier` runner) serve the worker protocol on those descriptors; otherwise run through the
/// runner, or without one print a quick estimate per benchmark (arguments: `[FILTER...]
/// [--time S] [--list]`, `--help`). Returns the exit status.
inline int main(int argc, char** argv);

/// 1-based number of the batch of samples now being measured for the running benchmark
/// (one per `run` command in worker mode, one per calibration step or round of samples in a
/// quick estimate); 0 outside a run. Meant for tests and for benchmarks that must change behaviour between batches.
inline std::uint64_t batch_number();

}  // namespace vernier

// ---------------------------------------------------------------------------------------------
// 3. The hot loop
//
// `vernier_measured_loop` is the only code that runs between the two clock reads. It is
// `noinline` so it can be found in a disassembly (`objdump -d --no-show-raw-insn -C prog | grep
// -A30 vernier_measured_loop`) and so callgrind can restrict collection to it
// (`valgrind --tool=callgrind --toggle-collect='*vernier_measured_loop*' ./prog`).
// ---------------------------------------------------------------------------------------------

namespace vernier {
namespace detail {

#if defined(__x86_64__)
/// The time-stamp counter. `lfence; rdtsc` at the start: earlier instructions have completed
/// and later ones have not started. `rdtscp; lfence` at the stop: the measured code has
/// completed and later instructions wait. The "memory" clobbers also stop the compiler from
/// moving loads and stores across the reads.
struct TscClock {
    static VERNIER_ALWAYS_INLINE std::uint64_t start() {
        std::uint32_t lo, hi;
        asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
        return (static_cast<std::uint64_t>(hi) << 32) | lo;
    }
    static VERNIER_ALWAYS_INLINE std::uint64_t stop() {
        std::uint32_t lo, hi, aux;
        asm volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
        (void)aux;
        return (static_cast<std::uint64_t>(hi) << 32) | lo;
    }
};
/// The counter this architecture reads directly.
using CounterClock = TscClock;
#define VERNIER_COUNTER_CLOCK 1
#elif defined(__aarch64__)
/// The generic timer's virtual count. `isb; mrs; isb` at the start: no earlier instruction
/// runs past the read (the register may otherwise be read early, out of order), and the
/// measured code does not start before it. `isb; mrs` at the stop: the measured code has
/// completed (nothing after it is timed, and the two reads differ in a disassembly, where
/// `vernier asm` tells them apart). The "memory" clobbers also stop the compiler from moving
/// loads and stores across the reads.
struct CntvctClock {
    static VERNIER_ALWAYS_INLINE std::uint64_t start() {
        std::uint64_t t;
        asm volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t) : : "memory");
        return t;
    }
    static VERNIER_ALWAYS_INLINE std::uint64_t stop() {
        std::uint64_t t;
        asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(t) : : "memory");
        return t;
    }
};
/// The counter this architecture reads directly.
using CounterClock = CntvctClock;
#define VERNIER_COUNTER_CLOCK 1
#endif

/// CLOCK_MONOTONIC in nanoseconds (defined in the implementation section).
inline std::uint64_t monotonic_now_ns();

struct MonotonicClock {
    static VERNIER_ALWAYS_INLINE std::uint64_t start() {
        clobber_memory();
        const std::uint64_t t = monotonic_now_ns();
        clobber_memory();
        return t;
    }
    static VERNIER_ALWAYS_INLINE std::uint64_t stop() { return start(); }
};

/// One iteration: the routine object and its result pass the barrier.
template <class Routine>
VERNIER_ALWAYS_INLINE void iterate(Routine& routine) {
    do_not_optimize(routine);
    if constexpr (std::is_void<decltype(routine())>::value) {
        routine();
        clobber_memory();
    } else {
        decltype(auto) result = routine();
        do_not_optimize(result);
    }
}

/// The performance counters read around each sample (docs/counters.md): at most two groups
/// (software, hardware), each read with one `read(2)` on each side of the timed region,
/// outside the clock:
///
///     meter_start: read(software) read(hardware)   clock start … loop … clock stop
///     meter_stop:  read(hardware) read(software)
///
/// A group whose leader is -1 is not open and not read; with no group open nothing is read
/// and the timed region is the same. Each read stores the whole group (`words` u64) into the
/// batch's buffer: sample s at `[2s × words]` (start) and `[(2s + 1) × words]` (stop). The
/// deltas are computed after the batch.
struct Meter {
    int sw_fd = -1;
    int hw_fd = -1;
    std::size_t sw_words = 0;
    std::size_t hw_words = 0;
    std::uint64_t* sw = nullptr;
    std::uint64_t* hw = nullptr;
};

/// One `read(2)` of a counter group into `dst` (`words` u64); a failed read sets `dst[0]`
/// (the event count) to 0, which the deltas take as "not counted". Defined in section 4.
inline void read_counter_group(int fd, std::uint64_t* dst, std::size_t words);

VERNIER_ALWAYS_INLINE void meter_start(const Meter& m, std::size_t s) {
    if (m.sw_fd >= 0) read_counter_group(m.sw_fd, m.sw + 2 * s * m.sw_words, m.sw_words);
    if (m.hw_fd >= 0) read_counter_group(m.hw_fd, m.hw + 2 * s * m.hw_words, m.hw_words);
}

VERNIER_ALWAYS_INLINE void meter_stop(const Meter& m, std::size_t s) {
    if (m.hw_fd >= 0) read_counter_group(m.hw_fd, m.hw + (2 * s + 1) * m.hw_words, m.hw_words);
    if (m.sw_fd >= 0) read_counter_group(m.sw_fd, m.sw + (2 * s + 1) * m.sw_words, m.sw_words);
}

/// `samples` back-to-back samples of `iters` iterations; raw clock ticks into `ticks`, the
/// counters (if any) read around each sample's clock reads.
template <class Clock, class Routine>
VERNIER_ALWAYS_INLINE void sample_loop(Routine& routine, std::uint64_t iters,
                                       std::size_t samples, std::uint64_t* ticks,
                                       const Meter& meter) {
    for (std::size_t s = 0; s < samples; ++s) {
        meter_start(meter, s);
        const std::uint64_t t0 = Clock::start();
        for (std::uint64_t i = iters; i != 0; --i) {
            iterate(routine);
        }
        const std::uint64_t t1 = Clock::stop();
        meter_stop(meter, s);
        ticks[s] = t1 - t0;
    }
}

/// The measured loop: a batch of samples of one benchmark.
template <class Clock, class Routine>
VERNIER_LOOP_ATTRIBUTES void vernier_measured_loop(Routine& routine, std::uint64_t iters,
                                                   std::size_t samples, std::uint64_t* ticks,
                                                   const Meter& meter) {
    // A trivially copyable routine (the usual lambda capturing by reference) is copied into
    // a local for the batch: the barrier then keeps it in a register instead of loading it
    // from and storing it back to the registry's heap memory on every iteration. Its state
    // is copied back after the batch, so a `mutable` lambda goes on from where it was.
    if constexpr (std::is_trivially_copyable<Routine>::value &&
                  std::is_copy_constructible<Routine>::value) {
        Routine local(routine);
        sample_loop<Clock>(local, iters, samples, ticks, meter);
        std::memcpy(static_cast<void*>(std::addressof(routine)), std::addressof(local),
                    sizeof(Routine));
    } else {
        sample_loop<Clock>(routine, iters, samples, ticks, meter);
    }
}

/// One sample (sample `s` of its batch) of `iters` iterations of `routine(inputs[i])`;
/// returns raw clock ticks.
template <class Clock, class Routine, class Input>
VERNIER_LOOP_ATTRIBUTES std::uint64_t vernier_measured_loop_inputs(Routine& routine,
                                                                   Input* inputs,
                                                                   std::uint64_t iters,
                                                                   const Meter& meter,
                                                                   std::size_t s) {
    meter_start(meter, s);
    const std::uint64_t t0 = Clock::start();
    for (std::uint64_t i = 0; i != iters; ++i) {
        do_not_optimize(routine);
        if constexpr (std::is_void<decltype(routine(inputs[i]))>::value) {
            routine(inputs[i]);
            clobber_memory();
        } else {
            decltype(auto) result = routine(inputs[i]);
            do_not_optimize(result);
        }
    }
    const std::uint64_t t1 = Clock::stop();
    meter_stop(meter, s);
    return t1 - t0;
}

/// Which clock measures: the counter read directly (`tsc` on x86-64, `cntvct` on aarch64) or
/// CLOCK_MONOTONIC.
enum class ClockKind { tsc, monotonic, cntvct };

#if defined(__x86_64__)
constexpr ClockKind kCounterKind = ClockKind::tsc;
#elif defined(__aarch64__)
constexpr ClockKind kCounterKind = ClockKind::cntvct;
#endif

namespace os {
/// The system's monotonic clock as `hello` names it (`monotonic`, `qpc`, `mach`).
inline const char* system_clock_name();
}  // namespace os

/// The clock's name in the protocol and in results.
inline const char* clock_name(ClockKind k) {
    switch (k) {
        case ClockKind::tsc: return "tsc";
        case ClockKind::cntvct: return "cntvct";
        case ClockKind::monotonic: break;
    }
    return os::system_clock_name();
}

/// The measured loop of bench_latency: `x = f(x)` on every iteration, the value through the
/// barrier; `x` is kept for the next batch.
template <class Clock, class F, class T>
VERNIER_LOOP_ATTRIBUTES void vernier_measured_loop_latency(F& f, T& x, std::uint64_t iters,
                                                           std::size_t samples,
                                                           std::uint64_t* ticks,
                                                           const Meter& meter) {
    T v = x;
    for (std::size_t s = 0; s < samples; ++s) {
        meter_start(meter, s);
        const std::uint64_t t0 = Clock::start();
        for (std::uint64_t i = iters; i != 0; --i) {
            v = f(v);
            do_not_optimize(v);
        }
        const std::uint64_t t1 = Clock::stop();
        meter_stop(meter, s);
        ticks[s] = t1 - t0;
    }
    x = v;
}

/// A function's address as a number (`vernier asm` reads it through the `loops` command).
template <class Fn>
std::uintptr_t fn_addr(Fn* f) {
    return reinterpret_cast<std::uintptr_t>(f);
}

/// A count as a size (both are 64-bit on the Linux targets this header supports).
VERNIER_ALWAYS_INLINE std::size_t as_size(std::uint64_t n) { return n; }

/// Dispatch a batch to the loop instantiated for the clock in use.
template <class Routine>
void run_batch(Routine& routine, ClockKind clock, std::uint64_t iters, std::size_t samples,
               std::uint64_t* ticks, const Meter& meter) {
#if defined(VERNIER_COUNTER_CLOCK)
    if (clock == kCounterKind) {
        vernier_measured_loop<CounterClock>(routine, iters, samples, ticks, meter);
        return;
    }
#endif
    (void)clock;
    vernier_measured_loop<MonotonicClock>(routine, iters, samples, ticks, meter);
}

/// Type-erased benchmark: `run` measures `samples` samples of `iters` iterations into
/// `ticks` (raw clock ticks), reading `meter`'s counters around each. It may throw whatever
/// the benchmark throws.
using RunFn = void (*)(void* state, ClockKind clock, std::uint64_t iters, std::size_t samples,
                       std::uint64_t* ticks, const Meter& meter);

/// A threaded benchmark's per-thread measured loop, type-erased: `iters` calls of the body as
/// thread `thread`, then that thread's clock reading (raw ticks).
using ThreadLoopFn = std::uint64_t (*)(void* body, int thread, std::uint64_t iters,
                                       ClockKind clock);

/// The per-thread measured loop: `iters` calls of `body(thread)`, the body and its result
/// through the barrier, then this thread's clock reading. A trivially copyable body (a lambda
/// capturing by reference) is copied into the thread first, so the barrier on it never
/// writes to an object the other threads read.
template <class Clock, class Body>
VERNIER_LOOP_ATTRIBUTES std::uint64_t vernier_measured_loop_threads(Body& shared, int thread,
                                                                    std::uint64_t iters) {
    auto one = [&](auto& body) {
        for (std::uint64_t i = iters; i != 0; --i) {
            int t = thread;
            do_not_optimize(t);
            if constexpr (std::is_void<decltype(body(t))>::value) {
                body(t);
                clobber_memory();
            } else {
                decltype(auto) result = body(t);
                do_not_optimize(result);
            }
        }
    };
    if constexpr (std::is_trivially_copyable<Body>::value &&
                  std::is_copy_constructible<Body>::value) {
        Body local(shared);
        do_not_optimize(local);
        one(local);
    } else {
        one(shared);
    }
    return Clock::stop();
}

template <class Body>
std::uint64_t thread_loop(void* body, int thread, std::uint64_t iters, ClockKind clock) {
    Body& b = *static_cast<Body*>(body);
#if defined(VERNIER_COUNTER_CLOCK)
    if (clock == kCounterKind) return vernier_measured_loop_threads<CounterClock>(b, thread, iters);
#endif
    (void)clock;
    return vernier_measured_loop_threads<MonotonicClock>(b, thread, iters);
}

struct ThreadPool;

/// One threaded benchmark, shared by its thread counts: the body and the pool (sized for
/// the largest count, started on the first sample).
struct ThreadedBench {
    std::shared_ptr<void> body;
    ThreadLoopFn loop = nullptr;
    int size = 1;
    std::shared_ptr<ThreadPool> pool;
};

/// One thread count of a threaded benchmark and its threads' figures in the last batch, one
/// value per sample s and thread k at `s * threads + k`: `ticks`, the time from the release
/// to the thread's finish; `cpu_ns`, its time on a CPU and `wait_ns`, its run-queue wait
/// (runnable, waiting for a CPU; meaningful only with `waits_known`) over its window, from its
/// clock readings before the release to those after its finish (docs/threads.md).
struct ThreadedEntry {
    std::shared_ptr<ThreadedBench> bench;
    int threads = 1;
    std::vector<std::uint64_t> ticks, cpu_ns, wait_ns;
    bool waits_known = true;
    /// The batch (`current_batch()`) the figures belong to: a new batch starts them afresh,
    /// while one measured a sample per call (cold caches, allocation counts) appends.
    std::uint64_t batch = 0;
};

/// The RunFn of a threaded benchmark (section 4).
inline void run_threaded(void* state, ClockKind clock, std::uint64_t iters,
                         std::size_t samples, std::uint64_t* ticks, const Meter& meter);

/// The default thread counts (section 4).
inline std::vector<int> default_thread_counts();

struct Entry {
    std::string name;
    std::shared_ptr<void> state;
    RunFn run;
    /// A threaded benchmark's thread count (0: not threaded); its state is a ThreadedEntry.
    int threads = 0;
    /// Addresses of the measured-loop function instantiated for this benchmark, for each clock
    /// (the `loops` command, docs/asm.md); 0 when unknown.
    std::uintptr_t loop_counter = 0;
    std::uintptr_t loop_monotonic = 0;
    /// Declared allocation-free (`bench_alloc_free`): listed with `alloc_free=1`.
    bool alloc_free = false;
    /// The work one iteration does (`bytes_per_iter`, `items_per_iter`): listed with
    /// `bytes=N` or `items=N` (0: none declared).
    std::uint64_t bytes = 0;
    std::uint64_t items = 0;
    /// How its complexity is fitted: the `list` line's options (` complexity=NlgN`,
    /// ` f=… function=…`, ` family=… n=…`), each after a space; empty: from its name.
    std::string fit{};
};

/// Record in `e` the addresses of `loop<Clock, ARGS...>` for each clock.
#if defined(VERNIER_COUNTER_CLOCK)
#define VERNIER_SET_LOOP_ADDRS(e, loop, ...)                                          \
    ((e).loop_counter =                                                                \
         ::vernier::detail::fn_addr(&loop<::vernier::detail::CounterClock, __VA_ARGS__>), \
     (e).loop_monotonic =                                                              \
         ::vernier::detail::fn_addr(&loop<::vernier::detail::MonotonicClock, __VA_ARGS__>))
#else
#define VERNIER_SET_LOOP_ADDRS(e, loop, ...) \
    ((e).loop_monotonic =                      \
         ::vernier::detail::fn_addr(&loop<::vernier::detail::MonotonicClock, __VA_ARGS__>))
#endif

template <class F, class T>
struct LatencyState {
    F f;
    T x;
};

template <class State>
void run_latency(void* state, ClockKind clock, std::uint64_t iters, std::size_t samples,
                 std::uint64_t* ticks, const Meter& meter) {
    auto& st = *static_cast<State*>(state);
#if defined(VERNIER_COUNTER_CLOCK)
    if (clock == kCounterKind) {
        vernier_measured_loop_latency<CounterClock>(st.f, st.x, iters, samples, ticks, meter);
        return;
    }
#endif
    (void)clock;
    vernier_measured_loop_latency<MonotonicClock>(st.f, st.x, iters, samples, ticks, meter);
}

inline std::vector<Entry>& registry();
/// Percent-encode a name for a protocol line (section 4).
inline std::string encode_name(const std::string& name);
/// The first entry the last registering call added (`bytes_per_iter` applies from it).
inline std::size_t& last_call();

template <class Routine>
void run_plain(void* state, ClockKind clock, std::uint64_t iters, std::size_t samples,
               std::uint64_t* ticks, const Meter& meter) {
    run_batch(*static_cast<Routine*>(state), clock, iters, samples, ticks, meter);
}

template <class Setup, class Routine>
struct SetupState {
    using Input = std::decay_t<decltype(std::declval<Setup&>()())>;
    Setup setup;
    Routine routine;
    std::vector<Input> inputs;

    template <class Clock>
    void run(std::uint64_t iters, std::size_t samples, std::uint64_t* ticks, const Meter& meter) {
        for (std::size_t s = 0; s < samples; ++s) {
            inputs.clear();
            inputs.reserve(as_size(iters));
            for (std::uint64_t i = 0; i != iters; ++i) {
                inputs.emplace_back(setup());
            }
            ticks[s] =
                vernier_measured_loop_inputs<Clock>(routine, inputs.data(), iters, meter, s);
            inputs.clear();
        }
    }
};

template <class State>
void run_with_setup(void* state, ClockKind clock, std::uint64_t iters, std::size_t samples,
                    std::uint64_t* ticks, const Meter& meter) {
    auto& st = *static_cast<State*>(state);
#if defined(VERNIER_COUNTER_CLOCK)
    if (clock == kCounterKind) {
        st.template run<CounterClock>(iters, samples, ticks, meter);
        return;
    }
#endif
    (void)clock;
    st.template run<MonotonicClock>(iters, samples, ticks, meter);
}

}  // namespace detail

template <class Routine>
void bench(std::string name, Routine&& routine) {
    detail::last_call() = detail::registry().size();
    using R = std::decay_t<Routine>;
    static_assert(std::is_invocable<R&>::value,
                  "vernier::bench: the routine must be callable with no argument");
    auto state = std::make_shared<R>(std::forward<Routine>(routine));
    detail::registry().push_back(
        detail::Entry{std::move(name), std::move(state), &detail::run_plain<R>});
    VERNIER_SET_LOOP_ADDRS(detail::registry().back(), detail::vernier_measured_loop, R);
}

/// `bench`, declared allocation-free: a run under `vernier run` fails, naming the benchmark,
/// when its iterations allocate (docs/memory.md).
template <class Routine>
void bench_alloc_free(std::string name, Routine&& routine) {
    bench(std::move(name), std::forward<Routine>(routine));
    detail::registry().back().alloc_free = true;
}

template <class Setup, class Routine>
void bench_setup(std::string name, Setup&& setup, Routine&& routine) {
    detail::last_call() = detail::registry().size();
    using S = std::decay_t<Setup>;
    using R = std::decay_t<Routine>;
    static_assert(std::is_invocable<S&>::value,
                  "vernier::bench_setup: setup must be callable with no argument");
    using State = detail::SetupState<S, R>;
    static_assert(std::is_invocable<R&, typename State::Input&>::value,
                  "vernier::bench_setup: the routine must accept the setup's result (Input&)");
    auto state = std::shared_ptr<State>(
        new State{std::forward<Setup>(setup), std::forward<Routine>(routine), {}});
    detail::registry().push_back(
        detail::Entry{std::move(name), std::move(state), &detail::run_with_setup<State>});
    VERNIER_SET_LOOP_ADDRS(detail::registry().back(), detail::vernier_measured_loop_inputs, R,
                           typename State::Input);
}

template <class T, class F>
void bench_latency(std::string name, T init, F&& f) {
    detail::last_call() = detail::registry().size();
    using Fn = std::decay_t<F>;
    static_assert(std::is_copy_constructible<T>::value,
                  "vernier::bench_latency: the chained value must be copyable");
    static_assert(std::is_convertible<std::invoke_result_t<Fn&, T&>, T>::value,
                  "vernier::bench_latency: f must take the value and return the next one");
    using State = detail::LatencyState<Fn, T>;
    auto state = std::shared_ptr<State>(new State{std::forward<F>(f), std::move(init)});
    detail::registry().push_back(
        detail::Entry{std::move(name), std::move(state), &detail::run_latency<State>});
    VERNIER_SET_LOOP_ADDRS(detail::registry().back(), detail::vernier_measured_loop_latency, Fn,
                           T);
}

template <class Body>
void bench_threads(std::string name, std::vector<int> threads, Body&& body) {
    detail::last_call() = detail::registry().size();
    using B = std::decay_t<Body>;
    static_assert(std::is_invocable<B&, int>::value,
                  "vernier::bench_threads: the body must be callable with the thread's index "
                  "(int)");
    auto bench = std::make_shared<detail::ThreadedBench>();
    bench->body = std::make_shared<B>(std::forward<Body>(body));
    bench->loop = &detail::thread_loop<B>;
    if (threads.empty()) threads = detail::default_thread_counts();
    // At most 65535 threads (the pool's release value holds the count taking part).
    for (int& t : threads) t = t < 1 ? 1 : (t > 65535 ? 65535 : t);
    for (int t : threads) bench->size = std::max(bench->size, t);
    for (int t : threads) {
        auto e = std::make_shared<detail::ThreadedEntry>();
        e->bench = bench;
        e->threads = std::max(t, 1);
        detail::registry().push_back(detail::Entry{
            name + "/threads:" + std::to_string(e->threads), e, &detail::run_threaded});
        detail::registry().back().threads = e->threads;
        VERNIER_SET_LOOP_ADDRS(detail::registry().back(),
                               detail::vernier_measured_loop_threads, B);
    }
}

template <class Make>
void bench_args(std::string name, const std::vector<std::int64_t>& args, Make&& make) {
    static_assert(std::is_invocable<Make&, std::int64_t>::value,
                  "vernier::bench_args: make must take the argument (std::int64_t) and return "
                  "the routine for it");
    const std::size_t first = detail::registry().size();
    for (std::int64_t a : args) bench(name + "/" + std::to_string(a), make(a));
    detail::last_call() = first;
}

inline std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t mult) {
    if (mult < 2) mult = 2;
    std::vector<std::int64_t> out{lo};
    for (std::int64_t i = 1; i < hi; i *= mult) {
        if (i > lo) out.push_back(i);
        if (i > std::numeric_limits<std::int64_t>::max() / mult) break;
    }
    if (hi != lo) out.push_back(hi);
    return out;
}

inline std::vector<std::int64_t> dense_range(std::int64_t lo, std::int64_t hi,
                                             std::int64_t step) {
    if (step < 1) step = 1;
    std::vector<std::int64_t> out;
    for (std::int64_t i = lo; i <= hi; i += step) out.push_back(i);
    return out;
}

inline void bytes_per_iter(std::uint64_t bytes) {
    auto& r = detail::registry();
    for (std::size_t i = detail::last_call(); i < r.size(); ++i) {
        r[i].bytes = bytes;
        r[i].items = 0;
    }
}

inline void items_per_iter(std::uint64_t items) {
    auto& r = detail::registry();
    for (std::size_t i = detail::last_call(); i < r.size(); ++i) {
        r[i].items = items;
        r[i].bytes = 0;
    }
}

namespace detail {
/// The `list` line's name of a complexity class (`complexity=NlgN`; docs/protocol.md).
inline const char* complexity_option(Complexity c) {
    switch (c) {
        case Complexity::Constant: return "1";
        case Complexity::Log: return "lgN";
        case Complexity::Linear: return "N";
        case Complexity::NLogN: return "NlgN";
        case Complexity::Quadratic: return "N^2";
        case Complexity::Cubic: return "N^3";
    }
    return "N";
}

/// The N a benchmark named `FAMILY/N` ends in (a whole number of at least 1), or 0.
inline std::uint64_t size_in_name(const std::string& name) {
    const std::size_t slash = name.rfind('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == name.size()) return 0;
    std::uint64_t n = 0;
    for (std::size_t i = slash + 1; i < name.size(); ++i) {
        if (name[i] < '0' || name[i] > '9' || n > (UINT64_MAX - 9) / 10) return 0;
        n = n * 10 + static_cast<std::uint64_t>(name[i] - '0');
    }
    return n;
}

/// Notes of the registration (a declaration that could not be taken), said once by the
/// process that measures: a worker's reach the user through the runner, and a program that
/// hands itself to the runner leaves them to its workers.
inline std::vector<std::string>& pending_notes() {
    static std::vector<std::string> notes;
    return notes;
}

inline void say_notes() {
    for (const auto& n : pending_notes()) std::fprintf(stderr, "vernier: %s\n", n.c_str());
    pending_notes().clear();
}

/// ` f=<value>` as the `list` line gives a complexity function's value (exact: 17 digits).
inline std::string complexity_value_option(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " f=%.17g", v);
    return buf;
}
}  // namespace detail

inline void complexity(Complexity c) {
    auto& r = detail::registry();
    for (std::size_t i = detail::last_call(); i < r.size(); ++i)
        r[i].fit = std::string(" complexity=") + detail::complexity_option(c);
}

template <class F>
void complexity_fn(const std::string& name, F&& f) {
    auto& r = detail::registry();
    for (std::size_t i = detail::last_call(); i < r.size(); ++i) {
        const std::uint64_t n = detail::size_in_name(r[i].name);
        r[i].fit.clear();
        const std::string head = "complexity_fn(\"" + name + "\"): " + r[i].name;
        if (n == 0) {
            detail::pending_notes().push_back(
                head + " has no size in its name (NAME/N); it is left out of the fit");
            continue;
        }
        const double v = static_cast<double>(f(static_cast<double>(n)));
        if (!(v >= 0 && v <= std::numeric_limits<double>::max())) {
            detail::pending_notes().push_back(head + ": the function gives " + std::to_string(v) +
                                              " at N = " + std::to_string(n) +
                                              "; it is left out of the fit");
            continue;
        }
        r[i].fit = detail::complexity_value_option(v) + " function=" + detail::encode_name(name);
    }
}

}  // namespace vernier

// ---------------------------------------------------------------------------------------------
// 4. Implementation
//
// A constant this header shares with the Rust harness or the runner names the Rust definition
// in its comment; crates/vernier/tests/suite/deterministic/shared_constants.rs fails when the
// two differ.
// ---------------------------------------------------------------------------------------------

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

// ---- The operating system --------------------------------------------------------------------
//
// What differs by operating system lives in `detail::os`, one function per need, the same on
// Linux, macOS and Windows; nothing else in this header asks which system it is on. What a
// system does not have is said, not faked: perf_event_open is Linux's (elsewhere every counter
// is unavailable), and macOS has no CPU affinity (pinning does nothing there).

#if defined(_WIN32)
#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <psapi.h>
#include <io.h>
#include <process.h>
#include <cpuid.h>
#else
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
extern "C" char** environ;
#endif
#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#endif
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#endif

namespace vernier {
namespace detail {

#if !defined(__linux__)
// perf_event_open's numbers (linux/perf_event.h), for the table of events: off Linux nothing
// opens, and every counter is unavailable.
enum : std::uint32_t { PERF_TYPE_HARDWARE = 0, PERF_TYPE_SOFTWARE = 1, PERF_TYPE_HW_CACHE = 3 };
enum : std::uint64_t {
    PERF_COUNT_HW_CPU_CYCLES = 0,
    PERF_COUNT_HW_INSTRUCTIONS = 1,
    PERF_COUNT_HW_CACHE_REFERENCES = 2,
    PERF_COUNT_HW_CACHE_MISSES = 3,
    PERF_COUNT_HW_BRANCH_INSTRUCTIONS = 4,
    PERF_COUNT_HW_BRANCH_MISSES = 5,
    PERF_COUNT_HW_CACHE_L1D = 0,
    PERF_COUNT_HW_CACHE_OP_READ = 0,
    PERF_COUNT_HW_CACHE_RESULT_MISS = 1,
    PERF_COUNT_SW_TASK_CLOCK = 1,
    PERF_COUNT_SW_PAGE_FAULTS = 2,
    PERF_COUNT_SW_CONTEXT_SWITCHES = 3,
    PERF_COUNT_SW_CPU_MIGRATIONS = 4,
    PERF_FORMAT_TOTAL_TIME_ENABLED = 1,
    PERF_FORMAT_TOTAL_TIME_RUNNING = 2,
    PERF_FORMAT_ID = 4,
    PERF_FORMAT_GROUP = 8,
};
#endif

namespace os {

/// The system's monotonic clock in ns: CLOCK_MONOTONIC on Linux, CLOCK_UPTIME_RAW on macOS,
/// QueryPerformanceCounter on Windows.
inline std::uint64_t monotonic_ns() {
#if defined(_WIN32)
    static const std::uint64_t hz = [] {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f);
        return static_cast<std::uint64_t>(f.QuadPart > 0 ? f.QuadPart : 1);
    }();
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    __extension__ typedef unsigned __int128 u128;
    return static_cast<std::uint64_t>(static_cast<u128>(t.QuadPart) * 1000000000u / hz);
#else
#if defined(__APPLE__)
    const clockid_t clock = CLOCK_UPTIME_RAW;
#else
    const clockid_t clock = CLOCK_MONOTONIC;
#endif
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

inline const char* system_clock_name() {
#if defined(_WIN32)
    return "qpc";
#elif defined(__APPLE__)
    return "mach";
#else
    return "monotonic";
#endif
}

/// The calling thread's time on a CPU, ns (0 when unknown); Windows counts it in scheduler
/// ticks.
inline std::uint64_t thread_cpu_ns() {
#if defined(_WIN32)
    FILETIME c, e, k, u;
    if (!GetThreadTimes(GetCurrentThread(), &c, &e, &k, &u)) return 0;
    const auto n = [](const FILETIME& t) {
        return (static_cast<std::uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
    };
    return (n(k) + n(u)) * 100u;
#else
    timespec ts{};
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0
               ? static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
                     static_cast<std::uint64_t>(ts.tv_nsec)
               : 0;
#endif
}

/// Whether the x86-64 TSC is invariant and `rdtscp` exists: /proc/cpuinfo's `constant_tsc`,
/// `nonstop_tsc` and `rdtscp` on Linux, CPUID elsewhere.
inline bool invariant_tsc() {
#if defined(__x86_64__) && defined(__linux__)
    std::FILE* f = std::fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    char* line = nullptr;
    std::size_t cap = 0;
    bool found = false, ok = false;
    while (!found && getline(&line, &cap, f) > 0) {
        if (std::strncmp(line, "flags", 5) != 0) continue;
        found = true;
        const auto has = [&](const char* flag) {
            const std::size_t n = std::strlen(flag);
            for (const char* p = std::strstr(line, flag); p; p = std::strstr(p + 1, flag)) {
                const char before = p == line ? ' ' : p[-1];
                const char after = p[n];
                if ((before == ' ' || before == '\t') &&
                    (after == ' ' || after == '\n' || after == '\0'))
                    return true;
            }
            return false;
        };
        ok = has("constant_tsc") && has("nonstop_tsc") && has("rdtscp");
    }
    std::free(line);
    std::fclose(f);
    return ok;
#elif defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
    __get_cpuid(0x80000001u, &a, &b, &c, &d);
    const bool rdtscp = (d & (1u << 27)) != 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return rdtscp && (d & (1u << 8)) != 0;
#else
    return false;
#endif
}

/// A symbol another library of the process exports (the runner's preloaded interposer);
/// null where there is none, and always on Windows (no preloading).
inline void* find_symbol(const char* name) {
#if defined(_WIN32)
    (void)name;
    return nullptr;
#else
    return dlsym(RTLD_DEFAULT, name);
#endif
}

/// The CPUs this process may run on, in order (every CPU on macOS, which has no affinity);
/// empty when the call failed.
inline std::vector<int> affinity() {
    std::vector<int> cpus;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (std::size_t c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(static_cast<int>(c));
    }
#elif defined(_WIN32)
    DWORD_PTR process = 0, system = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system)) {
        for (int c = 0; c < static_cast<int>(8 * sizeof process); ++c)
            if (process & (DWORD_PTR{1} << c)) cpus.push_back(c);
    }
#else
    const unsigned n = std::thread::hardware_concurrency();
    for (unsigned c = 0; c < n; ++c) cpus.push_back(static_cast<int>(c));
#endif
    return cpus;
}

/// Pin the calling thread to `cpu` (nothing on macOS, which has no CPU affinity).
inline void pin_thread(int cpu) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<std::size_t>(cpu), &set);
    sched_setaffinity(0, sizeof set, &set);  // the calling thread
#elif defined(_WIN32)
    if (cpu >= 0 && cpu < static_cast<int>(8 * sizeof(DWORD_PTR)))
        SetThreadAffinityMask(GetCurrentThread(), DWORD_PTR{1} << cpu);
#else
    (void)cpu;
#endif
}

/// Give the CPU to another runnable thread.
inline void yield() {
#if defined(_WIN32)
    SwitchToThread();
#else
    sched_yield();
#endif
}

/// The CPU the calling thread runs on (-1: unknown, as on macOS).
inline int current_cpu() {
#if defined(__linux__)
    return sched_getcpu();
#elif defined(_WIN32)
    return static_cast<int>(GetCurrentProcessorNumber());
#else
    return -1;
#endif
}

/// Whether address-space randomisation is off for this process (Linux's personality; other
/// systems have no query: on, their default).
inline bool aslr_off() {
#if defined(__linux__)
    const int persona = personality(0xffffffff);
    return persona != -1 && (persona & ADDR_NO_RANDOMIZE) != 0;
#else
    return false;
#endif
}

inline std::uint64_t pid() {
#if defined(_WIN32)
    return GetCurrentProcessId();
#else
    return static_cast<std::uint64_t>(::getpid());
#endif
}

/// The bytes of the environment (each entry and its terminator).
inline std::uint64_t environment_bytes() {
    std::uint64_t n = 0;
#if defined(_WIN32)
    char** env = _environ;
#else
    char** env = environ;
#endif
    for (char** e = env; e && *e; ++e) n += std::strlen(*e) + 1;
    return n;
}

/// Read up to `len` bytes from the runner's channel `fd` (a descriptor; an inherited handle on
/// Windows): the count, 0 at its end, negative on an error (retried on EINTR).
inline long read_channel(int fd, char* buf, std::size_t len) {
#if defined(_WIN32)
    DWORD n = 0;
    const HANDLE h = reinterpret_cast<HANDLE>(static_cast<std::intptr_t>(fd));
    if (!ReadFile(h, buf, static_cast<DWORD>(len), &n, nullptr))
        return GetLastError() == ERROR_BROKEN_PIPE ? 0 : -1;
    return static_cast<long>(n);
#else
    for (;;) {
        const ssize_t n = ::read(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        return static_cast<long>(n);
    }
#endif
}

/// Write all of `s` to the runner's channel `fd`.
inline bool write_channel(int fd, const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
#if defined(_WIN32)
        DWORD n = 0;
        const HANDLE h = reinterpret_cast<HANDLE>(static_cast<std::intptr_t>(fd));
        if (!WriteFile(h, s.data() + done, static_cast<DWORD>(s.size() - done), &n, nullptr))
            return false;
        const long wrote = static_cast<long>(n);
#else
        const ssize_t wrote = ::write(fd, s.data() + done, s.size() - done);
        if (wrote < 0 && errno == EINTR) continue;
#endif
        if (wrote <= 0) return false;
        done += static_cast<std::size_t>(wrote);
    }
    return true;
}

/// The process's own counters at one instant: CPU time, page faults, context switches
/// (getrusage; on Windows GetProcessTimes and GetProcessMemoryInfo, no context switches: 0,
/// said by `kUsageSource`).
inline void usage(std::uint64_t& cpu_ns, std::uint64_t& page_faults,
                  std::uint64_t& context_switches) {
#if defined(_WIN32)
    FILETIME c, e, k, u;
    cpu_ns = 0;
    if (GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u)) {
        const auto n = [](const FILETIME& t) {
            return (static_cast<std::uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
        };
        cpu_ns = (n(k) + n(u)) * 100u;
    }
    PROCESS_MEMORY_COUNTERS m{};
    m.cb = sizeof m;
    page_faults = GetProcessMemoryInfo(GetCurrentProcess(), &m, sizeof m) ? m.PageFaultCount : 0;
    context_switches = 0;
#else
    struct rusage r {};
    getrusage(RUSAGE_SELF, &r);
    auto tv = [](const timeval& t) {
        return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u +
               static_cast<std::uint64_t>(t.tv_usec) * 1000u;
    };
    cpu_ns = tv(r.ru_utime) + tv(r.ru_stime);
    page_faults = static_cast<std::uint64_t>(r.ru_minflt + r.ru_majflt);
    context_switches = static_cast<std::uint64_t>(r.ru_nvcsw + r.ru_nivcsw);
#endif
}

constexpr const char* kUsageSource =
#if defined(_WIN32)
    "GetProcessTimes; Windows counts no context switches per process";
#else
    "getrusage";
#endif

/// Write `text` to a new file of unpredictable name beside `path`, created exclusively (a
/// name taken, by a planted link too, is never opened), then renamed onto `path`. False with
/// errno (or the system's error) set when it could not be done.
inline bool write_replacing(const char* path, const std::string& text) {
#if defined(_WIN32)
    char tmp[MAX_PATH + 32];
    for (int attempt = 0; attempt < 16; ++attempt) {
        LARGE_INTEGER t;
        QueryPerformanceCounter(&t);
        std::snprintf(tmp, sizeof tmp, "%s.%08lx%08lx", path,
                      static_cast<unsigned long>(GetCurrentProcessId()),
                      static_cast<unsigned long>(t.QuadPart * 2654435761u));
        const HANDLE h = CreateFileA(tmp, GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                                     FILE_ATTRIBUTE_NORMAL, nullptr);
        if (h == INVALID_HANDLE_VALUE) {
            if (GetLastError() == ERROR_FILE_EXISTS) continue;
            return false;
        }
        DWORD n = 0;
        const bool ok = WriteFile(h, text.data(), static_cast<DWORD>(text.size()), &n, nullptr) &&
                        n == text.size();
        CloseHandle(h);
        if (ok && MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING)) return true;
        DeleteFileA(tmp);
        return false;
    }
    return false;
#else
    std::string tmp = std::string(path) + ".XXXXXX";
    const int fd = ::mkstemp(&tmp[0]);
    std::FILE* f = fd >= 0 && ::fchmod(fd, static_cast<mode_t>(0644)) == 0 ? ::fdopen(fd, "w") : nullptr;
    if (!f && fd >= 0) ::close(fd);
    const bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f && std::fclose(f) != 0) f = nullptr;
    if (!ok || !f || std::rename(tmp.c_str(), path) != 0) {
        const int saved = errno;
        if (fd >= 0) std::remove(tmp.c_str());
        errno = saved;
        return false;
    }
    return true;
#endif
}

/// The calling thread's scheduler statistics (Linux's /proc/thread-self/schedstat) opened
/// for reading; -1 where there are none.
inline int open_schedstat() {
#if defined(_WIN32)
    return -1;
#else
    return ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
#endif
}

/// Read up to `len` bytes at offset 0 of `fd` (from open_schedstat).
inline long read_start_of(int fd, char* buf, std::size_t len) {
#if defined(_WIN32)
    (void)fd, (void)buf, (void)len;
    return -1;
#else
    return static_cast<long>(::pread(fd, buf, len, 0));
#endif
}

inline void close_fd(int fd) {
#if defined(_WIN32)
    (void)fd;
#else
    ::close(fd);
#endif
}


/// `perf_event_open(attr, 0, -1, group_fd, FD_CLOEXEC)` for one event: the fd, or -errno
/// (-ENOSYS off Linux, which has no such call).
inline int perf_open(std::uint32_t type, std::uint64_t config, std::uint64_t read_format,
                     bool leader, bool exclude_kernel, int group_fd) {
#if defined(__linux__)
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.type = type;
    attr.size = 112;  // PERF_ATTR_SIZE_VER5, Linux >= 4.1
    attr.config = config;
    attr.read_format = read_format;
    attr.disabled = leader ? 1u : 0u;
    attr.exclude_kernel = exclude_kernel ? 1u : 0u;
    attr.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(0), -1, group_fd,
                              static_cast<unsigned long>(PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) return errno > 0 ? -errno : -EINVAL;
    return static_cast<int>(fd);
#else
    (void)type, (void)config, (void)read_format, (void)leader, (void)exclude_kernel;
    (void)group_fd;
    return -ENOSYS;
#endif
}

/// One group read of exactly `bytes`.
inline bool perf_read(int fd, std::uint64_t* dst, std::size_t bytes) {
#if defined(__linux__)
    return ::read(fd, dst, bytes) == static_cast<ssize_t>(bytes);
#else
    (void)fd, (void)dst, (void)bytes;
    return false;
#endif
}

/// The kernel's id of the event on `fd`.
inline bool perf_id(int fd, std::uint64_t& id) {
#if defined(__linux__)
    return ::ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0;
#else
    (void)fd, (void)id;
    return false;
#endif
}

/// Enable the group `leader` leads.
inline bool perf_enable_group(int leader) {
#if defined(__linux__)
    return ::ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) == 0;
#else
    (void)leader;
    return false;
#endif
}

/// This executable's path, or false with errno set.
inline bool self_path(std::string& out) {
#if defined(_WIN32)
    char buf[MAX_PATH * 4];
    const DWORD n = GetModuleFileNameA(nullptr, buf, sizeof buf);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return false;
    }
    out.assign(buf, n);
    return true;
#elif defined(__APPLE__)
    char buf[4096];
    std::uint32_t size = sizeof buf;
    if (_NSGetExecutablePath(buf, &size) != 0) {
        errno = ENAMETOOLONG;
        return false;
    }
    out = buf;
    return true;
#else
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return false;
    out.assign(buf, static_cast<std::size_t>(n));
    return true;
#endif
}

/// Where self_path looks, for its error message.
constexpr const char* kSelfPathSource =
#if defined(_WIN32)
    "GetModuleFileName";
#elif defined(__APPLE__)
    "_NSGetExecutablePath";
#else
    "/proc/self/exe";
#endif

/// The runner's file in a directory of the PATH, the PATH's separator.
#if defined(_WIN32)
constexpr const char* kRunnerFile = "/vernier.exe";
constexpr char kPathSeparator = ';';
#else
constexpr const char* kRunnerFile = "/vernier";
constexpr char kPathSeparator = ':';
#endif

inline bool is_executable(const std::string& path) {
#if defined(_WIN32)
    return _access(path.c_str(), 0) == 0;
#else
    return access(path.c_str(), X_OK) == 0;
#endif
}

inline void set_env(const char* name, const char* value) {
#if defined(_WIN32)
    _putenv_s(name, value);
#else
    setenv(name, value, 1);
#endif
}

inline void unset_env(const char* name) {
#if defined(_WIN32)
    _putenv_s(name, "");
#else
    unsetenv(name);
#endif
}

/// Replace this process with `path` run with `argv` (null-terminated): exec on Unix; on
/// Windows the program is run, waited for, and this process exits with its status. Returns
/// only when it could not be started, with errno set.
inline void replace_process(const char* path, char* const* argv) {
#if defined(_WIN32)
    const intptr_t status = _spawnv(_P_WAIT, path, argv);
    if (status != -1) std::exit(static_cast<int>(status));
#else
    execv(path, argv);
#endif
}

}  // namespace os
}  // namespace detail
}  // namespace vernier

namespace vernier {
namespace detail {

// ---- Clock -----------------------------------------------------------------------------------

inline std::uint64_t monotonic_now_ns() { return os::monotonic_ns(); }

/// How long the TSC is calibrated against CLOCK_MONOTONIC, per round (two rounds). 10 ms
/// bounds the frequency error to ~1e-5 with a monotonic clock read to within ~100 ns.
constexpr std::uint64_t kTscCalibrationNs = 10000000;
/// Back-to-back clock reads used to find the resolution and the cost of a start/stop pair.
constexpr std::size_t kOverheadProbes = 20000;

/// What was measured about the clock at start-up (the `hello` reply carries it).
struct Timer {
    ClockKind kind = ClockKind::monotonic;
    /// Nanoseconds per tick, fixed point with 32 fractional bits (integers in the core).
    std::uint64_t ns_per_tick_q32 = std::uint64_t{1} << 32;
    /// The rate of the counter read directly (the TSC's, calibrated; the generic timer's,
    /// from `cntfrq_el0`); 0 with CLOCK_MONOTONIC.
    double tsc_hz = 0.0;
    /// Smallest non-zero difference between two consecutive reads, in ns.
    double resolution_ns = 0.0;
    /// Median cost of a start/stop pair with nothing between them, in ns.
    double overhead_ns = 0.0;

    /// Raw ticks to whole nanoseconds, rounded.
    std::uint64_t to_ns(std::uint64_t ticks) const {
        if (kind == ClockKind::monotonic) return ticks;
        __extension__ typedef unsigned __int128 u128;
        const u128 p = static_cast<u128>(ticks) * ns_per_tick_q32 + (u128{1} << 31);
        return static_cast<std::uint64_t>(p >> 32);
    }
    double to_ns_f64(std::uint64_t ticks) const {
        return static_cast<double>(ticks) * static_cast<double>(ns_per_tick_q32) / 4294967296.0;
    }
};

/// Whether the TSC is invariant and `rdtscp` exists (/proc/cpuinfo's `constant_tsc`,
/// `nonstop_tsc` and `rdtscp` on Linux, CPUID elsewhere).
inline bool invariant_tsc_available() { return os::invariant_tsc(); }

#if defined(__x86_64__)
/// TSC frequency against CLOCK_MONOTONIC: two rounds; the round whose monotonic reads were
/// bracketed most tightly by TSC reads wins (a preempted read widens its bracket).
inline double calibrate_tsc_hz() {
    struct Bracket {
        std::uint64_t tsc, ns, width;
    };
    const auto bracket = [] {
        const std::uint64_t t0 = TscClock::start();
        const std::uint64_t m = monotonic_now_ns();
        const std::uint64_t t1 = TscClock::stop();
        return Bracket{t0 / 2 + t1 / 2, m, t1 - t0};
    };
    double best_hz = 1e9;
    std::uint64_t best_width = ~std::uint64_t{0};
    for (int round = 0; round < 2; ++round) {
        const Bracket a = bracket();
        while (monotonic_now_ns() - a.ns < kTscCalibrationNs) {
        }
        const Bracket b = bracket();
        const double hz =
            static_cast<double>(b.tsc - a.tsc) * 1e9 / static_cast<double>(b.ns - a.ns);
        if (a.width + b.width < best_width) {
            best_width = a.width + b.width;
            best_hz = hz;
        }
    }
    return best_hz;
}
#endif

template <class Clock>
void characterise(Timer& t) {
    std::vector<std::uint64_t> pairs(kOverheadProbes);
    std::uint64_t min_step = ~std::uint64_t{0};
    const std::uint64_t first = Clock::start();
    for (auto& d : pairs) {
        const std::uint64_t a = Clock::start();
        const std::uint64_t b = Clock::stop();
        d = b - a;
        if (d > 0 && d < min_step) min_step = d;
    }
    const std::uint64_t span = Clock::stop() - first;
    // Resolution: the smallest non-zero step between consecutive reads of the raw counter.
    for (std::size_t i = 0; i < kOverheadProbes; ++i) {
        const std::uint64_t a = Clock::start();
        std::uint64_t b = Clock::start();
        while (b == a) b = Clock::start();
        min_step = std::min(min_step, b - a);
    }
    std::nth_element(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(pairs.size() / 2),
                     pairs.end());
    const std::uint64_t median = pairs[pairs.size() / 2];
    // A counter that steps more slowly than a pair of reads takes (the generic timer at
    // 24-25 MHz): most pairs read no step, so a pair's cost is the loop's span over its pairs.
    t.overhead_ns = median >= min_step
                        ? t.to_ns_f64(median)
                        : t.to_ns_f64(span) / static_cast<double>(kOverheadProbes);
    t.resolution_ns = t.to_ns_f64(min_step);
}

#if defined(__aarch64__)
/// The generic timer's rate as the firmware publishes it in `cntfrq_el0` (0 when unset).
inline double cntfrq_hz() {
    std::uint64_t hz;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
    return static_cast<double>(hz & 0xffffffffu);
}

/// How long the generic timer is watched for a tick before it is trusted (a frozen counter
/// would stall the resolution search): 1 ms of CLOCK_MONOTONIC, the Rust harness's
/// `timer::aarch64::ADVANCE_WAIT_NS`.
constexpr std::uint64_t kCounterAdvanceWaitNs = 1000000;

/// Whether the generic timer has a rate and moves.
inline bool counter_available() {
    if (cntfrq_hz() <= 0.0) return false;
    const std::uint64_t a = CntvctClock::start();
    const std::uint64_t t0 = monotonic_now_ns();
    while (monotonic_now_ns() - t0 < kCounterAdvanceWaitNs) {
    }
    return CntvctClock::stop() != a;
}
inline double counter_rate_hz() { return cntfrq_hz(); }
#elif defined(__x86_64__)
inline bool counter_available() { return invariant_tsc_available(); }
inline double counter_rate_hz() { return calibrate_tsc_hz(); }
#endif

/// The best clock for this machine, calibrated and characterised: the counter read directly
/// where it can be trusted (the invariant TSC, the generic timer), else CLOCK_MONOTONIC.
/// `VERNIER_TIMER=monotonic` in the environment forces CLOCK_MONOTONIC (to test the
/// fallback, or to distrust the counter).
inline Timer detect_timer() {
    Timer t;
#if defined(VERNIER_COUNTER_CLOCK)
    const char* forced = std::getenv("VERNIER_TIMER");
    const bool counter_allowed = !(forced && std::strcmp(forced, "monotonic") == 0);
    if (counter_allowed && counter_available()) {
        t.kind = kCounterKind;
        t.tsc_hz = counter_rate_hz();
        t.ns_per_tick_q32 =
            static_cast<std::uint64_t>(std::llround(1e9 / t.tsc_hz * 4294967296.0));
        characterise<CounterClock>(t);
        return t;
    }
#endif
    characterise<MonotonicClock>(t);
    return t;
}

// ---- Registry --------------------------------------------------------------------------------

inline std::vector<Entry>& registry() {
    static std::vector<Entry> entries;
    return entries;
}

inline std::size_t& last_call() {
    static std::size_t first = 0;
    return first;
}

inline std::uint64_t& current_batch() {
    static std::uint64_t n = 0;
    return n;
}

/// Per-benchmark count of batches run so far (index = registry index).
inline std::vector<std::uint64_t>& batches_run() {
    static std::vector<std::uint64_t> v;
    return v;
}

/// The harness's own loop around an empty body (`run empty`).
inline Entry empty_entry() {
    return Entry{"(empty)", std::shared_ptr<void>(),
                 [](void*, ClockKind clock, std::uint64_t iters, std::size_t samples,
                    std::uint64_t* ticks, const Meter& meter) {
                     auto routine = [] {};
                     run_batch(routine, clock, iters, samples, ticks, meter);
                 }};
}

// ---- Cold caches (`cache=cold`, docs/experiments.md) ------------------------------------------

/// Assumed last-level cache when sysfs does not say: 32 MiB (the Rust harness's
/// `cache::FALLBACK_LLC_BYTES`).
constexpr std::uint64_t kFallbackLlcBytes = std::uint64_t{32} << 20;
/// The eviction buffer is this many times the last-level cache (`cache::EVICT_FACTOR`).
constexpr std::uint64_t kEvictFactor = 2;

/// The largest cache of the highest level of CPU 0 (sysfs), or kFallbackLlcBytes.
inline std::uint64_t llc_bytes() {
    unsigned best_level = 0;
    std::uint64_t best = 0;
    for (int i = 0; i < 16; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
        unsigned level = 0;
        unsigned long long size = 0;
        char unit = 0;
        std::FILE* f = std::fopen((dir + "/level").c_str(), "r");
        if (!f) continue;
        const bool ok_level = std::fscanf(f, "%u", &level) == 1;
        std::fclose(f);
        f = std::fopen((dir + "/size").c_str(), "r");
        if (!f) continue;
        const int n = std::fscanf(f, "%llu%c", &size, &unit);
        std::fclose(f);
        if (!ok_level || n < 1) continue;
        std::uint64_t bytes = size;
        if (n == 2 && (unit == 'K' || unit == 'k')) bytes <<= 10;
        if (n == 2 && (unit == 'M' || unit == 'm')) bytes <<= 20;
        if (level > best_level || (level == best_level && bytes > best)) {
            best_level = level;
            best = bytes;
        }
    }
    return best > 0 ? best : kFallbackLlcBytes;
}

/// Walks a buffer of kEvictFactor × the last-level cache, reading and writing each line, so
/// that nothing the benchmark touched stays in a cache. Allocated on first use.
struct Evictor {
    std::vector<std::uint64_t> buf;
    std::uint64_t sum = 0;
    __attribute__((noinline)) void evict() {
        if (buf.empty()) buf.assign(as_size(llc_bytes() * kEvictFactor / 8), 1);
        std::uint64_t acc = sum;
        for (std::size_t i = 0; i < buf.size(); i += 8) {
            const std::uint64_t v = buf[i] + acc;
            buf[i] = v;
            acc += v;
        }
        do_not_optimize(acc);
        sum = acc;
    }
};

// ---- Allocation counts (`memory=1`, docs/memory.md) ------------------------------------------
//
// The runner preloads its interposer into the counting process only; it exports
// `vernier_alloc_counts_read`, found here at run time. Without it this worker cannot count.

struct AllocCounts {
    std::uint64_t allocs = 0, bytes = 0, frees = 0, freed_bytes = 0;
};
using ReadAllocCountsFn = void (*)(AllocCounts*);

/// The interposer's reading function, or null when it is not loaded.
inline ReadAllocCountsFn alloc_counts_reader() {
    static const ReadAllocCountsFn f =
        reinterpret_cast<ReadAllocCountsFn>(os::find_symbol("vernier_alloc_counts_read"));
    return f;
}

/// The benchmark index of the empty loop (`run empty`).
constexpr std::size_t kEmptyLoop = static_cast<std::size_t>(-1);

/// Run one batch of benchmark `index` (or the empty loop when `index` is kEmptyLoop); ticks to ns.
/// `meter`'s counters (none by default) are read around each sample. With `evictor`, the
/// caches are evicted before each sample (one call of the loop per sample). Throws what the
/// benchmark throws.
inline void measure_batch(const Timer& timer, std::size_t index, std::uint64_t iters,
                          std::size_t samples, std::vector<std::uint64_t>& ns,
                          const Meter& meter = Meter(), Evictor* evictor = nullptr,
                          std::vector<AllocCounts>* mem = nullptr) {
    ns.resize(samples);
    const ReadAllocCountsFn read_counts = mem ? alloc_counts_reader() : nullptr;
    if (read_counts) mem->assign(samples, AllocCounts());
    // One call of the loop for the whole batch; with cold caches or allocation counts, one per
    // sample, the caches evicted before each (the meter's buffers offset to the sample's place
    // in the batch) and the allocation counters read around each, outside its timed region.
    auto run = [&](RunFn fn, void* state) {
        if (!evictor && !read_counts) {
            fn(state, timer.kind, iters, samples, ns.data(), meter);
            return;
        }
        for (std::size_t s = 0; s < samples; ++s) {
            Meter m = meter;
            if (m.sw) m.sw += 2 * s * m.sw_words;
            if (m.hw) m.hw += 2 * s * m.hw_words;
            if (evictor) evictor->evict();
            AllocCounts before, after;
            if (read_counts) read_counts(&before);
            fn(state, timer.kind, iters, 1, ns.data() + s, m);
            if (read_counts) {
                read_counts(&after);
                (*mem)[s] = AllocCounts{after.allocs - before.allocs, after.bytes - before.bytes,
                                        after.frees - before.frees,
                                        after.freed_bytes - before.freed_bytes};
            }
        }
    };
    if (index == kEmptyLoop) {
        run(empty_entry().run, nullptr);
    } else {
        auto& entries = registry();
        auto& counts = batches_run();
        if (counts.size() < entries.size()) counts.resize(entries.size(), 0);
        current_batch() = ++counts[index];
        struct Reset {
            ~Reset() { current_batch() = 0; }
        } reset;
        run(entries[index].run, entries[index].state.get());
    }
    for (auto& t : ns) t = timer.to_ns(t);
}

// ---- Threaded benchmarks (docs/threads.md) ---------------------------------------------------

template <class F>
bool guarded(F&& f, std::string& what);

/// Pin the threads of pools started from now on, one per CPU of the affinity mask (`pin=1`).
inline bool& threads_pinned() {
    static bool pinned = false;
    return pinned;
}

/// The CPUs this process may run on (its affinity mask when first asked, before any thread of
/// a pinned pool narrowed its own), in order.
inline std::vector<int> read_allowed_cpus() {
    std::vector<int> cpus = os::affinity();
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

inline const std::vector<int>& allowed_cpus() {
    static const std::vector<int> cpus = read_allowed_cpus();
    return cpus;
}

inline std::vector<int> default_thread_counts() {
    const int cpus = static_cast<int>(allowed_cpus().size());
    std::vector<int> v;
    for (int t = 1; t < cpus; t *= 2) v.push_back(t);
    v.push_back(cpus);
    return v;
}

inline void pin_thread_to(int cpu) { os::pin_thread(cpu); }

/// How long a waiting pool thread spins for the next release before it blocks (the Rust
/// harness's `threads::SPIN_BEFORE_PARK_NS`), and spins between two yields
/// (`threads::SPINS_PER_YIELD`).
constexpr std::uint64_t kSpinBeforeParkNs = 2000000;
constexpr unsigned kSpinsPerYield = 256;

inline void cpu_relax() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

/// A thread's own clocks (the Rust harness's `workload::thread_clock`): its time on a CPU
/// and, where the kernel keeps it, its run-queue wait (second field of
/// /proc/thread-self/schedstat, ns). Opened by the thread it reads; read outside every timed
/// region (a system call and a pread).
struct ThreadClock {
    int fd = -1;
    ThreadClock() : fd(os::open_schedstat()) {}
    ~ThreadClock() {
        if (fd >= 0) os::close_fd(fd);
    }
    ThreadClock(const ThreadClock&) = delete;
    ThreadClock& operator=(const ThreadClock&) = delete;

    static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};

    static std::uint64_t cpu_now() { return os::thread_cpu_ns(); }

    /// The run-queue wait in ns (kUnknown where the kernel does not say).
    std::uint64_t wait_now() const {
        if (fd < 0) return kUnknown;
        char buf[96];
        const long n = os::read_start_of(fd, buf, sizeof buf - 1);
        if (n <= 0) return kUnknown;
        buf[n] = '\0';
        const char* p = std::strchr(buf, ' ');
        if (!p) return kUnknown;
        char* end = nullptr;
        const unsigned long long w = std::strtoull(p + 1, &end, 10);
        return end != p + 1 ? w : kUnknown;
    }

    /// Both clocks before a measured region (the on-CPU clock last, so the reads' own cost
    /// stays out of it) or after one (the on-CPU clock first).
    void read(std::uint64_t& cpu_ns, std::uint64_t& wait_ns, bool before) const {
        if (before) {
            wait_ns = wait_now();
            cpu_ns = cpu_now();
        } else {
            cpu_ns = cpu_now();
            wait_ns = wait_now();
        }
    }
};

/// The longest time between a pool thread's clock reading (after its last round, or when the
/// pool arms) and the release, past which the pool arms first (the Rust harness's
/// `threads::ARM_LEAD_NS`), at most kMaxArms times (`threads::MAX_ARMS`).
constexpr std::uint64_t kArmLeadNs = 20000;
constexpr int kMaxArms = 2;

/// Threads 1..size-1 of a threaded benchmark (thread 0 is the measuring thread), started once
/// and kept until destroyed. A round releases `active` threads for `iters` iterations each.
struct ThreadPool {
    ThreadLoopFn loop;
    void* body;
    ClockKind clock;
    bool pinned;
    std::atomic<std::uint64_t> release{0};
    /// Bumped before a timed release: each thread taking part reads its clocks, then counts
    /// itself in `armed`; the release comes once all have.
    std::atomic<std::uint64_t> arm{0};
    std::atomic<int> armed{0};
    std::atomic<std::uint64_t> iters{0};
    std::atomic<int> active{0};
    std::atomic<int> done{0};
    std::atomic<int> parked{0};
    std::atomic<bool> stop{false};
    std::unique_ptr<std::atomic<std::uint64_t>[]> finish;
    /// Each thread's own clocks after its last round (ThreadClock::read).
    std::unique_ptr<std::atomic<std::uint64_t>[]> cpu, wait;
    /// Each thread's monotonic clock (ns) when it last armed.
    std::unique_ptr<std::atomic<std::uint64_t>[]> armed_at;
    /// Thread 0's clocks (opened by the thread that starts the pool and measures).
    ThreadClock clock0;
    std::mutex m;
    std::condition_variable cv;
    std::string error;
    int error_thread = -1;
    std::vector<std::thread> threads;

    ThreadPool(ThreadLoopFn l, void* b, ClockKind c, int size)
        : loop(l), body(b), clock(c), pinned(threads_pinned()),
          finish(new std::atomic<std::uint64_t>[static_cast<std::size_t>(size)]),
          cpu(new std::atomic<std::uint64_t>[static_cast<std::size_t>(size)]),
          wait(new std::atomic<std::uint64_t>[static_cast<std::size_t>(size)]),
          armed_at(new std::atomic<std::uint64_t>[static_cast<std::size_t>(size)]) {
        for (int k = 0; k < size; ++k) {
            cpu[static_cast<std::size_t>(k)].store(0);
            wait[static_cast<std::size_t>(k)].store(ThreadClock::kUnknown);
            armed_at[static_cast<std::size_t>(k)].store(0);
        }
        const std::vector<int>& cpus = allowed_cpus();
        if (pinned) pin_thread_to(cpus[0]);
        for (int k = 1; k < size; ++k) {
            const int pin = pinned ? cpus[static_cast<std::size_t>(k) % cpus.size()] : -1;
            threads.emplace_back([this, k, pin] { serve(k, pin); });
        }
    }

    ~ThreadPool() {
        {
            std::lock_guard<std::mutex> lock(m);
            stop.store(true);
        }
        cv.notify_all();
        for (auto& t : threads) t.join();
    }

    void fail(int k, std::string what) {
        std::lock_guard<std::mutex> lock(m);
        if (error_thread < 0) {
            error_thread = k;
            error = std::move(what);
        }
    }

    /// Run this thread's share as thread k, a throw recorded as the round's failure.
    std::uint64_t share(int k, std::uint64_t n) {
        std::uint64_t t = 0;
        std::string what;
        if (!guarded([&] { t = loop(body, k, n, clock); }, what)) {
            fail(k, what);
            t = clock_now();
        }
        return t;
    }

    std::uint64_t clock_now() const {
#if defined(VERNIER_COUNTER_CLOCK)
        if (clock == kCounterKind) return CounterClock::stop();
#endif
        return MonotonicClock::stop();
    }

    void store_reading(int k, const ThreadClock& c, bool before) {
        std::uint64_t on = 0, w = 0;
        c.read(on, w, before);
        cpu[static_cast<std::size_t>(k)].store(on, std::memory_order_relaxed);
        wait[static_cast<std::size_t>(k)].store(w, std::memory_order_relaxed);
    }

    void serve(int k, int pin) {
        if (pin >= 0) pin_thread_to(pin);
        const ThreadClock clock_k;
        std::uint64_t seen = 0, seen_arm = 0;
        for (;;) {
            const std::uint64_t since = monotonic_now_ns();
            unsigned spins = 0;
            const auto idle = [&] {
                return release.load(std::memory_order_acquire) == seen &&
                       arm.load(std::memory_order_acquire) == seen_arm && !stop.load();
            };
            while (idle()) {
                cpu_relax();
                if (++spins % kSpinsPerYield == 0) {
                    os::yield();
                    if (monotonic_now_ns() - since > kSpinBeforeParkNs) {
                        std::unique_lock<std::mutex> lock(m);
                        parked.fetch_add(1);
                        cv.wait(lock, [&] { return !idle(); });
                        parked.fetch_sub(1);
                    }
                }
            }
            if (stop.load()) return;
            const std::uint64_t a = arm.load(std::memory_order_acquire);
            if (a != seen_arm) {
                // A timed release comes once every thread taking part has read its clocks.
                seen_arm = a;
                if (k < taking_part(a)) {
                    store_reading(k, clock_k, true);
                    armed_at[static_cast<std::size_t>(k)].store(monotonic_now_ns(),
                                                                 std::memory_order_relaxed);
                    armed.fetch_add(1, std::memory_order_release);
                    // Hand the CPU to the releasing thread at once if it waits for this one.
                    os::yield();
                }
                continue;
            }
            seen = release.load(std::memory_order_acquire);
            if (k >= taking_part(seen)) continue;
            const std::uint64_t t = share(k, iters.load(std::memory_order_relaxed));
            finish[static_cast<std::size_t>(k)].store(t, std::memory_order_relaxed);
            store_reading(k, clock_k, false);
            armed_at[static_cast<std::size_t>(k)].store(monotonic_now_ns(),
                                                         std::memory_order_relaxed);
            done.fetch_add(1, std::memory_order_release);
        }
    }

    /// Bits of a release or arming value holding the thread count taking part (the rest count
    /// the rounds): a thread that wakes late reads who takes part in the round it sees.
    static constexpr unsigned kPartBits = 16;
    static int taking_part(std::uint64_t value) {
        return static_cast<int>(value & ((std::uint64_t{1} << kPartBits) - 1));
    }

    /// Signal a new round (or arming) of `n` threads on `counter` (written by thread 0 alone)
    /// and wake the threads that blocked.
    void bump(std::atomic<std::uint64_t>& counter, int n) {
        const std::uint64_t next =
            (((counter.load(std::memory_order_relaxed) >> kPartBits) + 1) << kPartBits) |
            static_cast<std::uint64_t>(n);
        if (parked.load() > 0) {
            {
                std::lock_guard<std::mutex> lock(m);
                counter.store(next, std::memory_order_release);
            }
            cv.notify_all();
        } else {
            counter.store(next, std::memory_order_release);
        }
    }

    /// Release `n` threads (this one as thread 0) for `its` iterations each; the release's
    /// clock reading, each thread's finish in `finish` and (a timed round: the pool arms
    /// first) its clocks before the release in `cpu_before`/`wait_before` (after it:
    /// `cpu`/`wait`).
    std::uint64_t round(int n, std::uint64_t its, std::uint64_t* cpu_before = nullptr,
                        std::uint64_t* wait_before = nullptr) {
        done.store(0, std::memory_order_relaxed);
        iters.store(its, std::memory_order_relaxed);
        active.store(n, std::memory_order_relaxed);
        std::uint64_t t0 = 0;
        for (int arms = 0;; ++arms) {
            if (arms > 0) {
                armed.store(0, std::memory_order_relaxed);
                bump(arm, n);
                unsigned spins = 0;
                while (armed.load(std::memory_order_acquire) < n - 1) {
                    cpu_relax();
                    if (++spins % kSpinsPerYield == 0) os::yield();
                }
            }
            std::uint64_t oldest = ~std::uint64_t{0};
            if (cpu_before) {
                for (int k = 1; k < n; ++k) {
                    const auto at = static_cast<std::size_t>(k);
                    cpu_before[k] = cpu[at].load(std::memory_order_relaxed);
                    wait_before[k] = wait[at].load(std::memory_order_relaxed);
                    oldest = std::min(oldest, armed_at[at].load(std::memory_order_relaxed));
                }
                clock0.read(cpu_before[0], wait_before[0], true);
            }
#if defined(VERNIER_COUNTER_CLOCK)
            if (clock == kCounterKind) {
                t0 = CounterClock::start();
            } else
#endif
            {
                t0 = MonotonicClock::start();
            }
            // Arm again when a thread's reading lies too long before the release.
            const bool late = oldest != ~std::uint64_t{0} && monotonic_now_ns() - oldest > kArmLeadNs;
            if (!late || arms >= kMaxArms) break;
        }
        bump(release, n);
        finish[0].store(share(0, its), std::memory_order_relaxed);
        store_reading(0, clock0, false);
        unsigned spins = 0;
        while (done.load(std::memory_order_acquire) < n - 1) {
            cpu_relax();
            if (++spins % kSpinsPerYield == 0) os::yield();
        }
        return t0;
    }
};

inline void run_threaded(void* state, ClockKind clock, std::uint64_t iters,
                         std::size_t samples, std::uint64_t* ticks, const Meter& meter) {
    auto& e = *static_cast<ThreadedEntry*>(state);
    auto& b = *e.bench;
    if (b.pool && (b.pool->pinned != threads_pinned() || b.pool->clock != clock)) b.pool.reset();
    bool fresh = !b.pool;
    if (fresh) b.pool = std::make_shared<ThreadPool>(b.loop, b.body.get(), clock, b.size);
    ThreadPool& pool = *b.pool;
    const auto n = static_cast<std::size_t>(e.threads);
    if (e.batch != current_batch() || current_batch() == 0) {
        e.ticks.clear();
        e.cpu_ns.clear();
        e.wait_ns.clear();
        e.waits_known = true;
        e.batch = current_batch();
    }
    e.ticks.reserve(e.ticks.size() + n * samples);
    e.cpu_ns.reserve(e.cpu_ns.size() + n * samples);
    e.wait_ns.reserve(e.wait_ns.size() + n * samples);
    std::vector<std::uint64_t> cpu_before(n), wait_before(n);
    for (std::size_t s = 0; s < samples; ++s) {
        // Threads that blocked since the last sample are woken by an untimed round first, so
        // that the timed one releases threads all waiting on a CPU; a new pool's threads,
        // which may not have run yet, and readings grown old are renewed the same way.
        if (fresh || pool.parked.load() > 0) pool.round(e.threads, 0);
        fresh = false;
        meter_start(meter, s);
        const std::uint64_t t0 =
            pool.round(e.threads, iters, cpu_before.data(), wait_before.data());
        meter_stop(meter, s);
        std::uint64_t last = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const std::uint64_t t = pool.finish[k].load(std::memory_order_relaxed) - t0;
            e.ticks.push_back(t);
            last = std::max(last, t);
            const std::uint64_t on = pool.cpu[k].load(std::memory_order_relaxed);
            const std::uint64_t w = pool.wait[k].load(std::memory_order_relaxed);
            e.cpu_ns.push_back(on > cpu_before[k] ? on - cpu_before[k] : 0);
            const bool known = w != ThreadClock::kUnknown && wait_before[k] != ThreadClock::kUnknown;
            e.waits_known = e.waits_known && known;
            e.wait_ns.push_back(known && w > wait_before[k] ? w - wait_before[k] : 0);
        }
        ticks[s] = last;
        if (pool.error_thread >= 0) {
            std::string what = "thread " + std::to_string(pool.error_thread) + " of " +
                               std::to_string(e.threads) + ": " + pool.error;
            b.pool.reset();  // every thread joined: none is left behind
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
            throw std::runtime_error(what);
#else
            std::fprintf(stderr, "vernier: %s\n", what.c_str());
            std::abort();
#endif
        }
    }
}

#if defined(__x86_64__)
/// The probes' remainder after their rounds of eight: `n` dependent one-cycle additions to
/// `x`, the added value in a register, one at a time.
VERNIER_ALWAYS_INLINE void add_ones(std::uint64_t& x, std::uint64_t n) {
    const std::uint64_t one = 1;
    if (n > 0) {
        asm volatile("1:\n\tadd %[one], %[x]\n\tdec %[r]\n\tjnz 1b"
                     : [x] "+r"(x), [r] "+r"(n)
                     : [one] "r"(one)
                     : "cc");
    }
}
#elif defined(__aarch64__)
/// The probes' remainder after their rounds of eight: `n` dependent one-cycle additions to
/// `x`, the added value in a register, one at a time.
VERNIER_ALWAYS_INLINE void add_ones(std::uint64_t& x, std::uint64_t n) {
    const std::uint64_t one = 1;
    if (n > 0) {
        asm volatile("1:\n\tadd %[x], %[x], %[one]\n\tsubs %[r], %[r], #1\n\tb.ne 1b"
                     : [x] "+r"(x), [r] "+r"(n)
                     : [one] "r"(one)
                     : "cc");
    }
}
#endif

/// The core-speed probe (docs/protocol.md, `probe=`): a chain of `n` dependent one-cycle
/// additions in assembly on x86-64 (`add reg, reg`) and aarch64 (`add xd, xd, xm`), the added
/// value in a register (recent cores fold add-immediate chains at renaming). At one addition per cycle its time is `n` cycles at the core's current speed.
__attribute__((noinline)) inline std::uint64_t speed_probe_chain(std::uint64_t x,
                                                                 std::uint64_t n) {
#if defined(__x86_64__)
    std::uint64_t blocks = n / 8, rest = n % 8;
    const std::uint64_t one = 1;
    if (blocks > 0) {
        asm volatile(
            "1:\n\t"
            "add %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\t"
            "add %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\t"
            "dec %[b]\n\tjnz 1b"
            : [x] "+r"(x), [b] "+r"(blocks)
            : [one] "r"(one)
            : "cc");
    }
    add_ones(x, rest);
    return x;
#elif defined(__aarch64__)
    std::uint64_t blocks = n / 8, rest = n % 8;
    const std::uint64_t one = 1;
    if (blocks > 0) {
        asm volatile(
            "1:\n\t"
            "add %[x], %[x], %[one]\n\tadd %[x], %[x], %[one]\n\t"
            "add %[x], %[x], %[one]\n\tadd %[x], %[x], %[one]\n\t"
            "add %[x], %[x], %[one]\n\tadd %[x], %[x], %[one]\n\t"
            "add %[x], %[x], %[one]\n\tadd %[x], %[x], %[one]\n\t"
            "subs %[b], %[b], #1\n\tb.ne 1b"
            : [x] "+r"(x), [b] "+r"(blocks)
            : [one] "r"(one)
            : "cc");
    }
    add_ones(x, rest);
    return x;
#else
    for (std::uint64_t i = 0; i < n; ++i) {
        x += 1;
        do_not_optimize(x);
    }
    return x;
#endif
}

/// The probe's throughput half (docs/protocol.md, `wide_ns=`): `n` one-cycle additions over
/// eight independent chains (`n / 8` rounds, the rest on the first). Nothing waits, so the
/// core runs as many at once as it has integer units free: its time measures the throughput
/// the core gives this thread, which a busy sibling thread takes a share of at the same
/// clock. Returns the sum of the chains.
__attribute__((noinline)) inline std::uint64_t speed_probe_wide_chain(std::uint64_t x,
                                                                      std::uint64_t n) {
    std::uint64_t a = x, b = x, c = x, d = x, e = x, f = x, g = x, h = x;
#if defined(__x86_64__)
    std::uint64_t rounds = n / 8;
    const std::uint64_t one = 1;
    if (rounds > 0) {
        asm volatile(
            "1:\n\t"
            "add %[one], %[a]\n\tadd %[one], %[b]\n\tadd %[one], %[c]\n\tadd %[one], %[d]\n\t"
            "add %[one], %[e]\n\tadd %[one], %[f]\n\tadd %[one], %[g]\n\tadd %[one], %[h]\n\t"
            "dec %[k]\n\tjnz 1b"
            : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(d), [e] "+r"(e), [f] "+r"(f),
              [g] "+r"(g), [h] "+r"(h), [k] "+r"(rounds)
            : [one] "r"(one)
            : "cc");
    }
    add_ones(a, n % 8);
#elif defined(__aarch64__)
    std::uint64_t rounds = n / 8;
    const std::uint64_t one = 1;
    if (rounds > 0) {
        asm volatile(
            "1:\n\t"
            "add %[a], %[a], %[one]\n\tadd %[b], %[b], %[one]\n\t"
            "add %[c], %[c], %[one]\n\tadd %[d], %[d], %[one]\n\t"
            "add %[e], %[e], %[one]\n\tadd %[f], %[f], %[one]\n\t"
            "add %[g], %[g], %[one]\n\tadd %[h], %[h], %[one]\n\t"
            "subs %[k], %[k], #1\n\tb.ne 1b"
            : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(d), [e] "+r"(e), [f] "+r"(f),
              [g] "+r"(g), [h] "+r"(h), [k] "+r"(rounds)
            : [one] "r"(one)
            : "cc");
    }
    add_ones(a, n % 8);
#else
    for (std::uint64_t i = 0; i < n / 8; ++i) {
        a += 1; b += 1; c += 1; d += 1; e += 1; f += 1; g += 1; h += 1;
        do_not_optimize(a);
    }
    a += n % 8;
#endif
    return a + b + c + d + e + f + g + h;
}

/// Repetitions of the probe; the fastest is kept (an interrupt in one does not make the core
/// look slow). The Rust harness's `plan::PROBE_REPEATS`.
constexpr int kProbeRepeats = 3;
/// Longest probe chain a worker accepts (the protocol's `plan::MAX_PROBE_ADDS`).
constexpr std::uint64_t kMaxProbeAdds = std::uint64_t{1} << 20;

/// The fastest of `kProbeRepeats` timings of `chain(x, adds)` (the dependent chain, or with
/// `wide` the eight independent ones), in ns of `timer`.
inline std::uint64_t speed_probe(const Timer& timer, std::uint64_t adds, bool wide = false) {
    std::uint64_t (*chain)(std::uint64_t, std::uint64_t) =
        wide ? speed_probe_wide_chain : speed_probe_chain;
    std::uint64_t x = 0, best = ~std::uint64_t{0};
    do_not_optimize(x);
    for (int r = 0; r < kProbeRepeats; ++r) {
        std::uint64_t t0, t1;
#if defined(VERNIER_COUNTER_CLOCK)
        if (timer.kind == kCounterKind) {
            t0 = CounterClock::start();
            x = chain(x, adds);
            t1 = CounterClock::stop();
        } else
#endif
        {
            t0 = MonotonicClock::start();
            x = chain(x, adds);
            t1 = MonotonicClock::stop();
        }
        const std::uint64_t ns = timer.to_ns(t1 - t0);
        if (ns < best) best = ns;
    }
    do_not_optimize(x);
    return best;
}

/// Run `f`; if it throws, put the message in `what` and return false. Compiled with
/// -fno-exceptions, just run it.
template <class F>
bool guarded(F&& f, std::string& what) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
        f();
        return true;
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
        what = "unknown exception";
    }
    return false;
#else
    f();
    (void)what;
    return true;
#endif
}

// ---- Text helpers ------------------------------------------------------------------------------

inline void append_u64(std::string& s, std::uint64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    s.append(buf, r.ptr);
}

/// Shortest representation that reads back to the same double, independent of the locale.
inline void append_f64(std::string& s, double v) {
    char buf[64];
#if defined(__cpp_lib_to_chars)
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    s.append(buf, r.ptr);
#else
    const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
    s.append(buf, static_cast<std::size_t>(n));
#endif
}

/// Percent-encode a name: bytes outside `A-Za-z0-9-_./:+,` become `%XX`.
inline std::string encode_name(const std::string& name) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char ch : name) {
        const auto b = static_cast<unsigned char>(ch);
        if ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') ||
            std::strchr("-_./:+,", b) != nullptr) {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(hex[b >> 4]);
            out.push_back(hex[b & 15]);
        }
    }
    return out;
}

/// Parse a whole token as an unsigned decimal (an optional leading '+' is accepted, as the
/// Rust side does).
inline bool parse_u64(const std::string& tok, std::uint64_t& out) {
    const char* first = tok.data();
    const char* last = tok.data() + tok.size();
    if (first != last && *first == '+') ++first;
    if (first == last) return false;
    const auto r = std::from_chars(first, last, out);
    return r.ec == std::errc() && r.ptr == last;
}

inline bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

inline std::vector<std::string> split_ws(const std::string& line) {
    std::vector<std::string> toks;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_space(line[i])) ++i;
        const std::size_t start = i;
        while (i < line.size() && !is_space(line[i])) ++i;
        if (i > start) toks.emplace_back(line, start, i - start);
    }
    return toks;
}

// ---- Performance counters ----------------------------------------------------------------
//
// The same events, attributes, groups and reads as the Rust harness (crates/vernier/src/
// counters/; the reference is docs/counters.md). Opened for the calling thread (the one that
// runs the benchmarks) in at most two groups, one for the kernel's software events and one for
// the PMU's hardware events, on the first `run` with a `counters=` option, and kept open while
// the option does not change. What fails to open is left out: the worker returns no token for
// it and the runner explains why (it opens the same events itself).

/// An event Vernier reads, as `perf list` names it.
struct CounterEvent {
    const char* name;
    std::uint32_t type;
    std::uint64_t config;
    bool hardware;
    /// Hardware events, task-clock and page faults count with `exclude_kernel = 1`; context
    /// switches and migrations happen in the scheduler and would always read 0 with it.
    bool exclude_kernel;
};

constexpr std::size_t kCounterEventCount = 11;

/// Every event, in the order of docs/counters.md (the order of the reply's tokens).
inline const CounterEvent* counter_events() {
    static const CounterEvent table[kCounterEventCount] = {
        {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, true},
        {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true, true},
        {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true, true},
        {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true, true},
        {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true, true},
        {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true, true},
        {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
         PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
             (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
         true, true},
        {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false, true},
        {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false, false},
        {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false, false},
        {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false, true},
    };
    return table;
}

/// `default`: cycles, instructions, branch-misses, cache-misses, task-clock, context-switches,
/// cpu-migrations, page-faults (indices into counter_events()).
constexpr std::size_t kDefaultCounterEvents[] = {0, 1, 3, 5, 7, 8, 9, 10};

/// The events of a `counters=` value: perf names separated by commas, `default` for the
/// default set; order kept, duplicates dropped, unknown names ignored (the runner checks them).
inline std::vector<std::size_t> parse_counter_list(const std::string& list) {
    std::vector<std::size_t> out;
    const auto add = [&](std::size_t e) {
        if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    };
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        const std::string name = list.substr(start, comma - start);
        if (name == "default") {
            for (const std::size_t e : kDefaultCounterEvents) add(e);
        } else {
            for (std::size_t e = 0; e < kCounterEventCount; ++e) {
                if (name == counter_events()[e].name) add(e);
            }
        }
        start = comma + 1;
    }
    return out;
}

/// `read_format`: `[nr, time_enabled, time_running, {value, id} × nr]`.
constexpr std::uint64_t kCounterReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
    PERF_FORMAT_ID;

/// How long the hardware group may take to get onto the PMU before it is declared too big
/// (as in the Rust harness).
constexpr std::uint64_t kSchedulableProbeNs = 4000000;

/// `perf_event_open(attr, 0, -1, group_fd, FD_CLOEXEC)` for `event`: the fd, or -errno.
inline int open_counter(const CounterEvent& event, bool leader, int group_fd) {
    return os::perf_open(event.type, event.config, kCounterReadFormat, leader,
                         event.exclude_kernel, group_fd);
}

inline void read_counter_group(int fd, std::uint64_t* dst, std::size_t words) {
    if (!os::perf_read(fd, dst, words * sizeof(std::uint64_t))) dst[0] = 0;
}

/// One open group: the leader first (reads return the whole group), the events in group
/// order, the kernel's ids of the events (empty when they could not be had).
class CounterGroup {
public:
    CounterGroup() = default;
    CounterGroup(const CounterGroup&) = delete;
    CounterGroup& operator=(const CounterGroup&) = delete;
    ~CounterGroup() { close(); }

    /// Open `events` (indices into counter_events()) as one group; members that fail are left
    /// out. Empty when nothing opened or the group could not be enabled.
    void open(const std::vector<std::size_t>& events) {
        close();
        for (const std::size_t e : events) {
            const bool leader = fds_.empty();
            const int fd = open_counter(counter_events()[e], leader, leader ? -1 : fds_[0]);
            if (fd < 0) continue;
            fds_.push_back(fd);
            events_.push_back(e);
        }
        if (fds_.empty()) return;
        for (const int fd : fds_) {
            std::uint64_t id = 0;
            if (!os::perf_id(fd, id)) break;
            ids_.push_back(id);
        }
        if (ids_.size() != fds_.size()) ids_.clear();
        // A group that never counts would read as zeros: left out instead.
        if (!os::perf_enable_group(fds_[0])) close();
    }

    /// Whether the group gets onto the PMU at all: spin briefly, then look at its running
    /// time.
    bool runs() const {
        if (fds_.empty()) return false;
        const std::uint64_t t0 = monotonic_now_ns();
        while (monotonic_now_ns() - t0 < kSchedulableProbeNs) {
        }
        std::vector<std::uint64_t> buf(words(), 0);
        read_counter_group(fds_[0], buf.data(), buf.size());
        return buf[0] == fds_.size() && buf[2] > 0;
    }

    void close() {
        for (auto it = fds_.rbegin(); it != fds_.rend(); ++it) os::close_fd(*it);
        fds_.clear();
        events_.clear();
        ids_.clear();
    }

    bool empty() const { return fds_.empty(); }
    int leader() const { return fds_.empty() ? -1 : fds_[0]; }
    std::size_t words() const { return 3 + 2 * fds_.size(); }
    const std::vector<std::size_t>& events() const { return events_; }

    /// The delta of the group's `member`-th event between the reads `a` and `b` (`words()`
    /// u64 each): false when not counted (a failed or malformed read, or the group never ran
    /// between them); `scaled` when the group ran only part of the time and the value is
    /// extrapolated (value × enabled / running, rounded).
    bool delta(const std::uint64_t* a, const std::uint64_t* b, std::size_t member,
               std::uint64_t& value, bool& scaled) const {
        const std::size_t n = fds_.size();
        if (a[0] != n || b[0] != n) return false;
        for (std::size_t k = 0; k < ids_.size(); ++k) {
            if (a[4 + 2 * k] != ids_[k] || b[4 + 2 * k] != ids_[k]) return false;
        }
        const std::uint64_t enabled = b[1] - a[1];
        const std::uint64_t running = b[2] - a[2];
        const std::uint64_t dv = b[3 + 2 * member] - a[3 + 2 * member];
        scaled = false;
        if (running >= enabled) {
            value = dv;
            return true;
        }
        if (running == 0) return false;
        __extension__ typedef unsigned __int128 u128;
        const u128 v = (static_cast<u128>(dv) * enabled + running / 2) / running;
        value = v > ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(v);
        scaled = true;
        return true;
    }

private:
    std::vector<int> fds_;
    std::vector<std::size_t> events_;
    std::vector<std::uint64_t> ids_;
};

/// The worker's counters: the groups opened for the last `counters=` list, and the buffers of
/// the current batch's reads.
class Counters {
public:
    /// Open the events of `list` unless it is the list already open.
    void select(const std::string& list) {
        if (opened_ && list == list_) return;
        list_ = list;
        opened_ = true;
        const std::vector<std::size_t> events = parse_counter_list(list);
        std::vector<std::size_t> sw, hw;
        for (const std::size_t e : events) (counter_events()[e].hardware ? hw : sw).push_back(e);
        software_.open(sw);
        hardware_.close();
        // A group with more events than the PMU has counters never runs: drop its last event
        // until it does.
        while (!hw.empty()) {
            hardware_.open(hw);
            if (hardware_.empty() || hardware_.runs()) break;
            const std::size_t dropped = hardware_.events().back();
            hardware_.close();
            hw.erase(std::find(hw.begin(), hw.end(), dropped));
        }
    }

    /// A meter for a batch of `samples` (may throw std::bad_alloc: call it outside the batch).
    Meter meter(std::size_t samples) {
        Meter m;
        sw_reads_.assign(2 * samples * software_.words(), 0);
        hw_reads_.assign(2 * samples * hardware_.words(), 0);
        m.sw_fd = software_.leader();
        m.hw_fd = hardware_.leader();
        m.sw_words = software_.words();
        m.hw_words = hardware_.words();
        m.sw = sw_reads_.data();
        m.hw = hw_reads_.data();
        return m;
    }

    /// The reply's tokens for the batch just read: ` ctr.<event>=v1,v2,…` per event opened
    /// (an empty field where a sample has no value), in the order of counter_events(), then
    /// ` scaled.<event>=0,1,…` for events scaled in at least one sample.
    void append_tokens(std::string& reply, std::size_t samples) const {
        std::string flags;
        for (std::size_t e = 0; e < kCounterEventCount; ++e) {
            const CounterGroup* group = nullptr;
            const std::vector<std::uint64_t>* reads = nullptr;
            std::size_t member = 0;
            for (const auto& [g, r] : {std::make_pair(&software_, &sw_reads_),
                                       std::make_pair(&hardware_, &hw_reads_)}) {
                const auto& evs = g->events();
                const auto it = std::find(evs.begin(), evs.end(), e);
                if (it != evs.end()) {
                    group = g;
                    reads = r;
                    member = static_cast<std::size_t>(it - evs.begin());
                }
            }
            if (group == nullptr) continue;
            const std::size_t w = group->words();
            std::string values;
            std::string scaled_flags;
            bool any_value = false, any_scaled = false;
            for (std::size_t s = 0; s < samples; ++s) {
                const std::uint64_t* a = reads->data() + 2 * s * w;
                std::uint64_t v = 0;
                bool scaled = false;
                if (s) values += ',';
                if (group->delta(a, a + w, member, v, scaled)) {
                    append_u64(values, v);
                    any_value = true;
                }
                any_scaled = any_scaled || scaled;
                if (s) scaled_flags += ',';
                scaled_flags += scaled ? '1' : '0';
            }
            if (!any_value) continue;  // never counted: no token, never a list of zeros
            reply += " ctr.";
            reply += counter_events()[e].name;
            reply += '=';
            reply += values;
            if (any_scaled) {
                flags += " scaled.";
                flags += counter_events()[e].name;
                flags += '=';
                flags += scaled_flags;
            }
        }
        reply += flags;
    }

private:
    std::string list_;
    bool opened_ = false;
    CounterGroup software_, hardware_;
    std::vector<std::uint64_t> sw_reads_, hw_reads_;
};

// ---- Worker protocol -----------------------------------------------------------------------

/// Reads lines from a file descriptor.
class LineReader {
public:
    explicit LineReader(int fd) : fd_(fd) {}
    /// The next line without its '\n'; false at end of input or on a read error.
    bool next(std::string& line) {
        for (;;) {
            const std::size_t nl = buf_.find('\n', pos_);
            if (nl != std::string::npos) {
                line.assign(buf_, pos_, nl - pos_);
                pos_ = nl + 1;
                return true;
            }
            buf_.erase(0, pos_);
            pos_ = 0;
            char chunk[4096];
            const long n = os::read_channel(fd_, chunk, sizeof chunk);
            if (n <= 0) {
                if (buf_.empty()) return false;
                line.swap(buf_);  // a last line without '\n'
                buf_.clear();
                return true;
            }
            buf_.append(chunk, static_cast<std::size_t>(n));
        }
    }

private:
    int fd_;
    std::string buf_;
    std::size_t pos_ = 0;
};

inline bool write_all(int fd, const std::string& s) { return os::write_channel(fd, s); }

inline bool debug_build() {
#if defined(__OPTIMIZE__)
    return false;
#else
    return true;
#endif
}

inline std::string hello_line(const Timer& t) {
    std::string s = "hello " VERNIER_STRINGIFY(VERNIER_PROTOCOL_VERSION) " impl=vernier-cpp/" VERNIER_VERSION;
    s += " timer=";
    s += clock_name(t.kind);
    s += " resolution_ns=";
    append_f64(s, t.resolution_ns);
    s += " overhead_ns=";
    append_f64(s, t.overhead_ns);
    s += " tsc_hz=";
    if (t.kind != ClockKind::monotonic) {
        append_f64(s, std::round(t.tsc_hz));
    } else {
        s += '0';
    }
    s += debug_build() ? " build=debug" : " build=release";
    s += " pid=";
    append_u64(s, os::pid());
    return s;
}

inline std::string probe_line() {
    const std::uint64_t env_bytes = os::environment_bytes();
    int stack_variable = 0;
    do_not_optimize(stack_variable);
    const int cpu = os::current_cpu();
    const bool aslr = !os::aslr_off();
    std::string s = "probe pid=";
    append_u64(s, os::pid());
    s += " cpu=";
    append_u64(s, cpu < 0 ? 0 : static_cast<std::uint64_t>(cpu));
    s += " env_bytes=";
    append_u64(s, env_bytes);
    s += " stack=";
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf,
                                 reinterpret_cast<std::uintptr_t>(&stack_variable), 16);
    s.append(buf, r.ptr);
    s += aslr ? " aslr=1" : " aslr=0";
    return s;
}

inline std::string bad_option(const std::string& tok, const std::string& line) {
    return "error bad option '" + tok + "' in '" + line + "'";
}

/// The `mem.` tokens of a `memory=1` reply: one value per sample for each count, or why this
/// process cannot count (docs/protocol.md).
inline void append_memory_tokens(std::string& reply, const std::vector<AllocCounts>& mem) {
    if (!alloc_counts_reader()) {
        reply += " mem.unavailable=" +
                 encode_name("the runner's interposer is not loaded in this process "
                             "(vernier_alloc_counts_read not found)");
        return;
    }
    const std::pair<const char*, std::uint64_t AllocCounts::*> fields[] = {
        {" mem.allocs=", &AllocCounts::allocs},
        {" mem.bytes=", &AllocCounts::bytes},
        {" mem.frees=", &AllocCounts::frees},
        {" mem.freed_bytes=", &AllocCounts::freed_bytes}};
    for (const auto& f : fields) {
        reply += f.first;
        for (std::size_t i = 0; i < mem.size(); ++i) {
            if (i) reply += ',';
            append_u64(reply, mem[i].*f.second);
        }
    }
}

/// What a worker keeps from one command to the next.
struct WorkerState {
    /// The last batch's times.
    std::vector<std::uint64_t> ns;
    /// The counters of the last `counters=` list.
    Counters counters;
    /// The buffer `cache=cold` walks before each sample.
    Evictor evictor;
    /// The last batch's allocation counts (`memory=1`).
    std::vector<AllocCounts> mem;
};

/// A command line from the runner, and its tokens.
struct CommandLine {
    std::string line;
    std::vector<std::string> toks;
};

/// `hello VERSION`: this worker's hello line, or why it cannot speak that version.
inline std::string hello_reply(const Timer& timer, const CommandLine& c) {
    std::uint64_t v = 0;
    if (c.toks.size() < 2 || !parse_u64(c.toks[1], v))
        return bad_option(c.toks.size() < 2 ? std::string() : c.toks[1], c.line);
    if (v != VERNIER_PROTOCOL_VERSION) {
        std::string reply = "error unsupported protocol version ";
        append_u64(reply, v);
        return reply + " (this worker speaks " VERNIER_STRINGIFY(VERNIER_PROTOCOL_VERSION) ")";
    }
    return hello_line(timer);
}

/// `list`: one `bench` line per benchmark with its options, then `end N`.
inline std::string list_reply() {
    const auto& entries = registry();
    std::string reply;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        reply += "bench ";
        append_u64(reply, i);
        reply += ' ';
        reply += encode_name(entries[i].name);
        if (entries[i].threads > 0) {
            reply += " threads=";
            append_u64(reply, static_cast<std::uint64_t>(entries[i].threads));
        }
        if (entries[i].alloc_free) reply += " alloc_free=1";
        if (entries[i].bytes > 0) {
            reply += " bytes=";
            append_u64(reply, entries[i].bytes);
        } else if (entries[i].items > 0) {
            reply += " items=";
            append_u64(reply, entries[i].items);
        }
        reply += entries[i].fit;
        reply += '\n';
    }
    reply += "end ";
    append_u64(reply, entries.size());
    return reply;
}

/// `loops`: the address of each benchmark's measured loop for the timer in use, then `end N`.
inline std::string loops_reply(const Timer& timer) {
    const auto& entries = registry();
    std::string reply;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        reply += "loop ";
        append_u64(reply, i);
        reply += " addr=0x";
        char buf[24];
        const std::uintptr_t a =
            timer.kind == ClockKind::monotonic ? entries[i].loop_monotonic : entries[i].loop_counter;
        const auto r = std::to_chars(buf, buf + sizeof buf, a, 16);
        reply.append(buf, r.ptr);
        reply += '\n';
    }
    reply += "end ";
    append_u64(reply, entries.size());
    return reply;
}

/// A `run` command's benchmark and options (docs/protocol.md).
struct RunOptions {
    std::size_t index = kEmptyLoop;
    std::uint64_t iters = 0, samples = 0, probe_adds = 0;
    bool counters = false, cold = false, memory = false;
    std::string counter_list;
};

/// One `key=value` option of a `run` command into `o`; false when it is malformed. Options
/// this worker does not know are ignored.
inline bool parse_run_option(const std::string& tok, RunOptions& o) {
    const std::size_t eq = tok.find('=');
    if (eq == std::string::npos) return false;
    const std::string key = tok.substr(0, eq);
    const std::string value = tok.substr(eq + 1);
    if (key == "iters" || key == "samples") {
        std::uint64_t v = 0;
        if (!parse_u64(value, v) || v == 0) return false;
        (key == "iters" ? o.iters : o.samples) = v;
    } else if (key == "counters") {
        o.counters = true;
        o.counter_list = value;
    } else if (key == "memory") {
        o.memory = value == "1";
    } else if (key == "cache") {
        if (value != "hot" && value != "cold") return false;
        o.cold = value == "cold";
    } else if (key == "pin") {
        threads_pinned() = value == "1";
    } else if (key == "probe") {
        if (!parse_u64(value, o.probe_adds) || o.probe_adds == 0 || o.probe_adds > kMaxProbeAdds)
            return false;
    }
    return true;
}

/// `run INDEX|empty key=value…` parsed into `o`; false with the error reply in `reply`. A
/// benchmark that does not exist is said after the options are checked, as the Rust side does.
inline bool parse_run(const CommandLine& c, RunOptions& o, std::string& reply) {
    const auto& toks = c.toks;
    if (toks.size() < 2) {
        reply = bad_option(std::string(), c.line);
        return false;
    }
    std::string missing;
    if (toks[1] != "empty") {
        std::uint64_t i = 0;
        if (!parse_u64(toks[1], i)) {
            reply = bad_option(toks[1], c.line);
            return false;
        }
        const std::size_t n = registry().size();
        if (i < n) {
            o.index = as_size(i);
        } else {
            missing = "error no benchmark ";
            append_u64(missing, i);
            missing += " (there are ";
            append_u64(missing, n);
            missing += ')';
        }
    }
    for (std::size_t t = 2; t < toks.size(); ++t) {
        if (!parse_run_option(toks[t], o)) {
            reply = bad_option(toks[t], c.line);
            return false;
        }
    }
    if (o.iters == 0 || o.samples == 0) {
        reply = bad_option(o.iters == 0 ? "iters" : "samples", c.line);
        return false;
    }
    reply = missing;
    return missing.empty();
}

/// A threaded benchmark's columns of a `samples` reply: each thread's own time, release to
/// finish, and its time on a CPU and run-queue wait over the sample (docs/threads.md).
inline void append_thread_columns(std::string& reply, const Timer& timer, const ThreadedEntry& e,
                                  std::size_t n) {
    reply += " cpus=";
    append_u64(reply, allowed_cpus().size());
    const std::size_t t = static_cast<std::size_t>(e.threads);
    const auto column = [&](const char* field, const std::vector<std::uint64_t>& v,
                            bool ticks_to_ns) {
        for (std::size_t k = 0; k < t; ++k) {
            reply += ' ';
            reply += field;
            reply += '.';
            append_u64(reply, k);
            reply += '=';
            for (std::size_t i = 0; i < n; ++i) {
                if (i) reply += ',';
                const std::size_t at = i * t + k;
                const std::uint64_t x = at < v.size() ? v[at] : 0;
                append_u64(reply, ticks_to_ns ? timer.to_ns(x) : x);
            }
        }
    };
    column("thread_ns", e.ticks, true);
    column("thread_cpu_ns", e.cpu_ns, false);
    if (e.waits_known) column("thread_wait_ns", e.wait_ns, false);
}

/// The core-speed probe's two times, measured before the batch and outside every timed region.
struct ProbeTimes {
    std::uint64_t ns = 0, wide_ns = 0;
};

/// The reply to a batch measured: `samples N ns=…`, then the probe's times, the counters, the
/// threads' columns and the allocation counts, as the options asked for them. Formatting
/// happens only now, after the whole batch.
inline std::string samples_reply(const Timer& timer, const RunOptions& o, WorkerState& state,
                                 const ProbeTimes& probe) {
    const auto& ns = state.ns;
    std::string reply = "samples ";
    append_u64(reply, o.samples);
    reply += " ns=";
    for (std::size_t i = 0; i < ns.size(); ++i) {
        if (i) reply += ',';
        append_u64(reply, ns[i]);
    }
    if (o.probe_adds > 0) {
        reply += " probe_ns=";
        append_u64(reply, probe.ns);
        reply += " wide_ns=";
        append_u64(reply, probe.wide_ns);
    }
    if (o.counters) state.counters.append_tokens(reply, ns.size());
    const auto& entries = registry();
    if (o.index < entries.size() && entries[o.index].threads > 0)
        append_thread_columns(reply, timer,
                              *static_cast<const ThreadedEntry*>(entries[o.index].state.get()),
                              ns.size());
    if (o.memory) append_memory_tokens(reply, state.mem);
    return reply;
}

/// `run`: the batch the options ask for, then its reply (or the error that stopped it).
inline std::string run_reply(const Timer& timer, const CommandLine& c, WorkerState& state) {
    RunOptions o;
    std::string reply, what;
    if (!parse_run(c, o, reply)) return reply;
    const std::size_t samples = as_size(o.samples);
    Meter meter;
    if (o.counters) state.counters.select(o.counter_list);
    if (!guarded(
            [&] {
                state.ns.reserve(samples);
                if (o.counters) meter = state.counters.meter(samples);
            },
            what)) {
        reply = "error cannot allocate ";
        append_u64(reply, o.samples);
        return reply + " samples: " + what;
    }
    ProbeTimes probe;
    if (o.probe_adds > 0) {
        probe.ns = speed_probe(timer, o.probe_adds);
        probe.wide_ns = speed_probe(timer, o.probe_adds, true);
    }
    if (!guarded(
            [&] {
                if (o.memory) state.mem.reserve(samples);
                measure_batch(timer, o.index, o.iters, samples, state.ns, meter,
                              o.cold ? &state.evictor : nullptr, o.memory ? &state.mem : nullptr);
            },
            what)) {
        return "error benchmark " + std::to_string(o.index) + " failed: " + what;
    }
    return samples_reply(timer, o, state, probe);
}

/// Carry out one command line; the reply (without its final '\n') goes to `reply`. Returns
/// false for `quit`.
inline bool handle_command(const Timer& timer, std::string line, std::string& reply,
                           WorkerState& state) {
    while (!line.empty() && is_space(line.back())) line.pop_back();
    CommandLine c{line, split_ws(line)};
    const std::string cmd = c.toks.empty() ? std::string() : c.toks[0];
    if (cmd == "hello") {
        reply = hello_reply(timer, c);
    } else if (cmd == "list") {
        reply = list_reply();
    } else if (cmd == "probe") {
        reply = probe_line();
    } else if (cmd == "loops") {
        reply = loops_reply(timer);
    } else if (cmd == "run") {
        reply = run_reply(timer, c, state);
    } else if (cmd == "quit") {
        reply = "bye";
        return false;
    } else {
        reply = "error unknown command '" + cmd + "'";
    }
    return true;
}

inline int serve(int in_fd, int out_fd) {
    const Timer timer = detect_timer();
    LineReader reader(in_fd);
    std::string line, reply;
    WorkerState state;
    for (;;) {
        if (!reader.next(line)) return 0;  // the runner closed the pipe
        const bool more = handle_command(timer, line, reply, state);
        reply += '\n';
        if (!write_all(out_fd, reply)) return 1;
        if (!more) return 0;
    }
}

/// Parse `VERNIER_FDS=R,W`.
inline bool parse_fds(const char* value, int& in_fd, int& out_fd) {
    const std::string s(value);
    const std::size_t comma = s.find(',');
    if (comma == std::string::npos) return false;
    std::uint64_t r = 0, w = 0;
    if (!parse_u64(s.substr(0, comma), r) || !parse_u64(s.substr(comma + 1), w)) return false;
    if (r > 1000000 || w > 1000000) return false;
    in_fd = static_cast<int>(r);
    out_fd = static_cast<int>(w);
    return true;
}

// ---- Run by hand -----------------------------------------------------------------------------
//
// Run by hand, the program hands itself to the vernier runner (`vernier run -- ./prog`), which
// measures, analyses and reports. Without a runner it prints a quick estimate per benchmark:
// the median of a few samples long enough for the timer, with no warm-up, no interval and no
// analysis beyond one flag: a body whose fastest sample is at the empty loop's time may have
// been optimized away (time alone; the runner counts instructions to be sure).

/// Samples of a quick estimate, and of the empty loop measured before and after each benchmark.
constexpr std::size_t kEstimateSamples = 15;
/// A sample of a quick estimate lasts at least this long (200 µs, below the scheduler's tick)
/// and 1000 times the timer's overhead.
constexpr double kEstimateSampleNs = 200000.0;
/// Upper bound on iterations per sample (a body the compiler removed would double for ever).
constexpr std::uint64_t kMaxIters = std::uint64_t{1} << 40;
/// A body whose fastest sample is within this many ns per iteration of the empty loop's, or
/// within the empty loop's own time again (`kOptimizedAwayLoops`), is flagged as possibly
/// removed: a folded constant's loop runs level with the empty loop on one host and a cycle
/// or so slower on another (by where its code lies), which time alone cannot tell from a
/// cycle of work; the runner counts instructions to decide, this estimate says it cannot.
constexpr double kOptimizedAwayNs = 0.1;
/// The empty loop takes about a cycle or two per iteration: a body within that much again is
/// within a cycle or two of it.
constexpr double kOptimizedAwayLoops = 1.0;

/// A quick estimate of benchmark `index` (kEmptyLoop: the empty loop): ns per iteration.
struct Estimate {
    double median = 0, fastest = 0;
    std::uint64_t iters = 1;
};

/// `kEstimateSamples` samples of `iters` iterations of `index`, summarised.
inline Estimate sample_estimate(const Timer& timer, std::size_t index, std::uint64_t iters) {
    std::vector<std::uint64_t> ns;
    measure_batch(timer, index, iters, kEstimateSamples, ns);
    std::sort(ns.begin(), ns.end());
    const double n = static_cast<double>(iters);
    return Estimate{static_cast<double>(ns[ns.size() / 2]) / n, static_cast<double>(ns[0]) / n,
                    iters};
}

/// Doubles the iterations from 1 until the fastest of three samples lasts the estimate's
/// sample length (one sample an interrupt lengthened does not stop it early), then takes the
/// estimate's samples.
inline Estimate estimate(const Timer& timer, std::size_t index) {
    const double goal_ns = std::max(kEstimateSampleNs, 1000.0 * timer.overhead_ns);
    std::vector<std::uint64_t> ns;
    std::uint64_t iters = 1;
    for (;;) {
        measure_batch(timer, index, iters, 3, ns);
        const std::uint64_t fastest = *std::min_element(ns.begin(), ns.end());
        if (static_cast<double>(fastest) >= goal_ns || iters >= kMaxIters) break;
        iters *= 2;
    }
    return sample_estimate(timer, index, iters);
}

/// `x` with `sig` significant digits (at most 6 decimals).
inline std::string fmt_sig(double x, int sig) {
    int decimals = 0;
    if (x != 0.0 && std::isfinite(x)) {
        decimals = sig - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x))));
    }
    decimals = std::clamp(decimals, 0, 6);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

/// A per-iteration time's unit: ns below 10 µs, µs below 10 ms, ms beyond; `scale` converts
/// nanoseconds to it.
inline const char* time_unit(double median_ns, double& scale) {
    if (median_ns >= 1e7) {
        scale = 1e-6;
        return "ms";
    }
    if (median_ns >= 1e4) {
        scale = 1e-3;
        return "\xc2\xb5s";  // µs, in UTF-8 like the other symbols printed (±, ×)
    }
    scale = 1.0;
    return "ns";
}

inline const char* usage() {
    return "usage: %s [FILTER...] [--time SECONDS | --quick] [--json FILE] [--list] "
           "[--standalone] [--shard K/N]\n"
           "  FILTER         run the benchmarks whose name contains one of these strings\n"
           "  --time S       the runner's measurement budget per benchmark in seconds\n"
           "  --quick        a short run of the runner\n"
           "  --json FILE    write the result file (needs the vernier runner)\n"
           "  --list         print the benchmark names and exit\n"
           "  --standalone   do not use the runner: a quick estimate in this process\n"
           "  --shard K/N    only shard K of N (a stable part of the suite, by a hash of the name)\n"
           "With the vernier runner on the PATH (or named by VERNIER_BIN) the program runs\n"
           "itself through it (`vernier run -- %s`): the measuring, the analysis and the\n"
           "report are the runner's. Without it, or with --standalone, it prints a quick\n"
           "estimate per benchmark (the median of a few samples, no interval).\n";
}

/// The vernier runner to hand a standalone run to: `$VERNIER_BIN`, else `vernier` on the
/// PATH; empty when there is none, or when this process was itself started through it
/// (`VERNIER_SELF_RUN`, so that nothing can loop).
inline std::string find_runner() {
    if (std::getenv("VERNIER_SELF_RUN") != nullptr) return {};
    if (const char* bin = std::getenv("VERNIER_BIN")) {
        if (*bin != '\0') return bin;
    }
    const char* path = std::getenv("PATH");
    if (path == nullptr) return {};
    const std::string dirs = path;
    std::size_t at = 0;
    while (at <= dirs.size()) {
        std::size_t end = dirs.find(os::kPathSeparator, at);
        if (end == std::string::npos) end = dirs.size();
        const std::string dir = end > at ? dirs.substr(at, end - at) : std::string(".");
        const std::string candidate = dir + os::kRunnerFile;
        if (os::is_executable(candidate)) return candidate;
        at = end + 1;
    }
    return {};
}

/// The regular expression that `vernier run --filter` takes for the standalone mode's
/// substrings: each escaped (the regex crate's meta characters), joined by `|`.
inline std::string filter_regex(const std::vector<std::string>& filters) {
    std::string re;
    for (const auto& f : filters) {
        if (!re.empty()) re += '|';
        for (char c : f) {
            if (std::strchr("\\.+*?()|[]{}^$#&-~", c) != nullptr && c != '\0') re += '\\';
            re += c;
        }
    }
    return re;
}

/// Replaces this process with `runner run [OPTIONS] -- <this executable> [PROGRAM_ARGS]`.
/// Returns only when that could not be done, having said why.
inline void run_through(const std::string& runner, const char* prog,
                        const std::vector<std::string>& runner_args,
                        const std::vector<std::string>& program_args = {}) {
    std::string self;
    if (!os::self_path(self)) {
        std::fprintf(stderr, "%s: cannot find this executable's path (%s: %s)\n", prog,
                     os::kSelfPathSource, std::strerror(errno));
        return;
    }
    std::vector<std::string> args{runner, "run"};
    args.insert(args.end(), runner_args.begin(), runner_args.end());
    args.push_back("--");
    args.push_back(self);
    args.insert(args.end(), program_args.begin(), program_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    os::set_env("VERNIER_SELF_RUN", "1");
    std::fflush(stdout);
    os::replace_process(runner.c_str(), argv.data());
    std::fprintf(stderr, "%s: cannot start the runner %s (%s)\n", prog, runner.c_str(),
                 std::strerror(errno));
    os::unset_env("VERNIER_SELF_RUN");
}

/// The shard (1..count) a benchmark belongs to: 1 + FNV-1a-64(name) mod count, the rule
/// every harness and the runner use (`--shard K/N`).
inline std::uint64_t shard_of(const std::string& name, std::uint64_t count) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : name) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return 1 + h % count;
}

/// Parses `K/N` (1 <= K <= N) into `index` and `count`.
inline bool parse_shard(const std::string& v, std::uint64_t& index, std::uint64_t& count) {
    unsigned long long k = 0, n = 0;
    char tail = 0;
    if (std::sscanf(v.c_str(), "%llu/%llu%c", &k, &n, &tail) != 2) return false;
    if (v.empty() || v[0] < '0' || v[0] > '9' || k == 0 || n == 0 || k > n) return false;
    index = k;
    count = n;
    return true;
}

/// The options of a program run by hand (`usage()`), and the runner's options they become.
struct HandOptions {
    bool list = false, in_process = false, quick = false, timed = false;
    std::string json;
    std::vector<std::string> filters, runner_args;
    std::uint64_t shard_index = 0, shard_count = 0;
};

/// What parsing the options of a program run by hand leads to: going on, or exiting with a
/// status (an error said, or the usage printed).
struct Parsed {
    bool go_on = true;
    int status = 0;
};

/// The value of option `opt` at `argv[i]`: attached (`--time=0.2`) or the next argument (then
/// `i` moves past it). False, having said so (as `prog`), when it has none.
inline bool option_value(int argc, char** argv, int& i, const char* prog, const char* opt,
                         std::string& v) {
    const std::string a = argv[i];
    const std::string eq = std::string(opt) + "=";
    if (a.rfind(eq, 0) == 0) {
        v = a.substr(eq.size());
        return true;
    }
    if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", prog, opt);
        return false;
    }
    v = argv[++i];
    return true;
}

/// Whether `a` is option `opt`, alone or with its value attached.
inline bool is_option(const std::string& a, const char* opt) {
    return a == opt || a.rfind(std::string(opt) + "=", 0) == 0;
}

/// `--time`, `--json` or `--shard` at `argv[i]` into `o`; false, having said why, when its
/// value is missing or wrong.
inline bool parse_valued_option(int argc, char** argv, int& i, const char* prog, HandOptions& o) {
    const std::string a = argv[i];
    std::string v;
    if (is_option(a, "--time")) {
        if (!option_value(argc, argv, i, prog, "--time", v)) return false;
        char* end = nullptr;
        const double budget_s = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end != '\0' || !(budget_s > 0) || budget_s > 1e6) {
            std::fprintf(stderr, "%s: bad --time value '%s' (seconds, > 0)\n", prog, v.c_str());
            return false;
        }
        o.timed = true;
        o.runner_args.insert(o.runner_args.end(), {"--time", v});
    } else if (is_option(a, "--json")) {
        if (!option_value(argc, argv, i, prog, "--json", o.json)) return false;
        o.runner_args.insert(o.runner_args.end(), {"--json", o.json});
    } else {
        if (!option_value(argc, argv, i, prog, "--shard", v)) return false;
        if (!parse_shard(v, o.shard_index, o.shard_count)) {
            std::fprintf(stderr, "%s: --shard '%s': expected K/N with 1 <= K <= N\n", prog,
                         v.c_str());
            return false;
        }
        o.runner_args.insert(o.runner_args.end(), {"--shard", v});
    }
    return true;
}

/// The command line of a program run by hand, into `o`.
inline Parsed parse_hand_options(int argc, char** argv, const char* prog, HandOptions& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--list") {
            o.list = true;
        } else if (a == "--standalone") {
            o.in_process = true;
        } else if (a == "--quick") {
            o.quick = true;
            o.runner_args.push_back(a);
        } else if (is_option(a, "--time") || is_option(a, "--json") || is_option(a, "--shard")) {
            if (!parse_valued_option(argc, argv, i, prog, o)) return Parsed{false, 1};
        } else if (a == "-h" || a == "--help") {
            std::printf(usage(), prog, prog);
            return Parsed{false, 0};
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "%s: unknown option '%s'\n", prog, a.c_str());
            std::fprintf(stderr, usage(), prog, prog);
            return Parsed{false, 1};
        } else {
            o.filters.push_back(a);
        }
    }
    if (o.quick && o.timed) {
        std::fprintf(stderr, "%s: --quick and --time are exclusive: give one\n", prog);
        return Parsed{false, 1};
    }
    return Parsed{};
}

/// The registry's benchmarks that the filters (substrings) and the shard keep.
inline std::vector<std::size_t> chosen_benchmarks(const HandOptions& o) {
    const auto& entries = registry();
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        bool match = o.filters.empty();
        for (const auto& f : o.filters) match = match || entries[i].name.find(f) != std::string::npos;
        if (o.shard_count > 0) match = match && shard_of(entries[i].name, o.shard_count) == o.shard_index;
        if (match) chosen.push_back(i);
    }
    return chosen;
}

/// The quick estimate's first lines: the timer, and a warning for a debug build.
inline void print_estimate_head(const Timer& timer) {
    std::printf("vernier-cpp %s, a quick estimate in this process: timer %s", VERNIER_VERSION,
                clock_name(timer.kind));
    if (timer.kind == ClockKind::tsc) std::printf(" at %.4f GHz", timer.tsc_hz / 1e9);
    if (timer.kind == ClockKind::cntvct) std::printf(" at %.1f MHz", timer.tsc_hz / 1e6);
    std::printf("\n");
    if (debug_build()) {
        std::printf("warning: built without optimisation; the figures describe a debug build "
                    "(compile with -O2)\n");
    }
}

/// The quick estimate's line of benchmark `i`, its name padded to `width`; false when it
/// failed (said on the line).
inline bool print_estimate_row(const Timer& timer, std::size_t i, std::size_t width,
                               std::uint64_t empty_iters) {
    std::printf("%-*s  ", static_cast<int>(width), registry()[i].name.c_str());
    std::fflush(stdout);
    // The empty loop just before and just after, the slower kept: it follows the clock
    // frequency of the moment.
    const double empty_before = sample_estimate(timer, kEmptyLoop, empty_iters).fastest;
    Estimate e;
    std::string what;
    if (!guarded([&] { e = estimate(timer, i); }, what)) {
        std::printf("failed: %s\n", what.c_str());
        return false;
    }
    const double empty_ns =
        std::max(empty_before, sample_estimate(timer, kEmptyLoop, empty_iters).fastest);
    double scale = 1.0;
    const char* unit = time_unit(e.median, scale);
    std::printf("T_iter ~ %s %s  (median of %zu samples \xc3\x97 %llu iters; fastest %s %s)",
                fmt_sig(e.median * scale, 3).c_str(), unit, kEstimateSamples,
                static_cast<unsigned long long>(e.iters), fmt_sig(e.fastest * scale, 3).c_str(),
                unit);
    if (e.fastest - empty_ns < std::max(kOptimizedAwayNs, kOptimizedAwayLoops * empty_ns)) {
        std::printf("  optimized away? (time alone: the runner counts instructions under "
                    "callgrind to be sure)");
    }
    std::printf("\n");
    std::fflush(stdout);
    return true;
}

/// The quick estimate of the `chosen` benchmarks in this process; 1 when one failed.
inline int print_estimates(const std::vector<std::size_t>& chosen, const char* prog) {
    const Timer timer = detect_timer();
    print_estimate_head(timer);
    const std::uint64_t empty_iters = estimate(timer, kEmptyLoop).iters;
    std::size_t width = 0;
    for (auto i : chosen) width = std::max(width, registry()[i].name.size());
    int status = 0;
    for (auto i : chosen) {
        if (!print_estimate_row(timer, i, width, empty_iters)) status = 1;
    }
    std::printf("\nquick estimate; for the full analysis install vernier (cargo install --path "
                "crates/vernier-cli) and run `vernier run -- %s`\n",
                prog);
    return status;
}

/// A program run by hand: its options read, then the list, the runner (when there is one),
/// or the quick estimate.
inline int standalone(int argc, char** argv) {
    const char* prog = argc > 0 && argv[0] ? argv[0] : "./prog";
    HandOptions o;
    const Parsed parsed = parse_hand_options(argc, argv, prog, o);
    if (!parsed.go_on) return parsed.status;
    const std::vector<std::size_t> chosen = chosen_benchmarks(o);
    if (o.list) {
        for (auto i : chosen) std::printf("%s\n", registry()[i].name.c_str());
        return 0;
    }
    if (chosen.empty()) {
        std::fprintf(stderr, "%s: no benchmark matches\n", prog);
        return 1;
    }
    const std::string runner = o.in_process ? std::string() : find_runner();
    if (!runner.empty()) {
        if (!o.filters.empty())
            o.runner_args.insert(o.runner_args.end(), {"--filter", filter_regex(o.filters)});
        run_through(runner, prog, o.runner_args);
        std::fprintf(stderr, "%s: a quick estimate in this process instead\n", prog);
    }
    say_notes();
    if (!o.json.empty()) {
        std::fprintf(stderr,
                     "%s: --json needs the vernier runner, which %s: put `vernier` on the PATH "
                     "(cargo install --path crates/vernier-cli) or name it with VERNIER_BIN\n",
                     prog, o.in_process ? "--standalone leaves out" : "was not found");
        return 1;
    }
    return print_estimates(chosen, prog);
}

}  // namespace detail

inline std::uint64_t batch_number() { return detail::current_batch(); }

// ---- Checkpoints (the Rust crate's `vernier::checkpoint`) -----------------------------------

namespace detail {

/// The process's kernel counters at one instant (getrusage).
struct Usage {
    std::uint64_t cpu_ns = 0;
    std::uint64_t page_faults = 0;
    std::uint64_t context_switches = 0;
};

inline Usage usage_now() {
    Usage u;
    os::usage(u.cpu_ns, u.page_faults, u.context_switches);
    return u;
}

struct CheckpointPhase {
    std::string name;
    std::uint64_t ns;
    Usage usage;
};

struct Checkpoints {
    Timer timer = detect_timer();
    bool started = false;
    std::uint64_t t0 = 0;
    Usage u0;
    std::vector<CheckpointPhase> phases;

    std::uint64_t now() const {
#if defined(VERNIER_COUNTER_CLOCK)
        if (timer.kind == kCounterKind) return CounterClock::stop();
#endif
        return monotonic_now_ns();
    }
};

inline Checkpoints& checkpoints() {
    static Checkpoints c;
    return c;
}

inline std::string fmt_duration(double ns) {
    const char* unit = "ns";
    double v = ns;
    if (ns >= 1e9) {
        v = ns / 1e9;
        unit = "s";
    } else if (ns >= 1e6) {
        v = ns / 1e6;
        unit = "ms";
    } else if (ns >= 1e3) {
        v = ns / 1e3;
        unit = "us";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g %s", v, unit);
    return buf;
}

/// A JSON string literal.
inline std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

}  // namespace detail

inline void checkpoint(const char* name) {
    auto& c = detail::checkpoints();
    const std::uint64_t t = c.now();
    const detail::Usage u = detail::usage_now();
    if (c.started) {
        detail::Usage d;
        d.cpu_ns = u.cpu_ns - c.u0.cpu_ns;
        d.page_faults = u.page_faults - c.u0.page_faults;
        d.context_switches = u.context_switches - c.u0.context_switches;
        c.phases.push_back(detail::CheckpointPhase{name, c.timer.to_ns(t - c.t0), d});
    }
    c.started = true;
    c.u0 = u;
    // Read last, so this call's own work is not in the next phase.
    c.t0 = c.now();
}

inline bool checkpoint_summary() {
    auto& c = detail::checkpoints();
    std::uint64_t total = 0;
    std::size_t width = 5;
    for (const auto& p : c.phases) {
        total += p.ns;
        width = std::max(width, p.name.size());
    }
    const int w = static_cast<int>(width);
    std::printf("%-*s  %10s  %6s  %10s  %11s  %8s\n", w, "phase", "time", "share", "cpu",
                "page-faults", "ctx-sw");
    for (const auto& p : c.phases) {
        const double share =
            total ? 100.0 * static_cast<double>(p.ns) / static_cast<double>(total) : 0.0;
        std::printf("%-*s  %10s  %5.1f%%  %10s  %11llu  %8llu\n", w, p.name.c_str(),
                    detail::fmt_duration(static_cast<double>(p.ns)).c_str(), share,
                    detail::fmt_duration(static_cast<double>(p.usage.cpu_ns)).c_str(),
                    static_cast<unsigned long long>(p.usage.page_faults),
                    static_cast<unsigned long long>(p.usage.context_switches));
    }
    const char* timer = detail::clock_name(c.timer.kind);
    std::printf("%-*s  %10s  %5.1f%%   (timer: %s; counters: %s)\n", w, "total",
                detail::fmt_duration(static_cast<double>(total)).c_str(),
                c.phases.empty() ? 0.0 : 100.0, timer, detail::os::kUsageSource);
    std::fflush(stdout);
    const char* path = std::getenv("VERNIER_CHECKPOINTS_JSON");
    if (!path || !*path) return true;
    // The same fields as the Rust crate's `checkpoint::Summary`.
    std::string j = "{\"schema\": 1, \"timer\": \"";
    j += timer;
    j += "\", \"total_ns\": ";
    detail::append_u64(j, total);
    j += ", \"phases\": [";
    for (std::size_t i = 0; i < c.phases.size(); ++i) {
        const auto& p = c.phases[i];
        if (i) j += ", ";
        j += "{\"name\": " + detail::json_string(p.name) + ", \"ns\": ";
        detail::append_u64(j, p.ns);
        j += ", \"share\": ";
        detail::append_f64(
            j, total ? static_cast<double>(p.ns) / static_cast<double>(total) : 0.0);
        j += ", \"counters\": {\"cpu_ns\": ";
        detail::append_u64(j, p.usage.cpu_ns);
        j += ", \"page_faults\": ";
        detail::append_u64(j, p.usage.page_faults);
        j += ", \"context_switches\": ";
        detail::append_u64(j, p.usage.context_switches);
        j += "}}";
    }
    j += "]}\n";
    // A new file beside it, of unpredictable name, created exclusively (a name taken, by a
    // planted link too, is never opened), then renamed into place.
    if (!detail::os::write_replacing(path, j)) {
        std::fprintf(stderr,
                     "vernier: VERNIER_CHECKPOINTS_JSON=%s: cannot write the checkpoints: %s\n",
                     path, std::strerror(errno));
        return false;
    }
    return true;
}

inline int main(int argc, char** argv) {
    if (const char* fds = std::getenv("VERNIER_FDS")) {
        int in_fd = -1, out_fd = -1;
        if (!detail::parse_fds(fds, in_fd, out_fd)) {
            std::fprintf(stderr, "vernier: malformed VERNIER_FDS='%s' (expected R,W)\n", fds);
            return 1;
        }
        detail::say_notes();
        return detail::serve(in_fd, out_fd);
    }
    return detail::standalone(argc, argv);
}

}  // namespace vernier

#endif  // VERNIER_HPP_INCLUDED
