//! Performance counters around the timed region: cycles, instructions, branch and cache misses
//! from the CPU's PMU, and task-clock, context switches, migrations and page faults from the
//! kernel, read per sample through `perf_event_open(2)`.
//!
//! The system call is made by hand (`libc::syscall`) with a `perf_event_attr` defined here, so
//! the crate benchmarks link stays light. Everything that can be computed without a system call
//! — parsing a group read, scaling, per-sample deltas, the columns the engine keeps,
//! the note explaining what could not be opened — is a pure function with its own tests.
//!
//! # Groups and reads
//!
//! Events are opened for the calling thread only (`pid = 0`, `cpu = -1`, no `inherit`) in at
//! most two groups: one for the hardware events (PMU) and one for the software events (kernel).
//! Hardware and software events are kept apart so that the software counters stay exact when
//! the PMU has to multiplex the hardware group, and so that a machine without a PMU still gets
//! its software group. Each group is read with ONE `read(2)` (`PERF_FORMAT_GROUP`), so a sample
//! costs one read per group on each side of the region, nested so the hardware group sits
//! closest to the timer:
//!
//! ```text
//! read_start: read(software) read(hardware)   timer.start() … loop … timer.stop()
//! read_stop:  read(hardware) read(software)
//! ```
//!
//! # Multiplexing
//!
//! The default set fits the counters of common CPUs without multiplexing. At open time the
//! hardware group is checked to be schedulable (it must run at all); when it cannot be (too many
//! events for the PMU), events are dropped from the end of the list until it can, and each
//! dropped event is reported as unavailable. At run time, when another user of the PMU forces
//! rotation, a sample whose group ran for less time than it was enabled is *scaled*
//! (`value × enabled / running`) and flagged `scaled`; a sample in which the group never ran
//! has no value for its events (absent, never zero).
//!
//! # Fallback
//!
//! Whatever cannot be opened (no PMU in a virtual machine, `perf_event_paranoid`, a seccomp
//! filter) is listed as [`Unavailable`] with the reason and, when there is one, the fix;
//! [`unavailable_note`] turns the list into one sentence for the user. Missing events are
//! absent from every result, not zero.
//!
//! # Files
//!
//! - `event`: the events, their names, the default set, the selection;
//! - `sample`: one sample's values, interruptions, the engine's columns;
//! - `read`: group reads, deltas and scaling (pure);
//! - `notes`: what could not be opened, why, and the fix (pure);
//! - `sys`: the system call, the ioctls and the reads (unsafe); `sys_none` where there is no
//!   `perf_event_open` (every event unavailable, the system named);
//! - `set`: [`CounterSet`], the counters of a thread, and the cost of reading them.

mod event;
mod notes;
mod read;
mod sample;
mod set;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod sys;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[path = "sys_none.rs"]
mod sys;

pub use event::*;
pub use notes::*;
pub use read::*;
pub use sample::*;
pub use set::*;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use sys::*;
