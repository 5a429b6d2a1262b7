//! Slowed stretches: a run of consecutive samples, inside one part (a process's round), that
//! read markedly slower than the benchmark's level while the rest of the run held it. The core
//! was taken away for a while (another tenant, the host), in the headline unit too: in cycles
//! such a stretch is not the clock. Left in, it reads as a drift (the steady state searched
//! for at the end of a part finds the stretch alone steady: `no-steady-state`) or widens the
//! interval; it is no more the benchmark's than the slow state of the core the speed probe
//! finds (`speed`), and it is left out of the headline and named (`slowed_stretches`), as that
//! state is.
//!
//! In a demo on an Intel guest, `sin` read 24.49, 24.50, 24.51 and 37.44 cycles by quarter in
//! its first round and 24.46–24.52 in every quarter of its second. A benchmark's own slow
//! samples (a page fault, an allocation's slow path) come scattered, or in every part: a
//! stretch is only left out when some part ran without one.

use super::speed::SLOW_RATIO;
use super::steady::past_calibration;
use super::Unit;
use crate::measure::Measurement;
use crate::stats;
use crate::stats::steady::WARMUP_MIN_SHIFT;
use serde::{Deserialize, Serialize};

/// Samples per block: a stretch is found on blocks' medians, so that scattered slow samples
/// (interruptions, which `outliers` counts) never make one; a block's median is slow only when
/// most of its samples are.
pub const STRETCH_BLOCK: usize = 20;
/// Fewest consecutive slow blocks that make a stretch (60 samples): fewer are bursts of
/// interruptions, which the median's robustness and `outliers` already weigh.
pub const STRETCH_MIN_BLOCKS: usize = 3;

/// A stretch of one part of a benchmark that ran slower than the rest of the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stretch {
    /// The worker process and round it fell in.
    pub process: u32,
    pub round: u32,
    /// How many samples it holds, and when it started and ended (seconds since the
    /// benchmark started: `samples.t_s`).
    pub samples: usize,
    pub start_s: f64,
    pub end_s: f64,
    /// The median of its samples and the benchmark's level (the median of all its samples past
    /// calibration at the main count), per iteration, in `unit`.
    pub median: f64,
    pub level: f64,
    pub unit: Unit,
}

/// The slowed stretches of `m`'s parts, in the unit `unit` whose per-iteration figure of
/// sample `i` is `value(i)`, and the indices of their samples (sorted). A stretch is at least
/// [`STRETCH_MIN_BLOCKS`] consecutive blocks whose medians read [`SLOW_RATIO`] or more above
/// the level, widened over the blocks beside it that read more than [`WARMUP_MIN_SHIFT`] above
/// it (its edges), and not at the start of its part (a part that starts slow is warming up:
/// the steady state's business); the rest of its part must be most of it and read the level to
/// [`WARMUP_MIN_SHIFT`]. None are left out unless some part ran without one and they hold less
/// than half of the samples: the level must be what the run read.
pub(super) fn find(
    m: &Measurement,
    unit: Unit,
    value: &dyn Fn(usize) -> f64,
) -> (Vec<usize>, Vec<Stretch>) {
    let s = &m.samples.samples;
    let all = past_calibration(m);
    let values: Vec<f64> = all.iter().map(|&i| value(i)).collect();
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return (Vec::new(), Vec::new());
    }
    let level = stats::median(&values);
    let mut parts: Vec<((u32, u32), Vec<usize>)> = Vec::new();
    for &i in &all {
        let key = (s[i].process, s[i].round);
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => parts.push((key, vec![i])),
        }
    }
    let mut found = Vec::new();
    let mut clean_parts = 0;
    for ((process, round), idx) in &parts {
        let series: Vec<f64> = idx.iter().map(|&i| value(i)).collect();
        let spans = slow_spans(&series, level);
        if spans.is_empty() {
            clean_parts += 1;
            continue;
        }
        // The rest of the part holds the level, and is most of it: a part that reads another
        // level throughout (a process's memory layout) is no stretch.
        let rest: Vec<f64> = (0..series.len())
            .filter(|&k| !spans.iter().any(|&(a, b)| (a..b).contains(&k)))
            .map(|k| series[k])
            .collect();
        if 2 * rest.len() <= series.len()
            || (stats::median(&rest) / level - 1.0).abs() >= WARMUP_MIN_SHIFT
        {
            continue;
        }
        for (a, b) in spans {
            let samples = &idx[a..b];
            let med = stats::median(&samples.iter().map(|&i| value(i)).collect::<Vec<_>>());
            found.push((
                samples.to_vec(),
                Stretch {
                    process: *process,
                    round: *round,
                    samples: samples.len(),
                    start_s: s[samples[0]].t_ns as f64 * 1e-9,
                    end_s: s[samples[samples.len() - 1]].t_ns as f64 * 1e-9,
                    median: med,
                    level,
                    unit,
                },
            ));
        }
    }
    let held: usize = found.iter().map(|(v, _)| v.len()).sum();
    if found.is_empty() || clean_parts == 0 || 2 * held >= all.len() {
        return (Vec::new(), Vec::new());
    }
    let mut out: Vec<usize> = found.iter().flat_map(|(v, _)| v.iter().copied()).collect();
    out.sort_unstable();
    (out, found.into_iter().map(|(_, st)| st).collect())
}

/// The slowed spans of one part's `series` (positions `[a, b)`), against `level`.
fn slow_spans(series: &[f64], level: f64) -> Vec<(usize, usize)> {
    let blocks = series.len() / STRETCH_BLOCK;
    if blocks <= STRETCH_MIN_BLOCKS {
        return Vec::new();
    }
    // The last block takes the samples left over.
    let bounds = |k: usize| {
        let end = if k + 1 == blocks {
            series.len()
        } else {
            (k + 1) * STRETCH_BLOCK
        };
        (k * STRETCH_BLOCK, end)
    };
    let medians: Vec<f64> = (0..blocks)
        .map(|k| {
            let (a, b) = bounds(k);
            stats::median(&series[a..b])
        })
        .collect();
    let slow = |k: usize| medians[k] >= level * SLOW_RATIO;
    let above = |k: usize| medians[k] > level * (1.0 + WARMUP_MIN_SHIFT);
    let mut spans = Vec::new();
    let mut k = 0;
    while k < blocks {
        if !slow(k) {
            k += 1;
            continue;
        }
        let mut end = k;
        while end < blocks && slow(end) {
            end += 1;
        }
        if end - k >= STRETCH_MIN_BLOCKS {
            let mut start = k;
            while start > 0 && above(start - 1) {
                start -= 1;
            }
            let mut stop = end;
            while stop < blocks && above(stop) {
                stop += 1;
            }
            if start > 0 {
                spans.push((bounds(start).0, bounds(stop - 1).1));
            }
            k = stop;
        } else {
            k = end;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(n: usize, level: f64) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + 0.001 * ((i * 7919) % 13) as f64 / 13.0))
            .collect()
    }

    #[test]
    fn a_burst_at_the_end_of_a_part_is_a_span_and_scattered_slow_samples_are_not() {
        // sin's first round: 24.5 cycles, the last quarter at 37.4.
        let mut s = flat(400, 24.5);
        for x in &mut s[300..] {
            *x = 37.44;
        }
        assert_eq!(slow_spans(&s, 24.5), vec![(300, 400)]);
        // One sample in five slow, throughout: no block's median moves.
        let mut s = flat(400, 24.5);
        for x in s.iter_mut().step_by(5) {
            *x = 37.44;
        }
        assert!(slow_spans(&s, 24.5).is_empty());
        // Two slow blocks: a burst of interruptions, not a stretch.
        let mut s = flat(400, 24.5);
        for x in &mut s[200..240] {
            *x = 37.44;
        }
        assert!(slow_spans(&s, 24.5).is_empty());
        // A slow start is a warm-up, left to the steady state.
        let mut s = flat(400, 24.5);
        for x in &mut s[..100] {
            *x = 30.0;
        }
        assert!(slow_spans(&s, 24.5).is_empty());
        // Its edges, 2 % above the level, go with it; a 5 % step does not make one.
        let mut s = flat(400, 24.5);
        for x in &mut s[180..200] {
            *x = 25.0;
        }
        for x in &mut s[200..300] {
            *x = 30.0;
        }
        assert_eq!(slow_spans(&s, 24.5), vec![(180, 300)]);
        let mut s = flat(400, 24.5);
        for x in &mut s[200..] {
            *x = 24.5 * 1.05;
        }
        assert!(slow_spans(&s, 24.5).is_empty());
    }
}
