//! The engine: decides how many iterations a sample has, takes samples until the estimate is
//! precise enough or the budget is spent, and keeps every sample. It never prints and never
//! computes a reported figure (that is `analyze`); it only uses the steady-state detector and
//! the median interval to decide when to stop.
//!
//! The engine is an explicit state machine, [`sampler::Sampler`], which the single benchmark
//! ([`measure`]) and the pair ([`pairs::measure_pair`]) both drive: it owns the states, the
//! budget, Ctrl-C, calibration, the probe's share and progress, answers "what next?" with a
//! batch to measure and takes the batch back. What differs is a policy: for one benchmark, the
//! batches below and the median's interval as the stopping rule.
//!
//! | state       | does                                                      | leaves when |
//! |-------------|-----------------------------------------------------------|-------------|
//! | `Calibrate` | doubles the iteration count from 1, `calibration_samples` samples per step | the fastest sample of a step lasts ≥ `Plan::min_sample_ns` (or half the budget is gone) |
//! | `Collect`   | alternates batches at N (the "main" series) with small batches at N/16, N/4 and 2N (the linearity ladder, interleaved so drift bends no line); the core-speed probe before a batch while the probes took ≤ `MAX_PROBE_SHARE` of the time | the median's 95 % interval is within `target_rel_ci` on a steady state, after `min_time_ns` and `min_span_ns`; or the budget is spent; or Ctrl-C |
//! | `Done`      | — | — |
//!
//! The clock that keeps the budget and the target that measures are traits, so the whole
//! machine runs deterministically in tests against a scripted target (and the sampler can be
//! driven by hand, batch by batch: see its tests).

pub mod ctrlc;
pub mod in_process;
pub mod pairs;
pub mod sampler;
pub mod series;

use crate::plan::Plan;
use crate::samples::{CounterColumn, Phase, Sample, Samples};
use crate::stats;
use crate::stats::steady::{self, SteadyState, WarmupClass};
use crate::timer::TimerInfo;
use sampler::{Ask, Limits, Look, Policy, Round, Sampler};
use std::sync::atomic::AtomicBool;

/// Raised by the CLI's Ctrl-C handler; the engine stops between batches.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A batch of samples returned by a target.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Elapsed nanoseconds of each sample.
    pub ns: Vec<u64>,
    /// Counter deltas, one column per event, aligned with `ns`.
    pub counters: Vec<CounterColumn>,
    /// Set by the engine before the call: run the core-speed probe (a chain of this many
    /// dependent additions, see `kernels::speed_probe`) before the batch, outside every timed
    /// region; 0: no probe. A target that cannot probe ignores it.
    pub probe_adds: u64,
    /// The probe's elapsed ns, when the target ran it.
    pub probe_ns: Option<u64>,
    /// The probe's throughput half (`kernels::wide_probe`, as many additions in eight
    /// independent chains), when the target ran it.
    pub wide_ns: Option<u64>,
    /// A threaded benchmark's threads (`crate::workload::threads`): per thread, the time from
    /// the sample's release to that thread's finish (ns), aligned with `ns`. Empty otherwise.
    pub thread_ns: Vec<Vec<u64>>,
    /// Per thread, its time on a CPU (ns) over the sample's window (from its clock reading
    /// before the release to the one after its finish), aligned with `thread_ns`; empty when
    /// the harness did not read it.
    pub thread_cpu_ns: Vec<Vec<u64>>,
    /// Per thread, its run-queue wait (ns, runnable but waiting for a CPU) over the same
    /// window; empty where the kernel does not say.
    pub thread_wait_ns: Vec<Vec<u64>>,
    /// The CPUs the process that ran a threaded benchmark could use.
    pub cpus: Option<u32>,
    /// Allocation counts per sample (`memory=1`), or why the target cannot count them.
    pub memory: Option<crate::memory::MemoryReply>,
    /// `key=value` tokens a worker adds to its reply for the people who read the protocol,
    /// which the runner does not read (a Python worker's `tracemalloc.` figures).
    pub notes: Vec<(String, String)>,
}

impl Batch {
    /// Empty the results (the probe request stays).
    pub fn clear(&mut self) {
        self.ns.clear();
        self.counters.clear();
        self.probe_ns = None;
        self.wide_ns = None;
        self.thread_ns.clear();
        self.thread_cpu_ns.clear();
        self.thread_wait_ns.clear();
        self.cpus = None;
        self.memory = None;
        self.notes.clear();
    }
}

/// Something that can be measured: runs `count` samples of `iters` iterations each.
pub trait Target {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String>;
    /// One-time set-up before the budget starts (state built outside every timed region).
    fn prepare(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// The wall clock that keeps the budget.
pub trait WallClock {
    fn now_ns(&self) -> u64;
}

/// `CLOCK_MONOTONIC`.
pub struct MonotonicClock;

impl WallClock for MonotonicClock {
    fn now_ns(&self) -> u64 {
        crate::timer::monotonic_ns()
    }
}

/// The engine's states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Calibrate,
    Collect,
    Done,
}

/// What a progress display is told after each batch.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub state: State,
    pub elapsed_ns: u64,
    pub budget_ns: u64,
    pub samples: usize,
    /// Current relative half-width of the median's interval, once there is a steady state.
    pub rel_ci: Option<f64>,
}

/// Why collection stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The interval reached the target.
    Precise,
    /// The time budget was spent first.
    Budget,
    /// Ctrl-C.
    Interrupted,
    /// The target failed (see `Measurement::error`).
    Failed,
}

/// Everything the engine measured for one benchmark.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub samples: Samples,
    /// N: iterations per sample of the main series.
    pub iters_per_sample: u64,
    /// T_tot: the benchmark's whole wall time, calibration and warm-up included.
    pub wall_ns: u64,
    pub stop: StopReason,
    /// Steady state of the main series (`None` when too short to tell).
    pub steady: Option<SteadyState>,
    /// The target's error, when it failed part-way (samples before it are kept).
    pub error: Option<String>,
    /// How the calibration ended: with `iters_per_sample` found, cut short by its deadline,
    /// or not at all.
    pub calibration: CalibrationEnd,
}

impl Measurement {
    /// An empty measurement to append to.
    pub fn empty() -> Measurement {
        Measurement {
            samples: Samples::default(),
            iters_per_sample: 0,
            wall_ns: 0,
            stop: StopReason::Budget,
            steady: None,
            error: None,
            calibration: CalibrationEnd::NotEnded,
        }
    }

    /// Append another measurement of the same benchmark (another process or round): its
    /// samples are tagged with `process` and `round` and follow this one's in time. The first
    /// measurement appended fixes the iteration count and the steady state reported.
    pub fn append(&mut self, other: Measurement, process: u32, round: u32) {
        let offset = self.wall_ns;
        let mut s = other.samples;
        for x in &mut s.samples {
            x.process = process;
            x.round = round;
            x.t_ns += offset;
        }
        if self.samples.is_empty() {
            self.iters_per_sample = other.iters_per_sample;
            self.steady = other.steady;
        }
        self.samples.extend(&s);
        self.wall_ns += other.wall_ns;
        self.stop = other.stop;
        if other.calibration == CalibrationEnd::Found {
            self.calibration = CalibrationEnd::Found;
        }
        if other.error.is_some() {
            self.error = other.error;
        }
    }
}

/// Samples per ladder batch.
pub const LADDER_SAMPLES: usize = 4;
/// Ladder iteration counts as (numerator, denominator) of N, visited in turn between main
/// batches: N/16 and N/4 pin the intercept, 2N the slope.
pub const LADDER: [(u64, u64); 3] = [(1, 16), (1, 4), (2, 1)];
/// Smallest main batch.
pub const MIN_MAIN_BATCH: usize = 16;
/// A batch may take at most this fraction of the budget, so stopping is checked often.
pub const MAX_BATCH_FRACTION: f64 = 0.02;
/// Calibration may use at most this fraction of the budget.
pub const CALIBRATION_FRACTION: f64 = 0.5;

/// The next iteration count of the doubling calibration, after a step whose fastest sample
/// took `best_ns` against a goal of `goal_ns`: counts far too short are jumped over (by up to
/// 1024×), and near the goal each step is a doubling, so samples exist at several counts.
pub fn next_calibration_count(iters: u64, best_ns: u64, goal_ns: u64, max_iters: u64) -> u64 {
    let factor = if best_ns > 0 {
        (goal_ns as f64 / best_ns as f64 / 8.0).clamp(2.0, 1024.0)
    } else {
        2.0
    };
    (iters as f64 * factor).ceil().min(max_iters as f64) as u64
}

/// The calibration step both engines share (one benchmark, and a pair, where the slower side
/// sets the count): the iteration count grows round by round until the fastest sample of a
/// round lasts the goal, the count reaches its ceiling, a fixed count was asked for, or
/// calibration has used [`CALIBRATION_FRACTION`] of the budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The count the next calibration round measures at.
    pub iters: u64,
    goal_ns: u64,
    max_iters: u64,
    fixed: bool,
    deadline_ns: f64,
}

/// The end of calibration: the count to measure with and the sample length it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibrated {
    pub iters: u64,
    pub est_sample_ns: f64,
    /// Found (the goal met, the ceiling reached, or a fixed count asked for), or left where
    /// the deadline cut the calibration short.
    pub end: CalibrationEnd,
}

/// How a measurement's calibration ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrationEnd {
    /// It did not end: the measurement failed or was interrupted while calibrating.
    NotEnded,
    /// The count was found: the measurement's `iters_per_sample`.
    Found,
    /// Its deadline cut it short (the rounds took longer than the count's samples: a slow
    /// first call, threads started, waits for a CPU): a later part of the same benchmark
    /// continues it from `next_iters`.
    CutShort { next_iters: u64 },
}

impl Calibration {
    pub fn new(goal_ns: u64, max_iters: u64, fixed_iters: Option<u64>, budget_ns: u64) -> Self {
        Calibration {
            iters: fixed_iters.unwrap_or(1).max(1),
            goal_ns,
            max_iters,
            fixed: fixed_iters.is_some(),
            deadline_ns: budget_ns as f64 * CALIBRATION_FRACTION,
        }
    }

    /// The same calibration starting from `iters` (where an earlier part's was cut short)
    /// instead of 1; a fixed count is kept.
    pub fn starting_at(mut self, iters: u64) -> Self {
        if !self.fixed {
            self.iters = iters.clamp(1, self.max_iters.max(1));
        }
        self
    }

    /// A round at `iters` whose fastest sample took `best_ns`, `elapsed_ns` into the budget:
    /// the count to measure with, or `None` and the next round's count in `iters`.
    pub fn step(&mut self, best_ns: u64, elapsed_ns: u64) -> Option<Calibrated> {
        let found = best_ns >= self.goal_ns || self.fixed || self.iters >= self.max_iters;
        let next = next_calibration_count(self.iters, best_ns, self.goal_ns, self.max_iters);
        if found || elapsed_ns as f64 >= self.deadline_ns {
            return Some(Calibrated {
                iters: self.iters,
                est_sample_ns: best_ns.max(1) as f64,
                end: if found {
                    CalibrationEnd::Found
                } else {
                    CalibrationEnd::CutShort { next_iters: next }
                },
            });
        }
        self.iters = next;
        None
    }
}

/// The policy of one benchmark: main batches at N alternate with the linearity ladder; the
/// rule is the median's interval on the steady part of the main series.
pub(super) struct Single<'p> {
    plan: &'p Plan,
    samples: Samples,
    /// Indices of the main series' samples.
    main_idx: Vec<usize>,
    main_batch: usize,
    turn: usize,
    /// The batch of the current round is a main one, at this count.
    main: Option<u64>,
}

impl Policy for Single<'_> {
    fn order(&mut self) -> Vec<usize> {
        vec![0]
    }

    fn collect(&mut self, _: &[usize], at: &Round) -> Vec<Ask> {
        let n = at.iters;
        let remaining = at.budget_ns.saturating_sub(at.elapsed_ns) as f64;
        let cap_by_time =
            (at.budget_ns as f64 * MAX_BATCH_FRACTION / at.est_sample_ns).max(1.0) as usize;
        let fits = (remaining / at.est_sample_ns).ceil().max(1.0) as usize;
        let is_main = self.turn.is_multiple_of(2);
        let (iters, count) = if is_main {
            (n, self.main_batch.min(cap_by_time).min(fits).max(1))
        } else {
            let (num, den) = LADDER[(self.turn / 2) % LADDER.len()];
            ((n * num / den).max(1), LADDER_SAMPLES)
        };
        self.turn += 1;
        self.main = is_main.then_some(n);
        vec![Ask {
            side: 0,
            iters,
            count,
            phase: Phase::Warmup,
            probe_adds: 0,
        }]
    }

    fn record(&mut self, ask: &Ask, batch: &Batch, end_ns: u64) -> Result<(), String> {
        // Each sample ends where the next begins, the last at the batch's end.
        let mut t = end_ns;
        let mut new: Vec<Sample> = batch
            .ns
            .iter()
            .rev()
            .map(|&ns| {
                let s = Sample {
                    iters: ask.iters,
                    ns,
                    t_ns: t,
                    process: 0,
                    round: 0,
                    phase: ask.phase,
                };
                t = t.saturating_sub(ns);
                s
            })
            .collect();
        new.reverse();
        let first = self.samples.len();
        self.samples.push_batch(&new, &batch.counters);
        self.samples
            .set_probe(new.len(), batch.probe_adds, batch.probe_ns, batch.wide_ns);
        let cols = [
            &batch.thread_ns[..],
            &batch.thread_cpu_ns[..],
            &batch.thread_wait_ns[..],
        ];
        self.samples.push_threads(new.len(), cols, batch.cpus);
        if ask.phase != Phase::Calibration && self.main.is_some() {
            self.main_idx.extend(first..self.samples.len());
        }
        Ok(())
    }

    fn end_round(&mut self, end_ns: u64) -> Look {
        let Some(n) = self.main.take() else {
            return Look::default();
        };
        let plan = self.plan;
        self.main_batch = (self.main_idx.len() / 4).max(MIN_MAIN_BATCH);
        let series = self.main_series();
        let mut look = Look {
            est_sample_ns: Some(
                stats::median(&series[series.len().saturating_sub(64)..]) * n as f64,
            ),
            ..Look::default()
        };
        if let Some(st) = steady::detect(&series) {
            if st.class != WarmupClass::NoSteadyState
                && series.len() - st.first >= plan.min_steady_samples
            {
                let ci = stats::median_interval(&series[st.first..]);
                look.rel_ci = Some(ci.rel_half_width());
                let span = plan.min_time_ns.max(plan.min_span_ns);
                look.precise = end_ns >= span && ci.rel_half_width() <= plan.target_rel_ci;
            }
        }
        look
    }
}

impl<'p> Single<'p> {
    pub(super) fn new(plan: &'p Plan) -> Self {
        Single {
            plan,
            samples: Samples::default(),
            main_idx: Vec::new(),
            main_batch: MIN_MAIN_BATCH,
            turn: 0,
            main: None,
        }
    }

    fn main_series(&self) -> Vec<f64> {
        self.main_idx
            .iter()
            .map(|&i| self.samples.samples[i].per_iter_ns())
            .collect()
    }
}

/// Run the state machine on one target.
pub fn measure(
    target: &mut dyn Target,
    clock: &dyn WallClock,
    plan: &Plan,
    timer: &TimerInfo,
    on_progress: &mut dyn FnMut(&Progress),
) -> Measurement {
    let prepared = target.prepare();
    let start = clock.now_ns();
    let policy = Single::new(plan);
    let calibration = Calibration::new(
        plan.min_sample_ns(timer),
        plan.max_iters,
        plan.fixed_iters,
        plan.time_budget_ns,
    )
    .starting_at(plan.start_iters);
    let limits = Limits {
        budget_ns: plan.time_budget_ns,
        calibration_samples: plan.calibration_samples,
        probe_adds: plan.probe_adds,
    };
    let mut sampler = Sampler::new(policy, clock, start, calibration, limits);
    let started = match prepared {
        Ok(()) => true,
        Err(e) => {
            sampler.fail(0, e);
            false
        }
    };
    let stop = sampler.run(&mut [target], on_progress);
    let wall_ns = sampler.elapsed_ns();
    // Short of a calibrated count, the count calibration had reached.
    let calibration = sampler
        .calibrated()
        .map_or(CalibrationEnd::NotEnded, |c| c.end);
    let iters_per_sample = match sampler.calibrated() {
        Some(c) => c.iters,
        None if started => sampler.calibration().iters,
        None => 1,
    };
    let error = sampler.take_error().map(|(_, e)| e);
    let policy = sampler.into_policy();

    // Final steady-state decision on the main series, and the phases that follow from it.
    let series = policy.main_series();
    let Single {
        mut samples,
        main_idx,
        ..
    } = policy;
    let steady = steady::detect(&series);
    let first_steady = match steady {
        Some(st) if st.first < main_idx.len() => main_idx[st.first],
        Some(_) => samples.len(),
        None => main_idx.first().copied().unwrap_or(samples.len()),
    };
    samples.set_warmup_cut(first_steady);
    Measurement {
        samples,
        iters_per_sample,
        wall_ns,
        stop,
        steady,
        error,
        calibration,
    }
}

/// A clock for tests that only moves when a scripted target says time passed.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct MockClock(pub(crate) std::rc::Rc<std::cell::Cell<u64>>);

#[cfg(test)]
impl WallClock for MockClock {
    fn now_ns(&self) -> u64 {
        self.0.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::test_tsc;

    /// A target whose per-iteration cost is a function of the time elapsed, plus a fixed
    /// per-sample overhead; it advances the mock clock by what it "took".
    struct Scripted<F: Fn(u64, usize) -> f64> {
        clock: MockClock,
        per_iter: F,
        overhead_ns: u64,
        taken: usize,
        /// What the core-speed probe takes, when the target runs it.
        probe_ns: Option<u64>,
    }
    impl<F: Fn(u64, usize) -> f64> Target for Scripted<F> {
        fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
            if let (true, Some(p)) = (out.probe_adds > 0, self.probe_ns) {
                // The probe's repetitions take time, outside the samples.
                let now = self.clock.0.get();
                self.clock
                    .0
                    .set(now + p * crate::plan::PROBE_REPEATS as u64);
                out.probe_ns = Some(p);
            }
            for _ in 0..count {
                let now = self.clock.0.get();
                let ns = self.overhead_ns
                    + ((self.per_iter)(now, self.taken) * iters as f64).round() as u64;
                self.taken += 1;
                self.clock.0.set(now + ns + 50);
                out.ns.push(ns);
            }
            Ok(())
        }
    }

    fn jitter(k: usize) -> f64 {
        // Deterministic ±1 % pseudo-noise.
        let x = (k as u64).wrapping_mul(0x9E3779B97F4A7C15) >> 40;
        (x as f64 / (1u64 << 24) as f64 - 0.5) * 0.02
    }

    fn run<F: Fn(u64, usize) -> f64>(f: F, plan: &Plan) -> Measurement {
        run_probed(f, plan, None)
    }

    fn run_probed<F: Fn(u64, usize) -> f64>(
        f: F,
        plan: &Plan,
        probe_ns: Option<u64>,
    ) -> Measurement {
        let clock = MockClock::default();
        let mut t = Scripted {
            clock: clock.clone(),
            per_iter: f,
            overhead_ns: 10,
            taken: 0,
            probe_ns,
        };
        measure(&mut t, &clock, plan, &test_tsc(), &mut |_| {})
    }

    #[test]
    fn calibration_grows_the_count_until_a_sample_lasts_the_goal() {
        // Goal 20 µs; a sample of N iterations takes 10 ns × N.
        let mut c = Calibration::new(20_000, 1 << 40, None, 1_000_000_000);
        let mut rounds = 0;
        let done = loop {
            rounds += 1;
            if let Some(d) = c.step(10 * c.iters, 0) {
                break d;
            }
        };
        assert!(done.iters * 10 >= 20_000, "{done:?}");
        assert_eq!(done.est_sample_ns, (done.iters * 10) as f64);
        // One jump to an eighth of the goal, then doublings: 1, 250, 500, 1000, 2000.
        assert_eq!(rounds, 5);
        // A fixed count is taken at once; the ceiling and half the budget end it too.
        let mut fixed = Calibration::new(20_000, 1 << 40, Some(7), 1_000_000_000);
        assert_eq!(fixed.step(70, 0).map(|d| d.iters), Some(7));
        let mut capped = Calibration::new(20_000, 4, None, 1_000_000_000);
        while capped.step(10 * capped.iters, 0).is_none() {}
        assert_eq!(capped.iters, 4);
        let mut late = Calibration::new(20_000, 1 << 40, None, 1_000);
        assert_eq!(late.step(10, 500).map(|d| d.iters), Some(1));
    }

    #[test]
    fn probes_are_recorded_and_cost_at_most_their_share() {
        let plan = Plan::default();
        let m = run_probed(|_, k| 5.0 * (1.0 + jitter(k)), &plan, Some(1500));
        let s = &m.samples;
        assert_eq!(s.probe_ns.len(), s.len());
        assert_eq!(s.probe_adds, crate::plan::PROBE_ADDS);
        // The first batch (calibration) is probed; later ones as the budget allows.
        assert_eq!(s.probe_ns[0], Some(1500));
        // One probe per probed batch, on its first sample; their cost within the share.
        let probed = s.probe_ns.iter().filter(|p| p.is_some()).count();
        assert!(probed >= 10, "{probed} probes");
        let cost = (probed as u64 * 1500 * crate::plan::PROBE_REPEATS as u64) as f64;
        let share = cost / m.wall_ns as f64;
        assert!(
            share <= 2.0 * crate::plan::MAX_PROBE_SHARE,
            "probes took {share}"
        );
        // A target that cannot probe leaves no column.
        let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
        assert!(m.samples.probe_ns.is_empty());
        // A plan without the probe asks for none.
        let off = Plan {
            probe_adds: 0,
            ..Plan::default()
        };
        let m = run_probed(|_, k| 5.0 * (1.0 + jitter(k)), &off, Some(1500));
        assert!(m.samples.probe_ns.is_empty());
    }

    #[test]
    fn the_early_stop_waits_for_the_minimum_span() {
        let plan = Plan::default();
        assert_eq!(
            plan.min_span_ns,
            (plan.time_budget_ns as f64 * crate::plan::MIN_SPAN_FRACTION) as u64
        );
        let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
        assert_eq!(m.stop, StopReason::Precise);
        // Precise long before, but the samples span at least the minimum.
        let last = m.samples.samples.last().unwrap().t_ns;
        assert!(last >= plan.min_span_ns, "{last}");
    }

    #[test]
    fn calibration_reaches_the_goal_by_doubling() {
        let m = run(|_, k| 2.0 * (1.0 + jitter(k)), &Plan::default());
        // Goal: 20 µs at 2 ns per iteration → N ≥ 10 000; N is reached by doubling steps.
        assert!(m.iters_per_sample >= 10_000 && m.iters_per_sample < 40_000);
        let cal: Vec<u64> = m
            .samples
            .samples
            .iter()
            .filter(|s| s.phase == Phase::Calibration)
            .map(|s| s.iters)
            .collect();
        assert!(cal.windows(2).all(|w| w[1] >= w[0]));
        assert!(cal.iter().collect::<std::collections::BTreeSet<_>>().len() >= 3);
    }

    #[test]
    fn flat_series_stops_early_when_precise() {
        let plan = Plan::default();
        let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
        assert_eq!(m.stop, StopReason::Precise);
        assert!(m.wall_ns < plan.time_budget_ns);
        assert!(m.wall_ns >= plan.min_time_ns);
        assert_eq!(m.steady.unwrap().class, WarmupClass::Flat);
    }

    #[test]
    fn budget_is_never_exceeded_by_more_than_a_batch() {
        let plan = Plan {
            target_rel_ci: 0.0, // never precise enough
            ..Plan::default()
        };
        let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
        assert_eq!(m.stop, StopReason::Budget);
        let slack = (plan.time_budget_ns as f64 * MAX_BATCH_FRACTION * 1.5) as u64;
        assert!(m.wall_ns <= plan.time_budget_ns + slack, "{}", m.wall_ns);
    }

    #[test]
    fn warmup_is_detected_and_excluded() {
        // 3× slower for the first 200 ms, decaying.
        let m = run(
            |t, k| 4.0 * (1.0 + 2.0 * (-(t as f64) / 50e6).exp()) * (1.0 + jitter(k)),
            &Plan::default(),
        );
        let st = m.steady.unwrap();
        assert_eq!(st.class, WarmupClass::Warmup);
        let warm = m
            .samples
            .samples
            .iter()
            .filter(|s| s.phase == Phase::Warmup)
            .count();
        assert!(warm > 0);
        // Every measured sample is within 10 % of the steady cost.
        for s in m
            .samples
            .samples
            .iter()
            .filter(|s| s.phase == Phase::Measure)
        {
            if s.iters == m.iters_per_sample {
                assert!(s.per_iter_ns() < 4.0 * 1.1, "{}", s.per_iter_ns());
            }
        }
    }

    #[test]
    fn never_steady_is_reported() {
        // Keeps slowing down for the whole budget.
        let m = run(
            |t, k| (2.0 + t as f64 / 1e8) * (1.0 + jitter(k)),
            &Plan::default(),
        );
        assert_eq!(m.steady.unwrap().class, WarmupClass::NoSteadyState);
        assert_eq!(m.stop, StopReason::Budget);
    }

    #[test]
    fn slowdown_is_classified() {
        let m = run(
            |t, k| if t < 50_000_000 { 3.0 } else { 4.0 } * (1.0 + jitter(k)),
            &Plan::default(),
        );
        assert_eq!(m.steady.unwrap().class, WarmupClass::Slowdown);
    }

    #[test]
    fn periodic_spikes_leave_the_state_flat() {
        // Every 4 ms, a 30 µs stall lands in a sample (a 250 Hz tick).
        let m = run(
            |t, k| {
                let base = 5.0 * (1.0 + jitter(k));
                if t % 4_000_000 < 25_000 {
                    base * 3.0
                } else {
                    base
                }
            },
            &Plan::default(),
        );
        assert_eq!(m.steady.unwrap().class, WarmupClass::Flat);
    }

    #[test]
    fn ladder_samples_exist_at_several_counts() {
        let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &Plan::default());
        let n = m.iters_per_sample;
        let counts: std::collections::BTreeSet<u64> = m
            .samples
            .samples
            .iter()
            .filter(|s| s.phase != Phase::Calibration)
            .map(|s| s.iters)
            .collect();
        assert!(counts.contains(&n) && counts.contains(&(2 * n)) && counts.contains(&(n / 4)));
    }

    #[test]
    fn a_failing_target_keeps_what_was_measured() {
        struct Dies(usize);
        impl Target for Dies {
            fn measure(&mut self, _: u64, count: usize, out: &mut Batch) -> Result<(), String> {
                if self.0 == 0 {
                    return Err("worker died: signal 11 (SIGSEGV)".into());
                }
                self.0 -= 1;
                out.ns.extend(std::iter::repeat_n(25_000, count));
                Ok(())
            }
        }
        let clock = MonotonicClock;
        let m = measure(
            &mut Dies(3),
            &clock,
            &Plan::quick(),
            &test_tsc(),
            &mut |_| {},
        );
        assert_eq!(m.stop, StopReason::Failed);
        assert!(m.error.unwrap().contains("SIGSEGV"));
        assert!(!m.samples.is_empty());
    }
}
