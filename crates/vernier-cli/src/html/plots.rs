//! The report's plots: static SVG drawn with plotters' SVG backend (its text is emitted as
//! `<text>` elements, so no font file is read). Each function takes figures already
//! computed (a result's samples and estimates, a comparison's pairs, a history's points) and
//! returns one `<svg>` element as a string; nothing here computes a statistic of its own
//! beyond what is needed to lay a plot out (ranges, bins, decimation).
//!
//! Long series are decimated for drawing: see [`decimate`].

use anyhow::{anyhow, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Width and height of a plot, in SVG pixels (scaled to the page's width by CSS).
pub const WIDTH: u32 = 620;
pub const HEIGHT: u32 = 330;
/// Most points a scatter plot draws: beyond it the series is decimated ([`decimate`]). 200
/// runs × (min, median, max) keeps a benchmark's plots near 60 kB, so the demo's 16 benchmarks stay
/// well under the report's 2 MB target.
pub const MAX_POINTS: usize = 600;
/// Bins of the histogram of per-iteration times.
pub const HIST_BINS: usize = 50;
/// The histogram's range covers the central `1 - 2 × HIST_TAIL` of the steady samples (plus
/// the minimum and the interval); the samples beyond are counted in its caption.
pub const HIST_TAIL: f64 = 0.005;
/// ... and never reaches further from the quartiles than this many interquartile ranges.
pub const FENCE_IQR: f64 = 4.0;

/// Room left above the data for the legend, as a share of the data's span: the legend then
/// covers no point.
const HEADROOM: f64 = 0.45;

pub(super) const FONT: &str = "sans-serif";
pub(super) const CAPTION: u32 = 20;
const LABEL: u32 = 15;

pub const CALIBRATION: RGBColor = RGBColor(150, 150, 150);
pub const WARMUP: RGBColor = RGBColor(230, 120, 20);
pub const MEASURE: RGBColor = RGBColor(31, 119, 180);
const FIT: RGBColor = RGBColor(200, 30, 30);
const MEDIAN: RGBColor = RGBColor(200, 30, 30);
const MINIMUM: RGBColor = RGBColor(40, 150, 60);
const BOUNDARY: RGBColor = RGBColor(90, 90, 90);
const ROUND: RGBColor = RGBColor(190, 170, 230);
const BAND: RGBColor = RGBColor(120, 200, 120);

/// A time unit for an axis, chosen from a representative value in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    pub per_ns: f64,
    pub name: &'static str,
}

impl Unit {
    pub fn for_ns(typical_ns: f64) -> Unit {
        let (per_ns, name) = match typical_ns.abs() {
            x if x >= 1e9 => (1e-9, "s"),
            x if x >= 1e6 => (1e-6, "ms"),
            x if x >= 1e3 => (1e-3, "µs"),
            _ => (1.0, "ns"),
        };
        Unit { per_ns, name }
    }

    pub fn of(self, ns: f64) -> f64 {
        ns * self.per_ns
    }
}

/// Which kind of sample a point is, for its colour and legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Calibration,
    Warmup,
    Measure,
}

impl Kind {
    fn color(self) -> RGBColor {
        match self {
            Kind::Calibration => CALIBRATION,
            Kind::Warmup => WARMUP,
            Kind::Measure => MEASURE,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Calibration => "calibration",
            Kind::Warmup => "warm-up (excluded)",
            Kind::Measure => "steady (measured)",
        }
    }

    const ALL: [Kind; 3] = [Kind::Calibration, Kind::Warmup, Kind::Measure];
}

/// One point of a scatter plot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub kind: Kind,
}

/// Keep at most about `max` points of a series, in order: the series is cut into `max / 3`
/// runs of consecutive points and each run keeps, for each kind of point in it, its lowest,
/// its median and its highest. Spikes (the scheduler's, the warm-up's) and the floor stay
/// visible, as on a min/max envelope, and the median keeps the bulk where it is; what is lost
/// is the density inside each run, which the histogram shows.
pub fn decimate(points: &[Point], max: usize) -> Vec<Point> {
    if points.len() <= max || max < 3 {
        return points.to_vec();
    }
    let runs = max / 3;
    let per_run = points.len().div_ceil(runs);
    let mut out = Vec::with_capacity(max + 3 * Kind::ALL.len());
    for run in points.chunks(per_run) {
        for kind in Kind::ALL {
            let mut idx: Vec<usize> = (0..run.len()).filter(|&i| run[i].kind == kind).collect();
            if idx.is_empty() {
                continue;
            }
            idx.sort_by(|&a, &b| run[a].y.total_cmp(&run[b].y));
            let mut keep = vec![idx[0], idx[idx.len() / 2], idx[idx.len() - 1]];
            keep.sort_unstable();
            keep.dedup();
            out.extend(keep.into_iter().map(|i| run[i]));
        }
    }
    out
}

/// Where a plot's scale stops above sorted values: their 99.5th percentile, but no further
/// than [`FENCE_IQR`] interquartile ranges above the upper quartile (periodic interrupts, a
/// few per cent of samples tens of times slower, would otherwise set the scale). NaN when
/// there are no values (`f64::max` then ignores it).
pub fn upper_fence(sorted: &[f64]) -> f64 {
    let iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25);
    quantile(sorted, 1.0 - HIST_TAIL).min(quantile(sorted, 0.75) + FENCE_IQR * iqr)
}

/// The same below sorted values: the 0.5th percentile, but no further than [`FENCE_IQR`]
/// interquartile ranges below the lower quartile.
pub fn lower_fence(sorted: &[f64]) -> f64 {
    let iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25);
    quantile(sorted, HIST_TAIL).max(quantile(sorted, 0.25) - FENCE_IQR * iqr)
}

/// The q-quantile (0..=1) of sorted values, by linear interpolation.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    let next = sorted[(i + 1).min(sorted.len() - 1)];
    sorted[i] + (next - sorted[i]) * frac
}

pub(super) fn svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
) -> Result<String> {
    svg_sized((WIDTH, HEIGHT), draw)
}

/// One plot of `size` pixels. Should the plotting library panic on some data, the plot is
/// not drawn and the report says so; the rest of the report stands.
fn svg_sized(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
) -> Result<String> {
    let mut out = String::new();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
        draw(&root)?;
        root.present().map_err(|e| anyhow!("{e}"))
    }))
    .map_err(|_| anyhow!("the plotting library failed on this data"))??;
    Ok(compact(&out))
}

/// plotters writes one element per line, at whole pixels. Points of a dense series often
/// land on the same pixel: a repeated marker is dropped (it would be drawn over itself), and
/// attributes equal to SVG's defaults are left out of markers. Nothing visible changes; the
/// demo's report shrinks by about half.
pub fn compact(svg: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::with_capacity(svg.len());
    for line in svg.lines() {
        if line.starts_with("<circle") || line.starts_with("<polygon") {
            let short = line
                .replace(" opacity=\"1\"", "")
                .replace(" stroke=\"none\" stroke-width=\"1\"", "");
            if seen.insert(short.clone()) {
                out.push_str(&short);
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// plotters' errors carry the backend's error type; the report only needs its text.
pub(super) fn e<T, E: std::fmt::Display>(r: std::result::Result<T, E>) -> Result<T> {
    r.map_err(|e| anyhow!("drawing a plot: {e}"))
}

/// A range with a margin, never empty.
fn padded(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    let span = if hi > lo {
        hi - lo
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - span * frac, hi + span * frac)
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    e(chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font((FONT, LABEL))
        .draw())
}

type LinearChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The frame the plots with two linear axes share: the title, the axes with their
/// descriptions (units in them), no minor grid lines.
fn linear_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    (x_desc, y_desc): (&str, &str),
    y_format: Option<&dyn Fn(&f64) -> String>,
) -> Result<LinearChart<'a, 'b>> {
    let mut chart = e(ChartBuilder::on(root)
        .caption(title, (FONT, CAPTION))
        .margin(8)
        .x_label_area_size(42)
        .y_label_area_size(62)
        .build_cartesian_2d(x0..x1, y0..y1))?;
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE.mix(0.0))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, LABEL));
    if let Some(f) = y_format {
        mesh.y_label_formatter(f);
    }
    e(mesh.draw())?;
    Ok(chart)
}

/// The samples over time: per-iteration time of each sample against when it ended, by kind,
/// with the boundaries between processes (solid) and rounds (light) as vertical lines. The
/// scale stops at `y_max_ns` (chosen by the caller from the steady samples); samples above it
/// are drawn as triangles on a line at that height.
pub struct TimeSeries<'a> {
    pub title: &'a str,
    pub points: &'a [Point],
    /// Times at which the process changed, and at which the round changed.
    pub process_starts: &'a [f64],
    pub round_starts: &'a [f64],
    pub y_max_ns: f64,
    pub unit: Unit,
}

pub fn time_series(p: &TimeSeries) -> Result<String> {
    let u = p.unit;
    let drawn = decimate(p.points, MAX_POINTS);
    let y_top = u.of(p.y_max_ns);
    let y_min = drawn
        .iter()
        .map(|q| u.of(q.y))
        .fold(f64::INFINITY, f64::min);
    let (y0, y_clip) = padded(y_min.min(y_top), y_top, 0.04);
    let y0 = y0.max(0.0);
    let y1 = y_clip + (y_clip - y0) * HEADROOM;
    let x_max = drawn.iter().map(|q| q.x).fold(0.0, f64::max);
    let (_, x1) = padded(0.0, x_max, 0.02);
    svg(|root| {
        let y_desc = format!("time per iteration ({})", u.name);
        let x_desc = "time since the benchmark started (s)";
        let mut chart = linear_chart(root, p.title, (0.0, x1), (y0, y1), (x_desc, &y_desc), None)?;
        let vline = |x: f64| PathElement::new(vec![(x, y0), (x, y1)], ROUND.stroke_width(1));
        e(chart.draw_series(p.round_starts.iter().map(|&x| vline(x))))?;
        let has_processes = !p.process_starts.is_empty();
        let s = e(chart.draw_series(
            p.process_starts
                .iter()
                .map(|&x| PathElement::new(vec![(x, y0), (x, y1)], BOUNDARY.stroke_width(2))),
        ))?;
        if has_processes {
            s.label("new worker process").legend(|(x, y)| {
                PathElement::new(
                    vec![(x + 5, y - 6), (x + 5, y + 6)],
                    BOUNDARY.stroke_width(2),
                )
            });
        }
        if !p.round_starts.is_empty() {
            e(chart.draw_series(std::iter::empty::<PathElement<(f64, f64)>>()))?
                .label("new round")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x + 5, y - 6), (x + 5, y + 6)], ROUND.stroke_width(1))
                });
        }
        for kind in Kind::ALL {
            let pts: Vec<(f64, f64)> = drawn
                .iter()
                .filter(|q| q.kind == kind && u.of(q.y) <= y_clip)
                .map(|q| (q.x, u.of(q.y)))
                .collect();
            if pts.is_empty() && !p.points.iter().any(|q| q.kind == kind) {
                continue;
            }
            let c = kind.color();
            e(chart.draw_series(pts.iter().map(|&xy| Circle::new(xy, 2, c.filled()))))?
                .label(kind.label())
                .legend(move |(x, y)| Circle::new((x + 5, y), 3, c.filled()));
        }
        let above: Vec<&Point> = drawn.iter().filter(|q| u.of(q.y) > y_clip).collect();
        if !above.is_empty() {
            e(chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y_clip), (x1, y_clip)],
                BLACK.mix(0.3).stroke_width(1),
            ))))?;
            e(chart.draw_series(
                above
                    .iter()
                    .map(|q| TriangleMarker::new((q.x, y_clip), 4, q.kind.color().filled())),
            ))?
            .label("above the scale (drawn on its line)")
            .legend(|(x, y)| TriangleMarker::new((x + 5, y), 4, BLACK.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

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

/// The linearity plot: each sample's time T against its iteration count N (log scales), with
/// the fitted line T = a + b·N.
pub struct Linearity<'a> {
    pub title: &'a str,
    /// (N, T in ns, kind).
    pub points: &'a [Point],
    pub slope_ns: f64,
    pub intercept_ns: f64,
}

pub fn linearity(l: &Linearity) -> Result<String> {
    let drawn = decimate(l.points, MAX_POINTS);
    let pos = |v: f64| v.is_finite() && v > 0.0;
    let xs = drawn.iter().map(|p| p.x).filter(|&x| pos(x));
    let (x_lo, x_hi) = xs.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let ys = drawn.iter().map(|p| p.y).filter(|&y| pos(y));
    let (y_lo, y_hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    if !(pos(x_lo) && pos(y_lo)) {
        return Err(anyhow!("no sample to draw"));
    }
    let (x0, x1) = (x_lo / 1.5, x_hi * 1.5);
    let (y0, y1) = (y_lo / 1.5, y_hi * 1.5);
    svg(|root| {
        let mut chart = e(ChartBuilder::on(root)
            .caption(l.title, (FONT, CAPTION))
            .margin(8)
            .x_label_area_size(42)
            .y_label_area_size(62)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()))?;
        e(chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_desc("iterations in the sample, N (log scale)")
            .y_desc("sample time T (ns, log scale)")
            .x_label_formatter(&|x| short_number(*x))
            .y_label_formatter(&|y| short_number(*y))
            .label_style((FONT, LABEL))
            .draw())?;
        for kind in Kind::ALL {
            let pts: Vec<(f64, f64)> = drawn
                .iter()
                .filter(|p| p.kind == kind && pos(p.x) && pos(p.y))
                .map(|p| (p.x, p.y))
                .collect();
            if pts.is_empty() {
                continue;
            }
            let c = kind.color();
            e(chart.draw_series(pts.iter().map(|&xy| Circle::new(xy, 2, c.filled()))))?
                .label(kind.label())
                .legend(move |(x, y)| Circle::new((x + 5, y), 3, c.filled()));
        }
        if l.slope_ns.is_finite() && l.intercept_ns.is_finite() {
            let steps = 60;
            let line: Vec<(f64, f64)> = (0..=steps)
                .map(|i| x0 * (x1 / x0).powf(i as f64 / steps as f64))
                .map(|n| (n, l.intercept_ns + l.slope_ns * n))
                .filter(|&(_, t)| t >= y0 && t <= y1)
                .collect();
            e(chart.draw_series(LineSeries::new(line, FIT.stroke_width(2))))?
                .label("fit T = a + b·N")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], FIT.stroke_width(2)));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

/// 1234567 → "1.2M": log axes' labels stay short.
pub(super) fn short_number(x: f64) -> String {
    let (v, s) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "k"),
        _ => (x, ""),
    };
    let t = format!("{v:.1}");
    format!("{}{s}", t.trim_end_matches(".0"))
}

/// An estimate with its interval, drawn as a dot and a bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub label: String,
    pub value: f64,
    pub ci: [f64; 2],
    /// Colour index: 0 neutral, 1 good (faster), 2 bad (slower), 3 undecided.
    pub tone: u8,
}

fn tone_color(t: u8) -> RGBColor {
    match t {
        1 => RGBColor(40, 150, 60),
        2 => RGBColor(200, 30, 30),
        3 => RGBColor(210, 140, 0),
        _ => MEASURE,
    }
}

/// Estimates with intervals along a categorical x axis (processes, commits), optionally with
/// a reference value and its band (the overall median and its interval), and vertical marks
/// at some positions (change points).
pub struct Intervals<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: String,
    pub items: &'a [Estimate],
    pub reference: Option<(f64, [f64; 2], &'a str)>,
    pub marks: &'a [(usize, String)],
}

pub fn intervals(p: &Intervals) -> Result<String> {
    let n = p.items.len();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for it in p.items {
        for v in [it.value, it.ci[0], it.ci[1]] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if let Some((v, ci, _)) = p.reference {
        for v in [v, ci[0], ci[1]] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    let (y0, y1) = padded(lo, hi, 0.15);
    let y1 = if p.reference.is_some() {
        y1 + (y1 - y0) * HEADROOM
    } else {
        y1
    };
    let x1 = n as f64 - 0.5;
    let labels: Vec<String> = p.items.iter().map(|i| i.label.clone()).collect();
    svg(|root| {
        let mut chart = e(ChartBuilder::on(root)
            .caption(p.title, (FONT, CAPTION))
            .margin(8)
            .x_label_area_size(42)
            .y_label_area_size(62)
            .build_cartesian_2d(-0.5..x1, y0..y1))?;
        let fmt = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        e(chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_labels(n.min(24))
            .x_label_formatter(&fmt)
            .x_desc(p.x_desc)
            .y_desc(p.y_desc.as_str())
            .label_style((FONT, LABEL))
            .draw())?;
        if let Some((v, [a, b], name)) = p.reference {
            if a.is_finite() && b.is_finite() {
                e(chart.draw_series(std::iter::once(Rectangle::new(
                    [(-0.5, a), (x1, b)],
                    MEDIAN.mix(0.15).filled(),
                ))))?;
            }
            e(chart.draw_series(std::iter::once(PathElement::new(
                vec![(-0.5, v), (x1, v)],
                MEDIAN.stroke_width(1),
            ))))?
            .label(name)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], MEDIAN.stroke_width(1)));
        }
        for (i, label) in p.marks {
            let x = *i as f64 - 0.5;
            e(chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y0), (x, y1)],
                BOUNDARY.stroke_width(2),
            ))))?;
            e(chart.draw_series(std::iter::once(Text::new(
                label.clone(),
                (x, y1),
                (FONT, LABEL).into_font().color(&BOUNDARY),
            ))))?;
        }
        for (i, it) in p.items.iter().enumerate() {
            let x = i as f64;
            let c = tone_color(it.tone);
            if it.ci[0].is_finite() && it.ci[1].is_finite() {
                e(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, it.ci[0]), (x, it.ci[1])],
                    c.stroke_width(2),
                ))))?;
            }
            if it.value.is_finite() {
                e(chart.draw_series(std::iter::once(Circle::new((x, it.value), 4, c.filled()))))?;
            }
        }
        if p.reference.is_some() {
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    })
}

/// Comparisons side by side (a forest plot): each row a benchmark, its ratio NEW/OLD with the
/// 95 % interval, against the band 1 ± threshold inside which a change is `no-change`.
pub fn forest(title: &str, rows: &[Estimate], threshold: f64) -> Result<String> {
    let n = rows.len().max(1);
    let mut lo = 1.0 - threshold;
    let mut hi = 1.0 + threshold;
    for r in rows {
        for v in [r.value, r.ci[0], r.ci[1]] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    let (x0, x1) = padded(lo, hi, 0.08);
    let longest = rows
        .iter()
        .map(|r| vernier::report::text_width(&r.label))
        .max()
        .unwrap_or(4);
    let height = (70 + 26 * n as u32).max(140);
    svg_sized((WIDTH + 160, height), |root| {
        let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
        let mut chart = e(ChartBuilder::on(root)
            .caption(title, (FONT, CAPTION))
            .margin(8)
            .x_label_area_size(42)
            .y_label_area_size((longest as u32 * 7 + 12).clamp(60, 300))
            .build_cartesian_2d(x0..x1, -0.5..(n as f64 - 0.5)))?;
        let fmt = |y: &f64| {
            let i = y.round();
            if (y - i).abs() < 1e-6 && i >= 0.0 {
                (n - 1)
                    .checked_sub(i as usize)
                    .and_then(|k| labels.get(k))
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        e(chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .y_labels(n)
            .y_label_formatter(&fmt)
            .x_desc("ratio NEW/OLD of the time per iteration (above 1: NEW is slower)")
            .label_style((FONT, LABEL))
            .draw())?;
        e(chart.draw_series(std::iter::once(Rectangle::new(
            [(1.0 - threshold, -0.5), (1.0 + threshold, n as f64 - 0.5)],
            BAND.mix(0.25).filled(),
        ))))?;
        e(chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
            BOUNDARY.stroke_width(1),
        ))))?;
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let c = tone_color(r.tone);
            if r.ci[0].is_finite() && r.ci[1].is_finite() {
                e(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(r.ci[0], y), (r.ci[1], y)],
                    c.stroke_width(3),
                ))))?;
            }
            if r.value.is_finite() {
                e(chart.draw_series(std::iter::once(Circle::new((r.value, y), 5, c.filled()))))?;
            }
        }
        Ok(())
    })
}

/// A threshold or share as a percentage without trailing zeros: 0.005 → "0.5".
pub fn pct(x: f64) -> String {
    let s = format!("{:.2}", x * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The pairs of one comparison: each pair's ratio NEW/OLD over time (warm-up pairs apart),
/// the estimate and its interval, and the ±threshold band.
pub struct PairRatios<'a> {
    pub title: &'a str,
    /// (t in s, ratio, kind): `Warmup` for pairs cut as warm-up.
    pub points: &'a [Point],
    pub ratio: f64,
    pub ci95: [f64; 2],
    pub threshold: f64,
    pub process_starts: &'a [f64],
}

pub fn pair_ratios(p: &PairRatios) -> Result<String> {
    let drawn = decimate(p.points, MAX_POINTS);
    let mut ys: Vec<f64> = p
        .points
        .iter()
        .map(|q| q.y)
        .filter(|y| y.is_finite())
        .collect();
    ys.sort_by(f64::total_cmp);
    // The bulk of the pairs, the estimate and the band; far pairs go on the edges.
    let mut lo = lower_fence(&ys).min(1.0 - p.threshold);
    let mut hi = upper_fence(&ys).max(1.0 + p.threshold);
    for v in [p.ratio, p.ci95[0], p.ci95[1]] {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let (y_floor, y_clip) = padded(lo, hi, 0.08);
    let y1 = y_clip + (y_clip - y_floor) * HEADROOM;
    let y0 = y_floor - (y_clip - y_floor) * 0.04;
    let x_max = drawn.iter().map(|q| q.x).fold(0.0, f64::max);
    let (_, x1) = padded(0.0, x_max, 0.02);
    svg(|root| {
        let desc = (
            "time since the comparison started (s)",
            "ratio NEW/OLD of one pair",
        );
        let mut chart = linear_chart(root, p.title, (0.0, x1), (y0, y1), desc, None)?;
        e(chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, 1.0 - p.threshold), (x1, 1.0 + p.threshold)],
            BAND.mix(0.25).filled(),
        ))))?
        .label(format!("±{} % threshold", pct(p.threshold)))
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], BAND.mix(0.5).filled()));
        e(chart.draw_series(
            p.process_starts
                .iter()
                .map(|&x| PathElement::new(vec![(x, y0), (x, y1)], BOUNDARY.stroke_width(1))),
        ))?;
        for kind in [Kind::Warmup, Kind::Measure] {
            let pts: Vec<(f64, f64)> = drawn
                .iter()
                .filter(|q| q.kind == kind && (y_floor..=y_clip).contains(&q.y))
                .map(|q| (q.x, q.y))
                .collect();
            if pts.is_empty() {
                continue;
            }
            let c = kind.color();
            let label = if kind == Kind::Warmup {
                "warm-up pairs (excluded)"
            } else {
                "pairs"
            };
            e(chart.draw_series(
                pts.iter()
                    .map(|&xy| Circle::new(xy, 2, c.mix(0.7).filled())),
            ))?
            .label(label)
            .legend(move |(x, y)| Circle::new((x + 5, y), 3, c.filled()));
        }
        let beyond: Vec<&Point> = drawn
            .iter()
            .filter(|q| !(y_floor..=y_clip).contains(&q.y))
            .collect();
        if !beyond.is_empty() {
            for edge in [y_floor, y_clip] {
                e(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(0.0, edge), (x1, edge)],
                    BLACK.mix(0.3).stroke_width(1),
                ))))?;
            }
            e(chart.draw_series(beyond.iter().map(|q| {
                let y = q.y.clamp(y_floor, y_clip);
                TriangleMarker::new((q.x, y), 4, q.kind.color().filled())
            })))?
            .label("beyond the scale (drawn on its edge)")
            .legend(|(x, y)| TriangleMarker::new((x + 5, y), 4, BLACK.filled()));
        }
        let [a, b] = p.ci95;
        if a.is_finite() && b.is_finite() {
            e(chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, a), (x1, b)],
                MEDIAN.mix(0.25).filled(),
            ))))?
            .label("95 % interval of the ratio")
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 10, y + 5)], MEDIAN.mix(0.4).filled())
            });
        }
        if p.ratio.is_finite() {
            e(chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, p.ratio), (x1, p.ratio)],
                MEDIAN.stroke_width(2),
            ))))?
            .label("estimated ratio")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], MEDIAN.stroke_width(2)));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(n: usize) -> Vec<Point> {
        (0..n)
            .map(|i| Point {
                x: i as f64,
                y: if i == 777 { 1e6 } else { (i % 10) as f64 },
                kind: if i < 100 { Kind::Warmup } else { Kind::Measure },
            })
            .collect()
    }

    #[test]
    fn decimation_bounds_the_points_and_keeps_extremes_and_kinds() {
        let pts = series(10_000);
        let d = decimate(&pts, 200);
        assert!(d.len() <= 200 + 3 * Kind::ALL.len(), "{}", d.len());
        assert!(d.iter().any(|p| p.y == 1e6), "the spike is kept");
        assert!(d.iter().any(|p| p.kind == Kind::Warmup));
        assert!(d.windows(2).all(|w| w[0].x <= w[1].x), "order kept");
        // Short series are drawn whole.
        assert_eq!(decimate(&pts[..50], 200).len(), 50);
    }

    #[test]
    fn histogram_bins_hold_every_sample_in_range() {
        let mut s: Vec<f64> = (0..1000).map(|i| 100.0 + (i % 37) as f64).collect();
        s.push(1e6);
        s.sort_by(f64::total_cmp);
        let h = Histogram {
            title: "t",
            sorted_ns: &s,
            median_ns: 118.0,
            min_ns: 100.0,
            ci95_ns: [117.0, 119.0],
            run_ci95_ns: [117.5, 118.5],
            unit: Unit::for_ns(118.0),
        };
        let (b, outside) = bins(&h);
        assert_eq!(b.len(), HIST_BINS);
        let inside: usize = b.iter().map(|x| x.2).sum();
        assert_eq!(inside + outside, s.len());
        assert!(outside >= 1, "the far sample is outside the range");
        assert!(b[0].0 <= 100.0, "the minimum is in range");
    }

    #[test]
    fn degenerate_data_still_draws() {
        let one = [Point {
            x: 0.0,
            y: 5.0,
            kind: Kind::Measure,
        }];
        let unit = Unit::for_ns(5.0);
        let ts = TimeSeries {
            title: "one sample",
            points: &one,
            process_starts: &[],
            round_starts: &[],
            y_max_ns: 5.0,
            unit,
        };
        assert!(time_series(&ts).unwrap().contains("<circle"));
        let h = Histogram {
            title: "one value",
            sorted_ns: &[5.0],
            median_ns: 5.0,
            min_ns: 5.0,
            ci95_ns: [f64::NAN, f64::NAN],
            run_ci95_ns: [f64::NAN, f64::NAN],
            unit,
        };
        assert!(histogram(&h).is_ok());
        let l = Linearity {
            title: "no fit",
            points: &[Point {
                x: 10.0,
                y: 50.0,
                kind: Kind::Calibration,
            }],
            slope_ns: f64::NAN,
            intercept_ns: f64::NAN,
        };
        assert!(linearity(&l).is_ok());
        let nan = Estimate {
            label: "x".into(),
            value: f64::NAN,
            ci: [f64::NAN; 2],
            tone: 3,
        };
        assert!(forest("nan", std::slice::from_ref(&nan), 0.005).is_ok());
        let iv = Intervals {
            title: "one",
            x_desc: "x",
            y_desc: "y".into(),
            items: &[nan],
            reference: None,
            marks: &[(0, "here".into())],
        };
        assert!(intervals(&iv).is_ok());
    }

    #[test]
    fn units_follow_the_magnitude() {
        assert_eq!(Unit::for_ns(5.0).name, "ns");
        assert_eq!(Unit::for_ns(5e3).name, "µs");
        assert_eq!(Unit::for_ns(5e6).of(5e6), 5.0);
        assert_eq!(pct(0.005), "0.5");
        assert_eq!(short_number(1_500_000.0), "1.5M");
    }
}
