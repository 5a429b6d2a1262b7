// benchmark/benchmark.h: Google Benchmark's API on Vernier (include/vernier.hpp).
//
// A program written for Google Benchmark builds unchanged against this header instead of
// libbenchmark:
//
//     g++ -O2 -std=c++17 -I include/gbench -I include bench.cc -o bench -pthread
//
// Under `vernier run -- ./bench` (or `vernier compare`) the program is a Vernier worker: each
// benchmark instance, named as Google Benchmark names it (`BM_x/8`, `BM_x/8/threads:2`), is
// measured by the runner, which chooses the iterations of each sample. Run by hand, it hands
// itself to the runner (`vernier run --gbench-format …`), which prints Google Benchmark's
// table, or its JSON or CSV (`--benchmark_format`), and writes `--benchmark_out=FILE`; without
// a runner it prints the quick estimate of vernier.hpp.
// What is supported and what is not: docs/gbench.md.
//
// Requirements: C++17, GCC or Clang, Linux (those of vernier.hpp). Every function is inline.
//
// SPDX-License-Identifier: MIT OR Apache-2.0

#ifndef BENCHMARK_BENCHMARK_H_
#define BENCHMARK_BENCHMARK_H_
#define VERNIER_GBENCH_H_INCLUDED

#include "vernier.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>

// ---------------------------------------------------------------------------------------------
// Macros Google Benchmark programs use
// ---------------------------------------------------------------------------------------------

#define BENCHMARK_HAS_CXX11
#if __cplusplus >= 201703L
#define BENCHMARK_HAS_CXX17
#endif
#define BENCHMARK_OVERRIDE override
#define BENCHMARK_UNUSED __attribute__((unused))
#define BENCHMARK_ALWAYS_INLINE __attribute__((always_inline))
#define BENCHMARK_NOEXCEPT noexcept
#define BENCHMARK_NOEXCEPT_OP(x) noexcept(x)
#define BENCHMARK_BUILTIN_EXPECT(x, y) __builtin_expect(x, y)
#define BENCHMARK_DEPRECATED_MSG(msg) __attribute__((deprecated(msg)))
#define BENCHMARK_WARNING_MSG(msg)
#define BENCHMARK_UNREACHABLE() __builtin_unreachable()
#define BENCHMARK_EXPORT
#define BENCHMARK_DISALLOW_COPY_AND_ASSIGN(TypeName) \
    TypeName(const TypeName&) = delete;              \
    TypeName& operator=(const TypeName&) = delete

namespace benchmark {

using IterationCount = std::int64_t;

enum TimeUnit { kNanosecond, kMicrosecond, kMillisecond, kSecond };

enum BigO { oNone, o1, oN, oNSquared, oNCubed, oLogN, oNLogN, oAuto, oLambda };

typedef double(BigOFunc)(IterationCount);
typedef double(StatisticsFunc)(const std::vector<double>&);

enum StatisticUnit { kTime, kPercentage };

enum AggregationReportMode : unsigned {
    ARM_Unspecified = 0,
    ARM_Default = 1U << 0U,
    ARM_FileReportAggregatesOnly = 1U << 1U,
    ARM_DisplayReportAggregatesOnly = 1U << 2U,
    ARM_ReportAggregatesOnly = ARM_FileReportAggregatesOnly | ARM_DisplayReportAggregatesOnly
};

/// A user counter (`state.counters["name"] = ...`), with Google Benchmark's flags.
class Counter {
public:
    enum Flags {
        kDefaults = 0,
        kIsRate = 1 << 0,
        kAvgThreads = 1 << 1,
        kAvgThreadsRate = kIsRate | kAvgThreads,
        kIsIterationInvariant = 1 << 2,
        kIsIterationInvariantRate = kIsRate | kIsIterationInvariant,
        kAvgIterations = 1 << 3,
        kAvgIterationsRate = kIsRate | kAvgIterations,
        kInvert = 1 << 31
    };
    enum OneK { kIs1000 = 1000, kIs1024 = 1024 };

    Counter(double v = 0., Flags f = kDefaults, OneK k = kIs1000) : value(v), flags(f), oneK(k) {}

    operator double const&() const { return value; }
    operator double&() { return value; }

    double value;
    Flags flags;
    OneK oneK;
};

inline Counter::Flags operator|(const Counter::Flags& a, const Counter::Flags& b) {
    return static_cast<Counter::Flags>(static_cast<int>(a) | static_cast<int>(b));
}

typedef std::map<std::string, Counter> UserCounters;

/// The optimisation barrier: vernier::do_not_optimize (docs/cpp.md).
template <class Tp>
BENCHMARK_ALWAYS_INLINE inline void DoNotOptimize(Tp&& value) {
    ::vernier::do_not_optimize(std::forward<Tp>(value));
}

BENCHMARK_ALWAYS_INLINE inline void ClobberMemory() { ::vernier::clobber_memory(); }

class State;

namespace internal {
class Benchmark;
struct Instance;
struct Shared;
typedef void(Function)(State&);
}  // namespace internal

// ---------------------------------------------------------------------------------------------
// State: what a benchmark function receives
// ---------------------------------------------------------------------------------------------

class State {
public:
    struct StateIterator;
    friend struct StateIterator;

    // The measured loop: `for (auto _ : state)`. Google Benchmark's own shape (a count kept
    // in the iterator, decremented and tested against zero), so that the loop costs the same.
    BENCHMARK_ALWAYS_INLINE inline StateIterator begin();
    BENCHMARK_ALWAYS_INLINE inline StateIterator end();

    bool KeepRunning() { return KeepRunningInternal(1, false); }
    bool KeepRunningBatch(IterationCount n) { return KeepRunningInternal(n, true); }

    /// Stop the clock (and restart it): each pair reads the clock twice, a few tens of ns on
    /// a TSC (docs/gbench.md); the time between them is left out of the sample.
    void PauseTiming();
    void ResumeTiming();

    void SkipWithError(const char* msg);
    void SkipWithError(const std::string& msg) { SkipWithError(msg.c_str()); }
    bool error_occurred() const { return error_occurred_; }

    /// Google Benchmark's manual time (`UseManualTime`): the sample's time is the sum of these.
    void SetIterationTime(double seconds);

    void SetBytesProcessed(std::int64_t bytes) { counters["bytes_per_second"] = Counter(static_cast<double>(bytes), Counter::kIsRate, Counter::kIs1024); bytes_ = bytes; }
    std::int64_t bytes_processed() const { return bytes_; }
    void SetItemsProcessed(std::int64_t items) { counters["items_per_second"] = Counter(static_cast<double>(items), Counter::kIsRate, Counter::kIs1000); items_ = items; }
    std::int64_t items_processed() const { return items_; }
    void SetComplexityN(std::int64_t n) { complexity_n_ = n; }
    std::int64_t complexity_length_n() const { return complexity_n_; }

    void SetLabel(const char* label) { label_ = label; }
    void SetLabel(const std::string& label) { label_ = label; }

    std::int64_t range(std::size_t pos = 0) const {
        assert(pos < range_.size());
        return range_[pos];
    }
    std::int64_t range_x() const { return range(0); }
    std::int64_t range_y() const { return range(1); }

    IterationCount iterations() const {
        if (BENCHMARK_BUILTIN_EXPECT(!started_, false)) return 0;
        return max_iterations - total_iterations_ + batch_leftover_;
    }

    int thread_index() const { return thread_index_; }
    int threads() const { return threads_; }
    std::string name() const;

private:
    // The loop's count first, as in Google Benchmark: the hot path touches this word only.
    IterationCount total_iterations_ = 0;
    IterationCount batch_leftover_ = 0;

public:
    const IterationCount max_iterations;

private:
    bool started_ = false;
    bool finished_ = false;
    bool error_occurred_ = false;
    bool running_ = false;

    std::vector<std::int64_t> range_;
    std::int64_t bytes_ = 0, items_ = 0, complexity_n_ = 0;
    std::string label_, error_;

public:
    UserCounters counters;

private:
    // The clock: raw ticks of the timer vernier chose (TSC or CLOCK_MONOTONIC).
    ::vernier::detail::ClockKind clock_ = ::vernier::detail::ClockKind::monotonic;
    std::uint64_t t0_ = 0, ticks_ = 0, first_start_ = 0;
    // The thread's CPU time over the timed region (read outside the ticks), when asked.
    double manual_s_ = 0.0;
    // The counters read around the sample (worker, one thread), and the sample's index.
    const ::vernier::detail::Meter* meter_ = nullptr;
    std::size_t sample_ = 0;
    int thread_index_ = 0, threads_ = 1;
    internal::Shared* shared_ = nullptr;
    const internal::Instance* instance_ = nullptr;

    State(IterationCount max_iters, const std::vector<std::int64_t>& ranges, int thread_i,
          int n_threads);

    bool KeepRunningInternal(IterationCount n, bool is_batch);
    void StartKeepRunning();
    void FinishKeepRunning();
    void StartClock();
    void StopClock();

    friend struct internal::Instance;
    friend struct internal::Shared;
    friend class internal::Benchmark;

public:
    struct StateIterator {
        struct BENCHMARK_UNUSED Value {};
        typedef std::forward_iterator_tag iterator_category;
        typedef Value value_type;
        typedef Value reference;
        typedef Value pointer;
        typedef std::ptrdiff_t difference_type;

    private:
        friend class State;
        BENCHMARK_ALWAYS_INLINE StateIterator() : cached_(0), parent_(nullptr) {}
        BENCHMARK_ALWAYS_INLINE explicit StateIterator(State* st)
            : cached_(st->error_occurred_ ? 0 : st->max_iterations), parent_(st) {}

    public:
        BENCHMARK_ALWAYS_INLINE Value operator*() const { return Value(); }
        BENCHMARK_ALWAYS_INLINE StateIterator& operator++() {
            assert(cached_ > 0);
            --cached_;
            return *this;
        }
        BENCHMARK_ALWAYS_INLINE bool operator!=(StateIterator const&) const {
            if (BENCHMARK_BUILTIN_EXPECT(cached_ != 0, true)) return true;
            parent_->FinishKeepRunning();
            return false;
        }

    private:
        IterationCount cached_;
        State* const parent_;
    };
};

BENCHMARK_ALWAYS_INLINE inline State::StateIterator State::begin() {
    StartKeepRunning();
    return StateIterator(this);
}
BENCHMARK_ALWAYS_INLINE inline State::StateIterator State::end() { return StateIterator(); }

inline bool State::KeepRunningInternal(IterationCount n, bool is_batch) {
    if (BENCHMARK_BUILTIN_EXPECT(total_iterations_ >= n, true)) {
        total_iterations_ -= n;
        return true;
    }
    if (!started_) {
        StartKeepRunning();
        if (!error_occurred_ && total_iterations_ >= n) {
            total_iterations_ -= n;
            return true;
        }
    }
    // A batch larger than what is left runs whole: the extra iterations are counted.
    if (is_batch && total_iterations_ != 0) {
        batch_leftover_ = n - total_iterations_;
        total_iterations_ = 0;
        return true;
    }
    FinishKeepRunning();
    return false;
}

// ---------------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------------

namespace internal {

/// A family of benchmarks: one function (or fixture), its arguments, thread counts, options.
class Benchmark {
public:
    virtual ~Benchmark() {}

    Benchmark* Name(const std::string& name) {
        SetName(name);
        return this;
    }
    Benchmark* Arg(std::int64_t x) {
        args_.push_back({x});
        return this;
    }
    Benchmark* Unit(TimeUnit unit) {
        time_unit_ = unit;
        unit_set_ = true;
        return this;
    }
    Benchmark* Range(std::int64_t start, std::int64_t limit) {
        std::vector<std::int64_t> v;
        AddRange(v, start, limit, range_multiplier_);
        for (std::int64_t a : v) args_.push_back({a});
        return this;
    }
    Benchmark* DenseRange(std::int64_t start, std::int64_t limit, int step = 1) {
        if (step < 1) step = 1;
        for (std::int64_t a = start; a <= limit; a += step) args_.push_back({a});
        return this;
    }
    Benchmark* Args(const std::vector<std::int64_t>& args) {
        args_.push_back(args);
        return this;
    }
    Benchmark* ArgPair(std::int64_t x, std::int64_t y) { return Args({x, y}); }
    Benchmark* Ranges(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
        std::vector<std::vector<std::int64_t>> lists(ranges.size());
        for (std::size_t i = 0; i < ranges.size(); ++i)
            AddRange(lists[i], ranges[i].first, ranges[i].second, range_multiplier_);
        return ArgsProduct(lists);
    }
    Benchmark* RangePair(std::int64_t lo1, std::int64_t hi1, std::int64_t lo2, std::int64_t hi2) {
        return Ranges({{lo1, hi1}, {lo2, hi2}});
    }
    /// Every combination, the first argument varying fastest (Google Benchmark's order).
    Benchmark* ArgsProduct(const std::vector<std::vector<std::int64_t>>& lists) {
        std::size_t total = 1;
        for (const auto& l : lists) total *= l.size();
        std::vector<std::size_t> at(lists.size(), 0);
        for (std::size_t n = 0; n < total; ++n) {
            std::vector<std::int64_t> args;
            for (std::size_t k = 0; k < lists.size(); ++k) args.push_back(lists[k][at[k]]);
            args_.push_back(std::move(args));
            for (std::size_t k = 0; k < lists.size(); ++k) {
                if (++at[k] < lists[k].size()) break;
                at[k] = 0;
            }
        }
        return this;
    }
    Benchmark* ArgName(const std::string& name) {
        arg_names_ = {name};
        return this;
    }
    Benchmark* ArgNames(const std::vector<std::string>& names) {
        arg_names_ = names;
        return this;
    }
    Benchmark* Apply(void (*custom_arguments)(Benchmark* benchmark)) {
        custom_arguments(this);
        return this;
    }
    Benchmark* Setup(void (*setup)(const State&)) {
        setup_ = setup;
        return this;
    }
    Benchmark* Teardown(void (*teardown)(const State&)) {
        teardown_ = teardown;
        return this;
    }
    Benchmark* RangeMultiplier(int multiplier) {
        range_multiplier_ = multiplier < 2 ? 2 : multiplier;
        return this;
    }
    Benchmark* MinTime(double t) {
        min_time_ = t;
        return this;
    }
    Benchmark* MinWarmUpTime(double t) {
        min_warmup_time_ = t;
        return this;
    }
    Benchmark* Iterations(IterationCount n) {
        iterations_ = n;
        return this;
    }
    Benchmark* Repetitions(int n) {
        repetitions_ = n;
        return this;
    }
    Benchmark* ReportAggregatesOnly(bool value = true) {
        aggregates_only_ = value;
        return this;
    }
    Benchmark* DisplayAggregatesOnly(bool value = true) {
        aggregates_only_ = value;
        return this;
    }
    Benchmark* MeasureProcessCPUTime() {
        process_time_ = true;
        return this;
    }
    Benchmark* UseRealTime() {
        real_time_ = true;
        return this;
    }
    Benchmark* UseManualTime() {
        manual_time_ = true;
        return this;
    }
    Benchmark* Complexity(BigO complexity = oAuto) {
        complexity_ = complexity;
        return this;
    }
    Benchmark* Complexity(BigOFunc* complexity) {
        complexity_ = oLambda;
        complexity_lambda_ = complexity;
        return this;
    }
    Benchmark* ComputeStatistics(const std::string&, StatisticsFunc*, StatisticUnit = kTime) {
        custom_statistics_ = true;
        return this;
    }
    Benchmark* Threads(int t) {
        thread_counts_.push_back(t < 1 ? 1 : t);
        return this;
    }
    Benchmark* ThreadRange(int min_threads, int max_threads) {
        std::vector<std::int64_t> v;
        AddRange(v, min_threads, max_threads, 2);
        for (std::int64_t t : v) thread_counts_.push_back(static_cast<int>(t));
        return this;
    }
    Benchmark* DenseThreadRange(int min_threads, int max_threads, int stride = 1) {
        if (stride < 1) stride = 1;
        for (int t = min_threads; t < max_threads; t += stride) thread_counts_.push_back(t);
        thread_counts_.push_back(max_threads);
        return this;
    }
    Benchmark* ThreadPerCpu() {
        thread_counts_.push_back(static_cast<int>(::vernier::detail::allowed_cpus().size()));
        return this;
    }

    virtual void Run(State& state) = 0;

    void SetName(const std::string& name) { name_ = name; }
    const std::string& GetName() const { return name_; }
    int ArgsCnt() const {
        return args_.empty() ? (arg_names_.empty() ? -1 : static_cast<int>(arg_names_.size()))
                             : static_cast<int>(args_.front().size());
    }
    TimeUnit GetTimeUnit() const;

    /// Google Benchmark's `Range`: `lo`, the powers of `mult` strictly between (their
    /// negatives for a negative range, and 0 when it is crossed), and `hi`.
    static void AddRange(std::vector<std::int64_t>& dst, std::int64_t lo, std::int64_t hi,
                         int mult) {
        if (hi < lo) std::swap(lo, hi);
        dst.push_back(lo);
        if (lo == hi) return;
        if (lo + 1 == hi) {
            dst.push_back(hi);
            return;
        }
        const std::int64_t lo_in = lo + 1, hi_in = hi - 1;
        const auto powers = [mult](std::int64_t from, std::int64_t to) {
            // Powers of mult in [from, to], 1 <= from <= to.
            std::vector<std::int64_t> p;
            const std::int64_t kmax = std::numeric_limits<std::int64_t>::max();
            for (std::int64_t i = 1; i <= to; i *= mult) {
                if (i >= from) p.push_back(i);
                if (i > kmax / mult) break;
            }
            return p;
        };
        if (lo_in < 0) {
            // Negated powers of mult in [lo_in, min(hi_in, -1)], ascending.
            const std::int64_t a = -std::min<std::int64_t>(hi_in, -1), b = -lo_in;
            std::vector<std::int64_t> p = powers(a, b);
            for (auto it = p.rbegin(); it != p.rend(); ++it) dst.push_back(-*it);
        }
        if (lo < 0 && hi >= 0) dst.push_back(0);
        if (hi_in > 0) {
            for (std::int64_t v : powers(std::max<std::int64_t>(lo_in, 1), hi_in)) dst.push_back(v);
        }
        if (dst.back() != hi) dst.push_back(hi);
    }

protected:
    explicit Benchmark(const std::string& name) : name_(name) {}

public:
    // The family's settings, read by the implementation (not part of Google Benchmark's API).
    std::string name_;
    std::vector<std::vector<std::int64_t>> args_;
    std::vector<std::string> arg_names_;
    std::vector<int> thread_counts_;
    TimeUnit time_unit_ = kNanosecond;
    bool unit_set_ = false;
    int range_multiplier_ = 8;
    double min_time_ = 0.0, min_warmup_time_ = 0.0;
    IterationCount iterations_ = 0;
    int repetitions_ = 0;
    bool aggregates_only_ = false, process_time_ = false, real_time_ = false,
         manual_time_ = false, custom_statistics_ = false;
    BigO complexity_ = oNone;
    BigOFunc* complexity_lambda_ = nullptr;
    void (*setup_)(const State&) = nullptr;
    void (*teardown_)(const State&) = nullptr;
};

class FunctionBenchmark : public Benchmark {
public:
    FunctionBenchmark(const std::string& name, Function* func) : Benchmark(name), func_(func) {}
    void Run(State& st) override { func_(st); }
    Function* function() const { return func_; }

private:
    Function* func_;
};

template <class Lambda>
class LambdaBenchmark : public Benchmark {
public:
    template <class OLambda>
    LambdaBenchmark(const std::string& name, OLambda&& lam)
        : Benchmark(name), lambda_(std::forward<OLambda>(lam)) {}
    void Run(State& st) override { lambda_(st); }

private:
    Lambda lambda_;
};

/// Every family, in registration order (static initialisers of any translation unit).
struct Registry {
    std::vector<std::unique_ptr<Benchmark>> families;
    static Registry& get() {
        static Registry r;
        return r;
    }
};

inline Benchmark* RegisterBenchmarkInternal(Benchmark* b) {
    Registry::get().families.emplace_back(b);
    return b;
}

inline int InitializeStreams() { return 0; }

}  // namespace internal

/// Range's values as a list, for ArgsProduct: `lo`, the powers of `multi` between, `hi`.
inline std::vector<std::int64_t> CreateRange(std::int64_t lo, std::int64_t hi, int multi) {
    std::vector<std::int64_t> v;
    internal::Benchmark::AddRange(v, lo, hi, multi < 2 ? 2 : multi);
    return v;
}

/// DenseRange's values as a list, for ArgsProduct.
inline std::vector<std::int64_t> CreateDenseRange(std::int64_t start, std::int64_t limit, int step) {
    std::vector<std::int64_t> v;
    for (std::int64_t a = start; a <= limit; a += (step < 1 ? 1 : step)) v.push_back(a);
    return v;
}

inline internal::Benchmark* RegisterBenchmark(const std::string& name, internal::Function* fn) {
    return internal::RegisterBenchmarkInternal(new internal::FunctionBenchmark(name, fn));
}

template <class Lambda>
internal::Benchmark* RegisterBenchmark(const std::string& name, Lambda&& fn) {
    using L = std::remove_reference_t<Lambda>;
    return internal::RegisterBenchmarkInternal(
        new internal::LambdaBenchmark<L>(name, std::forward<Lambda>(fn)));
}

template <class Lambda, class... Args>
internal::Benchmark* RegisterBenchmark(const std::string& name, Lambda&& fn, Args&&... args) {
    return RegisterBenchmark(name, [=](State& st) { fn(st, args...); });
}

inline void ClearRegisteredBenchmarks() { internal::Registry::get().families.clear(); }

/// A fixture: `SetUp`/`TearDown` around each call of the benchmark, on each thread.
class Fixture : public internal::Benchmark {
public:
    Fixture() : internal::Benchmark("") {}

    void Run(State& st) override {
        this->SetUp(st);
        this->BenchmarkCase(st);
        this->TearDown(st);
    }

    virtual void SetUp(const State&) {}
    virtual void TearDown(const State&) {}
    virtual void SetUp(State& st) { SetUp(const_cast<const State&>(st)); }
    virtual void TearDown(State& st) { TearDown(const_cast<const State&>(st)); }

protected:
    virtual void BenchmarkCase(State&) = 0;
};

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

inline void Initialize(int* argc, char** argv, void (*HelperPrintf)() = nullptr);
inline void Shutdown() {}
inline bool ReportUnrecognizedArguments(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::fprintf(stderr, "%s: error: unrecognized command-line flag: %s\n", argv[0], argv[i]);
    }
    return argc > 1;
}
inline std::size_t RunSpecifiedBenchmarks();
inline std::size_t RunSpecifiedBenchmarks(std::string spec);
inline std::string GetBenchmarkFilter();
inline void SetBenchmarkFilter(std::string value);
inline std::int32_t GetBenchmarkVerbosity() { return 0; }
inline void SetDefaultTimeUnit(TimeUnit unit);
inline TimeUnit GetDefaultTimeUnit();
inline void AddCustomContext(const std::string& key, const std::string& value);

}  // namespace benchmark

// ---------------------------------------------------------------------------------------------
// Registration macros
// ---------------------------------------------------------------------------------------------

#define BENCHMARK_PRIVATE_UNIQUE_ID __COUNTER__
#define BENCHMARK_PRIVATE_CONCAT2(a, b, c) a##b##c
#define BENCHMARK_PRIVATE_CONCAT(a, b, c) BENCHMARK_PRIVATE_CONCAT2(a, b, c)
#define BENCHMARK_PRIVATE_NAME(...) \
    BENCHMARK_PRIVATE_CONCAT(benchmark_uniq_, BENCHMARK_PRIVATE_UNIQUE_ID, __VA_ARGS__)
#define BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method) BaseClass##_##Method##_Benchmark
#define BENCHMARK_PRIVATE_DECLARE(n) \
    static ::benchmark::internal::Benchmark* BENCHMARK_PRIVATE_NAME(n) BENCHMARK_UNUSED

#define BENCHMARK(...)                                    \
    BENCHMARK_PRIVATE_DECLARE(_benchmark_) =              \
        (::benchmark::internal::RegisterBenchmarkInternal( \
            new ::benchmark::internal::FunctionBenchmark(#__VA_ARGS__, &__VA_ARGS__)))

#define BENCHMARK_WITH_ARG(n, a) BENCHMARK(n)->Arg((a))
#define BENCHMARK_WITH_ARG2(n, a1, a2) BENCHMARK(n)->Args({(a1), (a2)})
#define BENCHMARK_WITH_UNIT(n, t) BENCHMARK(n)->Unit((t))
#define BENCHMARK_RANGE(n, lo, hi) BENCHMARK(n)->Range((lo), (hi))
#define BENCHMARK_RANGE2(n, l1, h1, l2, h2) BENCHMARK(n)->RangePair((l1), (h1), (l2), (h2))

#define BENCHMARK_CAPTURE(func, test_case_name, ...)       \
    BENCHMARK_PRIVATE_DECLARE(func) =                      \
        (::benchmark::internal::RegisterBenchmarkInternal( \
            new ::benchmark::internal::FunctionBenchmark(  \
                #func "/" #test_case_name,                 \
                [](::benchmark::State& st) { func(st, __VA_ARGS__); })))

#define BENCHMARK_TEMPLATE1(n, a)                          \
    BENCHMARK_PRIVATE_DECLARE(n) =                         \
        (::benchmark::internal::RegisterBenchmarkInternal( \
            new ::benchmark::internal::FunctionBenchmark(#n "<" #a ">", n<a>)))

#define BENCHMARK_TEMPLATE2(n, a, b)                       \
    BENCHMARK_PRIVATE_DECLARE(n) =                         \
        (::benchmark::internal::RegisterBenchmarkInternal( \
            new ::benchmark::internal::FunctionBenchmark(#n "<" #a "," #b ">", n<a, b>)))

#define BENCHMARK_TEMPLATE(n, ...)                         \
    BENCHMARK_PRIVATE_DECLARE(n) =                         \
        (::benchmark::internal::RegisterBenchmarkInternal( \
            new ::benchmark::internal::FunctionBenchmark(#n "<" #__VA_ARGS__ ">", n<__VA_ARGS__>)))

#define BENCHMARK_PRIVATE_FIXTURE_CLASS(BaseClass, Method, Base, Name)     \
    class BaseClass##_##Method##_Benchmark : public Base {                 \
    public:                                                                \
        BaseClass##_##Method##_Benchmark() { this->SetName(Name); }        \
                                                                           \
    protected:                                                             \
        virtual void BenchmarkCase(::benchmark::State&) BENCHMARK_OVERRIDE; \
    };

#define BENCHMARK_PRIVATE_DECLARE_F(BaseClass, Method) \
    BENCHMARK_PRIVATE_FIXTURE_CLASS(BaseClass, Method, BaseClass, #BaseClass "/" #Method)
#define BENCHMARK_TEMPLATE1_PRIVATE_DECLARE_F(BaseClass, Method, a) \
    BENCHMARK_PRIVATE_FIXTURE_CLASS(BaseClass, Method, BaseClass<a>, #BaseClass "<" #a ">/" #Method)
#define BENCHMARK_TEMPLATE2_PRIVATE_DECLARE_F(BaseClass, Method, a, b)          \
    class BaseClass##_##Method##_Benchmark : public BaseClass<a, b> {               \
    public:                                                                         \
        BaseClass##_##Method##_Benchmark() {                                        \
            this->SetName(#BaseClass "<" #a "," #b ">/" #Method);                   \
        }                                                                           \
                                                                                    \
    protected:                                                                      \
        virtual void BenchmarkCase(::benchmark::State&) BENCHMARK_OVERRIDE;         \
    };
#define BENCHMARK_TEMPLATE_PRIVATE_DECLARE_F(BaseClass, Method, ...)                        \
    class BaseClass##_##Method##_Benchmark : public BaseClass<__VA_ARGS__> {                 \
    public:                                                                                  \
        BaseClass##_##Method##_Benchmark() {                                                 \
            this->SetName(#BaseClass "<" #__VA_ARGS__ ">/" #Method);                         \
        }                                                                                    \
                                                                                             \
    protected:                                                                               \
        virtual void BenchmarkCase(::benchmark::State&) BENCHMARK_OVERRIDE;                  \
    };

#define BENCHMARK_DEFINE_F(BaseClass, Method)    \
    BENCHMARK_PRIVATE_DECLARE_F(BaseClass, Method) \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase
#define BENCHMARK_TEMPLATE1_DEFINE_F(BaseClass, Method, a)    \
    BENCHMARK_TEMPLATE1_PRIVATE_DECLARE_F(BaseClass, Method, a) \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase
#define BENCHMARK_TEMPLATE2_DEFINE_F(BaseClass, Method, a, b)    \
    BENCHMARK_TEMPLATE2_PRIVATE_DECLARE_F(BaseClass, Method, a, b) \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase
#define BENCHMARK_TEMPLATE_DEFINE_F(BaseClass, Method, ...)            \
    BENCHMARK_TEMPLATE_PRIVATE_DECLARE_F(BaseClass, Method, __VA_ARGS__) \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase

#define BENCHMARK_REGISTER_F(BaseClass, Method) \
    BENCHMARK_PRIVATE_REGISTER_F(BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method))
#define BENCHMARK_PRIVATE_REGISTER_F(TestName) \
    BENCHMARK_PRIVATE_DECLARE(TestName) =      \
        (::benchmark::internal::RegisterBenchmarkInternal(new TestName()))

#define BENCHMARK_F(BaseClass, Method)           \
    BENCHMARK_PRIVATE_DECLARE_F(BaseClass, Method) \
    BENCHMARK_REGISTER_F(BaseClass, Method);       \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase
#define BENCHMARK_TEMPLATE1_F(BaseClass, Method, a)           \
    BENCHMARK_TEMPLATE1_PRIVATE_DECLARE_F(BaseClass, Method, a) \
    BENCHMARK_REGISTER_F(BaseClass, Method);                    \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase
#define BENCHMARK_TEMPLATE2_F(BaseClass, Method, a, b)           \
    BENCHMARK_TEMPLATE2_PRIVATE_DECLARE_F(BaseClass, Method, a, b) \
    BENCHMARK_REGISTER_F(BaseClass, Method);                       \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase
#define BENCHMARK_TEMPLATE_F(BaseClass, Method, ...)                   \
    BENCHMARK_TEMPLATE_PRIVATE_DECLARE_F(BaseClass, Method, __VA_ARGS__) \
    BENCHMARK_REGISTER_F(BaseClass, Method);                             \
    void BENCHMARK_PRIVATE_CONCAT_NAME(BaseClass, Method)::BenchmarkCase

#define BENCHMARK_MAIN()                                                  \
    int main(int argc, char** argv) {                                     \
        char arg0_default[] = "benchmark";                                \
        char* args_default = arg0_default;                                \
        if (!argv) {                                                      \
            argc = 1;                                                     \
            argv = &args_default;                                         \
        }                                                                 \
        ::benchmark::Initialize(&argc, argv);                             \
        if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1; \
        ::benchmark::RunSpecifiedBenchmarks();                            \
        ::benchmark::Shutdown();                                          \
        return 0;                                                         \
    }                                                                     \
    int main(int, char**)

#include "benchmark_impl.h"

#endif  // BENCHMARK_BENCHMARK_H_
