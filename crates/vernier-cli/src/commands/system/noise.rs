//! `vernier system noise`: the machine's noise floor, measured the way a benchmark feels it.
//!
//! One thread per chosen CPU, pinned there, reads CLOCK_MONOTONIC in a tight loop. Two
//! consecutive reads are normally a few tens of nanoseconds apart; a larger gap means the
//! thread was not running: an interrupt, the scheduler tick, another task. Every gap above
//! a threshold is recorded (start, length). From those: interruptions per second, the
//! distribution of their lengths, the share of time lost, the dominant period (the tick
//! shows up as a peak of the intervals between interruptions) and the longest stall.

use std::thread;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::host::affinity::pin_current_thread;
use vernier::timer::monotonic_ns;

/// Reads used to learn the normal read-to-read gap before measuring.
const CALIBRATION_READS: usize = 200_000;
/// Auto threshold: this many times the median read-to-read gap …
const THRESHOLD_FACTOR: u64 = 10;
/// … and never below 1 µs (anything shorter is cache and pipeline jitter, not the OS).
const THRESHOLD_FLOOR_NS: u64 = 1_000;
/// Interruptions kept per CPU; more are counted but their details dropped. Preallocated so
/// the measuring loop never allocates.
const MAX_EVENTS: usize = 1 << 20;
/// Intervals within this relative width of each other fall in the same period peak.
const PERIOD_WINDOW: f64 = 0.10;

/// What to measure.
#[derive(Debug, Clone)]
pub struct NoiseConfig {
    pub cpus: Vec<usize>,
    pub duration_ns: u64,
    /// `None`: automatic (see [`THRESHOLD_FACTOR`], [`THRESHOLD_FLOOR_NS`]).
    pub threshold_ns: Option<u64>,
}

/// The noise floor of one CPU.
#[derive(Debug, Clone, Serialize)]
pub struct CpuNoise {
    pub cpu: usize,
    pub duration_s: f64,
    pub reads: u64,
    pub read_gap_median_ns: u64,
    pub threshold_ns: u64,
    pub interruptions: u64,
    pub interruptions_per_s: f64,
    pub duration_p50_ns: u64,
    pub duration_p90_ns: u64,
    pub duration_p99_ns: u64,
    pub duration_max_ns: u64,
    /// Share of wall time the spinning thread did not run (0..1).
    pub lost_share: f64,
    /// The most common interval between interruptions (the tick, typically).
    pub dominant_period_ns: Option<f64>,
    pub dominant_period_hz: Option<f64>,
    /// Share of the intervals that fall in the dominant peak.
    pub dominant_period_share: Option<f64>,
    pub longest_stall_ns: u64,
    /// When the longest stall started, from the start of the measurement.
    pub longest_stall_at_s: f64,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseReport {
    pub schema: u32,
    pub method: &'static str,
    pub clock: &'static str,
    pub cpus: Vec<CpuNoise>,
    /// The CPU that lost the least time: where to pin a benchmark.
    pub quietest_cpu: Option<usize>,
    /// How often a neighbour shared each CPU's core (`share`).
    pub core_share: Vec<super::share::CoreShare>,
}

struct Raw {
    reads: u64,
    start: u64,
    end: u64,
    median_gap: u64,
    threshold: u64,
    /// (start offset from `start`, length) of each gap above the threshold.
    events: Vec<(u64, u64)>,
    dropped: u64,
    lost_ns: u64,
}

fn median_read_gap() -> u64 {
    let mut gaps = Vec::with_capacity(CALIBRATION_READS);
    let mut prev = monotonic_ns();
    for _ in 0..CALIBRATION_READS {
        let t = monotonic_ns();
        gaps.push(t - prev);
        prev = t;
    }
    gaps.sort_unstable();
    gaps[gaps.len() / 2]
}

fn spin(cpu: usize, duration_ns: u64, threshold: Option<u64>) -> Result<Raw> {
    pin_current_thread(cpu).with_context(|| format!("cannot pin a thread to CPU {cpu}"))?;
    let median_gap = median_read_gap();
    let threshold = threshold.unwrap_or((median_gap * THRESHOLD_FACTOR).max(THRESHOLD_FLOOR_NS));
    let mut events: Vec<(u64, u64)> = Vec::with_capacity(MAX_EVENTS);
    let mut dropped = 0u64;
    let mut lost_ns = 0u64;
    let mut reads = 0u64;
    let start = monotonic_ns();
    let end = start + duration_ns;
    let mut prev = start;
    loop {
        let t = monotonic_ns();
        reads += 1;
        let gap = t - prev;
        if gap > threshold {
            lost_ns += gap;
            if events.len() < MAX_EVENTS {
                events.push((prev - start, gap));
            } else {
                dropped += 1;
            }
        }
        prev = t;
        if t >= end {
            break;
        }
    }
    Ok(Raw {
        reads,
        start,
        end: prev,
        median_gap,
        threshold,
        events,
        dropped,
        lost_ns,
    })
}

/// The `p` quantile of sorted durations, to the nanosecond (the library's quantile); 0 for none.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let ns: Vec<f64> = sorted.iter().map(|&d| d as f64).collect();
    let q = vernier::stats::quantile_sorted(&ns, p);
    if q.is_nan() {
        0
    } else {
        q.round() as u64
    }
}

/// The densest peak of `intervals`: the window `[x, x·(1+PERIOD_WINDOW)]` holding the most
/// values. Returns (median of the peak, share of all intervals in it).
pub fn dominant_period(intervals: &[u64]) -> Option<(f64, f64)> {
    if intervals.len() < 4 {
        return None;
    }
    let mut v = intervals.to_vec();
    v.sort_unstable();
    let (mut best_i, mut best_n) = (0usize, 0usize);
    let mut j = 0usize;
    for i in 0..v.len() {
        let hi = v[i] as f64 * (1.0 + PERIOD_WINDOW);
        if j < i {
            j = i;
        }
        while j < v.len() && (v[j] as f64) <= hi {
            j += 1;
        }
        if j - i > best_n {
            best_n = j - i;
            best_i = i;
        }
    }
    let peak = &v[best_i..best_i + best_n];
    Some((peak[peak.len() / 2] as f64, best_n as f64 / v.len() as f64))
}

fn analyze(cpu: usize, raw: Raw) -> CpuNoise {
    let wall = (raw.end - raw.start).max(1);
    let mut durations: Vec<u64> = raw.events.iter().map(|e| e.1).collect();
    durations.sort_unstable();
    let intervals: Vec<u64> = raw.events.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let period = dominant_period(&intervals);
    let longest = raw
        .events
        .iter()
        .max_by_key(|e| e.1)
        .copied()
        .unwrap_or((0, 0));
    let count = raw.events.len() as u64 + raw.dropped;
    let secs = wall as f64 * 1e-9;
    CpuNoise {
        cpu,
        duration_s: secs,
        reads: raw.reads,
        read_gap_median_ns: raw.median_gap,
        threshold_ns: raw.threshold,
        interruptions: count,
        interruptions_per_s: count as f64 / secs,
        duration_p50_ns: percentile(&durations, 0.50),
        duration_p90_ns: percentile(&durations, 0.90),
        duration_p99_ns: percentile(&durations, 0.99),
        duration_max_ns: durations.last().copied().unwrap_or(0),
        lost_share: raw.lost_ns as f64 / wall as f64,
        dominant_period_ns: period.map(|p| p.0),
        dominant_period_hz: period.map(|p| 1e9 / p.0),
        dominant_period_share: period.map(|p| p.1),
        longest_stall_ns: longest.1,
        longest_stall_at_s: longest.0 as f64 * 1e-9,
    }
}

/// Measure every CPU of `cfg` at the same time, one pinned thread each.
pub fn measure(cfg: &NoiseConfig) -> Result<NoiseReport> {
    if cfg.cpus.is_empty() {
        bail!("no CPU to measure");
    }
    let handles: Vec<_> = cfg
        .cpus
        .iter()
        .map(|&cpu| {
            let (d, t) = (cfg.duration_ns, cfg.threshold_ns);
            (cpu, thread::spawn(move || spin(cpu, d, t)))
        })
        .collect();
    let mut cpus = Vec::new();
    for (cpu, h) in handles {
        let raw = h
            .join()
            .map_err(|_| anyhow::anyhow!("the probe thread on CPU {cpu} panicked"))??;
        cpus.push(analyze(cpu, raw));
    }
    let quietest_cpu = cpus
        .iter()
        .min_by(|a, b| {
            a.lost_share
                .total_cmp(&b.lost_share)
                .then(a.interruptions_per_s.total_cmp(&b.interruptions_per_s))
        })
        .map(|c| c.cpu);
    Ok(NoiseReport {
        schema: 1,
        method: "pinned spin loop; gaps between consecutive clock reads above the threshold are interruptions",
        clock: "CLOCK_MONOTONIC (clock_gettime, vDSO)",
        cpus,
        quietest_cpu,
        core_share: Vec::new(),
    })
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// The table `vernier system noise` prints.
pub fn render(r: &NoiseReport) -> String {
    let mut out = String::new();
    if let Some(c) = r.cpus.first() {
        out.push_str(&format!(
            "noise floor: {:.2} s per CPU (all at once); interruption = gap between clock reads > {} ns (median gap {} ns)\n\n",
            c.duration_s, c.threshold_ns, c.read_gap_median_ns
        ));
    }
    out.push_str(
        "cpu   interrupts/s   p50 µs   p90 µs   p99 µs    max µs   lost %   dominant period          longest stall\n",
    );
    for c in &r.cpus {
        let period = match (
            c.dominant_period_ns,
            c.dominant_period_hz,
            c.dominant_period_share,
        ) {
            (Some(ns), Some(hz), Some(sh)) => {
                format!("{:.3} ms ({:.0} Hz, {:.0}%)", ns / 1e6, hz, sh * 100.0)
            }
            _ => "-".to_string(),
        };
        out.push_str(&format!(
            "{:>3}   {:>12.1}   {:>6}   {:>6}   {:>6}   {:>7}   {:>6.3}   {:<23}  {} µs at {:.3} s\n",
            c.cpu,
            c.interruptions_per_s,
            us(c.duration_p50_ns),
            us(c.duration_p90_ns),
            us(c.duration_p99_ns),
            us(c.duration_max_ns),
            c.lost_share * 100.0,
            period,
            us(c.longest_stall_ns),
            c.longest_stall_at_s
        ));
    }
    if let Some(q) = r.quietest_cpu {
        out.push_str(&format!(
            "\nquietest: CPU {q}: pin benchmarks there (`--cpu {q}`)\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_peak() {
        // A 4 ms tick with a few stray intervals.
        let mut v = vec![4_000_000u64; 20];
        v.extend([4_010_000, 3_990_000, 150_000, 9_000_000, 1_000]);
        let (p, share) = dominant_period(&v).unwrap();
        assert!((p - 4_000_000.0).abs() < 20_000.0);
        assert!(share > 0.8);
        assert!(dominant_period(&[1, 2]).is_none());
    }

    #[test]
    fn percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), 51);
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&[], 0.5), 0);
    }
}
