//! The process's own counters at one instant, from the system without any permission:
//! `getrusage(RUSAGE_SELF)` on Unix; `GetProcessTimes` and `GetProcessMemoryInfo` on Windows,
//! which counts no context switches per process (said by `SOURCE`, never zero-filled).

/// The process's counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessUsage {
    /// User plus system CPU time, ns.
    pub cpu_ns: u64,
    /// Minor and major page faults.
    pub page_faults: u64,
    /// Voluntary and involuntary context switches; `None` where the system does not count them.
    pub context_switches: Option<u64>,
}

/// Where the counts come from, as a table's footer says it.
#[cfg(unix)]
pub const SOURCE: &str = "getrusage";
#[cfg(windows)]
pub const SOURCE: &str =
    "GetProcessTimes and GetProcessMemoryInfo; Windows counts no context switches per process";

#[cfg(unix)]
pub fn process() -> ProcessUsage {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ProcessUsage {
        cpu_ns: tv(r.ru_utime) + tv(r.ru_stime),
        page_faults: (r.ru_minflt + r.ru_majflt) as u64,
        context_switches: Some((r.ru_nvcsw + r.ru_nivcsw) as u64),
    }
}

#[cfg(windows)]
pub fn process() -> ProcessUsage {
    use super::clock::filetime_100ns;
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::ProcessStatus::{
        GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
    // SAFETY: the current process's pseudo-handle; valid out-pointers of the right types.
    let cpu_ns =
        if unsafe { GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u) } != 0 {
            (filetime_100ns(k) + filetime_100ns(u)).saturating_mul(100)
        } else {
            0
        };
    // SAFETY: a zeroed PROCESS_MEMORY_COUNTERS is valid; its size is passed with it.
    let mut m: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    m.cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    // SAFETY: as above; the call writes at most `cb` bytes.
    let ok = unsafe { GetProcessMemoryInfo(GetCurrentProcess(), &mut m, m.cb) } != 0;
    ProcessUsage {
        cpu_ns,
        page_faults: if ok { u64::from(m.PageFaultCount) } else { 0 },
        context_switches: None,
    }
}
