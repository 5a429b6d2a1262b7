//! The machine the benchmarks run on, as the commands read it: `/sys` and `/proc` through a
//! [`SysRoot`] (so that tests run against fake trees), CPU lists, this process's affinity,
//! and what the machine says about its CPUs, frequencies, IRQs and caches.

pub mod affinity;
pub mod audit;
pub mod cpulist;
pub mod machine;
pub mod root;

pub use cpulist::CpuSet;
pub use root::SysRoot;
