//! A comparison's ratios with their intervals, one row per benchmark, and the threshold.

use super::*;

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
