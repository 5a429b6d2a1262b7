//! Process control for the noise probe and the load generator: pin the calling thread to a
//! CPU, read the CPUs this process may use, stop cleanly on Ctrl-C.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use super::cpulist::CpuSet;

/// Pin the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data, zeroed is a valid empty set; CPU_SET is given an
    // index below CPU_SETSIZE (checked above); sched_setaffinity(0, …) acts on the calling
    // thread and reads exactly size_of::<cpu_set_t>() bytes from the set.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPUs this process is allowed to run on.
pub fn allowed_cpus() -> CpuSet {
    // SAFETY: as above; sched_getaffinity writes at most size_of::<cpu_set_t>() bytes into
    // `set`, and CPU_ISSET reads indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return CpuSet::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|c| libc::CPU_ISSET(*c, &set))
            .collect()
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

/// Make SIGINT (Ctrl-C) and SIGTERM set the stop flag instead of killing the process, so
/// workers finish their current block and the command reports what it did.
pub fn install_stop_handler() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the sigaction struct is zeroed (empty mask, no flags) and then given a
        // handler with the `void (*)(int)` signature; the handler only touches an atomic.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// True once a stop signal arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Read CLOCK_MONOTONIC in nanoseconds (through the vDSO: no system call).
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
