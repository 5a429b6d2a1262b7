//! The HTML report: one self-contained file (inline CSS, inline SVG, no script, no network)
//! for result files, comparison files and history files (`vernier report FILE… -o OUT.html`),
//! and for the run just made (`--html FILE` on demo, run and compare). A report renders what
//! the files hold; it never measures and never re-analyses. The plots are in [`plots`].

mod memory;
pub mod plots;
mod threads;

use crate::files::history::HistoryFile as History;
use crate::files::sweep::{PointBench as SweepFigure, SweepFile as Sweep};
use anyhow::{bail, Context as _, Result};
use plots::{Estimate, Kind, Point, Unit};
use serde_json::Value;
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

/// The report of a layout sweep (`vernier sweep --html`).
pub fn write_sweep(path: &Path, s: &Sweep) -> Result<()> {
    write(path, &page(&[(this_command(), Doc::Sweep(s.clone()))]))
}

/// The command line that made the run, as the report's name for it.
fn this_command() -> String {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
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

/// What one input file is.
pub enum Doc {
    Result {
        file: Box<ResultFile>,
        /// The demo's variant pairs (`comparison` member of its result file).
        comparison: Option<Box<ComparisonFile>>,
    },
    Comparison(Box<ComparisonFile>),
    History(History),
    Sweep(Sweep),
}

const KINDS: &str = "give a result file (`vernier run --json`, `vernier demo --json`), a \
                     comparison file (`vernier compare --json`), a sweep file (`vernier sweep \
                     --json`) or a history file (`vernier history --json`)";

/// Read a file and tell its kind from its top-level fields: `comparisons` (a comparison
/// file), `series` (a history), `benchmarks` (a result file, checked by the same loader as
/// `vernier analyze`).
pub fn load(path: &Path) -> Result<Doc> {
    let shown = path.display();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{shown} is not JSON (line {}, column {}: {e}); {KINDS}",
            e.line(),
            e.column()
        )
    })?;
    let Some(obj) = v.as_object() else {
        bail!("{shown}: its top level is not a JSON object; {KINDS}");
    };
    let kind = crate::files::kind(&v);
    if kind == crate::files::Kind::Comparison {
        let c: ComparisonFile = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged comparison file: {e}"))?;
        return Ok(Doc::Comparison(Box::new(c)));
    }
    if kind == crate::files::Kind::History {
        let h: History = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged history file: {e}"))?;
        h.check()
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged history file: {e}"))?;
        return Ok(Doc::History(h));
    }
    if kind == crate::files::Kind::Sweep {
        let s: Sweep = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged sweep file: {e}"))?;
        return Ok(Doc::Sweep(s));
    }
    if kind == crate::files::Kind::Result {
        let comparison = match obj.get("comparison") {
            Some(c) => Some(Box::new(
                serde_json::from_value::<ComparisonFile>(c.clone()).map_err(|e| {
                    anyhow::anyhow!("{shown}: its `comparison` member is damaged: {e}")
                })?,
            )),
            None => None,
        };
        let file = vernier::result::parse(&bytes, &shown.to_string())?;
        return Ok(Doc::Result {
            file: Box::new(file),
            comparison,
        });
    }
    if kind == crate::files::Kind::GoogleBenchmark {
        bail!(
            "{shown} is Google Benchmark's JSON: a report is made from vernier's files (compare \
             it with a vernier result file: vernier compare {shown} NEW.json --json cmp.json, \
             then report cmp.json); {KINDS}"
        );
    }
    bail!("{shown} is none of the files a report is made from (no `benchmarks`, `comparisons`, `points` or `series` field); {KINDS}")
}

/// Text for HTML: `<`, `>`, `&` and quotes escaped.
fn esc(s: &str) -> String {
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

const STYLE: &str = "
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

/// Diagnostics that every benchmark of a file carries word for word (on a machine without
/// counters, `counters-unavailable`): said once above the table, not on every row.
fn shared_diagnostics(file: &ResultFile) -> Vec<Diagnostic> {
    let [first, rest @ ..] = file.benchmarks.as_slice() else {
        return Vec::new();
    };
    if rest.is_empty() {
        return Vec::new();
    }
    first
        .diagnostics
        .iter()
        .filter(|d| rest.iter().all(|b| b.diagnostics.contains(d)))
        .cloned()
        .collect()
}

/// A benchmark's own diagnostics: those not shared by the whole file.
fn own<'a>(
    b: &'a BenchmarkResult,
    shared: &'a [Diagnostic],
) -> impl Iterator<Item = &'a Diagnostic> {
    b.diagnostics.iter().filter(move |d| !shared.contains(d))
}

fn codes(b: &BenchmarkResult, shared: &[Diagnostic]) -> String {
    own(b, shared)
        .map(|d| {
            let class = if d.code.invalidates_figure() {
                "bad"
            } else {
                "warn"
            };
            format!("<span class=\"{class}\">{}</span>", d.code.as_str())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn status_str(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Interrupted => "interrupted",
    }
}

fn result_section(
    h: &mut String,
    id: &str,
    name: &str,
    file: &ResultFile,
    pairs: Option<&ComparisonFile>,
) {
    let m = &file.machine;
    let _ = write!(
        h,
        "<section id=\"{id}\"><h2>Results: {}</h2>\n<p class=\"meta\">{} · {} logical CPUs · \
         {} {} · timer {} (resolution {}, overhead {}) · mode {} · {} benchmark(s)</p>\n",
        esc(name),
        esc(&m.cpu_model),
        m.logical_cpus,
        esc(&m.os),
        esc(&m.kernel),
        file.timer.kind.as_str(),
        format_ns(file.timer.resolution_ns),
        format_ns(file.timer.overhead_ns),
        esc(&file.mode),
        file.benchmarks.len()
    );
    let shared = shared_diagnostics(file);
    let said = shared
        .iter()
        .any(|d| d.code == vernier::diagnostic::Code::CountersUnavailable);
    if let (Some(note), false) = (
        file.harness.counters.as_ref().and_then(|c| c.note.as_ref()),
        said,
    ) {
        let _ = writeln!(h, "<p class=\"meta\">Counters: {}</p>", esc(note));
    }
    for d in &shared {
        let _ = writeln!(
            h,
            "<p class=\"meta\">Every benchmark: <code class=\"warn\">{}</code> {}</p>",
            d.code.as_str(),
            esc(&d.text())
        );
    }
    let timed = file.mode != "instructions";
    if !timed {
        instructions_summary(h, id, file, &shared);
    }
    if timed {
        // The summary on top, each name a link to its section.
        h.push_str(
            "<table class=\"summary\"><tr><th class=\"name\">benchmark</th><th>median</th>\
             <th>this run's 95 % interval</th><th>95 % interval for the next run</th>\
             <th>cycles per iteration (95 % interval)</th><th>minimum</th><th>spread</th>\
             <th>samples × iterations</th><th>warm-up</th><th>T<sub>tot</sub></th>\
             <th class=\"name\">warnings</th></tr>\n",
        );
        for (j, b) in file.benchmarks.iter().enumerate() {
            let spread = b.per_iter.sample_sigma_ns;
            let spread = if spread.is_finite() && b.per_iter.median_ns > 0.0 {
                format!("{:.1} %", 100.0 * spread / b.per_iter.median_ns)
            } else {
                "—".into()
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"name\"><a href=\"#{id}-b{j}\">{}</a>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{spread}</td><td>{} × {}</td><td>{} ({})</td><td>{:.2} s</td>\
                 <td class=\"text\">{}</td></tr>",
                esc(&b.name),
                if b.status == Status::Ok {
                    String::new()
                } else {
                    format!(" <span class=\"bad\">{}</span>", status_str(b.status))
                },
                format_ns(b.per_iter.median_ns),
                interval_both(b.per_iter.median_ns, b.per_iter.run_ci95_ns),
                interval_both(b.per_iter.median_ns, b.per_iter.ci95_ns),
                cycles(b),
                format_ns(b.per_iter.min_ns),
                b.steady_samples,
                b.iters_per_sample,
                b.warmup.class.as_str(),
                b.warmup.samples,
                b.total_s,
                codes(b, &shared)
            );
        }
        h.push_str(
            "</table>\n<p class=\"meta\">median: of the steady samples' time per iteration; \
             this run's 95 % interval: the median's, from this run's samples alone (how precisely \
             this run measured; what <code>unstable</code> judges, with the interval in cycles); \
             95 % interval for the next run: this run's, joined to the clock range of the \
             machine's recent runs and to the medians of this program's recent runs, where the \
             machine's speed file knows them; cycles per iteration: the median in cycles of the \
             core at that moment, from the core-speed probe around each sample (code bound by the \
             core reads the same cycles whatever the clock); minimum: the fastest steady sample; spread: the robust σ \
             (IQR/1.349) of one sample's time per iteration, as a share of the median; warm-up: \
             its class and the samples excluded; T<sub>tot</sub>: the benchmark's whole wall \
             time, calibration and warm-up included.</p>\n",
        );
    }
    if let Some(c) = pairs {
        comparison_section(h, &format!("{id}-pairs"), "variant pairs", c, false);
    }
    threads::scaling_plots(h, file);
    for (j, b) in file.benchmarks.iter().enumerate() {
        benchmark_section(h, &format!("{id}-b{j}"), b, &shared, timed);
    }
    h.push_str("</section>\n");
}

/// The summary of a file counted under callgrind (`--instructions`): the counts per iteration,
/// one column per event. No timing plot: under valgrind the times are the simulator's.
fn instructions_summary(h: &mut String, id: &str, file: &ResultFile, shared: &[Diagnostic]) {
    let mut events: Vec<&str> = file
        .benchmarks
        .iter()
        .filter_map(|b| b.counters.as_ref())
        .flat_map(|c| c.keys())
        .filter(|k| !k.ends_with("_ci95_lo") && !k.ends_with("_ci95_hi"))
        .map(String::as_str)
        .collect();
    events.sort_unstable();
    events.dedup();
    // Instructions first: the headline of this mode.
    events.sort_by_key(|e| *e != "instructions_per_iter");
    h.push_str(
        "<p class=\"meta\">Deterministic counts under valgrind (callgrind), per iteration; \
         no timing plot: under valgrind the times are the simulator's.</p>\n\
         <table class=\"summary\"><tr><th class=\"name\">benchmark</th>",
    );
    for e in &events {
        let _ = write!(h, "<th>{}</th>", esc(e.trim_end_matches("_per_iter")));
    }
    h.push_str("<th class=\"name\">warnings</th></tr>\n");
    for (j, b) in file.benchmarks.iter().enumerate() {
        let _ = write!(
            h,
            "<tr><td class=\"name\"><a href=\"#{id}-b{j}\">{}</a></td>",
            esc(&b.name)
        );
        for e in &events {
            let v = b.counters.as_ref().and_then(|c| c.get(*e)).copied();
            let _ = write!(
                h,
                "<td>{}</td>",
                v.map(number).unwrap_or_else(|| "—".into())
            );
        }
        let _ = writeln!(h, "<td class=\"text\">{}</td></tr>", codes(b, shared));
    }
    h.push_str("</table>\n");
}

fn benchmark_section(
    h: &mut String,
    id: &str,
    b: &BenchmarkResult,
    shared: &[Diagnostic],
    timed: bool,
) {
    let _ = writeln!(
        h,
        "<section class=\"bench\" id=\"{id}\"><h3>{} <span class=\"status\">{}</span></h3>",
        esc(&b.name),
        status_str(b.status)
    );
    if let Some(e) = &b.error {
        let _ = writeln!(h, "<p class=\"bad\">{}</p>", esc(e));
    }
    let pi = &b.per_iter;
    if !timed {
        // Counted under callgrind: the counts are the figures; its timings are valgrind's.
    } else {
        let _ = writeln!(
        h,
        "<p class=\"figures\">median <b>{}</b> (this run's 95 % interval {}; for the next run \
         {}){} · minimum {} · mean {} · σ<sub>iter</sub> = σ<sub>run</sub>/√N<sub>iter</sub> {} \
         (seed 000's σ of one iteration: the robust σ of a sample's time over the square root of \
         its iterations; not the median's uncertainty) · {} steady samples of {} iterations · warm-up {} ({} samples, {:.2} s) · \
         T<sub>tot</sub> {:.2} s · stopped: {}</p>",
        format_ns(pi.median_ns),
        interval_both(pi.median_ns, pi.run_ci95_ns),
        interval_both(pi.median_ns, pi.ci95_ns),
        match b.speed.as_ref().and_then(|s| Some((s.cycles_per_iter?, s.cycles_ci95?))) {
            Some((c, [lo, hi])) if c.is_finite() => format!(
                " · <b>{}</b> cycles per iteration (95 % interval {} – {}, {})",
                vernier::report::format_count(c),
                vernier::report::format_count(lo),
                vernier::report::format_count(hi),
                vernier::report::interval_pct(c, [lo, hi])
            ),
            _ => String::new(),
        },
        format_ns(pi.min_ns),
        format_ns(pi.mean_ns),
        format_ns(pi.sigma_ns),
        b.steady_samples,
        b.iters_per_sample,
        b.warmup.class.as_str(),
        b.warmup.samples,
        b.warmup.seconds,
        b.total_s,
        esc(&b.stop)
    );
        if !b.samples.ns.is_empty() {
            h.push_str("<div class=\"plots\">\n");
            sample_plots(h, b);
            h.push_str("</div>\n");
        }
    }
    memory::section(h, b);
    if let (Some(c), true) = (&b.counters, timed) {
        h.push_str("<table><tr><th class=\"name\">counter (per iteration)</th><th>value</th><th>95 % interval</th></tr>\n");
        for (k, v) in c
            .iter()
            .filter(|(k, _)| !k.ends_with("_ci95_lo") && !k.ends_with("_ci95_hi"))
        {
            let lo = c.get(&format!("{k}_ci95_lo"));
            let hi = c.get(&format!("{k}_ci95_hi"));
            let ci = match (lo, hi) {
                (Some(a), Some(b)) => format!("{} – {}", number(*a), number(*b)),
                _ => "—".into(),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{ci}</td></tr>",
                esc(k),
                number(*v)
            );
        }
        h.push_str("</table>\n");
    }
    if own(b, shared).next().is_some() {
        h.push_str("<ul class=\"diag\">\n");
        for d in own(b, shared) {
            let class = if d.code.invalidates_figure() {
                "bad"
            } else {
                "warn"
            };
            let _ = writeln!(
                h,
                "<li><code class=\"{class}\">{}</code> {}</li>",
                d.code.as_str(),
                esc(&d.text())
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
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

fn kind_of(p: Phase) -> Kind {
    match p {
        Phase::Calibration => Kind::Calibration,
        Phase::Warmup => Kind::Warmup,
        Phase::Measure => Kind::Measure,
    }
}

/// Times at which a column's value changes (the first sample of each new process or round).
fn changes(t_s: &[f64], col: &[u32]) -> Vec<f64> {
    (1..col.len().min(t_s.len()))
        .filter(|&i| col[i] != col[i - 1])
        .map(|i| t_s[i])
        .collect()
}

fn sample_plots(h: &mut String, b: &BenchmarkResult) {
    let s = &b.samples;
    let n = s.ns.len();
    let per_iter = |i: usize| s.ns[i] as f64 / s.iters[i].max(1) as f64;
    let over_time: Vec<Point> = (0..n)
        .map(|i| Point {
            x: s.t_s[i],
            y: per_iter(i),
            kind: kind_of(s.phase[i]),
        })
        .collect();
    let mut steady: Vec<f64> = (0..n)
        .filter(|&i| s.phase[i] == Phase::Measure)
        .map(per_iter)
        .collect();
    steady.sort_by(f64::total_cmp);
    let mut not_calibration: Vec<f64> = (0..n)
        .filter(|&i| s.phase[i] != Phase::Calibration)
        .map(per_iter)
        .collect();
    not_calibration.sort_by(f64::total_cmp);
    let typical = if b.per_iter.median_ns.is_finite() {
        b.per_iter.median_ns
    } else {
        plots::quantile(&not_calibration, 0.5)
    };
    let unit = Unit::for_ns(typical);
    // The scale stops a little above the bulk of the warm-up and of the steady samples (see
    // `plots::upper_fence`): the calibration's first samples (one iteration: the timer's cost)
    // and the scheduler's spikes would otherwise flatten everything else; they are drawn as
    // triangles on a line at the top of the scale.
    let fence = |phase: Phase| {
        let mut v: Vec<f64> = (0..n)
            .filter(|&i| s.phase[i] == phase)
            .map(per_iter)
            .collect();
        v.sort_by(f64::total_cmp);
        plots::upper_fence(&v)
    };
    let y_max = fence(Phase::Warmup).max(fence(Phase::Measure)) * 1.05;
    let y_max = if y_max.is_finite() && y_max > 0.0 {
        y_max
    } else {
        over_time.iter().map(|p| p.y).fold(0.0, f64::max)
    };
    let processes = changes(&s.t_s, &s.process);
    let rounds = changes(&s.t_s, &s.round);
    let above = over_time.iter().filter(|p| p.y > y_max * 1.0001).count();
    figure(
        h,
        "timeseries",
        plots::time_series(&plots::TimeSeries {
            title: &format!("{}: samples over time", b.name),
            points: &over_time,
            process_starts: &processes,
            round_starts: &rounds,
            y_max_ns: y_max,
            unit,
        }),
        &format!(
            "{n} samples{}; {above} above the scale (triangles on the line at its top). {}",
            if n > plots::MAX_POINTS {
                format!(
                    ", drawn as the lowest, the median and the highest of each of {} runs \
                     of consecutive samples",
                    plots::MAX_POINTS / 3
                )
            } else {
                String::new()
            },
            if processes.is_empty() {
                String::new()
            } else {
                format!("{} worker processes.", processes.len() + 1)
            }
        ),
    );
    if !steady.is_empty() {
        let hist = plots::Histogram {
            title: &format!("{}: distribution of the steady samples", b.name),
            sorted_ns: &steady,
            median_ns: b.per_iter.median_ns,
            min_ns: b.per_iter.min_ns,
            ci95_ns: b.per_iter.ci95_ns,
            run_ci95_ns: b.per_iter.run_ci95_ns,
            unit,
        };
        let (_, outside) = plots::bins(&hist);
        figure(
            h,
            "histogram",
            plots::histogram(&hist),
            &format!(
                "{} steady samples in {} bins; {outside} beyond the central {} % not shown. \
                 Median {}, minimum {}.",
                steady.len(),
                plots::HIST_BINS,
                plots::pct(1.0 - 2.0 * plots::HIST_TAIL),
                format_ns(b.per_iter.median_ns),
                format_ns(b.per_iter.min_ns)
            ),
        );
    }
    let tn: Vec<Point> = (0..n)
        .map(|i| Point {
            x: s.iters[i] as f64,
            y: s.ns[i] as f64,
            kind: kind_of(s.phase[i]),
        })
        .collect();
    if tn.iter().any(|p| p.x > 0.0 && p.y > 0.0) {
        let pi = &b.per_iter;
        figure(
            h,
            "linearity",
            plots::linearity(&plots::Linearity {
                title: &format!("{}: linearity, T against N", b.name),
                points: &tn,
                slope_ns: pi.slope_ns,
                intercept_ns: pi.intercept_ns,
            }),
            &if pi.slope_ns.is_finite() {
                format!(
                    "Fit T = a + b·N: a = {}, b = {} per iteration, R² = {:.4}.",
                    format_ns(pi.intercept_ns),
                    format_ns(pi.slope_ns),
                    pi.r2
                )
            } else {
                "No fit (too few distinct iteration counts).".into()
            },
        );
    }
    processes_plot(h, b, unit);
}

/// The median of each worker process with its interval, against the run's (when there are
/// several processes).
fn processes_plot(h: &mut String, b: &BenchmarkResult, unit: Unit) {
    if b.processes.len() > 1 {
        let items: Vec<Estimate> = b
            .processes
            .iter()
            .map(|p| Estimate {
                label: format!("#{}", p.index),
                value: unit.of(p.median_ns),
                ci: [unit.of(p.ci95_ns[0]), unit.of(p.ci95_ns[1])],
                tone: 0,
            })
            .collect();
        let pads: Vec<String> = b
            .processes
            .iter()
            .map(|p| format!("#{} {} B", p.index, p.env_pad_bytes))
            .collect();
        figure(
            h,
            "processes",
            plots::intervals(&plots::Intervals {
                title: &format!("{}: median of each worker process", b.name),
                x_desc: "worker process",
                y_desc: format!("median time per iteration ({})", unit.name),
                items: &items,
                reference: Some((
                    unit.of(b.per_iter.median_ns),
                    [
                        unit.of(b.per_iter.run_ci95_ns[0]),
                        unit.of(b.per_iter.run_ci95_ns[1]),
                    ],
                    "all processes: median and this run's 95 % interval",
                )),
                marks: &[],
            }),
            &format!(
                "Each process with its 95 % interval; environment padding: {}.",
                pads.join(", ")
            ),
        );
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

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "good",
        Verdict::Slower => "bad",
        Verdict::Inconclusive => "warn",
        Verdict::NoChange => "",
    }
}

fn comparison_section(h: &mut String, id: &str, name: &str, c: &ComparisonFile, top: bool) {
    let mode = match c.mode {
        vernier::stats::compare::Mode::Paired => "paired",
        vernier::stats::compare::Mode::Unpaired => "unpaired",
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
    if !c.comparisons.is_empty() {
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
            x.verdict.as_str(),
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
    h.push_str("</section>\n");
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

/// A layout sweep: per benchmark, its median at each environment padding with the interval,
/// and the swing and period the sweep found.
fn sweep_section(h: &mut String, id: &str, name: &str, s: &Sweep) {
    let _ = writeln!(
        h,
        "<section id=\"{id}\"><h2>Layout sweep: {}</h2>\n<p class=\"meta\">environment padding \
         {}–{} bytes in steps of {}, {} padding(s) measured, ASLR {}; one worker process per \
         padding (seed 003's experiment).</p>",
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

fn history_section(h: &mut String, id: &str, name: &str, hist: &History) {
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

fn short_commit(c: &str) -> &str {
    match c.char_indices().nth(8) {
        Some((i, _)) if c.chars().all(|x| x.is_ascii_hexdigit()) => &c[..i],
        _ => c,
    }
}

#[cfg(test)]
mod tests {
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
