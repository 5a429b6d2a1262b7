//! The terminal table: one row per benchmark fitted to a width, its columns and the order in
//! which they are dropped when the terminal is narrow (`docs/report.md` describes them and
//! `-v`), and a whole result rendered after the fact. Beside it: `cells` (a row's figures as
//! text, and their words for sentences) and `legend` (what is said under the table: each
//! diagnostic explained once, naming the benchmarks it applies to, the machine's lines and the
//! column legend).

mod cells;
mod disturbance;
mod legend;

use super::fit::{cut_middle, fit, pad, text_width, wrap, Step};
use super::{counters_line, Style, BOLD, DIM, GREEN, RED, YELLOW};
use crate::diagnostic::{Code, Diagnostic};
use crate::result::{BenchmarkResult, ResultFile, Status};
use crate::units::format_ns;
use cells::{cycles_words, instructions_words, pct};
pub use cells::{interval_pct, short_ns, spread_pct, warmup_cell, warmup_words};
pub use legend::{after_table, time_alone_note};
use std::fmt::Write as _;

/// How the report is rendered: the width it must fit (`None`: unlimited, nothing cut, as when
/// the output is piped), colour, and `-v`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Render {
    pub width: Option<usize>,
    pub style: Style,
    pub verbose: bool,
}

/// Indentation of a row's second line (its notes when they do not fit beside the figures) and
/// of the `-v` lines.
const INDENT: &str = "    ";

/// The figure columns, in display order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    Median,
    /// This run's own interval (`per_iter.run_ci95_ns`): how precisely the run measured.
    RunCi,
    /// The interval that holds for the next run (`per_iter.ci95_ns`).
    Ci,
    /// The median in cycles of the core at the time (`speed.cycles_per_iter`).
    Cycles,
    /// Its interval (`speed.cycles_ci95`).
    CyclesCi,
    /// The unit the benchmark was judged in (`headline_unit`).
    Unit,
    Min,
    Spread,
    Samples,
    Warmup,
    Total,
    /// Allocations per iteration (`memory.allocs_per_iter`), when counted.
    Allocs,
    /// Bytes requested per iteration (`memory.bytes_per_iter`).
    Bytes,
    /// The declared work per iteration over the median (`throughput`), per second.
    Rate,
}

impl Col {
    const ALL: [Col; 14] = [
        Col::Median,
        Col::RunCi,
        Col::Ci,
        Col::Cycles,
        Col::CyclesCi,
        Col::Unit,
        Col::Rate,
        Col::Allocs,
        Col::Bytes,
        Col::Min,
        Col::Spread,
        Col::Samples,
        Col::Warmup,
        Col::Total,
    ];
    /// Dropped first to last when the width is short: the median, the run's own interval and
    /// the cycles (what the run measured precisely) stay longest, then the interval for the
    /// next run.
    const DROP_ORDER: [Col; 12] = [
        Col::Samples,
        Col::Warmup,
        Col::Total,
        Col::Min,
        Col::Unit,
        Col::Spread,
        Col::Bytes,
        Col::Allocs,
        Col::Rate,
        Col::Ci,
        Col::CyclesCi,
        Col::Cycles,
    ];

    fn title(self) -> &'static str {
        match self {
            Col::Median => "median",
            Col::RunCi => "±this run",
            Col::Ci => "±next run",
            Col::Cycles => "cycles",
            Col::CyclesCi => "±cycles",
            Col::Unit => "judged",
            Col::Min => "minimum",
            Col::Spread => "spread",
            Col::Samples => "samples×iters",
            Col::Warmup => "warm-up",
            Col::Total => "T_tot",
            Col::Allocs => "allocs",
            Col::Bytes => "bytes",
            Col::Rate => "rate",
        }
    }

    /// Widest value: `format_ns` keeps four digits ("0.8341 ns", "123.4 µs"), an interval
    /// "<±0.01%", "±12.34%" or both sides "−0.05/+16.0%", cycles "1234.5" (`format_count`),
    /// the warm-up "812.0 µs warm".
    fn width(self) -> usize {
        match self {
            Col::Median | Col::Min => 9,
            Col::RunCi | Col::Ci | Col::CyclesCi => 12,
            Col::Cycles => 7,
            Col::Unit => 6,
            Col::Spread => 6,
            Col::Samples => 13,
            Col::Warmup => 12,
            Col::Total => 8,
            Col::Allocs => 7,
            Col::Bytes => 9,
            Col::Rate => 14,
        }
    }

    /// Columns of the figures in cycles.
    fn in_cycles(self) -> bool {
        matches!(self, Col::Cycles | Col::CyclesCi | Col::Unit)
    }

    fn of_memory(self) -> bool {
        matches!(self, Col::Allocs | Col::Bytes)
    }
}

/// Which of the optional columns a table shows.
#[derive(Clone, Copy, Debug)]
struct Shown {
    /// The figures in cycles (`cycles`, `±cycles`, `judged`).
    cycles: bool,
    /// Allocations per iteration (`allocs`, `bytes`).
    memory: bool,
    /// The rate of a declared throughput.
    rate: bool,
}

impl Shown {
    fn shows(self, c: Col) -> bool {
        (self.cycles || !c.in_cycles())
            && (self.memory || !c.of_memory())
            && (self.rate || c != Col::Rate)
    }
}

/// A table fitted to a width, printed row by row as benchmarks finish.
#[derive(Clone, Debug)]
pub struct Table {
    render: Render,
    /// The longest name (at least the title's).
    longest: usize,
    name_w: usize,
    cols: Vec<Col>,
    /// The run has a note about the counters it could not read (printed after the table).
    counters_note: bool,
    /// The optional columns shown.
    shown: Shown,
    /// Under the table, the column legend and the machine's lines in full (the first run on a
    /// machine, `--explain`); otherwise one line of the machine's conditions.
    explain: bool,
}

fn has(b: &BenchmarkResult, c: Code) -> bool {
    b.diagnostics.iter().any(|d| d.code == c)
}

/// Whether a diagnostic is explained by the run's own note rather than per benchmark: the
/// counters that could not be read are the same for every benchmark of a run (its `events`,
/// or the run's note in files written before diagnostics carried them), and the counters
/// line after the table says why, once; a code the machine gave most of the run's benchmarks
/// (`explained_by`) is said once by the machine line.
fn run_wide(d: &Diagnostic, counters_note: bool) -> bool {
    d.explained_by.is_some()
        || d.code == Code::CountersUnavailable && (counters_note || d.unread_events().is_some())
}

/// The name column's width and the figure columns that fit in `width` (`None`: all of them),
/// with or without the columns in cycles: names are cut down to `NAME_MIN` first, then columns
/// dropped in `Col::DROP_ORDER`.
fn layout(longest: usize, width: Option<usize>, shown: Shown) -> (usize, Vec<Col>) {
    let cols: Vec<Col> = Col::ALL.into_iter().filter(|&c| shown.shows(c)).collect();
    let steps: Vec<Step<Col>> = std::iter::once(Step::CutNames)
        .chain(Col::DROP_ORDER.into_iter().map(Step::Drop))
        .collect();
    // The notes column's title follows the figures.
    fit(
        longest,
        width,
        cols,
        Col::width,
        text_width("  notes"),
        &steps,
    )
}

impl Table {
    /// A table for the benchmarks named `names` (the longest sets the name column), fitted to
    /// `render.width`, with the columns in cycles (the core-speed probe runs by default; see
    /// [`Table::with_cycles`]).
    pub fn new<S: AsRef<str>>(names: &[S], render: Render) -> Table {
        let longest = names
            .iter()
            .map(|n| text_width(n.as_ref()))
            .max()
            .unwrap_or(0)
            .max(text_width("benchmark"));
        let shown = Shown {
            cycles: true,
            memory: false,
            rate: false,
        };
        let (name_w, cols) = layout(longest, render.width, shown);
        Table {
            render,
            longest,
            name_w,
            cols,
            counters_note: false,
            shown,
            explain: true,
        }
    }

    /// The same table with or without the columns in cycles (a result in which no benchmark
    /// was probed has none to show; the width they took goes to the other columns).
    pub fn with_cycles(mut self, cycles: bool) -> Table {
        self.shown.cycles = cycles;
        self.relayout()
    }

    fn relayout(mut self) -> Table {
        (self.name_w, self.cols) = layout(self.longest, self.render.width, self.shown);
        self
    }

    /// The same table with or without the `rate` column: shown when a benchmark of the run
    /// declared its work per iteration (`throughput`).
    pub fn with_rate(mut self, rate: bool) -> Table {
        self.shown.rate = rate;
        self.relayout()
    }

    /// The same table with or without the columns of allocations per iteration (`allocs`,
    /// `bytes`): shown when the run counts them.
    pub fn with_memory(mut self, memory: bool) -> Table {
        self.shown.memory = memory;
        self.relayout()
    }

    /// The same table, told whether the run has a note about counters it could not read
    /// (then no row repeats it).
    pub fn with_counters_note(mut self, note: bool) -> Table {
        self.counters_note = note;
        self
    }

    /// Whether the legend and the machine's lines are given in full under the table (they are
    /// by default); without, one line says the machine's conditions once.
    pub fn with_explain(mut self, explain: bool) -> Table {
        self.explain = explain;
        self
    }

    fn run_wide(&self, d: &Diagnostic) -> bool {
        run_wide(d, self.counters_note)
    }

    fn paint(&self, code: &str, s: &str) -> String {
        self.render.style.paint(code, s)
    }

    /// The column titles.
    pub fn head(&self) -> String {
        // At the narrowest widths the name column is narrower than its usual title.
        let title = if self.name_w < text_width("benchmark") {
            "name"
        } else {
            "benchmark"
        };
        let mut s = pad(title, self.name_w, false);
        for c in &self.cols {
            let _ = write!(s, "  {}", pad(c.title(), c.width(), true));
        }
        s.push_str("  notes");
        self.paint(BOLD, s.trim_end())
    }

    /// The short codes of a row (status first), as its notes cell.
    fn notes(&self, b: &BenchmarkResult) -> Vec<(String, &'static str)> {
        let mut v = Vec::new();
        match b.status {
            Status::Failed => v.push(("FAILED".to_string(), RED)),
            Status::Interrupted => v.push(("INTERRUPTED".to_string(), YELLOW)),
            Status::Ok => {}
        }
        for d in &b.diagnostics {
            if !self.run_wide(d) && !v.iter().any(|(t, _)| t == d.code.as_str()) {
                v.push((d.code.as_str().to_string(), YELLOW));
            }
        }
        v
    }

    /// One benchmark: its row (a second line holds its notes when they do not fit beside the
    /// figures), then with `-v` its counters, error bar and each diagnostic in full.
    pub fn row(&self, b: &BenchmarkResult) -> String {
        let p = &b.per_iter;
        let optimized = b.removed();
        let no_figure = !p.median_ns.is_finite();
        let cycles = b
            .speed
            .as_ref()
            .and_then(|sp| Some((sp.cycles_per_iter?, sp.cycles_ci95?)))
            .filter(|(c, _)| c.is_finite());
        // The intervals `unstable` judges (this run's own, in ns and in cycles): yellow when
        // it flagged them, so the line between flagged and unflagged rows shows.
        let judged = if has(b, Code::Unstable) || !p.run_ci95_ns[0].is_finite() {
            YELLOW
        } else {
            GREEN
        };
        let in_cycles = b.headline_unit == crate::analyze::Unit::Cycles && cycles.is_some();
        let mut s = pad(&cut_middle(&b.name, self.name_w), self.name_w, false);
        let mut plain = text_width(&s);
        for &c in &self.cols {
            let (text, colour): (String, Option<&str>) = if no_figure {
                ("—".into(), None)
            } else {
                match c {
                    Col::Median if optimized => ("optimized".into(), Some(YELLOW)),
                    Col::Median if has(b, Code::DebugBuild) => {
                        (format_ns(p.median_ns), Some(YELLOW))
                    }
                    Col::Median => (format_ns(p.median_ns), Some(BOLD)),
                    Col::RunCi | Col::Ci | Col::Cycles | Col::CyclesCi if optimized => {
                        ("—".into(), None)
                    }
                    Col::RunCi => {
                        let text = interval_pct(p.median_ns, p.run_ci95_ns);
                        (text, (!in_cycles).then_some(judged))
                    }
                    Col::Ci => (interval_pct(p.median_ns, p.ci95_ns), None),
                    Col::Cycles => match cycles {
                        Some((c, _)) => (super::format_count(c), None),
                        None => ("—".into(), None),
                    },
                    Col::CyclesCi => match cycles {
                        Some((c, ci)) => (interval_pct(c, ci), in_cycles.then_some(judged)),
                        None => ("—".into(), None),
                    },
                    Col::Unit if in_cycles => ("cycles".into(), None),
                    Col::Unit => ("ns".into(), None),
                    Col::Min if optimized => ("—".into(), None),
                    Col::Min => (format_ns(p.min_ns), None),
                    Col::Spread if optimized => ("—".into(), None),
                    Col::Spread => (pct(spread_pct(b)), None),
                    Col::Samples => (format!("{}×{}", b.steady_samples, b.iters_per_sample), None),
                    Col::Warmup => (warmup_cell(b), None),
                    Col::Total => (short_ns(b.total_s * 1e9), None),
                    Col::Allocs | Col::Bytes => (super::memory::cell(b, c == Col::Allocs), None),
                    Col::Rate if optimized => ("—".into(), None),
                    Col::Rate => match b.throughput {
                        Some(t) => (t.rate(p.median_ns), None),
                        None => ("—".into(), None),
                    },
                }
            };
            let cell = pad(&text, c.width(), true);
            plain += 2 + text_width(&cell);
            s.push_str("  ");
            s.push_str(&match colour {
                Some(code) => self.paint(code, &cell),
                None => cell,
            });
        }
        let notes = self.notes(b);
        if !notes.is_empty() {
            let text: Vec<&str> = notes.iter().map(|(t, _)| t.as_str()).collect();
            let len = text_width(&text.join(" "));
            let painted: Vec<String> = notes.iter().map(|(t, c)| self.paint(c, t)).collect();
            let painted = painted.join(" ");
            match self.render.width {
                Some(w) if plain + 2 + len > w => {
                    // Codes never contain spaces: wrap the plain text, then paint each code.
                    for l in wrap(&text.join(" "), Some(w), INDENT.len(), 0) {
                        let painted: Vec<String> = l
                            .split(' ')
                            .map(|t| {
                                let c = notes.iter().find(|(n, _)| n == t).map_or(YELLOW, |n| n.1);
                                self.paint(c, t)
                            })
                            .collect();
                        let _ = write!(s, "\n{INDENT}{}", painted.join(" "));
                    }
                }
                _ => {
                    let _ = write!(s, "  {painted}");
                }
            }
        }
        if let Some(e) = &b.error {
            // Why a benchmark failed is never left to -v.
            for l in wrap(&format!("error: {e}"), self.render.width, INDENT.len(), 2) {
                let _ = write!(s, "\n{INDENT}{}", self.paint(RED, &l));
            }
        }
        if let Some(line) = super::gc_line(b) {
            let _ = write!(s, "\n{INDENT}{}", self.paint(DIM, &line));
        }
        if let Some(line) = super::threads::line(b) {
            for l in wrap(&line, self.render.width, INDENT.len(), 2) {
                let _ = write!(s, "\n{INDENT}{}", self.paint(DIM, &l));
            }
        }
        if self.render.verbose {
            s.push_str(&self.details(b));
        } else if let Some(line) = hardware_counters(b) {
            let _ = write!(s, "\n{INDENT}{}", self.paint(DIM, &line));
        }
        s
    }

    /// `-v`: the counters, σ_iter, the warm-up, the error and each diagnostic's
    /// own paragraph.
    fn details(&self, b: &BenchmarkResult) -> String {
        let mut s = String::new();
        let width = self.render.width;
        let mut line = |text: &str, colour: &str| {
            for l in wrap(text, width, INDENT.len(), 2) {
                let _ = write!(s, "\n{INDENT}{}", self.paint(colour, &l));
            }
        };
        let p = &b.per_iter;
        if p.median_ns.is_finite() {
            line(
                &format!(
                    "this run's own 95 % interval [{}, {}]; for the next run [{}, {}]{}; σ_iter = σ_run/√N_iter = {} (the σ \
                     of one iteration: σ_run the robust σ of a sample's time, N_iter = {} iterations per \
                     sample; spread {} = {} of the median); {} steady samples; mean {}; \
                     T = a + b·N: b = {}, a = {}, R² = {:.4}; {}",
                    format_ns(p.run_ci95_ns[0]),
                    format_ns(p.run_ci95_ns[1]),
                    format_ns(p.ci95_ns[0]),
                    format_ns(p.ci95_ns[1]),
                    cycles_words(b),
                    format_ns(p.sigma_ns),
                    b.iters_per_sample,
                    format_ns(p.sample_sigma_ns),
                    pct(spread_pct(b)),
                    b.steady_samples,
                    format_ns(p.mean_ns),
                    format_ns(p.slope_ns),
                    format_ns(p.intercept_ns),
                    p.r2,
                    warmup_words(b)
                ),
                DIM,
            );
        }
        if let Some(c) = counters_line(b, !b.diagnostics.iter().any(|d| self.run_wide(d))) {
            line(&c, DIM);
        }
        if let Some(c) = b.instructions_check.filter(|c| !c.removed()) {
            line(&instructions_words(&c, b.executor.is_some()), DIM);
        }
        for d in &b.diagnostics {
            if d.explained_by.is_some() {
                line(
                    &format!("{} (the machine's, said once below): {}", d.code, d.text()),
                    DIM,
                );
            } else if !self.run_wide(d) {
                line(&format!("{}: {}", d.code, d.text()), YELLOW);
            }
        }
        s
    }

    /// Text wrapped to the table's width, dimmed (the run's header lines).
    pub fn dim_wrapped(&self, text: &str) -> String {
        let mut s = String::new();
        for l in wrap(text, self.render.width, 0, 2) {
            let _ = writeln!(s, "{}", self.paint(DIM, &l));
        }
        s
    }
}

/// The counters line shown without `-v`: only when hardware events (cycles, instructions,
/// branches, caches) were read, never one that merely repeats what could not be read.
fn hardware_counters(b: &BenchmarkResult) -> Option<String> {
    let c = b.counters.as_ref()?;
    let hardware = [
        "cycles",
        "instructions",
        "branches",
        "branch-misses",
        "cache-references",
        "cache-misses",
        "L1-dcache-load-misses",
    ];
    hardware
        .iter()
        .any(|e| c.contains_key(&format!("{e}_per_iter")))
        .then(|| counters_line(b, false))
        .flatten()
}

/// A whole result rendered after the fact (`vernier analyze`, the snapshot tests): the table,
/// the notes, the run's header lines and the legend.
pub fn render_file(file: &ResultFile, render: Render) -> String {
    let names: Vec<&str> = file.benchmarks.iter().map(|b| b.name.as_str()).collect();
    let cycles = file.benchmarks.iter().any(|b| {
        b.speed
            .as_ref()
            .is_some_and(|s| s.cycles_per_iter.is_some())
    });
    let memory = file.benchmarks.iter().any(|b| b.memory.is_some());
    let rate = file.benchmarks.iter().any(|b| b.throughput.is_some());
    let table = Table::new(&names, render)
        .with_cycles(cycles)
        .with_memory(memory)
        .with_rate(rate)
        .with_counters_note(counters_note(file));
    let mut s = String::new();
    let _ = writeln!(s, "{}", table.head());
    for b in &file.benchmarks {
        let _ = writeln!(s, "{}", table.row(b));
    }
    s.push_str(&after_table(file, &table));
    s
}

/// Whether the run has a note about the counters it could not read.
fn counters_note(file: &ResultFile) -> bool {
    file.harness
        .counters
        .as_ref()
        .is_some_and(|c| c.note.is_some())
}

#[cfg(test)]
mod tests;
