//! A layout sweep's section of the report: each benchmark's median per environment padding.

use super::*;

/// A layout sweep: per benchmark, its median at each environment padding with the interval,
/// and the swing and period the sweep found.
pub(super) fn sweep_section(h: &mut String, id: &str, name: &str, s: &Sweep) {
    let _ = writeln!(
        h,
        "<section id=\"{id}\"><h2>Layout sweep: {}</h2>\n<p class=\"meta\">environment padding \
         {}–{} bytes in steps of {}, {} padding(s) measured, ASLR {}; one worker process per \
         padding (the environment's size moves the stack).</p>",
        esc(name),
        s.env_pad.start,
        s.env_pad.end,
        s.env_pad.step,
        s.points.len(),
        if s.aslr { "on" } else { "off" }
    );
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"name\">benchmark</th><th>swing (ns)</th>\
         <th>swing (cycles)</th><th>period</th></tr>\n",
    );
    let swing = |x: Option<f64>| {
        x.filter(|x| x.is_finite())
            .map(|x| format!("{:.1} %", x * 100.0))
            .unwrap_or_else(|| "—".into())
    };
    for m in &s.summary {
        let _ = writeln!(
            h,
            "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&m.name),
            swing(Some(m.swing)),
            swing(m.swing_cycles),
            m.period_bytes
                .map(|p| format!("{p} B"))
                .unwrap_or_else(|| "none".into())
        );
    }
    h.push_str(
        "</table>\n<p class=\"meta\">swing: (max − min) / min of the medians over the \
         paddings, in ns and in cycles of the core at the time (where the worker runs the \
         core-speed probe): the clock moves a figure bound by the core in ns and not in cycles, \
         so a swing in ns without one in cycles is the clock's, not the layout's. The period is \
         of the medians in cycles where known. The plots are in cycles where every padding has \
         them.</p>\n<div class=\"plots\">\n",
    );
    let mut names: Vec<&str> = Vec::new();
    for p in &s.points {
        for b in &p.benchmarks {
            if !names.contains(&b.name.as_str()) {
                names.push(&b.name);
            }
        }
    }
    for bench in names {
        let figures: Vec<(u64, &SweepFigure)> = s
            .points
            .iter()
            .filter_map(|p| {
                let b = p.benchmarks.iter().find(|b| b.name == bench)?;
                Some((p.env_pad_bytes, b))
            })
            .collect();
        let typical = figures.iter().map(|(_, b)| b.median_ns).fold(0.0, f64::max);
        let unit = Unit::for_ns(typical);
        // In cycles where every padding has them, as the sweep judges them.
        let cycles = figures.iter().all(|(_, b)| b.cycles_per_iter.is_some());
        let items: Vec<Estimate> = figures
            .iter()
            .map(|(pad, b)| {
                let (value, ci, of): (f64, _, &dyn Fn(f64) -> f64) = match b.cycles_per_iter {
                    Some(c) if cycles => (c, b.cycles_ci95.unwrap_or([f64::NAN; 2]), &|x| x),
                    _ => (b.median_ns, b.ci95_ns, &|x| unit.of(x)),
                };
                Estimate {
                    label: pad.to_string(),
                    value: of(value),
                    ci: ci.map(of),
                    tone: 0,
                }
            })
            .collect();
        let title = format!("{bench}: median per environment padding");
        let plot = plots::intervals(&plots::Intervals {
            title: &title,
            x_desc: "environment padding (bytes)",
            y_desc: if cycles {
                "cycles per iteration (the core's, at the time)".to_string()
            } else {
                format!("time per iteration ({})", unit.name)
            },
            items: &items,
            reference: None,
            marks: &[],
        });
        figure(
            h,
            "sweep",
            plot,
            "each dot the median of a padding's steady samples, its bar the 95 % interval",
        );
    }
    h.push_str("</div></section>\n");
}
