//! The demo's benchmarks: basic operations on a black-boxed `f64` and `rand()`, `sqrt(4.2)`
//! without and with a barrier, a message copied into one event or into many (hot and cold
//! memory), two "equivalent" fraction-to-text functions, a dependent chain and a pointer
//! chase, the threaded sharing cases (`sharing.rs`), and the variant pairs compared after them.

use super::sharing;
use vernier::black_box;
use vernier::Suite;

/// Register the demo suite.
pub fn register(s: &mut Suite) {
    arithmetic(s);
    barriers(s);
    events(s);
    fractions(s);
    latency_and_cold(s);
    sharing::register(s);
    pairs(s);
}

/// Register only the benchmarks `re` selects (`--filter`, `--shard`).
pub fn register_filtered(s: &mut Suite, re: &crate::args::Selection) {
    let mut all = Suite::default();
    register(&mut all);
    for (name, routine) in all.into_entries() {
        if re.is_match(&name) {
            s.add(name, routine);
        }
    }
    pairs(s);
}

/// The variant pairs, compared paired and interleaved after the benchmarks (`Suite::compare`):
/// registered only when both members are in the suite (a filter may leave one out).
pub fn pairs(s: &mut Suite) {
    let names = s.names();
    let pairs = [
        (
            "fraction to text: merged or / nested if",
            "fraction to text, nested if",
            "fraction to text, merged or",
        ),
        (
            "event copy: cold / hot",
            "event copy, same event (hot)",
            "event copy, 256Ki events (cold)",
        ),
    ];
    for (name, old, new) in pairs {
        if names.iter().any(|n| n == old) && names.iter().any(|n| n == new) {
            s.compare_benches(name, old, new);
        }
    }
}

fn arithmetic(s: &mut Suite) {
    let (x, y) = (4.2f64, 1.3f64);
    s.bench("add", move || black_box(x) + black_box(y));
    s.bench("mul", move || black_box(x) * black_box(y));
    s.bench("div", move || black_box(x) / black_box(y));
    s.bench("sqrt", move || black_box(x).sqrt());
    s.bench("exp", move || black_box(x).exp());
    s.bench("ln", move || black_box(x).ln());
    s.bench("sin", move || black_box(x).sin());
    s.bench("atan", move || black_box(x).atan());
    // SAFETY: rand() has no preconditions (global state, side effects: the C++ talk's
    // std::rand()).
    s.bench("rand()", || unsafe { libc::rand() });
}

fn barriers(s: &mut Suite) {
    // The result is discarded and the input is a constant: the optimiser removes the call.
    #[allow(clippy::let_underscore_untyped)]
    s.bench("sqrt(4.2) without barrier", || {
        let _ = 4.2f64.sqrt();
    });
    s.bench("sqrt(4.2) with barrier", || black_box(4.2f64).sqrt());
    s.bench("empty closure", || ());
}

/// A square root's latency beside its throughput ("sqrt" above), and an L1-resident pointer
/// chase (16 dependent loads in 8 KiB) hot and with cold caches (`docs/experiments.md`).
fn latency_and_cold(s: &mut Suite) {
    s.bench_latency("sqrt latency", 4.2f64, |x| (x + 1.5).sqrt());
    let (buf, start) = vernier::workload::kernels::chase_cycle(CHASE_LINES, CHASE_HOPS, 42);
    let hot = buf.clone();
    s.bench_latency("chase 16 loads/8 KiB (hot)", start, move |p| {
        vernier::workload::kernels::chase(&hot, p, CHASE_HOPS)
    });
    s.bench_cold("chase 16 loads/8 KiB (cold)", move || {
        vernier::workload::kernels::chase(&buf, black_box(start), CHASE_HOPS)
    });
}

/// The pointer chase: 128 lines of 64 bytes (8 KiB), 16 hops.
const CHASE_LINES: usize = 128;
const CHASE_HOPS: usize = 16;

/// An event: a fixed buffer, and a heap block when the message does not fit
/// (`docs/experiments.md`).
pub struct Event {
    data: [u8; 1024],
    extra: Option<Box<[u8]>>,
}

impl Event {
    fn new() -> Event {
        Event {
            data: [0; 1024],
            extra: None,
        }
    }
}

/// Copy a NUL-terminated message into an event (`set_event` in `examples/cpp/pitfalls.cpp`).
#[inline(never)]
pub fn set_event(event: &mut Event, msg: &[u8]) -> usize {
    let size = msg.iter().position(|&b| b == 0).unwrap_or(msg.len()) + 1;
    let size = size.min(msg.len());
    if size > event.data.len() {
        let mut b = vec![0u8; size].into_boxed_slice();
        b.copy_from_slice(&msg[..size]);
        event.extra = Some(b);
    } else {
        event.data[..size].copy_from_slice(&msg[..size]);
    }
    size
}

/// Events in the "cold" set: 2¹⁸ × 1 KiB = 256 MiB, far beyond any cache.
pub const COLD_EVENTS: usize = 1 << 18;
/// The cold copy is said to be dominated by memory when it costs at least this much more
/// than the hot one.
pub const COLD_DOMINATES: f64 = 1.2;
/// Overrides the size of the cold set (`demo --instructions` sets it: see below).
pub const COLD_EVENTS_ENV: &str = "VERNIER_DEMO_COLD_EVENTS";
/// The cold set under callgrind: `--instructions` runs a benchmark 1000 + 1000 + 2000
/// iterations in one process, each on the next event, so 8192 events (8 MiB) give every
/// iteration an event never written before, without building 256 MiB under simulation
/// (seconds per run).
pub const COLD_EVENTS_INSTRUCTIONS: usize = 8192;

fn cold_events() -> usize {
    std::env::var(COLD_EVENTS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(COLD_EVENTS)
}

/// The message copied into the events: 100 bytes and a NUL.
pub fn message() -> Vec<u8> {
    let mut m = vec![b'a'; 100];
    m.push(0);
    m
}

fn events(s: &mut Suite) {
    let msg = message();
    let mut one = Box::new(Event::new());
    s.bench("event copy, same event (hot)", move || {
        set_event(&mut one, black_box(&msg))
    });
    // The other lesson of the event: one made afresh for each message allocates once per
    // iteration where the reused one never does.
    let msg = message();
    s.bench("event copy, fresh event (allocated)", move || {
        let mut fresh = Box::new(Event::new());
        set_event(&mut fresh, black_box(&msg))
    });
    let msg = message();
    let mut i = 0usize;
    let cold = cold_events();
    s.bench_with_init(
        "event copy, 256Ki events (cold)",
        // Built before the first sample and written once, so page faults are not measured.
        move || (0..cold).map(|_| Event::new()).collect::<Vec<Event>>(),
        move |evs| {
            i += 1;
            if i == cold {
                i = 0;
            }
            set_event(&mut evs[i], black_box(&msg))
        },
    );
}

const DIGITS: &[u8; 200] =
    b"00010203040506070809101112131415161718192021222324252627282930313233343536373839\
40414243444546474849505152535455565758596061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The index in `DIGITS` of the next pair of digits of `fraction / factor`, taking them off
/// both; inlined into each variant, which differ only in how they write the pair.
#[inline(always)]
fn next_pair(fraction: &mut u64, factor: &mut u64) -> usize {
    if *factor >= 100 {
        *factor /= 100;
        let index = (*fraction / *factor) as usize * 2;
        *fraction %= *factor;
        index
    } else {
        let index = *fraction as usize * if *factor == 10 { 20 } else { 2 };
        *fraction = 0;
        index
    }
}

/// Fraction part of `value / factor` as text ("0.0123"), two digits at a time; the last pair
/// is written as one digit when its second digit is a trailing zero. The two variants differ
/// only in how they test the two "write a pair" conditions: in separate branches (`MERGED`
/// false: [`fraction_nested_if`]) or merged into one `||` ([`fraction_merged_or`]); each is
/// compiled on its own, with only its own branches.
#[inline(always)]
#[allow(clippy::if_same_then_else)] // the duplicated branch is the point of the nested variant
fn fraction_to_text<const MERGED: bool>(buf: &mut [u8; 64], value: u64, mut factor: u64) -> usize {
    let mut pos = 0;
    buf[pos] = b'0';
    pos += 1;
    let mut fraction = value % factor;
    if fraction > 0 {
        buf[pos] = b'.';
        pos += 1;
        loop {
            let index = next_pair(&mut fraction, &mut factor);
            let mut pair = |buf: &mut [u8; 64]| {
                buf[pos..pos + 2].copy_from_slice(&DIGITS[index..index + 2]);
                pos += 2;
            };
            if MERGED {
                if fraction > 0 || DIGITS[index + 1] != b'0' {
                    pair(buf);
                } else {
                    buf[pos] = DIGITS[index];
                    pos += 1;
                }
            } else if fraction > 0 {
                pair(buf);
            } else if DIGITS[index + 1] != b'0' {
                pair(buf);
            } else {
                buf[pos] = DIGITS[index];
                pos += 1;
            }
            if fraction == 0 {
                break;
            }
        }
    }
    pos
}

/// Variant A: the two "write a pair" conditions in separate branches.
#[inline(never)]
pub fn fraction_nested_if(buf: &mut [u8; 64], value: u64, factor: u64) -> usize {
    fraction_to_text::<false>(buf, value, factor)
}

/// Variant B: the same logic with the two conditions merged into one `||`.
#[inline(never)]
pub fn fraction_merged_or(buf: &mut [u8; 64], value: u64, factor: u64) -> usize {
    fraction_to_text::<true>(buf, value, factor)
}

/// The factor of the conversion test: fractions of a millionth.
pub const FACTOR: u64 = 1_000_000;

fn fractions(s: &mut Suite) {
    let mut buf = [0u8; 64];
    let mut v = 0u64;
    s.bench("fraction to text, nested if", move || {
        v = if v + 1 == FACTOR { 0 } else { v + 1 };
        fraction_nested_if(&mut buf, black_box(v), FACTOR)
    });
    let mut buf = [0u8; 64];
    let mut v = 0u64;
    s.bench("fraction to text, merged or", move || {
        v = if v + 1 == FACTOR { 0 } else { v + 1 };
        fraction_merged_or(&mut buf, black_box(v), FACTOR)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_fraction_variants_agree() {
        for v in [0u64, 1, 10, 12_300, 120_000, 999_999, 500_000, 7] {
            let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
            let na = fraction_nested_if(&mut a, v, FACTOR);
            let nb = fraction_merged_or(&mut b, v, FACTOR);
            assert_eq!(&a[..na], &b[..nb], "value {v}");
        }
        let mut a = [0u8; 64];
        let n = fraction_nested_if(&mut a, 12_300, FACTOR);
        assert_eq!(&a[..n], b"0.0123");
    }

    #[test]
    fn set_event_copies_and_spills() {
        let mut e = Event::new();
        assert_eq!(set_event(&mut e, b"hello\0"), 6);
        assert_eq!(&e.data[..6], b"hello\0");
        let mut big = vec![b'x'; 2000];
        big.push(0);
        assert_eq!(set_event(&mut e, &big), 2001);
        assert!(e.extra.is_some());
    }
}
