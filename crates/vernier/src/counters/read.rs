//! Group reads (`PERF_FORMAT_GROUP`) parsed, differenced and scaled: pure functions over the
//! words `read(2)` returns, tested without a system call.

use super::{CounterError, CounterSample, Event};

/// `read_format` bits.
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub const PERF_FORMAT_ID: u64 = 1 << 2;
pub const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// The `read_format` Vernier uses; the buffer of one group read is
/// `[nr, time_enabled, time_running, value0, id0, value1, id1, …]` (u64 each).
pub const READ_FORMAT: u64 = PERF_FORMAT_GROUP
    | PERF_FORMAT_TOTAL_TIME_ENABLED
    | PERF_FORMAT_TOTAL_TIME_RUNNING
    | PERF_FORMAT_ID;

/// Length in u64 words of a group read of `nr` events with [`READ_FORMAT`].
pub const fn group_read_len(nr: usize) -> usize {
    3 + 2 * nr
}

/// One parsed group read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRead {
    /// Nanoseconds the group has been enabled.
    pub time_enabled: u64,
    /// Nanoseconds the group has actually been on the PMU (less than enabled: multiplexed).
    pub time_running: u64,
    /// Raw (unscaled) counts, in group order.
    pub values: Vec<u64>,
}

/// Parse a group read buffer (`READ_FORMAT`). `ids`, when given, are the kernel's ids of the
/// group's events in order, and are checked against the buffer.
pub fn parse_group_read(buf: &[u64], ids: Option<&[u64]>) -> Result<GroupRead, CounterError> {
    let nr = check_group_read(buf, ids)?;
    Ok(GroupRead {
        time_enabled: buf[1],
        time_running: buf[2],
        values: (0..nr).map(|i| buf[3 + 2 * i]).collect(),
    })
}

fn check_group_read(buf: &[u64], ids: Option<&[u64]>) -> Result<usize, CounterError> {
    let Some(&nr) = buf.first() else {
        return Err(CounterError::BadRead("empty buffer".into()));
    };
    let nr = nr as usize;
    if buf.len() < group_read_len(nr) {
        return Err(CounterError::BadRead(format!(
            "{} events announced but only {} words read",
            nr,
            buf.len()
        )));
    }
    if let Some(ids) = ids {
        if ids.len() != nr {
            return Err(CounterError::BadRead(format!(
                "{} events read, {} expected",
                nr,
                ids.len()
            )));
        }
        for (i, &id) in ids.iter().enumerate() {
            if buf[4 + 2 * i] != id {
                return Err(CounterError::BadRead(format!(
                    "event {} has id {}, expected {}",
                    i,
                    buf[4 + 2 * i],
                    id
                )));
            }
        }
    }
    Ok(nr)
}

/// How a value was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// The group was on the PMU the whole time: the count is exact.
    Exact,
    /// The group was on the PMU part of the time: the count is extrapolated.
    Scaled,
    /// The group never ran: there is no count.
    NotCounted,
}

/// Scale a raw delta by the time its group was enabled over the time it ran.
pub fn scale(delta_value: u64, delta_enabled: u64, delta_running: u64) -> (Option<u64>, Scaling) {
    if delta_running >= delta_enabled {
        (Some(delta_value), Scaling::Exact)
    } else if delta_running == 0 {
        (None, Scaling::NotCounted)
    } else {
        let v = (delta_value as u128 * delta_enabled as u128 + delta_running as u128 / 2)
            / delta_running as u128;
        (Some(v.min(u64::MAX as u128) as u64), Scaling::Scaled)
    }
}

/// The per-sample deltas of one group, from its reads at the start and the end of the region,
/// written into `out` for `events` (the group's events, in group order).
pub fn group_delta(
    events: &[Event],
    start: &[u64],
    stop: &[u64],
    ids: Option<&[u64]>,
    out: &mut CounterSample,
) -> Result<Scaling, CounterError> {
    let n0 = check_group_read(start, ids)?;
    let n1 = check_group_read(stop, ids)?;
    if n0 != n1 || n0 != events.len() {
        return Err(CounterError::BadRead(format!(
            "{} and {} events read for a group of {}",
            n0,
            n1,
            events.len()
        )));
    }
    let d_enabled = stop[1].wrapping_sub(start[1]);
    let d_running = stop[2].wrapping_sub(start[2]);
    let mut how = Scaling::Exact;
    for (i, &e) in events.iter().enumerate() {
        let dv = stop[3 + 2 * i].wrapping_sub(start[3 + 2 * i]);
        let (v, s) = scale(dv, d_enabled, d_running);
        how = s;
        out.set(e, v, s == Scaling::Scaled);
    }
    Ok(how)
}

/// An open group (`sys`): the leader's fd (reads return the whole group) and its members'
/// fds. Never built where there is no `perf_event_open`.
#[derive(Debug)]
pub(super) struct Group {
    pub(super) fds: Vec<std::os::raw::c_int>,
    pub(super) events: Vec<Event>,
    pub(super) ids: Option<Vec<u64>>,
    pub(super) start: Vec<u64>,
    pub(super) stop: Vec<u64>,
}
