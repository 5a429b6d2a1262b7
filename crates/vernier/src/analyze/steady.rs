//! The steady state, part by part: the steady samples at the main iteration count, found again
//! on another series of the same samples (in cycles of the core) in each process's round, and
//! how the series behaved before it (`ns_warmup`, a drift too small to matter set aside).

use crate::measure::Measurement;
use crate::samples::Phase;
use crate::stats;
use crate::stats::steady::WarmupClass;

/// Indices of the steady samples at the main iteration count.
pub(super) fn steady_main(m: &Measurement) -> Vec<usize> {
    let s = &m.samples.samples;
    let main: Vec<usize> = (0..s.len())
        .filter(|&i| s[i].phase == Phase::Measure && s[i].iters == m.iters_per_sample)
        .collect();
    if !main.is_empty() {
        return main;
    }
    // Nothing reached the steady state (a failure early on, or a very slow body): use whatever
    // was measured at the final count, so a figure exists.
    (0..s.len())
        .filter(|&i| s[i].iters == m.iters_per_sample)
        .collect()
}

/// How the engine's series in ns behaved before its steady state, a drift under 1 % of a
/// series that never settled aside ([`drifted`]): the first part's warm-up and steady samples
/// at the main count. A first part that never settled while the core ran it mostly in a slow
/// state gives way to the next part found steady in the headline's state
/// ([`warmup_in_state`]; `before` and `head`: the steady samples before and after the slow
/// state was set apart). The samples of slowed stretches (`left_out`, sorted) are no drift.
pub(super) fn ns_warmup(
    m: &Measurement,
    before: &[usize],
    head: &[usize],
    left_out: &[usize],
) -> WarmupClass {
    let class = m.steady.map_or(WarmupClass::Flat, |s| s.class);
    if class != WarmupClass::NoSteadyState {
        return class;
    }
    let s = &m.samples.samples;
    let idx = past_calibration(m);
    let Some(&f) = idx.first() else {
        return class;
    };
    let part: Vec<usize> = idx
        .into_iter()
        .filter(|&i| s[i].process == s[f].process && s[i].round == s[f].round)
        .filter(|i| left_out.binary_search(i).is_err())
        .collect();
    let cut = part
        .iter()
        .position(|&i| s[i].phase == Phase::Measure)
        .unwrap_or(part.len());
    let series: Vec<f64> = part.iter().map(|&i| s[i].per_iter_ns()).collect();
    if !drifted(&series, cut) {
        return WarmupClass::Flat;
    }
    let (_, mut parts) = steady_in(m, &|i| s[i].per_iter_ns(), left_out);
    match parts.first_mut() {
        Some(first) => first.class = class,
        None => return class,
    }
    warmup_in_state(&parts, before, head)
}

/// The samples past calibration at the main count (warm-up and steady), in order.
pub(super) fn past_calibration(m: &Measurement) -> Vec<usize> {
    let s = &m.samples.samples;
    (0..s.len())
        .filter(|&i| s[i].phase != Phase::Calibration && s[i].iters == m.iters_per_sample)
        .collect()
}

/// One part of a measurement (a process's round) as the steady state was found in it: its
/// samples past calibration at the main count, and how its series behaved before its steady
/// state.
pub(super) struct Part {
    samples: Vec<usize>,
    class: WarmupClass,
}

/// The steady samples found again on another series of the same samples (`value(i)`: each
/// sample's per-iteration figure in another unit): in each part (process and round) the
/// steady state of its samples past calibration at the main count, as the engine finds it in
/// ns; and each part's class. A part too short to tell keeps every sample. The samples of
/// slowed stretches (`left_out`, sorted) are neither searched nor kept.
pub(super) fn steady_in(
    m: &Measurement,
    value: &dyn Fn(usize) -> f64,
    left_out: &[usize],
) -> (Vec<usize>, Vec<Part>) {
    let s = &m.samples.samples;
    let mut parts: Vec<((u32, u32), Vec<usize>)> = Vec::new();
    for i in past_calibration(m)
        .into_iter()
        .filter(|i| left_out.binary_search(i).is_err())
    {
        let key = (s[i].process, s[i].round);
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => parts.push((key, vec![i])),
        }
    }
    let mut steady = Vec::new();
    let mut classes = Vec::new();
    for (_, idx) in parts {
        let series: Vec<f64> = idx.iter().map(|&i| value(i)).collect();
        // A part that never settled keeps every sample (its figure is of the whole part, and
        // the flag says so): MSER's cut then falls in the last few batches, often on a change
        // of the clock the probe had not yet followed, and a headline of those alone would
        // stand apart from the other parts.
        let (first, class) = match stats::steady::detect(&series) {
            Some(st) if st.class == WarmupClass::NoSteadyState => {
                let drift = drifted(&series, st.first);
                (0, if drift { st.class } else { WarmupClass::Flat })
            }
            Some(st) => (st.first.min(idx.len()), st.class),
            None => (0, WarmupClass::Flat),
        };
        steady.extend_from_slice(&idx[first..]);
        classes.push(Part {
            samples: idx,
            class,
        });
    }
    steady.sort_unstable();
    (steady, classes)
}

/// How the benchmark behaved before its steady state: the class of its first part that ran
/// mostly in the headline's state of the core: of its samples among `before` (the steady
/// ones, before the core's slow state was set apart), at least half in `head`. A part the core
/// ran through mostly in a slow state (a busy neighbour on and off) drifts with the machine,
/// and its drift is the machine's, said once under the table; the next part tells how the
/// benchmark settles.
pub(super) fn warmup_in_state(parts: &[Part], before: &[usize], head: &[usize]) -> WarmupClass {
    let has = |set: &[usize], i: &usize| set.binary_search(i).is_ok();
    parts
        .iter()
        .find(|p| {
            let candidates: Vec<usize> = p
                .samples
                .iter()
                .copied()
                .filter(|i| has(before, i))
                .collect();
            2 * candidates.iter().filter(|i| has(head, i)).count() >= candidates.len()
        })
        .or(parts.first())
        .map_or(WarmupClass::Flat, |p| p.class)
}

/// Whether the parts (process and round) of the headline samples `head` agree to
/// [`PARTS_AGREE`] in the figure `value(i)`: their medians' highest over lowest. A benchmark
/// whose parts read the same level did not drift over the run, whatever wandered within one of
/// them. `false` with fewer than two parts.
pub(super) fn parts_agree(m: &Measurement, head: &[usize], value: &dyn Fn(usize) -> f64) -> bool {
    let s = &m.samples.samples;
    let mut parts: Vec<((u32, u32), Vec<f64>)> = Vec::new();
    for &i in head {
        let key = (s[i].process, s[i].round);
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(value(i)),
            None => parts.push((key, vec![value(i)])),
        }
    }
    if parts.len() < 2 {
        return false;
    }
    let medians: Vec<f64> = parts.iter().map(|(_, v)| stats::median(v)).collect();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    lo > 0.0 && hi / lo - 1.0 <= PARTS_AGREE
}

/// Parts whose medians agree to this (relative) read one level: no drift (0.1 %, a tenth of
/// the drift [`drifted`] weighs within a part).
pub const PARTS_AGREE: f64 = 0.001;

/// Whether a series that never settled drifted by what a decision rests on: the median of
/// its samples before `cut` and after it differ by at least `steady::WARMUP_MIN_SHIFT` (1 %).
/// A series of thousands of samples never settles to MSER's satisfaction when it wanders by a
/// few tenths of a percent, which no figure reported here depends on.
fn drifted(series: &[f64], cut: usize) -> bool {
    let cut = cut.min(series.len());
    if cut == 0 || cut == series.len() {
        return true;
    }
    let (a, b) = (stats::median(&series[..cut]), stats::median(&series[cut..]));
    (a / b - 1.0).abs() >= stats::steady::WARMUP_MIN_SHIFT
}
