//! Reference kernels of known cost, used to estimate the clock frequency and as benchmarks of
//! known behaviour for comparisons and tests.
//!
//! The chains are written in each architecture's assembly, one module per architecture with
//! the same two functions (`add_chain`, `wide_add_chain`), so the compiler cannot fold them.

#[cfg(target_arch = "x86_64")]
#[path = "x86_64.rs"]
mod chains;

#[cfg(target_arch = "aarch64")]
#[path = "aarch64.rs"]
mod chains;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[path = "other.rs"]
mod chains;

/// A chain of `n` dependent one-cycle integer additions starting from `start` (inline
/// assembly on x86-64 and aarch64, so the compiler cannot fold it); returns `start + n`. Each add waits for
/// the previous one, so the chain takes `n` cycles at whatever frequency the core runs. The
/// added value sits in a register, not in an immediate: recent cores fold chains of
/// add-immediate at register renaming, which would make the chain faster than one cycle per
/// add. Feed the result of one call into the next (`x = add_chain(x, n)`) so successive calls
/// cannot overlap in the out-of-order window.
#[inline(never)]
pub fn add_chain(start: u64, n: u64) -> u64 {
    chains::add_chain(start, n)
}

/// `n` one-cycle integer additions spread over eight independent chains (inline assembly on
/// x86-64 and aarch64; `n / 8` rounds of eight, the rest on the first chain); returns the sum of the
/// chains, `8 * start + n`. Unlike [`add_chain`], nothing waits: the core runs as many of
/// these at once as it has integer units free, so the time measures the throughput the core
/// gives this thread, which a busy sibling thread on the same physical core takes a share of,
/// while the clock (and a dependent chain) stays the same (the README's "The core's speed"
/// has figures from a shared machine).
#[inline(never)]
pub fn wide_add_chain(start: u64, n: u64) -> u64 {
    chains::wide_add_chain(start, n)
}

/// The fastest of `PROBE_REPEATS` timings of `kernel(x, adds)`, in ns of `timer`.
fn fastest_of(timer: &crate::timer::Timer, adds: u64, kernel: fn(u64, u64) -> u64) -> u64 {
    let mut x = std::hint::black_box(0u64);
    let mut best = u64::MAX;
    for _ in 0..crate::plan::PROBE_REPEATS {
        let t0 = timer.start();
        x = kernel(x, adds);
        let t = timer.stop().wrapping_sub(t0);
        best = best.min(timer.ticks_to_ns(t));
    }
    std::hint::black_box(x);
    best
}

/// The throughput half of the core-speed probe: the fastest of
/// [`PROBE_REPEATS`](crate::plan::PROBE_REPEATS) timings of [`wide_add_chain`] over `adds`
/// additions, in ns of `timer`. Run right after [`speed_probe`], outside every timed region.
#[doc(hidden)]
pub fn wide_probe(timer: &crate::timer::Timer, adds: u64) -> u64 {
    fastest_of(timer, adds, wide_add_chain)
}

/// The core-speed probe: the fastest of [`PROBE_REPEATS`](crate::plan::PROBE_REPEATS) timings
/// of a chain of `adds` dependent additions, in ns of `timer`. At one addition per cycle, the
/// chain's time is `adds` cycles at whatever speed the core runs at that moment, so the time
/// per addition is the core's effective cycle time, measured against the timer (the TSC's
/// fixed rate where it is used). Runs outside every timed region, between batches.
#[doc(hidden)]
pub fn speed_probe(timer: &crate::timer::Timer, adds: u64) -> u64 {
    fastest_of(timer, adds, add_chain)
}

/// Rounds of the start-up calibration of the core's best throughput ([`best_wide_ratio`]):
/// 256 rounds of both probes at [`PROBE_ADDS`](crate::plan::PROBE_ADDS), about 5 ms at
/// 3 GHz. A neighbour's stretches last a quarter of a second to seconds, so a start-up taken
/// wholly in one reads it; the machine's ledger keeps the best ratio across runs for that.
#[doc(hidden)]
pub const RATIO_ROUNDS: usize = 256;

/// The core's best throughput for this thread, as the ratio of the probe's two halves: the
/// fastest time per addition of eight independent chains ([`wide_probe`]) over the fastest of
/// one dependent chain ([`speed_probe`]), over `rounds` alternating rounds of `adds`
/// additions each. The ratio of the two fastest, not the fastest ratio: an interrupt that
/// lengthened one dependent chain would make one round's ratio look better than the core can
/// do, while neither fastest time can be lowered by anything but the core. The clock cancels
/// out (both halves run at it); what is left is the share of the core's issue width this
/// thread had: a core that retires four additions a cycle reads 0.25 when whole, more when a
/// sibling thread takes a share. `None` when a time could not be read.
#[doc(hidden)]
pub fn best_wide_ratio(timer: &crate::timer::Timer, adds: u64, rounds: usize) -> Option<f64> {
    let (mut lat, mut wide) = (u64::MAX, u64::MAX);
    for _ in 0..rounds.max(1) {
        lat = lat.min(speed_probe(timer, adds));
        wide = wide.min(wide_probe(timer, adds));
    }
    let overhead = timer.info().overhead_ns.max(0.0);
    let (l, w) = (lat as f64 - overhead, wide as f64 - overhead);
    (l > 0.0 && w > 0.0 && lat != u64::MAX).then(|| w / l)
}

/// A pointer chase for latency and cold-cache experiments: a buffer of `lines` 64-byte lines
/// (as `usize` words) holding a cycle through `hops` of them, one chosen at random (seeded) in
/// each of `hops` equal slices, so consecutive hops are far apart and a prefetcher cannot
/// follow. Returns the buffer and the starting index; `p = buf[p]` `hops` times comes back to
/// it. `chase_cycle(128, 16, seed)`: 16 dependent loads in 8 KiB, L1-resident when hot.
pub fn chase_cycle(lines: usize, hops: usize, seed: u64) -> (Vec<usize>, usize) {
    let stride = 64 / std::mem::size_of::<usize>();
    let hops = hops.clamp(1, lines.max(1));
    let slice = lines.max(1) / hops;
    let mut rng = crate::workload::input::Rng::new(seed);
    let order: Vec<usize> = (0..hops)
        .map(|i| i * slice + (rng.next_u64() as usize) % slice)
        .collect();
    let mut buf = vec![0usize; lines.max(1) * stride];
    for i in 0..hops {
        buf[order[i] * stride] = order[(i + 1) % hops] * stride;
    }
    (buf, order[0] * stride)
}

/// `hops` dependent loads through a buffer made by [`chase_cycle`], from `p`; returns where
/// they end (`p` again after a whole cycle).
#[inline]
pub fn chase(buf: &[usize], mut p: usize, hops: usize) -> usize {
    for _ in 0..hops {
        p = buf[p];
    }
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_chase_is_a_cycle_through_every_hop() {
        let (buf, start) = super::chase_cycle(128, 16, 42);
        assert_eq!(buf.len() * std::mem::size_of::<usize>(), 8192);
        let mut p = start;
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..16 {
            assert!(seen.insert(p), "revisited {p}");
            p = buf[p];
        }
        assert_eq!(p, start);
        assert_eq!(super::chase(&buf, start, 16), start);
        assert_eq!(super::chase(&buf, start, 3), buf[buf[buf[start]]]);
    }

    #[test]
    fn chain_adds_n() {
        for n in [0, 1, 7, 8, 9, 100, 1001] {
            assert_eq!(super::add_chain(5, n), 5 + n);
            assert_eq!(super::wide_add_chain(5, n), 8 * 5 + n);
        }
    }

    #[test]
    fn the_probe_grows_with_the_chain() {
        // Deterministic structure, not a timing threshold: 64× the additions take longer.
        let timer = crate::timer::Timer::detect();
        let short = super::speed_probe(&timer, 1024);
        let long = super::speed_probe(&timer, 65536);
        assert!(long > short, "{short} {long}");
    }
}
