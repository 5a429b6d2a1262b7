//! A comparison's pair ratios, one per OLD/NEW pair, in the order they were measured.

use super::*;

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
