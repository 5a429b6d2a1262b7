//! `perf_event_open(2)` by hand: the kernel's `perf_event_attr`, the system call, the ioctls
//! and the reads of one group's file descriptors. The only unsafe code of the counters.

use super::notes::does_not_fit;
use super::read::Group;
use super::{
    classify_failure, group_read_len, Environment, Event, EventKind, Unavailable, READ_FORMAT,
};
use std::os::raw::c_int;

/// `struct perf_event_attr` of `linux/perf_event.h`, up to `PERF_ATTR_SIZE_VER5` (112 bytes,
/// Linux ≥ 4.1). Unions are represented by their first member.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// `sample_period` / `sample_freq`.
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bit-field word: `disabled` is bit 0, `inherit` 1, `pinned` 2, `exclusive` 3,
    /// `exclude_user` 4, `exclude_kernel` 5, `exclude_hv` 6, `exclude_idle` 7, …
    pub flags: u64,
    /// `wakeup_events` / `wakeup_watermark`.
    pub wakeup_events: u32,
    pub bp_type: u32,
    /// `bp_addr` / `config1`.
    pub config1: u64,
    /// `bp_len` / `config2`.
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
}

/// `PERF_ATTR_SIZE_VER5`.
pub const PERF_ATTR_SIZE_VER5: u32 = 112;
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE_VER5 as usize);

pub const ATTR_FLAG_DISABLED: u64 = 1 << 0;
pub const ATTR_FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const ATTR_FLAG_EXCLUDE_HV: u64 = 1 << 6;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
// ioctls: _IO('$', n) and _IOR('$', 7, u64).
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_ID: libc::c_ulong = 0x8008_2407;
const PERF_IOC_FLAG_GROUP: libc::c_ulong = 1;

/// The attribute Vernier opens `event` with (leader: starts disabled, enabled once the group
/// is complete; members: enabled, they follow their leader).
pub fn attr_for(event: Event, leader: bool) -> PerfEventAttr {
    let (type_, config) = event.type_and_config();
    let mut flags = ATTR_FLAG_EXCLUDE_HV;
    if leader {
        flags |= ATTR_FLAG_DISABLED;
    }
    if event.excludes_kernel() {
        flags |= ATTR_FLAG_EXCLUDE_KERNEL;
    }
    PerfEventAttr {
        type_,
        size: PERF_ATTR_SIZE_VER5,
        config,
        read_format: READ_FORMAT,
        flags,
        ..PerfEventAttr::default()
    }
}

/// `perf_event_open(attr, 0, -1, group_fd, FD_CLOEXEC)`: the fd, or the errno.
fn perf_event_open(attr: &PerfEventAttr, group_fd: c_int) -> Result<c_int, i32> {
    // The kernel writes its own size into `size` when it rejects ours (E2BIG): give it a copy.
    let mut attr = *attr;
    // SAFETY: `attr` is a valid, initialised, writable perf_event_attr whose `size` field
    // matches its layout and which lives across the call; the other arguments are integers.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &mut attr as *mut PerfEventAttr,
            0 as libc::pid_t,
            -1 as c_int,
            group_fd,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL))
    } else {
        Ok(ret as c_int)
    }
}

fn close_fd(fd: c_int) {
    // SAFETY: `fd` was returned by perf_event_open and is owned by exactly one `Group`, which
    // closes it once.
    unsafe { libc::close(fd) };
}

/// One group read into `buf`; false when the read failed or was short.
#[inline(always)]
pub(super) fn read_group(fd: c_int, buf: &mut [u64]) -> bool {
    let bytes = std::mem::size_of_val(buf);
    // SAFETY: `buf` is a live, writable buffer of exactly `bytes` bytes; `read` writes at most
    // that many.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), bytes) };
    n == bytes as isize
}

impl Drop for Group {
    fn drop(&mut self) {
        // Members first, the leader last.
        for &fd in self.fds.iter().rev() {
            close_fd(fd);
        }
    }
}

impl Group {
    /// Open `events` as one group; failures go to `unavailable`. `None` when nothing opened.
    pub(super) fn open(
        events: &[Event],
        env: &Environment,
        unavailable: &mut Vec<Unavailable>,
    ) -> Option<Group> {
        let mut g = Group {
            fds: Vec::new(),
            events: Vec::new(),
            ids: None,
            start: Vec::new(),
            stop: Vec::new(),
        };
        for &e in events {
            let leader = g.fds.is_empty();
            let group_fd = if leader { -1 } else { g.fds[0] };
            match perf_event_open(&attr_for(e, leader), group_fd) {
                Ok(fd) => {
                    g.fds.push(fd);
                    g.events.push(e);
                }
                // The x86 and Arm PMU drivers validate at open that the group fits the
                // PMU's counters.
                Err(libc::EINVAL) if !leader && e.kind() == EventKind::Hardware => {
                    unavailable.push(does_not_fit(e, "EINVAL"))
                }
                Err(errno) => unavailable.push(classify_failure(e, errno, env)),
            }
        }
        if g.fds.is_empty() {
            return None;
        }
        let mut ids = Vec::with_capacity(g.fds.len());
        for &fd in &g.fds {
            let mut id = 0u64;
            // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer, which points to a
            // live local.
            let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
            if r != 0 {
                break;
            }
            ids.push(id);
        }
        if ids.len() == g.fds.len() {
            g.ids = Some(ids);
        }
        let len = group_read_len(g.fds.len());
        g.start = vec![0; len];
        g.stop = vec![0; len];
        // SAFETY: plain ioctl on the leader fd we own; the argument is a flag, not a pointer.
        let r = unsafe { libc::ioctl(g.fds[0], PERF_EVENT_IOC_ENABLE as _, PERF_IOC_FLAG_GROUP) };
        if r != 0 {
            // A group that never counts would read as zeros: report it instead.
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EINVAL);
            for &e in &g.events {
                unavailable.push(classify_failure(e, errno, env));
            }
            return None;
        }
        Some(g)
    }

    /// Whether the group gets onto the PMU at all: spin briefly, then compare running time.
    pub(super) fn runs(&mut self) -> bool {
        let t0 = crate::timer::monotonic_ns();
        while crate::timer::monotonic_ns() - t0 < SCHEDULABLE_PROBE_NS {
            std::hint::spin_loop();
        }
        let mut buf = vec![0u64; self.start.len()];
        read_group(self.fds[0], &mut buf) && buf[2] > 0
    }
}

/// How long the hardware group is given to get onto the PMU before it is declared too big.
/// Group scheduling happens at enable and at each context switch or rotation tick (1 ms by
/// default), so a few ms tells a group that can never be scheduled from one that rotates.
const SCHEDULABLE_PROBE_NS: u64 = 4_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::event::PERF_TYPE_HW_CACHE;

    #[test]
    fn attr_layout_matches_the_kernel_header() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 112);
        let a = attr_for(Event::Cycles, true);
        assert_eq!(a.size, PERF_ATTR_SIZE_VER5);
        assert_eq!(a.read_format, 0b1111);
        assert_eq!(a.flags, 0b110_0001);
        let m = attr_for(Event::ContextSwitches, false);
        assert_eq!(m.flags, ATTR_FLAG_EXCLUDE_HV);
        assert_eq!(
            Event::L1dLoadMisses.type_and_config(),
            (PERF_TYPE_HW_CACHE, 0x10000)
        );
        // Field offsets of the kernel's struct.
        let base = &a as *const _ as usize;
        assert_eq!(&a.read_format as *const _ as usize - base, 32);
        assert_eq!(&a.flags as *const _ as usize - base, 40);
        assert_eq!(&a.config1 as *const _ as usize - base, 56);
        assert_eq!(&a.sample_regs_intr as *const _ as usize - base, 96);
        assert_eq!(&a.aux_watermark as *const _ as usize - base, 104);
    }
}
