//! Systems without `perf_event_open(2)` (macOS, Windows): no counter opens, and each event
//! asked for is listed as unavailable with the system named. macOS's own counters (kperf) are
//! private to Apple's tools; Windows has no per-thread PMU interface for user programs.

use super::read::Group;
use super::{Environment, Event, Unavailable};
use std::os::raw::c_int;

/// Never read: no group opens here.
#[inline(always)]
pub(super) fn read_group(_fd: c_int, _buf: &mut [u64]) -> bool {
    false
}

impl Group {
    /// Nothing opens: every event goes to `unavailable`, the system named.
    pub(super) fn open(
        events: &[Event],
        _env: &Environment,
        unavailable: &mut Vec<Unavailable>,
    ) -> Option<Group> {
        for &event in events {
            unavailable.push(Unavailable {
                event,
                reason: format!(
                    "{} has no perf_event_open, the Linux interface \
                     Vernier reads counters through",
                    crate::os::NAME
                ),
                fix: Some("measure on Linux for counters".to_string()),
            });
        }
        None
    }

    pub(super) fn runs(&mut self) -> bool {
        false
    }
}
