//! Plain-text report of results: a table row per benchmark and its diagnostics in words.
//! Renders; never measures. Colour is the caller's choice (the CLI honours `NO_COLOR` and
//! terminals); without it the text is plain.

use crate::diagnostic::words;
use crate::result::{BenchmarkResult, Harness};
use crate::timer::TimerInfo;
use std::fmt::Write as _;

pub mod compare;
mod fit;
pub mod memory;
mod table;
pub mod threads;
pub use crate::diagnostic::words::explanation;
pub use crate::units;
pub use fit::{cut_end, cut_middle, pad, text_width, wrap, MIN_WIDTH, NAME_FLOOR, NAME_MIN};
pub use table::{
    after_table, interval_pct, render_file, short_ns, spread_pct, time_alone_note, warmup_cell,
    warmup_words, Render, Table,
};

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const GREEN: &str = "\x1b[32m";

/// Whether the descriptor (standard stream 0, 1 or 2) is a terminal.
pub use crate::os::terminal::is_terminal;

/// Styling of the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// Colour when standard output is a terminal, unless `NO_COLOR` is set
    /// (<https://no-color.org>).
    pub fn for_stdout() -> Style {
        Style {
            color: std::env::var_os("NO_COLOR").is_none() && is_terminal(1),
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("{code}{s}{RESET}")
        } else {
            s.to_string()
        }
    }
}

pub use units::format_ns;

/// The width standard output must fit: `COLUMNS` when set to a positive number, else the
/// terminal's width (TIOCGWINSZ) when it is a terminal, else `None` (piped: unlimited, so
/// that nothing is cut for a script or a file).
pub fn stdout_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(c);
    }
    terminal_width(1)
}

/// The width of the terminal on file descriptor `fd` (TIOCGWINSZ), if it is one.
pub use crate::os::terminal::width as terminal_width;

impl Render {
    /// Standard output's width and colour (`NO_COLOR`), with or without `-v`.
    pub fn for_stdout(verbose: bool) -> Render {
        Render {
            width: stdout_width(),
            style: Style::for_stdout(),
            verbose,
        }
    }
}

/// The timer named with its rate: `tsc at 2.793 GHz`, `cntvct at 25.0 MHz`, `monotonic`.
pub fn timer_name(timer: &TimerInfo) -> String {
    let hz = timer
        .tsc_hz
        .map(|h| format!(" at {}", crate::units::format_hz(h)))
        .unwrap_or_default();
    format!("{}{hz}", timer.kind.as_str())
}

/// The run's timer line: the timer and the harness's own costs (printed after the table).
pub fn header_text(timer: &TimerInfo, harness: &Harness) -> String {
    let cycle = if harness.cycle_ns.is_finite() {
        format!(
            " · cycle ≈ {} ({:.2} GHz, {})",
            format_ns(harness.cycle_ns),
            1.0 / harness.cycle_ns,
            harness.cycle_source
        )
    } else {
        String::new()
    };
    format!(
        "timer {}: resolution {}, one read {} · empty loop {}/iter · sample overhead {}{cycle}",
        timer_name(timer),
        format_ns(timer.resolution_ns),
        format_ns(timer.overhead_ns / 2.0),
        format_ns(harness.empty_iter_ns),
        format_ns(harness.sample_cost_ns),
    )
}

/// Width of the name column of the deterministic mode's table (`--instructions`): its row
/// is then 120 columns wide.
const NAME_WIDTH: usize = 30;

/// A benchmark name cut to the name column (in the middle, with '…') and padded to it.
fn column_name(name: &str) -> String {
    pad(&cut_middle(name, NAME_WIDTH), NAME_WIDTH, false)
}

/// The events a benchmark's `counters-unavailable` diagnostic names (its `events` data).
fn not_read(b: &BenchmarkResult) -> Option<Vec<String>> {
    b.diagnostics
        .iter()
        .find_map(|d| d.unread_events())
        .filter(|e| !e.is_empty())
}

fn diagnostics_into(s: &mut String, b: &BenchmarkResult, style: Style, in_counters_line: bool) {
    for d in &b.diagnostics {
        // The reasons and fixes of unavailable counters are the same for every benchmark of a
        // run: each row names what is missing, the note below the table says why, once.
        let message = match d.unread_events().filter(|e| !e.is_empty()) {
            Some(_) if in_counters_line => continue,
            Some(missing) => words::not_read_row(&missing),
            None => d.text(),
        };
        let _ = write!(
            s,
            "\n    {} {}",
            style.paint(YELLOW, &format!("{}:", d.code)),
            message
        );
    }
}

pub use crate::units::format_count;
pub use memory::signed;

/// The garbage collections a Python worker counted during the benchmark's samples, when any
/// ran (`None`: none, or not counted): collections make a sample slower, so a benchmark
/// measured with the collector on says how often it ran.
pub fn gc_line(b: &BenchmarkResult) -> Option<String> {
    let col = b.samples.counters.get(crate::samples::GC_COLLECTIONS)?;
    let (mut total, mut hit, mut counted) = (0u64, 0usize, 0usize);
    for v in col.iter().flatten() {
        counted += 1;
        total += v;
        hit += usize::from(*v > 0);
    }
    let iters: u64 = b.samples.iters.iter().sum();
    (total > 0).then(|| {
        format!(
            "garbage collections: {total} in {hit} of {counted} samples ({} per 1000 iterations)",
            format_count(total as f64 * 1000.0 / iters.max(1) as f64)
        )
    })
}

/// The short counters line under a benchmark's row: per-iteration figures (medians over the
/// steady samples, the reads' baseline subtracted) and the interrupted samples. `None` when
/// no counter was read. With `with_missing`, the events asked for and not read are named too
/// (when no run-wide note says so already).
pub fn counters_line(b: &BenchmarkResult, with_missing: bool) -> Option<String> {
    let c = b.counters.as_ref();
    let get = |k: &str| c.and_then(|c| c.get(k)).copied();
    let mut parts: Vec<String> = Vec::new();
    let per = |k: &str, label: &str, parts: &mut Vec<String>| {
        if let Some(v) = get(&format!("{k}_per_iter")) {
            parts.push(format!("{} {label}", format_count(v)));
        }
    };
    per("cycles", "cycles", &mut parts);
    per("instructions", "instructions", &mut parts);
    if let Some(v) = get("ipc") {
        parts.push(format!("IPC {v:.2}"));
    }
    if let Some(v) = get("ghz") {
        parts.push(format!("{v:.2} GHz"));
    }
    per("branches", "branches", &mut parts);
    per("branch-misses", "branch-misses", &mut parts);
    if let Some(v) = get("branch_miss_rate") {
        parts.push(format!("{:.2} % of branches missed", v * 100.0));
    }
    per("cache-references", "cache-references", &mut parts);
    per("cache-misses", "cache-misses", &mut parts);
    per("L1-dcache-load-misses", "L1d load misses", &mut parts);
    per("page-faults", "page-faults", &mut parts);
    if let Some(v) = get("task-clock_per_iter") {
        parts.push(format!("task-clock {}", format_ns(v)));
    }
    if parts.is_empty() && b.interrupted.is_none() {
        return None;
    }
    if let Some(missing) = not_read(b).filter(|_| with_missing) {
        // Never a silently missing column: name what was asked for and not read.
        parts.push(words::not_read_counters(&missing));
    }
    if let Some(i) = &b.interrupted {
        if i.samples == 0 {
            parts.push("no sample interrupted".into());
        } else {
            let shift = (i.median_with_ns / i.median_without_ns - 1.0) * 100.0;
            let mut t = format!(
                "{} of {} samples interrupted, {}",
                i.samples,
                i.of,
                if i.excluded { "excluded" } else { "kept" }
            );
            if shift.abs() >= 0.005 {
                let _ = write!(t, " (median {shift:+.2} % with them)");
            }
            parts.push(t);
        }
    }
    Some(format!("counters/iter: {}", parts.join(" · ")))
}

/// The run's counters line (what is read, what it costs) and the note about what could not
/// be read. `None` when counters are off.
pub fn counters_header_text(h: &Harness) -> Option<(String, Option<String>)> {
    let c = h.counters.as_ref()?;
    let s = if c.events.is_empty() {
        "counters: none could be read".to_string()
    } else {
        let base: Vec<String> = c
            .baseline
            .iter()
            .filter(|(_, &v)| v > 0.0)
            .map(|(e, &v)| {
                if e == "task-clock" {
                    format!("{e} {}", format_ns(v))
                } else {
                    format!("{e} {}", format_count(v))
                }
            })
            .collect();
        format!(
            "counters: {} read around each sample ({} read(2) per side, {} per sample = {:.1} % \
             of a {} sample{}); their baseline over an empty region is subtracted{}",
            c.events.join(", "),
            c.reads_per_side,
            format_ns(c.read_cost_ns),
            c.overhead * 100.0,
            format_ns(c.target_sample_ns as f64),
            if c.target_sample_ns > crate::plan::DEFAULT_SAMPLE_NS {
                ", lengthened so the reads stay under 5 %"
            } else {
                ""
            },
            if base.is_empty() {
                String::new()
            } else {
                format!(" ({})", base.join(", "))
            }
        )
    };
    Some((s, c.note.clone()))
}

/// Column titles of the deterministic mode (`--instructions`).
pub fn instructions_table_head(style: Style) -> String {
    style.paint(
        BOLD,
        &format!(
            "{:<NAME_WIDTH$} {:>14} {:>12} {:>12} {:>12} {:>12} {:>13} {:>8}",
            "benchmark",
            "instr/iter",
            "D1 miss/iter",
            "LL miss/iter",
            "branch/iter",
            "mispred/iter",
            "N1 → N2",
            "T_tot"
        ),
    )
}

/// One benchmark counted under callgrind: instructions and simulated misses per iteration.
pub fn instructions_row(b: &BenchmarkResult, style: Style) -> String {
    let mut s = String::new();
    let name = column_name(&b.name);
    let get = |k: &str| b.counters.as_ref().and_then(|c| c.get(k)).copied();
    let sum = |a: &str, c: &str| match (get(a), get(c)) {
        (Some(x), Some(y)) => Some(x + y),
        (x, y) => x.or(y),
    };
    let f = |v: Option<f64>| v.map(format_count).unwrap_or_else(|| "—".into());
    match get("instructions_per_iter") {
        None => {
            let _ = write!(s, "{name} {}", style.paint(RED, "FAILED"));
        }
        Some(ir) => {
            let n1 = b.samples.iters.first().copied().unwrap_or(0);
            let n2 = b.samples.iters.last().copied().unwrap_or(0);
            let _ = write!(
                s,
                "{name} {} {:>12} {:>12} {:>12} {:>12} {:>13} {:>8}",
                style.paint(BOLD, &format!("{:>14}", format_count(ir))),
                f(sum("D1mr_per_iter", "D1mw_per_iter")),
                f(sum("DLmr_per_iter", "DLmw_per_iter")),
                f(sum("Bc_per_iter", "Bi_per_iter")),
                f(sum("Bcm_per_iter", "Bim_per_iter")),
                format!("{n1} → {n2}"),
                format!("{:.2} s", b.total_s),
            );
            if let Some(t) = b.threads.filter(|&t| t > 1) {
                let _ = write!(s, "  per thread of {t}");
            }
        }
    }
    if let Some(e) = &b.error {
        let _ = write!(s, "\n    {} {}", style.paint(RED, "error:"), e);
    }
    diagnostics_into(&mut s, b, style, false);
    s
}

/// What the columns of the deterministic mode mean.
pub fn instructions_legend(style: Style) -> String {
    style.paint(
        DIM,
        "Counted under valgrind's callgrind, only inside the measured loop, at N1 and N2\n\
         iterations; per iteration = (count(N2) − count(N1)) / (N2 − N1), so the loop's fixed cost\n\
         cancels. instr/iter is exact and repeats run to run. D1/LL miss: simulated first- and\n\
         last-level data cache misses (reads + writes); branch, mispred: conditional + indirect\n\
         branches and their simulated mispredictions. Simulated, not the hardware's counts.\n\
         A threaded benchmark's counts are per thread, as its time is: the total over its T\n\
         threads divided by T (each thread runs every iteration).",
    )
}

/// The benchmarks whose interval was joined to the same program's recent runs here, with
/// the range of those runs' medians; `None` when there is none.
pub fn earlier_note(file: &crate::result::ResultFile) -> Option<String> {
    // (how far the earlier medians reach beyond the run's own interval, relative; the words)
    let apart = [earlier_apart_note(file), first_runs_note(file)]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}. {b}"));
    let mut joined: Vec<(f64, String)> = file
        .benchmarks
        .iter()
        .filter(|b| b.status == crate::result::Status::Ok)
        .filter_map(|b| {
            let e = b.earlier_runs.filter(|e| !e.beyond_clock)?;
            let own = b.per_iter.run_ci95_ns;
            let reach = e.reach(
                b.per_iter.median_ns,
                b.headline_unit == crate::analyze::Unit::Ns,
            );
            let beyond = (own[0] - reach[0]).max(reach[1] - own[1]);
            let [lo, hi] = e.median_ns;
            let words = if e.earlier_build {
                format!(
                    "{} ±{:.1} % (an earlier build's {} runs read {}–{})",
                    b.name,
                    (hi / lo - 1.0) * 100.0,
                    e.runs,
                    format_ns(lo),
                    format_ns(hi),
                )
            } else {
                format!(
                    "{} {}–{} ({} runs)",
                    b.name,
                    format_ns(lo),
                    format_ns(hi),
                    e.runs
                )
            };
            (beyond > 0.0).then(|| (beyond / b.per_iter.median_ns, words))
        })
        .collect();
    if joined.is_empty() {
        return apart;
    }
    // The furthest first; a long list is cut (the file has every one: `earlier_runs`).
    joined.sort_by(|a, b| b.0.total_cmp(&a.0));
    let listed = listed(joined.into_iter().map(|j| j.1).collect());
    let line = format!(
        "±next run also covers the medians of this program's recent runs on this machine (same \
         executable, arguments, environment and cache mode; after a rebuild, the spread of the \
         last build's runs around this median), which this run's samples cannot see: {listed}"
    );
    Some(match apart {
        Some(a) => format!("{line}. {a}"),
        None => line,
    })
}

/// The benchmarks whose earlier runs' medians spread far beyond the clock's range
/// (`EarlierRuns::beyond_clock`): named with the medians, and why their interval was not
/// widened to them.
fn earlier_apart_note(file: &crate::result::ResultFile) -> Option<String> {
    let apart: Vec<String> = file
        .benchmarks
        .iter()
        .filter_map(|b| {
            let e = b.earlier_runs.filter(|e| e.beyond_clock)?;
            let [lo, hi] = e.median_ns;
            let whose = if e.earlier_build {
                "an earlier build's"
            } else {
                "its"
            };
            Some(format!(
                "{} ({whose} {} runs read {}–{}, this one {})",
                b.name,
                e.runs,
                format_ns(lo),
                format_ns(hi),
                format_ns(b.per_iter.median_ns)
            ))
        })
        .collect();
    if apart.is_empty() {
        return None;
    }
    Some(format!(
        "Earlier runs here read medians further apart than {}× the clock's range: other inputs \
         (a file the program reads?) or other code, so ±next run is not widened to cover them: {}",
        crate::result::earlier_runs::FAR_BEYOND_CLOCK,
        listed(apart)
    ))
}

/// The benchmarks whose program had fewer than two earlier runs here (the ledger was
/// read: `harness.earlier_runs_read`): their interval for the next run covers what this run
/// saw, not yet how far the level moves between invocations. `None` when there is none.
fn first_runs_note(file: &crate::result::ResultFile) -> Option<String> {
    if !file.harness.earlier_runs_read {
        return None;
    }
    let ok = |b: &&BenchmarkResult| {
        b.status == crate::result::Status::Ok
            && crate::result::earlier_runs::figure_worth_keeping(
                b.per_iter.median_ns,
                &b.diagnostics,
            )
    };
    let first: Vec<&str> = file
        .benchmarks
        .iter()
        .filter(ok)
        .filter(|b| b.earlier_runs.is_none())
        .map(|b| b.name.as_str())
        .collect();
    if first.is_empty() {
        return None;
    }
    let all = first.len() == file.benchmarks.iter().filter(ok).count();
    let whose = if all {
        "±next run".to_string()
    } else {
        format!(
            "±next run of {}",
            listed(first.iter().map(|n| n.to_string()).collect())
        )
    };
    Some(format!(
        "{whose} covers what this run saw (its processes and rounds, and the clock's range) and \
         not yet how far the level moves between invocations: this program has fewer than {} \
         earlier runs here. From its third run on, the interval covers the levels of its recent \
         runs, widened by half their spread",
        crate::result::earlier_runs::MIN_EARLIER_RUNS
    ))
}

/// Benchmarks named in a line under the table (about earlier runs, slowed stretches); the
/// rest are counted.
const EARLIER_LISTED: usize = 4;

/// `names` joined with commas, cut after [`EARLIER_LISTED`] with how many more there are.
pub(crate) fn listed(mut names: Vec<String>) -> String {
    let more = names.len().saturating_sub(EARLIER_LISTED);
    names.truncate(EARLIER_LISTED);
    if more > 0 {
        names.push(format!("and {more} more"));
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_run_says_its_interval_does_not_know_the_level_between_invocations() {
        let bytes = include_bytes!("../../tests/fixtures/results/run-cpp-v0.1.0.json");
        let mut file = crate::result::parse(bytes, "fixture").unwrap();
        // The ledger off (or a file written before it was read): nothing to say.
        assert!(earlier_note(&file).is_none());
        file.harness.earlier_runs_read = true;
        let line = earlier_note(&file).unwrap();
        assert!(
            line.starts_with("±next run covers what this run saw"),
            "{line}"
        );
        assert!(line.contains("fewer than 2 earlier runs"), "{line}");
        // One benchmark with its earlier runs: the others are named.
        let mut other = file.benchmarks[0].clone();
        other.name = "other".into();
        file.benchmarks.push(other);
        let m = file.benchmarks[0].per_iter.median_ns;
        let e = crate::result::earlier_runs::EarlierRuns::from_medians(&[m, m * 1.001]).unwrap();
        crate::result::earlier_runs::join_result(&mut file.benchmarks[0], &e, None);
        let line = earlier_note(&file).unwrap();
        assert!(line.contains("±next run of other covers"), "{line}");
    }

    #[test]
    fn earlier_runs_far_apart_are_named_and_not_said_to_be_covered() {
        let bytes = include_bytes!("../../tests/fixtures/results/run-cpp-v0.1.0.json");
        let mut file = crate::result::parse(bytes, "fixture").unwrap();
        file.benchmarks.truncate(1);
        let b = &mut file.benchmarks[0];
        let m = b.per_iter.median_ns;
        let e = crate::result::earlier_runs::EarlierRuns::from_medians(&[m, 2.0 * m]).unwrap();
        assert!(!crate::result::earlier_runs::join_result(b, &e, None));
        let name = b.name.clone();
        let line = earlier_note(&file).unwrap();
        assert!(line.contains("further apart"), "{line}");
        assert!(
            line.contains(&name) && line.contains("not widened"),
            "{line}"
        );
        assert!(!line.contains("also covers"), "{line}");
    }

    #[test]
    fn counts_keep_four_digits() {
        assert_eq!(format_count(0.0), "0");
        assert_eq!(format_count(1.0), "1.000");
        assert_eq!(format_count(2.71234), "2.712");
        assert_eq!(format_count(1234.5), "1234");
        assert_eq!(format_count(0.01234), "0.01234");
        assert_eq!(format_count(123456.0), "123456");
    }

    #[test]
    fn units_keep_four_digits() {
        assert_eq!(format_ns(0.5573), "0.5573 ns");
        assert_eq!(format_ns(3.8997), "3.900 ns");
        assert_eq!(format_ns(21.95), "21.95 ns");
        assert_eq!(format_ns(1234.0), "1.234 µs");
        assert_eq!(format_ns(15.3e6), "15.30 ms");
        assert_eq!(format_ns(f64::NAN), "—");
    }
}
