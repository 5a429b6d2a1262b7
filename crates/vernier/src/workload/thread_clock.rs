//! A thread's own clocks, read outside every timed region: its time on a CPU
//! (`CLOCK_THREAD_CPUTIME_ID`) and, where Linux provides it, the time it spent runnable but
//! waiting for a CPU (the run-queue wait, second field of `/proc/thread-self/schedstat`, in
//! ns; the kernel keeps it when built with `CONFIG_SCHED_INFO`).
//!
//! A threaded benchmark's thread that was slower than alone was either on its CPU and slowed
//! (a cache line written by several threads, an atomic), blocked on purpose (a lock: a
//! voluntary sleep), or runnable and waiting for a CPU another task held (the machine's load,
//! or more threads than CPUs). The two clocks tell the three apart: on-CPU time per operation
//! rises only in the first, and the run-queue wait counts only the last.

use std::fs::File;

/// One reading of a thread's clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Time on a CPU since the thread started, ns.
    pub cpu_ns: u64,
    /// Time runnable but waiting for a CPU since the thread started, ns; `None` where the
    /// kernel does not say.
    pub wait_ns: Option<u64>,
}

impl Reading {
    /// The clocks' advance from `before` to `self`: (on-CPU ns, run-queue wait ns when both
    /// readings have it).
    pub fn since(&self, before: &Reading) -> (u64, Option<u64>) {
        let wait = match (self.wait_ns, before.wait_ns) {
            (Some(a), Some(b)) => Some(a.saturating_sub(b)),
            _ => None,
        };
        (self.cpu_ns.saturating_sub(before.cpu_ns), wait)
    }
}

/// The calling thread's clocks: its schedstat file is opened once (by the thread that reads
/// it: `thread-self` names the opener) and read again from its start for each reading.
pub struct ThreadClock {
    schedstat: Option<File>,
}

impl ThreadClock {
    /// The clocks of the calling thread; the run-queue wait is unknown when the file cannot
    /// be opened (no `/proc`, a kernel without schedstat).
    pub fn open() -> ThreadClock {
        ThreadClock {
            schedstat: File::open("/proc/thread-self/schedstat").ok(),
        }
    }

    /// Read both clocks before a measured region (a `pread`, then a system call: never inside
    /// a timed region): the on-CPU clock last, so the reads' own cost stays out of it.
    pub fn read_before(&self) -> Reading {
        let wait_ns = self.wait_ns();
        Reading {
            cpu_ns: thread_cpu_ns(),
            wait_ns,
        }
    }

    /// Read both clocks after a measured region: the on-CPU clock first.
    pub fn read_after(&self) -> Reading {
        let cpu_ns = thread_cpu_ns();
        Reading {
            cpu_ns,
            wait_ns: self.wait_ns(),
        }
    }

    fn wait_ns(&self) -> Option<u64> {
        let f = self.schedstat.as_ref()?;
        let mut buf = [0u8; 96];
        let n = crate::os::files::read_at(f, &mut buf, 0).ok()?;
        parse_wait(std::str::from_utf8(&buf[..n]).ok()?)
    }
}

/// The calling thread's time on a CPU, ns.
pub use crate::os::clock::thread_cpu_ns;

/// The run-queue wait of a schedstat line `"<on-cpu ns> <wait ns> <timeslices>"`.
pub fn parse_wait(line: &str) -> Option<u64> {
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_lines_and_deltas() {
        assert_eq!(parse_wait("1234 5678 9\n"), Some(5678));
        assert_eq!(parse_wait("1234"), None);
        assert_eq!(parse_wait("1234 x 1"), None);
        let a = Reading {
            cpu_ns: 100,
            wait_ns: Some(10),
        };
        let b = Reading {
            cpu_ns: 350,
            wait_ns: Some(40),
        };
        assert_eq!(b.since(&a), (250, Some(30)));
        let unknown = Reading {
            cpu_ns: 400,
            wait_ns: None,
        };
        assert_eq!(unknown.since(&a), (300, None));
        // The calling thread's CPU clock advances while it works, within 2 s of wall time
        // (the coarsest clock steps in scheduler ticks, 10-16 ms on Windows, and a loaded
        // machine gives the thread a fraction of the wall time).
        let c = ThreadClock::open();
        let r0 = c.read_before();
        let t0 = crate::timer::monotonic_ns();
        let mut x = 0u64;
        while c.read_after().cpu_ns == r0.cpu_ns
            && crate::timer::monotonic_ns() - t0 < 2_000_000_000
        {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
        }
        assert!(c.read_after().cpu_ns > r0.cpu_ns, "{x}");
    }
}
