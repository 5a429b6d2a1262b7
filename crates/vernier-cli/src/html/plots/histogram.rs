//! The distribution of a benchmark's samples, with its median and the interval bands.

use super::*;

/// The histogram of the steady samples' per-iteration times, with the median, the minimum,
/// this run's 95 % interval of the median and the interval for the next run.
pub struct Histogram<'a> {
    pub title: &'a str,
    /// Per-iteration times of the steady samples, in ns, sorted.
    pub sorted_ns: &'a [f64],
    pub median_ns: f64,
    pub min_ns: f64,
    /// The interval for the next run (`per_iter.ci95_ns`: this run's joined to the clock range
    /// of the machine's recent runs); it may reach where no sample of this run lies.
    pub ci95_ns: [f64; 2],
    /// This run's own interval of the median (`per_iter.run_ci95_ns`).
    pub run_ci95_ns: [f64; 2],
    pub unit: Unit,
}

/// The histogram's bins: (lower edge, upper edge, count) in the unit, and how many samples
/// fell outside the range.
pub fn bins(h: &Histogram) -> (Vec<(f64, f64, usize)>, usize) {
    let u = h.unit;
    let s = h.sorted_ns;
    // The central part, but never wider than the quartiles' fences far out (a few spikes
    // would otherwise squeeze the bulk into a bin or two).
    let mut lo = lower_fence(s);
    let mut hi = upper_fence(s);
    for x in [h.min_ns, h.ci95_ns[0], h.ci95_ns[1], h.median_ns] {
        if x.is_finite() {
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }
    let (lo, hi) = padded(u.of(lo), u.of(hi), 0.02);
    let width = (hi - lo) / HIST_BINS as f64;
    let mut counts = vec![0usize; HIST_BINS];
    let mut outside = 0;
    for &x in s {
        let v = u.of(x);
        if v < lo || v > hi {
            outside += 1;
            continue;
        }
        let i = (((v - lo) / width) as usize).min(HIST_BINS - 1);
        counts[i] += 1;
    }
    let bins = counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect();
    (bins, outside)
}

/// The histogram's band of this run's own interval of the median.
pub const RUN_BAND: &str = "this run's 95 % interval of the median";
/// The band of the interval for the next run, when it differs from this run's.
pub const NEXT_RUN_BAND: &str = "95 % interval for the next run (recent runs' clock range joined)";
/// The one band when both intervals are the same (no clock range known yet).
pub const RUN_AND_NEXT_BAND: &str = "95 % interval of the median (this run's = the next run's)";

pub fn histogram(h: &Histogram) -> Result<String> {
    let u = h.unit;
    let (bins, _) = bins(h);
    let x0 = bins.first().map(|b| b.0).unwrap_or(0.0);
    let x1 = bins.last().map(|b| b.1).unwrap_or(1.0);
    let top = bins.iter().map(|b| b.2).max().unwrap_or(1).max(1) as f64 * (1.0 + HEADROOM);
    svg(|root| {
        let x_desc = format!("time per iteration ({})", u.name);
        let whole = |y: &f64| format!("{y:.0}");
        let mut chart = linear_chart(
            root,
            h.title,
            (x0, x1),
            (0.0, top),
            (&x_desc, "samples"),
            Some(&whole),
        )?;
        // Each band labelled for what it is: the wider one, for the next run, under this run's.
        let same = h.ci95_ns == h.run_ci95_ns;
        for (band, shade, label) in [
            (h.ci95_ns, 0.10, NEXT_RUN_BAND),
            (h.run_ci95_ns, 0.25, RUN_BAND),
        ] {
            let [lo, hi] = band;
            if !(lo.is_finite() && hi.is_finite()) || (same && label == NEXT_RUN_BAND) {
                continue;
            }
            let label = if same { RUN_AND_NEXT_BAND } else { label };
            e(chart.draw_series(std::iter::once(Rectangle::new(
                [(u.of(lo), 0.0), (u.of(hi), top)],
                MEDIAN.mix(shade).filled(),
            ))))?
            .label(label)
            .legend(move |(x, y)| {
                Rectangle::new(
                    [(x, y - 5), (x + 10, y + 5)],
                    MEDIAN.mix(shade + 0.1).filled(),
                )
            });
        }
        e(
            chart.draw_series(bins.iter().filter(|b| b.2 > 0).map(|&(a, b, c)| {
                Rectangle::new([(a, 0.0), (b, c as f64)], MEASURE.mix(0.75).filled())
            })),
        )?
        .label("steady samples")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], MEASURE.filled()));
        for (x, c, name) in [
            (h.median_ns, MEDIAN, "median"),
            (h.min_ns, MINIMUM, "minimum"),
        ] {
            if x.is_finite() {
                let v = u.of(x);
                e(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(v, 0.0), (v, top)],
                    c.stroke_width(2),
                ))))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 12, y)], c.stroke_width(2))
                });
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
