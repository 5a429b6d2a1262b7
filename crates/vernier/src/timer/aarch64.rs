//! The aarch64 counter: the generic timer's virtual count, `cntvct_el0`, whose rate the
//! firmware publishes in `cntfrq_el0`. Linux lets user space read both.

use super::TimerKind;

/// What this counter is called in results and on the wire.
pub(super) const KIND: TimerKind = TimerKind::Cntvct;

/// How long the counter is watched for a tick before it is trusted (a frozen counter would
/// stall the resolution search): 1 ms of `CLOCK_MONOTONIC`, thousands of ticks at any rate.
const ADVANCE_WAIT_NS: u64 = 1_000_000;

/// Whether the counter has a rate and moves. A zero `cntfrq_el0` (firmware that never set it)
/// or a counter that stands still leaves the monotonic clock in charge.
pub(super) fn available() -> bool {
    if rate_hz() <= 0.0 {
        return false;
    }
    let a = start();
    let t0 = super::monotonic_ns();
    while super::monotonic_ns() - t0 < ADVANCE_WAIT_NS {
        std::hint::spin_loop();
    }
    stop() != a
}

/// `isb; mrs cntvct_el0; isb`: the first `isb` lets no earlier instruction run past the read
/// (the register may otherwise be read early, out of order); the second keeps the measured
/// code from starting before it.
#[inline(always)]
pub(super) fn start() -> u64 {
    let t: u64;
    // SAFETY: Linux enables EL0 reads of the virtual counter (the vDSO's clock uses it); the
    // instructions touch one register and no memory. Not `nomem`: like a memory clobber, it
    // keeps the compiler from moving loads and stores across the read.
    unsafe {
        core::arch::asm!("isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t, options(nostack));
    }
    t
}

/// `isb; mrs cntvct_el0`: the measured code has completed before the read. Without a second
/// `isb` (nothing after it is timed), the start and the stop differ in the disassembly, where
/// `vernier asm` tells them apart.
#[inline(always)]
pub(super) fn stop() -> u64 {
    let t: u64;
    // SAFETY: as in `start`.
    unsafe {
        core::arch::asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack));
    }
    t
}

/// The counter's rate from `cntfrq_el0`, in Hz (0 when the firmware left it unset).
pub(super) fn rate_hz() -> f64 {
    let hz: u64;
    // SAFETY: `cntfrq_el0` is readable at EL0 wherever `cntvct_el0` is; no memory is touched.
    unsafe {
        core::arch::asm!("mrs {hz}, cntfrq_el0", hz = out(reg) hz, options(nomem, nostack));
    }
    (hz & 0xffff_ffff) as f64
}
