//! The report's plots: static SVG drawn with plotters' SVG backend (its text is emitted as
//! `<text>` elements, so no font file is read). Each function takes figures already
//! computed (a result's samples and estimates, a comparison's pairs, a history's points) and
//! returns one `<svg>` element as a string; nothing here computes a statistic of its own
//! beyond what is needed to lay a plot out (ranges, bins, decimation).
//!
//! Long series are decimated for drawing: see [`decimate`].

mod forest;
mod histogram;
mod intervals;
mod linearity;
mod pairs;
mod time_series;

pub use forest::forest;
pub use histogram::{bins, histogram, Histogram};
pub use intervals::{intervals, intervals_located, Intervals};
pub use linearity::{linearity, Linearity};
pub use pairs::{pair_ratios, PairRatios};
pub use time_series::{time_series, TimeSeries};

use anyhow::{anyhow, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use vernier::stats::quantile_sorted;

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
    let iqr = quantile_sorted(sorted, 0.75) - quantile_sorted(sorted, 0.25);
    quantile_sorted(sorted, 1.0 - HIST_TAIL).min(quantile_sorted(sorted, 0.75) + FENCE_IQR * iqr)
}

/// The same below sorted values: the 0.5th percentile, but no further than [`FENCE_IQR`]
/// interquartile ranges below the lower quartile.
pub fn lower_fence(sorted: &[f64]) -> f64 {
    let iqr = quantile_sorted(sorted, 0.75) - quantile_sorted(sorted, 0.25);
    quantile_sorted(sorted, HIST_TAIL).max(quantile_sorted(sorted, 0.25) - FENCE_IQR * iqr)
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

/// A threshold or share as a percentage without trailing zeros: 0.005 → "0.5".
pub fn pct(x: f64) -> String {
    let s = format!("{:.2}", x * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
