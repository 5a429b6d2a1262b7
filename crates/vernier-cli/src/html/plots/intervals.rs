//! Estimates with their intervals along a categorical axis (processes, commits).

use super::*;

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

/// A place in an SVG, in its pixels.
pub type Pixel = (i32, i32);

pub fn intervals(p: &Intervals) -> Result<String> {
    intervals_located(p).map(|(svg, _)| svg)
}

/// [`intervals`], and where each item's estimate was drawn, in the SVG's pixels (`None` for an
/// item without one): for a page that puts a point under the pointer or the keyboard's focus.
pub fn intervals_located(p: &Intervals) -> Result<(String, Vec<Option<Pixel>>)> {
    let mut at = vec![None; p.items.len()];
    let svg = intervals_drawn(p, &mut at)?;
    Ok((svg, at))
}

fn intervals_drawn(p: &Intervals, at: &mut [Option<Pixel>]) -> Result<String> {
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
                at[i] = Some(chart.backend_coord(&(x, it.value)));
            }
        }
        if p.reference.is_some() {
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    })
}
