//! A comparison file's section of the report: the verdicts, the forest of ratios, and each
//! benchmark's pairs.

use super::*;

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "good",
        Verdict::Slower => "bad",
        Verdict::Inconclusive => "warn",
        Verdict::NoChange => "",
    }
}

pub(super) fn comparison_section(
    h: &mut String,
    id: &str,
    name: &str,
    c: &ComparisonFile,
    top: bool,
) {
    comparison_head(h, id, name, c, top);
    if !c.comparisons.is_empty() {
        forest(h, c);
    }
    comparison_table(h, id, c);
    pairs_plots(h, id, c);
    h.push_str("</section>\n");
}

/// The section's opening: its title and the line of what was compared and how.
fn comparison_head(h: &mut String, id: &str, name: &str, c: &ComparisonFile, top: bool) {
    let mode = match c.mode {
        vernier::stats::compare::Mode::Paired => "paired",
        vernier::stats::compare::Mode::Unpaired => "unpaired",
        vernier::stats::compare::Mode::Instructions => "instruction counts",
    };
    let tag = if top { "h2" } else { "h3" };
    let _ = write!(
        h,
        "<section id=\"{id}\"><{tag}>Comparison: {}</{tag}>\n<p class=\"meta\">OLD {} · NEW {} · \
         {mode} · threshold ±{} % · p-values adjusted ({}) at α = {}{}</p>\n",
        esc(name),
        esc(if c.old.is_empty() { "—" } else { &c.old }),
        esc(if c.new.is_empty() { "—" } else { &c.new }),
        plots::pct(c.threshold),
        esc(&c.correction),
        c.alpha,
        match (c.geomean_ratio, c.geomean_ci95) {
            (Some(g), Some([lo, hi])) =>
                format!(" · geometric mean of the ratios {g:.4} ({lo:.4} – {hi:.4})"),
            (Some(g), None) => format!(" · geometric mean of the ratios {g:.4}"),
            _ => String::new(),
        }
    );
}

/// The forest of ratios: each comparison's ratio with its interval against the threshold.
fn forest(h: &mut String, c: &ComparisonFile) {
    let rows: Vec<Estimate> = c
        .comparisons
        .iter()
        .map(|x| Estimate {
            label: x.name.clone(),
            value: x.ratio,
            ci: x.ci95,
            tone: tone(x.verdict),
        })
        .collect();
    figure(
        h,
        "comparisons",
        plots::forest(
            "Ratio NEW/OLD with its 95 % interval against the threshold",
            &rows,
            c.threshold,
        ),
        &format!(
            "Dots: the ratio; bars: its 95 % interval. The green band is 1 ± the threshold \
             ({} %): an interval inside it is no-change. Green: faster, red: slower, orange: \
             inconclusive (the interval straddles the threshold's edge), blue: no change.",
            plots::pct(c.threshold)
        ),
    );
}

/// The table of comparisons (each name a link to its pairs' plot, when it has one), the
/// benchmarks not compared and those only one side has.
fn comparison_table(h: &mut String, id: &str, c: &ComparisonFile) {
    h.push_str(
        "<table><tr><th class=\"name\">benchmark</th><th>ratio NEW/OLD</th><th>95 % interval</th>\
         <th>p</th><th class=\"name\">verdict</th><th>OLD median</th><th>NEW median</th>\
         <th>smallest detectable change</th><th>pairs</th><th>time</th></tr>\n",
    );
    for (j, x) in c.comparisons.iter().enumerate() {
        let link = if x.pair_samples.is_some() || !x.process_pairs.is_empty() {
            format!("<a href=\"#{id}-c{j}\">{}</a>", esc(&x.name))
        } else {
            esc(&x.name)
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"name\">{link}</td><td>{:.4}</td><td>{:.4} – {:.4}</td><td>{:.2e}</td>\
             <td class=\"name {}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2} s</td></tr>",
            x.ratio,
            x.ci95[0],
            x.ci95[1],
            x.p_value,
            verdict_class(x.verdict),
            match vernier::report::compare::below_threshold(x, c.threshold) {
                Some(words) => format!("{}: {}", x.verdict.as_str(), esc(&words)),
                None => x.verdict.as_str().to_string(),
            },
            format_ns(x.old_median_ns),
            format_ns(x.new_median_ns),
            x.smallest_detectable
                .map(|d| format!("{} %", plots::pct(d)))
                .unwrap_or_else(|| "—".into()),
            x.pairs,
            x.seconds
        );
    }
    for f in &c.failed {
        let _ = writeln!(
            h,
            "<tr><td class=\"name\">{}</td><td colspan=\"9\" class=\"text bad\">not compared: {}</td></tr>",
            esc(&f.name),
            esc(&f.error)
        );
    }
    h.push_str("</table>\n");
    if !c.only_old.is_empty() || !c.only_new.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"meta\">Not compared: only in OLD: {}; only in NEW: {}.</p>",
            esc(&c.only_old.join(", ")),
            esc(&c.only_new.join(", "))
        );
    }
}

/// Each comparison's pairs: their ratios against time, with where each process pair starts.
fn pairs_plots(h: &mut String, id: &str, c: &ComparisonFile) {
    let mut any = false;
    for (j, x) in c.comparisons.iter().enumerate() {
        if let Some((points, starts)) = pair_points(x) {
            if !any {
                h.push_str("<div class=\"plots\">\n");
                any = true;
            }
            let _ = write!(h, "<div id=\"{id}-c{j}\" style=\"display:contents\"></div>");
            figure(
                h,
                "pairs",
                plots::pair_ratios(&plots::PairRatios {
                    title: &format!("{}: {} ({:.4})", x.name, x.verdict.as_str(), x.ratio),
                    points: &points,
                    ratio: x.ratio,
                    ci95: x.ci95,
                    threshold: c.threshold,
                    process_starts: &starts,
                }),
                &format!(
                    "{} pairs ({} cut as warm-up){}; each dot is one OLD sample and the NEW \
                     sample taken next to it.",
                    points.len(),
                    points.iter().filter(|p| p.kind == Kind::Warmup).count(),
                    if starts.is_empty() {
                        String::new()
                    } else {
                        format!(", in {} process pairs (vertical lines)", starts.len() + 1)
                    }
                ),
            );
        }
    }
    if any {
        h.push_str("</div>\n");
    }
}

/// Each pair's ratio NEW/OLD against time, and where each process pair starts: from the
/// in-process pairs, or from the process pairs laid end to end.
fn pair_points(c: &Comparison) -> Option<(Vec<Point>, Vec<f64>)> {
    let mut points = Vec::new();
    let mut starts = Vec::new();
    let mut offset = 0.0;
    let sets: Vec<&vernier::analyze::pairs::PairSamples> = match &c.pair_samples {
        Some(p) => vec![p],
        None => c
            .process_pairs
            .iter()
            .filter_map(|p| p.samples.as_ref())
            .collect(),
    };
    for (k, s) in sets.iter().enumerate() {
        if k > 0 {
            starts.push(offset);
        }
        let n = s.old_ns.len().min(s.new_ns.len()).min(s.t_s.len());
        let t0 = s.t_s.first().copied().unwrap_or(0.0);
        for i in 0..n {
            if s.old_ns[i] > 0.0 && s.new_ns[i] > 0.0 {
                points.push(Point {
                    x: offset + s.t_s[i] - t0,
                    y: s.new_ns[i] / s.old_ns[i],
                    kind: if i < s.first_steady {
                        Kind::Warmup
                    } else {
                        Kind::Measure
                    },
                });
            }
        }
        offset += s.t_s.get(n.saturating_sub(1)).copied().unwrap_or(t0) - t0;
    }
    (!points.is_empty()).then_some((points, starts))
}
