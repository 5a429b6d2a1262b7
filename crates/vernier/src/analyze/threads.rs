//! Threaded benchmarks (`NAME/threads:T`): the figures of one thread count from its samples
//! (throughput, the time per operation as each thread sees it, how unequal the threads' own
//! times were), the speed-up and efficiency against the same benchmark's one-thread run, and
//! the two rules of threads: `oversubscribed` (more threads than the CPUs the process could
//! use) and `contended` (throughput growing less than half as fast as the thread count).
//!
//! A sample of T threads is timed from the release of all T (one barrier) to the last
//! thread's finish, on one clock; `per_iter` is that wall time per iteration of one thread,
//! so all threads together did `T / per_iter` operations per unit of time.
//!
//! Poor scaling has two causes a wall clock cannot tell apart: threads slowing each other
//! while on their CPUs (or blocking on a lock), and threads waiting for a CPU another task
//! held. Each thread's time on a CPU and run-queue wait over each sample (where the harness
//! read them) separate the two: [`judge`] says `contended` only when the scaling is poor with
//! the waits for a CPU left out; otherwise it names the waiting instead.

use super::PerIter;
use crate::diagnostic::{Finding, Interruption};
use crate::measure::Measurement;
use crate::stats;
use serde::{Deserialize, Serialize};

/// The share of the thread count's growth that throughput must keep up with: below half
/// (throughput at T threads under `1 + (T − 1) / 2` times one thread's, the whole interval of
/// the speed-up below it) the benchmark is `contended`. Two threads on a shared atomic or a
/// cache line written by both run at 0.3–0.5× one thread on the machines this was tuned on;
/// private work runs at 1.8–2.0×; half way leaves both far from the line.
pub const CONTENDED_GROWTH: f64 = 0.5;

/// A sample is interrupted (left out of the estimates, like a sample with a context switch)
/// when one of its threads waited for a CPU longer than this share of the sample's time: one
/// thread waiting delays the whole sample, and 1 % is far above the moment between a
/// thread's clock reading and the release (`workload::threads`: the pool arms, then releases).
pub const INTERRUPTING_WAIT: f64 = 0.01;

/// The share of the threads' time spent waiting for a CPU (or off their CPUs, where the wait
/// is unknown) from which poor scaling may be the machine's load rather than the code: 5 %
/// already moves a speed-up by more than the intervals of a quiet run.
pub const NOTABLE_WAIT: f64 = 0.05;

/// The least time a sample's threads must run (release to finish, their waits for a CPU left
/// out) for its scaling to be judged: with less, the release itself (a cache line crossing to
/// every thread) and each thread's clock readings (a system call and a `pread`, about a
/// microsecond on a virtual machine) are a visible part of the time, and private work reads as
/// contended. A calibrated run's samples are longer; a budget cut short (`--quick` on a loaded
/// machine), or samples lengthened by waits for a CPU rather than by running (calibration
/// stops early then), can be shorter.
pub const MIN_JUDGED_SAMPLE_NS: f64 = 10_000.0;

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
    /// Where the threads' time went: on a CPU, waiting for one.
    pub time: ThreadTime,
}

/// Where a thread count's time went, from each thread's on-CPU time and run-queue wait
/// (absent figures: not read by the harness, or not kept by the kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadTime {
    /// The threads' time on a CPU per operation: median over the samples of the threads'
    /// summed on-CPU time (each clipped to its own time) / (threads × iterations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_iter_ns: Option<f64>,
    /// The same of the threads' time less their run-queue wait (on a CPU, or blocked on
    /// purpose): what each operation took with the waits for a CPU left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unwaited_per_iter_ns: Option<f64>,
    /// The share of the threads' time (release to each one's finish, summed) spent runnable
    /// but waiting for a CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_share: Option<f64>,
    /// The share of it spent off a CPU for any reason (waiting for one, or blocked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu_share: Option<f64>,
}

/// One thread in one sample: its own time, and its on-CPU time and run-queue wait where
/// known, both clipped to its own time (their window may start a few microseconds before the
/// release).
#[derive(Clone, Copy, Debug, PartialEq)]
struct ThreadSample {
    own: f64,
    cpu: Option<f64>,
    wait: Option<f64>,
}

/// The threads of sample `i`; `None` when a thread's own time is missing.
fn thread_samples(m: &Measurement, i: usize) -> Option<Vec<ThreadSample>> {
    let s = &m.samples;
    let at = |cols: &[Vec<Option<u64>>], k: usize| -> Option<f64> {
        cols.get(k)?.get(i).copied().flatten().map(|v| v as f64)
    };
    (0..s.thread_ns.len())
        .map(|k| {
            let own = at(&s.thread_ns, k)?;
            Some(ThreadSample {
                own,
                cpu: at(&s.thread_cpu_ns, k).map(|c| c.min(own)),
                wait: at(&s.thread_wait_ns, k).map(|w| w.min(own)),
            })
        })
        .collect()
}

/// Samples during which one thread waited for a CPU longer than [`INTERRUPTING_WAIT`] of the
/// sample's time (aligned with the samples; empty when no wait was read). Every thread
/// counts, not only the one that measures.
pub(super) fn waited_flags(m: &Measurement) -> Vec<bool> {
    if m.samples.thread_wait_ns.is_empty() {
        return Vec::new();
    }
    (0..m.samples.len())
        .map(|i| {
            let ns = m.samples.samples[i].ns as f64;
            thread_samples(m, i).is_some_and(|ts| {
                ts.iter()
                    .any(|t| t.wait.is_some_and(|w| w > INTERRUPTING_WAIT * ns))
            })
        })
        .collect()
}

/// The share of the threads' time over samples `idx` spent waiting for a CPU (`None` where
/// unknown).
pub(super) fn cpu_wait_share(m: &Measurement, idx: &[usize]) -> Option<f64> {
    share(
        idx.iter().filter_map(|&i| thread_samples(m, i)).flatten(),
        |t| t.wait,
    )
}

/// Σ part / Σ own over threads whose `part` is known; `None` when none is, or no time.
fn share(
    ts: impl Iterator<Item = ThreadSample>,
    part: impl Fn(&ThreadSample) -> Option<f64>,
) -> Option<f64> {
    let (mut p, mut own, mut known) = (0.0, 0.0, false);
    for t in ts {
        if let Some(x) = part(&t) {
            p += x;
            own += t.own;
            known = true;
        }
    }
    (known && own > 0.0).then(|| p / own)
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
    let mut all: Vec<ThreadSample> = Vec::with_capacity(idx.len() * threads);
    let (mut cpu_per, mut unwaited_per) = (Vec::new(), Vec::new());
    for &i in idx {
        let iters = m.samples.samples[i].iters.max(1) as f64;
        if let Some(ts) = thread_samples(m, i) {
            let per_op = |f: &dyn Fn(&ThreadSample) -> Option<f64>| -> Option<f64> {
                let v: Option<Vec<f64>> = ts.iter().map(f).collect();
                v.map(|v| v.iter().sum::<f64>() / (threads as f64 * iters))
            };
            cpu_per.extend(per_op(&|t| t.cpu));
            unwaited_per.extend(per_op(&|t| t.wait.map(|w| t.own - w)));
            all.extend(ts);
        }
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
    let median_of = |v: &[f64]| (!v.is_empty()).then(|| stats::median(v));
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
        time: ThreadTime {
            cpu_per_iter_ns: median_of(&cpu_per),
            unwaited_per_iter_ns: median_of(&unwaited_per),
            cpu_wait_share: share(all.iter().copied(), |t| t.wait),
            off_cpu_share: share(all.iter().copied(), |t| t.cpu.map(|c| t.own - c)),
        },
    })
}

/// `oversubscribed`: more threads than the CPUs the process could use.
pub(super) fn oversubscribed(t: &ThreadFigures) -> Option<Finding> {
    let cpus = t.cpus?;
    (t.threads > cpus as usize).then_some(Finding::Oversubscribed {
        threads: t.threads,
        cpus,
        cpu_wait_share: t.time.cpu_wait_share,
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

/// `contended` on the wall clock alone: the whole interval of the speed-up below
/// [`contended_below`]. Never for one thread.
pub fn contended(s: &Speedup, threads: usize) -> Option<Finding> {
    let none = ThreadTime::default();
    judge(s, threads, None, f64::INFINITY, &none, &none)
}

/// The speed-up with the waits for a CPU left out: `T × one / this` of the time per
/// operation less the run-queue wait where both runs know it, else of the on-CPU time per
/// operation; `None` when neither is known for both.
pub fn on_cpu_speedup(one: &ThreadTime, this: &ThreadTime, threads: usize) -> Option<f64> {
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => Some(threads as f64 * a / b),
        _ => None,
    };
    ratio(one.unwaited_per_iter_ns, this.unwaited_per_iter_ns)
        .or_else(|| ratio(one.cpu_per_iter_ns, this.cpu_per_iter_ns))
}

/// What poor scaling at `threads` threads means (speed-up `s` over one thread; `one` and
/// `this` where each run's time went; `cpus` the CPUs the run could use; `work_ns` how long a
/// sample's threads ran, their waits for a CPU left out):
///
/// - scaling at least half of perfect (the interval reaching [`contended_below`]): nothing;
/// - poor on the wall clock and with the waits for a CPU left out too (or the threads off
///   their CPUs under [`NOTABLE_WAIT`] of the time, or nothing known beyond the wall
///   clock): `contended`. A thread blocked on a lock counts as busy: that is contention;
/// - poor on the wall clock only, the threads waiting for a CPU (or, where the wait is
///   unknown, off their CPUs) a notable share of the time: not `contended`. With more
///   threads than CPUs `oversubscribed` (which carries the wait) says it; otherwise an
///   `interrupted` finding names the share;
/// - samples shorter than [`MIN_JUDGED_SAMPLE_NS`]: the speed-up with the waits left out is
///   not computed (its error is too large), and without notable waits no verdict is given
///   (the speed-up and its interval stand in the result alone). Only a budget cut very short
///   makes samples that short.
pub fn judge(
    s: &Speedup,
    threads: usize,
    cpus: Option<u32>,
    work_ns: f64,
    one: &ThreadTime,
    this: &ThreadTime,
) -> Option<Finding> {
    let below = contended_below(threads);
    if threads <= 1 || s.speedup_ci95[1] >= below {
        return None;
    }
    let judged = work_ns >= MIN_JUDGED_SAMPLE_NS;
    let on_cpu = on_cpu_speedup(one, this, threads).filter(|_| judged);
    let contended = Finding::Contended {
        threads,
        speedup: s.speedup,
        speedup_ci95: s.speedup_ci95,
        below,
        on_cpu_speedup: on_cpu,
        cpu_wait_share: this.cpu_wait_share,
    };
    let away = this.cpu_wait_share.or(this.off_cpu_share);
    let waited = away.is_some_and(|w| w >= NOTABLE_WAIT) && on_cpu.is_none_or(|b| b >= below);
    let known = on_cpu.is_some() || away.is_some();
    if waited {
        let over = cpus.is_some_and(|c| threads > c as usize);
        (!over).then_some(Finding::Interrupted(Interruption::ThreadsWaited {
            threads,
            speedup: s.speedup,
            on_cpu_speedup: on_cpu,
            below,
            cpu_wait_share: this.cpu_wait_share,
            off_cpu_share: this.off_cpu_share,
        }))
    } else if known && !judged {
        None
    } else {
        Some(contended)
    }
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
        samples.push_threads(n, [&cols, &[], &[]], Some(cpus));
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
                cpus: 2,
                cpu_wait_share: None,
            })
        );
        // No thread columns: not a threaded benchmark.
        let mut plain = m.clone();
        plain.samples.thread_ns.clear();
        assert!(figures(&plain, &[0], &p).is_none());
    }

    /// Two threads' own, on-CPU and waiting times (ns) in each of `n` samples of 100
    /// iterations: `(own, cpu, wait)` per thread, the same in every sample.
    fn timed(threads: &[(u64, u64, Option<u64>)], n: usize, cpus: u32) -> Measurement {
        let mut m = measurement(threads.iter().map(|t| vec![t.0; n]).collect(), cpus);
        m.samples.thread_cpu_ns = threads.iter().map(|t| vec![Some(t.1); n]).collect();
        if threads.iter().all(|t| t.2.is_some()) {
            m.samples.thread_wait_ns = threads.iter().map(|t| vec![t.2; n]).collect();
        }
        m
    }

    /// The verdict at two threads from one thread's and two threads' per-thread times.
    fn verdict(one: (u64, u64, Option<u64>), two: &[(u64, u64, Option<u64>)]) -> Option<Finding> {
        let idx: Vec<usize> = (0..5).collect();
        let f1 = figures(&timed(&[one], 5, 2), &idx, &per(one.0 as f64 / 100.0, 0.01)).unwrap();
        let wall = two.iter().map(|t| t.0).max().unwrap() as f64 / 100.0;
        let pt = per(wall, 0.01);
        let f2 = figures(&timed(two, 5, 2), &idx, &pt).unwrap();
        let s = speedup(&per(one.0 as f64 / 100.0, 0.01), &pt, 2).unwrap();
        judge(&s, 2, Some(2), 1e5, &f1.time, &f2.time)
    }

    #[test]
    fn waiting_for_a_cpu_is_not_contention() {
        // Private counters on a loaded machine: each thread does its 100 operations in one
        // thread's 1000 ns of CPU, but thread 1 waited 1500 ns for a CPU: 0.8× on the wall
        // clock, 2× with the wait left out. Not contended: the wait is named instead.
        let one = (1000, 1000, Some(0));
        let loaded = [(1000, 1000, Some(0)), (2500, 1000, Some(1500))];
        let f = verdict(one, &loaded).expect("0.8× is below half of perfect scaling");
        let Finding::Interrupted(Interruption::ThreadsWaited {
            on_cpu_speedup,
            cpu_wait_share,
            ..
        }) = &f
        else {
            panic!("not contended, the wait named instead: {f:?}")
        };
        assert!((on_cpu_speedup.unwrap() - 2.0).abs() < 1e-9);
        assert!((cpu_wait_share.unwrap() - 1500.0 / 3500.0).abs() < 1e-9);
        assert!(crate::diagnostic::words::message(&f).contains("threads waited for a CPU 43 %"));
        // The finding round-trips through the result file's diagnostic (its `data`).
        let d = crate::diagnostic::Diagnostic::from(&f);
        assert_eq!(d.code, Code::Interrupted);
        assert_eq!(d.finding(), Some(f.clone()));
        // With more threads than CPUs, `oversubscribed` says it: nothing is added here.
        let idx: Vec<usize> = (0..5).collect();
        let f1 = figures(&timed(&[one], 5, 1), &idx, &per(10.0, 0.01)).unwrap();
        let f2 = figures(&timed(&loaded, 5, 1), &idx, &per(25.0, 0.01)).unwrap();
        let s = speedup(&per(10.0, 0.01), &per(25.0, 0.01), 2).unwrap();
        assert_eq!(judge(&s, 2, Some(1), 1e5, &f1.time, &f2.time), None);
        assert!(matches!(
            oversubscribed(&f2),
            Some(Finding::Oversubscribed {
                cpu_wait_share: Some(_),
                ..
            })
        ));
    }

    #[test]
    fn contention_on_the_cpus_is_contended_even_under_load() {
        // A shared atomic: each thread on its CPU the whole time, each operation 5× slower.
        let one = (1000, 1000, Some(0));
        let f = verdict(one, &[(5000, 5000, Some(0)), (5000, 4990, Some(10))]).unwrap();
        let Finding::Contended { on_cpu_speedup, .. } = f else {
            panic!("contended: {f:?}")
        };
        assert!(on_cpu_speedup.unwrap() < 0.5);
        // The same with one thread also waiting for a CPU: still slow while on it.
        let f = verdict(one, &[(5000, 5000, Some(0)), (8000, 5000, Some(3000))]).unwrap();
        assert_eq!(f.code(), Code::Contended);
        // A lock: threads blocked (off their CPUs, not waiting for one) are contended.
        let f = verdict(one, &[(5000, 1000, Some(0)), (5000, 1000, Some(0))]).unwrap();
        assert_eq!(f.code(), Code::Contended);
        // Without the run-queue wait, blocked and waiting cannot be told apart: off the CPUs
        // most of the time, the finding says so instead of claiming contention.
        let f = verdict(
            (1000, 1000, None),
            &[(5000, 1000, None), (5000, 1000, None)],
        )
        .unwrap();
        assert_eq!(f.code(), Code::Interrupted);
        assert!(crate::diagnostic::words::message(&f).contains("does not say whether"));
        // Nothing but the wall clock (an older harness): contended, as before.
        let s = speedup(&per(10.0, 0.01), &per(50.0, 0.01), 2).unwrap();
        assert_eq!(contended(&s, 2).map(|f| f.code()), Some(Code::Contended));
        // Samples holding too little work for the release and the clock readings to vanish
        // in them: not judged (private counters read 0.4× in 400 ns samples)...
        let idx: Vec<usize> = (0..5).collect();
        let on = |t: &[(u64, u64, Option<u64>)]| {
            figures(&timed(t, 5, 2), &idx, &per(10.0, 0.01))
                .unwrap()
                .time
        };
        let (one_t, busy) = (on(&[(80, 80, Some(0))]), on(&[(400, 400, Some(0)); 2]));
        assert_eq!(judge(&s, 2, Some(2), 400.0, &one_t, &busy), None);
        // ... unless the threads waited for a CPU most of the time: that is said.
        let waits = on(&[(80, 80, Some(0)), (3_000_000, 100, Some(2_999_000))]);
        let f = judge(&s, 2, Some(2), 400.0, &one_t, &waits).unwrap();
        assert!(matches!(
            f,
            Finding::Interrupted(Interruption::ThreadsWaited {
                on_cpu_speedup: None,
                ..
            })
        ));
    }

    #[test]
    fn a_sample_with_any_thread_waiting_is_flagged() {
        // Thread 1 (not the measuring thread) waited in sample 1 only.
        let mut m = timed(&[(1000, 1000, Some(0)), (1000, 1000, Some(0))], 3, 2);
        m.samples.thread_wait_ns[1][1] = Some(400);
        assert_eq!(waited_flags(&m), vec![false, true, false]);
        assert!((cpu_wait_share(&m, &[0, 1, 2]).unwrap() - 400.0 / 6000.0).abs() < 1e-12);
        m.samples.thread_wait_ns.clear();
        assert!(waited_flags(&m).is_empty() && cpu_wait_share(&m, &[0]).is_none());
    }
}
