//! What differs by operating system, one module per concern, each with one interface that is
//! the same on Linux, macOS and Windows: nothing outside this module asks which system it is
//! on. Where a system has no equivalent, the interface says so (`None`, `false`, an error that
//! names the system) rather than inventing a figure.
//!
//! - `clock`: the system's monotonic clock and a thread's time on a CPU;
//! - `cpu`: the CPUs a process may use, pinning a thread, the CPU it runs on, an invariant TSC;
//! - `usage`: the process's CPU time, page faults and context switches;
//! - `signals`: Ctrl-C and the signals that end the process (a console control handler on
//!   Windows), and the paths removed when they do;
//! - `files`: exclusive creation of a new file, random names, positioned reads;
//! - `terminal`: whether a stream is a terminal, and its width;
//! - `host`: the host's name, system, release and CPU model; this process's parent;
//!   address-space randomisation;
//! - `pages`: fresh memory from the system, each page faulting once when touched;
//! - `channel`: the worker's two pipe ends its runner passed it;
//! - `symbols`: a symbol another library of the process exports.

pub mod channel;
pub mod clock;
pub mod cpu;
pub mod files;
pub mod host;
pub mod pages;
pub mod signals;
pub mod symbols;
pub mod terminal;
pub mod usage;

/// The name of this operating system as messages say it ("Linux", "macOS", "Windows").
pub const NAME: &str = if cfg!(target_os = "macos") {
    "macOS"
} else if cfg!(windows) {
    "Windows"
} else if cfg!(target_os = "linux") {
    "Linux"
} else {
    std::env::consts::OS
};
