//! The core's speed while a benchmark ran (measure the effective frequency instead of assuming
//! it: docs/experiments.md). Pure functions of the raw samples: the engine runs a reference probe — a chain
//! of dependent one-cycle additions (`kernels::speed_probe`) — before its batches, outside every
//! timed region, in the benchmark's own process and thread, and stores the chain's time with
//! each sample (`Samples::probe_ns`). Here each steady sample gets the core's effective cycle
//! time at that moment, the fastest state seen is found, and the samples are split by state:
//! the figure a reader can compare with other runs is the one in the fastest state.
//!
//! Why split rather than rescale: how much a benchmark slows down with the core depends on what
//! bounds it (a chain of additions slows 1.85× on this project's test machine, a latency-bound
//! square root 7 %, a memory-bound kernel barely), so samples from another state are not
//! corrected; they are kept apart and reported beside the headline.

pub mod shared;

use crate::samples::Samples;
use crate::stats;
use crate::timer::{TimerInfo, TimerKind};
pub use shared::Sharing;

/// A sample whose probe ran this much slower than the fastest state seen in the run (its own
/// probes, the start-up chain, the nominal rate) is in a slow state. 10 % is far above the
/// smoothed probe's noise and the few percent a loaded machine's turbo wanders within one run,
/// and far below the distinct slow states of shared machines (1.7–1.9× with a busy sibling
/// thread on the host): a state, not a wobble.
pub const SLOW_RATIO: f64 = 1.10;
/// A benchmark whose fast state ran this much slower than the machine's known speed (earlier
/// runs) is `core-slowed` as a whole. 10 %, as within a run: on shared machines the fast state
/// of consecutive idle invocations wanders several percent below the known speed (a high
/// quantile of earlier runs), so a rule of a few percent would flag nearly every run, and a
/// warning that always fires teaches users to ignore it. The distinct slow states it is for (a
/// busy sibling thread on the host) are far beyond 10 %.
pub const KNOWN_SLOW_RATIO: f64 = 1.10;
/// Probes are smoothed over this many consecutive probed batches (a running median): a real
/// state lasts from a fraction of a second to minutes, hundreds of batches, while one probe hit
/// by an interrupt in all three repetitions would otherwise mark its batch slow.
pub const SMOOTHING_PROBES: usize = 5;
/// Two states whose figures (the benchmark's medians in each) differ by less than this (2 %)
/// are one state for the benchmark: it did not feel the difference, and neither splitting
/// its samples nor `core-slowed` would say anything about its figure: a memory-bound pointer
/// chase barely feels a state in which the core lends less throughput, where an ALU-bound
/// body slows markedly.
pub const STATE_MATTERS: f64 = 0.02;
/// Fewest steady samples a state needs for a figure of its own (a median with an interval).
pub const MIN_STATE_SAMPLES: usize = 30;
/// The `core-slowed` diagnostic is given when at least this share of the steady samples ran in
/// a slow state (below it, those few samples are left out of the headline, and said in
/// `speed`, but they do not change how far the figure can be trusted).
pub const CORE_SLOWED_MIN_SHARE: f64 = 0.05;

/// Where the fastest state's speed comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// The benchmark's own probes (calibration and warm-up included).
    Probes,
    /// The add chain timed when the harness started (`harness.cycle_ns`).
    StartUp,
    /// The TSC's nominal rate: one addition per TSC tick (an x86 core running under its
    /// base frequency under load is being held back).
    Nominal,
    /// The machine's known speed: what earlier runs on this machine measured in their fast
    /// state (`harness.known_cycle_ns`).
    Known,
}

impl Reference {
    pub fn as_str(self) -> &'static str {
        match self {
            Reference::Probes => "probes",
            Reference::StartUp => "start-up",
            Reference::Nominal => "nominal",
            Reference::Known => "known",
        }
    }
}

/// Where the best ratio of the probe's two halves comes from (`core_share` is measured
/// against it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatioReference {
    /// The benchmark's own probes.
    Probes,
    /// The calibration at start-up (`harness.wide_ratio`).
    StartUp,
    /// The machine's known best, kept across runs (`harness.known_wide_ratio`).
    Known,
}

impl RatioReference {
    pub fn as_str(self) -> &'static str {
        match self {
            RatioReference::Probes => "probes",
            RatioReference::StartUp => "start-up",
            RatioReference::Known => "known",
        }
    }
}

/// The figure of the samples in one state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateFigure {
    pub samples: usize,
    /// Share of the steady samples in this state (each steady sample lasts about as long as
    /// another, so this is also the share of the time).
    pub share: f64,
    /// Median effective cycle time of the state's samples, in ns per addition.
    pub cycle_ns: f64,
    /// Median per-iteration time of the state's samples.
    pub median_ns: f64,
    /// Median of the state's samples in cycles (each sample's time over the cycle time
    /// around it).
    pub median_cycles: f64,
    /// Median time per addition of the probe's throughput half (eight independent chains)
    /// around the state's samples; NaN when the harness did not run it.
    pub wide_ns: f64,
}

/// The core's speed during one benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    /// Probed batches (each probe covers the batch that follows it).
    pub probed_batches: usize,
    /// The fastest state's cycle time, ns per addition (1 / GHz-equivalent).
    pub fastest_cycle_ns: f64,
    /// The fastest time per addition of the probe's throughput half during the benchmark,
    /// when the harness ran it.
    pub fastest_wide_ns: Option<f64>,
    pub reference: Reference,
    /// Steady samples within `SLOW_RATIO` of the fastest state.
    pub fast: StateFigure,
    /// Steady samples in a slower state, when there are any.
    pub slow: Option<StateFigure>,
    /// Time the probes took, as a share of the benchmark's wall time.
    pub probe_share: f64,
    /// The headline is computed on the fast samples only (both states have a figure).
    pub split: bool,
    /// The machine's known speed (ns per addition) when the fast state ran at least
    /// [`KNOWN_SLOW_RATIO`] slower than it.
    pub behind_known_cycle_ns: Option<f64>,
    /// The headline's samples in cycles of the core at that moment: each sample's time per
    /// iteration over the effective cycle time around it, with the median's 95 % interval.
    /// Code bound by the core reads the same number of cycles whatever its clock; code bound
    /// by memory does not. For a benchmark judged in cycles, the interval is the run's own
    /// (between processes and rounds included), and `cycles_next_ci95` the interval a next run
    /// should fall in.
    pub cycles_per_iter: Option<stats::MedianInterval>,
    /// The interval in cycles a next run on this machine should fall in (a benchmark judged in
    /// cycles; `None` otherwise).
    pub cycles_next_ci95: Option<[f64; 2]>,
    /// The share of the core's issue width the thread had (`shared`), when the harness ran
    /// the probe's throughput half.
    pub sharing: Option<Sharing>,
    /// The slow state is one of a shared core (most of its samples at the fast clock, the
    /// throughput half slow): `core-shared`, not `core-slowed`.
    pub slow_shared: bool,
}

impl Speed {
    /// How much slower the slow state ran than the fastest, by the probe's clock half or its
    /// throughput half, whichever slowed more (1 when there is no slow state).
    pub fn slowdown(&self) -> f64 {
        self.slow
            .map(|s| {
                (s.cycle_ns / self.fastest_cycle_ns).max(self.throughput_slowdown().unwrap_or(1.0))
            })
            .unwrap_or(1.0)
    }

    /// The slow state's time per addition of the throughput half over the fastest, when
    /// both are known: above the clock's slowdown, something shared the core's units.
    pub fn throughput_slowdown(&self) -> Option<f64> {
        let (s, f) = (self.slow?.wide_ns, self.fastest_wide_ns?);
        (s.is_finite() && f > 0.0).then_some(s / f)
    }

    /// Whether the benchmark ran in a slow state enough to say so (`core-slowed`).
    pub fn core_slowed(&self) -> bool {
        (!self.slow_shared && self.slow.is_some_and(|s| s.share >= CORE_SLOWED_MIN_SHARE))
            || self.behind_known_cycle_ns.is_some()
    }

    /// Whether the benchmark ran with the core shared enough to say so, and felt it
    /// (`core-shared`): its slow state is the shared core's.
    pub fn core_shared(&self) -> bool {
        self.slow_shared && self.slow.is_some_and(|s| s.share >= CORE_SLOWED_MIN_SHARE)
    }

    /// The median share of the core's best throughput during the benchmark (0–1), when known.
    pub fn core_share(&self) -> Option<f64> {
        self.sharing.map(|s| s.core_share).filter(|s| s.is_finite())
    }

    /// Whether every steady sample (but too few to give a figure) ran in a slow state.
    pub fn wholly_slow(&self) -> bool {
        self.slow.is_some() && self.fast.samples < MIN_STATE_SAMPLES
    }
}

/// The effective cycle time around each sample (ns per addition): each probed batch's probe,
/// smoothed by a running median over [`SMOOTHING_PROBES`] probed batches of the same process,
/// carried forward to the unprobed batches after it (and back to any before the first). Empty
/// when nothing was probed.
pub fn sample_cycles(samples: &Samples, timer: &TimerInfo) -> Vec<f64> {
    smoothed(samples, |i| samples.probe_cycle_ns(i, timer.overhead_ns))
}

/// The time per addition of the probe's throughput half around each sample (ns), smoothed
/// and carried forward as [`sample_cycles`] is. Empty when no batch had it.
pub fn sample_wide(samples: &Samples, timer: &TimerInfo) -> Vec<f64> {
    smoothed(samples, |i| samples.probe_wide_ns(i, timer.overhead_ns))
}

/// Per-batch values (`at(i)`, on each batch's first sample) smoothed by a running median
/// over [`SMOOTHING_PROBES`] batches of the same process and carried to every sample.
fn smoothed(samples: &Samples, at: impl Fn(usize) -> Option<f64>) -> Vec<f64> {
    let raw: Vec<Option<f64>> = (0..samples.len()).map(at).collect();
    // One entry per probed batch (the probe sits on its first sample): (sample, process,
    // value).
    let batches: Vec<(usize, u32, f64)> = raw
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.map(|c| (i, samples.samples[i].process, c)))
        .collect();
    if batches.is_empty() {
        return Vec::new();
    }
    let half = SMOOTHING_PROBES / 2;
    let smooth: Vec<f64> = (0..batches.len())
        .map(|k| {
            let p = batches[k].1;
            let lo = k.saturating_sub(half);
            let hi = (k + half + 1).min(batches.len());
            let w: Vec<f64> = batches[lo..hi]
                .iter()
                .filter(|b| b.1 == p)
                .map(|b| b.2)
                .collect();
            stats::median(&w)
        })
        .collect();
    carried(raw.len(), batches.iter().map(|b| b.0), &smooth)
}

/// Per-batch values carried to every sample: batch k's `values[k]` to its first sample (at
/// `firsts`, in order) and the samples after it up to the next batch's, the first batch's back
/// to any sample before it. `values` is not empty.
fn carried(len: usize, firsts: impl Iterator<Item = usize>, values: &[f64]) -> Vec<f64> {
    let mut firsts = firsts.peekable();
    let mut out = Vec::with_capacity(len);
    let (mut k, mut last) = (0, values[0]);
    for i in 0..len {
        if firsts.next_if_eq(&i).is_some() {
            last = values[k];
            k += 1;
        }
        out.push(last);
    }
    out
}

/// What the fastest state is measured against, besides the benchmark's own probes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct References {
    /// The add chain timed when the harness started (ns per addition).
    pub startup_cycle_ns: Option<f64>,
    /// The machine's known speed from earlier runs (ns per addition).
    pub known_cycle_ns: Option<f64>,
    /// The range of the core's clock over this machine's recent runs, as cycle times (ns per
    /// addition): (fast, slow): the fastest and the slowest of their fast-state speeds that
    /// were not themselves slowed.
    pub clock_cycle_ns: Option<(f64, f64)>,
    /// The best ratio of the probe's two halves measured at start-up, and the machine's known
    /// best ratio from earlier runs ([`shared::best_ratio`]).
    pub startup_wide_ratio: Option<f64>,
    pub known_wide_ratio: Option<f64>,
    /// The unit the benchmark is judged in: in cycles, states are told apart by the
    /// benchmark's cycles, and a run behind the known clock is no slowed figure.
    pub unit: super::Unit,
}

/// The fastest cycle time known for this benchmark, and where it comes from: its own probes,
/// the start-up add chain, or the TSC's nominal rate.
fn fastest_reference(cycles: &[f64], refs: &References, timer: &TimerInfo) -> (f64, Reference) {
    let mut fastest = (
        cycles.iter().copied().fold(f64::INFINITY, f64::min),
        Reference::Probes,
    );
    if let Some(c) = refs.startup_cycle_ns.filter(|c| c.is_finite() && *c > 0.0) {
        if c < fastest.0 {
            fastest = (c, Reference::StartUp);
        }
    }
    if let (TimerKind::Tsc, Some(hz)) = (timer.kind, timer.tsc_hz) {
        let c = 1e9 / hz;
        if hz > 0.0 && c < fastest.0 {
            fastest = (c, Reference::Nominal);
        }
    }
    fastest
}

/// The speed summary of a benchmark and the samples its headline rests on: `idx` (the steady
/// samples at the main count) split by state. `None` when nothing was probed (a harness
/// without the probe, an older result file). `cycles` is [`sample_cycles`] of `samples`
/// (computed once by the caller, which uses it again); `wall_ns` is the benchmark's wall time.
pub fn analyze(
    samples: &Samples,
    timer: &TimerInfo,
    cycles: &[f64],
    wide: &[f64],
    refs: References,
    wall_ns: u64,
    idx: &[usize],
) -> Option<(Speed, Vec<usize>)> {
    if cycles.is_empty() || idx.is_empty() {
        return None;
    }
    let probed = (0..samples.len())
        .filter(|&i| samples.probe_ns.get(i).copied().flatten().is_some())
        .count();
    let fastest = fastest_reference(cycles, &refs, timer);
    // The throughput half, when every sample has it: a sample is also in a slow state when
    // the core gave this thread markedly less throughput than its best during the benchmark.
    let wide = if wide.len() == cycles.len() {
        wide
    } else {
        &[]
    };
    let fastest_wide = (!wide.is_empty())
        .then(|| wide.iter().copied().fold(f64::INFINITY, f64::min))
        .filter(|w| w.is_finite() && *w > 0.0);
    let ratios = if wide.is_empty() {
        Vec::new()
    } else {
        shared::sample_ratios(samples, timer)
    };
    let best = shared::best_ratio(&ratios, &refs);
    // Whether a benchmark follows the throughput half is read on all its samples past
    // calibration at the main count: the warm-up too, which a neighbour may have spared.
    let main_iters = samples.samples[idx[0]].iters;
    let past: Vec<usize> = (0..samples.len())
        .filter(|&i| {
            let s = &samples.samples[i];
            s.phase != crate::samples::Phase::Calibration && s.iters == main_iters
        })
        .collect();
    let steady = Steady {
        samples,
        cycles,
        wide,
        ratios: &ratios,
        idx,
        past: &past,
    };
    let states = steady.states(refs.unit, fastest.0, best.map(|b| b.0));
    let sharing = best.map(|b| {
        let own = shared::best_ratio(&ratios, &References::default()).map_or(b.0, |o| o.0);
        Sharing {
            felt: states.felt,
            ..Sharing::of(idx, &ratios, b, own)
        }
    });
    let probe_ns_total: u64 = samples
        .probe_ns
        .iter()
        .chain(&samples.wide_ns)
        .flatten()
        .sum();
    let mut speed = Speed {
        probed_batches: probed,
        fastest_cycle_ns: fastest.0,
        fastest_wide_ns: fastest_wide,
        reference: fastest.1,
        fast: states.fast,
        slow: (states.slow.samples > 0).then_some(states.slow),
        probe_share: probe_ns_total as f64 * crate::plan::PROBE_REPEATS as f64
            / wall_ns.max(1) as f64,
        split: !states.slow_idx.is_empty() && states.fast_idx.len() >= MIN_STATE_SAMPLES,
        behind_known_cycle_ns: None,
        cycles_per_iter: None,
        cycles_next_ci95: None,
        sharing,
        slow_shared: states.slow_shared,
    };
    // The whole run against the machine's known speed: the state the benchmark's headline
    // rests on (the fast one, or everything when too few samples were fast).
    let head_cycle = if speed.split || speed.slow.is_none() {
        speed.fast.cycle_ns
    } else {
        steady.figure(idx).cycle_ns
    };
    // A whole run behind the machine's known clock: the figure in ns is of a slowed core; in
    // cycles it is not.
    let known = refs.known_cycle_ns.filter(|_| refs.unit == super::Unit::Ns);
    behind_known(&mut speed, known, head_cycle);
    let headline = if speed.split {
        states.fast_idx
    } else {
        idx.to_vec()
    };
    speed.cycles_per_iter = steady.in_cycles(&headline);
    Some((speed, headline))
}

/// Mark a run whose headline's cycle time `head_cycle` is [`KNOWN_SLOW_RATIO`] behind the
/// machine's `known` speed: `core-slowed` as a whole, and the known speed its fastest when
/// it is faster than any this run saw.
fn behind_known(speed: &mut Speed, known: Option<f64>, head_cycle: f64) {
    if let Some(k) = known.filter(|c| c.is_finite() && *c > 0.0) {
        if head_cycle >= k * KNOWN_SLOW_RATIO {
            speed.behind_known_cycle_ns = Some(k);
            if k < speed.fastest_cycle_ns {
                speed.fastest_cycle_ns = k;
                speed.reference = Reference::Known;
            }
        }
    }
}

/// A benchmark's steady samples at the main count (`idx`), with the probe's readings around
/// each: what its states are told apart in.
struct Steady<'a> {
    samples: &'a Samples,
    /// [`sample_cycles`] of `samples`.
    cycles: &'a [f64],
    /// [`sample_wide`] of `samples`; empty unless every sample has it.
    wide: &'a [f64],
    /// [`shared::sample_ratios`]; empty with `wide`.
    ratios: &'a [f64],
    idx: &'a [usize],
    /// Every sample past calibration at the main count (warm-up included).
    past: &'a [usize],
}

/// The steady samples split by state, and each state's figure (a slow state with no samples
/// when there is none).
struct States {
    fast: StateFigure,
    slow: StateFigure,
    fast_idx: Vec<usize>,
    slow_idx: Vec<usize>,
    /// Most of the slow state's samples ran at the fast clock with the core shared.
    slow_shared: bool,
    /// How much slower the benchmark read with the core shared ([`Sharing::felt`]).
    felt: Option<f64>,
}

impl Steady<'_> {
    /// The samples split into the fast state and the slow one (beyond [`SLOW_RATIO`] of the
    /// fastest cycle time, or with the core shared: the ratio of the probe's halves beyond
    /// [`shared::SHARED_RATIO`] of the best, `best_ratio`), then merged into one when the
    /// benchmark, in its `unit`, did not feel the difference.
    fn states(&self, unit: super::Unit, fastest: f64, best_ratio: Option<f64>) -> States {
        let limit = fastest * SLOW_RATIO;
        let shared_at = |i: usize| best_ratio.is_some_and(|b| shared::is_shared(b, self.ratios[i]));
        let (fast_idx, slow_idx): (Vec<usize>, Vec<usize>) = self
            .idx
            .iter()
            .copied()
            .partition(|&i| self.cycles[i] <= limit && !shared_at(i));
        let (fast, mut slow) = (self.figure(&fast_idx), self.figure(&slow_idx));
        // The state's figure in the benchmark's unit: in cycles, a slower clock is no other
        // state of code bound by the core; a core whose units a neighbour shares is.
        let in_unit = |f: &StateFigure| match unit {
            super::Unit::Cycles => f.median_cycles,
            super::Unit::Ns | super::Unit::Instructions => f.median_ns,
        };
        let sample_in_unit = |i: usize| {
            let per = self.samples.samples[i].per_iter_ns();
            match unit {
                super::Unit::Cycles => per / self.cycles[i],
                super::Unit::Ns | super::Unit::Instructions => per,
            }
        };
        // The slow state is a shared core's when most of its samples ran at the fast clock.
        let at_fast_clock = slow_idx
            .iter()
            .filter(|&&i| self.cycles[i] <= limit)
            .count();
        let slow_shared = !slow_idx.is_empty() && 2 * at_fast_clock > slow_idx.len();
        let both = fast.samples >= MIN_STATE_SAMPLES && slow.samples >= MIN_STATE_SAMPLES;
        // Whether the benchmark felt the slow state: both states' figures when both have one;
        // run (nearly) wholly shared, whether its samples follow the throughput half.
        let felt = if both {
            let r = in_unit(&slow) / in_unit(&fast);
            ((r - 1.0).abs() >= STATE_MATTERS).then_some(r)
        } else if slow_shared && fast.samples < MIN_STATE_SAMPLES {
            shared::follows(self.past, self.ratios, sample_in_unit)
        } else {
            None
        };
        // A slow state this benchmark did not feel is not a state of its figure: a
        // latency-bound benchmark shrugs off a neighbour's share of the units; memory-bound
        // code, a slower clock; and in cycles, a run (nearly) wholly at a slower clock has no
        // fast figure to compare with, and its clock alone does not touch its cycles.
        let wholly = fast.samples < MIN_STATE_SAMPLES && slow.samples > 0;
        let one_state = (both && felt.is_none())
            || (wholly && slow_shared && felt.is_none())
            || (wholly && !slow_shared && unit == super::Unit::Cycles);
        if one_state {
            slow.samples = 0;
            States {
                fast: self.figure(self.idx),
                slow,
                fast_idx: self.idx.to_vec(),
                slow_idx: Vec::new(),
                slow_shared: false,
                felt: None,
            }
        } else {
            States {
                fast,
                slow,
                fast_idx,
                slow_idx,
                slow_shared,
                felt: felt.filter(|_| slow_shared),
            }
        }
    }

    /// The figure of the samples `set` (a share of all the steady samples).
    fn figure(&self, set: &[usize]) -> StateFigure {
        let per: Vec<f64> = set
            .iter()
            .map(|&i| self.samples.samples[i].per_iter_ns())
            .collect();
        let cyc: Vec<f64> = set.iter().map(|&i| self.cycles[i]).collect();
        let wid: Vec<f64> = if self.wide.is_empty() {
            Vec::new()
        } else {
            set.iter().map(|&i| self.wide[i]).collect()
        };
        let nan_median = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                stats::median(v)
            }
        };
        let in_cycles: Vec<f64> = per.iter().zip(&cyc).map(|(p, c)| p / c).collect();
        StateFigure {
            samples: set.len(),
            share: set.len() as f64 / self.idx.len() as f64,
            cycle_ns: nan_median(&cyc),
            median_ns: nan_median(&per),
            median_cycles: nan_median(&in_cycles),
            wide_ns: nan_median(&wid),
        }
    }

    /// The median of the samples `headline` in cycles of the core around each, with its
    /// interval; `None` when no sample has a finite figure in cycles.
    fn in_cycles(&self, headline: &[usize]) -> Option<stats::MedianInterval> {
        let in_cycles: Vec<f64> = headline
            .iter()
            .map(|&i| self.samples.samples[i].per_iter_ns() / self.cycles[i])
            .filter(|c| c.is_finite())
            .collect();
        (!in_cycles.is_empty()).then(|| stats::median_interval(&in_cycles))
    }
}

/// The interval a figure needs to cover another run on this machine, whose core may run at
/// any clock in the range its recent runs saw (`clock`: fast and slow cycle times): the
/// headline's interval in cycles, at the fast and at the slow clock. Code bound by the core
/// moves with the clock (a chain of additions read 26.16–26.56 ns over ten runs here as the
/// clock went 3.79–3.83 GHz, and 100.4–100.5 cycles); code bound by memory does not, so this is an outer
/// bound, joined to the run's own interval, not a correction of its figure. `None` without
/// cycles or without a range.
pub fn clock_interval(speed: &Speed, clock: Option<(f64, f64)>) -> Option<(f64, f64)> {
    let cyc = speed.cycles_per_iter?;
    let (fast, slow) = clock?;
    (fast.is_finite() && slow.is_finite() && fast > 0.0 && slow >= fast)
        .then_some((cyc.lo * fast, cyc.hi * slow))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_shared;
