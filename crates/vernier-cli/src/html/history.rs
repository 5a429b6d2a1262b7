//! A history's section of the report: each benchmark's series over commits, with its change
//! points.

use super::*;

pub(super) fn history_section(h: &mut String, id: &str, name: &str, hist: &History) {
    let _ = writeln!(
        h,
        "<section id=\"{id}\"><h2>History: {}</h2>\n<p class=\"meta\">{} series; medians over \
         commits with their 95 % intervals; vertical lines mark change points.</p>",
        esc(name),
        hist.series.len()
    );
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"name\">benchmark</th><th class=\"name\">machine</th>\
         <th>runs</th><th>latest median</th><th>95 % interval</th><th class=\"name\">change points</th></tr>\n",
    );
    for (j, s) in hist.series.iter().enumerate() {
        let last = s.points.iter().rev().find(|p| p.median_ns.is_some());
        let cps: Vec<String> = s
            .change_points
            .iter()
            .map(|c| {
                let class = if c.ratio > 1.0 { "bad" } else { "good" };
                format!(
                    "<span class=\"{class}\">{} ×{:.3}</span>",
                    esc(commit_of(c.commit.as_deref())),
                    c.ratio
                )
            })
            .collect();
        let _ =
            writeln!(
            h,
            "<tr><td class=\"name\"><a href=\"#{id}-s{j}\">{}</a></td><td class=\"name\">{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
            esc(&s.name),
            esc(&s.machine),
            s.points.len(),
            last.and_then(|p| p.median_ns).map(format_ns).unwrap_or_default(),
            last.and_then(|p| Some([p.ci95_ns[0]?, p.ci95_ns[1]?]))
                .map(interval)
                .unwrap_or_else(|| "—".into()),
            cps.join(" ")
        );
    }
    h.push_str("</table>\n<div class=\"plots\">\n");
    for (j, s) in hist.series.iter().enumerate() {
        let typical = s
            .points
            .iter()
            .filter_map(|p| p.median_ns)
            .fold(0.0, f64::max);
        let unit = Unit::for_ns(typical);
        // A failed run has no figure: its place on the axis stays, empty.
        let of = |x: Option<f64>| x.map_or(f64::NAN, |x| unit.of(x));
        let items: Vec<Estimate> = s
            .points
            .iter()
            .map(|p| Estimate {
                label: commit_of(p.commit.as_deref()).to_string(),
                value: of(p.median_ns),
                ci: p.ci95_ns.map(of),
                tone: 0,
            })
            .collect();
        let marks: Vec<(usize, String)> = s
            .change_points
            .iter()
            .filter_map(|c| Some((s.start_of(c)?, format!(" ×{:.3}", c.ratio))))
            .collect();
        let _ = write!(h, "<div id=\"{id}-s{j}\" style=\"display:contents\"></div>");
        let machine = if s.machine.is_empty() {
            String::new()
        } else {
            format!(" on {}", s.machine)
        };
        figure(
            h,
            "history",
            plots::intervals(&plots::Intervals {
                title: &format!("{}{machine}", s.name),
                x_desc: "commit (oldest first)",
                y_desc: format!("median time per iteration ({})", unit.name),
                items: &items,
                reference: None,
                marks: &marks,
            }),
            &format!(
                "{} runs, from {} to {}.{}",
                s.points.len(),
                esc(s.points.first().map(|p| p.time.as_str()).unwrap_or("")),
                esc(s.points.last().map(|p| p.time.as_str()).unwrap_or("")),
                s.change_points
                    .iter()
                    .map(|c| format!(
                        " Change at {}: ratio {:.3}{}{}.",
                        esc(commit_of(c.commit.as_deref())),
                        c.ratio,
                        match c.ci95 {
                            [Some(a), Some(b)] => format!(" ({a:.3} – {b:.3})"),
                            _ => String::new(),
                        },
                        c.confidence
                            .map(|p| format!(", confidence {p:.3}"))
                            .unwrap_or_default()
                    ))
                    .collect::<String>()
            ),
        );
    }
    h.push_str("</div></section>\n");
}

/// A commit as the report names it: its first eight hex digits, or "no commit".
fn commit_of(c: Option<&str>) -> &str {
    c.map_or("no commit", short_commit)
}

pub(super) fn short_commit(c: &str) -> &str {
    match c.char_indices().nth(8) {
        Some((i, _)) if c.chars().all(|x| x.is_ascii_hexdigit()) => &c[..i],
        _ => c,
    }
}
