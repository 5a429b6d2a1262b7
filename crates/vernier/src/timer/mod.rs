//! The clock: the machine's own counter where it is trustworthy, the system's monotonic clock
//! otherwise.
//!
//! Each architecture's counter lives in a module of its own with the same interface
//! (`KIND`, `available`, `start`, `stop`, `rate_hz`); nothing else asks which one is in use.
//!
//! - x86-64 (`x86_64.rs`): with an invariant TSC (`constant_tsc` and `nonstop_tsc` in
//!   `/proc/cpuinfo` on Linux, CPUID elsewhere) the TSC is read with fences that keep the
//!   measured code inside the interval: `lfence; rdtsc` at the start (earlier instructions
//!   retire first, later ones do not start), `rdtscp; lfence` at the end (the measured code has
//!   retired; later code waits). Its frequency is calibrated against the system's monotonic
//!   clock (`CLOCK_MONOTONIC`; `QueryPerformanceCounter` on Windows, `CLOCK_UPTIME_RAW` on an
//!   Intel Mac).
//! - aarch64 (`aarch64.rs`): the generic timer's virtual count `cntvct_el0`, read as
//!   `isb; mrs; isb` at the start (no earlier instruction runs past the read, no later one
//!   starts before it) and `isb; mrs` at the end (the measured code has completed); its rate
//!   is the one the firmware publishes in `cntfrq_el0` (Linux and macOS let user space read
//!   both; 24 MHz on Apple silicon).
//!
//! Elsewhere, or when the counter cannot be trusted, the system's monotonic clock is used
//! directly ([`SYSTEM_CLOCK`]: `monotonic`, `qpc` on Windows, `mach` on macOS).
//!
//! At start-up the timer's resolution (smallest non-zero step seen) and the cost of one read
//! (median of back-to-back start/stop pairs; for a counter that steps more slowly than a pair
//! takes, the span of all the pairs over their number) are measured; both are recorded in
//! every result.

use serde::{Deserialize, Serialize};

/// Which clock measured the samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    Tsc,
    Monotonic,
    /// The Arm generic timer's virtual count (`cntvct_el0`).
    Cntvct,
    /// Windows' `QueryPerformanceCounter`, where the TSC is not invariant.
    Qpc,
    /// macOS's `CLOCK_UPTIME_RAW` (`mach_absolute_time` in ns), where no counter is read
    /// directly.
    Mach,
}

impl TimerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TimerKind::Tsc => "tsc",
            TimerKind::Monotonic => "monotonic",
            TimerKind::Cntvct => "cntvct",
            TimerKind::Qpc => "qpc",
            TimerKind::Mach => "mach",
        }
    }
}

/// The system's monotonic clock ([`monotonic_ns`]) as results name it: `monotonic`
/// (`CLOCK_MONOTONIC`), `mach` on macOS, `qpc` on Windows.
pub const SYSTEM_CLOCK: TimerKind = if cfg!(windows) {
    TimerKind::Qpc
} else if cfg!(target_os = "macos") {
    TimerKind::Mach
} else {
    TimerKind::Monotonic
};

/// What was measured about the timer at start-up (the contract's `timer` object).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    pub kind: TimerKind,
    /// Smallest non-zero difference between two consecutive reads, in ns.
    pub resolution_ns: f64,
    /// Cost of one start/stop pair with nothing between them, in ns (median).
    pub overhead_ns: f64,
    /// The rate of the counter read directly: the TSC's frequency (calibrated) or the generic
    /// timer's (`cntfrq_el0`); `None` with the monotonic clock.
    pub tsc_hz: Option<f64>,
}

/// A started clock: reads raw ticks and converts durations to nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Timer {
    kind: TimerKind,
    /// Nanoseconds per tick, fixed-point with 32 fractional bits (integers in the core).
    ns_per_tick_q32: u64,
    info: TimerInfo,
}

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
use x86_64 as counter;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
use aarch64 as counter;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod other;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use other as counter;

/// Back-to-back reads used to find the resolution and the read cost.
const OVERHEAD_PROBES: usize = 20_000;

/// The system's monotonic clock in nanoseconds (`CLOCK_MONOTONIC` on Linux).
pub use crate::os::clock::monotonic_ns;

/// Whether this machine's counter (the invariant TSC on x86-64, the generic timer on aarch64)
/// can be read directly.
pub fn counter_available() -> bool {
    counter::available()
}

impl Timer {
    /// The best timer for this machine, calibrated and characterised.
    pub fn detect() -> Timer {
        if counter::available() {
            Timer::counter()
        } else {
            Timer::monotonic()
        }
    }

    /// The system's monotonic clock, characterised.
    pub fn monotonic() -> Timer {
        let mut t = Timer {
            kind: SYSTEM_CLOCK,
            ns_per_tick_q32: 1 << 32,
            info: TimerInfo {
                kind: SYSTEM_CLOCK,
                resolution_ns: 0.0,
                overhead_ns: 0.0,
                tsc_hz: None,
            },
        };
        t.characterise();
        t
    }

    /// The machine's counter at its rate, characterised.
    fn counter() -> Timer {
        let hz = counter::rate_hz();
        let mut t = Timer {
            kind: counter::KIND,
            ns_per_tick_q32: ((1e9 / hz) * (1u64 << 32) as f64).round() as u64,
            info: TimerInfo {
                kind: counter::KIND,
                resolution_ns: 0.0,
                overhead_ns: 0.0,
                tsc_hz: Some(hz),
            },
        };
        t.characterise();
        t
    }

    fn characterise(&mut self) {
        let mut min_step = u64::MAX;
        let mut pairs = Vec::with_capacity(OVERHEAD_PROBES);
        let first = self.start();
        for _ in 0..OVERHEAD_PROBES {
            let a = self.start();
            let b = self.stop();
            let d = b.wrapping_sub(a);
            if d > 0 && d < min_step {
                min_step = d;
            }
            pairs.push(d);
        }
        let span = self.stop().wrapping_sub(first);
        // Resolution: the smallest non-zero step between two reads of the raw counter.
        let mut res_step = u64::MAX;
        for _ in 0..OVERHEAD_PROBES {
            let a = self.start();
            let mut b = self.start();
            while b == a {
                b = self.start();
            }
            res_step = res_step.min(b - a);
        }
        pairs.sort_unstable();
        let median = pairs[pairs.len() / 2];
        let resolution = res_step.min(min_step);
        self.info.overhead_ns = if median >= resolution {
            self.ticks_to_ns_f64(median)
        } else {
            // A counter that steps more slowly than a pair of reads takes (the generic timer
            // at 24-25 MHz, 40 ns a tick): most pairs read no step at all, so a pair's cost is
            // the whole loop's span over its pairs.
            self.ticks_to_ns_f64(span) / OVERHEAD_PROBES as f64
        };
        self.info.resolution_ns = self.ticks_to_ns_f64(resolution);
    }

    /// The timer's characteristics, as recorded in results.
    pub fn info(&self) -> TimerInfo {
        self.info
    }

    pub fn kind(&self) -> TimerKind {
        self.kind
    }

    /// Read the clock at the start of a timed region.
    #[inline(always)]
    pub fn start(&self) -> u64 {
        if self.kind == counter::KIND {
            counter::start()
        } else {
            monotonic_ns()
        }
    }

    /// Read the clock at the end of a timed region.
    #[inline(always)]
    pub fn stop(&self) -> u64 {
        if self.kind == counter::KIND {
            counter::stop()
        } else {
            monotonic_ns()
        }
    }

    /// A tick count as whole nanoseconds (rounded).
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.ns_per_tick_q32 as u128 + (1u128 << 31)) >> 32) as u64
    }

    pub fn ticks_to_ns_f64(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick_q32 as f64 / (1u64 << 32) as f64
    }
}

/// A TSC at 3 GHz (1 ns resolution, 10 ns per read): the timer the engines' tests measure with.
#[cfg(test)]
pub(crate) fn test_tsc() -> TimerInfo {
    TimerInfo {
        kind: TimerKind::Tsc,
        resolution_ns: 1.0,
        overhead_ns: 10.0,
        tsc_hz: Some(3e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_is_characterised() {
        let t = Timer::detect();
        let info = t.info();
        assert!(info.resolution_ns > 0.0);
        // A read costs something, however coarse the counter's step; a counter finer than a
        // read (the TSC) sees it take at least half a step.
        assert!(info.overhead_ns > 0.0);
        if info.kind == TimerKind::Tsc {
            assert!(info.overhead_ns >= info.resolution_ns * 0.5);
        }
        // A counter read directly says its rate; the monotonic clock has none.
        match info.kind {
            TimerKind::Tsc => assert!(info.tsc_hz.unwrap() > 1e8),
            TimerKind::Cntvct => assert!(info.tsc_hz.unwrap() > 0.0),
            TimerKind::Monotonic | TimerKind::Qpc | TimerKind::Mach => {
                assert_eq!(info.tsc_hz, None)
            }
        }
        assert_eq!(info.kind == SYSTEM_CLOCK, !counter_available());
    }

    #[test]
    fn tsc_and_monotonic_agree_on_a_duration() {
        let t = Timer::detect();
        let m0 = monotonic_ns();
        let a = t.start();
        while monotonic_ns() - m0 < 5_000_000 {}
        let b = t.stop();
        let m1 = monotonic_ns();
        let ratio = t.ticks_to_ns(b - a) as f64 / (m1 - m0) as f64;
        assert!((0.95..1.05).contains(&ratio), "ratio {ratio}");
    }
}
