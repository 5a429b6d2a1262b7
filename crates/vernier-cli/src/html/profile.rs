//! A profile's section of the report: per benchmark its top functions and its flame graph
//! (inferno's SVG, drawn without its script: the page runs no code), and for two profiles of
//! the same benchmarks (`compare --profile`) a differential flame graph, red where NEW spends
//! more instructions than OLD, blue where less.

use super::{esc, figure};
use crate::files::profile::{BenchProfile, ProfileFile};
use anyhow::{Context as _, Result};
use std::fmt::Write as _;

/// The flame graph of folded stacks (`a;b;c count` or, differential, `a;b;c before after`),
/// as SVG without script, fit to be inlined in the page.
pub fn flame_svg(folded: &[String], title: &str, count_name: &str) -> Result<String> {
    if folded.is_empty() {
        anyhow::bail!("no stack to draw");
    }
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.into();
    opt.count_name = count_name.into();
    opt.no_javascript = true;
    opt.image_width = Some(960);
    opt.min_width = 0.1;
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, folded.iter().map(String::as_str), &mut out)
        .context("the flame graph could not be drawn")?;
    let svg = String::from_utf8(out).context("the flame graph is not UTF-8")?;
    // Inlined: no XML prolog or document type inside HTML; and no script (inferno keeps a few
    // variables and an `onload` for its interactive version): the page runs no code.
    let start = svg.find("<svg").unwrap_or(0);
    let mut svg = svg[start..].to_string();
    while let (Some(a), Some(b)) = (svg.find("<script"), svg.find("</script>")) {
        if b < a {
            break;
        }
        svg.replace_range(a..b + "</script>".len(), "");
    }
    Ok(svg.replace(" onload=\"init(evt)\"", ""))
}

/// `OLD` and `NEW` stacks of one benchmark as differential folded lines (`stack old new`).
pub fn differential_folded(old: &[String], new: &[String]) -> Result<Vec<String>> {
    let join = |v: &[String]| v.join("\n") + "\n";
    let mut out = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        join(old).as_bytes(),
        join(new).as_bytes(),
        &mut out,
    )
    .context("the differential stacks could not be made")?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(String::from)
        .collect())
}

/// The table of a benchmark's top `top` functions by own instructions.
fn top_table(h: &mut String, p: &ProfileFile, b: &BenchProfile, top: usize) {
    let ir = p.event("Ir").unwrap_or(0);
    let total = b
        .samples
        .map(|n| n as f64)
        .or(b.instructions_per_iter)
        .unwrap_or(0.0);
    let _ = writeln!(
        h,
        "<table class=\"summary\"><tr><th class=\"name\">function</th><th>own %</th>\
         <th>total %</th><th>{}</th></tr>",
        if b.samples.is_some() {
            "own samples (own % ± 95 %)"
        } else {
            "own instructions / iter"
        }
    );
    for f in b.functions.iter().take(top) {
        let own = f.own.get(ir).copied().unwrap_or(0.0);
        let inc = f.inclusive.get(ir).copied().unwrap_or(0.0);
        let pct = |x: f64| {
            if total > 0.0 {
                format!("{:.1}", 100.0 * x / total)
            } else {
                "—".into()
            }
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"name\"><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&crate::files::profile::brief(&f.name)),
            pct(own),
            pct(inc),
            if let Some(n) = b.samples {
                format!(
                    "{own:.0} (± {:.1})",
                    100.0 * crate::files::profile::share_half_width(own, n)
                )
            } else {
                format!("{own:.2}")
            }
        );
    }
    h.push_str("</table>\n");
}

/// The table of a counted profile's `top` costliest source lines (none without line
/// information).
fn lines_table(h: &mut String, p: &ProfileFile, b: &BenchProfile, top: usize) {
    let lines = b.costliest_lines(p.event("Ir").unwrap_or(0), top);
    if lines.is_empty() {
        return;
    }
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"name\">source line</th>\
         <th class=\"name\">function</th><th>own instructions / iter</th></tr>\n",
    );
    for (l, own) in lines {
        let _ = writeln!(
            h,
            "<tr><td class=\"name\"><code>{}:{}</code></td><td class=\"name\"><code>{}</code>\
             </td><td>{:.2}</td></tr>",
            esc(&l.file),
            l.line,
            esc(&crate::files::profile::brief(&l.function)),
            own
        );
    }
    h.push_str("</table>\n");
}

pub(super) fn profile_section(h: &mut String, id: &str, name: &str, p: &ProfileFile) {
    let _ = writeln!(
        h,
        "<section id=\"{id}\"><h2>Profile: {}</h2>\n<p class=\"meta\">{} — {}</p>",
        esc(name),
        esc(&p.program),
        if p.profile == crate::files::profile::EXACT {
            "counted under callgrind over the measured loop only, per iteration (two counts \
             differenced: what the loop pays once per call cancels)."
        } else {
            "sampled with perf; only the samples whose call stack holds the measured loop."
        }
    );
    for b in &p.benchmarks {
        let _ = writeln!(h, "<section class=\"bench\"><h3>{}</h3>", esc(&b.name));
        if let Some(e) = &b.error {
            let _ = writeln!(
                h,
                "<p class=\"warn\">not profiled: {}</p></section>",
                esc(e)
            );
            continue;
        }
        if let Some(n) = b.samples {
            let _ = writeln!(
                h,
                "<p class=\"figures\">{n} samples of {} inside the measured loop</p>",
                esc(&p.events.join(", "))
            );
            top_table(h, p, b, 12);
            figure(
                h,
                "flamegraph",
                flame_svg(&b.folded, &b.name, "samples"),
                "flame graph: samples by call stack",
            );
            h.push_str("</section>\n");
            continue;
        }
        let _ = writeln!(
            h,
            "<p class=\"figures\">{} instructions / iter · estimated {} cycles / iter (L1 hits \
             + 5 × last-level hits + 35 × memory accesses)</p>",
            b.instructions_per_iter
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "—".into()),
            b.estimated_cycles_per_iter
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "—".into()),
        );
        top_table(h, p, b, 12);
        lines_table(h, p, b, 12);
        figure(
            h,
            "flamegraph",
            flame_svg(&b.folded, &b.name, "instructions"),
            &format!(
                "flame graph: instructions for {} iterations, by call stack",
                b.per
            ),
        );
        h.push_str("</section>\n");
    }
    h.push_str("</section>\n");
}

/// Per benchmark of both profiles, its differential flame graph: each stack's width is NEW's
/// instructions, its colour how it changed from OLD (red: more, blue: fewer). Sampled
/// profiles come with their folded counts already in picoseconds per iteration
/// (`files::profile::folded_ps_per_iter`), so that both sides draw to one scale.
pub(super) fn differential_section(h: &mut String, id: &str, old: &ProfileFile, new: &ProfileFile) {
    let sampled = new.profile == crate::files::profile::SAMPLED;
    let (how, what) = if sampled {
        (
            "sampled with perf over the measured loop, each side's samples weighed by its \
             median time per iteration",
            "time",
        )
    } else {
        (
            "counted under callgrind over the measured loop",
            "instructions",
        )
    };
    let _ = writeln!(
        h,
        "<section id=\"{id}\"><h2>Differential profiles</h2>\n<p class=\"meta\">OLD {} → NEW \
         {}: {how}; each frame as wide as NEW's {what}, red where NEW spends more of it than \
         OLD, blue where less.</p>",
        esc(&old.program),
        esc(&new.program)
    );
    for n in &new.benchmarks {
        let Some(o) = old.benchmarks.iter().find(|b| b.name == n.name) else {
            continue;
        };
        let _ = writeln!(h, "<section class=\"bench\"><h3>{}</h3>", esc(&n.name));
        let svg = differential_folded(&o.folded, &n.folded)
            .and_then(|d| flame_svg(&d, &n.name, if sampled { "ps" } else { "instructions" }));
        let caption = if sampled {
            "differential flame graph: picoseconds per iteration".to_string()
        } else {
            format!(
                "differential flame graph: instructions for {} iterations",
                n.per
            )
        };
        figure(h, "flamegraph-diff", svg, &caption);
        h.push_str("</section>\n");
    }
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flame_graph_has_a_frame_per_function_and_no_script() {
        let folded = vec![
            "loop 8".to_string(),
            "loop;heavy 900".into(),
            "loop;light 300".into(),
        ];
        let svg = flame_svg(&folded, "mix", "instructions").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        for f in ["loop", "heavy", "light"] {
            assert!(svg.contains(&format!(">{f}<")), "{f}");
        }
        assert!(
            !svg.contains("<script") && !svg.contains("onload="),
            "{svg}"
        );
        let d = differential_folded(&folded, &["loop 8".into(), "loop;heavy 1200".into()]).unwrap();
        assert!(d.contains(&"loop;heavy 900 1200".to_string()), "{d:?}");
        assert!(flame_svg(&d, "mix", "instructions")
            .unwrap()
            .contains("heavy"));
        assert!(flame_svg(&[], "x", "y").is_err());
    }
}
