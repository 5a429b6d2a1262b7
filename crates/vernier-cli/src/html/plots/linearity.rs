//! Time per sample against iterations per sample, with the fitted line.

use super::*;

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
