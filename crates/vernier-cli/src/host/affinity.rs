//! Process control for the noise probe and the load generator: pin the calling thread to a
//! CPU, read the CPUs this process may use (the system's calls are `vernier::os::cpu`'s).

use std::io;

use super::cpulist::CpuSet;

/// Pin the calling thread to `cpu` (an error where the system refuses, or cannot: macOS).
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    vernier::os::cpu::pin_thread(cpu)
}

/// The CPUs this process is allowed to run on.
pub fn allowed_cpus() -> CpuSet {
    vernier::os::cpu::affinity()
        .map(|cpus| cpus.into_iter().collect())
        .unwrap_or_default()
}
