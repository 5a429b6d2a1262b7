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
//! pair ([`ProcessPair`]) and combines them with a random-effects interval
//! ([`comparison_from_process_pairs`], [`compare::random_effects`]): the interval then
//! includes the spread between pairs. After each pair, [`pairs_settled`] decides whether a
//! benchmark needs more. In process ([`run_suite_pairs`]) there is one process on one CPU, and
//! the interval covers the noise within it only; the table says so.
//!
//! The engine is a state machine, like [`crate::measure`]:
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

use crate::measure::{Batch, Progress, State, Target, WallClock, INTERRUPTED};
use crate::plan::Plan;
use crate::report::Style;
use crate::result::Tool;
use crate::stats::compare::{self, Mode, RatioEstimate, Verdict};
use crate::stats::steady::{self, WarmupClass};
use crate::target::{InProcess, Rng, Routine, Suite};
use crate::timer::TimerInfo;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

/// Schema of the comparison file.
pub const SCHEMA: u32 = 1;
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

    fn min_sample_ns(&self, timer: &TimerInfo) -> u64 {
        let floor = self.timer_factor * timer.overhead_ns.max(timer.resolution_ns);
        (self.target_sample_ns as f64).max(floor).ceil() as u64
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
    let mut m = PairMeasurement {
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
    };
    let mut rng = Rng::new(plan.seed);
    let mut batch = Batch::default();
    let mut rewarm_old = Vec::new();
    let mut rewarm_new = Vec::new();
    let goal = plan.min_sample_ns(timer);
    let mut state = State::Calibrate;
    let fail = |m: &mut PairMeasurement, e: (Side, String)| {
        m.error = Some(e);
        m.stop = PairStop::Failed;
    };
    // Set-up of both sides (outside the budget's timed part, like `measure`).
    for (side, t) in [(Side::Old, &mut *old), (Side::New, &mut *new)] {
        if let Err(e) = t.prepare() {
            fail(&mut m, (side, e));
            state = State::Done;
            break;
        }
    }

    // One batch of one side; per-sample ns, or the failing side's error.
    let mut take = |m: &mut PairMeasurement,
                    side: Side,
                    iters: u64,
                    count: usize|
     -> Result<Vec<u64>, (Side, String)> {
        batch.clear();
        let t: &mut (dyn Target + 't) = match side {
            Side::Old => &mut *old,
            Side::New => &mut *new,
        };
        t.measure(iters, count, &mut batch).map_err(|e| (side, e))?;
        if batch.ns.len() != count {
            return Err((
                side,
                format!("asked for {count} samples, got {}", batch.ns.len()),
            ));
        }
        match side {
            Side::Old => m.samples.0 += count,
            Side::New => m.samples.1 += count,
        }
        Ok(batch.ns.clone())
    };

    let mut calibration =
        crate::measure::Calibration::new(goal, plan.max_iters, None, plan.time_budget_ns);
    let mut est_sample_ns = goal as f64;
    let mut next_look = MIN_PAIRS;
    let mut rel_ci = None;
    let elapsed = |c: &dyn WallClock| c.now_ns().saturating_sub(start);

    while state != State::Done {
        if INTERRUPTED.load(Ordering::Relaxed) {
            m.stop = PairStop::Interrupted;
            break;
        }
        let order = if rng.next_u64() & 1 == 0 {
            [Side::Old, Side::New]
        } else {
            [Side::New, Side::Old]
        };
        match state {
            State::Calibrate => {
                let mut best = [0u64; 2];
                let mut failed = false;
                let iters = calibration.iters;
                for side in order {
                    match take(&mut m, side, iters, plan.calibration_samples.max(1)) {
                        Ok(ns) => best[side as usize] = ns.iter().copied().min().unwrap_or(0),
                        Err(e) => {
                            fail(&mut m, e);
                            failed = true;
                            break;
                        }
                    }
                }
                if failed {
                    break;
                }
                // The slower side sets the count.
                if let Some(c) = calibration.step(best[0].max(best[1]), elapsed(clock)) {
                    m.iters_per_sample = c.iters;
                    est_sample_ns = c.est_sample_ns;
                    state = State::Collect;
                }
            }
            State::Collect => {
                let now = elapsed(clock);
                if now >= plan.time_budget_ns {
                    m.stop = PairStop::Budget;
                    break;
                }
                let k = if plan.batch_ns == 0 {
                    1
                } else {
                    ((plan.batch_ns as f64 / est_sample_ns) as usize).clamp(MIN_BATCH, MAX_BATCH)
                };
                let count = k + plan.rewarm_samples;
                let n = m.iters_per_sample as f64;
                let mut per = [0.0f64; 2];
                let mut failed = false;
                let it = m.iters_per_sample;
                for side in order {
                    match take(&mut m, side, it, count) {
                        Ok(ns) => {
                            let rest: Vec<f64> = ns[plan.rewarm_samples..]
                                .iter()
                                .map(|&x| x as f64 / n)
                                .collect();
                            let med = crate::stats::median(&rest);
                            if plan.rewarm_samples > 0 && med > 0.0 {
                                let first = ns[0] as f64 / n;
                                match side {
                                    Side::Old => rewarm_old.push(first / med),
                                    Side::New => rewarm_new.push(first / med),
                                }
                            }
                            per[side as usize] = med;
                        }
                        Err(e) => {
                            fail(&mut m, e);
                            failed = true;
                            break;
                        }
                    }
                }
                if failed {
                    break;
                }
                m.old_ns.push(per[0]);
                m.new_ns.push(per[1]);
                let now = elapsed(clock);
                m.t_s.push(now as f64 / 1e9);
                let recent = m.old_ns.len().saturating_sub(64);
                let slow: Vec<f64> = m.old_ns[recent..]
                    .iter()
                    .zip(&m.new_ns[recent..])
                    .map(|(a, b)| a.max(*b))
                    .collect();
                est_sample_ns = (crate::stats::median(&slow) * n).max(1.0);

                if m.old_ns.len() >= next_look {
                    next_look = ((m.old_ns.len() as f64 * LOOK_GROWTH).ceil() as usize)
                        .max(m.old_ns.len() + 1);
                    m.looks += 1;
                    let ratios = ratio_series(&m.old_ns, &m.new_ns);
                    if let Some(st) = steady_ratios(&ratios, plan.threshold) {
                        if ratios.len() - st.first >= MIN_PAIRS {
                            let d: Vec<f64> = ratios[st.first..].iter().map(|r| r.ln()).collect();
                            let (lo, hi) = compare::hodges_lehmann_paired_ci_z(&d, STOP_Z);
                            rel_ci = Some((hi - lo) / 2.0);
                            let precise = plan
                                .precise_log_half_width
                                .is_some_and(|w| (hi - lo) / 2.0 < w);
                            let settles = plan.early_stop
                                && settled(lo.exp(), hi.exp(), plan.threshold).is_some();
                            if now >= plan.min_time_ns && (settles || precise) {
                                m.stop = PairStop::Settled;
                                state = State::Done;
                            }
                        }
                    }
                }
                on_progress(&Progress {
                    state,
                    elapsed_ns: now,
                    budget_ns: plan.time_budget_ns,
                    samples: m.samples.0 + m.samples.1,
                    rel_ci,
                });
            }
            State::Done => {}
        }
    }
    m.wall_ns = elapsed(clock);
    if !rewarm_old.is_empty() && !rewarm_new.is_empty() {
        m.rewarm = Some(Rewarm {
            old: crate::stats::median(&rewarm_old),
            new: crate::stats::median(&rewarm_new),
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
fn steady_ratios(ratios: &[f64], threshold: f64) -> Option<steady::SteadyState> {
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

// ---------------------------------------------------------------------------------------------
// The comparison file.

/// One comparison in the comparison file. `ratio` is NEW/OLD per-iteration time (above 1: NEW
/// is slower); `p_value` is adjusted for the number of comparisons (Holm), which is what the
/// verdict uses; `p_value_raw` is the test's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub name: String,
    pub ratio: f64,
    pub ci95: [f64; 2],
    pub p_value: f64,
    pub verdict: Verdict,
    /// Wall time of the comparison (both sides, calibration and warm-up included).
    pub seconds: f64,
    pub p_value_raw: f64,
    /// Sign-test p-value (paired only): a check that needs no symmetry.
    #[serde(default)]
    pub sign_p_value: Option<f64>,
    /// Pairs the estimate rests on (unpaired: the smaller sample count).
    pub pairs: usize,
    /// Pairs excluded as warm-up.
    #[serde(default)]
    pub warmup_pairs: usize,
    /// Steady-state class of the pair ratios (paired), or `null`.
    #[serde(default)]
    pub warmup: Option<WarmupClass>,
    pub iters_per_sample: [u64; 2],
    /// Median per-iteration time of each side over the steady pairs (or samples).
    pub old_median_ns: f64,
    pub new_median_ns: f64,
    /// `settled`, `budget`, `interrupted` (paired), or `offline` (unpaired).
    pub stop: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewarm: Option<Rewarm>,
    /// The pairs themselves (paired, in process), so any analysis can be redone offline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_samples: Option<PairSamples>,
    /// Smallest relative change (0.004 = 0.4 %) this run could have detected: found in 80 %
    /// of runs at α = 5 % (see [`compare::DETECTION_POWER`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest_detectable: Option<f64>,
    /// Across process pairs: how the uncertainty splits between and within pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<PairSpread>,
    /// Across process pairs: each pair's own figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub process_pairs: Vec<ProcessPair>,
}

/// How the uncertainty of a comparison across process pairs is made up.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairSpread {
    /// Process pairs the interval rests on.
    pub process_pairs: usize,
    /// Standard deviation of the pairs' log-ratios: the observed spread between pairs.
    pub spread_sd: f64,
    /// Root mean square of the pairs' own (within-pair) standard errors, log scale.
    pub within_se: f64,
    /// Shares of the variance of a pair's estimate due to the noise within pairs and to the
    /// pairs themselves (layout, CPU, the machine's state); they add up to 1.
    pub within_share: f64,
    pub between_share: f64,
}

/// One OLD/NEW process pair's part of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessPair {
    pub index: usize,
    /// The CPU both sides were pinned to (`null`: not pinned).
    pub cpu: Option<usize>,
    /// Environment padding both sides shared.
    pub env_pad_bytes: u64,
    /// Whether OLD was started (and asked first) before NEW.
    pub old_first: bool,
    /// This pair's ratio NEW/OLD (Hodges–Lehmann on its rounds) and its within-pair interval.
    pub ratio: f64,
    pub ci95: [f64; 2],
    /// Rounds (one OLD batch and one NEW batch) the pair's estimate rests on, and those cut as
    /// warm-up.
    pub rounds: usize,
    pub warmup_rounds: usize,
    pub iters_per_sample: u64,
    pub old_median_ns: f64,
    pub new_median_ns: f64,
    pub seconds: f64,
    pub stop: String,
    /// The cost of switching sides in this pair (see [`Rewarm`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewarm: Option<Rewarm>,
    /// The pair's rounds (per-iteration time of each side), so any analysis can be redone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<PairSamples>,
}

impl ProcessPair {
    /// A pair's figures from its measurement; `None` when it has no estimate.
    pub fn from_measurement(
        index: usize,
        cpu: Option<usize>,
        env_pad_bytes: u64,
        old_first: bool,
        m: &PairMeasurement,
    ) -> Option<ProcessPair> {
        let e = m.estimate?;
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(e.ratio) && ok(e.ci95.0) && ok(e.ci95.1)) {
            return None;
        }
        let o = &m.old_ns[m.first_steady..];
        let n = &m.new_ns[m.first_steady..];
        Some(ProcessPair {
            index,
            cpu,
            env_pad_bytes,
            old_first,
            ratio: e.ratio,
            ci95: [e.ci95.0, e.ci95.1],
            rounds: e.n,
            warmup_rounds: m.first_steady,
            iters_per_sample: m.iters_per_sample,
            old_median_ns: crate::stats::median(o),
            new_median_ns: crate::stats::median(n),
            seconds: m.wall_ns as f64 / 1e9,
            stop: m.stop.as_str().into(),
            rewarm: m.rewarm,
            samples: Some(PairSamples {
                old_ns: m.old_ns.clone(),
                new_ns: m.new_ns.clone(),
                t_s: m.t_s.clone(),
                first_steady: m.first_steady,
            }),
        })
    }

    /// ln of the ratio, and the within-pair standard error from the 95 % interval.
    pub fn log_estimate(&self) -> (f64, f64) {
        (
            self.ratio.ln(),
            (self.ci95[1].ln() - self.ci95[0].ln()) / (2.0 * crate::stats::Z95),
        )
    }
}

/// Smallest relative change detectable (80 % power, α = 5 %) from a 95 % interval of a ratio
/// whose estimate is close to normal on the log scale.
pub fn detectable_from_ci(lo: f64, hi: f64) -> Option<f64> {
    let z80 = 0.841_621_233_572_914_3;
    let half = (hi.ln() - lo.ln()) / 2.0;
    half.is_finite()
        .then(|| (half * (crate::stats::Z95 + z80) / crate::stats::Z95).exp() - 1.0)
}

/// Fewest process pairs a comparison across processes uses: the spread between pairs needs a
/// few to be estimated at all (with 3 degrees of freedom t₀.₉₇₅ = 3.18; with 1 it is 12.7).
pub const MIN_PROCESS_PAIRS: usize = 4;
/// Most process pairs by default (more only with --processes).
pub const MAX_DEFAULT_PROCESS_PAIRS: usize = 10;
/// The default count gives each pair at least this much of a benchmark's budget: enough to
/// calibrate, warm up and take the 50 rounds a pair's estimate rests on.
pub const MIN_PAIR_SLICE_NS: u64 = 150_000_000;
/// Confidence of the interval the stopping rule looks at after each pair: wider than the
/// reported 95 %, so that looking after each of up to ten pairs does not inflate the error
/// rate (Pocock's constant nominal level for 5 % over 7 looks is about 1.2 % per look; 0.5 % per
/// look leaves room for the final 95 % interval at the end of the budget).
pub const PAIRS_STOP_CONF: f64 = 0.995;
/// A pair's slice ends once its own 99 % interval is narrower (half-width, log scale) than
/// this fraction of the threshold: the pair's noise is then small beside the threshold, and
/// more rounds in the same pair cannot reduce the spread between pairs.
pub const PAIR_PRECISION_OF_THRESHOLD: f64 = 0.25;

/// Process pairs for a budget: as many as fit slices of [`MIN_PAIR_SLICE_NS`], between
/// [`MIN_PROCESS_PAIRS`] and [`MAX_DEFAULT_PROCESS_PAIRS`].
pub fn default_process_pairs(time_budget_ns: u64) -> usize {
    ((time_budget_ns / MIN_PAIR_SLICE_NS) as usize)
        .clamp(MIN_PROCESS_PAIRS, MAX_DEFAULT_PROCESS_PAIRS)
}

/// The plan of one process pair's slice of a benchmark: the per-pair engine with a budget of
/// `slice_ns`, no stop on the threshold (a single pair cannot settle the verdict), a stop once
/// its own interval is precise (see [`PAIR_PRECISION_OF_THRESHOLD`]).
pub fn pair_slice_plan(plan: &Plan, threshold: f64, slice_ns: u64) -> PairPlan {
    let mut p = PairPlan::across_processes(plan, threshold);
    p.time_budget_ns = slice_ns.max(1);
    p.min_time_ns = slice_ns / 4;
    p.early_stop = false;
    p.precise_log_half_width =
        Some((PAIR_PRECISION_OF_THRESHOLD * (1.0 + threshold).ln()).max(1e-6));
    p
}

/// Where the pairs so far leave a benchmark: its random-effects interval at [`PAIRS_STOP_CONF`]
/// over the pairs' log-ratios, settled against the threshold. `None` before [`MIN_PROCESS_PAIRS`] pairs (the
/// spread between pairs is not estimated yet) or while the interval straddles the threshold.
pub fn pairs_settled(pairs: &[ProcessPair], threshold: f64) -> Option<Settle> {
    if pairs.len() < MIN_PROCESS_PAIRS {
        return None;
    }
    let (theta, se): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| p.log_estimate()).unzip();
    let (_, lo, hi) = compare::random_effects_interval(&theta, &se, PAIRS_STOP_CONF)?;
    settled(lo.exp(), hi.exp(), threshold)
}

/// A comparison record from process pairs (random effects over pairs), or why there is none.
/// `stop` says why no further pair was started.
pub fn comparison_from_process_pairs(
    name: &str,
    pairs: Vec<ProcessPair>,
    stop: &str,
) -> Result<Comparison, String> {
    let (theta, se): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| p.log_estimate()).unzip();
    let re = compare::random_effects(&theta, &se).map_err(|e| {
        format!("{e}: give it more time with --time, or more pairs with --processes")
    })?;
    let o: Vec<f64> = pairs.iter().map(|p| p.old_median_ns).collect();
    let n: Vec<f64> = pairs.iter().map(|p| p.new_median_ns).collect();
    let seconds = pairs.iter().map(|p| p.seconds).sum();
    let (rw_old, rw_new): (Vec<f64>, Vec<f64>) = pairs
        .iter()
        .filter_map(|p| p.rewarm.map(|r| (r.old, r.new)))
        .unzip();
    let rewarm = (!rw_old.is_empty()).then(|| Rewarm {
        old: crate::stats::median(&rw_old),
        new: crate::stats::median(&rw_new),
    });
    Ok(Comparison {
        name: name.into(),
        ratio: re.ratio,
        ci95: [re.ci95.0, re.ci95.1],
        p_value: re.p_value,
        verdict: Verdict::NoChange,
        seconds,
        p_value_raw: re.p_value,
        sign_p_value: None,
        pairs: pairs.iter().map(|p| p.rounds).sum(),
        warmup_pairs: pairs.iter().map(|p| p.warmup_rounds).sum(),
        warmup: None,
        iters_per_sample: [pairs[0].iters_per_sample; 2],
        old_median_ns: crate::stats::median(&o),
        new_median_ns: crate::stats::median(&n),
        stop: stop.into(),
        rewarm,
        pair_samples: None,
        smallest_detectable: Some(re.smallest_detectable),
        spread: Some(PairSpread {
            process_pairs: re.pairs,
            spread_sd: re.spread_sd,
            within_se: re.within_se,
            within_share: re.within_share,
            between_share: re.between_share,
        }),
        process_pairs: pairs,
    })
}

/// The per-iteration times of every pair, warm-up included (`first_steady` marks the cut).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairSamples {
    pub old_ns: Vec<f64>,
    pub new_ns: Vec<f64>,
    pub t_s: Vec<f64>,
    pub first_steady: usize,
}

/// A benchmark that could not be compared, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub name: String,
    pub error: String,
}

/// The comparison file, schema 1 (`compare --json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonFile {
    pub schema: u32,
    pub mode: Mode,
    pub comparisons: Vec<Comparison>,
    /// Geometric mean of the ratios (`null` when nothing was compared).
    pub geomean_ratio: Option<f64>,
    pub geomean_ci95: Option<[f64; 2]>,
    pub threshold: f64,
    pub alpha: f64,
    /// Multiple-testing correction of `p_value`: `holm`.
    pub correction: String,
    #[serde(default)]
    pub failed: Vec<Failure>,
    /// Benchmarks only one side has (not compared).
    #[serde(default)]
    pub only_old: Vec<String>,
    #[serde(default)]
    pub only_new: Vec<String>,
    #[serde(default)]
    pub old: String,
    #[serde(default)]
    pub new: String,
    pub tool: Tool,
}

impl ComparisonFile {
    pub fn new(mode: Mode, threshold: f64) -> ComparisonFile {
        ComparisonFile {
            schema: SCHEMA,
            mode,
            comparisons: Vec::new(),
            geomean_ratio: None,
            geomean_ci95: None,
            threshold,
            alpha: compare::ALPHA,
            correction: "holm".into(),
            failed: Vec::new(),
            only_old: Vec::new(),
            only_new: Vec::new(),
            old: String::new(),
            new: String::new(),
            tool: Tool::default(),
        }
    }

    /// Adjust the p-values of all comparisons so far (Holm), redo every verdict and the
    /// geometric mean. Called after each comparison, so a file written part-way is coherent.
    pub fn finalize(&mut self) {
        let raw: Vec<f64> = self.comparisons.iter().map(|c| c.p_value_raw).collect();
        let adj = compare::holm(&raw);
        for (c, p) in self.comparisons.iter_mut().zip(adj) {
            c.p_value = p;
            c.verdict = compare::verdict(c.ratio, (c.ci95[0], c.ci95[1]), p, self.threshold);
        }
        let items: Vec<(f64, (f64, f64))> = self
            .comparisons
            .iter()
            .map(|c| (c.ratio, (c.ci95[0], c.ci95[1])))
            .collect();
        let g = compare::geomean(&items);
        self.geomean_ratio = g.map(|g| g.ratio);
        self.geomean_ci95 = g.map(|g| [g.ci95.0, g.ci95.1]);
    }

    /// Add the outcome of a paired measurement (a comparison, or a failure).
    pub fn push_paired(&mut self, name: &str, m: &PairMeasurement, keep_samples: bool) {
        match comparison_from_pair(name, m, keep_samples) {
            Ok(c) => self.comparisons.push(c),
            Err(error) => self.failed.push(Failure {
                name: name.into(),
                error,
            }),
        }
        self.finalize();
    }

    /// Any `slower` verdict?
    pub fn has_regression(&self) -> bool {
        self.comparisons
            .iter()
            .any(|c| c.verdict == Verdict::Slower)
    }

    /// Write atomically (temporary file + rename).
    pub fn write_atomic(&self, path: &std::path::Path) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::result::write_atomic(path, &json)
    }
}

/// A comparison record from a paired measurement, or why there is none. The p-value and
/// verdict are provisional until [`ComparisonFile::finalize`].
pub fn comparison_from_pair(
    name: &str,
    m: &PairMeasurement,
    keep_samples: bool,
) -> Result<Comparison, String> {
    if let Some((side, e)) = &m.error {
        return Err(format!("{} failed: {e}", side.as_str()));
    }
    if m.stop == PairStop::Interrupted && m.estimate.is_none() {
        return Err("interrupted before any pair was measured".into());
    }
    let est = m.estimate.ok_or_else(|| {
        format!(
            "too few pairs to compare ({} in {:.2} s): give it more time with --time",
            m.old_ns.len(),
            m.wall_ns as f64 / 1e9
        )
    })?;
    let steady = m.first_steady;
    let o = &m.old_ns[steady..];
    let n = &m.new_ns[steady..];
    Ok(Comparison {
        name: name.into(),
        ratio: est.ratio,
        ci95: [est.ci95.0, est.ci95.1],
        p_value: est.p_value,
        verdict: Verdict::NoChange,
        seconds: m.wall_ns as f64 / 1e9,
        p_value_raw: est.p_value,
        sign_p_value: est.sign_p_value,
        pairs: est.n,
        warmup_pairs: steady,
        warmup: m.warmup,
        iters_per_sample: [m.iters_per_sample; 2],
        old_median_ns: crate::stats::median(o),
        new_median_ns: crate::stats::median(n),
        stop: m.stop.as_str().into(),
        rewarm: m.rewarm,
        pair_samples: keep_samples.then(|| PairSamples {
            old_ns: m.old_ns.clone(),
            new_ns: m.new_ns.clone(),
            t_s: m.t_s.clone(),
            first_steady: steady,
        }),
        smallest_detectable: detectable_from_ci(est.ci95.0, est.ci95.1),
        spread: None,
        process_pairs: Vec::new(),
    })
}

// ---------------------------------------------------------------------------------------------
// In-process comparisons registered on a suite.

/// One member of a registered comparison: its own routine, or a benchmark of the suite by name.
pub enum PairSide {
    Routine(Box<dyn Routine>),
    Bench(String),
}

/// A comparison registered with [`Suite::compare`] or [`Suite::compare_benches`].
pub struct PairEntry {
    pub name: String,
    pub old: PairSide,
    pub new: PairSide,
}

/// An event of an in-process comparison run, for progress displays.
pub enum PairEvent<'a> {
    Start {
        name: &'a str,
    },
    Progress {
        name: &'a str,
        progress: &'a Progress,
    },
    Done {
        name: &'a str,
    },
}

fn routine_by_name<'a>(
    entries: &'a mut [crate::target::Entry],
    name: &str,
) -> Result<&'a mut (dyn Routine + 'static), String> {
    let known: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    entries
        .iter_mut()
        .find(|e| e.name == name)
        .map(|e| e.routine.as_mut())
        .ok_or_else(|| {
            format!(
                "no benchmark named '{name}' in the suite (it has: {})",
                known.join(", ")
            )
        })
}

fn two_by_name<'a>(
    entries: &'a mut [crate::target::Entry],
    a: &str,
    b: &str,
) -> Result<
    (
        &'a mut (dyn Routine + 'static),
        &'a mut (dyn Routine + 'static),
    ),
    String,
> {
    let ia = entries.iter().position(|e| e.name == a);
    let ib = entries.iter().position(|e| e.name == b);
    match (ia, ib) {
        (Some(i), Some(j)) if i == j => Err(format!(
            "OLD and NEW are the same benchmark '{a}': register the code twice to compare it \
             with itself"
        )),
        (Some(i), Some(j)) => {
            let (lo, hi) = (i.min(j), i.max(j));
            let (x, y) = entries.split_at_mut(hi);
            let (p, q) = (x[lo].routine.as_mut(), y[0].routine.as_mut());
            Ok(if i < j { (p, q) } else { (q, p) })
        }
        (None, _) => routine_by_name(entries, a).map(|_| unreachable!()),
        (_, None) => routine_by_name(entries, b).map(|_| unreachable!()),
    }
}

/// Run every registered comparison of `suite` whose name its filter selects, in this process.
pub fn run_suite_pairs(
    suite: &mut Suite,
    threshold: f64,
    on_event: &mut dyn FnMut(PairEvent),
) -> ComparisonFile {
    let timer = crate::timer::Timer::detect();
    let plan = PairPlan::in_process(&suite.options().plan, threshold);
    let mut file = ComparisonFile::new(Mode::Paired, threshold);
    file.old = "in-process".into();
    file.new = "in-process".into();
    let selected: Vec<bool> = suite
        .pairs
        .iter()
        .map(|p| suite.options().selects(&p.name))
        .collect();
    let (entries, pairs) = (&mut suite.entries, &mut suite.pairs);
    for (pair, _) in pairs.iter_mut().zip(selected).filter(|(_, s)| *s) {
        if INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
        let PairEntry { name, old, new } = pair;
        on_event(PairEvent::Start { name });
        type Both<'a> = (
            &'a mut (dyn Routine + 'static),
            &'a mut (dyn Routine + 'static),
        );
        let sides: Result<Both, String> = match (old, new) {
            (PairSide::Routine(a), PairSide::Routine(b)) => Ok((a.as_mut(), b.as_mut())),
            (PairSide::Routine(a), PairSide::Bench(b)) => {
                routine_by_name(entries, b).map(|b| (a.as_mut(), b))
            }
            (PairSide::Bench(a), PairSide::Routine(b)) => {
                routine_by_name(entries, a).map(|a| (a, b.as_mut()))
            }
            (PairSide::Bench(a), PairSide::Bench(b)) => two_by_name(entries, a, b),
        };
        match sides {
            Err(error) => {
                file.failed.push(Failure {
                    name: name.clone(),
                    error,
                });
                file.finalize();
            }
            Ok((a, b)) => {
                let mut ta = InProcess {
                    routine: a,
                    timer: &timer,
                };
                let mut tb = InProcess {
                    routine: b,
                    timer: &timer,
                };
                let m = measure_pair(
                    &mut ta,
                    &mut tb,
                    &crate::measure::MonotonicClock,
                    &plan,
                    &timer.info(),
                    &mut |p| on_event(PairEvent::Progress { name, progress: p }),
                );
                file.push_paired(name, &m, true);
            }
        }
        on_event(PairEvent::Done { name });
    }
    file
}

// ---------------------------------------------------------------------------------------------
// Terminal rendering.

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";

fn paint(style: Style, code: &str, s: &str) -> String {
    if style.color {
        format!("{code}{s}{RESET}")
    } else {
        s.to_string()
    }
}

/// A p-value in four decimals, or "<0.0001".
pub fn format_p(p: f64) -> String {
    if !p.is_finite() {
        "—".into()
    } else if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

fn name_width(file: &ComparisonFile) -> usize {
    file.comparisons
        .iter()
        .map(|c| c.name.chars().count())
        .chain(file.failed.iter().map(|f| f.name.chars().count()))
        .chain(std::iter::once(14))
        .max()
        .unwrap_or(14)
        .min(48)
}

/// Columns of the comparison table after the name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CmpCol {
    Ratio,
    Change,
    Ci,
    P,
    Verdict,
    Seconds,
    Pairs,
    Detect,
}

impl CmpCol {
    fn width(self) -> usize {
        match self {
            CmpCol::Ratio | CmpCol::Change | CmpCol::P => 8,
            CmpCol::Ci => 16,
            CmpCol::Verdict => 12,
            CmpCol::Seconds | CmpCol::Detect => 7,
            CmpCol::Pairs => 6,
        }
    }
}

/// The comparison table fitted to `render.width`: long names cut in the middle, then columns
/// dropped in this order: seconds, pairs, (names cut to `report::NAME_MIN`), p, detect,
/// change. The ratio, its interval and the verdict stay.
pub fn table_fitted(file: &ComparisonFile, render: crate::report::Render) -> String {
    use crate::report::{cut_middle, text_width, wrap, NAME_FLOOR, NAME_MIN};
    let style = render.style;
    let mut w = name_width(file);
    let mut cols = vec![
        CmpCol::Ratio,
        CmpCol::Change,
        CmpCol::Ci,
        CmpCol::P,
        CmpCol::Verdict,
        CmpCol::Seconds,
        CmpCol::Pairs,
        CmpCol::Detect,
    ];
    if let Some(width) = render.width {
        let width = width.max(crate::report::MIN_WIDTH);
        let used = |cols: &[CmpCol]| cols.iter().map(|c| c.width() + 2).sum::<usize>();
        let steps = [
            Some(CmpCol::Seconds),
            Some(CmpCol::Pairs),
            None,
            Some(CmpCol::P),
            Some(CmpCol::Detect),
            Some(CmpCol::Change),
        ];
        for step in steps {
            if used(&cols) + w <= width {
                break;
            }
            match step {
                Some(c) => cols.retain(|&x| x != c),
                None => w = w.min(NAME_MIN.max(width.saturating_sub(used(&cols)))),
            }
        }
        // Nothing left to drop: the name takes what remains, a few characters at least.
        w = w.min(width.saturating_sub(used(&cols)).max(NAME_FLOOR));
    }
    let mut s = String::new();
    let live = file.comparisons.iter().any(|c| c.spread.is_some());
    let title = |c: CmpCol| match c {
        CmpCol::Ratio => "ratio",
        CmpCol::Change => "change",
        CmpCol::Ci => "95% CI",
        CmpCol::P => "p (Holm)",
        CmpCol::Verdict => "verdict",
        CmpCol::Seconds => "seconds",
        CmpCol::Pairs if live => "procs",
        CmpCol::Pairs => "pairs",
        CmpCol::Detect => "detect",
    };
    let left = |c: CmpCol| matches!(c, CmpCol::Ci | CmpCol::Verdict);
    let cell = |c: CmpCol, text: &str| {
        let fill = " ".repeat(c.width().saturating_sub(text_width(text)));
        if left(c) {
            format!("{text}{fill}")
        } else {
            format!("{fill}{text}")
        }
    };
    let name_cell = |n: &str| {
        let n = cut_middle(n, w);
        let fill = " ".repeat(w.saturating_sub(text_width(&n)));
        format!("{n}{fill}")
    };
    let mut head = name_cell("benchmark");
    for &c in &cols {
        let _ = write!(head, "  {}", cell(c, title(c)));
    }
    let _ = writeln!(s, "{}", paint(style, BOLD, head.trim_end()));
    for c in &file.comparisons {
        let mut row = name_cell(&c.name);
        for &col in &cols {
            let text = match col {
                CmpCol::Ratio => format!("{:.4}", c.ratio),
                CmpCol::Change => format!("{:+.2}%", (c.ratio - 1.0) * 100.0),
                CmpCol::Ci => format!("[{:.4}, {:.4}]", c.ci95[0], c.ci95[1]),
                CmpCol::P => format_p(c.p_value),
                CmpCol::Verdict => c.verdict.as_str().to_string(),
                CmpCol::Seconds => format!("{:.2}", c.seconds),
                CmpCol::Pairs => c
                    .spread
                    .map(|p| p.process_pairs)
                    .unwrap_or(c.pairs)
                    .to_string(),
                CmpCol::Detect => c
                    .smallest_detectable
                    .map(|d| format!("±{:.2}%", d * 100.0))
                    .unwrap_or_else(|| "—".into()),
            };
            let text = cell(col, &text);
            let text = match (col, c.verdict) {
                (CmpCol::Verdict, Verdict::Slower) => paint(style, RED, &text),
                (CmpCol::Verdict, Verdict::Faster) => paint(style, GREEN, &text),
                (CmpCol::Verdict, Verdict::Inconclusive) => paint(style, YELLOW, &text),
                _ => text,
            };
            let _ = write!(row, "  {text}");
        }
        let _ = writeln!(s, "{}", row.trim_end());
    }
    for f in &file.failed {
        let _ = writeln!(s, "{}  {}", name_cell(&f.name), paint(style, RED, "FAILED"));
    }
    if let (Some(g), Some(ci)) = (file.geomean_ratio, file.geomean_ci95) {
        let mut row = name_cell("geometric mean");
        for &col in &cols {
            let text = match col {
                CmpCol::Ratio => format!("{g:.4}"),
                CmpCol::Change => format!("{:+.2}%", (g - 1.0) * 100.0),
                CmpCol::Ci => format!("[{:.4}, {:.4}]", ci[0], ci[1]),
                _ => break,
            };
            let _ = write!(row, "  {}", cell(col, &text));
        }
        let _ = writeln!(s, "{}", row.trim_end());
    }
    let mut lines = |text: &str| {
        for l in wrap(text, render.width, 2, 2) {
            let _ = writeln!(s, "  {l}");
        }
    };
    for f in &file.failed {
        lines(&format!("{}: {}", f.name, f.error));
    }
    for c in &file.comparisons {
        if let Some(p) = c.spread {
            lines(&format!(
                "{}: {} process pairs, spread between pairs (sd) {:.2}%; of the uncertainty \
                 {:.0}% is within pairs, {:.0}% between them; smallest detectable change {}",
                c.name,
                p.process_pairs,
                p.spread_sd * 100.0,
                p.within_share * 100.0,
                p.between_share * 100.0,
                c.smallest_detectable
                    .map(|d| format!("{:.2}%", d * 100.0))
                    .unwrap_or_else(|| "—".into())
            ));
        }
    }
    let mut legend = format!(
        "ratio = NEW/OLD per-iteration time (above 1: NEW is slower), {}; verdict at α = {} \
         after Holm's correction over {} comparison(s), noise threshold ±{}%: no-change when the \
         interval lies within it, inconclusive when it straddles it; detect = the smallest \
         change the run could have detected (80% power).",
        match (file.mode, live) {
            (Mode::Paired, true) => "weighted geometric mean over process pairs",
            (Mode::Paired, false) => "Hodges–Lehmann estimate",
            (Mode::Unpaired, _) => "ratio of the files' medians",
        },
        file.alpha,
        file.comparisons.len(),
        file.threshold * 100.0
    );
    match file.mode {
        Mode::Paired if live => legend.push_str(
            " Process pairs: each pair is an OLD and a NEW process on one CPU with one environment \
             padding, alternating batches; 95% CI over the pairs' log-ratios by random effects \
             (weighted by each pair's precision, Hartung–Knapp, t with pairs − 1 degrees of \
             freedom): it includes the spread between pairs.",
        ),
        Mode::Paired => legend.push_str(
            " Paired in one process on one CPU: OLD and NEW alternated, same iterations per \
             sample; 95% CI by inverting the Wilcoxon signed-rank test on the pairs' log-ratios. \
             It covers the noise within this process, not what differs between processes (memory \
             layout, CPU): for that, compare two executables with vernier compare OLD NEW.",
        ),
        Mode::Unpaired => legend.push_str(
            " Unpaired: the two result files were measured at different times, so any drift of \
             the machine between the runs shows up as a difference; 95% CI combines the two \
             files' own intervals (each covers the spread between its processes and rounds). \
             For a drift-free verdict compare the executables: vernier compare OLD_EXE NEW_EXE.",
        ),
    }
    for l in wrap(&legend, render.width, 0, 0) {
        let _ = writeln!(s, "{}", paint(style, DIM, &l));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::MockClock;
    use crate::timer::TimerKind;

    /// A side whose per-iteration cost is `base × drift(t) × (1 + noise)`; it advances the
    /// shared clock by what it took.
    struct Mock {
        clock: MockClock,
        base: f64,
        drift: fn(u64) -> f64,
        rng: Rng,
        taken: usize,
        fail_after: Option<usize>,
    }

    impl Mock {
        fn new(clock: &MockClock, base: f64, drift: fn(u64) -> f64, seed: u64) -> Mock {
            Mock {
                clock: clock.clone(),
                base,
                drift,
                rng: Rng::new(seed),
                taken: 0,
                fail_after: None,
            }
        }
    }

    impl Target for Mock {
        fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
            for _ in 0..count {
                if self.fail_after.is_some_and(|n| self.taken >= n) {
                    return Err("worker died: killed by signal 11 (Segmentation fault)".into());
                }
                let now = self.clock.0.get();
                // ±2 % uniform noise plus an occasional 3× spike (an interrupt).
                let mut noise = 1.0 + (self.rng.next_f64() - 0.5) * 0.04;
                if self.rng.next_f64() < 0.01 {
                    noise *= 3.0;
                }
                let ns = (self.base * (self.drift)(now) * noise * iters as f64).round() as u64;
                self.taken += 1;
                self.clock.0.set(now + ns + 100);
                out.ns.push(ns.max(1));
            }
            Ok(())
        }
    }

    fn timer() -> TimerInfo {
        TimerInfo {
            kind: TimerKind::Tsc,
            resolution_ns: 1.0,
            overhead_ns: 10.0,
            tsc_hz: Some(3e9),
        }
    }

    /// Doubles the cost over the one-second budget.
    fn drift_2x(t: u64) -> f64 {
        1.0 + t as f64 / 1e9
    }

    fn flat(_: u64) -> f64 {
        1.0
    }

    fn run(
        old_base: f64,
        new_base: f64,
        drift: fn(u64) -> f64,
        plan: &PairPlan,
    ) -> PairMeasurement {
        let clock = MockClock::default();
        let mut a = Mock::new(&clock, old_base, drift, 1);
        let mut b = Mock::new(&clock, new_base, drift, 2);
        measure_pair(&mut a, &mut b, &clock, plan, &timer(), &mut |_| {})
    }

    fn plans() -> [PairPlan; 2] {
        let p = Plan::default();
        [
            PairPlan::in_process(&p, 0.005),
            PairPlan::across_processes(&p, 0.005),
        ]
    }

    #[test]
    fn a_against_a_under_2x_drift_is_no_change() {
        for plan in plans() {
            let m = run(5.0, 5.0, drift_2x, &plan);
            let e = m.estimate.unwrap();
            assert!((e.ratio - 1.0).abs() < 0.003, "{e:?}");
            let mut f = ComparisonFile::new(Mode::Paired, 0.005);
            f.push_paired("a", &m, false);
            assert_eq!(f.comparisons[0].verdict, Verdict::NoChange);
            // The paired interval settles inside the band before the budget is spent.
            assert_eq!(m.stop, PairStop::Settled, "{plan:?}");
            assert!(e.ci95.0 > 1.0 / 1.005 && e.ci95.1 < 1.005, "{e:?}");
        }
    }

    #[test]
    fn a_known_shift_is_measured_despite_drift() {
        for plan in plans() {
            let m = run(5.0, 5.5, drift_2x, &plan);
            let e = m.estimate.unwrap();
            assert!((e.ratio - 1.1).abs() < 0.005, "{e:?}");
            // The interval is about ±0.15 %: it lies close to the truth (a 95 % interval may
            // miss it, by little).
            assert!(e.ci95.0 < 1.1 * 1.002 && e.ci95.1 > 1.1 / 1.002, "{e:?}");
            let mut f = ComparisonFile::new(Mode::Paired, 0.005);
            f.push_paired("a", &m, false);
            assert_eq!(f.comparisons[0].verdict, Verdict::Slower);
            assert_eq!(m.stop, PairStop::Settled);
            let m = run(5.5, 5.0, drift_2x, &plan);
            f.push_paired("b", &m, false);
            assert_eq!(f.comparisons[1].verdict, Verdict::Faster);
            let g = f.geomean_ratio.unwrap();
            assert!((g - 1.0).abs() < 0.005, "{g}");
        }
    }

    #[test]
    fn both_sides_use_the_same_iterations_calibrated_on_the_slower() {
        let plan = &plans()[0];
        let m = run(1.0, 4.0, flat, plan);
        // Goal 20 µs: the slower side (4 ns) needs ≥ 5000 iterations, the faster ≥ 20 000.
        assert!(m.iters_per_sample >= 5_000 && m.iters_per_sample < 20_000);
        let e = m.estimate.unwrap();
        assert!((e.ratio - 4.0).abs() < 0.02, "{e:?}");
    }

    #[test]
    fn unpaired_comparison_of_drifting_runs_is_fooled_where_paired_is_not() {
        // OLD measured during the first half second, NEW during the second, same code.
        let clock = MockClock::default();
        let mut a = Mock::new(&clock, 5.0, drift_2x, 1);
        let mut batch = Batch::default();
        a.measure(25_000, 2000, &mut batch).unwrap();
        let old: Vec<f64> = batch.ns.iter().map(|&x| x as f64 / 25_000.0).collect();
        batch.clear();
        a.measure(25_000, 2000, &mut batch).unwrap();
        let new: Vec<f64> = batch.ns.iter().map(|&x| x as f64 / 25_000.0).collect();
        let u = compare::unpaired(&old, &new).unwrap();
        assert!(u.ratio > 1.1 && u.ci95.0 > 1.05, "{u:?}");
        let m = run(5.0, 5.0, drift_2x, &plans()[0]);
        assert!((m.estimate.unwrap().ratio - 1.0).abs() < 0.003);
    }

    #[test]
    fn rewarm_samples_are_measured_but_not_paired() {
        let plan = &plans()[1];
        let m = run(5.0, 5.0, flat, plan);
        let (so, sn) = m.samples;
        // More samples were taken than paired, and every batch had one extra.
        assert!(so > m.old_ns.len() * (MIN_BATCH + 1) && sn > m.new_ns.len() * (MIN_BATCH + 1));
        let r = m.rewarm.unwrap();
        assert!(
            (r.old - 1.0).abs() < 0.05 && (r.new - 1.0).abs() < 0.05,
            "{r:?}"
        );
    }

    #[test]
    fn no_early_stop_uses_the_budget() {
        let mut plan = plans()[0].clone();
        plan.early_stop = false;
        plan.time_budget_ns = 200_000_000;
        let m = run(5.0, 5.0, flat, &plan);
        assert_eq!(m.stop, PairStop::Budget);
        assert!(m.wall_ns >= plan.time_budget_ns);
        assert!(m.wall_ns < plan.time_budget_ns + plan.time_budget_ns / 20);
    }

    #[test]
    fn a_failing_side_is_named() {
        let clock = MockClock::default();
        let mut a = Mock::new(&clock, 5.0, flat, 1);
        let mut b = Mock::new(&clock, 5.0, flat, 2);
        b.fail_after = Some(200);
        let m = measure_pair(&mut a, &mut b, &clock, &plans()[0], &timer(), &mut |_| {});
        assert_eq!(m.stop, PairStop::Failed);
        let (side, e) = m.error.clone().unwrap();
        assert_eq!(side, Side::New);
        assert!(e.contains("signal 11"));
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        f.push_paired("x", &m, false);
        assert!(f.comparisons.is_empty());
        assert!(f.failed[0].error.starts_with("NEW failed: worker died"));
        assert_eq!(f.geomean_ratio, None);
    }

    #[test]
    fn settle_rule() {
        let t = 0.005;
        assert_eq!(settled(1.006, 1.02, t), Some(Settle::Above));
        assert_eq!(settled(0.98, 0.99, t), Some(Settle::Below));
        assert_eq!(settled(0.998, 1.004, t), Some(Settle::Within));
        assert_eq!(settled(0.998, 1.006, t), None);
        assert_eq!(settled(1.001, 1.008, t), None);
    }

    #[test]
    fn holm_applies_across_the_file() {
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        for (i, p) in [0.03, 0.001].into_iter().enumerate() {
            f.comparisons.push(Comparison {
                name: format!("b{i}"),
                ratio: 1.02,
                ci95: [1.01, 1.03],
                p_value: p,
                verdict: Verdict::NoChange,
                seconds: 1.0,
                p_value_raw: p,
                sign_p_value: None,
                pairs: 100,
                warmup_pairs: 0,
                warmup: None,
                iters_per_sample: [1, 1],
                old_median_ns: 1.0,
                new_median_ns: 1.02,
                stop: "budget".into(),
                rewarm: None,
                pair_samples: None,
                smallest_detectable: None,
                spread: None,
                process_pairs: Vec::new(),
            });
        }
        f.finalize();
        // 0.001·2 = 0.002 (slower); max(0.03·1, 0.002) = 0.03 stays under 0.05 (slower).
        assert_eq!(f.comparisons[1].p_value, 0.002);
        assert_eq!(f.comparisons[0].verdict, Verdict::Slower);
        f.comparisons[0].p_value_raw = 0.06;
        f.finalize();
        // No longer significant, and the interval [1.01, 1.03] is not within ±0.5 %.
        assert_eq!(f.comparisons[0].verdict, Verdict::Inconclusive);
        // The JSON has the contract's names.
        let v: serde_json::Value = serde_json::to_value(&f).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["mode"], "paired");
        assert_eq!(v["comparisons"][0]["verdict"], "inconclusive");
        assert_eq!(v["comparisons"][1]["verdict"], "slower");
        for k in ["name", "ratio", "ci95", "p_value", "verdict", "seconds"] {
            assert!(v["comparisons"][0].get(k).is_some(), "{k}");
        }
        assert!(v["geomean_ratio"].as_f64().is_some());
    }
}
