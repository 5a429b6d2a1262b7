//! Architectures without a counter Vernier reads directly: the monotonic clock is the timer.

use super::TimerKind;

/// Never used: [`available`] is false.
pub(super) const KIND: TimerKind = TimerKind::Monotonic;

pub(super) fn available() -> bool {
    false
}

#[inline(always)]
pub(super) fn start() -> u64 {
    super::monotonic_ns()
}

#[inline(always)]
pub(super) fn stop() -> u64 {
    super::monotonic_ns()
}

pub(super) fn rate_hz() -> f64 {
    1e9
}
