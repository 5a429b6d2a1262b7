//! The comparison table: one row per comparison (ratio, change, interval, p-value, verdict,
//! time, pairs, smallest detectable change), the failures, the geometric mean and a legend
//! saying how the figures were computed. Fitted to the terminal's width; coloured through the
//! report's one [`Style`](super::Style).

use super::fit::{cut_middle, fit, pad, text_width, wrap, Step};
use super::{Render, BOLD, DIM, GREEN, RED, YELLOW};
use crate::analyze::pairs::{
    Comparison, PairStates, PairsPlan, Unresolved, LAYOUT_AVERAGE_MIN_PAIRS, MAX_PLANNED_PAIRS,
};
use crate::analyze::Unit;
use crate::result::comparison::{Code, ComparisonFile};
use crate::stats::compare::{Mode, Verdict};
use std::fmt::Write as _;

/// The change a `no-change` comparison measured below the noise threshold `threshold`
/// ([`Comparison::measured_below_threshold`]), in words: `NEW slower by +0.10 % [+0.10,
/// +0.11], below the noise threshold ±0.50 %`; `None` for any other comparison.
pub fn below_threshold(c: &Comparison, threshold: f64) -> Option<String> {
    if !c.measured_below_threshold() {
        return None;
    }
    let pct = |r: f64| format!("{:+.2}", (r - 1.0) * 100.0);
    Some(format!(
        "NEW {} by {} % [{}, {}], below the noise threshold ±{:.2} %",
        if c.ratio > 1.0 { "slower" } else { "faster" },
        pct(c.ratio),
        pct(c.ci95[0]),
        pct(c.ci95[1]),
        threshold * 100.0
    ))
}

/// A p-value in four decimals, or "<0.0001".
pub fn format_p(p: f64) -> String {
    if !p.is_finite() {
        "—".into()
    } else if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

fn name_width(file: &ComparisonFile) -> usize {
    file.comparisons
        .iter()
        .map(|c| text_width(&c.name))
        .chain(file.failed.iter().map(|f| text_width(&f.name)))
        .chain(std::iter::once(14))
        .max()
        .unwrap_or(14)
        .min(48)
}

/// Columns of the comparison table after the name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CmpCol {
    Ratio,
    Change,
    Ci,
    P,
    Verdict,
    Seconds,
    Pairs,
    Detect,
}

impl CmpCol {
    fn width(self) -> usize {
        match self {
            CmpCol::Ratio | CmpCol::Change | CmpCol::P => 8,
            CmpCol::Ci => 16,
            CmpCol::Verdict => 12,
            CmpCol::Seconds | CmpCol::Detect => 7,
            CmpCol::Pairs => 6,
        }
    }
}

/// The columns that fit `render.width` and the width left for the names (see
/// [`table_fitted`] for the order in which columns go).
fn fitted_columns(file: &ComparisonFile, render: Render) -> (Vec<CmpCol>, usize) {
    let cols = vec![
        CmpCol::Ratio,
        CmpCol::Change,
        CmpCol::Ci,
        CmpCol::P,
        CmpCol::Verdict,
        CmpCol::Seconds,
        CmpCol::Pairs,
        CmpCol::Detect,
    ];
    let steps = [
        Step::Drop(CmpCol::Seconds),
        Step::Drop(CmpCol::Pairs),
        Step::CutNames,
        Step::Drop(CmpCol::P),
        Step::Drop(CmpCol::Detect),
        Step::Drop(CmpCol::Change),
    ];
    let (w, cols) = fit(
        name_width(file),
        render.width,
        cols,
        CmpCol::width,
        0,
        &steps,
    );
    (cols, w)
}

/// The lines under the comparison table: failures, process pairs' spread, placement, layout
/// states.
fn notes_under(file: &ComparisonFile, render: Render, s: &mut String) {
    let mut lines = |text: &str| {
        for l in wrap(text, render.width, 2, 2) {
            let _ = writeln!(s, "  {l}");
        }
    };
    for f in &file.failed {
        lines(&format!("{}: {}", f.name, f.error));
    }
    for c in &file.comparisons {
        if let Some(words) = below_threshold(c, file.threshold) {
            lines(&format!(
                "* {}: {words}: measured (the interval excludes no change), and counted as \
                 `no-change`, a change too small to matter at this threshold (--threshold \
                 PERCENT sets it)",
                c.name
            ));
        }
        if let Some(p) = c.spread {
            lines(&format!(
                "{}: {} process pairs, spread between pairs (sd) {:.2}%; of the uncertainty \
                 {:.0}% is within pairs, {:.0}% between them; smallest detectable change {}",
                c.name,
                p.process_pairs,
                p.spread_sd * 100.0,
                p.within_share * 100.0,
                p.between_share * 100.0,
                c.smallest_detectable
                    .map(|d| format!("{:.2}%", d * 100.0))
                    .unwrap_or_else(|| "—".into())
            ));
        }
        if let (Some(code), Some(d)) = (c.code, &c.code_detail) {
            let shown = matches!(c.verdict, Verdict::Faster | Verdict::Slower);
            match code {
                Code::Same if shown => lines(&format!(
                    "{}: placement: the code is the same in OLD and NEW (the loop's function and \
                     the {} it calls are the same instructions, addresses aside), so the \
                     {:+.2}% measured (`{}` in the file) comes from where the code and its data \
                     sit (addresses, alignment) or from inputs prepared outside the loop, not \
                     from a change to the code; --fail-on-regression does not count it",
                    c.name,
                    match d.functions.saturating_sub(1) {
                        1 => "function".to_string(),
                        n => format!("{n} functions"),
                    },
                    (c.ratio - 1.0) * 100.0,
                    c.verdict.as_str()
                )),
                Code::Unknown if shown => lines(&format!(
                    "{}: whether its code changed is not known: {}",
                    c.name,
                    d.reason.as_deref().unwrap_or("not compared")
                )),
                _ => {}
            }
        }
        if let Some(st) = c.layout_states {
            lines(&format!("{}: {}", c.name, layout_states_words(&st)));
        }
        if let Some(why) = unresolved_words(c, file.threshold, file.comparisons.len()) {
            lines(&format!("{}: inconclusive: {why}", c.name));
        }
    }
}

/// The lines a comparison file calls for beside its table, one per benchmark and concern, as
/// (benchmark name, words): why a verdict is inconclusive with the budget that would resolve
/// it, the layout states its process pairs fell into, a verdict that comes from where the
/// same code sits. For writers that set the name apart from the words (a pull request's
/// comment).
pub fn caveats(file: &ComparisonFile) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for c in &file.comparisons {
        if let Some(why) = unresolved_words(c, file.threshold, file.comparisons.len()) {
            let more = budget_words(c, file.threshold).unwrap_or_default();
            out.push((c.name.clone(), format!("inconclusive: {why}{more}")));
        }
        if let Some(st) = c.layout_states {
            out.push((c.name.clone(), layout_states_words(&st)));
        }
        if c.code == Some(Code::Same) && matches!(c.verdict, Verdict::Faster | Verdict::Slower) {
            out.push((
                c.name.clone(),
                format!(
                    "placement: the code is the same in OLD and NEW, so the {:+.2}% comes from \
                     where the code and its data sit, not from a change to the code (not \
                     counted as a regression)",
                    (c.ratio - 1.0) * 100.0
                ),
            ));
        }
    }
    out
}

/// For an interval too wide for the threshold and no plan of process pairs: the budget that
/// would narrow it to the threshold, if it narrows as one over the square root of the time
/// measured (an estimate, said as one).
fn budget_words(c: &Comparison, threshold: f64) -> Option<String> {
    if c.layout_states.and_then(|s| s.plan).is_some()
        || !matches!(
            c.unresolved()?,
            Unresolved::TooWide | Unresolved::SizeUnsettled
        )
    {
        return None;
    }
    let half = (c.ci95[1] - c.ci95[0]) / 2.0;
    let factor = (half / threshold).powi(2);
    let secs = c.seconds * factor;
    (secs.is_finite() && threshold > 0.0 && factor > 1.0).then(|| {
        let secs = if secs >= 10.0 {
            secs.ceil()
        } else {
            (secs * 10.0).ceil() / 10.0
        };
        format!(
            "; about {secs} s of measuring would narrow the interval to ±{:.2}% (intervals \
             narrow as one over the square root of the time): `--time {secs}`",
            threshold * 100.0
        )
    })
}

/// The layout states a comparison's pairs show, and what its interval is.
fn layout_states_words(st: &PairStates) -> String {
    let head = format!(
        "layout states: the process pairs read ratios from {:.4} to {:.4}, while each \
         pair's own interval is within ±{:.2}%: the speed depends on where each process's code \
         and data sit, and one layout may read anywhere in that range",
        st.lo,
        st.hi,
        st.within * 100.0
    );
    if st.averaged {
        format!(
            "{head}. The ratio and its 95% CI are the change averaged over the layouts of the {} \
             pairs (random effects over their log-ratios)",
            st.pairs
        )
    } else {
        format!(
            "{head}. Not stopped early; with {} pair(s), fewer than the {} the average over \
             layouts is judged from, the 95% CI spans the states seen",
            st.pairs, st.average_from
        )
    }
}

/// The budget that would resolve a change of the threshold's size, as options to paste.
fn plan_words(plan: &PairsPlan, threshold: f64) -> String {
    match (plan.pairs, plan.seconds) {
        (Some(n), Some(secs)) => {
            let time = if secs >= 10.0 {
                format!("{}", secs.ceil())
            } else {
                format!("{:.1}", (secs * 10.0).ceil() / 10.0)
            };
            format!(
                "about {n} process pairs would resolve a change of {:.2}% from the spread seen \
                 (sd {:.2}% per pair), about {time} s of measuring for this benchmark: \
                 `--time {time} --processes {n}`",
                threshold * 100.0,
                plan.pair_sd * 100.0
            )
        }
        _ => format!(
            "the spread between pairs (sd {:.2}% per pair) is too large for a change of {:.2}% \
             to be resolved by {} process pairs: raise --threshold",
            plan.pair_sd * 100.0,
            threshold * 100.0,
            MAX_PLANNED_PAIRS
        ),
    }
}

/// Why a comparison is inconclusive, in words, with the budget that would resolve it when the
/// pairs show layout states.
fn unresolved_words(c: &Comparison, threshold: f64, compared: usize) -> Option<String> {
    let plan = c
        .layout_states
        .and_then(|s| s.plan)
        .map(|p| format!("; {}", plan_words(&p, threshold)))
        .unwrap_or_default();
    let band = threshold * 100.0;
    Some(match c.unresolved()? {
        Unresolved::StatesNotSampled { pairs, need } => format!(
            "its {pairs} process pairs fall into layout states, and fewer than {need} pairs may \
             not have sampled them: the interval spans the states seen, and no verdict is given \
             before {need} pairs (--processes {need} or more){plan}"
        ),
        Unresolved::Multiplicity => format!(
            "the change is significant on its own (p {}) but not once corrected for the {} \
             comparisons of this run (Holm: p {})",
            format_p(c.p_value_raw),
            compared,
            format_p(c.p_value)
        ),
        Unresolved::SizeUnsettled => format!(
            "a change of {:+.2}% is measured (its interval excludes no change), inside the \
             threshold ±{band:.2}% while its interval reaches beyond it: whether it is as large \
             as the threshold is not established{plan}",
            (c.ratio - 1.0) * 100.0
        ),
        Unresolved::TooWide => format!(
            "the interval holds both no change and a change beyond ±{band:.2}%: the run could \
             detect a change of {} or more{plan}",
            c.smallest_detectable
                .map(|d| format!("{:.2}%", d * 100.0))
                .unwrap_or_else(|| "—".into())
        ),
    })
}

/// The comparison table fitted to `render.width`: long names cut in the middle, then columns
/// dropped in this order: seconds, pairs, (names cut to `report::NAME_MIN`), p, detect,
/// change. The ratio, its interval and the verdict stay.
pub fn table_fitted(file: &ComparisonFile, render: Render) -> String {
    let style = render.style;
    let (cols, name_w) = fitted_columns(file, render);
    let table = Fitted { cols, name_w };
    let mut s = String::new();
    let live = file.comparisons.iter().any(|c| c.spread.is_some());
    let mut head = table.name_cell("benchmark");
    for &c in &table.cols {
        let _ = write!(head, "  {}", c.cell(c.title(live)));
    }
    let _ = writeln!(s, "{}", style.paint(BOLD, head.trim_end()));
    for c in &file.comparisons {
        let _ = writeln!(s, "{}", table.comparison_row(c, render).trim_end());
    }
    for f in &file.failed {
        let _ = writeln!(
            s,
            "{}  {}",
            table.name_cell(&f.name),
            style.paint(RED, "FAILED")
        );
    }
    if let (Some(g), Some(ci)) = (file.geomean_ratio, file.geomean_ci95) {
        let _ = writeln!(s, "{}", table.geomean_row(g, ci).trim_end());
    }
    notes_under(file, render, &mut s);
    for l in wrap(&legend(file, live), render.width, 0, 0) {
        let _ = writeln!(s, "{}", style.paint(DIM, &l));
    }
    s
}

impl CmpCol {
    /// The column's heading; the pairs are processes' when the comparison ran process pairs
    /// (`live`).
    fn title(self, live: bool) -> &'static str {
        match self {
            CmpCol::Ratio => "ratio",
            CmpCol::Change => "change",
            CmpCol::Ci => "95% CI",
            CmpCol::P => "p (Holm)",
            CmpCol::Verdict => "verdict",
            CmpCol::Seconds => "seconds",
            CmpCol::Pairs if live => "procs",
            CmpCol::Pairs => "pairs",
            CmpCol::Detect => "detect",
        }
    }

    /// `text` padded to the column's width: figures to the right, words to the left.
    fn cell(self, text: &str) -> String {
        pad(
            text,
            self.width(),
            !matches!(self, CmpCol::Ci | CmpCol::Verdict),
        )
    }
}

/// The columns of a comparison table fitted to the width, and the width of its names.
struct Fitted {
    cols: Vec<CmpCol>,
    name_w: usize,
}

impl Fitted {
    /// A row's name, cut in the middle and padded to the names' width.
    fn name_cell(&self, n: &str) -> String {
        pad(&cut_middle(n, self.name_w), self.name_w, false)
    }

    /// A comparison's row, its verdict coloured.
    fn comparison_row(&self, c: &Comparison, render: Render) -> String {
        let style = render.style;
        let mut row = self.name_cell(&c.name);
        for &col in &self.cols {
            let text = match col {
                CmpCol::Ratio => format!("{:.4}", c.ratio),
                CmpCol::Change => format!("{:+.2}%", (c.ratio - 1.0) * 100.0),
                CmpCol::Ci => format!("[{:.4}, {:.4}]", c.ci95[0], c.ci95[1]),
                CmpCol::P => format_p(c.p_value),
                CmpCol::Verdict if placed(c) => "placement".to_string(),
                // A change measured below the threshold: said under the table.
                CmpCol::Verdict if c.measured_below_threshold() => {
                    format!("{}*", c.verdict.as_str())
                }
                CmpCol::Verdict => c.verdict.as_str().to_string(),
                CmpCol::Seconds => format!("{:.2}", c.seconds),
                CmpCol::Pairs => c
                    .spread
                    .map(|p| p.process_pairs)
                    .unwrap_or(c.pairs)
                    .to_string(),
                CmpCol::Detect => c
                    .smallest_detectable
                    .map(|d| format!("±{:.2}%", d * 100.0))
                    .unwrap_or_else(|| "—".into()),
            };
            let text = col.cell(&text);
            let text = match (col, c.verdict) {
                (CmpCol::Verdict, _) if placed(c) => style.paint(DIM, &text),
                (CmpCol::Verdict, Verdict::Slower) => style.paint(RED, &text),
                (CmpCol::Verdict, Verdict::Faster) => style.paint(GREEN, &text),
                (CmpCol::Verdict, Verdict::Inconclusive) => style.paint(YELLOW, &text),
                _ => text,
            };
            let _ = write!(row, "  {text}");
        }
        row
    }

    /// The geometric mean's row: its ratio, change and interval, as far as those columns
    /// are shown.
    fn geomean_row(&self, g: f64, ci: [f64; 2]) -> String {
        let mut row = self.name_cell("geometric mean");
        for &col in &self.cols {
            let text = match col {
                CmpCol::Ratio => format!("{g:.4}"),
                CmpCol::Change => format!("{:+.2}%", (g - 1.0) * 100.0),
                CmpCol::Ci => format!("[{:.4}, {:.4}]", ci[0], ci[1]),
                _ => break,
            };
            let _ = write!(row, "  {}", col.cell(&text));
        }
        row
    }
}

/// The legend under the table: what the ratio, the verdict and `detect` are, then how this
/// mode's interval was computed and what it covers.
fn legend(file: &ComparisonFile, live: bool) -> String {
    let placement = if file.comparisons.iter().any(placed) {
        " placement: the interval says NEW is faster or slower, but the benchmark's code (its \
         loop and what it calls) is the same instructions in OLD and NEW: the difference is \
         where the code sits, not a change to it."
    } else {
        ""
    };
    let mut legend = format!(
        "ratio = NEW/OLD per-iteration time (above 1: NEW is slower), {}; verdict at α = {} \
         after Holm's correction over {} comparison(s), noise threshold ±{}%: no-change when the \
         interval lies within it, inconclusive when it straddles it{}; detect = the smallest \
         change the run could have detected (80% power).{}",
        match (file.mode, live) {
            (Mode::Paired, true) => "weighted geometric mean over process pairs",
            (Mode::Paired, false) => "Hodges–Lehmann estimate",
            (Mode::Unpaired, _) => "ratio of the files' medians",
            (Mode::Instructions, _) =>
                "ratio of the instructions per iteration counted under callgrind",
        },
        file.alpha,
        file.comparisons.len(),
        file.threshold * 100.0,
        if live {
            format!(
                " (or when the process pairs fall into layout states and are fewer than {}; \
                 the line under the table says why)",
                LAYOUT_AVERAGE_MIN_PAIRS
            )
        } else {
            String::new()
        },
        placement
    );
    legend.push_str(&interval_words(file, live));
    legend
}

/// How the mode's interval was computed and what it covers (the legend's second part).
fn interval_words(file: &ComparisonFile, live: bool) -> String {
    match file.mode {
        Mode::Paired if live => " Process pairs: each pair is an OLD and a NEW process on one \
             CPU with one environment padding, alternating batches; 95% CI over the pairs' \
             log-ratios by random effects (weighted by each pair's precision, Hartung–Knapp, t \
             with pairs − 1 degrees of freedom): it includes the spread between pairs."
            .into(),
        Mode::Paired if file.exec.is_some() => format!(
            " Whole commands (vernier exec): each run a process of its own, the commands run \
             once per round in an order that reverses every round (ABBA); a pair is OLD's and \
             NEW's runs of one round, compared in {}; 95% CI by inverting the Wilcoxon \
             signed-rank test on the pairs' log-ratios. Every run has its own memory layout, so \
             the interval covers what differs between processes too.",
            file.exec
                .as_ref()
                .map_or("wall time", |e| e.judged.as_str())
        ),
        Mode::Paired => " Paired in one process on one CPU: OLD and NEW alternated, same \
             iterations per sample; 95% CI by inverting the Wilcoxon signed-rank test on the \
             pairs' log-ratios. It covers the noise within this process, not what differs \
             between processes (memory layout, CPU): for that, compare two executables with \
             vernier compare OLD NEW."
            .into(),
        Mode::Unpaired => format!(
            " Unpaired: the two result files were measured at different times, so any drift of \
             the machine between the runs shows up as a difference; 95% CI combines the two \
             files' own intervals (each covers the spread between its processes and rounds).{} \
             For a drift-free verdict compare the executables: vernier compare OLD_EXE NEW_EXE.",
            unpaired_units(file)
        ),
        Mode::Instructions => " Instruction counts: each side's measured loop counted under \
             callgrind at two iteration counts and differenced, the empty loop's taken off; the \
             counts are exact and repeat, so the verdict is the difference per iteration against \
             the threshold in instructions, with no interval and no test."
            .into(),
    }
}

/// What an unpaired comparison's ratios are of: cycles for the benchmarks both sides judged
/// in cycles, which a clock that moved between the runs does not move.
fn unpaired_units(file: &ComparisonFile) -> String {
    let unit = |u| {
        file.comparisons
            .iter()
            .filter(|c| c.unit == Some(u))
            .count()
    };
    match (unit(Unit::Cycles), unit(Unit::Ns)) {
        (0, _) => String::new(),
        (_, 0) => " The ratios are of cycles of the core (both sides judged in cycles).".into(),
        (c, n) => format!(
            " The ratios of {c} benchmark(s) judged in cycles on both sides are of cycles, of \
             the other {n} of ns."
        ),
    }
}

/// A difference measured on code that is the same in OLD and NEW: its placement's.
fn placed(c: &Comparison) -> bool {
    c.code == Some(Code::Same) && matches!(c.verdict, Verdict::Faster | Verdict::Slower)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Style;
    use crate::stats::compare::Mode;

    fn comparison(name: &str, ratio: f64, ci95: [f64; 2], p: f64) -> Comparison {
        Comparison {
            name: name.into(),
            ratio,
            ci95,
            p_value_raw: p,
            pairs: 4,
            ..Comparison::default()
        }
    }

    #[test]
    fn a_change_measured_below_the_threshold_is_said_beside_its_verdict() {
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        // 1000 against 1001 dependent additions; a benchmark that did not move; one faster.
        f.comparisons
            .push(comparison("chain", 1.00103, [1.000984, 1.001077], 1e-6));
        f.comparisons
            .push(comparison("same", 0.9999, [0.9993, 1.0004], 0.9));
        f.comparisons
            .push(comparison("quicker", 0.998, [0.9975, 0.9985], 1e-5));
        f.finalize();
        // The file keeps the contract's verdict.
        assert!(f.comparisons.iter().all(|c| c.verdict == Verdict::NoChange));
        let measured: Vec<bool> = f
            .comparisons
            .iter()
            .map(Comparison::measured_below_threshold)
            .collect();
        assert_eq!(measured, [true, false, true]);
        assert_eq!(
            below_threshold(&f.comparisons[0], f.threshold).unwrap(),
            "NEW slower by +0.10 % [+0.10, +0.11], below the noise threshold ±0.50 %"
        );
        assert!(below_threshold(&f.comparisons[2], f.threshold)
            .unwrap()
            .starts_with("NEW faster by -0.20 % [-0.25, -0.15]"));
        let render = Render {
            width: None,
            style: Style { color: false },
            verbose: false,
        };
        let table = table_fitted(&f, render);
        let row = |name: &str| {
            table
                .lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .to_string()
        };
        assert!(row("chain").contains("no-change*"), "{table}");
        assert!(!row("same ").contains('*'), "{table}");
        assert!(
            table.contains("* chain: NEW slower by +0.10 % [+0.10, +0.11]"),
            "{table}"
        );
        // Not significant once every benchmark had its chance: nothing is claimed.
        f.comparisons[0].p_value_raw = 0.2;
        f.finalize();
        assert!(!f.comparisons[0].measured_below_threshold());
    }
}
