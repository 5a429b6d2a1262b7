//! A comparison's figures from its pairs: the record of a paired measurement in one process
//! ([`comparison_from_pair`]), each process pair's own figures ([`ProcessPair`]) and their
//! combination across process pairs with a random-effects interval
//! ([`comparison_from_process_pairs`]), the evidence that the pairs fall into layout states
//! ([`pair_states`]), and the stopping rule over process pairs ([`pairs_settled`]). The
//! statistics themselves are in [`crate::stats::compare`]; the engine
//! that measures the pairs is [`crate::measure::compare`].

use crate::measure::compare::{
    settled, PairMeasurement, PairStop, Rewarm, Settle, MIN_PROCESS_PAIRS,
};
use crate::stats::compare::Verdict;
use crate::stats::random_effects::{self, random_effects_interval};
use crate::stats::steady::WarmupClass;
use serde::{Deserialize, Serialize};

mod states;
pub use states::{
    layout_plan, pair_states, plan_pairs, PairStates, PairsPlan, LAYOUT_AVERAGE_MIN_PAIRS,
    MAX_PLANNED_PAIRS,
};

/// Whether a benchmark's measured code (its loop's function and every function it calls) is the
/// same instructions in OLD and NEW, addresses aside. Only live comparisons of two executables
/// run with the same arguments and environment look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The same instructions: a difference measured comes from where the code and its data
    /// sit (addresses, alignment), or from inputs prepared outside the loop, not from a change
    /// to the code.
    Same,
    Changed,
    /// Not compared (`code_detail.reason` says why).
    Unknown,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Same => "same",
            Code::Changed => "changed",
            Code::Unknown => "unknown",
        }
    }
}

/// What the comparison of the code looked at.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodeDetail {
    /// Functions compared (the loop's function first).
    pub functions: usize,
    /// `changed`: OLD's function where the first difference is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differs_in: Option<String>,
    /// `unknown`: why the code could not be compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One comparison in the comparison file. `ratio` is NEW/OLD per-iteration time (above 1: NEW
/// is slower); `p_value` is adjusted for the number of comparisons (Holm), which is what the
/// verdict uses; `p_value_raw` is the test's own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// of runs at α = 5 % (see [`random_effects::DETECTION_POWER`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest_detectable: Option<f64>,
    /// Across process pairs: how the uncertainty splits between and within pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<PairSpread>,
    /// Across process pairs: each pair's own figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub process_pairs: Vec<ProcessPair>,
    /// Across process pairs: the pairs' ratios disagree beyond their own intervals (the
    /// benchmark's speed depends on where its processes' code and data sit): the range of the
    /// states seen, and whether `ci95` is already the layout-averaged interval (from
    /// [`LAYOUT_AVERAGE_MIN_PAIRS`] pairs on) or still spans the states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_states: Option<PairStates>,
    /// Live comparisons of two executables: whether the benchmark's measured code is the same
    /// instructions in OLD and NEW, addresses aside (`same`: a `faster` or `slower` verdict
    /// then comes from where the code sits, and is not a regression), and what was compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_detail: Option<CodeDetail>,
    /// Allocations per iteration of each side, when both were counted (docs/memory.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::memory::MemoryChange>,
    /// An unpaired comparison's unit: `cycles` when both sides were judged in cycles (the
    /// ratio of their cycles: runs at different times may find the core at different
    /// clocks), `ns` otherwise; absent for paired ones, whose sides share their moments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<super::Unit>,
    /// `compare --instructions`: each side's instructions per iteration, counted under
    /// callgrind (the harness's loop, its empty loop's taken off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_iter: Option<[f64; 2]>,
    /// The work one iteration does, as NEW declared it (`Suite::throughput`, the header's
    /// `bytes_per_iter`): each side's rate is it over that side's median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<crate::units::Throughput>,
}

impl Comparison {
    /// NEW's declared work `t` kept as this comparison's, unless a side's body was removed
    /// (`removed`: OLD's, NEW's): a removed body's time is the harness's own loop, and no rate
    /// of it means anything. Every comparison, of files or live, sets its work here.
    pub fn set_throughput(&mut self, t: Option<crate::units::Throughput>, removed: [bool; 2]) {
        self.throughput = t.filter(|_| removed == [false, false]);
    }

    /// OLD's and NEW's rates (`1.50 GiB/s`), when the benchmark declared its work.
    pub fn rates(&self) -> Option<[String; 2]> {
        let t = self.throughput?;
        Some([t.rate(self.old_median_ns), t.rate(self.new_median_ns)])
    }

    /// A change was measured, smaller than the noise threshold: the verdict is `no-change`
    /// (the whole interval lies within the threshold, the contract's meaning), yet the interval
    /// excludes 1 and the test agrees at α, so NEW differs from OLD by about `ratio`. Two
    /// builds of 1000 and 1001 dependent additions read 1.0010 [1.0010, 1.0011] against the
    /// default ±0.5 %: the report says that change, beside the verdict.
    pub fn measured_below_threshold(&self) -> bool {
        self.verdict == Verdict::NoChange
            && self.p_value < crate::stats::compare::ALPHA
            && (self.ci95[0] > 1.0 || self.ci95[1] < 1.0)
    }

    /// Why the verdict is `inconclusive` (`None` for any other verdict).
    pub fn unresolved(&self) -> Option<Unresolved> {
        if self.verdict != Verdict::Inconclusive {
            return None;
        }
        let alpha = crate::stats::compare::ALPHA;
        let changed = self.ci95[0] > 1.0 || self.ci95[1] < 1.0;
        Some(match self.layout_states {
            Some(s) if !s.averaged => Unresolved::StatesNotSampled {
                pairs: s.pairs,
                need: s.average_from,
            },
            _ if changed && self.p_value_raw < alpha && self.p_value >= alpha => {
                Unresolved::Multiplicity
            }
            _ if changed => Unresolved::SizeUnsettled,
            _ => Unresolved::TooWide,
        })
    }
}

/// Why a comparison is `inconclusive`, read from its own figures, so that the screen always
/// gives the reason (see [`Comparison::unresolved`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// The pairs show layout states and are fewer than [`LAYOUT_AVERAGE_MIN_PAIRS`]: the
    /// interval spans the states seen, whatever the mean over the pairs says.
    StatesNotSampled { pairs: usize, need: usize },
    /// The interval excludes no change and the test agrees at α on its own, but not once
    /// corrected for the number of comparisons (Holm).
    Multiplicity,
    /// A change is measured (the interval excludes 1, p < α), but the estimate lies inside the
    /// noise threshold while the interval reaches beyond it: whether it is as large as the
    /// threshold is not established.
    SizeUnsettled,
    /// The interval includes no change and reaches beyond the threshold: the run could not
    /// resolve a change of the threshold's size (`smallest_detectable` says what it could).
    TooWide,
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

    /// A pair known only by its ratio NEW/OLD, its own 95 % interval, the rounds it rests on
    /// and its measuring time (no samples, no CPU, no padding): how a pair analysis is fed from
    /// ratios measured elsewhere, or from a recording.
    pub fn from_ratio(
        index: usize,
        ratio: f64,
        ci95: [f64; 2],
        rounds: usize,
        seconds: f64,
    ) -> ProcessPair {
        ProcessPair {
            index,
            cpu: None,
            env_pad_bytes: 0,
            old_first: index.is_multiple_of(2),
            ratio,
            ci95,
            rounds,
            warmup_rounds: 0,
            iters_per_sample: 1,
            old_median_ns: 1.0,
            new_median_ns: ratio,
            seconds,
            stop: "budget".into(),
            rewarm: None,
            samples: None,
        }
    }

    /// ln of the ratio, and the within-pair standard error from the 95 % interval.
    pub fn log_estimate(&self) -> (f64, f64) {
        (
            self.ratio.ln(),
            (self.ci95[1].ln() - self.ci95[0].ln()) / (2.0 * crate::stats::Z95),
        )
    }
}
/// The per-iteration times of every pair, warm-up included (`first_steady` marks the cut).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairSamples {
    pub old_ns: Vec<f64>,
    pub new_ns: Vec<f64>,
    pub t_s: Vec<f64>,
    pub first_steady: usize,
}

/// Smallest relative change detectable (80 % power, α = 5 %) from a 95 % interval of a ratio
/// whose estimate is close to normal on the log scale.
pub fn detectable_from_ci(lo: f64, hi: f64) -> Option<f64> {
    let z80 = 0.841_621_233_572_914_3;
    let half = (hi.ln() - lo.ln()) / 2.0;
    half.is_finite()
        .then(|| (half * (crate::stats::Z95 + z80) / crate::stats::Z95).exp() - 1.0)
}

/// Confidence of the interval the stopping rule looks at after each pair: wider than the
/// reported 95 %, so that looking after each of up to ten pairs does not inflate the error
/// rate (Pocock's constant nominal level for 5 % over 7 looks is about 1.2 % per look; 0.5 % per
/// look leaves room for the final 95 % interval at the end of the budget).
pub const PAIRS_STOP_CONF: f64 = 0.995;

/// Where the pairs so far leave a benchmark: its random-effects interval at [`PAIRS_STOP_CONF`]
/// over the pairs' log-ratios, settled against the threshold. `None` before [`MIN_PROCESS_PAIRS`] pairs (the
/// spread between pairs is not estimated yet), while the interval straddles the threshold, and
/// while the pairs show layout states ([`pair_states`]) but are fewer than
/// [`LAYOUT_AVERAGE_MIN_PAIRS`]: a few pairs then tell only which states they happened to land
/// in (four pairs of an add loop read 0.714–0.726 while eleven other runs of the same
/// comparison had a median of 0.80), so the benchmark goes on until the average over layouts
/// can be judged.
pub fn pairs_settled(pairs: &[ProcessPair], threshold: f64) -> Option<Settle> {
    if pairs.len() < MIN_PROCESS_PAIRS || pair_states(pairs).is_some_and(|s| !s.averaged) {
        return None;
    }
    let (theta, se): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| p.log_estimate()).unzip();
    let (_, lo, hi) = random_effects_interval(&theta, &se, PAIRS_STOP_CONF)?;
    settled(lo.exp(), hi.exp(), threshold)
}

/// The interval a comparison over process pairs reports, with the smallest change it could
/// detect: the random-effects interval `re`, or, while the pairs show layout states that fewer
/// than [`LAYOUT_AVERAGE_MIN_PAIRS`] pairs have sampled, that interval joined to the range of
/// the states seen (the next run reads whichever state its processes land in). The smallest
/// detectable change always comes from the interval reported, so the two follow one rule.
pub fn pairs_interval(
    re: &random_effects::RandomEffects,
    states: Option<&PairStates>,
) -> ([f64; 2], f64) {
    match states {
        Some(s) if !s.averaged => {
            let ci = [re.ci95.0.min(s.lo), re.ci95.1.max(s.hi)];
            let detect = detectable_from_ci(ci[0], ci[1]).unwrap_or(re.smallest_detectable);
            (ci, detect.max(re.smallest_detectable))
        }
        _ => ([re.ci95.0, re.ci95.1], re.smallest_detectable),
    }
}

/// A comparison record from process pairs (random effects over pairs), or why there is none.
/// `stop` says why no further pair was started.
pub fn comparison_from_process_pairs(
    name: &str,
    pairs: Vec<ProcessPair>,
    stop: &str,
) -> Result<Comparison, String> {
    let (theta, se): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| p.log_estimate()).unzip();
    let re = random_effects::random_effects(&theta, &se).map_err(|e| {
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
    let layout_states = pair_states(&pairs);
    let (ci95, smallest_detectable) = pairs_interval(&re, layout_states.as_ref());
    Ok(Comparison {
        name: name.into(),
        ratio: re.ratio,
        ci95,
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
        smallest_detectable: Some(smallest_detectable),
        spread: Some(PairSpread {
            process_pairs: re.pairs,
            spread_sd: re.spread_sd,
            within_se: re.within_se,
            within_share: re.within_share,
            between_share: re.between_share,
        }),
        process_pairs: pairs,
        layout_states,
        code: None,
        code_detail: None,
        memory: None,
        unit: None,
        instructions_per_iter: None,
        throughput: None,
    })
}

/// A comparison record from a paired measurement, or why there is none. The p-value and
/// verdict are provisional until [`ComparisonFile::finalize`](crate::result::comparison::ComparisonFile::finalize).
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
        ..Comparison::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::comparison::ComparisonFile;
    use crate::stats::compare::Mode;
    use crate::stats::student::student_t_quantile;
    use crate::workload::input::Rng;

    /// Pairs of the given ratios, each with its own 95 % interval of ±`half` (relative).
    fn pairs(ratios: &[f64], half: f64) -> Vec<ProcessPair> {
        ratios
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                ProcessPair::from_ratio(i, r, [r * (1.0 - half), r * (1.0 + half)], 200, 0.2)
            })
            .collect()
    }

    /// The comparison of these pairs as the comparison file judges it, threshold 0.5 %.
    fn judged(p: Vec<ProcessPair>) -> Comparison {
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        f.comparisons
            .push(comparison_from_process_pairs("chase", p, "budget").unwrap());
        f.finalize();
        f.comparisons.remove(0)
    }

    /// Two layout states of a 64 MiB pointer chase, 100 against 101 loads: NEW 1.2 % slower
    /// in the one (whose pairs spread over 1.1 % among themselves), 0.3 % faster in the other.
    const STATE_SLOW: [f64; 5] = [1.0062, 1.0178, 1.0121, 1.0095, 1.0150];
    const STATE_FAST: [f64; 5] = [0.9968, 0.9975, 0.9981, 0.9962, 0.9979];

    #[test]
    fn four_pairs_from_one_of_two_states_get_no_verdict_the_other_contradicts() {
        let four = pairs(&STATE_SLOW[..4], 0.0025);
        // The four pairs alone, by the random-effects interval, would say `slower`, which the
        // other state (NEW faster) contradicts.
        let (theta, se): (Vec<f64>, Vec<f64>) = four.iter().map(|p| p.log_estimate()).unzip();
        let re = random_effects::random_effects(&theta, &se).unwrap();
        assert_eq!(
            crate::stats::compare::verdict(re.ratio, re.ci95, re.p_value, 0.005),
            Verdict::Slower,
            "{re:?}"
        );
        // They show layout states (they disagree beyond their own intervals), too few to have
        // sampled them: the interval spans the states seen, and no verdict is given.
        let c = judged(four);
        let st = c.layout_states.expect("layout states");
        assert!(!st.averaged && st.pairs == 4 && st.average_from == LAYOUT_AVERAGE_MIN_PAIRS);
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        assert_eq!(
            c.unresolved(),
            Some(Unresolved::StatesNotSampled {
                pairs: 4,
                need: LAYOUT_AVERAGE_MIN_PAIRS
            })
        );
        assert!(
            c.ci95[0] <= st.lo && c.ci95[1] >= st.hi,
            "{:?} {st:?}",
            c.ci95
        );
        // The smallest detectable change follows the interval reported, not the mean's own.
        assert!(c.smallest_detectable.unwrap() > re.smallest_detectable);
        // Every mix of four pairs from the two states: never a verdict a state contradicts.
        for mask in 0u32..16 {
            let r: Vec<f64> = (0..4)
                .map(|i| {
                    if mask & (1 << i) != 0 {
                        STATE_FAST[i]
                    } else {
                        STATE_SLOW[i]
                    }
                })
                .collect();
            let c = judged(pairs(&r, 0.0025));
            if mask == 15 {
                // Four pairs of the fast state agree within their own intervals: nothing in
                // them shows the other state (the limit docs/compare.md states).
                assert!(c.layout_states.is_none(), "{c:?}");
                continue;
            }
            let contradicted = match c.verdict {
                Verdict::Slower => STATE_FAST[0] < 1.0,
                Verdict::Faster => STATE_SLOW[0] > 1.0,
                Verdict::NoChange => true,
                Verdict::Inconclusive => false,
            };
            assert!(!contradicted, "{r:?}: {:?} {:?}", c.verdict, c.ci95);
        }
    }

    #[test]
    fn ten_pairs_over_the_states_are_judged_on_their_average() {
        let ratios: Vec<f64> = STATE_SLOW.iter().chain(&STATE_FAST).copied().collect();
        let c = judged(pairs(&ratios, 0.0025));
        let st = c.layout_states.expect("layout states");
        assert!(st.averaged && st.pairs == 10, "{st:?}");
        // The states' range is kept beside the averaged interval.
        assert!((st.lo - 0.9962).abs() < 1e-9 && (st.hi - 1.0178).abs() < 1e-9);
        let (theta, se): (Vec<f64>, Vec<f64>) = pairs(&ratios, 0.0025)
            .iter()
            .map(|p| p.log_estimate())
            .unzip();
        let re = random_effects::random_effects(&theta, &se).unwrap();
        assert_eq!(c.ci95, [re.ci95.0, re.ci95.1]);
        assert_eq!(c.smallest_detectable, Some(re.smallest_detectable));
        // A mean of +0.6 % with this spread: not resolved; the plan says how many pairs would.
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        let plan = st.plan.expect("a plan");
        let n = plan.pairs.expect("resolvable");
        assert!(n > 10, "{plan:?}");
        assert!((plan.seconds.unwrap() - n as f64 * 0.2).abs() < 1e-9);
        // The screen gives the reason and the options to paste.
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        f.comparisons.push(c);
        let table = crate::report::compare::table_fitted(&f, Default::default());
        assert!(table.contains("averaged over the layouts"), "{table}");
        assert!(
            table.contains(&format!("--processes {n}`")) && table.contains("--time "),
            "{table}"
        );
    }

    #[test]
    fn a_large_change_with_a_small_p_is_called_once_the_states_are_sampled() {
        // Thirty pairs spread over layout states from 0.967 to 1.050 (each pair ±0.5 %), mean
        // +1.2 %: the states' range alone straddles 1 and would leave it inconclusive whatever
        // the budget; averaged over the layouts it is `slower`, and the detectable change and
        // the verdict agree.
        let mut rng = Rng::new(49);
        let mut r: Vec<f64> = (0..28)
            .map(|_| 1.012 * (1.0 + (rng.next_f64() - 0.5) * 0.03))
            .collect();
        r.push(0.967);
        r.push(1.050);
        let c = judged(pairs(&r, 0.005));
        let st = c.layout_states.expect("layout states");
        assert!(st.averaged && st.lo < 1.0 && st.hi > 1.04, "{st:?}");
        assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
        assert!(c.ratio - 1.0 > c.smallest_detectable.unwrap(), "{c:?}");
    }

    #[test]
    fn ten_pairs_cover_the_mean_over_two_layout_states() {
        // Pairs drawn from two layout states 1.5 % apart (the rarer one 10 to 50 % likely), each
        // pair's own noise sd 0.15 %: among the runs whose ten pairs show the states, the 95 %
        // interval holds the mean over layouts about 95 % of the time — the reason the average
        // is judged from LAYOUT_AVERAGE_MIN_PAIRS pairs on.
        let mut rng = Rng::new(2009);
        let mut rng_state = Rng::new(2013);
        let mut normal = || {
            let (u, v) = (rng.next_f64().max(1e-12), rng.next_f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        for share in [0.1, 0.2, 0.3, 0.5] {
            let (gap, s) = (0.015, 0.0015);
            let (mut shown, mut covered) = (0, 0);
            let mut draws = Vec::new();
            for _ in 0..1500 * LAYOUT_AVERAGE_MIN_PAIRS {
                let noise = normal();
                draws.push((rng_state.next_f64() < share, noise));
            }
            for run in draws.chunks(LAYOUT_AVERAGE_MIN_PAIRS) {
                let theta: Vec<f64> = run
                    .iter()
                    .map(|&(rare, e)| if rare { gap } else { 0.0 } + s * e)
                    .collect();
                let ratios: Vec<f64> = theta.iter().map(|t| t.exp()).collect();
                let p = pairs(&ratios, 1.96 * s);
                let Some(st) = pair_states(&p) else { continue };
                assert!(st.averaged);
                shown += 1;
                let c = comparison_from_process_pairs("x", p, "budget").unwrap();
                let mean = (share * gap).exp();
                covered += usize::from(c.ci95[0] <= mean && mean <= c.ci95[1]);
            }
            let rate = covered as f64 / shown as f64;
            assert!(shown > 300, "{share}: {shown}");
            assert!((0.93..=0.99).contains(&rate), "{share}: {covered}/{shown}");
        }
    }

    #[test]
    fn the_plan_is_the_fewest_pairs_whose_detectable_change_is_the_threshold() {
        // Per-pair sd 1.27 % (30 pairs read a detectable change of 0.67 %): about 55 pairs
        // resolve a 0.5 % change.
        let se = 0.0127 / 30f64.sqrt();
        let plan = plan_pairs(30, se, 30.0 * 0.27, 0.005);
        let n = plan.pairs.unwrap();
        let reach = |n: usize| {
            let df = (n - 1) as f64;
            (student_t_quantile(0.975, df) + student_t_quantile(0.8, df)) * 0.0127
                / (n as f64).sqrt()
        };
        assert!(
            reach(n) <= 1.005f64.ln() && reach(n - 1) > 1.005f64.ln(),
            "{n}"
        );
        assert!((50..=60).contains(&n), "{n}");
        assert!((plan.seconds_per_pair - 0.27).abs() < 1e-12);
        // A spread no budget resolves is said as such.
        let plan = plan_pairs(10, 0.05, 2.0, 0.005);
        assert_eq!((plan.pairs, plan.seconds), (None, None));
        // A quiet pair set needs no more than the average's minimum.
        assert_eq!(
            plan_pairs(10, 1e-5, 2.0, 0.005).pairs,
            Some(LAYOUT_AVERAGE_MIN_PAIRS)
        );
    }
}
