//! The terminal table: one row per benchmark fitted to a width, then each diagnostic explained
//! once below it (naming the benchmarks it applies to). `docs/report.md` describes the columns,
//! the order in which they are dropped when the terminal is narrow, and `-v`.

use super::fit::{cut_middle, fit, pad, text_width, wrap, Step};
use super::{counters_line, format_count, Style, BOLD, DIM, GREEN, RED, YELLOW};
use crate::analyze::InstructionsCheck;
use crate::diagnostic::{words::explanation, Code, Diagnostic};
use crate::result::{BenchmarkResult, ResultFile, Status};
use crate::stats::steady::WarmupClass;
use crate::units::format_ns;
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
}

impl Col {
    const ALL: [Col; 13] = [
        Col::Median,
        Col::RunCi,
        Col::Ci,
        Col::Cycles,
        Col::CyclesCi,
        Col::Unit,
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
    const DROP_ORDER: [Col; 11] = [
        Col::Samples,
        Col::Warmup,
        Col::Total,
        Col::Min,
        Col::Unit,
        Col::Spread,
        Col::Bytes,
        Col::Allocs,
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
    /// The cycle and memory columns are shown.
    cycles: bool,
    memory: bool,
    /// Under the table, the column legend and the machine's lines in full (the first run on a
    /// machine, `--explain`); otherwise one line of the machine's conditions.
    explain: bool,
}

/// A duration in ns with three significant digits (table cells: "8.12 ms", "812 µs").
pub fn short_ns(ns: f64) -> String {
    let s = format_ns(ns);
    // format_ns keeps four digits; drop the last one unless the value is below 1 (0.2682 ns).
    match s.split_once(' ') {
        Some((v, unit)) if v.contains('.') && !v.starts_with("0.") => {
            let digits = v.len() - v.find('.').unwrap_or(v.len()) - 1;
            let x: f64 = v.parse().unwrap_or(f64::NAN);
            match digits {
                0 | 1 => format!("{x:.0} {unit}"),
                d => format!("{x:.prec$} {unit}", prec = d - 1),
            }
        }
        _ => s,
    }
}

/// The warm-up cell: "flat" (no warm-up found), "`<duration>` warm" (a warm-up, excluded),
/// "`<duration>` slow" (a start faster than the steady state, excluded), "none" (no steady
/// state within the budget).
pub fn warmup_cell(b: &BenchmarkResult) -> String {
    let dur = short_ns(b.warmup.seconds * 1e9);
    match b.warmup.class {
        WarmupClass::Flat => "flat".into(),
        WarmupClass::Warmup => format!("{dur} warm"),
        WarmupClass::Slowdown => format!("{dur} slow"),
        WarmupClass::NoSteadyState => "none".into(),
    }
}

/// The warm-up in words, for sentences: the same figures as [`warmup_cell`].
pub fn warmup_words(b: &BenchmarkResult) -> String {
    let w = &b.warmup;
    let dur = format_ns(w.seconds * 1e9);
    match w.class {
        WarmupClass::Flat if w.samples == 0 => format!(
            "no warm-up: flat from the start (the first {dur} went to choosing the iterations \
             per sample)"
        ),
        WarmupClass::Flat => format!(
            "no warm-up: flat from the start (the first {dur}, calibration and {} samples taken \
             while that was checked, left out)",
            w.samples
        ),
        WarmupClass::Warmup => format!(
            "a warm-up of {dur} ({} samples, slower than the steady state, left out)",
            w.samples
        ),
        WarmupClass::Slowdown => format!(
            "a faster start of {dur} ({} samples) before a slower steady state, left out",
            w.samples
        ),
        WarmupClass::NoSteadyState => {
            format!("no steady state within the budget ({dur} of samples)")
        }
    }
}

/// An interval's sides are printed apart ("−0.05/+16.0%") when the longer is at least this
/// many times the shorter: a half-width would then understate the longer side by a fifth or
/// more (an interval joined to the clock range of other runs reaches mostly to one side: a
/// sort read "±2.40 %" for −0.3 % / +4.5 %).
pub const ASYMMETRIC_RATIO: f64 = 1.5;

/// An interval `[lo, hi]` around `median` as % of it: "±0.13%" (the half-width) when its sides
/// are alike, "−0.05/+16.0%" when one is `ASYMMETRIC_RATIO` times the other, "<±0.01%"
/// below the printed resolution, "—" when undefined.
pub fn interval_pct(median: f64, [lo, hi]: [f64; 2]) -> String {
    let below = (median - lo) / median * 100.0;
    let above = (hi - median) / median * 100.0;
    if !(below.is_finite() && above.is_finite()) {
        return "—".into();
    }
    let (short, long) = (below.min(above).max(0.0), below.max(above));
    if long < 0.01 {
        return "<±0.01%".into();
    }
    if long >= short * ASYMMETRIC_RATIO && long - short >= 0.01 {
        // A side under the printed resolution reads 0: "−0/+0.26%".
        let side = |x: f64| {
            if x < 0.01 {
                "0".to_string()
            } else {
                pct(x).trim_end_matches('%').to_string()
            }
        };
        return format!("−{}/+{}%", side(below), side(above));
    }
    let half = (below + above) / 2.0;
    if half < 0.01 {
        "<±0.01%".into()
    } else {
        format!("±{}", pct(half))
    }
}

/// "; 125.9 cycles [125.3, 126.5]" when the probe measured the core's speed, else nothing.
fn cycles_words(b: &BenchmarkResult) -> String {
    match b
        .speed
        .as_ref()
        .and_then(|s| Some((s.cycles_per_iter?, s.cycles_ci95?)))
    {
        Some((c, [lo, hi])) if c.is_finite() => format!(
            "; {} cycles [{}, {}]",
            super::format_count(c),
            super::format_count(lo),
            super::format_count(hi)
        ),
        _ => String::new(),
    }
}

/// The spread users read: the robust σ (IQR/1.349) of one sample's per-iteration time, as %
/// of the median. Files written before `sample_sigma_ns` existed give σ_iter·√N back.
pub fn spread_pct(b: &BenchmarkResult) -> f64 {
    let p = &b.per_iter;
    let sigma = if p.sample_sigma_ns.is_finite() {
        p.sample_sigma_ns
    } else {
        p.sigma_ns * (b.steady_samples.max(1) as f64).sqrt()
    };
    sigma / p.median_ns * 100.0
}

fn pct(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if x < 0.01 {
        "<0.01%".into()
    } else if x < 10.0 {
        format!("{x:.2}%")
    } else if x < 100.0 {
        format!("{x:.1}%")
    } else {
        format!("{x:.0}%")
    }
}

fn has(b: &BenchmarkResult, c: Code) -> bool {
    b.diagnostics.iter().any(|d| d.code == c)
}

/// Whether a diagnostic is explained by the run's own note rather than per benchmark: the
/// counters that could not be read are the same for every benchmark of a run (its `events`,
/// or the run's note in files written before diagnostics carried them), and the counters
/// line after the table says why, once.
fn run_wide(d: &Diagnostic, counters_note: bool) -> bool {
    d.code == Code::CountersUnavailable && (counters_note || d.unread_events().is_some())
}

/// The name column's width and the figure columns that fit in `width` (`None`: all of them),
/// with or without the columns in cycles: names are cut down to `NAME_MIN` first, then columns
/// dropped in `Col::DROP_ORDER`.
fn layout(longest: usize, width: Option<usize>, cycles: bool, memory: bool) -> (usize, Vec<Col>) {
    let cols: Vec<Col> = Col::ALL
        .into_iter()
        .filter(|c| (cycles || !c.in_cycles()) && (memory || !c.of_memory()))
        .collect();
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
        let (name_w, cols) = layout(longest, render.width, true, false);
        Table {
            render,
            longest,
            name_w,
            cols,
            counters_note: false,
            cycles: true,
            memory: false,
            explain: true,
        }
    }

    /// The same table with or without the columns in cycles (a result in which no benchmark
    /// was probed has none to show; the width they took goes to the other columns).
    pub fn with_cycles(mut self, cycles: bool) -> Table {
        self.cycles = cycles;
        (self.name_w, self.cols) = layout(self.longest, self.render.width, cycles, self.memory);
        self
    }

    /// The same table with or without the columns of allocations per iteration (`allocs`,
    /// `bytes`): shown when the run counts them.
    pub fn with_memory(mut self, memory: bool) -> Table {
        self.memory = memory;
        (self.name_w, self.cols) = layout(self.longest, self.render.width, self.cycles, memory);
        self
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
        let optimized = has(b, Code::OptimizedAway);
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
            line(&instructions_words(&c), DIM);
        }
        for d in &b.diagnostics {
            if !self.run_wide(d) {
                line(&format!("{}: {}", d.code, d.text()), YELLOW);
            }
        }
        s
    }

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
            for (i, l) in wrap(&text, self.render.width, 0, 2).into_iter().enumerate() {
                let l = match (i, l.split_once(' ')) {
                    (0, Some((head, rest))) => format!("{} {rest}", self.paint(YELLOW, head)),
                    _ => l,
                };
                let _ = writeln!(s, "{l}");
            }
        }
        s
    }

    /// What each column shown means, wrapped to the width. `clock_range`: the intervals for
    /// the next run were joined to the clock range of the machine's recent runs
    /// (`harness.clock_ghz`), which the speed file gives once it holds enough runs
    /// (`crate::speed_file`).
    pub fn legend(&self, clock_range: bool) -> String {
        let mut parts = vec![LEGEND_MEDIAN.to_string()];
        for c in &self.cols {
            parts.push(match c {
                Col::Median => continue,
                Col::Ci if clock_range => format!("{LEGEND_NEXT_RUN} {LEGEND_CLOCK_RANGE}"),
                Col::Ci => format!("{LEGEND_NEXT_RUN} {LEGEND_NO_CLOCK_RANGE}"),
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

    /// Text wrapped to the table's width, dimmed (the run's header lines).
    pub fn dim_wrapped(&self, text: &str) -> String {
        let mut s = String::new();
        for l in wrap(text, self.render.width, 0, 2) {
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
const LEGEND_NO_CLOCK_RANGE: &str = "joined to the medians of this program's recent runs when a \
     line below names them (the clock of another run may differ: once the machine's speed file \
     holds 20 runs, their clock range is joined too)";
const LEGEND_NOTES: &str = "notes: diagnostic codes, explained below the table.";

/// What a column other than the median and ±next run means.
/// Why a benchmark that times like the empty loop is not flagged `optimized-away`: its count of
/// instructions says the body runs (its work fits in the loop's own cycles).
fn instructions_words(c: &InstructionsCheck) -> String {
    format!(
        "not optimized away: its time cannot be told from the empty loop's, but counted under \
         callgrind it executes {} instructions per iteration{} against the empty loop's {}, so \
         the body runs and its work fits in the loop's own cycles",
        format_count(c.instructions_per_iter),
        c.moves_per_iter
            .map(|m| format!(
                " ({} of them register moves, not counted as work)",
                format_count(m)
            ))
            .unwrap_or_default(),
        format_count(c.empty_instructions_per_iter)
    )
}

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
    let table = Table::new(&names, render)
        .with_cycles(cycles)
        .with_memory(memory)
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

/// What follows the table: the notes, then the machine's lines: in full with the legend
/// (`explain`), or the machine's conditions in one line.
pub fn after_table(file: &ResultFile, table: &Table) -> String {
    let table = &table.clone().with_counters_note(counters_note(file));
    let mut s = String::new();
    let notes = table.notes_below(&file.benchmarks);
    if !notes.is_empty() {
        s.push('\n');
        s.push_str(&notes);
    }
    s.push('\n');
    if !table.explain {
        s.push_str(&table.dim_wrapped(&machine_line(file)));
        return s;
    }
    s.push_str(&table.dim_wrapped(&super::header_text(&file.timer, &file.harness)));
    if let Some(c) = super::counters_header_text(&file.harness) {
        s.push_str(&table.dim_wrapped(&c.0));
        if let Some(note) = c.1 {
            let text = format!("counters-unavailable: {note}");
            for (i, l) in wrap(&text, table.render.width, 0, 2)
                .into_iter()
                .enumerate()
            {
                let l = match (i, l.split_once(' ')) {
                    (0, Some((head, rest))) => format!("{} {rest}", table.paint(YELLOW, head)),
                    _ => l,
                };
                let _ = writeln!(s, "{l}");
            }
        }
    }
    s.push_str(&table.legend(file.harness.clock_ghz.is_some()));
    s
}

/// The machine's conditions in one line, said once for the run: the clock's range during it
/// and how many benchmarks were judged in cycles, a core shared with another thread, the
/// counters that could not be read.
pub fn machine_line(file: &ResultFile) -> String {
    let mut parts = Vec::new();
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
                .is_some_and(|s| s.split && s.slow.is_some())
                && !has(b, Code::CoreSlowed)
        })
        .count();
    if shared > 0 {
        parts.push(format!(
            "{shared} ran partly in a slower state of the core and their figures are of the fast \
             state alone (-v gives both)"
        ));
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

    #[test]
    fn names_are_cut_in_the_middle() {
        assert_eq!(
            cut_middle("event copy, 256Ki events (cold)", 15),
            "event c… (cold)"
        );
        assert_eq!(
            text_width(&cut_middle("event copy, 256Ki events (cold)", 15)),
            15
        );
        assert_eq!(cut_middle("add", 15), "add");
    }

    #[test]
    fn short_durations_keep_three_digits() {
        assert_eq!(short_ns(8.123e6), "8.12 ms");
        assert_eq!(short_ns(812.3e3), "812 µs");
        assert_eq!(short_ns(0.2682), "0.2682 ns");
        assert_eq!(short_ns(1.2e9), "1.20 s");
    }

    #[test]
    fn an_interval_shows_both_sides_when_they_differ() {
        // A sort read 27.78 µs with an interval of [27.69, 29.03]: −0.3 % / +4.5 %, which a
        // half-width ("±2.40 %") hides.
        assert_eq!(interval_pct(27.78, [27.69, 29.03]), "−0.32/+4.50%");
        assert_eq!(interval_pct(100.0, [99.0, 101.2]), "±1.10%");
        assert_eq!(interval_pct(100.0, [99.9, 100.2]), "−0.10/+0.20%");
        assert_eq!(interval_pct(100.0, [100.0, 116.0]), "−0/+16.0%");
        assert_eq!(interval_pct(100.0, [99.999, 100.001]), "<±0.01%");
        assert_eq!(interval_pct(f64::NAN, [1.0, 2.0]), "—");
    }

    #[test]
    fn a_body_that_runs_inside_the_loop_s_cycle_is_explained() {
        let c = InstructionsCheck {
            instructions_per_iter: 6.0,
            empty_instructions_per_iter: 2.0,
            moves_per_iter: Some(2.0),
        };
        assert!(!c.removed());
        let w = instructions_words(&c);
        assert!(
            w.contains("6.000 instructions per iteration (2.000 of them register moves"),
            "{w}"
        );
        assert!(w.contains("empty loop's 2.000"), "{w}");
    }

    #[test]
    fn wrapping_respects_the_width() {
        let text = "a ".repeat(100) + &"word ".repeat(40);
        for l in wrap(&text, Some(50), 4, 6) {
            assert!(text_width(&l) + 4 <= 50, "{l}");
        }
        assert_eq!(wrap("x y", None, 0, 0), vec!["x y".to_string()]);
    }
}
