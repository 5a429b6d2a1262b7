//! The clock: the time-stamp counter where it is trustworthy, `CLOCK_MONOTONIC` otherwise.
//!
//! On x86-64 with an invariant TSC (`constant_tsc` and `nonstop_tsc` in `/proc/cpuinfo`) the
//! TSC is read with fences that keep the measured code inside the interval:
//! `lfence; rdtsc` at the start (earlier instructions retire first, later ones do not start),
//! `rdtscp; lfence` at the end (the measured code has retired; later code waits). Its frequency
//! is calibrated against `CLOCK_MONOTONIC`. Elsewhere, or when the TSC is not invariant, the
//! monotonic clock is used directly.
//!
//! At start-up the timer's resolution (smallest non-zero step seen) and the cost of one read
//! (median of back-to-back start/stop pairs) are measured; both are recorded in every result.

use serde::{Deserialize, Serialize};

/// Which clock measured the samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    Tsc,
    Monotonic,
}

impl TimerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TimerKind::Tsc => "tsc",
            TimerKind::Monotonic => "monotonic",
        }
    }
}

/// What was measured about the timer at start-up (the contract's `timer` object).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    pub kind: TimerKind,
    /// Smallest non-zero difference between two consecutive reads, in ns.
    pub resolution_ns: f64,
    /// Cost of one start/stop pair with nothing between them, in ns (median).
    pub overhead_ns: f64,
    /// Calibrated TSC frequency, when the TSC is used.
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

/// How long the TSC is calibrated against `CLOCK_MONOTONIC` (per round; two rounds).
/// 10 ms bounds the error of the frequency to ~1e-5 with a µs-accurate monotonic clock.
const TSC_CALIBRATION_NS: u64 = 10_000_000;
/// Back-to-back reads used to find the resolution and the read cost.
const OVERHEAD_PROBES: usize = 20_000;

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Whether `/proc/cpuinfo` advertises an invariant TSC.
pub fn invariant_tsc_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return false;
        };
        let flags = info
            .lines()
            .find(|l| l.starts_with("flags"))
            .unwrap_or_default();
        let has = |f: &str| flags.split_whitespace().any(|w| w == f);
        has("constant_tsc") && has("nonstop_tsc") && has("rdtscp")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc_start() -> u64 {
    // SAFETY: lfence and rdtsc are available on every x86-64 CPU; they have no memory effects.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc_stop() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp presence was checked (`rdtscp` flag) before a Tsc timer is built;
    // `aux` is a valid out-pointer.
    unsafe {
        let t = core::arch::x86_64::__rdtscp(&mut aux);
        core::arch::x86_64::_mm_lfence();
        t
    }
}

impl Timer {
    /// The best timer for this machine, calibrated and characterised.
    pub fn detect() -> Timer {
        if invariant_tsc_available() {
            Timer::tsc()
        } else {
            Timer::monotonic()
        }
    }

    /// The monotonic clock, characterised.
    pub fn monotonic() -> Timer {
        let mut t = Timer {
            kind: TimerKind::Monotonic,
            ns_per_tick_q32: 1 << 32,
            info: TimerInfo {
                kind: TimerKind::Monotonic,
                resolution_ns: 0.0,
                overhead_ns: 0.0,
                tsc_hz: None,
            },
        };
        t.characterise();
        t
    }

    #[cfg(target_arch = "x86_64")]
    fn tsc() -> Timer {
        let hz = calibrate_tsc_hz();
        let mut t = Timer {
            kind: TimerKind::Tsc,
            ns_per_tick_q32: ((1e9 / hz) * (1u64 << 32) as f64).round() as u64,
            info: TimerInfo {
                kind: TimerKind::Tsc,
                resolution_ns: 0.0,
                overhead_ns: 0.0,
                tsc_hz: Some(hz),
            },
        };
        t.characterise();
        t
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn tsc() -> Timer {
        Timer::monotonic()
    }

    fn characterise(&mut self) {
        let mut min_step = u64::MAX;
        let mut pairs = Vec::with_capacity(OVERHEAD_PROBES);
        for _ in 0..OVERHEAD_PROBES {
            let a = self.start();
            let b = self.stop();
            let d = b.wrapping_sub(a);
            if d > 0 && d < min_step {
                min_step = d;
            }
            pairs.push(d);
        }
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
        self.info.overhead_ns = self.ticks_to_ns_f64(median);
        self.info.resolution_ns = self.ticks_to_ns_f64(res_step.min(min_step));
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
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            TimerKind::Tsc => tsc_start(),
            _ => monotonic_ns(),
        }
    }

    /// Read the clock at the end of a timed region.
    #[inline(always)]
    pub fn stop(&self) -> u64 {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            TimerKind::Tsc => tsc_stop(),
            _ => monotonic_ns(),
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

/// Calibrate the TSC against CLOCK_MONOTONIC: two rounds, the one with the tighter bracketing
/// of the monotonic reads wins (a preempted read widens its bracket).
#[cfg(target_arch = "x86_64")]
fn calibrate_tsc_hz() -> f64 {
    let bracket = || {
        // Read the monotonic clock between two TSC reads; the bracket's width bounds the error.
        let t0 = tsc_start();
        let m = monotonic_ns();
        let t1 = tsc_stop();
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
        assert!(info.overhead_ns >= info.resolution_ns * 0.5);
        if info.kind == TimerKind::Tsc {
            assert!(info.tsc_hz.unwrap() > 1e8);
        }
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
