//! The system's monotonic clock in nanoseconds (`CLOCK_MONOTONIC` on Linux,
//! `CLOCK_UPTIME_RAW` on macOS, `QueryPerformanceCounter` on Windows), and the calling thread's
//! time on a CPU. Both may be read from a signal handler on Unix (`clock_gettime` is
//! async-signal-safe).

/// The clock `monotonic_ns` reads on Unix: `CLOCK_MONOTONIC`; on macOS `CLOCK_UPTIME_RAW`
/// (`mach_absolute_time` in ns), which, as Linux's `CLOCK_MONOTONIC`, stops while the machine
/// sleeps and is not slewed.
#[cfg(all(unix, not(target_os = "macos")))]
const MONOTONIC: libc::clockid_t = libc::CLOCK_MONOTONIC;
#[cfg(target_os = "macos")]
const MONOTONIC: libc::clockid_t = libc::CLOCK_UPTIME_RAW;

/// The monotonic clock, ns.
#[cfg(unix)]
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock exists on every supported system.
    unsafe { libc::clock_gettime(MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The monotonic clock, ns: `QueryPerformanceCounter` at its published frequency.
#[cfg(windows)]
#[inline]
pub fn monotonic_ns() -> u64 {
    use windows_sys::Win32::System::Performance::QueryPerformanceCounter;
    let mut ticks = 0i64;
    // SAFETY: writes one i64 through a valid pointer; cannot fail since Windows XP.
    unsafe { QueryPerformanceCounter(&mut ticks) };
    (ticks as u128 * 1_000_000_000 / qpc_hz() as u128) as u64
}

/// The performance counter's frequency (fixed at boot).
#[cfg(windows)]
pub fn qpc_hz() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    use windows_sys::Win32::System::Performance::QueryPerformanceFrequency;
    static HZ: AtomicU64 = AtomicU64::new(0);
    let hz = HZ.load(Ordering::Relaxed);
    if hz != 0 {
        return hz;
    }
    let mut f = 0i64;
    // SAFETY: writes one i64 through a valid pointer.
    unsafe { QueryPerformanceFrequency(&mut f) };
    let f = (f as u64).max(1);
    HZ.store(f, Ordering::Relaxed);
    f
}

/// The calling thread's time on a CPU, ns (0 when the system cannot say).
#[cfg(unix)]
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to the pointer it is given, which is valid.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// The calling thread's time on a CPU, ns (`GetThreadTimes`: user plus kernel, counted in
/// 100 ns units at the scheduler's tick; 0 when it fails).
#[cfg(windows)]
pub fn thread_cpu_ns() -> u64 {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of the current thread; four valid FILETIME out-pointers.
    if unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) } == 0 {
        return 0;
    }
    (filetime_100ns(k) + filetime_100ns(u)).saturating_mul(100)
}

/// A FILETIME as a count of 100 ns units.
#[cfg(windows)]
pub(super) fn filetime_100ns(t: windows_sys::Win32::Foundation::FILETIME) -> u64 {
    (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)
}
