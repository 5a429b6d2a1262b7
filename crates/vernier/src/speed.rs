//! The core's speed while a benchmark ran (seed 003: measure the effective frequency instead of
//! assuming it). Pure functions of the raw samples: the engine runs a reference probe — a chain
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

use crate::samples::Samples;
use crate::stats;
use crate::timer::{TimerInfo, TimerKind};

/// A sample whose probe ran this much slower than the fastest state is in a slow state. 10 %
/// is far above the probe's own noise (the fastest of three chains of ~1.5 µs, timed to a few
/// ns) and far below the slow states seen on shared machines (1.7–1.9× for ALU-bound code).
pub const SLOW_RATIO: f64 = 1.10;
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
}

impl Reference {
    pub fn as_str(self) -> &'static str {
        match self {
            Reference::Probes => "probes",
            Reference::StartUp => "start-up",
            Reference::Nominal => "nominal",
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
}

/// The core's speed during one benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    /// Samples with a probe (each probe covers the batch that follows it).
    pub probed_samples: usize,
    /// The fastest state's cycle time, ns per addition (1 / GHz-equivalent).
    pub fastest_cycle_ns: f64,
    pub reference: Reference,
    /// Steady samples within `SLOW_RATIO` of the fastest state.
    pub fast: StateFigure,
    /// Steady samples in a slower state, when there are any.
    pub slow: Option<StateFigure>,
    /// Time the probes took, as a share of the benchmark's wall time.
    pub probe_share: f64,
    /// The headline is computed on the fast samples only (both states have a figure).
    pub split: bool,
}

impl Speed {
    /// The slow state's cycle time over the fastest state's (1 when there is no slow state).
    pub fn slowdown(&self) -> f64 {
        self.slow
            .map(|s| s.cycle_ns / self.fastest_cycle_ns)
            .unwrap_or(1.0)
    }

    /// Whether the benchmark ran in a slow state enough to say so (`core-slowed`).
    pub fn core_slowed(&self) -> bool {
        self.slow.is_some_and(|s| s.share >= CORE_SLOWED_MIN_SHARE)
    }

    /// Whether every steady sample (but too few to give a figure) ran in a slow state.
    pub fn wholly_slow(&self) -> bool {
        self.slow.is_some() && self.fast.samples < MIN_STATE_SAMPLES
    }
}

/// The effective cycle time around each sample (ns per addition), carried forward from the
/// last probe to the unprobed batches after it (and back to any before the first). Empty when
/// nothing was probed.
pub fn sample_cycles(samples: &Samples, timer: &TimerInfo) -> Vec<f64> {
    let raw: Vec<Option<f64>> = (0..samples.len())
        .map(|i| samples.probe_cycle_ns(i, timer.overhead_ns))
        .collect();
    let Some(first) = raw.iter().flatten().next().copied() else {
        return Vec::new();
    };
    let mut last = first;
    raw.iter()
        .map(|c| {
            if let Some(c) = c {
                last = *c;
            }
            last
        })
        .collect()
}

/// The speed summary of a benchmark and the samples its headline rests on: `idx` (the steady
/// samples at the main count) split by state. `None` when nothing was probed (a harness
/// without the probe, an older result file). `startup_cycle_ns` is the add chain timed when the
/// harness started; `wall_ns` the benchmark's wall time.
pub fn analyze(
    samples: &Samples,
    timer: &TimerInfo,
    startup_cycle_ns: Option<f64>,
    wall_ns: u64,
    idx: &[usize],
) -> Option<(Speed, Vec<usize>)> {
    let cycles = sample_cycles(samples, timer);
    if cycles.is_empty() || idx.is_empty() {
        return None;
    }
    let probed: Vec<f64> = (0..samples.len())
        .filter_map(|i| samples.probe_cycle_ns(i, timer.overhead_ns))
        .collect();
    let mut fastest = (
        probed.iter().copied().fold(f64::INFINITY, f64::min),
        Reference::Probes,
    );
    if let Some(c) = startup_cycle_ns.filter(|c| c.is_finite() && *c > 0.0) {
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
    let limit = fastest.0 * SLOW_RATIO;
    let (fast_idx, slow_idx): (Vec<usize>, Vec<usize>) =
        idx.iter().copied().partition(|&i| cycles[i] <= limit);
    let figure = |set: &[usize]| -> StateFigure {
        let per: Vec<f64> = set
            .iter()
            .map(|&i| samples.samples[i].per_iter_ns())
            .collect();
        let cyc: Vec<f64> = set.iter().map(|&i| cycles[i]).collect();
        let nan_median = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                stats::median(v)
            }
        };
        StateFigure {
            samples: set.len(),
            share: set.len() as f64 / idx.len() as f64,
            cycle_ns: nan_median(&cyc),
            median_ns: nan_median(&per),
        }
    };
    // Batches are probed once each: count each probe once for its cost.
    let mut probe_ns_total = 0u64;
    let mut prev: Option<(u32, u32, Option<u64>)> = None;
    for (i, s) in samples.samples.iter().enumerate() {
        let p = samples.probe_ns.get(i).copied().flatten();
        let key = (s.process, s.round, p);
        if p.is_some() && prev != Some(key) {
            probe_ns_total += p.unwrap_or(0);
        }
        prev = Some(key);
    }
    let speed = Speed {
        probed_samples: probed.len(),
        fastest_cycle_ns: fastest.0,
        reference: fastest.1,
        fast: figure(&fast_idx),
        slow: (!slow_idx.is_empty()).then(|| figure(&slow_idx)),
        probe_share: probe_ns_total as f64 * crate::plan::PROBE_REPEATS as f64
            / wall_ns.max(1) as f64,
        split: !slow_idx.is_empty() && fast_idx.len() >= MIN_STATE_SAMPLES,
    };
    let headline = if speed.split {
        fast_idx
    } else {
        idx.to_vec()
    };
    Some((speed, headline))
}

/// The spread of the processes' median cycle times (max/min − 1), over the processes with
/// at least `min_samples` of the given samples: how much the core's speed alone differed
/// between processes.
pub fn process_speed_spread(
    samples: &Samples,
    cycles: &[f64],
    idx: &[usize],
    min_samples: usize,
) -> Option<f64> {
    if cycles.is_empty() {
        return None;
    }
    let mut by: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    for &i in idx {
        by.entry(samples.samples[i].process)
            .or_default()
            .push(cycles[i]);
    }
    let meds: Vec<f64> = by
        .values()
        .filter(|v| v.len() >= min_samples)
        .map(|v| stats::median(v))
        .collect();
    if meds.len() < 2 {
        return None;
    }
    let lo = meds.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = meds.iter().copied().fold(0.0, f64::max);
    Some(hi / lo - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::{Phase, Sample};

    fn timer() -> TimerInfo {
        TimerInfo {
            kind: TimerKind::Tsc,
            resolution_ns: 0.5,
            overhead_ns: 10.0,
            tsc_hz: Some(2.5e9),
        }
    }

    /// `n` samples; sample i's probe is `probe(i)` ns for 4096 additions and its time is
    /// `per_iter(i)` ns per iteration at 1000 iterations.
    fn samples(n: usize, probe: impl Fn(usize) -> u64, per_iter: impl Fn(usize) -> f64) -> Samples {
        let mut s = Samples::default();
        for i in 0..n {
            s.push_batch(
                &[Sample {
                    iters: 1000,
                    ns: (per_iter(i) * 1000.0) as u64,
                    t_ns: i as u64 * 30_000,
                    process: 0,
                    round: 0,
                    phase: Phase::Measure,
                }],
                &[],
            );
            s.set_probe(1, 4096, Some(probe(i)));
        }
        s
    }

    #[test]
    fn one_state_keeps_every_sample() {
        // 4096 adds in 1648 ns: 0.4 ns per add (2.5 GHz, the nominal rate).
        let s = samples(200, |_| 1648, |_| 10.0);
        let idx: Vec<usize> = (0..200).collect();
        let (sp, head) = analyze(&s, &timer(), None, 6_000_000, &idx).unwrap();
        assert_eq!(head, idx);
        assert!(sp.slow.is_none() && !sp.split && !sp.core_slowed());
        assert!((sp.fastest_cycle_ns - 0.4).abs() < 1e-3, "{sp:?}");
    }

    #[test]
    fn two_states_split_with_the_fast_one_as_headline() {
        // 30 % of the samples with the core 1.85× slower; the benchmark 1.85× slower then too.
        let slow = |i: usize| (i / 10) % 10 < 3;
        let s = samples(
            400,
            |i| if slow(i) { 3041 } else { 1648 },
            |i| if slow(i) { 18.5 } else { 10.0 },
        );
        let idx: Vec<usize> = (0..400).collect();
        let (sp, head) = analyze(&s, &timer(), None, 12_000_000, &idx).unwrap();
        assert!(sp.split && sp.core_slowed() && !sp.wholly_slow());
        assert_eq!(head.len(), 280);
        assert!(head.iter().all(|&i| !slow(i)));
        let sl = sp.slow.unwrap();
        assert!((sl.share - 0.3).abs() < 1e-12);
        assert!((sp.fast.share - 0.7).abs() < 1e-12);
        assert_eq!((sp.fast.median_ns, sl.median_ns), (10.0, 18.5));
        assert!((sp.slowdown() - 1.85).abs() < 0.01, "{}", sp.slowdown());
    }

    #[test]
    fn a_run_wholly_slow_is_measured_against_the_start_up_speed() {
        // Monotonic timer: no nominal rate; the start-up chain saw 0.4 ns per add.
        let mut t = timer();
        t.kind = TimerKind::Monotonic;
        t.tsc_hz = None;
        let s = samples(200, |_| 3041, |_| 18.5);
        let idx: Vec<usize> = (0..200).collect();
        let (sp, head) = analyze(&s, &t, Some(0.4), 6_000_000, &idx).unwrap();
        assert_eq!(sp.reference, Reference::StartUp);
        assert!(sp.wholly_slow() && sp.core_slowed() && !sp.split);
        assert_eq!(head, idx, "no fast sample: the headline is what was measured");
        // Without any reference faster than the probes, nothing is slow.
        let (sp, _) = analyze(&s, &t, None, 6_000_000, &idx).unwrap();
        assert!(sp.slow.is_none());
    }

    #[test]
    fn the_nominal_rate_is_a_reference_with_the_tsc() {
        let s = samples(200, |_| 3041, |_| 18.5);
        let idx: Vec<usize> = (0..200).collect();
        let (sp, _) = analyze(&s, &timer(), None, 6_000_000, &idx).unwrap();
        assert_eq!(sp.reference, Reference::Nominal);
        assert!(sp.wholly_slow());
    }

    #[test]
    fn unprobed_batches_take_the_last_probe() {
        let mut s = samples(4, |i| 1000 + i as u64, |_| 1.0);
        s.probe_ns[2] = None;
        let c = sample_cycles(&s, &timer());
        assert_eq!(c[2], c[1]);
        assert!(sample_cycles(&Samples::default(), &timer()).is_empty());
    }

    #[test]
    fn nothing_probed_gives_no_speed() {
        let mut s = samples(50, |_| 1648, |_| 10.0);
        s.probe_ns.clear();
        assert!(analyze(&s, &timer(), Some(0.4), 1, &[0, 1, 2]).is_none());
    }
}
