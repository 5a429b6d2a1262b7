//! The sampling state machine both engines drive: one benchmark ([`super::measure`]) and a
//! pair ([`super::pairs::measure_pair`]).
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
    /// Hard wall-clock budget, calibration included.
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
                let elapsed_ns = self.elapsed();
                if elapsed_ns >= self.limits.budget_ns {
                    return self.finish(StopReason::Budget);
                }
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
        let before = self.elapsed();
        let probe = self.limits.probe_adds > 0
            && self.probe_spent_ns as f64 <= MAX_PROBE_SHARE * before as f64;
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
        }
        self.probe_spent_ns += batch.probe_ns.unwrap_or(0) * PROBE_REPEATS as u64;
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
