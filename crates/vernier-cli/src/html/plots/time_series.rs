//! A benchmark's samples over time, by phase, with its rounds and process boundaries.

use super::*;

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
