//! A sweep's figures: each benchmark's swing and period over the paddings (in cycles where the
//! worker measured the core's speed), and the summary that says them.

use super::*;

impl PointBench {
    /// The figure the sweep judges: in cycles where every point has them, else in ns.
    fn judged(&self, cycles: bool) -> (f64, [f64; 2]) {
        match (cycles, self.cycles_per_iter, self.cycles_ci95) {
            (true, Some(c), Some(ci)) => (c, ci),
            _ => (self.median_ns, self.ci95_ns),
        }
    }
}

/// The swing in ns is called the clock's when it is at least this many times the swing in
/// cycles (and at least [`CLOCK_SWING_MIN`] beyond it): the medians moved in ns while the
/// cycles held still.
pub const CLOCK_SWING_RATIO: f64 = 2.0;
/// ... by at least this much (1 %), so that two tiny swings are not compared.
pub const CLOCK_SWING_MIN: f64 = 0.01;

impl Summary {
    /// Whether the swing in ns is mostly the clock's (see [`CLOCK_SWING_RATIO`]).
    pub fn clock_swing(&self) -> bool {
        self.swing_cycles.is_some_and(|c| {
            self.swing >= CLOCK_SWING_RATIO * c && self.swing - c >= CLOCK_SWING_MIN
        })
    }
}

/// (max − min) / min of `medians`.
pub fn swing(medians: &[f64]) -> f64 {
    let min = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let max = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if medians.is_empty() || min <= 0.0 {
        return f64::NAN;
    }
    (max - min) / min
}

/// The period of `series` in points, from its autocorrelation: the first lag from 2 to half
/// the length that is a local maximum of the autocorrelation with a value of at least
/// [`PERIOD_MIN_ACF`]. `None` when the series does not repeat within half its length (it must
/// hold two periods).
pub fn period(series: &[f64]) -> Option<usize> {
    let n = series.len();
    if n < 4 {
        return None;
    }
    let mean = series.iter().sum::<f64>() / n as f64;
    let d: Vec<f64> = series.iter().map(|x| x - mean).collect();
    let var: f64 = d.iter().map(|x| x * x).sum();
    if var <= 0.0 {
        return None;
    }
    // Normalised so a series that repeats exactly scores 1 at its period whatever the lag.
    let acf = |k: usize| -> f64 {
        let num: f64 = (0..n - k).map(|i| d[i] * d[i + k]).sum::<f64>() / (n - k) as f64;
        num / (var / n as f64)
    };
    let r: Vec<f64> = (0..=n / 2 + 1)
        .map(|k| if k < n { acf(k) } else { 0.0 })
        .collect();
    (2..=n / 2).find(|&k| r[k] >= PERIOD_MIN_ACF && r[k] >= r[k - 1] && r[k] >= r[k + 1])
}

pub(super) fn summarise(names: &[String], points: &[Point], step: u64) -> Vec<Summary> {
    names
        .iter()
        .map(|name| {
            let figures: Vec<&PointBench> = points
                .iter()
                .filter_map(|p| p.benchmarks.iter().find(|b| &b.name == name))
                .collect();
            let ns: Vec<f64> = figures.iter().map(|b| b.median_ns).collect();
            let cycles = !figures.is_empty()
                && figures
                    .iter()
                    .all(|b| b.cycles_per_iter.is_some_and(f64::is_finite));
            let judged: Vec<(f64, [f64; 2])> = figures.iter().map(|b| b.judged(cycles)).collect();
            let series: Vec<f64> = judged.iter().map(|j| j.0).collect();
            Summary {
                name: name.clone(),
                swing: swing(&ns),
                swing_cycles: cycles.then(|| swing(&series)),
                period_bytes: beyond_noise(&judged)
                    .then(|| period(&series))
                    .flatten()
                    .map(|k| k as u64 * step),
            }
        })
        .collect()
}

/// Whether the medians differ by more than each one's own uncertainty (their standard deviation
/// above the typical half-width of their intervals): a period found in medians that only
/// scatter within their intervals would be a pattern in noise.
pub(super) fn beyond_noise(figures: &[(f64, [f64; 2])]) -> bool {
    let medians: Vec<f64> = figures.iter().map(|b| b.0).collect();
    let half: Vec<f64> = figures
        .iter()
        .map(|b| (b.1[1] - b.1[0]) / 2.0)
        .filter(|h| h.is_finite())
        .collect();
    if medians.len() < 4 || half.is_empty() {
        return false;
    }
    vernier::stats::std_dev(&medians) > vernier::stats::median(&half)
}

pub(super) fn sparkline(series: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let min = series.iter().copied().fold(f64::INFINITY, f64::min);
    let max = series.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    series
        .iter()
        .map(|&x| {
            let f = if max > min {
                (x - min) / (max - min)
            } else {
                0.0
            };
            BARS[((f * 7.0).round() as usize).min(7)]
        })
        .collect()
}

/// A point's median in cycles and its 95 % interval, from its samples in cycles (`cycles`,
/// one per sample of `ns`) and the probes they rest on. The samples' own interval misses the
/// probes' error, which every sample carried forward from one probe shares: when two or more
/// batches were probed, the interval is widened by the probes' (their median's, relative,
/// added in quadrature), so that a point resting on one slow probe does not read as a layout
/// effect. `None` when a sample had no probe.
pub(super) fn in_cycles(
    ns: &[f64],
    cycles: &[f64],
    probes: &[f64],
) -> Option<vernier::stats::MedianInterval> {
    if cycles.is_empty() || cycles.len() != ns.len() {
        return None;
    }
    let c = vernier::stats::median_interval(cycles);
    let probe_rel = if probes.len() >= MIN_PROBES {
        let p = vernier::stats::median_interval(probes);
        (p.hi - p.lo) / 2.0 / p.median
    } else {
        0.0
    };
    let widen = |side: f64| {
        let rel = side / c.median;
        c.median * (rel * rel + probe_rel * probe_rel).sqrt()
    };
    Some(vernier::stats::MedianInterval {
        median: c.median,
        lo: c.median - widen(c.median - c.lo),
        hi: c.median + widen(c.hi - c.median),
    })
    .filter(|c| c.lo.is_finite() && c.hi.is_finite())
}

/// Probed batches needed to estimate the probes' own error (one alone gives no idea of it).
const MIN_PROBES: usize = 2;

/// The summary table printed after the sweep: each benchmark's range in ns, its swing in ns
/// and in cycles, its period, and a sparkline of the series judged; then a line for each
/// benchmark whose swing in ns is the clock's.
pub(super) fn summary_text(file: &SweepFile) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let width = file
        .summary
        .iter()
        .map(|s| vernier::report::text_width(&s.name))
        .max()
        .unwrap_or(4)
        .max(9);
    let _ = writeln!(
        out,
        "{:<width$}  {:>10}  {:>10}  {:>7}  {:>13}  {:>8}  medians over the paddings",
        "benchmark", "min", "max", "swing", "swing, cycles", "period"
    );
    let mut clock = Vec::new();
    for s in &file.summary {
        let figures: Vec<&PointBench> = file
            .points
            .iter()
            .filter_map(|p| p.benchmarks.iter().find(|b| b.name == s.name))
            .collect();
        let ns: Vec<f64> = figures.iter().map(|b| b.median_ns).collect();
        let judged: Vec<f64> = figures
            .iter()
            .map(|b| b.judged(s.swing_cycles.is_some()).0)
            .collect();
        let min = ns.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ns.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = writeln!(
            out,
            "{}  {:>10}  {:>10}  {:>6.1}%  {:>13}  {:>8}  {}",
            vernier::report::pad(&s.name, width, false),
            format_ns(min),
            format_ns(max),
            s.swing * 100.0,
            s.swing_cycles
                .map(|c| format!("{:.1}%", c * 100.0))
                .unwrap_or_else(|| "—".into()),
            s.period_bytes
                .map(|p| format!("{p} B"))
                .unwrap_or_else(|| "none".into()),
            sparkline(&judged)
        );
        if s.clock_swing() {
            clock.push(format!(
                "{}: {:.1} % in ns but {:.1} % in cycles",
                s.name,
                s.swing * 100.0,
                s.swing_cycles.unwrap_or(f64::NAN) * 100.0
            ));
        }
    }
    let _ = writeln!(
        out,
        "swing: (max − min) / min of the medians in ns; swing, cycles: the same of the medians in \
         cycles of the core at the time (the probe's effective cycle time around each sample; — \
         where the worker has no probe), which the layout moves and the clock does not; period \
         (of the cycles where known, else of the ns): the first lag at which the medians' \
         autocorrelation peaks at ≥ {PERIOD_MIN_ACF} (none: no repeat within half the range; a \
         period needs two of them in it); the sparkline is of the same series. Each median: the \
         steady samples of the padding's process(es), with a 95 % interval in --json."
    );
    if !clock.is_empty() {
        let _ = writeln!(
            out,
            "the clock's swing, not the layout's: {}. The core's clock moved during the sweep; \
             in cycles the medians held still.",
            clock.join("; ")
        );
    }
    out
}
