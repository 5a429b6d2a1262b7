//! Reference kernels of known cost, used to estimate the clock frequency and as benchmarks of
//! known behaviour for comparisons and tests.

/// A chain of `n` dependent one-cycle integer additions starting from `start` (inline
/// assembly on x86-64, so the compiler cannot fold it); returns `start + n`. Each add waits for
/// the previous one, so the chain takes `n` cycles at whatever frequency the core runs. The
/// added value sits in a register, not in an immediate: recent cores fold chains of
/// add-immediate at register renaming, which would make the chain faster than one cycle per
/// add. Feed the result of one call into the next (`x = add_chain(x, n)`) so successive calls
/// cannot overlap in the out-of-order window.
#[inline(never)]
pub fn add_chain(start: u64, n: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut x: u64 = start;
        // Blocks of eight additions, then the rest one by one; a count of zero skips its loop.
        // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
        unsafe {
            core::arch::asm!(
                "test {b}, {b}",
                "jz 3f",
                "2:",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "dec {b}",
                "jnz 2b",
                "3:",
                x = inout(reg) x,
                b = inout(reg) n / 8 => _,
                one = in(reg) 1u64,
                options(nomem, nostack),
            );
        }
        add_ones(x, n % 8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut x = start;
        for _ in 0..n {
            x = std::hint::black_box(x + 1);
        }
        x
    }
}

/// The chains' remainder after their rounds of eight: `n` dependent one-cycle additions to
/// `x` (inline assembly, the added value in a register), one at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn add_ones(mut x: u64, n: u64) -> u64 {
    // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
    unsafe {
        core::arch::asm!(
            "test {r}, {r}",
            "jz 3f",
            "2:",
            "add {x}, {one}",
            "dec {r}",
            "jnz 2b",
            "3:",
            x = inout(reg) x,
            r = inout(reg) n => _,
            one = in(reg) 1u64,
            options(nomem, nostack),
        );
    }
    x
}

/// `n` one-cycle integer additions spread over eight independent chains (inline assembly on
/// x86-64; `n / 8` rounds of eight, the rest on the first chain); returns the sum of the
/// chains, `8 * start + n`. Unlike [`add_chain`], nothing waits: the core runs as many of
/// these at once as it has integer units free, so the time measures the throughput the core
/// gives this thread, which a busy sibling thread on the same physical core takes a share of,
/// while the clock (and a dependent chain) stays the same (the README's "The core's speed"
/// has figures from a shared machine).
#[inline(never)]
pub fn wide_add_chain(start: u64, n: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let (mut a, mut b, mut c, mut d) = (start, start, start, start);
        let (mut e, mut f, mut g, mut h) = (start, start, start, start);
        // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
        unsafe {
            core::arch::asm!(
                "test {k}, {k}",
                "jz 3f",
                "2:",
                "add {a}, {one}", "add {b}, {one}", "add {c}, {one}", "add {d}, {one}",
                "add {e}, {one}", "add {f}, {one}", "add {g}, {one}", "add {h}, {one}",
                "dec {k}",
                "jnz 2b",
                "3:",
                a = inout(reg) a, b = inout(reg) b, c = inout(reg) c, d = inout(reg) d,
                e = inout(reg) e, f = inout(reg) f, g = inout(reg) g, h = inout(reg) h,
                k = inout(reg) n / 8 => _,
                one = in(reg) 1u64,
                options(nomem, nostack),
            );
        }
        add_ones(a, n % 8)
            .wrapping_add(b)
            .wrapping_add(c)
            .wrapping_add(d)
            .wrapping_add(e)
            .wrapping_add(f)
            .wrapping_add(g)
            .wrapping_add(h)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut v = [start; 8];
        for k in 0..n / 8 {
            for x in &mut v {
                *x = std::hint::black_box(*x + 1);
            }
            std::hint::black_box(k);
        }
        v[0] += n % 8;
        v.iter().fold(0u64, |s, x| s.wrapping_add(*x))
    }
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
pub fn wide_probe(timer: &crate::timer::Timer, adds: u64) -> u64 {
    fastest_of(timer, adds, wide_add_chain)
}

/// The core-speed probe: the fastest of [`PROBE_REPEATS`](crate::plan::PROBE_REPEATS) timings
/// of a chain of `adds` dependent additions, in ns of `timer`. At one addition per cycle, the
/// chain's time is `adds` cycles at whatever speed the core runs at that moment, so the time
/// per addition is the core's effective cycle time, measured against the timer (the TSC's
/// fixed rate where it is used). Runs outside every timed region, between batches.
pub fn speed_probe(timer: &crate::timer::Timer, adds: u64) -> u64 {
    fastest_of(timer, adds, add_chain)
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
