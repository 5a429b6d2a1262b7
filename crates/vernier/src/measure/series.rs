//! One benchmark measured in parts (worker processes, in-process rounds) whose samples make one
//! measurement: the first part calibrates, the later ones keep its iteration count, each part's
//! samples are tagged with their process and round, and a part that fails or is interrupted
//! ends the series with what was measured before it kept. The one multi-part driver policy:
//! `vernier run`'s processes and a standalone suite's rounds both go through it.

use super::{CalibrationEnd, Measurement, StopReason};
use crate::plan::Plan;
use crate::samples::Phase;

/// The parts measured so far of one benchmark, and the plan of the next.
#[derive(Clone, Debug)]
pub struct Series {
    plan: Plan,
    merged: Measurement,
}

impl Series {
    /// A series whose parts (processes, rounds) each measure with `plan` (already the share of
    /// the whole budget a part gets).
    pub fn new(plan: Plan) -> Series {
        Series {
            plan,
            merged: Measurement::empty(),
        }
    }

    /// The plan of the next part: after the first part, at its iteration count.
    pub fn next_plan(&self) -> Plan {
        self.plan.clone()
    }

    /// Add a part's measurement as `process` and `round`; whether the series may go on (the
    /// part neither failed nor was interrupted).
    pub fn add(&mut self, m: Measurement, process: u32, round: u32) -> bool {
        // The first part whose calibration found its count sets it (and the merged
        // measurement's) for the rest. A part whose calibration its deadline cut short (a slow
        // first call, threads started, waits for a CPU: its samples far shorter than the goal)
        // measured at the count it reached; the next part goes on calibrating from there
        // rather than keeping a count that may be 1.
        let mut reached = None;
        if m.error.is_none() && self.plan.fixed_iters.is_none() {
            match m.calibration {
                CalibrationEnd::Found => {
                    self.plan.fixed_iters = Some(m.iters_per_sample);
                    self.merged.iters_per_sample = m.iters_per_sample;
                    self.merged.steady = m.steady;
                    // The parts before it were calibrating in effect: their samples, at counts
                    // short of the one found, stay in the file as calibration's.
                    for x in &mut self.merged.samples.samples {
                        x.phase = Phase::Calibration;
                    }
                }
                CalibrationEnd::CutShort { next_iters } => {
                    self.plan.start_iters = self.plan.start_iters.max(next_iters);
                    reached = Some(m.iters_per_sample);
                }
                CalibrationEnd::NotEnded => {}
            }
        }
        self.merged.append(m, process, round);
        if let Some(n) = reached {
            self.merged.iters_per_sample = self.merged.iters_per_sample.max(n);
        }
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
        m.calibration = CalibrationEnd::Found;
        m
    }

    #[test]
    fn the_first_part_sets_the_count_and_later_parts_are_tagged_and_follow_in_time() {
        let mut s = Series::new(Plan::quick());
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
        let mut s = Series::new(Plan::quick());
        assert!(s.add(part(8, &[5], StopReason::Budget, None), 0, 0));
        assert!(!s.add(part(8, &[6], StopReason::Failed, Some("boom")), 1, 0));
        assert!(s.ended());
        assert_eq!(s.measurement().error.as_deref(), Some("boom"));
        assert_eq!(s.measurement().samples.len(), 2);

        let mut s = Series::new(Plan::quick());
        s.fail("cannot start the worker".into());
        assert!(s.ended() && s.measurement().stop == StopReason::Failed);

        let mut s = Series::new(Plan::quick());
        assert!(!s.add(part(8, &[5], StopReason::Interrupted, None), 0, 0));
        let mut t = Series::new(Plan::quick());
        t.interrupt();
        assert_eq!(t.measurement().stop, StopReason::Interrupted);
    }

    #[test]
    fn a_part_that_never_ended_its_calibration_sets_no_count() {
        // A part cut short while it calibrated (Ctrl-C between its rounds, in a test's script)
        // sets no count.
        let mut s = Series::new(Plan::quick());
        let mut first = part(1, &[5, 5, 5], StopReason::Budget, None);
        first.calibration = CalibrationEnd::NotEnded;
        for x in &mut first.samples.samples {
            x.phase = Phase::Calibration;
        }
        assert!(s.add(first, 0, 0));
        assert_eq!(s.next_plan().fixed_iters, None, "the next part calibrates");
        assert_eq!(s.next_plan().start_iters, 1);
        assert!(s.add(part(16, &[80, 81], StopReason::Budget, None), 1, 0));
        assert_eq!(s.next_plan().fixed_iters, Some(16));
        let m = s.into_measurement();
        assert_eq!(m.iters_per_sample, 16);
        assert_eq!(m.samples.len(), 5);
    }

    #[test]
    fn a_calibration_cut_short_is_continued_by_the_next_part_not_kept() {
        // Threads started on the first sample: the first part's deadline ended its
        // calibration at one iteration (130 ns samples against a 20 µs goal).
        let mut s = Series::new(Plan::quick());
        let mut first = part(1, &[130, 130], StopReason::Budget, None);
        first.calibration = CalibrationEnd::CutShort { next_iters: 19 };
        assert!(s.add(first, 0, 0));
        let next = s.next_plan();
        assert_eq!((next.fixed_iters, next.start_iters), (None, 19));
        // The second part finds the count; the third keeps it. The first part's samples
        // become calibration's: the headline is the found count's.
        assert!(s.add(part(160, &[20_800, 20_900], StopReason::Budget, None), 1, 0));
        assert_eq!(s.next_plan().fixed_iters, Some(160));
        assert_eq!(s.measurement().iters_per_sample, 160);
        let phases: Vec<Phase> = s
            .measurement()
            .samples
            .samples
            .iter()
            .map(|x| x.phase)
            .collect();
        use Phase::{Calibration, Measure};
        assert_eq!(phases, [Calibration, Calibration, Measure, Measure]);
        // Every part cut short: the count reached last is the merged one.
        let mut s = Series::new(Plan::quick());
        for (k, n) in [(0, 1), (1, 19)] {
            let mut p = part(n, &[130 * n], StopReason::Budget, None);
            p.calibration = CalibrationEnd::CutShort { next_iters: n * 8 };
            assert!(s.add(p, k, 0));
        }
        assert_eq!(s.next_plan().start_iters, 152);
        assert_eq!(s.measurement().iters_per_sample, 19);
    }

    #[test]
    fn a_fixed_count_asked_for_is_kept() {
        let mut plan = Plan::quick();
        plan.fixed_iters = Some(1);
        let mut s = Series::new(plan);
        s.add(part(1, &[5], StopReason::Budget, None), 0, 0);
        assert_eq!(s.next_plan().fixed_iters, Some(1));
    }
}
