//! A result file's section of the report: the run's table, its diagnostics, and one section
//! per benchmark (its figures, memory and plots).

use super::samples::sample_plots;
use super::*;

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

pub(super) fn result_section(
    h: &mut String,
    id: &str,
    name: &str,
    file: &ResultFile,
    pairs: Option<&ComparisonFile>,
) {
    result_head(h, id, name, file);
    let shared = shared_diagnostics(file);
    shared_notes(h, file, &shared);
    let timed = file.mode != "instructions";
    if timed {
        timed_summary(h, id, file, &shared);
    } else {
        instructions_summary(h, id, file, &shared);
    }
    if let Some(c) = pairs {
        comparison_section(h, &format!("{id}-pairs"), "variant pairs", c, false);
    }
    threads::scaling_plots(h, file);
    super::complexity::complexity_plots(h, file);
    for (j, b) in file.benchmarks.iter().enumerate() {
        benchmark_section(h, &format!("{id}-b{j}"), b, &shared, timed);
    }
    h.push_str("</section>\n");
}

/// The section's opening: its title and the line of the machine, the timer and the mode.
fn result_head(h: &mut String, id: &str, name: &str, file: &ResultFile) {
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
}

/// What holds for every benchmark of the file, said once above the table: the counters' note
/// and the diagnostics all of them carry.
fn shared_notes(h: &mut String, file: &ResultFile, shared: &[Diagnostic]) {
    let said = shared
        .iter()
        .any(|d| d.code == vernier::diagnostic::Code::CountersUnavailable);
    if let (Some(note), false) = (
        file.harness.counters.as_ref().and_then(|c| c.note.as_ref()),
        said,
    ) {
        let _ = writeln!(h, "<p class=\"meta\">Counters: {}</p>", esc(note));
    }
    for d in shared {
        let _ = writeln!(
            h,
            "<p class=\"meta\">Every benchmark: <code class=\"warn\">{}</code> {}</p>",
            d.code.as_str(),
            esc(&d.text())
        );
    }
}

/// The summary of a timed file: one row per benchmark (its name a link to its section) with
/// its figures, and the legend of the columns.
fn timed_summary(h: &mut String, id: &str, file: &ResultFile, shared: &[Diagnostic]) {
    // A rate beside the median where a benchmark declared its work per iteration (none
    // for a body the compiler removed).
    let rates = file.benchmarks.iter().any(|b| b.throughput.is_some());
    let rate = |b: &vernier::result::BenchmarkResult| match (rates, b.throughput) {
        (false, _) => String::new(),
        (true, Some(t)) if !b.removed() => format!("<td>{}</td>", t.rate(b.per_iter.median_ns)),
        (true, _) => "<td>—</td>".into(),
    };
    h.push_str(if rates {
        "<table class=\"summary\"><tr><th class=\"name\">benchmark</th><th>median</th><th>rate</th>"
    } else {
        "<table class=\"summary\"><tr><th class=\"name\">benchmark</th><th>median</th>"
    });
    h.push_str(
        "<th>this run's 95 % interval</th><th>95 % interval for the next run</th>\
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
            "<tr><td class=\"name\"><a href=\"#{id}-b{j}\">{}</a>{}</td><td>{}</td>{}<td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{spread}</td><td>{} × {}</td><td>{} ({})</td><td>{:.2} s</td>\
             <td class=\"text\">{}</td></tr>",
            esc(&b.name),
            if b.status == Status::Ok {
                String::new()
            } else {
                format!(" <span class=\"bad\">{}</span>", status_str(b.status))
            },
            format_ns(b.per_iter.median_ns),
            rate(b),
            interval_both(b.per_iter.median_ns, b.per_iter.run_ci95_ns),
            interval_both(b.per_iter.median_ns, b.per_iter.ci95_ns),
            cycles(b),
            format_ns(b.per_iter.min_ns),
            b.steady_samples,
            b.iters_per_sample,
            b.warmup.class.as_str(),
            b.warmup.samples,
            b.total_s,
            codes(b, shared)
        );
    }
    h.push_str(
        "</table>\n<p class=\"meta\">median: of the steady samples' time per iteration; \
         this run's 95 % interval: the median's, from this run's samples alone (how precisely \
         this run measured; what <code>unstable</code> judges, with the interval in cycles); \
         95 % interval for the next run: this run's, joined to the clock range of the \
         machine's recent runs and to the medians of this program's recent runs, where the \
         machine's ledger knows them; cycles per iteration: the median in cycles of the \
         core at that moment, from the core-speed probe around each sample (code bound by the \
         core reads the same cycles whatever the clock); minimum: the fastest steady sample; spread: the robust σ \
         (IQR/1.349) of one sample's time per iteration, as a share of the median; warm-up: \
         its class and the samples excluded; T<sub>tot</sub>: the benchmark's whole wall \
         time, calibration and warm-up included.</p>\n",
    );
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
    if !timed {
        // Counted under callgrind: the counts are the figures; its timings are valgrind's.
    } else {
        figures_line(h, b);
        if !b.samples.ns.is_empty() {
            h.push_str("<div class=\"plots\">\n");
            sample_plots(h, b);
            h.push_str("</div>\n");
        }
    }
    memory::section(h, b);
    if let (Some(c), true) = (&b.counters, timed) {
        counters_table(h, c);
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

/// A timed benchmark's figures in one paragraph: the median with its intervals (and in
/// cycles), the minimum, the mean, σ, the samples, the warm-up, the time and why it stopped.
fn figures_line(h: &mut String, b: &BenchmarkResult) {
    let pi = &b.per_iter;
    let _ = writeln!(
        h,
        "<p class=\"figures\">median <b>{}</b> (this run's 95 % interval {}; for the next run \
         {}){} · minimum {} · mean {} · σ<sub>iter</sub> = σ<sub>run</sub>/√N<sub>iter</sub> {} \
         (the σ of one iteration: the robust σ of a sample's time over the square root of \
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
}

/// The counters read around a timed benchmark, per iteration, each with its interval.
fn counters_table(h: &mut String, c: &std::collections::BTreeMap<String, f64>) {
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
