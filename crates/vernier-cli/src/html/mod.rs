//! The HTML report: one self-contained file (inline CSS, inline SVG, no script, no network)
//! for result files, comparison files and history files (`vernier report FILE… -o OUT.html`),
//! and for the run just made (`--html FILE` on demo, run and compare). A report renders what
//! the files hold; it never measures and never re-analyses (`crate::files::load` reads them).
//! Each kind of file has its section (`result.rs` with a benchmark's plots in `samples.rs`,
//! `comparison.rs`, `sweep.rs`, `history.rs`); the plots are in [`plots`].

mod comparison;
mod complexity;
mod history;
mod memory;
pub mod plots;
pub mod profile;
mod result;
mod samples;
mod sweep;
mod threads;

use crate::files::load::Doc;
use comparison::comparison_section;
use history::history_section;
use profile::profile_section;
use result::result_section;
use sweep::sweep_section;

use crate::files::history::HistoryFile as History;
use crate::files::sweep::{PointBench as SweepFigure, SweepFile as Sweep};
use anyhow::{Context as _, Result};
use plots::{Estimate, Kind, Point, Unit};
use std::fmt::Write as _;
use std::path::Path;
use vernier::analyze::pairs::Comparison;
use vernier::diagnostic::Diagnostic;
use vernier::report::units::format_ns;
use vernier::result::comparison::ComparisonFile;
use vernier::result::{BenchmarkResult, ResultFile, Status};
use vernier::samples::Phase;
use vernier::stats::compare::Verdict;

/// The report of a run just made: its result file and, for the demo, its variant pairs.
pub fn write_result(path: &Path, file: &ResultFile, pairs: Option<&ComparisonFile>) -> Result<()> {
    let doc = Doc::Result {
        file: Box::new(file.clone()),
        comparison: pairs.cloned().map(Box::new),
    };
    write(path, &page(&[(this_command(), doc)]))
}

/// The report of a comparison just made.
pub fn write_comparison(path: &Path, file: &ComparisonFile) -> Result<()> {
    let doc = Doc::Comparison(Box::new(file.clone()));
    write(path, &page(&[(this_command(), doc)]))
}

/// The report of a history (`vernier history --html`): what `history --json` prints.
pub fn write_history(path: &Path, h: &History) -> Result<()> {
    h.check().map_err(|e| anyhow::anyhow!("{e}"))?;
    write(path, &page(&[(this_command(), Doc::History(h.clone()))]))
}

/// The report of a comparison just made, with the differential flame graphs of its two
/// programs' profiles (`compare --profile --html`).
pub fn write_comparison_profiled(
    path: &Path,
    file: &ComparisonFile,
    old: &crate::files::profile::ProfileFile,
    new: &crate::files::profile::ProfileFile,
) -> Result<()> {
    let doc = Doc::Comparison(Box::new(file.clone()));
    let mut html = page(&[(this_command(), doc)]);
    let mut extra = String::new();
    if new.profile == crate::files::profile::SAMPLED {
        // Samples to picoseconds per iteration: each side's share times its median.
        let scaled =
            |p: &crate::files::profile::ProfileFile,
             median: fn(&vernier::analyze::pairs::Comparison) -> f64| {
                let mut p = p.clone();
                for b in &mut p.benchmarks {
                    if let Some(c) = file.comparisons.iter().find(|c| c.name == b.name) {
                        b.folded = crate::files::profile::folded_ps_per_iter(b, median(c));
                    }
                }
                p
            };
        let (o, n) = (
            scaled(old, |c| c.old_median_ns),
            scaled(new, |c| c.new_median_ns),
        );
        profile::differential_section(&mut extra, "d0", &o, &n);
    } else {
        profile::differential_section(&mut extra, "d0", old, new);
    }
    let at = html.rfind("</body>").unwrap_or(html.len());
    html.insert_str(at, &extra);
    write(path, &html)
}

/// The report of a run just made with `--profile`: its result and its profile.
pub fn write_result_profiled(
    path: &Path,
    file: &ResultFile,
    pairs: Option<&ComparisonFile>,
    profile: &crate::files::profile::ProfileFile,
) -> Result<()> {
    let doc = Doc::Result {
        file: Box::new(file.clone()),
        comparison: pairs.cloned().map(Box::new),
    };
    let cmd = this_command();
    write(
        path,
        &page(&[
            (cmd.clone(), doc),
            (cmd, Doc::Profile(Box::new(profile.clone()))),
        ]),
    )
}

/// The report of a profile (`vernier profile --html`).
pub fn write_profile(path: &Path, p: &crate::files::profile::ProfileFile) -> Result<()> {
    write(
        path,
        &page(&[(this_command(), Doc::Profile(Box::new(p.clone())))]),
    )
}

/// The report of a layout sweep (`vernier sweep --html`).
pub fn write_sweep(path: &Path, s: &Sweep) -> Result<()> {
    write(path, &page(&[(this_command(), Doc::Sweep(s.clone()))]))
}

/// The command line that made the run, as the report's name for it (a store's password
/// hidden).
fn this_command() -> String {
    let args = crate::args::redact_args(
        std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned()),
    );
    format!("vernier {}", args.join(" "))
}

/// After a run whose result is already kept: write its report, or say why it could not be
/// written (the run's figures are not lost for it). Returns whether it was written.
pub fn write_or_warn(path: &Path, what: Result<()>, json: Option<&Path>) -> bool {
    match what {
        Ok(()) => {
            println!("HTML report written to {}", path.display());
            true
        }
        Err(e) => {
            let kept = match json {
                Some(j) => format!("the result is kept in {}", j.display()),
                None => "the figures above are the run's result".into(),
            };
            eprintln!("vernier: error: --html {}: {e:#}; {kept}", path.display());
            false
        }
    }
}

/// Write a report's page to `path`, as a whole or not at all.
pub fn write(path: &Path, html: &str) -> Result<()> {
    vernier::result::write_atomic(path, html.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Text for HTML: `<`, `>`, `&` and quotes escaped (safe in text and in quoted attributes).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1320px;padding:16px 24px;color:#222;background:#fff}
h1{font-size:1.6em;margin:.2em 0}h2{border-bottom:2px solid #1f77b4;padding-bottom:.2em;margin-top:1.6em}
h3{margin:1.4em 0 .3em;font-size:1.2em}h3 .status{font-size:.75em;font-weight:normal;color:#666}
.meta{color:#555;font-size:.9em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top}
th{background:#f0f4f8}td.name,th.name,td.text{text-align:left}
td.name a{text-decoration:none;color:#1f5f9f}
.warn{color:#b35c00}.bad{color:#c01e1e;font-weight:bold}.good{color:#28963c;font-weight:bold}
.plots{display:flex;flex-wrap:wrap;gap:8px}
figure.plot{margin:0;border:1px solid #ddd;flex:1 1 600px;max-width:640px}
figure.plot.wide{max-width:900px;flex-basis:100%}
td{white-space:nowrap}td.text{white-space:normal}
table.summary{width:100%}table.summary th,table.summary td{white-space:normal}table.summary td.name{overflow-wrap:anywhere;min-width:8em}
figure.plot svg{width:100%;height:auto;display:block}
figcaption{font-size:.8em;color:#555;padding:2px 8px 6px}
ul.diag li{margin:.3em 0}code{background:#f3f3f3;padding:0 3px}
.figures{color:#333;margin:.2em 0}
section.bench{border-top:1px solid #e5e5e5}
";

pub fn page(docs: &[(String, Doc)]) -> String {
    let mut h = String::new();
    let title = match docs {
        [(name, _)] => format!("Vernier report: {name}"),
        _ => "Vernier report".into(),
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n\
         <p class=\"meta\">vernier {} · every figure with its 95 % interval, as the files \
         hold it; the plots of samples and pairs are drawn from the raw samples the files \
         keep.</p>\n",
        esc(&title),
        esc(&title),
        env!("CARGO_PKG_VERSION")
    );
    for (i, (name, doc)) in docs.iter().enumerate() {
        let id = format!("f{i}");
        match doc {
            Doc::Result { file, comparison } => {
                result_section(&mut h, &id, name, file, comparison.as_deref())
            }
            Doc::Comparison(c) => comparison_section(&mut h, &id, name, c, true),
            Doc::History(hist) => history_section(&mut h, &id, name, hist),
            Doc::Sweep(s) => sweep_section(&mut h, &id, name, s),
            Doc::Profile(p) => profile_section(&mut h, &id, name, p),
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// A plot in its figure, or the reason it could not be drawn (the rest of the report stands).
fn figure(h: &mut String, kind: &str, svg: Result<String>, caption: &str) {
    match svg {
        Ok(svg) => {
            let wide = if kind == "comparisons" { " wide" } else { "" };
            let _ = writeln!(
                h,
                "<figure class=\"plot{wide}\" data-plot=\"{kind}\">{}<figcaption>{caption}</figcaption></figure>",
                svg.trim()
            );
        }
        Err(e) => {
            let _ = writeln!(
                h,
                "<p class=\"warn\">{kind} plot not drawn: {}</p>",
                esc(&format!("{e:#}"))
            );
        }
    }
}

/// An interval and, after it, how far each side reaches from `median` (the terminal's cell:
/// "±0.13%", or both sides when they differ).
fn interval_both(median: f64, ci: [f64; 2]) -> String {
    match interval(ci).as_str() {
        "—" => "—".into(),
        i => format!("{i} ({})", vernier::report::interval_pct(median, ci)),
    }
}

/// The median in cycles of the core at the time with its 95 % interval ("4.008 (4.003 –
/// 4.014)"), "—" when the probe did not measure the core's speed.
fn cycles(b: &BenchmarkResult) -> String {
    let f = vernier::report::format_count;
    match b
        .speed
        .as_ref()
        .and_then(|s| Some((s.cycles_per_iter?, s.cycles_ci95?)))
    {
        Some((c, [lo, hi])) if c.is_finite() => format!("{} ({} – {})", f(c), f(lo), f(hi)),
        _ => "—".into(),
    }
}

fn interval(ci: [f64; 2]) -> String {
    if ci[0].is_finite() && ci[1].is_finite() {
        format!("{} – {}", format_ns(ci[0]), format_ns(ci[1]))
    } else {
        "—".into()
    }
}

/// A counter figure: 4 significant digits, no exponent for everyday magnitudes.
fn number(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if x.abs() >= 1e6 || (x != 0.0 && x.abs() < 1e-3) {
        format!("{x:.3e}")
    } else {
        let digits = (3 - x.abs().log10().floor().max(0.0) as i32).max(0) as usize;
        format!("{x:.digits$}")
    }
}

fn tone(v: Verdict) -> u8 {
    match v {
        Verdict::Faster => 1,
        Verdict::Slower => 2,
        Verdict::Inconclusive => 3,
        Verdict::NoChange => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::history::short_commit;
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }

    #[test]
    fn commits_are_shortened_only_when_they_are_hashes() {
        assert_eq!(short_commit("0123456789abcdef"), "01234567");
        assert_eq!(
            short_commit("v1.2-release-candidate"),
            "v1.2-release-candidate"
        );
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(number(1.23456), "1.235");
        assert_eq!(number(123.456), "123.5");
        assert_eq!(number(2.5e7), "2.500e7");
    }

    #[test]
    fn a_history_with_a_failed_run_is_drawn_with_a_gap() {
        let h: History = serde_json::from_value(serde_json::json!({"series": [{"name": "maybe",
            "machine": "m1", "points": [
                {"commit": "c1", "time": "t1", "median_ns": 16.0, "ci95_ns": [15.9, 16.1]},
                {"commit": "c2", "time": "t2", "median_ns": null, "ci95_ns": [null, null],
                 "status": "failed"},
                {"commit": null, "time": "t3", "median_ns": 17.0, "ci95_ns": [16.9, 17.1]}],
            "change_points": [{"commit": null, "ratio": 1.06, "ci95": [1.05, 1.07],
                               "confidence": 0.99, "index": 2}]}]}))
        .unwrap();
        h.check().unwrap();
        let page = page(&[("history".into(), Doc::History(h))]);
        assert!(!page.contains("NaN"));
        // The newest figure is the newest run that has one; the change point is marked.
        assert!(
            page.contains("17.00 ns") && page.contains("no commit ×1.060"),
            "{page}"
        );
    }
}
