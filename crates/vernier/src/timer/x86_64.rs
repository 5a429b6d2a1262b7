//! The x86-64 counter: the time-stamp counter, where it is invariant.

use super::{monotonic_ns, TimerKind};

/// How long the TSC is calibrated against `CLOCK_MONOTONIC` (per round; two rounds).
/// 10 ms bounds the error of the frequency to ~1e-5 with a µs-accurate monotonic clock.
const TSC_CALIBRATION_NS: u64 = 10_000_000;

/// What this counter is called in results and on the wire.
pub(super) const KIND: TimerKind = TimerKind::Tsc;

/// Whether the TSC is invariant and `rdtscp` exists (`/proc/cpuinfo`'s `constant_tsc`,
/// `nonstop_tsc` and `rdtscp` on Linux; CPUID elsewhere).
pub(super) fn available() -> bool {
    crate::os::cpu::invariant_tsc()
}

/// `lfence; rdtsc`: earlier instructions retire first, later ones do not start.
#[inline(always)]
pub(super) fn start() -> u64 {
    // SAFETY: lfence and rdtsc are available on every x86-64 CPU; they have no memory effects.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

/// `rdtscp; lfence`: the measured code has retired; later code waits.
#[inline(always)]
pub(super) fn stop() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp presence was checked (`rdtscp` flag, [`available`]) before a counter
    // timer is built; `aux` is a valid out-pointer.
    unsafe {
        let t = core::arch::x86_64::__rdtscp(&mut aux);
        core::arch::x86_64::_mm_lfence();
        t
    }
}

/// The TSC's rate, calibrated against `CLOCK_MONOTONIC` (its nominal rate is not published):
/// two rounds, the one with the tighter bracketing of the monotonic reads wins (a preempted
/// read widens its bracket).
pub(super) fn rate_hz() -> f64 {
    let bracket = || {
        // Read the monotonic clock between two TSC reads; the bracket's width bounds the error.
        let t0 = start();
        let m = monotonic_ns();
        let t1 = stop();
        (t0 / 2 + t1 / 2, m, t1 - t0)
    };
    let mut best: Option<(f64, u64)> = None;
    for _ in 0..2 {
        let (a_tsc, a_ns, a_w) = bracket();
        while monotonic_ns() - a_ns < TSC_CALIBRATION_NS {
            std::hint::spin_loop();
        }
        let (b_tsc, b_ns, b_w) = bracket();
        let hz = (b_tsc - a_tsc) as f64 * 1e9 / (b_ns - a_ns) as f64;
        let width = a_w + b_w;
        if best.is_none_or(|(_, w)| width < w) {
            best = Some((hz, width));
        }
    }
    best.map(|(hz, _)| hz).unwrap_or(1e9)
}
