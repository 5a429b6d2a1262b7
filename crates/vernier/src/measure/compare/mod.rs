//! Paired, interleaved A/B comparisons: is NEW faster or slower than OLD?
//!
//! Measuring OLD for a second and then NEW for a second lets the machine's drift (frequency,
//! temperature, a neighbour's load) pose as a difference. This engine measures the two
//! *alternately*, with the same iterations per sample, and pairs what was measured back to back:
//! drift common to both members of a pair cancels in their ratio, and the statistics
//! ([`crate::stats::compare`]) work on the per-pair log-ratios.
//!
//! **Process pairs.** Across executables one OLD and one NEW process are not enough: each has
//! its own memory layout, and the CPU each runs on may be slower than the other for seconds at
//! a time. `vernier compare` therefore runs this engine in several OLD/NEW *process pairs*
//! (each pair on one CPU, one environment padding for both sides), takes one log-ratio per
//! pair and combines them with a random-effects interval ([`crate::analyze::pairs`],
//! [`random_effects`](crate::stats::random_effects)): the interval then includes the spread between pairs. After
//! each pair, [`pairs_settled`](crate::analyze::pairs::pairs_settled) decides whether a
//! benchmark needs more; this module plans each pair's slice ([`pair_slice_plan`]). In process
//! ([`crate::session::compare`]) there is one process on one CPU, and the interval covers the
//! noise within it only; the table says so.
//!
//! The engine is the same state machine as [`crate::measure`] ([`crate::measure::sampler`]),
//! given the pair's policy (`Paired`): both sides each round, the pairing, the stopping rule.
//!
//! | state       | does | leaves when |
//! |-------------|------|-------------|
//! | `Calibrate` | doubles the iteration count from 1, taking `calibration_samples` samples of *each* side per step (order alternating) | the fastest sample of the *slower* side lasts ≥ the plan's minimum sample time (or half the budget is gone); both sides then use that count |
//! | `Collect`   | rounds: a batch of OLD and a batch of NEW in a random order (seeded); the first `rewarm_samples` of every batch are measured and kept out of the pair; the pair is the median per-iteration time of the rest of each batch | the stopping interval is settled (see below), after `min_time_ns`; or the budget is spent; or Ctrl-C; or a side fails |
//!
//! **Warm-up.** Calibration runs both sides, which warms both up; then steady-state detection
//! (MSER-5, [`crate::stats::steady`]) runs on the series of pair ratios NEW/OLD, and pairs before its
//! cut are excluded. Running it on the ratios rather than on each side means a drift common to
//! both is not mistaken for a warm-up that never ends.
//!
//! **Re-warm-up.** Switching from one side to the other disturbs caches and predictors (and,
//! across processes, wakes a process that was sleeping on a pipe): the first sample after a
//! switch is measured but not paired. Its cost relative to the rest of its batch is reported
//! ([`Rewarm`]). In-process, where a batch is one sample, nothing is dropped: both members of a
//! pair pay the same switch, in a random order.
//!
//! **Stopping.** At looks spaced geometrically (each once the pairs have grown by
//! [`LOOK_GROWTH`]) the engine computes a *wider* interval than the one it reports, at
//! [`STOP_Z`] (99 %), so that looking several times does not inflate the error rate, and stops
//! when that interval is *settled*: entirely above 1 + t, entirely below 1/(1 + t), or entirely
//! within the noise band [1/(1 + t), 1 + t] (t = the threshold). The reported figures are then
//! the 95 % ones, computed on the steady pairs.

mod processes;

pub use processes::{
    default_process_pairs, pair_slice_plan, MAX_DEFAULT_PROCESS_PAIRS, MAX_LAYOUT_PROCESS_PAIRS,
    MIN_PAIR_SLICE_NS, MIN_PROCESS_PAIRS, PAIR_PRECISION_OF_THRESHOLD,
};

use crate::measure::sampler::{Ask, Limits, Look, Policy, Round, Sampler};
use crate::measure::{Batch, Calibration, Progress, StopReason, Target, WallClock};
use crate::plan::Plan;
use crate::samples::Phase;
use crate::stats::compare::{self, RatioEstimate};
use crate::stats::rank::hodges_lehmann_paired_ci_z;
use crate::stats::steady::{self, WarmupClass};
use crate::timer::TimerInfo;
use crate::workload::input::Rng;
use serde::{Deserialize, Serialize};

/// Two-sided normal quantile of the stopping interval (99 %): wider than the reported 95 %
/// interval so that the ~15 looks of a one-second budget do not turn a 5 % error rate into 20 %.
pub const STOP_Z: f64 = 2.575_829_303_548_901;
/// A look happens once the number of pairs has grown by this factor since the previous one.
pub const LOOK_GROWTH: f64 = 1.25;
/// Fewest steady pairs a look (or a verdict) rests on: MSER needs 8 batches of 5, and the
/// signed-rank interval is then in its normal regime.
pub const MIN_PAIRS: usize = 50;
/// Across processes a batch lasts about this long (plus one re-warm-up sample): long enough that
/// the protocol round trip (tens of µs) is a small overhead, short enough that drift within a
/// round is negligible.
pub const WORKER_BATCH_NS: u64 = 400_000;
/// Bounds on the samples per batch across processes.
pub const MIN_BATCH: usize = 3;
pub const MAX_BATCH: usize = 64;
/// Samples dropped at the start of every batch across processes.
pub const WORKER_REWARM_SAMPLES: usize = 1;

/// Which member of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Old,
    New,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Old => "OLD",
            Side::New => "NEW",
        }
    }
}

/// How a comparison is measured.
#[derive(Clone, Debug, PartialEq)]
pub struct PairPlan {
    /// Hard wall-clock budget per comparison, calibration and warm-up included.
    pub time_budget_ns: u64,
    /// No early stop before this much time (lets a slow warm-up show).
    pub min_time_ns: u64,
    /// Target duration of one sample, and the timer floor, as in [`Plan`].
    pub target_sample_ns: u64,
    pub timer_factor: f64,
    pub calibration_samples: usize,
    pub max_iters: u64,
    /// Noise threshold t: ratios within [1/(1 + t), 1 + t] are "no change".
    pub threshold: f64,
    /// Duration of a batch (0: one sample per batch, the in-process form).
    pub batch_ns: u64,
    /// Samples measured at the start of each batch and kept out of the pairs.
    pub rewarm_samples: usize,
    /// Seed of the order of the sides within each round.
    pub seed: u64,
    /// Stop as soon as the verdict is settled (otherwise use the whole budget).
    pub early_stop: bool,
    /// Stop once the stopping interval's half-width on the log scale is below this, whatever
    /// it says about the threshold (a process pair's slice: more precision within one pair
    /// cannot shrink the spread between pairs).
    pub precise_log_half_width: Option<f64>,
}

impl PairPlan {
    fn from_plan(plan: &Plan, threshold: f64) -> PairPlan {
        PairPlan {
            time_budget_ns: plan.time_budget_ns,
            min_time_ns: plan.min_time_ns,
            target_sample_ns: plan.target_sample_ns,
            timer_factor: plan.timer_factor,
            calibration_samples: plan.calibration_samples,
            max_iters: plan.max_iters,
            threshold,
            batch_ns: 0,
            rewarm_samples: 0,
            seed: 0x5EED_CAFE,
            early_stop: true,
            precise_log_half_width: None,
        }
    }

    /// Both sides in this process: one sample per side per pair, in a random order.
    pub fn in_process(plan: &Plan, threshold: f64) -> PairPlan {
        PairPlan::from_plan(plan, threshold)
    }

    /// Two worker processes: batches of about [`WORKER_BATCH_NS`], the first sample of each
    /// dropped from the pair.
    pub fn across_processes(plan: &Plan, threshold: f64) -> PairPlan {
        PairPlan {
            batch_ns: WORKER_BATCH_NS,
            rewarm_samples: WORKER_REWARM_SAMPLES,
            ..PairPlan::from_plan(plan, threshold)
        }
    }

    pub(super) fn min_sample_ns(&self, timer: &TimerInfo) -> u64 {
        crate::plan::min_sample_ns(self.target_sample_ns, self.timer_factor, timer)
    }
}

/// Why collection stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PairStop {
    /// The stopping interval settled the verdict.
    Settled,
    /// The budget was spent first.
    Budget,
    Interrupted,
    Failed,
}

impl PairStop {
    pub fn as_str(self) -> &'static str {
        match self {
            PairStop::Settled => "settled",
            PairStop::Budget => "budget",
            PairStop::Interrupted => "interrupted",
            PairStop::Failed => "failed",
        }
    }
}

/// The cost of the first sample after a switch, relative to the rest of its batch: the median
/// over batches of first/median(rest), per side. 1.0: switching costs nothing measurable.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rewarm {
    pub old: f64,
    pub new: f64,
}

/// Everything measured for one comparison.
#[derive(Clone, Debug)]
pub struct PairMeasurement {
    /// Iterations per sample, identical for both sides.
    pub iters_per_sample: u64,
    /// Per-iteration time of each pair's OLD and NEW member (ns), in time order.
    pub old_ns: Vec<f64>,
    pub new_ns: Vec<f64>,
    /// When each pair ended (s since the comparison started).
    pub t_s: Vec<f64>,
    /// Index of the first steady pair.
    pub first_steady: usize,
    /// Steady-state class of the ratio series (`None`: too short to tell).
    pub warmup: Option<WarmupClass>,
    /// Paired estimate on the steady pairs.
    pub estimate: Option<RatioEstimate>,
    pub stop: PairStop,
    pub wall_ns: u64,
    /// Which side failed and why.
    pub error: Option<(Side, String)>,
    pub rewarm: Option<Rewarm>,
    /// Samples taken of each side, calibration and re-warm-up included.
    pub samples: (usize, usize),
    /// Number of looks taken by the stopping rule.
    pub looks: usize,
}

/// Where an interval stands relative to the noise band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settle {
    /// Entirely above 1 + t.
    Above,
    /// Entirely below 1/(1 + t).
    Below,
    /// Entirely within the band.
    Within,
}

/// Is an interval (lo, hi) of the ratio settled against threshold t?
pub fn settled(lo: f64, hi: f64, t: f64) -> Option<Settle> {
    let (band_lo, band_hi) = (1.0 / (1.0 + t), 1.0 + t);
    if lo > band_hi {
        Some(Settle::Above)
    } else if hi < band_lo {
        Some(Settle::Below)
    } else if lo >= band_lo && hi <= band_hi {
        Some(Settle::Within)
    } else {
        None
    }
}

/// The policy of a pair: both sides in every round, in a seeded random order; a round of
/// collection is one pair (the median per-iteration time of each side's batch, its first
/// `rewarm_samples` set aside); the rule is the settled ratio interval, looked at as the pairs
/// grow by [`LOOK_GROWTH`].
pub(super) struct Paired<'p> {
    plan: &'p PairPlan,
    rng: Rng,
    pub(super) m: PairMeasurement,
    /// Per-iteration time of each side in the current round.
    per: [f64; 2],
    rewarm: [Vec<f64>; 2],
    next_look: usize,
}

impl Policy for Paired<'_> {
    fn order(&mut self) -> Vec<usize> {
        if self.rng.next_u64() & 1 == 0 {
            vec![0, 1]
        } else {
            vec![1, 0]
        }
    }

    fn collect(&mut self, order: &[usize], at: &Round) -> Vec<Ask> {
        let k = if self.plan.batch_ns == 0 {
            1
        } else {
            ((self.plan.batch_ns as f64 / at.est_sample_ns) as usize).clamp(MIN_BATCH, MAX_BATCH)
        };
        self.m.iters_per_sample = at.iters;
        order
            .iter()
            .map(|&side| Ask {
                side,
                iters: at.iters,
                count: k + self.plan.rewarm_samples,
                phase: Phase::Measure,
                probe_adds: 0,
            })
            .collect()
    }

    fn record(&mut self, ask: &Ask, batch: &Batch, _: u64) -> Result<(), String> {
        let ns = &batch.ns;
        if ns.len() != ask.count {
            return Err(format!("asked for {} samples, got {}", ask.count, ns.len()));
        }
        match ask.side {
            0 => self.m.samples.0 += ask.count,
            _ => self.m.samples.1 += ask.count,
        }
        if ask.phase == Phase::Calibration {
            return Ok(());
        }
        let skip = self.plan.rewarm_samples;
        let n = ask.iters as f64;
        let rest: Vec<f64> = ns[skip..].iter().map(|&x| x as f64 / n).collect();
        let med = crate::stats::median(&rest);
        if skip > 0 && med > 0.0 {
            self.rewarm[ask.side.min(1)].push(ns[0] as f64 / n / med);
        }
        self.per[ask.side.min(1)] = med;
        Ok(())
    }

    fn end_round(&mut self, now: u64) -> Look {
        let (plan, m) = (self.plan, &mut self.m);
        m.old_ns.push(self.per[0]);
        m.new_ns.push(self.per[1]);
        m.t_s.push(now as f64 / 1e9);
        let recent = m.old_ns.len().saturating_sub(64);
        let slow: Vec<f64> = m.old_ns[recent..]
            .iter()
            .zip(&m.new_ns[recent..])
            .map(|(a, b)| a.max(*b))
            .collect();
        let n = m.iters_per_sample as f64;
        let mut look = Look {
            est_sample_ns: Some((crate::stats::median(&slow) * n).max(1.0)),
            ..Look::default()
        };
        if m.old_ns.len() < self.next_look {
            return look;
        }
        self.next_look =
            ((m.old_ns.len() as f64 * LOOK_GROWTH).ceil() as usize).max(m.old_ns.len() + 1);
        m.looks += 1;
        let ratios = ratio_series(&m.old_ns, &m.new_ns);
        if let Some(st) = steady_ratios(&ratios, plan.threshold) {
            if ratios.len() - st.first >= MIN_PAIRS {
                let d: Vec<f64> = ratios[st.first..].iter().map(|r| r.ln()).collect();
                let (lo, hi) = hodges_lehmann_paired_ci_z(&d, STOP_Z);
                look.rel_ci = Some((hi - lo) / 2.0);
                let precise = plan
                    .precise_log_half_width
                    .is_some_and(|w| (hi - lo) / 2.0 < w);
                let settles =
                    plan.early_stop && settled(lo.exp(), hi.exp(), plan.threshold).is_some();
                look.precise = now >= plan.min_time_ns && (settles || precise);
            }
        }
        look
    }
}

impl<'p> Paired<'p> {
    pub(super) fn new(plan: &'p PairPlan) -> Self {
        Paired {
            plan,
            rng: Rng::new(plan.seed),
            m: PairMeasurement {
                iters_per_sample: 1,
                old_ns: Vec::new(),
                new_ns: Vec::new(),
                t_s: Vec::new(),
                first_steady: 0,
                warmup: None,
                estimate: None,
                stop: PairStop::Budget,
                wall_ns: 0,
                error: None,
                rewarm: None,
                samples: (0, 0),
                looks: 0,
            },
            per: [0.0; 2],
            rewarm: [Vec::new(), Vec::new()],
            next_look: MIN_PAIRS,
        }
    }
}

/// Run the comparison state machine on two targets. `timer` is the coarser of the two sides'
/// timers (it sets the shortest acceptable sample).
pub fn measure_pair<'t>(
    old: &mut (dyn Target + 't),
    new: &mut (dyn Target + 't),
    clock: &dyn WallClock,
    plan: &PairPlan,
    timer: &TimerInfo,
    on_progress: &mut dyn FnMut(&Progress),
) -> PairMeasurement {
    let start = clock.now_ns();
    let policy = Paired::new(plan);
    let calibration = Calibration::new(
        plan.min_sample_ns(timer),
        plan.max_iters,
        None,
        plan.time_budget_ns,
    );
    let limits = Limits {
        budget_ns: plan.time_budget_ns,
        calibration_samples: plan.calibration_samples.max(1),
        probe_adds: 0,
    };
    let mut sampler = Sampler::new(policy, clock, start, calibration, limits);
    // Set-up of both sides (outside the budget's timed part, like `measure`).
    for (side, t) in [(0, &mut *old), (1, &mut *new)] {
        if let Err(e) = t.prepare() {
            sampler.fail(side, e);
            break;
        }
    }
    let stop = sampler.run(&mut [old, new], on_progress);
    let wall_ns = sampler.elapsed_ns();
    let calibrated_iters = sampler.calibrated().map_or(1, |c| c.iters);
    let error = sampler.take_error();
    let Paired { mut m, rewarm, .. } = sampler.into_policy();
    m.wall_ns = wall_ns;
    m.iters_per_sample = calibrated_iters;
    m.stop = match stop {
        StopReason::Precise => PairStop::Settled,
        StopReason::Budget => PairStop::Budget,
        StopReason::Interrupted => PairStop::Interrupted,
        StopReason::Failed => PairStop::Failed,
    };
    m.error = error.map(|(side, e)| (if side == 0 { Side::Old } else { Side::New }, e));
    if !rewarm[0].is_empty() && !rewarm[1].is_empty() {
        m.rewarm = Some(Rewarm {
            old: crate::stats::median(&rewarm[0]),
            new: crate::stats::median(&rewarm[1]),
        });
    }
    let ratios = ratio_series(&m.old_ns, &m.new_ns);
    let st = steady_ratios(&ratios, plan.threshold);
    m.warmup = st.map(|s| s.class);
    m.first_steady = st.map(|s| s.first).unwrap_or(0).min(ratios.len());
    let (o, n) = (&m.old_ns[m.first_steady..], &m.new_ns[m.first_steady..]);
    if !o.is_empty() {
        m.estimate = compare::paired(o, n).ok();
    }
    m
}

/// A cut of the ratio series whose head differs from the rest by less than this fraction of
/// the threshold is not a warm-up that matters to the verdict: nothing is excluded.
pub const NEGLIGIBLE_SHIFT_OF_THRESHOLD: f64 = 0.25;

/// Steady-state detection on the pair ratios. MSER's "no steady state" (a cut in the second
/// half) is kept only when what it cuts differs from what remains by more than a quarter of the
/// threshold: on a very quiet machine the ratio series is so flat that MSER's minimum lands on
/// structure far below anything the verdict could see, and cutting half the pairs would only
/// widen the interval.
pub fn steady_ratios(ratios: &[f64], threshold: f64) -> Option<steady::SteadyState> {
    let st = steady::detect(ratios)?;
    if st.class == WarmupClass::NoSteadyState && st.first > 0 && st.first < ratios.len() {
        let head = crate::stats::median(&ratios[..st.first]);
        let tail = crate::stats::median(&ratios[st.first..]);
        if (head / tail).ln().abs() < NEGLIGIBLE_SHIFT_OF_THRESHOLD * threshold {
            return Some(steady::SteadyState {
                first: 0,
                class: WarmupClass::Flat,
            });
        }
    }
    Some(st)
}

fn ratio_series(old: &[f64], new: &[f64]) -> Vec<f64> {
    old.iter()
        .zip(new)
        .map(|(o, n)| {
            if *o > 0.0 && *n > 0.0 {
                n / o
            } else {
                // A zero-duration sample (a clock that did not tick): neutral.
                1.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
