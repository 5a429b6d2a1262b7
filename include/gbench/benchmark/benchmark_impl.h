// benchmark/benchmark_impl.h: the implementation behind benchmark/benchmark.h (Google
// Benchmark's API on Vernier). Included by benchmark.h; not meant to be included alone.
//
// SPDX-License-Identifier: MIT OR Apache-2.0

#ifndef VERNIER_GBENCH_IMPL_H_INCLUDED
#define VERNIER_GBENCH_IMPL_H_INCLUDED

#include <condition_variable>
#include <fcntl.h>
#include <regex.h>
#include <sched.h>
#include <sys/stat.h>

namespace benchmark {
namespace internal {

namespace vd = ::vernier::detail;

// ---- Clock -----------------------------------------------------------------------------------

inline std::uint64_t clock_start(vd::ClockKind k) {
#if defined(VERNIER_COUNTER_CLOCK)
    if (k == vd::kCounterKind) return vd::CounterClock::start();
#endif
    (void)k;
    return vd::MonotonicClock::start();
}

inline std::uint64_t clock_stop(vd::ClockKind k) {
#if defined(VERNIER_COUNTER_CLOCK)
    if (k == vd::kCounterKind) return vd::CounterClock::stop();
#endif
    (void)k;
    return vd::MonotonicClock::stop();
}

/// The timer this process measures with, detected once (the worker's own `serve` detects it
/// again: the two calibrations of the TSC agree to about 1e-5).
inline const vd::Timer& timer() {
    static const vd::Timer t = vd::detect_timer();
    return t;
}

/// Nanoseconds to raw ticks of `timer()` (manual time is given in seconds).
inline std::uint64_t ns_to_ticks(double ns) {
    if (!(ns > 0)) return 0;
    const vd::Timer& t = timer();
    if (t.kind == vd::ClockKind::monotonic) return static_cast<std::uint64_t>(std::llround(ns));
    return static_cast<std::uint64_t>(
        std::llround(ns * 4294967296.0 / static_cast<double>(t.ns_per_tick_q32)));
}

// ---- Settings (command-line flags) ---------------------------------------------------------

struct Settings {
    bool list = false;
    std::string filter = ".";
    double min_time = 0.5;
    bool min_time_given = false;
    IterationCount min_time_iterations = 0;  // `--benchmark_min_time=100x`
    int repetitions = 1;
    bool repetitions_given = false;
    std::string format = "console", out, out_format = "json";
    TimeUnit default_unit = kNanosecond;
    std::vector<std::pair<std::string, std::string>> context;
    std::string executable = "unknown";
    static Settings& get() {
        static Settings s;
        return s;
    }
};

/// Say `text` once on standard error.
inline void note(const std::string& text) {
    static std::mutex m;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> lock(m);
    if (said.insert(text).second) std::fprintf(stderr, "vernier gbench: %s\n", text.c_str());
}

inline bool in_worker() { return std::getenv("VERNIER_FDS") != nullptr; }

// ---- One round's results, shared by the threads of an instance ---------------------------------

/// What the threads of one call (a sample) of an instance share: a barrier at the start and
/// the end of the measured loop (as Google Benchmark has), and the results they add up.
struct Shared {
    int threads = 1;
    std::atomic<int> arrived{0};
    std::atomic<std::uint64_t> generation{0};

    std::mutex m;
    IterationCount iterations = 0;  // all threads
    std::uint64_t ticks_sum = 0;    // each thread's timed ticks, summed
    std::uint64_t cpu_ns = 0;       // each thread's CPU time in its timed region, summed
    double manual_s = 0.0;          // manual time, summed over the threads
    std::int64_t bytes = 0, items = 0, complexity_n = 0;
    UserCounters counters;
    std::string label, error;
    bool failed = false;
    // Each thread's first clock start (after the barrier) and timed ticks.
    std::vector<std::uint64_t> first_start, thread_ticks;

    std::mutex barrier_m;
    std::condition_variable barrier_cv;

    /// All the threads of the call meet here (before and after the measured loop). A thread
    /// spins, yielding its CPU now and then (with more threads than CPUs, a waiting thread
    /// must not hold the CPU of one still running its loop), and blocks after 2 ms (the
    /// pool's own rule: waking a blocked thread takes tens of microseconds).
    void barrier() {
        if (threads <= 1) return;
        const std::uint64_t gen = generation.load(std::memory_order_acquire);
        if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == threads) {
            arrived.store(0, std::memory_order_relaxed);
            {
                std::lock_guard<std::mutex> lock(barrier_m);
                generation.fetch_add(1, std::memory_order_release);
            }
            barrier_cv.notify_all();
            return;
        }
        const std::uint64_t since = vd::monotonic_now_ns();
        unsigned spins = 0;
        while (generation.load(std::memory_order_acquire) == gen) {
            vd::cpu_relax();
            if (++spins % 64 != 0) continue;
            sched_yield();
            if (vd::monotonic_now_ns() - since > vd::kSpinBeforeParkNs) {
                std::unique_lock<std::mutex> lock(barrier_m);
                barrier_cv.wait(lock, [&] {
                    return generation.load(std::memory_order_acquire) != gen;
                });
                break;
            }
        }
    }

    void reset(int n) {
        threads = n;
        arrived.store(0);
        iterations = 0;
        ticks_sum = cpu_ns = 0;
        manual_s = 0.0;
        bytes = items = complexity_n = 0;
        counters.clear();
        label.clear();
        error.clear();
        failed = false;
        first_start.assign(static_cast<std::size_t>(n), 0);
        thread_ticks.assign(static_cast<std::size_t>(n), 0);
    }
};

/// One benchmark as Google Benchmark runs it: a family with one argument list and one thread
/// count.
struct Instance {
    Benchmark* family = nullptr;
    std::vector<std::int64_t> args;
    int threads = 1;
    bool threaded = false;  // the family named thread counts: the name carries `/threads:T`
    std::string name, args_part, run_name_without_args;
    int family_index = 0, per_family_index = 0;
    std::unique_ptr<Shared> shared{new Shared};
    bool read_cpu = false;
    vd::ClockKind clock = vd::ClockKind::monotonic;
    // The runner's threaded entry (a threaded instance), its pool kept between samples.
    std::shared_ptr<vd::ThreadedEntry> threaded_entry;

    /// One thread's call of the benchmark: `iters` iterations as thread `thread`, the
    /// results added to `shared`. Returns the thread's timed ticks (manual time converted),
    /// scaled to `iters` iterations when a batch ran more.
    std::uint64_t call(vd::ClockKind kind, std::uint64_t iters, int thread,
                       const vd::Meter* meter, std::size_t sample) {
        State st(static_cast<IterationCount>(iters), args, thread, threads);
        st.clock_ = kind;
        st.meter_ = meter;
        st.sample_ = sample;
        st.read_cpu_ = read_cpu;
        st.shared_ = shared.get();
        st.instance_ = this;
        family->Run(st);
        std::uint64_t t = family->manual_time_ ? ns_to_ticks(st.manual_s_ * 1e9) : st.ticks_;
        const IterationCount done = st.iterations();
        if (!st.error_occurred_ && done > 0 && static_cast<std::uint64_t>(done) != iters) {
            t = static_cast<std::uint64_t>(static_cast<long double>(t) *
                                           static_cast<long double>(iters) /
                                           static_cast<long double>(done));
        }
        std::lock_guard<std::mutex> lock(shared->m);
        Shared& r = *shared;
        const auto k = static_cast<std::size_t>(thread);
        if (k < r.first_start.size()) {
            r.first_start[k] = st.first_start_;
            r.thread_ticks[k] = t;
        }
        if (st.error_occurred_) {
            r.failed = true;
            if (r.error.empty()) r.error = "skipped with error: " + st.error_;
        } else if (!st.started_ || !st.finished_) {
            r.failed = true;
            if (r.error.empty())
                r.error = "the benchmark returned before its loop ended (a benchmark must run "
                          "`for (auto _ : state)` or `while (state.KeepRunning())` to the end)";
        }
        r.iterations += done;
        r.ticks_sum += st.ticks_;
        r.cpu_ns += st.cpu_ns_;
        r.manual_s += st.manual_s_;
        r.bytes += st.bytes_;
        r.items += st.items_;
        if (st.complexity_n_ != 0) r.complexity_n = st.complexity_n_;
        for (const auto& kv : st.counters) {
            if (kv.first == "bytes_per_second" || kv.first == "items_per_second") continue;
            auto it = r.counters.find(kv.first);
            if (it == r.counters.end()) {
                r.counters.emplace(kv.first, kv.second);
            } else {
                it->second.value += kv.second.value;
            }
        }
        if (!st.label_.empty()) r.label = st.label_;
        return t;
    }

    void setup() {
        if (family->setup_) {
            State st(1, args, 0, threads);
            st.instance_ = this;
            family->setup_(st);
        }
    }
    void teardown() {
        if (family->teardown_) {
            State st(1, args, 0, threads);
            st.instance_ = this;
            family->teardown_(st);
        }
    }

    /// A failed round becomes the benchmark's failure (the runner names it).
    void throw_if_failed() {
        if (!shared->failed) return;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
        throw std::runtime_error(shared->error);
#else
        std::fprintf(stderr, "vernier gbench: %s: %s\n", name.c_str(), shared->error.c_str());
        std::abort();
#endif
    }

    /// One sample: `iters` iterations on each of the instance's threads (Setup/Teardown
    /// around, outside the clock); the sample's ticks into `*ticks`. With threads, the
    /// sample's time is the last thread's, from the release (docs/threads.md).
    void sample(vd::ClockKind kind, std::uint64_t iters, std::uint64_t* ticks,
                const vd::Meter& meter, std::size_t s) {
        shared->reset(threads);
        setup();
        if (!threaded) {
            *ticks = call(kind, iters, 0, &meter, s);
        } else {
            vd::Meter m = meter;
            if (m.sw) m.sw += 2 * s * m.sw_words;
            if (m.hw) m.hw += 2 * s * m.hw_words;
            vd::run_threaded(threaded_entry.get(), kind, iters, 1, ticks, m);
            // Each thread's time from the moment the barrier let the threads start (the
            // first of their clock starts) to its finish, its paused time left out: the
            // sample's time is the last thread's.
            const Shared& r = *shared;
            std::uint64_t base = ~std::uint64_t{0};
            for (std::uint64_t f : r.first_start)
                if (f != 0) base = std::min(base, f);
            auto& per_thread = threaded_entry->ticks;
            const auto n = static_cast<std::size_t>(threads);
            if (base != ~std::uint64_t{0} && per_thread.size() >= n) {
                std::uint64_t last = 0;
                for (std::size_t k = 0; k < n; ++k) {
                    const std::uint64_t f = r.first_start[k] ? r.first_start[k] : base;
                    const std::uint64_t t = f - base + r.thread_ticks[k];
                    per_thread[per_thread.size() - n + k] = t;
                    last = std::max(last, t);
                }
                *ticks = last;
            }
        }
        teardown();
        throw_if_failed();
    }
};

/// The pool's per-thread loop for a threaded instance: the thread's call of the benchmark,
/// then its finish as a clock reading: its entry plus its timed ticks (the time it spent
/// outside its measured loop, and paused, is left out, as Google Benchmark leaves it out).
inline std::uint64_t thread_loop(void* body, int thread, std::uint64_t iters, vd::ClockKind clock) {
    Instance& in = *static_cast<Instance*>(body);
    if (iters == 0) return clock_stop(clock);  // the pool's untimed wake-up round
    const std::uint64_t entry = clock_start(clock);
    return entry + in.call(clock, iters, thread, nullptr, 0);  // (rewritten after the round)
}

/// Names the measuring function below: `vernier_measured_loop<LoopClock, Instance>`.
struct LoopClock {};

}  // namespace internal
}  // namespace benchmark

namespace vernier {
namespace detail {
/// A batch of a Google Benchmark instance: its samples, each one call of the benchmark on each
/// of its threads. Named as the header's measured loops are, so that callgrind finds it
/// (`vernier run --instructions`, and the runner's count of a body that may have been
/// optimized away: `--toggle-collect=*vernier_measured_loop*`); the measured loop itself is
/// the benchmark's own `for (auto _ : state)`, inside it.
template <>
VERNIER_LOOP_ATTRIBUTES inline void
vernier_measured_loop<::benchmark::internal::LoopClock, ::benchmark::internal::Instance>(
    ::benchmark::internal::Instance& in, std::uint64_t iters, std::size_t samples,
    std::uint64_t* ticks, const Meter& meter) {
    for (std::size_t s = 0; s < samples; ++s) in.sample(in.clock, iters, ticks + s, meter, s);
}
}  // namespace detail
}  // namespace vernier

namespace benchmark {
namespace internal {

/// The worker's RunFn of an instance: `samples` samples of `iters` iterations.
inline void run_instance(void* state, vd::ClockKind clock, std::uint64_t iters, std::size_t samples,
                         std::uint64_t* ticks, const vd::Meter& meter) {
    Instance& in = *static_cast<Instance*>(state);
    in.clock = clock;
    vd::vernier_measured_loop<LoopClock, Instance>(in, iters, samples, ticks, meter);
}

/// The same for a threaded instance, whose registry state is the ThreadedEntry (the worker's
/// reply reads each thread's times from it).
inline void run_threaded_instance(void* state, vd::ClockKind clock, std::uint64_t iters,
                                  std::size_t samples, std::uint64_t* ticks,
                                  const vd::Meter& meter) {
    auto& e = *static_cast<vd::ThreadedEntry*>(state);
    Instance& in = *static_cast<Instance*>(e.bench->body.get());
    in.clock = clock;
    vd::vernier_measured_loop<LoopClock, Instance>(in, iters, samples, ticks, meter);
}

// ---- Instances -----------------------------------------------------------------------------

inline std::string join_parts(const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts) {
        if (p.empty()) continue;
        if (!s.empty()) s += '/';
        s += p;
    }
    return s;
}

inline std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// Every instance of every family, in Google Benchmark's order and with its names.
inline std::vector<std::unique_ptr<Instance>> all_instances() {
    std::vector<std::unique_ptr<Instance>> out;
    int family_index = 0;
    for (auto& fp : Registry::get().families) {
        Benchmark* f = fp.get();
        if (!f) continue;
        std::vector<std::vector<std::int64_t>> arg_lists = f->args_;
        if (arg_lists.empty()) arg_lists.push_back({});
        const bool threaded = !f->thread_counts_.empty();
        const std::vector<int> counts = threaded ? f->thread_counts_ : std::vector<int>{1};
        int per_family = 0;
        for (const auto& args : arg_lists) {
            std::string a;
            for (std::size_t i = 0; i < args.size(); ++i) {
                if (i) a += '/';
                if (i < f->arg_names_.size() && !f->arg_names_[i].empty())
                    a += f->arg_names_[i] + ":";
                a += std::to_string(args[i]);
            }
            for (int t : counts) {
                auto in = std::make_unique<Instance>();
                in->family = f;
                in->args = args;
                in->threads = t;
                in->threaded = threaded;
                in->args_part = a;
                in->family_index = family_index;
                in->per_family_index = per_family++;
                std::string time_type;
                if (f->process_time_) time_type = "process_time";
                if (f->manual_time_) {
                    time_type += time_type.empty() ? "manual_time" : "/manual_time";
                } else if (f->real_time_) {
                    time_type += time_type.empty() ? "real_time" : "/real_time";
                }
                const std::vector<std::string> rest = {
                    f->min_time_ > 0 ? fmt("min_time:%0.3f", f->min_time_) : std::string(),
                    f->min_warmup_time_ > 0 ? fmt("min_warmup_time:%0.3f", f->min_warmup_time_)
                                            : std::string(),
                    f->iterations_ != 0
                        ? "iterations:" + std::to_string(static_cast<unsigned long>(f->iterations_))
                        : std::string(),
                    f->repetitions_ != 0 ? "repeats:" + std::to_string(f->repetitions_)
                                         : std::string(),
                    time_type,
                    threaded ? "threads:" + std::to_string(t) : std::string()};
                std::vector<std::string> parts = {f->name_, a};
                parts.insert(parts.end(), rest.begin(), rest.end());
                in->name = join_parts(parts);
                std::vector<std::string> no_args = {f->name_};
                no_args.insert(no_args.end(), rest.begin(), rest.end());
                in->run_name_without_args = join_parts(no_args);
                out.push_back(std::move(in));
            }
        }
        ++family_index;
    }
    return out;
}

/// The instances the filter keeps (Google Benchmark's rules: a regular expression searched
/// in the name, `-` in front negates it, `all` or empty is everything, `DISABLED_` names are
/// left out). False with a message when the expression does not compile.
inline bool select_instances(std::vector<std::unique_ptr<Instance>>& all, std::string spec,
                             std::vector<Instance*>& chosen) {
    if (spec.empty() || spec == "all") spec = ".";
    bool negative = false;
    if (spec[0] == '-') {
        negative = true;
        spec.erase(0, 1);
    }
    regex_t re;
    const int rc = regcomp(&re, spec.c_str(), REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &re, msg, sizeof msg);
        std::fprintf(stderr, "Could not compile benchmark re: %s\n", msg);
        return false;
    }
    struct Free {
        regex_t* r;
        ~Free() { regfree(r); }
    } free_re{&re};
    // Family and instance indices count only what is kept, as Google Benchmark's do.
    int next_family = 0, last_family = -1, per_family = 0;
    for (auto& in : all) {
        if (in->name.rfind("DISABLED_", 0) == 0) continue;
        if ((regexec(&re, in->name.c_str(), 0, nullptr, 0) == 0) == negative) continue;
        if (in->family_index != last_family) {
            last_family = in->family_index;
            per_family = 0;
            in->family_index = next_family++;
        } else {
            in->family_index = next_family - 1;
        }
        in->per_family_index = per_family++;
        chosen.push_back(in.get());
    }
    return true;
}

/// The notes a run under the vernier runner gives once: options that have no meaning there.
inline void worker_notes(const std::vector<Instance*>& chosen) {
    for (Instance* in : chosen) {
        const Benchmark& f = *in->family;
        const std::string& n = f.name_;
        if (f.iterations_ != 0)
            note(n + ": Iterations(" + std::to_string(f.iterations_) +
                 ") is not followed: the vernier runner chooses the iterations of each sample");
        if (f.repetitions_ != 0)
            note(n + ": Repetitions() is not followed: the vernier runner chooses the samples and "
                     "processes");
        if (f.min_time_ > 0 || f.min_warmup_time_ > 0)
            note(n + ": MinTime()/MinWarmUpTime() are not followed: the runner's --time budget "
                     "and its warm-up detection apply");
        if (f.process_time_)
            note(n + ": MeasureProcessCPUTime() is not followed: vernier measures wall-clock time");
        if (f.custom_statistics_)
            note(n + ": ComputeStatistics() is not used: the runner computes its own statistics");
        if (in->threaded)
            note("threaded benchmarks: vernier's time per iteration is one thread's (a sample's "
                 "time over one thread's iterations); Google Benchmark's divides by the "
                 "iterations of all threads");
    }
    const Settings& s = Settings::get();
    if (s.repetitions_given)
        note("--benchmark_repetitions is not followed under the vernier runner");
    if (s.min_time_given) note("--benchmark_min_time is not followed: use the runner's --time");
    if (s.format != "console" || !s.out.empty())
        note("--benchmark_format/--benchmark_out are not followed under the vernier runner: "
             "use its --json FILE (and `vernier export --format gbench`)");
}

/// The runner's state file (`VERNIER_STATE_FD`, docs/protocol.md): a file with no name in any
/// directory, shared by every worker process the runner starts, where a program's learned
/// throughputs are kept between its processes (the runner starts several per benchmark, each
/// listing every benchmark). -1 when the runner gave none.
inline int state_fd() {
    const char* v = std::getenv("VERNIER_STATE_FD");
    if (!v || !*v) return -1;
    char* end = nullptr;
    const long fd = std::strtol(v, &end, 10);
    if (*end != '\0' || fd < 0 || fd > 1000000) return -1;
    struct stat st {};
    if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return static_cast<int>(fd);
}

/// This executable in the state file, which every program the runner starts shares: a hash of
/// its path, size and modification time (a rebuilt program learns again). "" when unknown.
inline std::string executable_key() {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return {};
    exe[n] = '\0';
    struct stat st {};
    if (::stat(exe, &st) != 0) return {};
    std::string key = exe;
    key += '|' + std::to_string(static_cast<long long>(st.st_size)) + '|' +
           std::to_string(static_cast<long long>(st.st_mtim.tv_sec)) + '.' +
           std::to_string(static_cast<long long>(st.st_mtim.tv_nsec));
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : key) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

/// The state file locked for this process (a POSIX record lock on the whole file: the
/// workers of a comparison start at once), its content read; unlocked when destroyed.
struct LockedState {
    int fd = -1;
    std::string text;
    explicit LockedState(int f) {
        if (f < 0) return;
        struct flock lk {};
        lk.l_type = F_WRLCK;
        lk.l_whence = SEEK_SET;
        int rc;
        while ((rc = ::fcntl(f, F_SETLKW, &lk)) != 0 && errno == EINTR) {
        }
        if (rc != 0) return;
        fd = f;
        char buf[4096];
        for (;;) {
            const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(text.size()));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
        }
    }
    /// Add `lines` at the end of the file.
    void append(const std::string& lines) {
        std::size_t done = 0;
        while (fd >= 0 && done < lines.size()) {
            const ssize_t n = ::pwrite(fd, lines.data() + done, lines.size() - done,
                                       static_cast<off_t>(text.size() + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
    }
    ~LockedState() {
        if (fd < 0) return;
        struct flock lk {};
        lk.l_type = F_UNLCK;
        lk.l_whence = SEEK_SET;
        ::fcntl(fd, F_SETLK, &lk);
    }
    LockedState(const LockedState&) = delete;
    LockedState& operator=(const LockedState&) = delete;
};

/// Whether this process runs under valgrind (the runner counts instructions there: the
/// throughput is not needed, and learning it would cost 50 times as much).
inline bool under_valgrind() {
    const char* p = std::getenv("LD_PRELOAD");
    return p && std::strstr(p, "vgpreload") != nullptr;
}

/// A worker's list carries each benchmark's work per iteration, but Google Benchmark
/// programs declare it after their loop (`SetBytesProcessed(state.iterations() * n)`): each
/// single-threaded benchmark is called once at 1 and at 2 iterations at start-up to learn it
/// (at 1 alone when that call takes over 50 ms: the work is then taken to grow with the
/// iterations, as it does in the usual form). The same call gives its `SetComplexityN`.
/// Returns "bytes items n" (per iteration; n 0 when not set), or "" when the benchmark could
/// not be called.
inline std::string learn_throughput(Instance& in, bool& labelled) {
    if (in.threaded) return "0 0 0";
    std::int64_t bytes[2] = {0, 0}, items[2] = {0, 0}, complexity_n = 0;
    int calls = 2;
    for (int k = 0; k < calls; ++k) {
        std::string what;
        const std::uint64_t t0 = vd::monotonic_now_ns();
        const bool ok = vd::guarded(
            [&] {
                in.shared->reset(1);
                in.setup();
                in.call(timer().kind, static_cast<std::uint64_t>(k + 1), 0, nullptr, 0);
                in.teardown();
            },
            what);
        if (!ok || in.shared->failed) return "";
        bytes[k] = in.shared->bytes;
        items[k] = in.shared->items;
        if (k == 0) complexity_n = in.shared->complexity_n;
        labelled = labelled || !in.shared->label.empty() || !in.shared->counters.empty();
        if (k == 0 && vd::monotonic_now_ns() - t0 > 50000000) {
            calls = 1;
            bytes[1] = 2 * bytes[0];
            items[1] = 2 * items[0];
        }
    }
    const auto per_iter = [&](const std::int64_t v[2], const char* what) -> std::uint64_t {
        if (v[0] == 0 && v[1] == 0) return 0;
        if (v[0] > 0 && v[1] == 2 * v[0]) return static_cast<std::uint64_t>(v[0]);
        note(in.name + ": the " + what +
             " it declares do not grow with its iterations: no rate is given for it");
        return 0;
    };
    const std::uint64_t b = per_iter(bytes, "bytes");
    const std::uint64_t i = b == 0 ? per_iter(items, "items") : 0;
    return std::to_string(b) + " " + std::to_string(i) + " " +
           std::to_string(complexity_n > 0 ? complexity_n : 0);
}

/// The `list` options of an instance whose family asked for a complexity fit (`Complexity`):
/// its family (the name without its arguments, as the `_BigO` row is named), its N
/// (`SetComplexityN`, else its first argument, as when run by hand), and the class it imposes
/// or the value of its lambda at N.
inline std::string complexity_options(const Instance& in, std::int64_t n) {
    const Benchmark& f = *in.family;
    if (f.complexity_ == oNone) return {};
    if (n <= 0 && !in.args.empty()) n = in.args[0];
    if (n <= 0) {
        note(in.name + ": Complexity() without SetComplexityN or an argument: it has no N and is "
                       "left out of the fit");
        return {};
    }
    std::string o = " family=" + vd::encode_name(in.run_name_without_args) +
                    " n=" + std::to_string(n);
    switch (f.complexity_) {
        case o1: return o + " complexity=1";
        case oN: return o + " complexity=N";
        case oNSquared: return o + " complexity=N^2";
        case oNCubed: return o + " complexity=N^3";
        case oLogN: return o + " complexity=lgN";
        case oNLogN: return o + " complexity=NlgN";
        case oLambda: {
            if (!f.complexity_lambda_) return o;
            const double v = f.complexity_lambda_(static_cast<IterationCount>(n));
            if (!(v >= 0 && v <= std::numeric_limits<double>::max())) {
                note(in.name + ": its Complexity(lambda) gives " + std::to_string(v) +
                     " at N = " + std::to_string(n) + ": it is left out of the fit");
                return {};
            }
            return o + vd::complexity_value_option(v);
        }
        default: return o;
    }
}

/// Each chosen instance's bytes and items per iteration, from the runner's state file when an
/// earlier process of this executable learned them, else learned here (and added to it).
/// Without a state file (an older runner), every process learns them.
inline void set_throughputs(std::vector<Instance*>& chosen, std::vector<vd::Entry*>& entries) {
    if (under_valgrind()) {
        for (std::size_t k = 0; k < chosen.size(); ++k)
            entries[k]->fit = complexity_options(*chosen[k], 0);
        return;
    }
    const std::string key = executable_key();
    LockedState state(key.empty() ? -1 : state_fd());
    // Lines "<key>\t<name>\t<bytes> <items> <n>", for every program the runner started.
    std::map<std::string, std::string> cache;
    for (std::size_t at = 0; at < state.text.size();) {
        std::size_t end = state.text.find('\n', at);
        if (end == std::string::npos) end = state.text.size();
        const std::string l = state.text.substr(at, end - at);
        at = end + 1;
        const std::size_t first = l.find('\t'), last = l.rfind('\t');
        if (first == std::string::npos || last == first || l.compare(0, first, key) != 0) continue;
        cache[l.substr(first + 1, last - first - 1)] = l.substr(last + 1);
    }
    bool labelled = false;
    std::string learned;
    for (std::size_t k = 0; k < chosen.size(); ++k) {
        auto it = cache.find(chosen[k]->name);
        std::string v;
        if (it != cache.end()) {
            v = it->second;
        } else {
            v = learn_throughput(*chosen[k], labelled);
            if (v.empty()) continue;  // it fails: its own run will say why
            cache[chosen[k]->name] = v;
            learned += key + '\t' + chosen[k]->name + '\t' + v + '\n';
        }
        unsigned long long b = 0, i = 0;
        long long n = 0;
        if (std::sscanf(v.c_str(), "%llu %llu %lld", &b, &i, &n) >= 2) {
            entries[k]->bytes = b;
            entries[k]->items = i;
        }
        entries[k]->fit = complexity_options(*chosen[k], n);
    }
    if (labelled)
        note("labels and user counters (SetLabel, state.counters) are shown when the program "
             "runs by hand, not under the vernier runner");
    state.append(learned);
}

/// Under the runner: the chosen instances become the worker's benchmarks, and it serves.
inline int serve(std::vector<Instance*>& chosen) {
    worker_notes(chosen);
    auto& reg = vd::registry();
    std::set<std::string> seen;
    for (Instance* in : chosen) {
        if (!seen.insert(in->name).second)
            note("the name '" + in->name +
                 "' is registered more than once; each is listed and measured as its own "
                 "benchmark");
        if (!in->threaded) {
            reg.push_back(vd::Entry{in->name, std::shared_ptr<void>(in, [](void*) {}),
                                    &run_instance});
            if (auto* fb = dynamic_cast<FunctionBenchmark*>(in->family)) {
                reg.back().loop_counter = reg.back().loop_monotonic = vd::fn_addr(fb->function());
            }
        } else {
            auto bench = std::make_shared<vd::ThreadedBench>();
            bench->body = std::shared_ptr<void>(in, [](void*) {});
            bench->loop = &thread_loop;
            bench->size = in->threads;
            in->threaded_entry = std::make_shared<vd::ThreadedEntry>();
            in->threaded_entry->bench = bench;
            in->threaded_entry->threads = in->threads;
            reg.push_back(vd::Entry{in->name, in->threaded_entry, &run_threaded_instance});
            reg.back().threads = in->threads;
        }
    }
    std::vector<vd::Entry*> entries;
    for (std::size_t k = 0; k < chosen.size(); ++k) entries.push_back(&reg[reg.size() - chosen.size() + k]);
    set_throughputs(chosen, entries);
    char arg0[] = "benchmark";
    char* argv[] = {arg0, nullptr};
    return ::vernier::main(1, argv);
}

// ---- Run by hand: measure in this process, report as Google Benchmark does ------------------

inline double unit_multiplier(TimeUnit u) {
    switch (u) {
        case kSecond: return 1.0;
        case kMillisecond: return 1e3;
        case kMicrosecond: return 1e6;
        case kNanosecond: default: return 1e9;
    }
}

inline const char* unit_name(TimeUnit u) {
    switch (u) {
        case kSecond: return "s";
        case kMillisecond: return "ms";
        case kMicrosecond: return "us";
        case kNanosecond: default: return "ns";
    }
}

/// One row of the report (a repetition, an aggregate or a complexity fit).
struct Row {
    std::string name, run_name, run_type = "iteration", aggregate_name, aggregate_unit = "time";
    const Instance* in = nullptr;
    int repetitions = 1, repetition_index = 0;
    IterationCount iterations = 0;
    double real_s = 0, cpu_s = 0;  // per iteration, seconds
    double bytes_per_s = 0, items_per_s = 0;
    std::vector<std::pair<std::string, Counter>> counters;
    std::string label, error;
    bool failed = false;
    // Complexity rows.
    bool bigo = false, rms = false;
    std::string big_o;
    double coefficient = 0, rms_value = 0;
    std::int64_t complexity_n = 0;
    TimeUnit unit = kNanosecond;
};

/// One repetition of an instance by hand: samples long enough for the timer, taken until
/// the minimum time is spent; the median sample gives the time per iteration.
inline Row measure(Instance& in, int repetition, int repetitions) {
    const Settings& s = Settings::get();
    const Benchmark& f = *in.family;
    const vd::Timer& tm = timer();
    in.read_cpu = true;
    if (in.threaded && !in.threaded_entry) {
        auto bench = std::make_shared<vd::ThreadedBench>();
        bench->body = std::shared_ptr<void>(&in, [](void*) {});
        bench->loop = &thread_loop;
        bench->size = in.threads;
        in.threaded_entry = std::make_shared<vd::ThreadedEntry>();
        in.threaded_entry->bench = bench;
        in.threaded_entry->threads = in.threads;
    }
    Row row;
    row.name = row.run_name = in.name;
    row.in = &in;
    row.repetitions = repetitions;
    row.repetition_index = repetition;
    row.unit = f.unit_set_ ? f.time_unit_ : s.default_unit;
    const double min_time = f.min_time_ > 0 ? f.min_time_ : s.min_time;
    const IterationCount fixed =
        f.iterations_ > 0 ? f.iterations_ : (f.min_time_ > 0 ? 0 : s.min_time_iterations);
    const double goal_ns = std::max(200e3, min_time * 1e9 / 20);
    struct Sample {
        double ns;  // one thread's time (the mean over the threads)
        std::uint64_t iters;
    };
    std::vector<Sample> kept;
    IterationCount iterations = 0;
    std::uint64_t cpu_ns = 0;
    std::int64_t bytes = 0, items = 0;
    double kept_ns = 0;
    std::uint64_t iters = fixed > 0 ? static_cast<std::uint64_t>(fixed) : 1;
    const std::uint64_t started = vd::monotonic_now_ns();
    const vd::Meter no_meter;
    for (;;) {
        std::uint64_t ticks = 0;
        std::string what;
        if (!vd::guarded([&] { in.sample(tm.kind, iters, &ticks, no_meter, 0); }, what)) {
            row.failed = true;
            row.error = what;
            return row;
        }
        const Shared& r = *in.shared;
        double ns = f.manual_time_ ? r.manual_s * 1e9 / in.threads
                                   : tm.to_ns_f64(r.ticks_sum) / in.threads;
        if (!f.manual_time_ && r.iterations > 0 &&
            static_cast<std::uint64_t>(r.iterations) != iters * static_cast<std::uint64_t>(in.threads)) {
            ns = ns * static_cast<double>(iters) * in.threads / static_cast<double>(r.iterations);
        }
        const bool enough = fixed > 0 || ns >= goal_ns || iters >= (std::uint64_t{1} << 40);
        if (enough) {
            kept.push_back(Sample{ns, iters});
            kept_ns += ns;
            iterations += r.iterations;
            cpu_ns += r.cpu_ns;
            bytes += r.bytes;
            items += r.items;
            row.counters.assign(r.counters.begin(), r.counters.end());
            row.label = r.label;
            row.complexity_n = r.complexity_n;
            // Counters as Google Benchmark finishes them, from this sample (rates over its
            // CPU time, or its real or manual time when the benchmark measures that).
            const double secs = (f.real_time_ || f.manual_time_ || r.iterations == 0)
                                    ? ns / 1e9
                                    : static_cast<double>(r.cpu_ns) / 1e9 / in.threads;
            for (auto& kv : row.counters) {
                Counter& c = kv.second;
                double v = c.value;
                if (c.flags & Counter::kIsRate) v = secs > 0 ? v / secs : 0;
                if (c.flags & Counter::kAvgThreads) v /= in.threads;
                if (c.flags & Counter::kIsIterationInvariant) v *= static_cast<double>(r.iterations);
                if (c.flags & Counter::kAvgIterations)
                    v = r.iterations ? v / static_cast<double>(r.iterations) : 0;
                if (c.flags & Counter::kInvert) v = v != 0 ? 1 / v : 0;
                c.value = v;
            }
            if (fixed > 0) break;
            const double wall_s = static_cast<double>(vd::monotonic_now_ns() - started) / 1e9;
            if (kept_ns >= min_time * 1e9 || wall_s > 10 * min_time + 5) break;
        } else {
            const double grow = ns > 0 ? goal_ns * 1.2 / ns : 10.0;
            iters = static_cast<std::uint64_t>(
                static_cast<double>(iters) * std::min(10.0, std::max(2.0, grow)));
        }
    }
    std::vector<double> per_iter;
    for (const auto& k : kept) per_iter.push_back(k.ns / static_cast<double>(k.iters));
    std::sort(per_iter.begin(), per_iter.end());
    const std::size_t n = per_iter.size();
    const double median = n % 2 ? per_iter[n / 2] : (per_iter[n / 2 - 1] + per_iter[n / 2]) / 2;
    // Google Benchmark's figures: one thread's time over the iterations of all threads.
    row.real_s = median / 1e9 / in.threads;
    row.cpu_s = iterations > 0 ? static_cast<double>(cpu_ns) / 1e9 / static_cast<double>(iterations) : 0;
    row.iterations = iterations;
    // Rates over the CPU time, as Google Benchmark gives them (over the real time with
    // UseRealTime, over the manual time with UseManualTime).
    const double rate_s = (f.real_time_ || f.manual_time_) ? row.real_s : row.cpu_s;
    if (iterations > 0 && rate_s > 0) {
        row.bytes_per_s = static_cast<double>(bytes) / static_cast<double>(iterations) / rate_s;
        row.items_per_s = static_cast<double>(items) / static_cast<double>(iterations) / rate_s;
    }
    return row;
}

/// Google Benchmark's aggregates of the repetitions: mean, median, stddev, cv.
inline std::vector<Row> aggregates(const std::vector<Row>& reps) {
    std::vector<Row> out;
    if (reps.size() < 2) return out;
    const auto stat = [&](const char* which, auto get) {
        std::vector<double> v;
        for (const auto& r : reps) v.push_back(get(r));
        const double n = static_cast<double>(v.size());
        double mean = 0;
        for (double x : v) mean += x / n;
        double var = 0;
        for (double x : v) var += (x - mean) * (x - mean);
        const double sd = std::sqrt(var / (n - 1));
        std::vector<double> w = v;
        std::sort(w.begin(), w.end());
        const double med = w.size() % 2 ? w[w.size() / 2] : (w[w.size() / 2 - 1] + w[w.size() / 2]) / 2;
        if (!std::strcmp(which, "mean")) return mean;
        if (!std::strcmp(which, "median")) return med;
        if (!std::strcmp(which, "stddev")) return sd;
        return mean != 0 ? sd / mean : 0.0;
    };
    for (const char* which : {"mean", "median", "stddev", "cv"}) {
        Row a = reps.front();
        a.name = reps.front().run_name + "_" + which;
        a.run_type = "aggregate";
        a.aggregate_name = which;
        a.aggregate_unit = std::strcmp(which, "cv") ? "time" : "percentage";
        a.iterations = static_cast<IterationCount>(reps.size());
        a.real_s = stat(which, [](const Row& r) { return r.real_s; });
        a.cpu_s = stat(which, [](const Row& r) { return r.cpu_s; });
        a.bytes_per_s = stat(which, [](const Row& r) { return r.bytes_per_s; });
        a.items_per_s = stat(which, [](const Row& r) { return r.items_per_s; });
        for (std::size_t k = 0; k < a.counters.size(); ++k) {
            a.counters[k].second.value =
                stat(which, [k](const Row& r) { return k < r.counters.size() ? r.counters[k].second.value : 0.0; });
        }
        a.label.clear();
        out.push_back(a);
    }
    return out;
}

/// Google Benchmark's least-squares fit of `time = c · f(N)` (through the origin) over a
/// family's sizes; with oAuto, the class of least RMS.
inline void fit_complexity(const std::vector<Row>& rows, BigO want, BigOFunc* lambda,
                           std::vector<Row>& out) {
    std::vector<double> ns, real, cpu;
    for (const auto& r : rows) {
        if (r.failed) return;
        double n = static_cast<double>(r.complexity_n);
        if (n == 0 && !r.in->args.empty()) n = static_cast<double>(r.in->args[0]);
        ns.push_back(n);
        real.push_back(r.real_s);
        cpu.push_back(r.cpu_s);
    }
    if (ns.size() < 2) return;
    const auto f_of = [lambda](BigO c, double n) {
        switch (c) {
            case oN: return n;
            case oNSquared: return n * n;
            case oNCubed: return n * n * n;
            case oLogN: return std::log2(n);
            case oNLogN: return n * std::log2(n);
            case oLambda: return lambda ? lambda(static_cast<IterationCount>(n)) : 1.0;
            case o1: default: return 1.0;
        }
    };
    const auto fit = [&](BigO c, const std::vector<double>& t, double& coef, double& rms) {
        double sxy = 0, sxx = 0, mean = 0;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const double x = f_of(c, ns[i]);
            sxy += x * t[i];
            sxx += x * x;
            mean += t[i] / static_cast<double>(t.size());
        }
        coef = sxx > 0 ? sxy / sxx : 0;
        double err = 0;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const double d = t[i] - coef * f_of(c, ns[i]);
            err += d * d;
        }
        rms = mean > 0 ? std::sqrt(err / static_cast<double>(t.size())) / mean : 0;
    };
    BigO best = want;
    if (want == oAuto) {
        double best_rms = std::numeric_limits<double>::infinity();
        for (BigO c : {o1, oLogN, oN, oNLogN, oNSquared, oNCubed}) {
            double coef, rms;
            fit(c, cpu, coef, rms);
            if (rms < best_rms) {
                best_rms = rms;
                best = c;
            }
        }
    }
    double real_coef, real_rms, cpu_coef, cpu_rms;
    fit(best, real, real_coef, real_rms);
    fit(best, cpu, cpu_coef, cpu_rms);
    static const char* names[] = {"", "(1)", "N", "N^2", "N^3", "lgN", "NlgN", "", "f(N)"};
    const Row& first = rows.front();
    Row b = first;
    b.name = first.in->run_name_without_args + "_BigO";
    b.run_name = first.in->run_name_without_args;
    b.run_type = "aggregate";
    b.aggregate_name = "BigO";
    b.bigo = true;
    b.big_o = names[best];
    b.real_s = real_coef;
    b.cpu_s = cpu_coef;
    b.counters.clear();
    b.label.clear();
    b.bytes_per_s = b.items_per_s = 0;
    Row r = b;
    r.name = first.in->run_name_without_args + "_RMS";
    r.aggregate_name = "RMS";
    r.aggregate_unit = "percentage";
    r.bigo = false;
    r.rms = true;
    r.real_s = real_rms;
    r.cpu_s = cpu_rms;
    out.push_back(b);
    out.push_back(r);
}

/// `value` with Google Benchmark's SI (or binary) prefixes.
inline std::string human(double value, int one_k) {
    static const char* si[] = {"", "k", "M", "G", "T", "P", "E"};
    static const char* bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i = 0;
    double v = value;
    while (std::fabs(v) >= one_k && i < 6) {
        v /= one_k;
        ++i;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g%s", v, one_k == 1024 ? bin[i] : si[i]);
    return buf;
}

inline std::string format_time(double t) {
    if (t < 1.0) return fmt("%10.3f", t);
    if (t < 10.0) return fmt("%10.2f", t);
    if (t < 100.0) return fmt("%10.1f", t);
    if (t > 9999999999.0) return fmt("%1.4e", t);
    return fmt("%10.0f", t);
}

inline std::string now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm_local{};
    localtime_r(&t, &tm_local);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm_local);
    std::string s = buf;
    if (s.size() > 5) s.insert(s.size() - 2, ":");
    return s;
}

/// The console table, row by row, as Google Benchmark prints it.
struct Console {
    std::FILE* out = stdout;
    int width = 10;
    bool header_done = false;

    void context(const std::vector<Instance*>& chosen, int max_repetitions) {
        for (Instance* in : chosen) width = std::max(width, static_cast<int>(in->name.size()));
        if (max_repetitions > 1) width += 7;  // `_stddev`
        const Settings& s = Settings::get();
        std::fprintf(stderr, "%s\n", now_iso8601().c_str());
        std::fprintf(stderr, "Running %s\n", s.executable.c_str());
        const vd::Timer& tm = timer();
        std::fprintf(stderr, "Run on (%zu X %.2f MHz CPU s)\n", vd::allowed_cpus().size(),
                     tm.kind == vd::ClockKind::tsc ? tm.tsc_hz / 1e6 : 0.0);
        double load[3] = {0, 0, 0};
        if (getloadavg(load, 3) == 3)
            std::fprintf(stderr, "Load Average: %.2f, %.2f, %.2f\n", load[0], load[1], load[2]);
        std::fprintf(stderr,
                     "Measured by vernier-cpp %s in this process (timer %s): each row is the "
                     "median of its samples; `vernier run -- %s` gives intervals and "
                     "diagnostics\n",
                     VERNIER_VERSION, vd::clock_name(tm.kind),
                     s.executable.c_str());
#if !defined(__OPTIMIZE__)
        std::fprintf(stderr, "***WARNING*** The benchmarks were built without optimisation. "
                             "Timings may be affected.\n");
#endif
    }

    void row(const Row& r) {
        if (!header_done) {
            header_done = true;
            char h[512];
            std::snprintf(h, sizeof h, "%-*s %13s %15s %12s", width, "Benchmark", "Time", "CPU",
                          "Iterations");
            const std::string line(std::strlen(h) + 16, '-');
            std::fprintf(out, "%s\n%s UserCounters...\n%s\n", line.c_str(), h, line.c_str());
        }
        std::fprintf(out, "%-*s ", width, r.name.c_str());
        if (r.failed) {
            std::fprintf(out, "ERROR OCCURRED: '%s'\n", r.error.c_str());
            std::fflush(out);
            return;
        }
        const double m = unit_multiplier(r.unit);
        if (r.bigo) {
            std::fprintf(out, "%10.2f %-4s %10.2f %-4s ", r.real_s * m, r.big_o.c_str(),
                         r.cpu_s * m, r.big_o.c_str());
        } else if (r.rms) {
            std::fprintf(out, "%10.0f %-4s %10.0f %-4s ", r.real_s * 100, "%", r.cpu_s * 100, "%");
        } else if (r.aggregate_unit == "percentage") {
            std::fprintf(out, "%10.2f %-4s %10.2f %-4s ", r.real_s * 100, "%", r.cpu_s * 100, "%");
        } else {
            std::fprintf(out, "%s %-4s %s %-4s ", format_time(r.real_s * m).c_str(),
                         unit_name(r.unit), format_time(r.cpu_s * m).c_str(), unit_name(r.unit));
        }
        if (!r.bigo && !r.rms) std::fprintf(out, "%10lld", static_cast<long long>(r.iterations));
        if (r.bytes_per_s > 0)
            std::fprintf(out, " bytes_per_second=%s/s", human(r.bytes_per_s, 1024).c_str());
        if (r.items_per_s > 0)
            std::fprintf(out, " items_per_second=%s/s", human(r.items_per_s, 1000).c_str());
        for (const auto& kv : r.counters) {
            std::fprintf(out, " %s=%s%s", kv.first.c_str(),
                         human(kv.second.value, kv.second.oneK).c_str(),
                         (kv.second.flags & Counter::kIsRate) ? "/s" : "");
        }
        if (!r.label.empty()) std::fprintf(out, " %s", r.label.c_str());
        std::fprintf(out, "\n");
        std::fflush(out);
    }
};

inline std::string json_num(double v) {
    if (!std::isfinite(v)) return "0";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

/// Google Benchmark's JSON: a `context` and the `benchmarks` rows.
inline std::string to_json(const std::vector<Row>& rows) {
    const Settings& s = Settings::get();
    const vd::Timer& tm = timer();
    std::string j = "{\n  \"context\": {\n";
    j += "    \"date\": " + vd::json_string(now_iso8601()) + ",\n";
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    j += "    \"host_name\": " + vd::json_string(host) + ",\n";
    j += "    \"executable\": " + vd::json_string(s.executable) + ",\n";
    j += "    \"num_cpus\": " + std::to_string(vd::allowed_cpus().size()) + ",\n";
    j += "    \"mhz_per_cpu\": " +
         std::to_string(tm.kind == vd::ClockKind::tsc ? std::llround(tm.tsc_hz / 1e6) : 0) + ",\n";
    j += "    \"cpu_scaling_enabled\": false,\n    \"caches\": [],\n";
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    j += "    \"load_avg\": [" + json_num(load[0]) + "," + json_num(load[1]) + "," +
         json_num(load[2]) + "],\n";
    for (const auto& kv : s.context)
        j += "    " + vd::json_string(kv.first) + ": " + vd::json_string(kv.second) + ",\n";
#if defined(__OPTIMIZE__)
    j += "    \"library_build_type\": \"release\",\n";
#else
    j += "    \"library_build_type\": \"debug\",\n";
#endif
    j += "    \"library\": \"vernier-gbench " VERNIER_VERSION "\"\n  },\n  \"benchmarks\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        j += i ? ",\n    {\n" : "\n    {\n";
        const auto field = [&](const char* k, const std::string& v, bool last = false) {
            j += "      \"";
            j += k;
            j += "\": " + v + (last ? "\n" : ",\n");
        };
        field("name", vd::json_string(r.name));
        field("family_index", std::to_string(r.in->family_index));
        field("per_family_instance_index", std::to_string(r.in->per_family_index));
        field("run_name", vd::json_string(r.run_name));
        field("run_type", vd::json_string(r.run_type));
        field("repetitions", std::to_string(r.repetitions));
        if (r.run_type == "iteration") field("repetition_index", std::to_string(r.repetition_index));
        field("threads", std::to_string(r.in->threads));
        if (r.run_type == "aggregate") {
            field("aggregate_name", vd::json_string(r.aggregate_name));
            field("aggregate_unit", vd::json_string(r.aggregate_unit));
        }
        if (r.failed) {
            field("error_occurred", "true");
            field("error_message", vd::json_string(r.error), true);
            j += "    }";
            continue;
        }
        const double m = unit_multiplier(r.unit);
        if (r.bigo) {
            field("cpu_coefficient", json_num(r.cpu_s * m));
            field("real_coefficient", json_num(r.real_s * m));
            field("big_o", vd::json_string(r.big_o));
            field("time_unit", vd::json_string(unit_name(r.unit)), true);
        } else if (r.rms) {
            field("rms", json_num(r.cpu_s), true);
        } else {
            field("iterations", std::to_string(r.iterations));
            const bool pct = r.aggregate_unit == "percentage";
            field("real_time", json_num(pct ? r.real_s : r.real_s * m));
            field("cpu_time", json_num(pct ? r.cpu_s : r.cpu_s * m));
            std::string tail;
            if (r.bytes_per_s > 0) tail += ",\n      \"bytes_per_second\": " + json_num(r.bytes_per_s);
            if (r.items_per_s > 0) tail += ",\n      \"items_per_second\": " + json_num(r.items_per_s);
            if (!r.label.empty()) tail += ",\n      \"label\": " + vd::json_string(r.label);
            for (const auto& kv : r.counters)
                tail += ",\n      " + vd::json_string(kv.first) + ": " + json_num(kv.second.value);
            j += "      \"time_unit\": " + vd::json_string(unit_name(r.unit)) + tail + "\n";
        }
        j += "    }";
    }
    j += "\n  ]\n}\n";
    return j;
}

inline std::string csv_field(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
        if (c == '"') o += "\"\"";
        else o += c;
    }
    return o + "\"";
}

inline std::string to_csv(const std::vector<Row>& rows) {
    std::set<std::string> names;
    for (const auto& r : rows)
        for (const auto& kv : r.counters) names.insert(kv.first);
    std::string c = "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,"
                    "items_per_second,label,error_occurred,error_message";
    for (const auto& n : names) c += "," + csv_field(n);
    c += "\n";
    for (const auto& r : rows) {
        c += csv_field(r.name) + ",";
        if (r.failed) {
            c += std::string(",,,,,,") + ",true," + csv_field(r.error);
            for (std::size_t k = 0; k < names.size(); ++k) c += ",";
            c += "\n";
            continue;
        }
        const double m = unit_multiplier(r.unit);
        c += (r.bigo || r.rms) ? std::string() : std::to_string(r.iterations);
        c += "," + json_num(r.rms ? r.real_s : r.real_s * m) + "," +
             json_num(r.rms ? r.cpu_s : r.cpu_s * m) + ",";
        c += r.bigo ? r.big_o : (r.rms ? std::string() : std::string(unit_name(r.unit)));
        c += "," + (r.bytes_per_s > 0 ? json_num(r.bytes_per_s) : std::string());
        c += "," + (r.items_per_s > 0 ? json_num(r.items_per_s) : std::string());
        c += "," + (r.label.empty() ? std::string() : csv_field(r.label)) + ",,";
        for (const auto& n : names) {
            c += ",";
            for (const auto& kv : r.counters)
                if (kv.first == n) c += json_num(kv.second.value);
        }
        c += "\n";
    }
    return c;
}

inline bool write_file(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return false;
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && ok;
}

inline std::size_t run_by_hand(std::vector<Instance*>& chosen) {
    const Settings& s = Settings::get();
    int max_reps = 1;
    for (Instance* in : chosen) {
        const int reps = in->family->repetitions_ > 0 ? in->family->repetitions_ : s.repetitions;
        max_reps = std::max(max_reps, reps);
        if (in->family->process_time_)
            note(in->family->name_ + ": MeasureProcessCPUTime(): the CPU column is each "
                                     "thread's own CPU time, not the process's");
        if (in->family->custom_statistics_)
            note(in->family->name_ + ": ComputeStatistics() is accepted and not computed");
    }
    Console console;
    const bool json = s.format == "json";
    const bool csv = s.format == "csv";
    if (!json && !csv) console.context(chosen, max_reps);
    std::vector<Row> all;
    std::size_t ran = 0;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        Instance& in = *chosen[i];
        const int reps = in.family->repetitions_ > 0 ? in.family->repetitions_ : s.repetitions;
        std::vector<Row> rows;
        for (int r = 0; r < reps; ++r) {
            rows.push_back(measure(in, r, reps));
            if (!json && !csv) console.row(rows.back());
        }
        ++ran;
        std::vector<Row> aggs = rows.front().failed ? std::vector<Row>() : aggregates(rows);
        if (!json && !csv)
            for (const auto& a : aggs) console.row(a);
        all.insert(all.end(), rows.begin(), rows.end());
        all.insert(all.end(), aggs.begin(), aggs.end());
        // A complexity fit after the last instance of a family (of one thread count).
        const Benchmark* f = in.family;
        if (f->complexity_ != oNone) {
            const bool last = i + 1 == chosen.size() || chosen[i + 1]->family != f ||
                              chosen[i + 1]->run_name_without_args != in.run_name_without_args;
            if (last) {
                std::vector<Row> group, fits;
                for (const auto& r : all)
                    if (r.run_type == "iteration" && r.in->family == f &&
                        r.in->run_name_without_args == in.run_name_without_args && r.repetition_index == 0)
                        group.push_back(r);
                fit_complexity(group, f->complexity_, f->complexity_lambda_, fits);
                for (const auto& r : fits) {
                    if (!json && !csv) console.row(r);
                    all.push_back(r);
                }
            }
        }
    }
    if (json) std::fputs(to_json(all).c_str(), stdout);
    if (csv) std::fputs(to_csv(all).c_str(), stdout);
    if (!s.out.empty()) {
        if (s.out_format == "console")
            note("--benchmark_out_format=console: the file is written as JSON (json and csv are "
                 "the formats written to a file)");
        const std::string text = s.out_format == "csv" ? to_csv(all) : to_json(all);
        if (!write_file(s.out, text)) {
            std::fprintf(stderr, "invalid file name: '%s'\n", s.out.c_str());
            std::exit(1);
        }
    }
    std::fflush(stdout);
    return ran;
}

// ---- Flags -----------------------------------------------------------------------------------

/// `--NAME=VALUE` (or `--NAME` for a boolean): the value, or false when `arg` is not this flag.
inline bool flag_value(const char* arg, const char* name, std::string& value, bool is_bool) {
    const std::string a = arg, f = std::string("--") + name;
    if (a.rfind(f, 0) != 0) return false;
    if (a.size() == f.size()) {
        if (!is_bool) return false;
        value = "true";
        return true;
    }
    if (a[f.size()] != '=') return false;
    value = a.substr(f.size() + 1);
    return true;
}

inline bool parse_bool(const std::string& v) {
    return !(v == "false" || v == "0" || v == "no" || v == "n" || v == "f" || v == "off" || v.empty());
}

inline void usage_and_exit(void (*helper)()) {
    if (helper) {
        helper();
    } else {
        std::fprintf(stdout,
                     "benchmark [--benchmark_list_tests={true|false}]\n"
                     "          [--benchmark_filter=<regex>]\n"
                     "          [--benchmark_min_time=<min_time>]\n"
                     "          [--benchmark_min_warmup_time=<min_warmup_time>]\n"
                     "          [--benchmark_repetitions=<num_repetitions>]\n"
                     "          [--benchmark_enable_random_interleaving={true|false}]\n"
                     "          [--benchmark_report_aggregates_only={true|false}]\n"
                     "          [--benchmark_display_aggregates_only={true|false}]\n"
                     "          [--benchmark_format=<console|json|csv>]\n"
                     "          [--benchmark_out=<filename>]\n"
                     "          [--benchmark_out_format=<json|console|csv>]\n"
                     "          [--benchmark_color={auto|true|false}]\n"
                     "          [--benchmark_counters_tabular={true|false}]\n"
                     "          [--benchmark_context=<key>=<value>,...]\n"
                     "          [--benchmark_time_unit={ns|us|ms|s}]\n"
                     "          [--v=<verbosity>]\n"
                     "(Google Benchmark's flags, on vernier: docs/gbench.md; under `vernier run` "
                     "the runner's options apply)\n");
    }
    std::exit(0);
}

}  // namespace internal

inline void Initialize(int* argc, char** argv, void (*HelperPrintf)()) {
    using namespace internal;
    Settings& s = Settings::get();
    s.executable = (argc && *argc > 0 && argv && argv[0]) ? argv[0] : "unknown";
    for (int i = 1; argc && i < *argc; ++i) {
        std::string v;
        bool known = true;
        if (flag_value(argv[i], "benchmark_list_tests", v, true)) {
            s.list = parse_bool(v);
        } else if (flag_value(argv[i], "benchmark_filter", v, false)) {
            s.filter = v;
        } else if (flag_value(argv[i], "benchmark_min_time", v, false)) {
            s.min_time_given = true;
            char* end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            if (end && *end == 'x') {
                s.min_time_iterations = static_cast<IterationCount>(d);
            } else {
                s.min_time = d > 0 ? d : s.min_time;
            }
        } else if (flag_value(argv[i], "benchmark_min_warmup_time", v, false)) {
        } else if (flag_value(argv[i], "benchmark_repetitions", v, false)) {
            s.repetitions = std::max(1, std::atoi(v.c_str()));
            s.repetitions_given = true;
        } else if (flag_value(argv[i], "benchmark_enable_random_interleaving", v, true) ||
                   flag_value(argv[i], "benchmark_report_aggregates_only", v, true) ||
                   flag_value(argv[i], "benchmark_display_aggregates_only", v, true) ||
                   flag_value(argv[i], "benchmark_color", v, true) ||
                   flag_value(argv[i], "benchmark_counters_tabular", v, true) ||
                   flag_value(argv[i], "benchmark_perf_counters", v, false) ||
                   flag_value(argv[i], "v", v, false)) {
        } else if (flag_value(argv[i], "benchmark_format", v, false)) {
            s.format = v;
        } else if (flag_value(argv[i], "benchmark_out", v, false)) {
            s.out = v;
        } else if (flag_value(argv[i], "benchmark_out_format", v, false)) {
            s.out_format = v;
        } else if (flag_value(argv[i], "benchmark_context", v, false)) {
            std::size_t at = 0;
            while (at <= v.size()) {
                std::size_t comma = v.find(',', at);
                if (comma == std::string::npos) comma = v.size();
                const std::string kv = v.substr(at, comma - at);
                const std::size_t eq = kv.find('=');
                if (eq != std::string::npos) s.context.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
                at = comma + 1;
            }
        } else if (flag_value(argv[i], "benchmark_time_unit", v, false)) {
            if (v == "s") s.default_unit = kSecond;
            else if (v == "ms") s.default_unit = kMillisecond;
            else if (v == "us") s.default_unit = kMicrosecond;
            else if (v == "ns") s.default_unit = kNanosecond;
            else usage_and_exit(HelperPrintf);
        } else {
            known = false;
            std::string h;
            if (flag_value(argv[i], "help", h, true)) usage_and_exit(HelperPrintf);
        }
        if (known) {
            for (int j = i; j + 1 < *argc; ++j) argv[j] = argv[j + 1];
            --*argc;
            --i;
        }
    }
    for (const std::string* f : {&s.format, &s.out_format}) {
        if (*f != "console" && *f != "json" && *f != "csv") usage_and_exit(HelperPrintf);
    }
}

inline std::size_t RunSpecifiedBenchmarks(std::string spec) {
    using namespace internal;
    Settings& s = Settings::get();
    auto all = all_instances();
    std::vector<Instance*> chosen;
    if (!select_instances(all, spec, chosen)) return 0;
    if (s.list) {
        for (Instance* in : chosen) std::printf("%s\n", in->name.c_str());
        std::fflush(stdout);
        return chosen.size();
    }
    if (chosen.empty()) {
        std::fprintf(stderr, "Failed to match any benchmarks against regex: %s\n", spec.c_str());
        return 0;
    }
    if (in_worker()) {
        const int status = serve(chosen);
        std::fflush(stdout);
        if (status != 0) std::exit(status);
        // The instances live until the end of the process: the pools of threaded ones are
        // kept by the registry.
        for (auto& in : all) in.release();
        return chosen.size();
    }
    const std::size_t n = run_by_hand(chosen);
    for (auto& in : all) in.release();
    return n;
}

inline std::size_t RunSpecifiedBenchmarks() {
    return RunSpecifiedBenchmarks(internal::Settings::get().filter);
}

inline std::string GetBenchmarkFilter() { return internal::Settings::get().filter; }
inline void SetBenchmarkFilter(std::string value) { internal::Settings::get().filter = std::move(value); }
inline void SetDefaultTimeUnit(TimeUnit unit) { internal::Settings::get().default_unit = unit; }
inline TimeUnit GetDefaultTimeUnit() { return internal::Settings::get().default_unit; }
inline void AddCustomContext(const std::string& key, const std::string& value) {
    internal::Settings::get().context.emplace_back(key, value);
}

// ---- State ------------------------------------------------------------------------------------

inline State::State(IterationCount max_iters, const std::vector<std::int64_t>& ranges,
                    int thread_i, int n_threads)
    : max_iterations(max_iters), range_(ranges), thread_index_(thread_i), threads_(n_threads) {}

inline std::string State::name() const { return instance_ ? instance_->name : std::string(); }

__attribute__((noinline)) inline void State::StartClock() {
    if (read_cpu_) cpu0_ = ::vernier::detail::ThreadClock::cpu_now();
    t0_ = internal::clock_start(clock_);
    if (first_start_ == 0) first_start_ = t0_;
    running_ = true;
}

__attribute__((noinline)) inline void State::StopClock() {
    const std::uint64_t t1 = internal::clock_stop(clock_);
    ticks_ += t1 - t0_;
    if (read_cpu_) cpu_ns_ += ::vernier::detail::ThreadClock::cpu_now() - cpu0_;
    running_ = false;
}

__attribute__((noinline)) inline void State::StartKeepRunning() {
    if (started_) return;
    started_ = true;
    total_iterations_ = error_occurred_ ? 0 : max_iterations;
    if (shared_) shared_->barrier();
    if (meter_) ::vernier::detail::meter_start(*meter_, sample_);
    if (!error_occurred_) StartClock();
}

__attribute__((noinline)) inline void State::FinishKeepRunning() {
    if (running_) StopClock();
    if (meter_ && !finished_) ::vernier::detail::meter_stop(*meter_, sample_);
    total_iterations_ = 0;
    if (!finished_ && shared_) {
        finished_ = true;
        shared_->barrier();
    }
    finished_ = true;
}

__attribute__((noinline)) inline void State::PauseTiming() {
    if (running_) StopClock();
}

__attribute__((noinline)) inline void State::ResumeTiming() {
    if (!running_ && !error_occurred_ && started_ && !finished_) StartClock();
}

inline void State::SkipWithError(const char* msg) {
    error_occurred_ = true;
    error_ = msg ? msg : "";
    total_iterations_ = 0;
    if (running_) StopClock();
}

inline void State::SetIterationTime(double seconds) { manual_s_ += seconds; }

inline TimeUnit internal::Benchmark::GetTimeUnit() const {
    return unit_set_ ? time_unit_ : internal::Settings::get().default_unit;
}

}  // namespace benchmark

#endif  // VERNIER_GBENCH_IMPL_H_INCLUDED
