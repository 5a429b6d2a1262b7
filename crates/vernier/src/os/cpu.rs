//! The CPUs: which ones this process may run on, pinning the calling thread to one, which one
//! it runs on now, and whether the x86-64 time-stamp counter is invariant. macOS has no CPU
//! affinity (its thread affinity tags are hints to co-locate threads, not pins): there these
//! say "unavailable" and the caller goes on unpinned.

/// The CPUs the calling thread may run on, in order (every CPU on macOS, which has no
/// affinity); `None` when the call failed.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn affinity() -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it for this
    // thread and CPU_ISSET only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect(),
        )
    }
}

/// Pin the calling thread to `cpu`; the system's error where it refused, `Unsupported` where
/// it cannot (macOS).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn pin_thread(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: as in `affinity`; CPU_SET is given an index below CPU_SETSIZE (checked above);
    // sched_setaffinity(0, …) changes the calling thread only.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The CPU the calling thread runs on, -1 when unknown (the probe line's `cpu=`).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn current() -> i32 {
    // SAFETY: sched_getcpu has no preconditions.
    unsafe { libc::sched_getcpu() }
}

/// Every CPU: macOS restricts no process to some of them.
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
pub fn affinity() -> Option<Vec<usize>> {
    let n = std::thread::available_parallelism().ok()?.get();
    Some((0..n).collect())
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
pub fn pin_thread(_cpu: usize) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!(
            "{} has no CPU affinity: threads cannot be pinned",
            super::NAME
        ),
    ))
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
pub fn current() -> i32 {
    -1
}

/// The process's affinity mask (`GetProcessAffinityMask`: the first 64 CPUs of its group).
#[cfg(windows)]
pub fn affinity() -> Option<Vec<usize>> {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessAffinityMask};
    let (mut process, mut system) = (0usize, 0usize);
    // SAFETY: the current process's pseudo-handle; two valid out-pointers.
    if unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut process, &mut system) } == 0 {
        return None;
    }
    Some(
        (0..usize::BITS as usize)
            .filter(|&c| process & (1 << c) != 0)
            .collect(),
    )
}

#[cfg(windows)]
pub fn pin_thread(cpu: usize) -> std::io::Result<()> {
    use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadAffinityMask};
    if cpu >= usize::BITS as usize {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is beyond the first 64, which a thread's mask holds"),
        ));
    }
    // SAFETY: the current thread's pseudo-handle and a mask with one bit.
    if unsafe { SetThreadAffinityMask(GetCurrentThread(), 1 << cpu) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(windows)]
pub fn current() -> i32 {
    // SAFETY: no preconditions.
    unsafe { windows_sys::Win32::System::Threading::GetCurrentProcessorNumber() as i32 }
}

/// Whether the time-stamp counter runs at a constant rate through frequency and power-state
/// changes, and `rdtscp` exists. Linux says so in `/proc/cpuinfo` (`constant_tsc`,
/// `nonstop_tsc`, `rdtscp`); elsewhere CPUID does (leaf 0x8000_0007 EDX bit 8, leaf
/// 0x8000_0001 EDX bit 27).
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
pub fn invariant_tsc() -> bool {
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

#[cfg(all(
    target_arch = "x86_64",
    not(any(target_os = "linux", target_os = "android"))
))]
pub fn invariant_tsc() -> bool {
    use core::arch::x86_64::__cpuid;
    // CPUID is on every x86-64 CPU; the extended leaves exist when leaf 0x8000_0000 says so.
    let max = __cpuid(0x8000_0000).eax;
    if max < 0x8000_0007 {
        return false;
    }
    let rdtscp = __cpuid(0x8000_0001).edx & (1 << 27) != 0;
    let invariant = __cpuid(0x8000_0007).edx & (1 << 8) != 0;
    rdtscp && invariant
}
