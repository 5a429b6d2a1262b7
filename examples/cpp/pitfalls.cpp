// The experiments of Evgeny Shevkoplyas's talk on performance-testing pitfalls (2015;
// docs/experiments.md), as vernier benchmarks.
//
// Copying an event:
// - "event hot": set_event on one LittleEvent again and again: the event stays in L1.
// - "event cold": set_event into a rotating set of a million LittleEvents (about 1 GiB,
//   allocated once, outside the timing, when the benchmark first runs): every copy misses the
//   caches. The talk's total-time lesson: the hot figure says nothing about the cold one.
// - "little event" / "big event": a 5000-byte message into a rotating set of events whose
//   inline buffer is 1 KiB (the message overflows into a malloc'd buffer) or 10 KiB (it
//   fits). set_event frees the previous overflow buffer, as in the talk's "little event &&
//   free" variant, so memory stays bounded however long the benchmark runs.
//
// Converting a fraction to text ("0.0123" for value 12300, factor 1000000), two digits at a
// time from a lookup table. The two variants differ only in how the last pair is written:
// - "convert nested-if": `if (more) copy two; else if (second digit != '0') copy two; else
//   copy one`;
// - "convert merged-or":  `if (more || second digit != '0') copy two; else copy one`.
// The talk measured them 3x apart. The value advances on every iteration, so the branches
// see all the fractions of [0, 1) in turn.
//
// Environment: EVENTS_COLD (default 1000000) and EVENTS_BIG (default 10000) size the
// rotating sets.

#include "vernier.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace {

template <std::size_t N>
struct Event {
    char data[N];
    char* extra;  // overflow buffer for a message longer than data
};
using LittleEvent = Event<1024>;
using BigEvent = Event<10240>;

template <class E>
void set_event(E& event, const char* msg) {
    const std::size_t size = std::strlen(msg) + 1;
    char* dest = event.data;
    if (size > sizeof(event.data)) {
        std::free(event.extra);
        event.extra = static_cast<char*>(std::malloc(size));
        if (event.extra == nullptr) throw std::bad_alloc();
        dest = event.extra;
    }
    std::memcpy(dest, msg, size);
}

/// A rotating set of events, allocated (zeroed) the first time it is used.
template <class E>
class EventRing {
public:
    explicit EventRing(std::size_t n) : n_(n) {}
    ~EventRing() {
        if (events_) {
            for (std::size_t i = 0; i < n_; ++i) std::free(events_[i].extra);
            std::free(events_);
        }
    }
    EventRing(const EventRing&) = delete;
    EventRing& operator=(const EventRing&) = delete;

    /// Allocate the events and set each one once with `msg`: the pages of the events and of
    /// their overflow buffers are then mapped, so page faults and heap growth (the first
    /// pass's cost) stay out of the measurement.
    void ensure(const std::string& msg) {
        if (events_) return;
        events_ = static_cast<E*>(std::calloc(n_, sizeof(E)));
        if (!events_) throw std::bad_alloc();
        for (std::size_t i = 0; i < n_; ++i) set_event(events_[i], msg.c_str());
    }
    E& next() {
        E& e = events_[pos_];
        if (++pos_ == n_) pos_ = 0;
        return e;
    }

private:
    std::size_t n_;
    std::size_t pos_ = 0;
    E* events_ = nullptr;
};

std::size_t env_size(const char* name, std::size_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    const unsigned long long n = std::strtoull(v, nullptr, 10);
    return n > 0 ? static_cast<std::size_t>(n) : fallback;
}

// "00" "01" ... "99": the two characters of every pair of digits.
struct DigitPairs {
    char text[200];
    constexpr DigitPairs() : text() {
        for (int i = 0; i < 100; ++i) {
            text[2 * i] = static_cast<char>('0' + i / 10);
            text[2 * i + 1] = static_cast<char>('0' + i % 10);
        }
    }
};
constexpr DigitPairs kPairs{};

// Write "0" or "0.<digits of value % scale / scale, trailing zeros dropped>" at out + len;
// `scale` is a power of ten.
void convert_nested_if(char* out, std::size_t& len, std::uint64_t value, std::uint64_t scale) {
    out[len++] = '0';
    std::uint64_t rest = value % scale;
    if (rest == 0) return;
    out[len++] = '.';
    do {
        std::uint64_t pair;
        if (scale >= 100) {
            scale /= 100;
            pair = rest / scale;
            rest %= scale;
        } else if (scale == 10) {
            pair = rest * 10;  // one digit left: "d0"
            rest = 0;
        } else {
            pair = rest;
            rest = 0;
        }
        const char* two = kPairs.text + 2 * pair;
        if (rest != 0) {
            std::memcpy(out + len, two, 2);
            len += 2;
        } else if (two[1] != '0') {
            std::memcpy(out + len, two, 2);
            len += 2;
        } else {
            out[len++] = two[0];
        }
    } while (rest != 0);
}

// The same function with the two "copy two digits" branches merged into one condition.
void convert_merged_or(char* out, std::size_t& len, std::uint64_t value, std::uint64_t scale) {
    out[len++] = '0';
    std::uint64_t rest = value % scale;
    if (rest == 0) return;
    out[len++] = '.';
    do {
        std::uint64_t pair;
        if (scale >= 100) {
            scale /= 100;
            pair = rest / scale;
            rest %= scale;
        } else if (scale == 10) {
            pair = rest * 10;
            rest = 0;
        } else {
            pair = rest;
            rest = 0;
        }
        const char* two = kPairs.text + 2 * pair;
        if (rest != 0 || two[1] != '0') {
            std::memcpy(out + len, two, 2);
            len += 2;
        } else {
            out[len++] = two[0];
        }
    } while (rest != 0);
}

template <class F>
bool converts(F convert, std::uint64_t value, std::uint64_t scale, const char* expected) {
    char buf[32];
    std::size_t len = 0;
    convert(buf, len, value, scale);
    return std::string(buf, len) == expected;
}

}  // namespace

int main(int argc, char** argv) {
    // Both conversions must agree with the definition before they are timed.
    for (auto* convert : {&convert_nested_if, &convert_merged_or}) {
        if (!converts(convert, 12300, 1000000, "0.0123") || !converts(convert, 0, 1000000, "0") ||
            !converts(convert, 5, 1000, "0.005") || !converts(convert, 999999, 1000000, "0.999999") ||
            !converts(convert, 100000, 1000000, "0.1")) {
            std::fprintf(stderr, "pitfalls: convert is wrong\n");
            return 1;
        }
    }

    const std::string small_msg(100, 'a');
    const std::string large_msg(5000, 'b');

    static LittleEvent hot{};
    vernier::bench("event hot", [&] { set_event(hot, small_msg.c_str()); });

    static EventRing<LittleEvent> cold(env_size("EVENTS_COLD", 1000000));
    vernier::bench_setup(
        "event cold", [&] { return (cold.ensure(small_msg), &cold.next()); },
        [&](LittleEvent* e) { set_event(*e, small_msg.c_str()); });

    static EventRing<LittleEvent> little(env_size("EVENTS_BIG", 10000));
    vernier::bench_setup(
        "little event", [&] { return (little.ensure(large_msg), &little.next()); },
        [&](LittleEvent* e) { set_event(*e, large_msg.c_str()); });

    static EventRing<BigEvent> big(env_size("EVENTS_BIG", 10000));
    vernier::bench_setup(
        "big event", [&] { return (big.ensure(large_msg), &big.next()); },
        [&](BigEvent* e) { set_event(*e, large_msg.c_str()); });

    char buf[32];
    std::size_t len = 0;
    std::uint64_t value = 0;
    constexpr std::uint64_t kScale = 1000000;
    vernier::bench("convert nested-if", [&] {
        len = 0;
        convert_nested_if(buf, len, value, kScale);
        if (++value == kScale) value = 0;
        return len;
    });
    vernier::bench("convert merged-or", [&] {
        len = 0;
        convert_merged_or(buf, len, value, kScale);
        if (++value == kScale) value = 0;
        return len;
    });

    return vernier::main(argc, argv);
}
