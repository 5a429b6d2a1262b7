//! Process control for the noise probe and the load generator: pin the calling thread to a
//! CPU, read the CPUs this process may use.

use std::io;

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
