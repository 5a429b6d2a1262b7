//! Plain-text report of results: a table row per benchmark and its diagnostics in words.
//! Renders; never measures. Colour is the caller's choice (the CLI honours `NO_COLOR` and
//! terminals); without it the text is plain.

use crate::diagnostic::Code;
use crate::result::{BenchmarkResult, Harness, Status};
use crate::timer::TimerInfo;
use std::fmt::Write as _;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const GREEN: &str = "\x1b[32m";

/// Styling of the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("{code}{s}{RESET}")
        } else {
            s.to_string()
        }
    }
}

/// A duration in ns with a unit that keeps four significant digits.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "—".into();
    }
    let (v, unit) = if ns.abs() >= 1e9 {
        (ns / 1e9, "s")
    } else if ns.abs() >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns.abs() >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let digits = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 10.0 {
        2
    } else if v.abs() >= 1.0 {
        3
    } else {
        4
    };
    format!("{v:.digits$} {unit}")
}

/// The run's header: timer and the harness's own costs.
pub fn header(timer: &TimerInfo, harness: &Harness, style: Style) -> String {
    let hz = timer
        .tsc_hz
        .map(|h| format!(" at {:.3} GHz", h / 1e9))
        .unwrap_or_default();
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
    let mut s = style.paint(
        DIM,
        &format!(
            "timer {}{hz}: resolution {}, one read {} · empty loop {}/iter · sample overhead {}{cycle}",
            timer.kind.as_str(),
            format_ns(timer.resolution_ns),
            format_ns(timer.overhead_ns / 2.0),
            format_ns(harness.empty_iter_ns),
            format_ns(harness.sample_cost_ns),
        ),
    );
    s.push('\n');
    s
}

/// Column titles.
pub fn table_head(style: Style) -> String {
    style.paint(
        BOLD,
        &format!(
            "{:<34} {:>12} {:>9} {:>11} {:>11} {:>17} {:>22} {:>8}",
            "benchmark",
            "median/iter",
            "95% CI",
            "minimum",
            "robust σ",
            "samples × iters",
            "warm-up",
            "T_tot"
        ),
    )
}

/// One benchmark: its row, then each diagnostic on its own line.
pub fn row(b: &BenchmarkResult, style: Style) -> String {
    let mut s = String::new();
    let name = if b.name.chars().count() > 34 {
        let mut n: String = b.name.chars().take(33).collect();
        n.push('…');
        n
    } else {
        b.name.clone()
    };
    let p = &b.per_iter;
    let invalid = b.diagnostics.iter().any(|d| d.code.invalidates_figure());
    let optimized_away = b.diagnostics.iter().any(|d| d.code == Code::OptimizedAway);
    if b.status == Status::Failed && !p.median_ns.is_finite() {
        let _ = write!(s, "{:<34} {}", name, style.paint(RED, "FAILED"));
    } else {
        let rel = (p.ci95_ns[1] - p.ci95_ns[0]) / 2.0 / p.median_ns * 100.0;
        let median = if optimized_away {
            style.paint(YELLOW, &format!("{:>12}", "(optimized)"))
        } else if invalid {
            style.paint(YELLOW, &format!("{:>12}", format_ns(p.median_ns)))
        } else {
            style.paint(BOLD, &format!("{:>12}", format_ns(p.median_ns)))
        };
        let ci = if optimized_away {
            format!("{:>9}", "—")
        } else {
            let text = if rel < 0.01 {
                format!("{:>9}", "<±0.01%")
            } else {
                format!("{:>9}", format!("±{:.2}%", rel))
            };
            if rel > 1.0 {
                style.paint(YELLOW, &text)
            } else {
                style.paint(GREEN, &text)
            }
        };
        let warm = format!("{:.2} s {}", b.warmup.seconds, b.warmup.class.as_str());
        let _ = write!(
            s,
            "{:<34} {} {} {:>11} {:>11} {:>17} {:>22} {:>8}",
            name,
            median,
            ci,
            if optimized_away {
                "—".into()
            } else {
                format_ns(p.min_ns)
            },
            if optimized_away {
                "—".into()
            } else {
                format_ns(p.sigma_ns)
            },
            format!("{} × {}", b.steady_samples, b.iters_per_sample),
            warm,
            format!("{:.2} s", b.total_s),
        );
        if b.status == Status::Failed {
            let _ = write!(s, " {}", style.paint(RED, "FAILED (partial)"));
        }
    }
    if let Some(e) = &b.error {
        let _ = write!(s, "\n    {} {}", style.paint(RED, "error:"), e);
    }
    for d in &b.diagnostics {
        let _ = write!(
            s,
            "\n    {} {}",
            style.paint(YELLOW, &format!("{}:", d.code)),
            d.message
        );
    }
    s
}

/// What each column means, printed once after the table.
pub fn legend(style: Style) -> String {
    style.paint(
        DIM,
        "median/iter: median of per-iteration times over the steady samples (warm-up excluded).\n\
         95% CI: distribution-free interval of the median (order statistics), widened by a\n\
         batch-medians interval when the machine drifts. minimum: fastest steady sample.\n\
         robust σ: σ_iter = (IQR/1.349 of sample times)/√N. T_tot: the benchmark's whole wall time.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
