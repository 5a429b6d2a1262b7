//! A row's figures as text: the cells of the table (durations to three digits, intervals as %
//! of the median, the spread, the warm-up) and the same figures in words for the sentences of
//! `-v` and the notes (the warm-up, the cycles, why a body that times like the empty loop is
//! not `optimized-away`).

use crate::analyze::InstructionsCheck;
use crate::result::BenchmarkResult;
use crate::stats::steady::WarmupClass;
use crate::units::{format_count, format_ns};

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
pub(super) fn cycles_words(b: &BenchmarkResult) -> String {
    match b
        .speed
        .as_ref()
        .and_then(|s| Some((s.cycles_per_iter?, s.cycles_ci95?)))
    {
        Some((c, [lo, hi])) if c.is_finite() => format!(
            "; {} cycles [{}, {}]",
            format_count(c),
            format_count(lo),
            format_count(hi)
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

pub(super) fn pct(x: f64) -> String {
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

/// Why a benchmark that times like the empty loop is not flagged `optimized-away`: its count of
/// instructions says the body runs (its work fits in the loop's own cycles). `on_executor`: an
/// async body, whose bar is the empty future on its executor.
pub(super) fn instructions_words(c: &InstructionsCheck, on_executor: bool) -> String {
    let bar = if on_executor {
        "the empty future's on its executor"
    } else {
        "the empty loop's"
    };
    format!(
        "not optimized away: its time cannot be told from {bar}, but counted under callgrind it \
         executes {} instructions per iteration{} against {bar} {}, so the body runs and its \
         work fits in the loop's own cycles",
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
