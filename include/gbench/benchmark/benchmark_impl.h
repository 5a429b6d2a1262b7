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
/// (`SetComplexityN`, else its first argument), and the class it imposes
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
        note("labels and user counters (SetLabel, state.counters) are not carried: the vernier "
             "runner reports times and the declared rates");
    state.append(learned);
}

/// The chosen instances as the header's benchmarks (the registry that `vernier::main` serves,
/// or estimates by hand); the registry's entries of this call.
inline std::vector<vd::Entry*> register_instances(std::vector<Instance*>& chosen) {
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
    return entries;
}

/// Under the runner: the chosen instances become the worker's benchmarks, and it serves.
inline int serve(std::vector<Instance*>& chosen) {
    worker_notes(chosen);
    std::vector<vd::Entry*> entries = register_instances(chosen);
    set_throughputs(chosen, entries);
    char arg0[] = "benchmark";
    char* argv[] = {arg0, nullptr};
    return ::vernier::main(1, argv);
}

// ---- Run by hand: through the runner, else the header's quick estimate ------------------------
//
// Run by hand, the program hands itself to the vernier runner as vernier.hpp's programs do
// (`vernier run --gbench-format … -- <this program> --benchmark_filter=…`): the runner
// measures, and writes Google Benchmark's table, JSON or CSV and the `--benchmark_out` file
// from its result, with the code of `vernier export --format gbench` (docs/gbench.md). Without
// a runner, the header's quick estimate of each benchmark, said as such.

/// The runner's options that carry this run's Google Benchmark flags.
inline std::vector<std::string> runner_options(const Settings& s) {
    std::vector<std::string> o = {"--gbench-format", s.format};
    if (!s.out.empty()) {
        if (s.out_format == "console")
            note("--benchmark_out_format=console: the file is written as JSON (json and csv are "
                 "the formats written to a file)");
        o.insert(o.end(), {"--gbench-out", s.out, "--gbench-out-format",
                           s.out_format == "csv" ? "csv" : "json"});
    }
    if (s.min_time_given && s.min_time_iterations == 0) {
        o.insert(o.end(), {"--time", fmt("%g", s.min_time)});
        note("--benchmark_min_time is the runner's --time: its budget per benchmark");
    } else if (s.min_time_given) {
        note("--benchmark_min_time=Nx is not followed: the runner chooses the iterations");
    }
    if (s.repetitions_given)
        note("--benchmark_repetitions is not followed: the runner chooses its samples and "
             "processes, and gives an interval instead of aggregates");
    return o;
}

/// Hands this run to the vernier runner. Returns only when there is no runner or it could
/// not be started (having said why).
inline void hand_to_runner(const std::string& spec) {
    const std::string runner = vd::find_runner();
    if (runner.empty()) return;
    const Settings& s = Settings::get();
    vd::run_through(runner, s.executable.c_str(), runner_options(s),
                    {"--benchmark_filter=" + spec});
}

/// Without a runner: the header's quick estimate of each chosen instance (vernier.hpp's
/// standalone mode), said as such. Google Benchmark's table, JSON and CSV are the runner's to
/// write: asked for a JSON or CSV, it says so and returns 1.
inline int estimate_by_hand(std::vector<Instance*>& chosen) {
    const Settings& s = Settings::get();
    std::fprintf(stderr,
                 "vernier gbench: no vernier runner (VERNIER_BIN, or `vernier` on the PATH): a "
                 "quick estimate in this process, not Google Benchmark's table\n");
    if (s.format != "console" || !s.out.empty()) {
        std::fprintf(stderr,
                     "vernier gbench: --benchmark_format=%s%s needs the vernier runner, which "
                     "writes Google Benchmark's JSON and CSV: put `vernier` on the PATH (cargo "
                     "install --path crates/vernier-cli) or name it with VERNIER_BIN\n",
                     s.format.c_str(), s.out.empty() ? "" : " and --benchmark_out");
        return 1;
    }
    register_instances(chosen);
    std::string exe = s.executable, standalone = "--standalone";
    char* argv[] = {&exe[0], &standalone[0], nullptr};
    return vd::standalone(2, argv);
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
    hand_to_runner(spec);
    const int status = estimate_by_hand(chosen);
    std::fflush(stdout);
    if (status != 0) std::exit(status);
    for (auto& in : all) in.release();
    return chosen.size();
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
    t0_ = internal::clock_start(clock_);
    if (first_start_ == 0) first_start_ = t0_;
    running_ = true;
}

__attribute__((noinline)) inline void State::StopClock() {
    const std::uint64_t t1 = internal::clock_stop(clock_);
    ticks_ += t1 - t0_;
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
