//! A threaded benchmark's line under its row: throughput, scaling against one thread, the time
//! per operation as each thread sees it, and how unequal the threads' finishes were.

use crate::result::BenchmarkResult;
use crate::units::format_ns;

/// Operations per second for people: `1.23 G/s`.
pub fn rate(per_s: f64) -> String {
    if !per_s.is_finite() {
        return "—".into();
    }
    let (v, unit) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(scale, _)| per_s >= *scale)
        .map_or((per_s, ""), |(scale, u)| (per_s / scale, u));
    format!("{} {unit}ops/s", super::format_count(v))
}

/// The line, for a threaded benchmark (`None` otherwise, and for a body the compiler removed:
/// its rate and time per operation would be the empty loop's, or the clock reads').
pub fn line(b: &BenchmarkResult) -> Option<String> {
    if b.removed() {
        return None;
    }
    let (t, s) = (b.threads?, b.scaling.as_ref()?);
    let mut out = format!(
        "{t} thread{}: {} [{}, {}]",
        if t == 1 { "" } else { "s" },
        rate(s.throughput_per_s),
        rate(s.throughput_ci95[0]),
        rate(s.throughput_ci95[1]),
    );
    if let Some(a) = &s.against_one {
        out.push_str(&format!(
            "; {:.2}× one thread [{:.2}, {:.2}], efficiency {:.0} %",
            a.speedup,
            a.speedup_ci95[0],
            a.speedup_ci95[1],
            a.efficiency * 100.0
        ));
    }
    out.push_str(&format!(
        "; each thread {} per op",
        format_ns(s.thread_per_iter_ns)
    ));
    if let Some(w) = s.time.cpu_wait_share.filter(|&w| w > 0.0) {
        out.push_str(&format!(
            "; waited for a CPU {:.1} % of the time",
            w * 100.0
        ));
    }
    if let (Some(b), Some(a)) = (s.on_cpu_speedup, &s.against_one) {
        if (b / a.speedup - 1.0).abs() > 0.1 {
            out.push_str(&format!("; {b:.2}× with the waits left out"));
        }
    }
    if s.imbalance.is_finite() && t > 1 {
        out.push_str(&format!(
            "; last thread {:.1} % after the first (median; worst {:.1} %)",
            s.imbalance * 100.0,
            s.imbalance_max * 100.0
        ));
    }
    Some(out)
}
