//! The complexity plot: for each family of benchmarks over a numeric argument (`sort/256`,
//! `sort/1024`, …), each size's median time per iteration with its 95 % interval against N,
//! both axes logarithmic, and the fitted curve `c · f(N)` of the class that fits best drawn
//! through them (`vernier::result::complexity`).

use super::plots::{e, short_number, svg, CAPTION, FONT, MEASURE};
use super::{esc, figure};
use plotters::prelude::*;
use vernier::result::complexity::{families, member_of, FamilyFit};
use vernier::result::{ResultFile, Status};
use vernier::stats::complexity::Class;

/// One size: (N, median ns, its interval).
type Point = (f64, f64, [f64; 2]);

/// A figure per family of `file` with a complexity fit.
pub fn complexity_plots(h: &mut String, file: &ResultFile) {
    for fit in families(&file.benchmarks) {
        let points: Vec<Point> = file
            .benchmarks
            .iter()
            .filter(|b| b.status == Status::Ok)
            .filter_map(|b| {
                let (family, n) = member_of(b)?;
                (family == fit.family && fit.sizes.contains(&n)).then_some((
                    n as f64,
                    b.per_iter.median_ns,
                    b.per_iter.ci95_ns,
                ))
            })
            .collect();
        let caption = format!(
            "{}: median time per iteration (95 % interval) against N, logarithmic axes; \
             the line: the fit, {}",
            esc(&fit.family),
            esc(&fit.line())
        );
        figure(h, "complexity", plot(&fit, &points), &caption);
    }
}

fn plot(fit: &FamilyFit, points: &[Point]) -> anyhow::Result<String> {
    let finite = |v: &f64| v.is_finite() && *v > 0.0;
    let (n_lo, n_hi) = (
        *fit.sizes.first().unwrap_or(&1) as f64,
        *fit.sizes.last().unwrap_or(&2) as f64,
    );
    // The fitted curve at 64 sizes spread evenly on the logarithmic axis; the benchmarks' own
    // function is known only at their sizes, and is drawn through those.
    let curve: Vec<(f64, f64)> = match fit.class {
        Class::Custom => fit
            .fitted_at_sizes()
            .into_iter()
            .map(|(n, t)| (n as f64, t))
            .collect(),
        class => (0..64)
            .map(|i| {
                let n = n_lo * (n_hi / n_lo).powf(i as f64 / 63.0);
                (n, fit.coefficient_ns * class.f(n))
            })
            .collect(),
    };
    let curve: Vec<(f64, f64)> = curve.into_iter().filter(|p| finite(&p.1)).collect();
    let ys = points
        .iter()
        .flat_map(|p| [p.1, p.2[0], p.2[1]])
        .chain(curve.iter().map(|p| p.1))
        .filter(finite);
    let (y_lo, y_hi) = ys.fold((f64::INFINITY, 0.0f64), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    if !(y_lo.is_finite() && y_hi > 0.0) {
        anyhow::bail!("no finite median to plot");
    }
    let title = match (&fit.function, fit.class) {
        (Some(name), Class::Custom) => format!("{}: f(N) = {name}", fit.family),
        (_, c) => format!("{}: {}", fit.family, c.name()),
    };
    svg(|root| {
        let mut chart = e(ChartBuilder::on(root)
            .caption(&title, (FONT, CAPTION))
            .margin(8)
            .x_label_area_size(42)
            .y_label_area_size(62)
            .build_cartesian_2d(
                (n_lo / 1.5..n_hi * 1.5).log_scale(),
                (y_lo / 1.5..y_hi * 1.5).log_scale(),
            ))?;
        e(chart
            .configure_mesh()
            .x_desc("N")
            .y_desc("ns per iteration")
            .x_label_formatter(&|x| short_number(*x))
            .y_label_formatter(&|y| short_number(*y))
            .draw())?;
        e(chart.draw_series(LineSeries::new(
            curve.iter().copied(),
            BLACK.mix(0.6).stroke_width(1),
        )))?;
        e(chart.draw_series(
            points
                .iter()
                .filter(|p| finite(&p.2[0]) && finite(&p.2[1]))
                .map(|p| PathElement::new([(p.0, p.2[0]), (p.0, p.2[1])], MEASURE.stroke_width(2))),
        ))?;
        e(chart.draw_series(
            points
                .iter()
                .filter(|p| finite(&p.1))
                .map(|p| Circle::new((p.0, p.1), 4, MEASURE.filled())),
        ))?;
        Ok(())
    })
}
