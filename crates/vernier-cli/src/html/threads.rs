//! The threaded benchmarks' plot: throughput against the thread count, one plot per benchmark
//! (`NAME/threads:T` grouped by `NAME`), each count's throughput with its interval and the
//! line of perfect scaling from the one-thread run.

use super::plots::{e, short_number, svg, CAPTION, FONT, MEASURE};
use super::{esc, figure};
use plotters::prelude::*;
use std::collections::BTreeMap;
use vernier::result::threads::split_name;
use vernier::result::ResultFile;

/// One thread count: (threads, throughput, its interval).
type Point = (usize, f64, [f64; 2]);

/// A figure per threaded benchmark of `file` with at least two thread counts (a body the
/// compiler removed has no throughput, and no point).
pub fn scaling_plots(h: &mut String, file: &ResultFile) {
    let mut groups: BTreeMap<&str, Vec<Point>> = BTreeMap::new();
    for b in file.benchmarks.iter().filter(|b| !b.removed()) {
        let (Some(t), Some(s), Some((base, _))) = (b.threads, &b.scaling, split_name(&b.name))
        else {
            continue;
        };
        if s.throughput_per_s.is_finite() {
            groups
                .entry(base)
                .or_default()
                .push((t, s.throughput_per_s, s.throughput_ci95));
        }
    }
    for (base, mut points) in groups.into_iter().filter(|(_, p)| p.len() > 1) {
        points.sort_by_key(|p| p.0);
        let caption = format!(
            "{}: throughput of all threads (operations per second, 95 % interval) against the \
             thread count; dashed: perfect scaling from one thread",
            esc(base)
        );
        figure(h, "threads", plot(base, &points), &caption);
    }
}

fn plot(base: &str, points: &[Point]) -> anyhow::Result<String> {
    let t_max = points.iter().map(|p| p.0).max().unwrap_or(1) as f64;
    let one = points.iter().find(|p| p.0 == 1).map(|p| p.1);
    let ideal_top = one.map_or(0.0, |o| o * t_max);
    let top = points
        .iter()
        .map(|p| p.2[1].max(p.1))
        .filter(|v| v.is_finite())
        .fold(ideal_top, f64::max)
        * 1.1;
    let title = format!("{base}: throughput against threads");
    svg(|root| {
        let mut chart = e(ChartBuilder::on(root)
            .caption(&title, (FONT, CAPTION))
            .margin(8)
            .x_label_area_size(42)
            .y_label_area_size(62)
            .build_cartesian_2d(0.5..t_max + 0.5, 0.0..top.max(1.0)))?;
        e(chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc("operations per second")
            // At most one label per whole thread count: the axis steps by 1 or more, so every
            // tick is a whole count (plotters' default of ten labels put `1 1 1 1 2 2 2 2` under
            // a plot of one and two threads).
            .x_labels((t_max as usize).clamp(1, 12))
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-9 {
                    format!("{x:.0}")
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| short_number(*y))
            .draw())?;
        if let Some(o) = one {
            e(chart.draw_series(DashedLineSeries::new(
                [(1.0, o), (t_max, o * t_max)],
                6,
                4,
                BLACK.mix(0.5).stroke_width(1),
            )))?;
        }
        e(chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.0 as f64, p.1)),
            MEASURE.stroke_width(2),
        )))?;
        e(chart.draw_series(points.iter().map(|p| {
            PathElement::new(
                [(p.0 as f64, p.2[0]), (p.0 as f64, p.2[1])],
                MEASURE.stroke_width(2),
            )
        })))?;
        e(chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0 as f64, p.1), 4, MEASURE.filled())),
        ))?;
        Ok(())
    })
}
