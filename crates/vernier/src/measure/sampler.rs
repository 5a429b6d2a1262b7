//! The sampling state machine both engines drive: one benchmark ([`super::measure`]) and a
//! pair ([`super::compare::measure_pair`]).
//!
//! The [`Sampler`] owns what the two have in common: the states (`Calibrate`, `Collect`,
//! `Done`), the wall clock and the budget, Ctrl-C, the doubling calibration (over every side of
//! a round: the slowest sets the count), the core-speed probe's share, the sample count and the
//! progress reports. A loop asks it what to measure next ([`Sampler::next_ask`]: an [`Ask`], or
//! `Done` with the reason) and reports each batch back ([`Sampler::report`]), as nanobench's
//! `IterationLogic` does; [`Sampler::run`] is that loop over a set of [`Target`]s.
//!
//! What differs between the engines is a [`Policy`]: which sides a round measures and in which
//! order, the batches of a collecting round, what a batch adds to the record, and the stopping
//! rule looked at after each collecting round (one benchmark: the median's interval; a pair:
//! the settled ratio interval).

use super::{
    Batch, Calibrated, Calibration, Progress, State, StopReason, Target, WallClock, INTERRUPTED,
};
use crate::plan::{MAX_PROBE_SHARE, PROBE_REPEATS};
use crate::samples::Phase;
use std::sync::atomic::Ordering;

/// One batch to measure: `count` samples of `iters` iterations of target `side` (0 for a single
/// benchmark; 0 = OLD and 1 = NEW for a pair).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    pub side: usize,
    pub iters: u64,
    pub count: usize,
    pub phase: Phase,
    /// Run the core-speed probe before the batch (a chain of this many additions); 0: no probe.
    /// Set by the sampler; a policy leaves it 0.
    pub probe_adds: u64,
}

/// The sampler's answer to "what next?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Measure(Ask),
    Done(StopReason),
}

/// Where a collecting round starts, as a policy plans its batches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// The calibrated iterations per sample.
    pub iters: u64,
    /// The current estimate of one sample's duration at `iters`.
    pub est_sample_ns: f64,
    /// Time since the start, and the budget.
    pub elapsed_ns: u64,
    pub budget_ns: u64,
}

/// What a policy concludes after a collecting round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Look {
    /// The stopping rule is met.
    pub precise: bool,
    /// A new estimate of one sample's duration, when the round gave one.
    pub est_sample_ns: Option<f64>,
    /// A new relative half-width of the interval the rule watches, when the round gave one.
    pub rel_ci: Option<f64>,
}

/// What distinguishes one engine from another.
pub trait Policy {
    /// The sides a round measures, in order (asked at the start of every round).
    fn order(&mut self) -> Vec<usize>;
    /// The batches of a collecting round, for the sides in `order`.
    fn collect(&mut self, order: &[usize], at: &Round) -> Vec<Ask>;
    /// A measured batch, `end_ns` after the start; an error stops the sampler (`Failed`,
    /// naming the ask's side).
    fn record(&mut self, ask: &Ask, batch: &Batch, end_ns: u64) -> Result<(), String>;
    /// The end of a collecting round, `end_ns` after the start: the stopping rule.
    fn end_round(&mut self, end_ns: u64) -> Look;
}

/// The fixed limits of a sampler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Wall-clock budget, calibration included (the first collecting round after calibration
    /// is taken even when calibration spent it all).
    pub budget_ns: u64,
    /// Samples per side in each calibration round.
    pub calibration_samples: usize,
    /// The core-speed probe's chain length (0: never probe).
    pub probe_adds: u64,
}

/// The state machine (see the module documentation).
pub struct Sampler<'c, P: Policy> {
    policy: P,
    clock: &'c dyn WallClock,
    start_ns: u64,
    limits: Limits,
    state: State,
    calibration: Calibration,
    calibrated: Option<Calibrated>,
    est_sample_ns: f64,
    probe_spent_ns: u64,
    round: Vec<Ask>,
    /// The ask of `round` handed out next.
    pos: usize,
    /// Calibration: the slowest side's fastest sample in the current round.
    best_ns: u64,
    samples: usize,
    /// Collecting rounds handed out.
    rounds: usize,
    rel_ci: Option<f64>,
    stop: StopReason,
    error: Option<(usize, String)>,
}

impl<'c, P: Policy> Sampler<'c, P> {
    /// A sampler whose time counts from `start_ns` on `clock`.
    pub fn new(
        policy: P,
        clock: &'c dyn WallClock,
        start_ns: u64,
        calibration: Calibration,
        limits: Limits,
    ) -> Self {
        Sampler {
            policy,
            clock,
            start_ns,
            limits,
            state: State::Calibrate,
            est_sample_ns: calibration.goal_ns as f64,
            calibration,
            calibrated: None,
            probe_spent_ns: 0,
            round: Vec::new(),
            pos: 0,
            best_ns: 0,
            samples: 0,
            rounds: 0,
            rel_ci: None,
            stop: StopReason::Budget,
            error: None,
        }
    }

    fn elapsed(&self) -> u64 {
        self.clock.now_ns().saturating_sub(self.start_ns)
    }

    fn finish(&mut self, stop: StopReason) -> Next {
        self.state = State::Done;
        self.stop = stop;
        Next::Done(stop)
    }

    /// What to measure next, or why sampling is over.
    pub fn next_ask(&mut self) -> Next {
        if self.state == State::Done {
            return Next::Done(self.stop);
        }
        if self.pos >= self.round.len() {
            if INTERRUPTED.load(Ordering::Relaxed) {
                return self.finish(StopReason::Interrupted);
            }
            let order = self.policy.order();
            self.round = if self.state == State::Calibrate {
                self.best_ns = 0;
                let (iters, count) = (self.calibration.iters, self.limits.calibration_samples);
                order
                    .iter()
                    .map(|&side| Ask {
                        side,
                        iters,
                        count,
                        phase: Phase::Calibration,
                        probe_adds: 0,
                    })
                    .collect()
            } else {
                // The first collecting round is taken whatever the budget left: a calibration
                // whose last round overran the budget (samples lengthened by waits for a CPU,
                // or each evicting the caches first) still yields measured samples, at the
                // cost of that round's time.
                let elapsed_ns = self.elapsed();
                if elapsed_ns >= self.limits.budget_ns && self.rounds > 0 {
                    return self.finish(StopReason::Budget);
                }
                self.rounds += 1;
                let at = Round {
                    iters: self.calibrated.map_or(1, |c| c.iters),
                    est_sample_ns: self.est_sample_ns,
                    elapsed_ns,
                    budget_ns: self.limits.budget_ns,
                };
                self.policy.collect(&order, &at)
            };
            self.pos = 0;
            if self.round.is_empty() {
                return self.finish(StopReason::Budget);
            }
        }
        // The probe runs while the probes so far took at most their share of the time.
        let probe = self.limits.probe_adds > 0
            && self.probe_spent_ns as f64 <= MAX_PROBE_SHARE * self.elapsed() as f64;
        let ask = &mut self.round[self.pos];
        ask.probe_adds = if probe { self.limits.probe_adds } else { 0 };
        Next::Measure(*ask)
    }

    /// The batch measured for the last [`Ask`]; a progress report when it ended a collecting
    /// round. A probe time the ask did not request is dropped from the batch.
    pub fn report(&mut self, batch: &mut Batch) -> Option<Progress> {
        let ask = *self.round.get(self.pos)?;
        if ask.probe_adds == 0 {
            batch.probe_ns = None;
            batch.wide_ns = None;
        }
        self.probe_spent_ns +=
            (batch.probe_ns.unwrap_or(0) + batch.wide_ns.unwrap_or(0)) * PROBE_REPEATS as u64;
        let end = self.elapsed();
        if let Err(e) = self.policy.record(&ask, batch, end) {
            self.fail(ask.side, e);
            return None;
        }
        self.samples += batch.ns.len();
        self.pos += 1;
        if self.state == State::Calibrate {
            let fastest = batch.ns.iter().copied().min().unwrap_or(0);
            self.best_ns = self.best_ns.max(fastest);
        }
        if self.pos < self.round.len() {
            return None;
        }
        match self.state {
            State::Calibrate => {
                if let Some(c) = self.calibration.step(self.best_ns, end) {
                    self.calibrated = Some(c);
                    self.est_sample_ns = c.est_sample_ns;
                    self.state = State::Collect;
                }
                None
            }
            State::Collect => {
                let look = self.policy.end_round(end);
                if let Some(est) = look.est_sample_ns {
                    self.est_sample_ns = est;
                }
                if look.rel_ci.is_some() {
                    self.rel_ci = look.rel_ci;
                }
                if look.precise {
                    self.finish(StopReason::Precise);
                }
                Some(Progress {
                    state: self.state,
                    elapsed_ns: end,
                    budget_ns: self.limits.budget_ns,
                    samples: self.samples,
                    rel_ci: self.rel_ci,
                })
            }
            State::Done => None,
        }
    }

    /// Side `side` failed: sampling stops, keeping what was measured.
    pub fn fail(&mut self, side: usize, error: String) {
        self.error = Some((side, error));
        self.finish(StopReason::Failed);
    }

    /// The loop: asks, measures on `targets[ask.side]`, reports, until done.
    pub fn run(
        &mut self,
        targets: &mut [&mut (dyn Target + '_)],
        on_progress: &mut dyn FnMut(&Progress),
    ) -> StopReason {
        let mut batch = Batch::default();
        loop {
            let ask = match self.next_ask() {
                Next::Done(stop) => return stop,
                Next::Measure(ask) => ask,
            };
            batch.clear();
            batch.probe_adds = ask.probe_adds;
            let Some(target) = targets.get_mut(ask.side) else {
                self.fail(ask.side, format!("no target {}", ask.side));
                continue;
            };
            match target.measure(ask.iters, ask.count, &mut batch) {
                Err(e) => self.fail(ask.side, e),
                Ok(()) => {
                    if let Some(p) = self.report(&mut batch) {
                        on_progress(&p);
                    }
                }
            }
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// The end of calibration, once reached.
    pub fn calibrated(&self) -> Option<Calibrated> {
        self.calibrated
    }

    /// The calibration (its current count while calibrating).
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Samples taken, every side and phase.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// The failing side and its error.
    pub fn take_error(&mut self) -> Option<(usize, String)> {
        self.error.take()
    }

    /// Time since the start.
    pub fn elapsed_ns(&self) -> u64 {
        self.elapsed()
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    pub fn into_policy(self) -> P {
        self.policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::compare::{PairPlan, Paired, MIN_BATCH, WORKER_BATCH_NS};
    use crate::measure::single::Single;
    use crate::measure::{MockClock, LADDER, LADDER_SAMPLES, MAX_BATCH_FRACTION, MIN_MAIN_BATCH};
    use crate::plan::Plan;
    use crate::timer::test_tsc;
    use crate::workload::input::Rng;

    /// What a scripted run asked for and was told.
    struct Script {
        asks: Vec<Ask>,
        progress: Vec<Progress>,
        stop: StopReason,
    }

    /// Drives the sampler by hand: a sample of `iters` iterations of side `s` lasts exactly
    /// `per_iter[s] × iters` ns on the mock clock; side `short` (if any) returns one sample too
    /// few from its `short_after`-th batch on.
    fn drive<P: Policy>(
        sampler: &mut Sampler<'_, P>,
        clock: &MockClock,
        per_iter: [u64; 2],
        short: Option<(usize, usize)>,
    ) -> Script {
        let mut script = Script {
            asks: Vec::new(),
            progress: Vec::new(),
            stop: StopReason::Budget,
        };
        let mut batches = [0usize; 2];
        loop {
            let ask = match sampler.next_ask() {
                Next::Done(stop) => {
                    script.stop = stop;
                    // Once done, it stays done.
                    assert_eq!(sampler.next_ask(), Next::Done(stop));
                    return script;
                }
                Next::Measure(ask) => ask,
            };
            script.asks.push(ask);
            let mut batch = Batch {
                probe_adds: ask.probe_adds,
                ..Batch::default()
            };
            let mut count = ask.count;
            if short.is_some_and(|(side, after)| side == ask.side && batches[side] >= after) {
                count -= 1;
            }
            batches[ask.side] += 1;
            for _ in 0..count {
                let ns = per_iter[ask.side] * ask.iters;
                clock.0.set(clock.0.get() + ns);
                batch.ns.push(ns);
            }
            if let Some(p) = sampler.report(&mut batch) {
                script.progress.push(p);
            }
        }
    }

    /// A sampler from the clock's zero: calibration towards `goal`, budget and calibration
    /// samples as given, no probe.
    fn sampler<'a, P: Policy>(
        policy: P,
        clock: &'a MockClock,
        goal: u64,
        (max_iters, budget_ns, calibration_samples): (u64, u64, usize),
    ) -> Sampler<'a, P> {
        let calibration = Calibration::new(goal, max_iters, None, budget_ns);
        let limits = Limits {
            budget_ns,
            calibration_samples,
            probe_adds: 0,
        };
        Sampler::new(policy, clock, 0, calibration, limits)
    }

    fn single(plan: &Plan, clock: &MockClock) -> Script {
        let goal = plan.min_sample_ns(&test_tsc());
        let limits = (
            plan.max_iters,
            plan.time_budget_ns,
            plan.calibration_samples,
        );
        let mut s = sampler(Single::new(plan), clock, goal, limits);
        drive(&mut s, clock, [10, 0], None)
    }

    #[test]
    fn a_calibration_that_overran_the_budget_is_followed_by_one_collecting_round() {
        // 1 ms per iteration against a 20 µs goal and a 5 ms budget: the first calibration
        // round (5 samples of one iteration) spends the whole budget, and the calibration ends
        // at its deadline. One collecting round follows, then the budget stops the sampler.
        let clock = MockClock::default();
        let plan = Plan::default();
        let mut s = sampler(Single::new(&plan), &clock, 20_000, (1 << 20, 5_000_000, 5));
        let script = drive(&mut s, &clock, [1_000_000, 0], None);
        let phases: Vec<(Phase, u64, usize)> = script
            .asks
            .iter()
            .map(|a| (a.phase, a.iters, a.count))
            .collect();
        assert_eq!(phases, [(Phase::Calibration, 1, 5), (Phase::Warmup, 1, 1)]);
        assert_eq!(script.stop, StopReason::Budget);
        assert!(s.calibrated().is_some());
    }

    #[test]
    fn a_single_benchmark_calibrates_then_alternates_main_batches_and_the_ladder() {
        let plan = Plan::default();
        assert_eq!(plan.min_sample_ns(&test_tsc()), 20_000);
        let clock = MockClock::default();
        let script = single(&plan, &clock);
        // 10 ns per iteration against a 20 µs goal: one jump to an eighth of the goal, then
        // doublings, each round `calibration_samples` samples.
        let cal: Vec<(u64, usize)> = script
            .asks
            .iter()
            .take_while(|a| a.phase == Phase::Calibration)
            .map(|a| (a.iters, a.count))
            .collect();
        let c = plan.calibration_samples;
        assert_eq!(cal, [(1, c), (250, c), (500, c), (1000, c), (2000, c)]);
        // Then main batches at N alternate with the ladder N/16, N/4, 2N, in turn; a main
        // batch has a quarter as many samples as the main series so far, at least 16, and lasts
        // at most its fraction of the budget (a sample lasts 20 µs).
        let n = 2000;
        let cap = (plan.time_budget_ns as f64 * MAX_BATCH_FRACTION / 20_000.0) as usize;
        let collect = &script.asks[cal.len()..];
        let mut main_samples = 0;
        for (turn, a) in collect.iter().enumerate() {
            assert_eq!((a.side, a.phase), (0, Phase::Warmup));
            if turn % 2 == 0 {
                let count = (main_samples / 4).max(MIN_MAIN_BATCH).min(cap);
                assert_eq!((a.iters, a.count), (n, count), "turn {turn}");
                main_samples += a.count;
            } else {
                let (num, den) = LADDER[(turn / 2) % LADDER.len()];
                assert_eq!((a.iters, a.count), (n * num / den, LADDER_SAMPLES));
            }
        }
        // A progress report per collecting batch, none while calibrating; the last says done.
        assert_eq!(script.progress.len(), collect.len());
        assert_eq!(script.progress.last().unwrap().state, State::Done);
        let total: usize = script.asks.iter().map(|a| a.count).sum();
        assert_eq!(script.progress.last().unwrap().samples, total);
        // A constant cost is precise at once: the stop waits for the minimum span.
        assert_eq!(script.stop, StopReason::Precise);
        assert!(clock.0.get() >= plan.min_span_ns, "{}", clock.0.get());
        let before_last = script.progress[script.progress.len() - 2].elapsed_ns;
        assert!(before_last < plan.min_span_ns.max(plan.min_time_ns));
    }

    #[test]
    fn a_rule_never_met_stops_at_the_budget_after_the_batch_that_crossed_it() {
        let plan = Plan {
            target_rel_ci: 0.0,
            time_budget_ns: 50_000_000,
            ..Plan::default()
        };
        let clock = MockClock::default();
        let script = single(&plan, &clock);
        assert_eq!(script.stop, StopReason::Budget);
        let p = &script.progress;
        assert!(p[p.len() - 1].elapsed_ns >= plan.time_budget_ns);
        assert!(p[p.len() - 2].elapsed_ns < plan.time_budget_ns);
    }

    fn pair<'a>(plan: &'a PairPlan, clock: &'a MockClock) -> Sampler<'a, Paired<'a>> {
        let goal = plan.min_sample_ns(&test_tsc());
        let limits = (
            plan.max_iters,
            plan.time_budget_ns,
            plan.calibration_samples,
        );
        sampler(Paired::new(plan), clock, goal, limits)
    }

    #[test]
    fn a_pair_measures_both_sides_each_round_in_the_seeded_order() {
        let plan = PairPlan::across_processes(&Plan::default(), 0.005);
        assert_eq!(plan.min_sample_ns(&test_tsc()), 20_000);
        let clock = MockClock::default();
        let mut s = pair(&plan, &clock);
        // OLD 10 ns, NEW 20 ns per iteration.
        let script = drive(&mut s, &clock, [10, 20], None);
        assert_eq!(script.asks.len() % 2, 0);
        let mut rng = Rng::new(plan.seed);
        for (r, round) in script.asks.chunks(2).enumerate() {
            let first = if rng.next_u64() & 1 == 0 { 0 } else { 1 };
            assert_eq!(
                (round[0].side, round[1].side),
                (first, 1 - first),
                "round {r}"
            );
            assert_eq!(
                (round[0].iters, round[0].count, round[0].phase),
                (round[1].iters, round[1].count, round[1].phase)
            );
        }
        // The slower side (NEW) sets the count: 1, then 20 µs / 20 ns / 8 = 125, doublings.
        let c = plan.calibration_samples;
        let cal: Vec<(u64, usize)> = script
            .asks
            .iter()
            .step_by(2)
            .take_while(|a| a.phase == Phase::Calibration)
            .map(|a| (a.iters, a.count))
            .collect();
        assert_eq!(cal, [(1, c), (125, c), (250, c), (500, c), (1000, c)]);
        // Collecting: batches of about WORKER_BATCH_NS of the slower side plus the re-warm-up
        // sample, one progress report per round.
        let k = (WORKER_BATCH_NS / 20_000) as usize;
        assert!(k >= MIN_BATCH);
        let collect = &script.asks[2 * cal.len()..];
        assert!(collect
            .iter()
            .all(|a| (a.iters, a.count) == (1000, k + plan.rewarm_samples)));
        assert_eq!(script.progress.len(), collect.len() / 2);
        assert_eq!(script.stop, StopReason::Precise);
        assert_eq!(s.policy().m.old_ns.len(), collect.len() / 2);
        assert_eq!(
            s.samples(),
            script.asks.iter().map(|a| a.count).sum::<usize>()
        );
    }

    #[test]
    fn a_side_that_fails_stops_the_sampler_and_is_named() {
        let plan = PairPlan::in_process(&Plan::default(), 0.005);
        let clock = MockClock::default();
        let mut s = pair(&plan, &clock);
        let script = drive(&mut s, &clock, [10, 10], Some((1, 8)));
        assert_eq!(script.stop, StopReason::Failed);
        // NEW's 9th batch came back short: nothing is asked after it.
        assert_eq!(script.asks.last().unwrap().side, 1);
        assert_eq!(script.asks.iter().filter(|a| a.side == 1).count(), 9);
        let (side, e) = s.take_error().unwrap();
        assert_eq!(side, 1);
        assert!(e.contains("asked for"), "{e}");
        // Failing before the start asks for nothing.
        let mut s = pair(&plan, &clock);
        s.fail(0, "prepare failed".into());
        assert_eq!(s.next_ask(), Next::Done(StopReason::Failed));
        assert_eq!(s.take_error().map(|e| e.0), Some(0));
    }
}
