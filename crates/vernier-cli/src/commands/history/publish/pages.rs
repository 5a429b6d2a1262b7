//! The site's pages: the index of every series, the change points newest first, and a page
//! per series. Every text that came from a user or CI goes through [`esc`]; the data the
//! scripts read is JSON inside a `<script type="application/json">`, its `<` written as
//! `\u003c` so no text can close the element.

use super::view::{change, figure, SeriesView};
use super::Site;
use crate::history::series::Series;
use crate::history::store::MachineRow;
use crate::html::esc;
use crate::html::plots::{self, Estimate};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use vernier::analyze::Unit;

/// Points a sparkline draws at most (the series decimated to them, its newest point kept).
const SPARK_POINTS: usize = 48;

/// The longest name a plot's title shows (the page's heading shows it whole).
const PLOT_TITLE_CHARS: usize = 70;

/// The head of a page, `root` the way back to the site's top folder ("" or "../").
fn head(title: &str, root: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"{root}site.css\"></head><body>\n\
         <nav><a href=\"{root}index.html\">benchmarks</a> · <a href=\"{root}regressions.html\">\
         change points</a></nav>\n",
        esc(title)
    )
}

fn foot(root: &str) -> String {
    format!(
        "<p class=\"meta\">vernier {}</p><div id=\"tip\" role=\"status\" hidden></div>\
         <script src=\"{root}site.js\"></script></body></html>\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// A number for a `data-` attribute: empty when undefined (sorted last).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// The change's class: worse (slower) or better.
fn tone(r: f64) -> &'static str {
    if !r.is_finite() || (r - 1.0).abs() < 1e-12 {
        ""
    } else if r > 1.0 {
        "bad"
    } else {
        "good"
    }
}

/// A small line of the series' usable figures, the change points marked.
fn sparkline(v: &SeriesView) -> String {
    let pts: Vec<(usize, f64)> = v
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.usable && p.value.is_finite())
        .map(|(i, p)| (i, p.value))
        .collect();
    if pts.len() < 2 {
        return String::new();
    }
    let step = pts.len().div_ceil(SPARK_POINTS);
    let mut shown: Vec<(usize, f64)> = pts.iter().step_by(step).copied().collect();
    if shown.last() != pts.last() {
        shown.push(pts[pts.len() - 1]);
    }
    let (lo, hi) = shown
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let span = (hi - lo).max(hi.abs() * 1e-9).max(1e-300);
    let n = (v.points.len() - 1).max(1) as f64;
    let x = |i: usize| i as f64 / n * 100.0;
    let line: Vec<String> = shown
        .iter()
        .map(|&(i, y)| format!("{:.1},{:.1}", x(i), 18.0 - (y - lo) / span * 16.0))
        .collect();
    let marks: String = v
        .changes
        .iter()
        .map(|c| {
            format!(
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"0\" y2=\"20\" class=\"{1}\"/>",
                x(c.index),
                tone(c.ratio)
            )
        })
        .collect();
    format!(
        "<svg class=\"spark\" viewBox=\"0 0 100 20\" preserveAspectRatio=\"none\" \
         aria-hidden=\"true\">{marks}<polyline points=\"{}\"/></svg>",
        line.join(" ")
    )
}

/// The index: every series, with the controls the script wires (filter by name and machine,
/// sort by any column; the URL's fragment keeps them).
pub fn index(views: &[SeriesView], _site: &Site) -> String {
    let mut h = head("Vernier: benchmarks", "");
    let machines: std::collections::BTreeSet<&str> =
        views.iter().map(|v| v.machine.as_str()).collect();
    let with_changes = views.iter().filter(|v| !v.changes.is_empty()).count();
    let _ = write!(
        h,
        "<h1>Benchmarks</h1>\n<p class=\"meta\">{} series on {} machine(s); {with_changes} \
         with a change point. Each figure is the newest run's median in the unit the series is \
         judged in; changes are to the previous run and to the baseline.</p>\n\
         <form id=\"filters\" onsubmit=\"return false\"><label>name <input id=\"q\" \
         type=\"search\" placeholder=\"part of a name\"></label> <label>machine <select \
         id=\"machine\"><option value=\"\">every machine</option>",
        views.len(),
        machines.len()
    );
    for m in &machines {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", esc(m));
    }
    h.push_str(
        "</select></label> <span id=\"shown\" class=\"meta\"></span></form>\n\
         <table id=\"series\"><thead><tr>",
    );
    for (key, title, kind) in [
        ("name", "benchmark", "text"),
        ("machine", "machine", "text"),
        ("latest", "latest", "num"),
        ("prev", "since previous", "num"),
        ("base", "since baseline", "num"),
        ("", "history", ""),
        ("cp", "change points", "num"),
    ] {
        if key.is_empty() {
            let _ = write!(h, "<th>{title}</th>");
        } else {
            let _ = write!(
                h,
                "<th data-key=\"{key}\" data-kind=\"{kind}\" aria-sort=\"none\"><button \
                 type=\"button\">{title}</button></th>"
            );
        }
    }
    h.push_str("</tr></thead><tbody>\n");
    for v in views {
        let newest = v.changes.last();
        let mark = match newest {
            Some(c) => format!(
                "<span class=\"{}\">● {} {}</span>",
                tone(c.ratio),
                v.changes.len(),
                esc(&change(c.ratio))
            ),
            None => String::new(),
        };
        let _ = writeln!(
            h,
            "<tr data-name=\"{}\" data-machine=\"{}\" data-latest=\"{}\" data-prev=\"{}\" \
             data-base=\"{}\" data-cp=\"{}\"><td class=\"name\"><a href=\"s/{}.html\">{}</a></td>\
             <td class=\"name\">{}</td><td>{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td>\
             <td>{}</td><td>{mark}</td></tr>",
            esc(&v.name),
            esc(&v.machine),
            num(v.latest),
            num(v.since_previous),
            num(v.since_baseline),
            v.changes.len(),
            v.slug,
            esc(&v.name),
            esc(&v.machine),
            esc(&v.figure(v.latest)),
            tone(v.since_previous),
            change(v.since_previous),
            tone(v.since_baseline),
            change(v.since_baseline),
            sparkline(v),
        );
    }
    h.push_str("</tbody></table>\n");
    h.push_str(&foot(""));
    h
}

/// The series that moved at one commit, each with the index of its change point.
type Moved<'a> = Vec<(&'a SeriesView, usize)>;

/// Every change point, grouped by the commit it lies at, newest first: the commit range, and
/// each series that moved there with its ratio and interval.
pub fn regressions(views: &[SeriesView], site: &Site) -> String {
    let mut h = head("Vernier: change points", "");
    let mut groups: BTreeMap<Option<&str>, Moved> = BTreeMap::new();
    for v in views {
        for (k, c) in v.changes.iter().enumerate() {
            groups.entry(c.to.as_deref()).or_default().push((v, k));
        }
    }
    let mut order: Vec<(Option<&str>, Moved)> = groups.into_iter().collect();
    // Runs saved within one second share their time: the place in the series breaks the tie.
    let newest = |g: &[(&SeriesView, usize)]| {
        g.iter()
            .map(|(v, k)| (v.changes[*k].time.clone(), v.changes[*k].index))
            .max()
            .unwrap_or_default()
    };
    order.sort_by_key(|(_, g)| std::cmp::Reverse(newest(g)));
    let total: usize = order.iter().map(|(_, g)| g.len()).sum();
    let _ = writeln!(
        h,
        "<h1>Change points</h1>\n<p class=\"meta\">{total} change point(s) at {} commit(s), \
         newest first: where a series' runs shift to a new level (E-Divisive means over the \
         stored runs). A ratio above 1 is slower. The benchmarks listed under one commit moved \
         together.</p>",
        order.len()
    );
    for (commit, mut g) in order {
        g.sort_by(|a, b| {
            let (x, y) = (&a.0.changes[a.1], &b.0.changes[b.1]);
            y.ratio.total_cmp(&x.ratio).then(a.0.name.cmp(&b.0.name))
        });
        let first = &g[0].0.changes[g[0].1];
        let _ = writeln!(
            h,
            "<section class=\"cp\" data-commit=\"{}\"><h2>{} → {} <span class=\"meta\">{} · {} \
             benchmark(s) moved</span></h2>\n<table><tr><th class=\"name\">benchmark</th>\
             <th class=\"name\">machine</th><th>ratio</th><th>95 % interval</th>\
             <th>confidence</th></tr>",
            esc(commit.unwrap_or("")),
            site.commit(first.from.as_deref()),
            site.commit(commit),
            esc(&first.time),
            g.len()
        );
        for (v, k) in g {
            let c = &v.changes[k];
            let _ = writeln!(
                h,
                "<tr data-series=\"{}\"><td class=\"name\"><a href=\"s/{}.html\">{}</a></td>\
                 <td class=\"name\">{}</td><td class=\"{}\">{:.4}</td><td>{:.4} – {:.4}</td>\
                 <td>{:.3}</td></tr>",
                v.slug,
                v.slug,
                esc(&v.name),
                esc(&v.machine),
                tone(c.ratio),
                c.ratio,
                c.ci95[0],
                c.ci95[1],
                c.confidence
            );
        }
        h.push_str("</table></section>\n");
    }
    h.push_str(&foot(""));
    h
}

/// A name cut for a plot's title.
fn short_title(s: &str) -> String {
    if s.chars().count() <= PLOT_TITLE_CHARS {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(PLOT_TITLE_CHARS).collect::<String>())
    }
}

/// One plot of the series' runs in `unit`, with a focusable target on each point; the
/// targets' `data-i` index the page's JSON.
fn plot(s: &Series, v: &SeriesView, unit: Unit) -> String {
    let ats: Vec<(f64, [f64; 2])> = s
        .points
        .iter()
        .map(|p| {
            let at = Series::in_unit(p, unit);
            let ok = Series::usable_in(p, unit);
            let value = Series::median_in(p, unit)
                .filter(|_| ok)
                .unwrap_or(f64::NAN);
            (value, at.ci95_ns)
        })
        .collect();
    let (scale, name) = match unit {
        Unit::Ns => {
            let top = ats
                .iter()
                .map(|a| a.0)
                .filter(|x| x.is_finite())
                .fold(0.0, f64::max);
            let u = plots::Unit::for_ns(top);
            (u.per_ns, format!("median time per iteration ({})", u.name))
        }
        Unit::Cycles => (1.0, "median cycles per iteration".to_string()),
        Unit::Instructions => (1.0, "instructions per iteration".to_string()),
    };
    let items: Vec<Estimate> = s
        .points
        .iter()
        .zip(&ats)
        .map(|(p, (value, ci))| Estimate {
            label: p
                .commit
                .as_deref()
                .map_or("—", crate::history::short)
                .to_string(),
            value: value * scale,
            ci: ci.map(|c| {
                if value.is_finite() {
                    c * scale
                } else {
                    f64::NAN
                }
            }),
            tone: 0,
        })
        .collect();
    let marks: Vec<(usize, String)> = v
        .changes
        .iter()
        .map(|c| (c.index, format!(" ×{:.3}", c.ratio)))
        .collect();
    let title = format!("{} ({})", short_title(&v.name), unit.as_str());
    let drawn = plots::intervals_located(&plots::Intervals {
        title: &title,
        x_desc: "commit (oldest first)",
        y_desc: name,
        items: &items,
        reference: None,
        marks: &marks,
    });
    match drawn {
        Ok((svg, at)) => {
            let hits: String = at
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let (x, y) = (*p)?;
                    Some(format!(
                        "<circle class=\"hit\" cx=\"{x}\" cy=\"{y}\" r=\"7\" tabindex=\"0\" \
                         data-i=\"{i}\" data-unit=\"{}\"/>",
                        unit.as_str()
                    ))
                })
                .collect();
            let svg = svg.trim_end();
            let body = svg.strip_suffix("</svg>").unwrap_or(svg);
            format!(
                "<figure class=\"plot\" data-plot=\"series-{}\">{body}{hits}</svg>\
                 <figcaption>each run's median with its own 95 % interval, in {}; vertical lines \
                 mark change points</figcaption></figure>",
                unit.as_str(),
                unit.as_str()
            )
        }
        Err(e) => format!(
            "<p class=\"warn\">plot not drawn: {}</p>",
            esc(&format!("{e:#}"))
        ),
    }
}

/// The JSON the page's script shows on hover and focus: per run, its commit, date, figures
/// and flags.
fn points_json(s: &Series, v: &SeriesView) -> String {
    let pts: Vec<serde_json::Value> = s
        .points
        .iter()
        .zip(&v.points)
        .map(|(p, pv)| {
            serde_json::json!({
                "commit": p.commit, "branch": p.branch, "time": p.time,
                "figure": figure(v.unit, pv.value),
                "ns": p.bench.median_ns.map(vernier::report::units::format_ns),
                "cycles": p.bench.cycles_per_iter.map(|c| figure(Unit::Cycles, c)),
                "flags": p.bench.flags, "usable": pv.usable,
            })
        })
        .collect();
    serde_json::to_string(&pts)
        .unwrap_or_else(|_| "[]".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A series' page: its plots (the unit it is judged in, and cycles or ns beside it where the
/// runs have them), its change points, and every run.
pub fn series(s: &Series, v: &SeriesView, m: Option<&MachineRow>, site: &Site) -> String {
    let mut h = head(&format!("Vernier: {}", short_title(&v.name)), "../");
    let host = match m {
        Some(m) if site.with_hostnames => format!(", host {}", esc(&m.hostname)),
        _ => String::new(),
    };
    let machine = m
        .map(|m| {
            format!(
                " ({}, {} CPUs, {}{host})",
                esc(&m.cpu_model),
                m.logical_cpus,
                esc(&m.arch)
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "<h1 class=\"name\">{}</h1>\n<p class=\"meta\">machine {}{machine}; judged in {}; {} \
         run(s); latest {}</p>",
        esc(&v.name),
        esc(&v.machine),
        v.unit.as_str(),
        v.points.len(),
        esc(&v.figure(v.latest))
    );
    h.push_str("<div class=\"plots\">");
    h.push_str(&plot(s, v, v.unit));
    let other = match v.unit {
        Unit::Ns if s.points.iter().any(|p| p.bench.cycles_per_iter.is_some()) => {
            Some(Unit::Cycles)
        }
        Unit::Cycles => Some(Unit::Ns),
        _ => None,
    };
    if let Some(u) = other {
        h.push_str(&plot(s, v, u));
    }
    h.push_str("</div>\n");
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"points\">{}</script>",
        points_json(s, v)
    );
    runs_table(&mut h, v, site);
    h.push_str(&foot("../"));
    h
}

/// The change points and every run, newest first.
fn runs_table(h: &mut String, v: &SeriesView, site: &Site) {
    h.push_str("<h2>Change points</h2>\n");
    if v.changes.is_empty() {
        h.push_str("<p class=\"meta\">none: the runs hold one level.</p>\n");
    }
    for c in v.changes.iter().rev() {
        let _ = writeln!(
            h,
            "<p class=\"change\" data-commit=\"{}\">between {} and {}: <span class=\"{}\">ratio \
             {:.4}</span> (95 % interval {:.4} – {:.4}, confidence {:.3})</p>",
            esc(c.to.as_deref().unwrap_or("")),
            site.commit(c.from.as_deref()),
            site.commit(c.to.as_deref()),
            tone(c.ratio),
            c.ratio,
            c.ci95[0],
            c.ci95[1],
            c.confidence
        );
    }
    h.push_str(
        "<h2>Runs</h2>\n<table class=\"runs\"><tr><th class=\"name\">commit</th>\
         <th class=\"name\">branch</th><th class=\"name\">date</th><th>median</th>\
         <th>95 % interval</th><th class=\"name\">flags</th><th class=\"name\">raw</th></tr>\n",
    );
    for p in v.points.iter().rev() {
        let raw = match &site.artifacts_url {
            Some(t) => format!(
                "<a href=\"{}\">files</a>",
                esc(&Site::fill(
                    t,
                    &[
                        ("commit", p.commit.as_deref().unwrap_or("")),
                        ("machine", &v.machine),
                        ("run", &p.run_id.to_string())
                    ]
                ))
            ),
            None => String::new(),
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td>\
             <td>{}</td><td>{} – {}</td><td class=\"name\">{}{}</td><td class=\"name\">{raw}</td></tr>",
            site.commit(p.commit.as_deref()),
            esc(p.branch.as_deref().unwrap_or("")),
            esc(&p.time),
            esc(&v.figure(p.value)),
            esc(&v.figure(p.ci[0])),
            esc(&v.figure(p.ci[1])),
            esc(&p.flags),
            if p.usable { "" } else { " (not used)" }
        );
    }
    h.push_str("</table>\n");
}
