//! The profile document (`vernier profile --json`): per benchmark, each function's costs per
//! iteration of the measured loop, counted under callgrind, and the folded stacks its flame
//! graph is drawn from. `profile` writes it, `compare --profile` and the HTML report read it,
//! through these types.

use serde::{Deserialize, Serialize};

/// What kind of profile: counted (callgrind) or sampled (perf).
pub const EXACT: &str = "exact";
/// A sampled profile (`vernier profile --sampled`): its counts are samples.
pub const SAMPLED: &str = "sampled";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileFile {
    /// `"exact"`: counted under callgrind over the measured loop only.
    pub profile: String,
    /// The program profiled.
    pub program: String,
    /// The events of each function's `own` and `inclusive` lists, in their order (`Ir`, `Dr`,
    /// `Dw`, `I1mr`, `D1mr`, …, as callgrind names them).
    pub events: Vec<String>,
    pub benchmarks: Vec<BenchProfile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchProfile {
    pub name: String,
    /// Instructions per iteration of the whole loop body.
    pub instructions_per_iter: Option<f64>,
    /// L1 hits + 5 × last-level hits + 35 × memory accesses, per iteration (`None` without the
    /// cache simulation's events).
    pub estimated_cycles_per_iter: Option<f64>,
    /// Its functions, most own instructions first.
    pub functions: Vec<FunctionCosts>,
    /// Folded stacks (`a;b;c count`, instructions for every `per` iterations), for the flame
    /// graph.
    pub folded: Vec<String>,
    /// Iterations the folded counts are for (a counted profile).
    pub per: u64,
    /// The source lines of its functions that cost most, per iteration, most own instructions
    /// first (at most [`LINES_KEPT`]; a counted profile of a program built with debug
    /// information, `-g`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<LineCosts>,
    /// Samples taken inside the loop (a sampled profile; its counts are samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    /// Why it could not be profiled (then the rest is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Source lines a profile keeps per benchmark.
pub const LINES_KEPT: usize = 50;

/// One source line's own costs per iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineCosts {
    /// The file as the debug information names it (`???` without it).
    pub file: String,
    /// The line (0 when unknown).
    pub line: u64,
    /// The function whose code it is.
    pub function: String,
    /// Its own costs per iteration, per event.
    pub own: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionCosts {
    pub name: String,
    /// Its own costs per iteration, per event.
    pub own: Vec<f64>,
    /// Its costs per iteration with those of the functions it calls, per event.
    pub inclusive: Vec<f64>,
}

impl BenchProfile {
    /// A benchmark that could not be profiled, and why.
    pub fn failed(name: &str, error: String) -> BenchProfile {
        BenchProfile {
            name: name.into(),
            instructions_per_iter: None,
            estimated_cycles_per_iter: None,
            functions: Vec::new(),
            folded: Vec::new(),
            per: 0,
            lines: Vec::new(),
            samples: None,
            error: Some(error),
        }
    }
}

impl BenchProfile {
    /// Its `n` costliest source lines that cost anything in event `event` (lines are kept
    /// costliest first), each with that cost; none without line information.
    pub fn costliest_lines(&self, event: usize, n: usize) -> Vec<(&LineCosts, f64)> {
        self.lines
            .iter()
            .map(|l| (l, l.own.get(event).copied().unwrap_or(0.0)))
            .filter(|(l, own)| l.line > 0 && *own > 0.0)
            .take(n)
            .collect()
    }
}

impl ProfileFile {
    /// The index of `event` in each function's lists.
    pub fn event(&self, event: &str) -> Option<usize> {
        self.events.iter().position(|e| e == event)
    }
}

/// Estimated cycles from per-iteration event counts, with the weights of iai and gungraun: an
/// L1 hit costs 1, a last-level hit 5, a memory access 35. `get` gives an event's count.
pub fn estimated_cycles(get: impl Fn(&str) -> Option<f64>) -> Option<f64> {
    let ir = get("Ir")?;
    let accesses = ir + get("Dr")? + get("Dw")?;
    let ram = get("ILmr")? + get("DLmr")? + get("DLmw")?;
    let l1_misses = get("I1mr")? + get("D1mr")? + get("D1mw")?;
    let ll_hits = l1_misses - ram;
    let l1_hits = accesses - ll_hits - ram;
    Some(l1_hits + 5.0 * ll_hits + 35.0 * ram)
}

/// A function's name as a profile shows it: past 60 characters, template arguments and
/// parameter lists cut to `<…>` and `(…)` (`void ns::loop<Clock, main::{lambda()#1}>(Body&, …)`
/// → `void ns::loop<…>(…)`); never a `;`, which separates frames in folded stacks.
pub fn brief(name: &str) -> String {
    if name.chars().count() <= 60 {
        return name.replace(';', ",");
    }
    let mut out = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' | '(' | '[' => {
                if depth == 0 {
                    out.push(c);
                    out.push('…');
                }
                depth += 1;
            }
            '>' | ')' | ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(c);
                }
            }
            _ if depth == 0 => out.push(if c == ';' { ',' } else { c }),
            _ => {}
        }
    }
    out
}

/// Half the 95 % interval of a share of `k` samples out of `n` (normal approximation to the
/// binomial): how far a sampled share may be from the share of time it estimates.
pub fn share_half_width(k: f64, n: u64) -> f64 {
    if n == 0 {
        return f64::NAN;
    }
    let p = k / n as f64;
    1.96 * (p * (1.0 - p) / n as f64).sqrt()
}

/// Every function of two profiles of one benchmark with its own cost in event `event` on each
/// side (0 where it is absent), by name.
pub fn own_side_by_side(
    old: &BenchProfile,
    new: &BenchProfile,
    event: usize,
) -> Vec<(String, f64, f64)> {
    let own = |b: &BenchProfile, f: &str| {
        b.functions
            .iter()
            .find(|x| x.name == f)
            .and_then(|x| x.own.get(event).copied())
            .unwrap_or(0.0)
    };
    let mut names: Vec<&str> = old
        .functions
        .iter()
        .chain(&new.functions)
        .map(|f| f.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|f| (f.to_string(), own(old, f), own(new, f)))
        .collect()
}

/// One function's own time per iteration on each side of a comparison of sampled profiles:
/// its share of the side's samples times the side's median time per iteration, each with the
/// half-width of its 95 % sampling interval ([`share_half_width`]; the median's own interval,
/// far narrower, is left out).
#[derive(Clone, Debug, PartialEq)]
pub struct SampledChange {
    pub name: String,
    pub before_ns: f64,
    pub after_ns: f64,
    pub before_half_width: f64,
    pub after_half_width: f64,
}

impl SampledChange {
    /// NEW's time less OLD's, ns per iteration.
    pub fn change(&self) -> f64 {
        self.after_ns - self.before_ns
    }

    /// Half-width of the change's 95 % interval (the sides' sampling errors are independent).
    pub fn half_width(&self) -> f64 {
        self.before_half_width.hypot(self.after_half_width)
    }

    /// Whether the change is larger than its sampling error.
    pub fn beyond_error(&self) -> bool {
        self.change().abs() > self.half_width()
    }
}

/// Each function's own time per iteration in two sampled profiles of one benchmark, OLD's
/// median `old_ns` and NEW's `new_ns`, the largest changes first. Empty when either side has
/// no samples.
pub fn sampled_differential(
    old: &BenchProfile,
    new: &BenchProfile,
    old_ns: f64,
    new_ns: f64,
) -> Vec<SampledChange> {
    let (Some(no), Some(nn)) = (
        old.samples.filter(|&n| n > 0),
        new.samples.filter(|&n| n > 0),
    ) else {
        return Vec::new();
    };
    let mut out: Vec<SampledChange> = own_side_by_side(old, new, 0)
        .into_iter()
        .map(|(f, ko, kn)| SampledChange {
            name: f,
            before_ns: ko / no as f64 * old_ns,
            after_ns: kn / nn as f64 * new_ns,
            before_half_width: share_half_width(ko, no) * old_ns,
            after_half_width: share_half_width(kn, nn) * new_ns,
        })
        .filter(|c| c.before_ns > 0.0 || c.after_ns > 0.0)
        .collect();
    out.sort_by(|a, b| {
        b.change()
            .abs()
            .total_cmp(&a.change().abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// A sampled profile's folded stacks with each count turned into picoseconds per iteration
/// (its share of the samples times `median_ns`), so that two sides with different sample
/// counts and speeds draw to one scale in a differential flame graph.
pub fn folded_ps_per_iter(b: &BenchProfile, median_ns: f64) -> Vec<String> {
    let n = b.samples.unwrap_or(0).max(1) as f64;
    b.folded
        .iter()
        .filter_map(|l| {
            let (stack, count) = l.rsplit_once(' ')?;
            let k: f64 = count.parse().ok()?;
            Some(format!(
                "{stack} {}",
                (k / n * median_ns * 1e3).round() as u64
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimated_cycles_weigh_each_level() {
        let counts = [
            ("Ir", 100.0),
            ("Dr", 30.0),
            ("Dw", 10.0),
            ("I1mr", 0.0),
            ("D1mr", 4.0),
            ("D1mw", 1.0),
            ("ILmr", 0.0),
            ("DLmr", 2.0),
            ("DLmw", 0.0),
        ];
        let get = |e: &str| counts.iter().find(|(n, _)| *n == e).map(|(_, v)| *v);
        // 140 accesses: 2 from memory, 3 last-level hits, 135 L1 hits.
        assert_eq!(estimated_cycles(get), Some(135.0 + 5.0 * 3.0 + 35.0 * 2.0));
        assert_eq!(estimated_cycles(|e| (e == "Ir").then_some(1.0)), None);
    }

    #[test]
    fn names_are_cut_to_what_tells_them_apart() {
        assert_eq!(
            brief("void vernier::detail::vernier_measured_loop<vernier::detail::TscClock, main::{lambda()#1}>(main::{lambda()#1}&, unsigned long)"),
            "void vernier::detail::vernier_measured_loop<…>(…)"
        );
        assert_eq!(brief("heavy(unsigned long)"), "heavy(unsigned long)");
        let long = "<[u8; 4] as core::fmt::Debug>::fmt::h0123456789abcdef0123456789abcdef";
        assert_eq!(brief(long), "<…>::fmt::h0123456789abcdef0123456789abcdef");
        assert_eq!(brief("a;b"), "a,b");
    }

    fn sampled(name: &str, samples: u64, own: &[(&str, f64)], folded: &[&str]) -> BenchProfile {
        BenchProfile {
            functions: own
                .iter()
                .map(|&(f, k)| FunctionCosts {
                    name: f.into(),
                    own: vec![k],
                    inclusive: vec![k],
                })
                .collect(),
            folded: folded.iter().map(|s| s.to_string()).collect(),
            samples: Some(samples),
            error: None,
            ..BenchProfile::failed(name, String::new())
        }
    }

    #[test]
    fn sampled_shares_become_times_per_iteration_with_their_errors() {
        // OLD 100 ns: heavy 750 of 1000 samples, light 250. NEW 130 ns: heavy 1600 of 2000,
        // light 400. heavy 75 → 104 ns, light 25 → 26 ns.
        let old = sampled(
            "mix",
            1000,
            &[("heavy", 750.0), ("light", 250.0)],
            &["loop;heavy 750"],
        );
        let new = sampled("mix", 2000, &[("heavy", 1600.0), ("light", 400.0)], &[]);
        let d = sampled_differential(&old, &new, 100.0, 130.0);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].name, "heavy");
        assert!((d[0].before_ns - 75.0).abs() < 1e-9 && (d[0].after_ns - 104.0).abs() < 1e-9);
        assert!(d[0].beyond_error(), "{:?}", d[0]);
        // light: +1 ns, within its error (± 1.96·√(.25·.75/1000)·100 ≈ ± 2.7 ns alone).
        assert!(
            (d[1].change() - 1.0).abs() < 1e-9 && !d[1].beyond_error(),
            "{:?}",
            d[1]
        );
        assert!((d[1].before_half_width - 2.684).abs() < 1e-3, "{:?}", d[1]);
        assert!(
            sampled_differential(&old, &BenchProfile::failed("mix", "x".into()), 1.0, 1.0)
                .is_empty()
        );
        // 750 of 1000 samples of a 100 ns iteration: 75 ns, 75000 ps.
        assert_eq!(folded_ps_per_iter(&old, 100.0), ["loop;heavy 75000"]);
    }

    #[test]
    fn a_sampled_share_has_the_binomial_interval() {
        // 1800 of 2400 samples: 75 %, ± 1.96 · √(0.75 · 0.25 / 2400) = ± 1.73 points.
        let w = share_half_width(1800.0, 2400);
        assert!((w - 0.017_32).abs() < 1e-4, "{w}");
        assert_eq!(share_half_width(0.0, 100), 0.0);
        assert!(share_half_width(1.0, 0).is_nan());
    }
}
