//! One benchmark measured in parts (worker processes, in-process rounds) whose samples make one
//! measurement: the first part calibrates, the later ones keep its iteration count, each part's
//! samples are tagged with their process and round, and a part that fails or is interrupted
//! ends the series with what was measured before it kept. The one multi-part driver policy:
//! `vernier run`'s processes and a standalone suite's rounds both go through it.

use super::{Measurement, StopReason};
use crate::plan::Plan;
use crate::samples::Phase;

/// Parts that may end before their calibration does before the count they reached is kept.
pub const MAX_UNCALIBRATED_PARTS: u32 = 2;

/// The parts measured so far of one benchmark, and the plan of the next.
#[derive(Clone, Debug)]
pub struct Series {
    plan: Plan,
    merged: Measurement,
    /// Parts that ended before their calibration did, and the largest count they reached.
    uncalibrated: (u32, u64),
    /// Parts planned, and added so far.
    parts: (usize, usize),
}

impl Series {
    /// A series of `parts` parts (processes, rounds) that each measure with `plan` (already the
    /// share of the whole budget a part gets).
    pub fn new(plan: Plan, parts: usize) -> Series {
        Series {
            plan,
            merged: Measurement::empty(),
            uncalibrated: (0, 0),
            parts: (parts, 0),
        }
    }

    /// The plan of the next part: after the first part, at its iteration count.
    pub fn next_plan(&self) -> Plan {
        self.plan.clone()
    }

    /// Add a part's measurement as `process` and `round`; whether the series may go on (the
    /// part neither failed nor was interrupted).
    pub fn add(&mut self, m: Measurement, process: u32, round: u32) -> bool {
        // The first part that ended its calibration sets the count (and the merged
        // measurement's) for the rest. A part whose budget ran out while it calibrated (a
        // worker that took its share to start) found none: the next part calibrates instead
        // of every later part measuring at the count it stopped at. But the last part, and
        // every part after two that ran out (samples that each wait milliseconds for a CPU,
        // as threads on a loaded machine do, or that evict the caches first), measure at the
        // largest count reached, so that some samples are measured rather than every part
        // calibrating again.
        self.parts.1 += 1;
        let last_next = self.parts.1 + 1 >= self.parts.0;
        let calibrated = m
            .samples
            .samples
            .iter()
            .any(|s| s.phase != Phase::Calibration);
        if m.error.is_none() && self.plan.fixed_iters.is_none() {
            if calibrated {
                self.plan.fixed_iters = Some(m.iters_per_sample);
                self.merged.iters_per_sample = m.iters_per_sample;
                self.merged.steady = m.steady;
            } else if !m.samples.samples.is_empty() {
                let (parts, reached) = &mut self.uncalibrated;
                *parts += 1;
                *reached = (*reached).max(m.iters_per_sample);
                if *parts >= MAX_UNCALIBRATED_PARTS || last_next {
                    self.plan.fixed_iters = Some(*reached);
                    self.merged.iters_per_sample = *reached;
                }
            }
        }
        self.merged.append(m, process, round);
        !self.ended()
    }

    /// A part could not be started: the series ends with `error`.
    pub fn fail(&mut self, error: String) {
        self.merged.error = Some(error);
        self.merged.stop = StopReason::Failed;
    }

    /// Ctrl-C before the next part: the series ends, marked as cut short.
    pub fn interrupt(&mut self) {
        self.merged.stop = StopReason::Interrupted;
    }

    /// Whether a part failed or the series was interrupted (no part is added after either,
    /// so the merged measurement's last stop and its error say so).
    pub fn ended(&self) -> bool {
        self.merged.error.is_some() || self.merged.stop == StopReason::Interrupted
    }

    /// The merged measurement so far.
    pub fn measurement(&self) -> &Measurement {
        &self.merged
    }

    /// The merged measurement.
    pub fn into_measurement(self) -> Measurement {
        self.merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::Sample;

    fn part(iters: u64, ns: &[u64], stop: StopReason, error: Option<&str>) -> Measurement {
        let mut m = Measurement::empty();
        let batch: Vec<Sample> = ns
            .iter()
            .enumerate()
            .map(|(k, &t)| Sample {
                iters,
                ns: t,
                t_ns: k as u64 * 10,
                process: 0,
                round: 0,
                phase: Phase::Measure,
            })
            .collect();
        m.samples.push_batch(&batch, &[]);
        m.iters_per_sample = iters;
        m.wall_ns = 100;
        m.stop = stop;
        m.error = error.map(str::to_string);
        m
    }

    #[test]
    fn the_first_part_sets_the_count_and_later_parts_are_tagged_and_follow_in_time() {
        let mut s = Series::new(Plan::quick(), 3);
        assert_eq!(s.next_plan().fixed_iters, None);
        assert!(s.add(part(64, &[10, 11], StopReason::Budget, None), 0, 0));
        assert_eq!(s.next_plan().fixed_iters, Some(64));
        assert!(s.add(part(64, &[12], StopReason::Precise, None), 1, 2));
        let m = s.into_measurement();
        assert_eq!(m.iters_per_sample, 64);
        let tags: Vec<(u32, u32, u64)> = m
            .samples
            .samples
            .iter()
            .map(|x| (x.process, x.round, x.t_ns))
            .collect();
        assert_eq!(tags, [(0, 0, 0), (0, 0, 10), (1, 2, 100)]);
        assert_eq!(m.wall_ns, 200);
    }

    #[test]
    fn a_failed_or_interrupted_part_ends_the_series_keeping_what_came_before() {
        let mut s = Series::new(Plan::quick(), 3);
        assert!(s.add(part(8, &[5], StopReason::Budget, None), 0, 0));
        assert!(!s.add(part(8, &[6], StopReason::Failed, Some("boom")), 1, 0));
        assert!(s.ended());
        assert_eq!(s.measurement().error.as_deref(), Some("boom"));
        assert_eq!(s.measurement().samples.len(), 2);

        let mut s = Series::new(Plan::quick(), 3);
        s.fail("cannot start the worker".into());
        assert!(s.ended() && s.measurement().stop == StopReason::Failed);

        let mut s = Series::new(Plan::quick(), 3);
        assert!(!s.add(part(8, &[5], StopReason::Interrupted, None), 0, 0));
        let mut t = Series::new(Plan::quick(), 3);
        t.interrupt();
        assert_eq!(t.measurement().stop, StopReason::Interrupted);
    }

    #[test]
    fn a_part_that_never_ended_its_calibration_sets_no_count() {
        let mut s = Series::new(Plan::quick(), 3);
        let mut first = part(1, &[5, 5, 5], StopReason::Budget, None);
        for x in &mut first.samples.samples {
            x.phase = Phase::Calibration;
        }
        assert!(s.add(first, 0, 0));
        assert_eq!(s.next_plan().fixed_iters, None, "the next part calibrates");
        assert!(s.add(part(16, &[80, 81], StopReason::Budget, None), 1, 0));
        assert_eq!(s.next_plan().fixed_iters, Some(16));
        let m = s.into_measurement();
        assert_eq!(m.iters_per_sample, 16);
        assert_eq!(m.samples.len(), 5);
    }

    #[test]
    fn after_two_parts_that_never_ended_their_calibration_the_count_reached_is_kept() {
        let uncalibrated = |iters: u64| {
            let mut m = part(
                iters,
                &[4_000_000, 2_000, 8_000_000],
                StopReason::Budget,
                None,
            );
            for x in &mut m.samples.samples {
                x.phase = Phase::Calibration;
            }
            m
        };
        let mut s = Series::new(Plan::quick(), 3);
        assert!(s.add(uncalibrated(2), 0, 0));
        assert_eq!(
            s.next_plan().fixed_iters,
            None,
            "the second part calibrates again"
        );
        assert!(s.add(uncalibrated(1), 1, 0));
        assert_eq!(s.next_plan().fixed_iters, Some(2), "the third measures");
        assert!(s.add(part(2, &[9_000, 9_100], StopReason::Budget, None), 2, 0));
        let m = s.into_measurement();
        assert_eq!(m.iters_per_sample, 2);
        assert_eq!(m.samples.len(), 8);
        // Of two parts, the second is the last: it measures at the count the first reached.
        let mut s = Series::new(Plan::quick(), 2);
        assert!(s.add(uncalibrated(1), 0, 0));
        assert_eq!(s.next_plan().fixed_iters, Some(1));
    }

    #[test]
    fn a_fixed_count_asked_for_is_kept() {
        let mut plan = Plan::quick();
        plan.fixed_iters = Some(1);
        let mut s = Series::new(plan, 3);
        s.add(part(1, &[5], StopReason::Budget, None), 0, 0);
        assert_eq!(s.next_plan().fixed_iters, Some(1));
    }
}
