//! Threaded benchmarks (`NAME/threads:T`): the figures of one thread count from its samples
//! (throughput, the time per operation as each thread sees it, how unequal the threads' own
//! times were), the speed-up and efficiency against the same benchmark's one-thread run, and
//! the two rules of threads: `oversubscribed` (more threads than the CPUs the process could
//! use) and `contended` (throughput growing less than half as fast as the thread count).
//!
//! A sample of T threads is timed from the release of all T (one barrier) to the last
//! thread's finish, on one clock; `per_iter` is that wall time per iteration of one thread,
//! so all threads together did `T / per_iter` operations per unit of time.

use super::PerIter;
use crate::diagnostic::Finding;
use crate::measure::Measurement;
use crate::stats;
use serde::{Deserialize, Serialize};

/// The share of the thread count's growth that throughput must keep up with: below half
/// (throughput at T threads under `1 + (T − 1) / 2` times one thread's, the whole interval of
/// the speed-up below it) the benchmark is `contended`. Two threads on a shared atomic or a
/// cache line written by both run at 0.3–0.5× one thread on the machines this was tuned on;
/// private work runs at 1.8–2.0×; half way leaves both far from the line.
pub const CONTENDED_GROWTH: f64 = 0.5;

/// The figures of one thread count, from its headline samples.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadFigures {
    pub threads: usize,
    /// The CPUs the process could use (its affinity mask), when the harness said.
    pub cpus: Option<u32>,
    /// Operations of all threads per second (`threads / per_iter`), with its 95 % interval
    /// (from the median's own interval in this run).
    pub throughput_per_s: f64,
    pub throughput_ci95: [f64; 2],
    /// The time per operation as each thread sees it: median over the samples and threads of
    /// a thread's own time (release to its finish) per iteration.
    pub thread_per_iter_ns: f64,
    /// How unequal the threads were: median over the samples of (last finish − first
    /// finish) / last finish; 0 when they all finished together.
    pub imbalance: f64,
    /// The largest such share in one sample.
    pub imbalance_max: f64,
}

/// The figures of a threaded measurement over its headline samples `idx`, with the
/// headline's `per_iter`; `None` for a benchmark without threads.
pub(super) fn figures(m: &Measurement, idx: &[usize], per_iter: &PerIter) -> Option<ThreadFigures> {
    let cols = &m.samples.thread_ns;
    if cols.is_empty() {
        return None;
    }
    let threads = cols.len();
    let mut own = Vec::with_capacity(idx.len() * threads);
    let mut spread = Vec::with_capacity(idx.len());
    for &i in idx {
        let iters = m.samples.samples[i].iters.max(1) as f64;
        let times: Vec<f64> = cols
            .iter()
            .filter_map(|c| c.get(i).copied().flatten())
            .map(|t| t as f64)
            .collect();
        if times.len() != threads {
            continue;
        }
        own.extend(times.iter().map(|t| t / iters));
        let (lo, hi) = times.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
        if hi > 0.0 {
            spread.push((hi - lo) / hi);
        }
    }
    let t = threads as f64;
    let per_s = |ns: f64| if ns > 0.0 { t * 1e9 / ns } else { f64::NAN };
    let [lo, hi] = per_iter.run_ci95_ns;
    Some(ThreadFigures {
        threads,
        cpus: m.samples.cpus,
        throughput_per_s: per_s(per_iter.median_ns),
        throughput_ci95: [per_s(hi), per_s(lo)],
        thread_per_iter_ns: if own.is_empty() {
            f64::NAN
        } else {
            stats::median(&own)
        },
        imbalance: if spread.is_empty() {
            f64::NAN
        } else {
            stats::median(&spread)
        },
        imbalance_max: spread.iter().copied().fold(f64::NAN, f64::max),
    })
}

/// `oversubscribed`: more threads than the CPUs the process could use.
pub(super) fn oversubscribed(t: &ThreadFigures) -> Option<Finding> {
    let cpus = t.cpus?;
    (t.threads > cpus as usize).then_some(Finding::Oversubscribed {
        threads: t.threads,
        cpus,
    })
}

/// Throughput at T threads against one thread's, from the two runs' medians and intervals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Speedup {
    /// Throughput at T threads / throughput at one: `T × median(1) / median(T)`.
    pub speedup: f64,
    /// Its 95 % interval: the two medians' own intervals combined on a log scale (their
    /// relative half-widths added in quadrature: the runs are independent).
    pub speedup_ci95: [f64; 2],
    /// `speedup / T`: 1 when each thread runs as fast as one alone.
    pub efficiency: f64,
    pub efficiency_ci95: [f64; 2],
}

/// The speed-up of `threads` threads (per-iteration wall time `this`) over one thread
/// (`one`); `None` when either median is not a positive figure.
pub fn speedup(one: &PerIter, this: &PerIter, threads: usize) -> Option<Speedup> {
    let (m1, mt) = (one.median_ns, this.median_ns);
    if !(m1 > 0.0 && mt > 0.0) || threads == 0 {
        return None;
    }
    let t = threads as f64;
    let s = t * m1 / mt;
    let log_half = |p: &PerIter| {
        let [lo, hi] = p.run_ci95_ns;
        if lo > 0.0 && hi >= lo {
            (hi.ln() - lo.ln()) / 2.0
        } else {
            0.0
        }
    };
    let h = log_half(one).hypot(log_half(this));
    let ci = [s * (-h).exp(), s * h.exp()];
    Some(Speedup {
        speedup: s,
        speedup_ci95: ci,
        efficiency: s / t,
        efficiency_ci95: [ci[0] / t, ci[1] / t],
    })
}

/// The speed-up below which `threads` threads are `contended`: throughput growing by less
/// than [`CONTENDED_GROWTH`] of the thread count's growth.
pub fn contended_below(threads: usize) -> f64 {
    1.0 + CONTENDED_GROWTH * (threads as f64 - 1.0)
}

/// `contended`: the whole interval of the speed-up below [`contended_below`]. Never for one
/// thread.
pub fn contended(s: &Speedup, threads: usize) -> Option<Finding> {
    let below = contended_below(threads);
    (threads > 1 && s.speedup_ci95[1] < below).then_some(Finding::Contended {
        threads,
        speedup: s.speedup,
        speedup_ci95: s.speedup_ci95,
        below,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::samples::{Phase, Sample, Samples};

    fn per(median: f64, rel: f64) -> PerIter {
        let mut p = PerIter::undefined();
        p.median_ns = median;
        p.run_ci95_ns = [median * (1.0 - rel), median * (1.0 + rel)];
        p.ci95_ns = p.run_ci95_ns;
        p
    }

    #[test]
    fn private_work_scales_and_shared_work_is_contended() {
        let one = per(10.0, 0.01);
        // Two threads, each at one thread's pace: the wall time per iteration is unchanged,
        // and both together do twice the work.
        let private = speedup(&one, &per(10.5, 0.01), 2).unwrap();
        assert!((private.speedup - 2.0 * 10.0 / 10.5).abs() < 1e-12);
        assert!((private.efficiency - 10.0 / 10.5).abs() < 1e-12);
        assert!(
            private.speedup_ci95[0] < private.speedup && private.speedup < private.speedup_ci95[1]
        );
        assert_eq!(contended(&private, 2), None);
        // A shared atomic: each thread 5× slower than alone, throughput 0.4× one thread's.
        let shared = speedup(&one, &per(50.0, 0.01), 2).unwrap();
        assert!((shared.speedup - 0.4).abs() < 1e-12);
        let f = contended(&shared, 2).expect("0.4× at two threads is contended");
        assert_eq!(f.code(), Code::Contended);
        let Finding::Contended { threads, below, .. } = f else {
            unreachable!()
        };
        assert_eq!((threads, below), (2, 1.5));
        // At four threads the line is at 2.5×.
        assert_eq!(contended_below(4), 2.5);
        assert!(contended(&speedup(&one, &per(10.0 * 4.0 / 2.4, 0.001), 4).unwrap(), 4).is_some());
        assert!(contended(&speedup(&one, &per(10.0 * 4.0 / 2.6, 0.001), 4).unwrap(), 4).is_none());
    }

    #[test]
    fn an_interval_reaching_the_line_is_not_evidence() {
        let one = per(10.0, 0.2);
        // 1.33× at two threads, below 1.5×, but the intervals (±20 % each) reach past it.
        let s = speedup(&one, &per(15.0, 0.2), 2).unwrap();
        assert!(s.speedup < 1.5 && s.speedup_ci95[1] > 1.5);
        assert_eq!(contended(&s, 2), None);
        // One thread against itself is never contended.
        assert_eq!(contended(&speedup(&one, &one, 1).unwrap(), 1), None);
        assert!(speedup(&one, &per(f64::NAN, 0.1), 2).is_none());
    }

    fn measurement(cols: Vec<Vec<u64>>, cpus: u32) -> Measurement {
        let n = cols[0].len();
        let mut samples = Samples::default();
        let s: Vec<Sample> = (0..n)
            .map(|i| Sample {
                iters: 100,
                ns: cols.iter().map(|c| c[i]).max().unwrap(),
                t_ns: i as u64,
                process: 0,
                round: 0,
                phase: Phase::Measure,
            })
            .collect();
        samples.push_batch(&s, &[]);
        samples.push_threads(n, &cols, Some(cpus));
        let mut m = Measurement::empty();
        m.samples = samples;
        m.iters_per_sample = 100;
        m
    }

    #[test]
    fn figures_give_throughput_own_time_and_imbalance() {
        // Thread 1 finishes 20 % earlier than thread 0 in every sample.
        let m = measurement(vec![vec![1000, 1000, 1000], vec![800, 800, 800]], 2);
        let p = per(10.0, 0.0);
        let f = figures(&m, &[0, 1, 2], &p).unwrap();
        assert_eq!(f.threads, 2);
        assert_eq!(f.throughput_per_s, 2e8);
        assert_eq!(f.thread_per_iter_ns, 9.0);
        assert!((f.imbalance - 0.2).abs() < 1e-12);
        assert!((f.imbalance_max - 0.2).abs() < 1e-12);
        assert_eq!(oversubscribed(&f), None);
        let over = figures(&measurement(vec![vec![1]; 3], 2), &[0], &p).unwrap();
        assert_eq!(
            oversubscribed(&over),
            Some(Finding::Oversubscribed {
                threads: 3,
                cpus: 2
            })
        );
        // No thread columns: not a threaded benchmark.
        let mut plain = m.clone();
        plain.samples.thread_ns.clear();
        assert!(figures(&plain, &[0], &p).is_none());
    }
}
