//! What starting a worker asks of the system, Linux's and macOS's: the process controls applied
//! between fork and exec, a pipe whose ends stay out of other children, and the state file the
//! workers share. macOS has no CPU affinity, no SCHED_FIFO for a process and no personality
//! flag for address-space randomisation: asking for them there is an error that says so.

#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::os::fd::{FromRawFd, OwnedFd};

use super::Control;

/// The process controls of `ctl` applied to the calling process (CPU affinity, SCHED_FIFO,
/// no address-space randomisation): called between fork and exec.
///
/// # Safety
/// Only async-signal-safe calls (sched_setaffinity, sched_setscheduler, personality) and no
/// allocation: it may run in the child of a fork, before exec.
#[cfg(target_os = "linux")]
pub(crate) unsafe fn apply_in_child(ctl: &Control) -> std::io::Result<()> {
    // SAFETY: the caller runs this between fork and exec; every call below is async-signal-safe
    // and the cpu_set_t is a plain bit set that zeroes validly.
    unsafe {
        if !ctl.cpus.is_empty() {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in &ctl.cpus {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(prio) = ctl.fifo {
            let p = libc::sched_param {
                sched_priority: prio,
            };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
                // Only the errno crosses back to the parent: EPERM here means FIFO.
                return Err(std::io::Error::last_os_error());
            }
        }
        if ctl.no_aslr && libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
pub(super) fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints; O_CLOEXEC keeps them out of other children.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned these two descriptors, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The state file every worker this process starts shares (`protocol::STATE_FD_ENV`): a file
/// with no name in any directory (`memfd_create`), which lives as long as this process, so
/// what a worker learns for the next (the Google Benchmark layer's throughputs) is never in a
/// shared directory. `None` where the kernel makes none: each worker then learns for itself.
#[cfg(target_os = "linux")]
pub(super) fn state_file() -> Option<i32> {
    static FILE: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        // SAFETY: the name is a NUL-terminated string; the flags are valid.
        let fd = unsafe { libc::memfd_create(c"vernier-worker-state".as_ptr(), libc::MFD_CLOEXEC) };
        // SAFETY: memfd_create just returned this descriptor, owned by nobody else.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    })
    .as_ref()
    .map(|f| f.as_raw_fd())
}

/// # Safety
/// As on Linux: called between fork and exec; it allocates nothing (the error is a static
/// kind) and calls nothing.
#[cfg(not(target_os = "linux"))]
pub(crate) unsafe fn apply_in_child(ctl: &Control) -> std::io::Result<()> {
    if !ctl.cpus.is_empty() || ctl.fifo.is_some() || ctl.no_aslr {
        // macOS has no CPU affinity, no SCHED_FIFO for a process, no personality flag.
        return Err(std::io::Error::from(std::io::ErrorKind::Unsupported));
    }
    Ok(())
}

/// `pipe` and `FD_CLOEXEC` on each end (macOS has no `pipe2`).
#[cfg(not(target_os = "linux"))]
pub(super) fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe just returned these two descriptors, owned by nobody else.
    let ends = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in fds {
        // SAFETY: fcntl sets a flag on a descriptor this process owns.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(ends)
}

/// No nameless file outside Linux (`memfd_create`): each worker learns for itself.
#[cfg(not(target_os = "linux"))]
pub(super) fn state_file() -> Option<i32> {
    None
}
