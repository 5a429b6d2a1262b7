//! What is said under the table: each diagnostic that occurred explained once, naming the
//! benchmarks it applies to (`notes_below`); the machine's lines, in full with the column
//! legend (`--explain`, the first run on a machine) or its conditions in one line
//! (`machine_line`); and the legend's texts.

use super::{counters_note, has, wrap, Col, Table, DIM, YELLOW};
use crate::diagnostic::{words::explanation, Code};
use crate::report::{counters_header_text, header_text};
use crate::result::{BenchmarkResult, ResultFile};
use crate::units::{format_count, format_ns};
use std::fmt::Write as _;

impl Table {
    /// Below the table: each code that occurred, explained once, naming its benchmarks.
    pub fn notes_below(&self, benchmarks: &[BenchmarkResult]) -> String {
        let mut s = String::new();
        for code in Code::ALL {
            let names: Vec<&str> = benchmarks
                .iter()
                .filter(|b| {
                    b.diagnostics
                        .iter()
                        .any(|d| d.code == code && !self.run_wide(d))
                })
                .map(|b| b.name.as_str())
                .collect();
            if names.is_empty() {
                continue;
            }
            let text = format!(
                "{code} ({}): {}",
                name_list(&names, benchmarks.len()),
                explanation(code)
            );
            s.push_str(&self.warned(&text));
        }
        s
    }

    /// `text` wrapped to the width, its first word in the warnings' colour.
    fn warned(&self, text: &str) -> String {
        let mut s = String::new();
        for (i, l) in wrap(text, self.render.width, 0, 2).into_iter().enumerate() {
            let l = match (i, l.split_once(' ')) {
                (0, Some((head, rest))) => format!("{} {rest}", self.paint(YELLOW, head)),
                _ => l,
            };
            let _ = writeln!(s, "{l}");
        }
        s
    }

    /// What each column shown means, wrapped to the width. `clock_range`: the intervals for
    /// the next run were joined to the clock range of the machine's recent runs
    /// (`harness.clock_ghz`), which the ledger gives once it holds enough runs
    /// (`crate::ledger`).
    pub fn legend(&self, clock_range: bool) -> String {
        let mut parts = vec![LEGEND_MEDIAN.to_string()];
        for c in &self.cols {
            parts.push(match c {
                Col::Median => continue,
                Col::Ci if clock_range => format!("{LEGEND_NEXT_RUN} {LEGEND_CLOCK_RANGE}"),
                Col::Ci => format!(
                    "{LEGEND_NEXT_RUN} {LEGEND_NO_CLOCK_RANGE} holds {} runs, their clock range \
                     is joined too)",
                    crate::ledger::speed::MIN_CLOCK_RUNS
                ),
                other => legend_of(*other).to_string(),
            });
        }
        parts.push(LEGEND_NOTES.to_string());
        let mut s = String::new();
        for l in wrap(&parts.join("; "), self.render.width, 0, 0) {
            let _ = writeln!(s, "{}", self.paint(DIM, &l));
        }
        s
    }
}

const LEGEND_MEDIAN: &str = "median: median per-iteration time over the steady samples \
     (warm-up excluded)";
const LEGEND_NEXT_RUN: &str = "±next run: the 95 % interval a next run's median on this \
     machine should fall in, as % of the median: this run's own";
const LEGEND_CLOCK_RANGE: &str = "joined to the clock range of the machine's recent runs (a \
     figure bound by the core moves with the clock; its cycles do not) and to the medians of \
     this program's recent runs when a line below names them";
/// Followed by the runs the ledger needs before it knows the clock's range.
const LEGEND_NO_CLOCK_RANGE: &str = "joined to the medians of this program's recent runs when a \
     line below names them (the clock of another run may differ: once the machine's ledger";
const LEGEND_NOTES: &str = "notes: diagnostic codes, explained below the table.";

/// What a column other than the median and ±next run means.
fn legend_of(c: Col) -> &'static str {
    match c {
        Col::RunCi => {
            "±this run: the 95 % interval of the median from this run's samples alone (order \
             statistics, widened for drift and between processes), as % of the median: how \
             precisely this run measured; \"−a/+b%\": its sides differ by half or more; \
             unstable flags a row when this interval, and ±cycles where known, stay wider than \
             ±1 %"
        }
        Col::Cycles => {
            "cycles: the median in cycles of the core at that moment (each sample's time over \
             the effective cycle time that the core-speed probe measured around it): code bound \
             by the core reads the same cycles whatever the clock, so rows compare to the \
             precision of ±cycles when the clock moved during or between runs"
        }
        Col::CyclesCi => "±cycles: the 95 % interval of the cycles, as % of them",
        Col::Unit => {
            "judged: the unit the row's verdicts were made in, from its own samples \
             (docs/units.md): cycles for code that follows the core's clock (its ±cycles is the \
             precision that counts, and what history and baselines compare), ns for code that \
             does not (memory, waits) or when no probe measured the clock"
        }
        Col::Min => "minimum: the fastest steady sample",
        Col::Spread => {
            "spread: robust σ (IQR/1.349) of one sample's per-iteration time, as % of the median \
             (what one more sample would scatter by; the σ of one iteration, σ_run/√N_iter, is under -v)"
        }
        Col::Samples => "samples×iters: steady samples × iterations per sample",
        Col::Warmup => {
            "warm-up: the time before the first steady sample, left out, and what it was: a \
             warm-up (\"warm\"), a faster start (\"slow\"), flat (none found), none (no steady \
             state)"
        }
        Col::Total => "T_tot: the benchmark's whole wall time",
        Col::Allocs => {
            "allocs: allocations per iteration, counted in a process of their own apart from the \
             timed ones (docs/memory.md); a mean when iterations differ"
        }
        Col::Bytes => "bytes: bytes requested per iteration (KiB = 1024 B)",
        Col::Rate => {
            "rate: the work the benchmark declared per iteration (bytes or items) over the \
             median, per second (GiB = 2³⁰ B; k, M, G items = 10³, 10⁶, 10⁹)"
        }
        Col::Median | Col::Ci => "",
    }
}

/// Benchmarks named in a note: all of them when few, else the first ones and a count.
fn name_list(names: &[&str], of: usize) -> String {
    const SHOWN: usize = 4;
    if names.len() == of && of > SHOWN {
        return format!("all {of} benchmarks");
    }
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!(
        "{} and {} more",
        names[..SHOWN - 1].join(", "),
        names.len() - (SHOWN - 1)
    )
}

/// What follows the table: the notes, then the machine's lines: in full with the legend
/// (`explain`), or the machine's conditions in one line.
pub fn after_table(file: &ResultFile, table: &Table) -> String {
    let table = &table.clone().with_counters_note(counters_note(file));
    let mut s = String::new();
    let mut notes = table.notes_below(&file.benchmarks);
    if let Some(line) = super::disturbance::disturbance_line(file) {
        notes.push_str(&table.warned(&line));
    }
    if let Some(line) = super::disturbance::emulation_line(file) {
        notes.push_str(&table.warned(&line));
    }
    if !notes.is_empty() {
        s.push('\n');
        s.push_str(&notes);
    }
    s.push('\n');
    let (fits, untold) = crate::result::complexity::fits(&file.benchmarks);
    let lines = fits.iter().map(|f| f.line());
    for line in lines.chain(untold.iter().map(|u| u.line())) {
        s.push_str(&table.dim_wrapped(&format!("complexity of {line}")));
    }
    for line in executor_lines(&file.benchmarks) {
        s.push_str(&table.dim_wrapped(&line));
    }
    if !table.explain {
        s.push_str(&table.dim_wrapped(&machine_line(file)));
        return s;
    }
    if let Some(line) = stretches_part(file) {
        s.push_str(&table.dim_wrapped(&format!("slowed stretches: {line}")));
    }
    s.push_str(&table.dim_wrapped(&header_text(&file.timer, &file.harness)));
    if let Some(c) = counters_header_text(&file.harness) {
        s.push_str(&table.dim_wrapped(&c.0));
        if let Some(note) = c.1 {
            s.push_str(&table.warned(&format!("counters-unavailable: {note}")));
        }
    }
    s.push_str(&table.legend(file.harness.clock_ghz.is_some()));
    s
}

/// The benchmarks of a suite measured in its own process that ran within a few cycles of their
/// bar and are not flagged `optimized-away`: whether their work was removed rests on time
/// alone there (a loop's layout can set a removed body a fraction of a cycle above its bar),
/// and `vernier run` would count their instructions. `None` when there is none.
pub fn time_alone_note(file: &ResultFile) -> Option<String> {
    let near: Vec<String> = file
        .benchmarks
        .iter()
        .filter(|b| b.status == crate::result::Status::Ok && !b.removed())
        .filter(|b| b.instructions_check.is_none())
        .filter(|b| {
            b.cycles_over_bar(&file.harness)
                .is_some_and(|c| c < crate::analyze::NEAR_EMPTY_CYCLES)
        })
        .map(|b| format!("`{}`", b.name))
        .collect();
    if near.is_empty() {
        return None;
    }
    Some(format!(
        "{} ran within a few cycles of the empty loop (an async body: of the empty future on its \
         executor), so whether the compiler removed their work rests on time alone: a suite \
         measured in its own process cannot count instructions; `vernier run -- PROGRAM` counts \
         them under callgrind",
        near.join(", ")
    ))
}

/// One line per executor the async benchmarks ran on: its benchmarks, what an empty future
/// costs on it (part of each of their figures, and their bar for `optimized-away`), and, for
/// a runtime whose work runs on other cores, why they were judged in ns.
pub fn executor_lines(benchmarks: &[BenchmarkResult]) -> Vec<String> {
    let mut by: Vec<(&crate::result::ExecutorJson, Vec<&str>)> = Vec::new();
    for b in benchmarks {
        let Some(e) = &b.executor else { continue };
        match by.iter_mut().find(|(x, _)| x.name == e.name) {
            Some((_, names)) => names.push(&b.name),
            None => by.push((e, vec![&b.name])),
        }
    }
    by.into_iter()
        .map(|(e, names)| {
            let cost = if e.empty_future_ns.is_finite() {
                format!(
                    "an empty future costs {}/iter there, part of each figure and the bar for \
                     optimized-away",
                    format_ns(e.empty_future_ns)
                )
            } else {
                "an empty future could not be measured there".to_string()
            };
            let unit = if e.on_calling_core {
                String::new()
            } else {
                "; judged in ns: its worker threads run the work on cores whose clock the \
                 core-speed probe does not measure"
                    .to_string()
            };
            format!(
                "async on {} ({}): {cost}{unit}",
                e.name,
                name_list(&names, benchmarks.len())
            )
        })
        .collect()
}

/// The benchmarks with slowed stretches left out (`slowed_stretches`), each with its
/// slowest stretch: how slow, against what level, and how long. `None` when there is none.
fn stretches_part(file: &ResultFile) -> Option<String> {
    let named: Vec<String> = file
        .benchmarks
        .iter()
        .filter_map(|b| {
            let st = b
                .slowed_stretches
                .iter()
                .max_by(|x, y| (x.median / x.level).total_cmp(&(y.median / y.level)))?;
            let (median, level) = match st.unit {
                crate::analyze::Unit::Cycles => (
                    format_count(st.median),
                    format!("{} cycles", format_count(st.level)),
                ),
                _ => (format_ns(st.median), format_ns(st.level)),
            };
            let seconds = b
                .slowed_stretches
                .iter()
                .map(|s| s.end_s - s.start_s)
                .sum::<f64>();
            Some(format!(
                "{} ({median} against {level}, {} samples over {})",
                b.name,
                b.slowed_stretches.iter().map(|s| s.samples).sum::<usize>(),
                format_ns(seconds * 1e9),
            ))
        })
        .collect();
    if named.is_empty() {
        return None;
    }
    Some(format!(
        "{} slowed for a stretch of a round while the rest of the run held its level (the core \
         taken away: another tenant, the host), left out of their figures: {}",
        named.len(),
        crate::report::listed(named)
    ))
}

/// Whether a benchmark's slow state is a shared core's: enough of its samples taken with the
/// core shared (`speed.shared_share`).
fn shared_core(s: &crate::result::SpeedJson) -> bool {
    s.shared_share
        .is_some_and(|x| x >= crate::analyze::speed::CORE_SLOWED_MIN_SHARE)
}

/// A neighbour on the core, said once for the run: how much of a benchmark's samples at most
/// were taken with the core shared, the throughput the thread then had, and what it did to
/// the figures (set apart, or `core-shared`).
fn shared_part(file: &ResultFile) -> Option<String> {
    let speeds: Vec<(&BenchmarkResult, &crate::result::SpeedJson)> = file
        .benchmarks
        .iter()
        .filter_map(|b| Some((b, b.speed.as_ref()?)))
        .filter(|(_, s)| shared_core(s))
        .collect();
    let most = speeds
        .iter()
        .filter_map(|(_, s)| s.shared_share)
        .fold(0.0, f64::max);
    let least_share = speeds
        .iter()
        .filter_map(|(_, s)| s.core_share)
        .fold(1.0, f64::min);
    if speeds.is_empty() {
        return None;
    }
    let apart = speeds
        .iter()
        .filter(|(b, s)| s.split && s.slow.is_some() && !has(b, Code::CoreShared))
        .count();
    let flagged = speeds
        .iter()
        .filter(|(b, _)| has(b, Code::CoreShared))
        .count();
    Some(format!(
        "a neighbour shared the core's issue width (up to {:.0} % of a benchmark's samples; \
         throughput for independent work down to {:.0} % of the core's best, median): {apart} \
         benchmark(s) felt it and their figures are of the whole core's samples alone, {flagged} \
         flagged core-shared (`vernier system noise` says how often; whole cores: a dedicated \
         runner)",
        most * 100.0,
        least_share * 100.0
    ))
}

/// The machine's conditions in one line, said once for the run: the timer and its rate, the
/// clock's range during the run and how many benchmarks were judged in cycles, a core shared
/// with another thread, the counters that could not be read.
pub fn machine_line(file: &ResultFile) -> String {
    let mut parts = vec![format!("timer {}", crate::report::timer_name(&file.timer))];
    let ghz: Vec<f64> = file
        .benchmarks
        .iter()
        .filter_map(|b| b.speed.as_ref())
        .flat_map(|s| std::iter::once(s.fast.ghz).chain(s.slow.as_ref().map(|x| x.ghz)))
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    if let (Some(lo), Some(hi)) = (
        ghz.iter().copied().reduce(f64::min),
        ghz.iter().copied().reduce(f64::max),
    ) {
        let in_cycles = file
            .benchmarks
            .iter()
            .filter(|b| b.headline_unit == crate::analyze::Unit::Cycles)
            .count();
        parts.push(format!(
            "the core ran at {lo:.2}–{hi:.2} GHz; {in_cycles} of {} benchmarks judged in cycles, \
             which hold still when the clock moves",
            file.benchmarks.len()
        ));
    }
    let shared = file
        .benchmarks
        .iter()
        .filter(|b| {
            b.speed
                .as_ref()
                .is_some_and(|s| s.split && s.slow.is_some() && !shared_core(s))
                && !has(b, Code::CoreSlowed)
        })
        .count();
    if shared > 0 {
        parts.push(format!(
            "{shared} ran partly in a slower state of the core and their figures are of the fast \
             state alone (-v gives both)"
        ));
    }
    if let Some(line) = shared_part(file) {
        parts.push(line);
    }
    if let Some(line) = stretches_part(file) {
        parts.push(line);
    }
    if let Some(c) = file.harness.counters.as_ref().filter(|c| c.note.is_some()) {
        parts.push(format!(
            "{} not read here (no PMU, or not permitted)",
            c.unavailable
                .iter()
                .map(|u| u.event.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    parts.push("--explain: the columns and these lines in full".into());
    format!("machine: {}", parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ExecutorJson;

    #[test]
    fn bodies_near_their_bar_and_not_flagged_are_said_to_rest_on_time_alone() {
        let mut f: ResultFile = serde_json::from_value(serde_json::json!({
            "schema": 1, "tool": {"name": "vernier", "version": "0"},
            "machine": crate::machine::Machine::detect(),
            "timer": {"kind": "tsc", "resolution_ns": 1.0, "overhead_ns": 10.0, "tsc_hz": 3e9},
            "benchmarks": []
        }))
        .unwrap();
        // The empty loop: 1 cycle of 0.25 ns; the empty future on smol: 2 cycles.
        f.harness.empty_iter_ns = 0.25;
        f.harness.cycle_ns = 0.25;
        let ok = |name: &str, median_ns: f64, executor: bool| {
            let mut b = BenchmarkResult::failed(name, String::new());
            b.status = crate::result::Status::Ok;
            b.per_iter.median_ns = median_ns;
            b.executor = executor.then(|| ExecutorJson {
                name: "smol".into(),
                empty_future_ns: 0.5,
                empty_future_cycles: Some(2.0),
                on_calling_core: true,
            });
            b
        };
        let mut flagged = ok("flagged", 0.25, false);
        flagged
            .diagnostics
            .push(crate::diagnostic::Diagnostic::from(
                &crate::diagnostic::Finding::OptimizedAway(crate::diagnostic::Removed::NoSlope {
                    slope_ns: 0.0,
                }),
            ));
        f.benchmarks = vec![
            ok("near", 0.5, false),
            ok("work", 25.0, false),
            flagged,
            ok("async near", 0.75, true),
            ok("async work", 5.0, true),
        ];
        let note = time_alone_note(&f).unwrap();
        assert!(
            note.starts_with("`near`, `async near` ran within a few cycles"),
            "{note}"
        );
        assert!(note.contains("rests on time alone"), "{note}");
        f.benchmarks.retain(|b| b.name.contains("work"));
        assert_eq!(time_alone_note(&f), None);
    }

    #[test]
    fn each_executor_is_said_once_with_its_benchmarks_its_empty_future_and_why_ns() {
        let on = |name: &str, executor: &str, ns: f64, core: bool| {
            let mut b = BenchmarkResult::failed(name, String::new());
            b.executor = Some(ExecutorJson {
                name: executor.into(),
                empty_future_ns: ns,
                empty_future_cycles: None,
                on_calling_core: core,
            });
            b
        };
        let benchmarks = [
            BenchmarkResult::failed("sync", String::new()),
            on("a", "smol", 0.54, true),
            on("b", "tokio multi-thread", f64::NAN, false),
            on("c", "smol", 0.54, true),
        ];
        assert_eq!(
            executor_lines(&benchmarks),
            [
                "async on smol (a, c): an empty future costs 0.5400 ns/iter there, part of each \
                 figure and the bar for optimized-away",
                "async on tokio multi-thread (b): an empty future could not be measured there; \
                 judged in ns: its worker threads run the work on cores whose clock the \
                 core-speed probe does not measure",
            ]
        );
    }
}
