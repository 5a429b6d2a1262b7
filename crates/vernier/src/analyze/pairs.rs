//! A comparison's figures from its pairs: the record of a paired measurement in one process
//! ([`comparison_from_pair`]), each process pair's own figures ([`ProcessPair`]) and their
//! combination across process pairs with a random-effects interval
//! ([`comparison_from_process_pairs`]), the evidence that the pairs fall into layout states
//! ([`pair_states`]), and the stopping rule over process pairs ([`pairs_settled`]). The
//! statistics themselves are in [`crate::stats::compare`]; the engine
//! that measures the pairs is [`crate::measure::compare`].

use super::layout::layout_spread;
use super::ProcessFigure;
use crate::measure::compare::{
    settled, PairMeasurement, PairStop, Rewarm, Settle, MIN_PROCESS_PAIRS,
};
use crate::stats::compare::Verdict;
use crate::stats::random_effects::{self, random_effects_interval};
use crate::stats::steady::WarmupClass;
use serde::{Deserialize, Serialize};

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
    /// benchmark's speed depends on where its processes' code and data sit). The stopping rule
    /// then used every pair allowed, and `ci95` spans the states seen.
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
}

/// The process pairs of a comparison disagree beyond their own intervals: each pair is an OLD
/// and a NEW process with one memory layout, measured alternately on one core (so the clock's
/// moves cancel in its ratio), and the ratio a pair reads depends on the layout its processes
/// landed in. The rule is the one of the `layout-sensitive` diagnostic, on the pairs' ratios:
/// the lowest and highest differ by more than [`LAYOUT_MIN_SPREAD`](super::LAYOUT_MIN_SPREAD)
/// and by more than twice the largest relative half-width of a pair's own interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairStates {
    /// Lowest and highest pair ratio NEW/OLD.
    pub lo: f64,
    pub hi: f64,
    /// Largest relative half-width of a pair's own 95 % interval.
    pub within: f64,
    /// Process pairs looked at.
    pub pairs: usize,
}

/// The layout states the pairs show, or `None` when their ratios agree within their own
/// intervals (or there are fewer than two pairs).
pub fn pair_states(pairs: &[ProcessPair]) -> Option<PairStates> {
    let figures: Vec<ProcessFigure> = pairs
        .iter()
        .map(|p| ProcessFigure {
            index: p.index as u32,
            median_ns: p.ratio,
            ci95_ns: (p.ci95[0], p.ci95[1]),
            samples: p.rounds,
        })
        .collect();
    let l = layout_spread(&figures).filter(|l| l.significant)?;
    Some(PairStates {
        lo: l.lo,
        hi: l.hi,
        within: l.within,
        pairs: pairs.len(),
    })
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
/// whenever the pairs show layout states ([`pair_states`]): a few pairs then tell only which
/// states they happened to land in (four pairs of an add loop read 0.714–0.726 while eleven
/// other runs of the same comparison had a median of 0.80), so the benchmark goes on to every
/// pair allowed.
pub fn pairs_settled(pairs: &[ProcessPair], threshold: f64) -> Option<Settle> {
    if pairs.len() < MIN_PROCESS_PAIRS || pair_states(pairs).is_some() {
        return None;
    }
    let (theta, se): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| p.log_estimate()).unzip();
    let (_, lo, hi) = random_effects_interval(&theta, &se, PAIRS_STOP_CONF)?;
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
    // With layout states the next run reads whichever state its processes land in: the
    // interval spans every state seen as well as the mean's own interval.
    let layout_states = pair_states(&pairs);
    let ci95 = match layout_states {
        Some(s) => [re.ci95.0.min(s.lo), re.ci95.1.max(s.hi)],
        None => [re.ci95.0, re.ci95.1],
    };
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
        smallest_detectable: Some(re.smallest_detectable),
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
