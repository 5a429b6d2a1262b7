//! The counting pass's plan, shared by the runner (a worker process of its own, with the
//! interposer preloaded) and a suite run on its own (in this process, with
//! [`crate::CountingAlloc`] installed): a warm-up iteration, [`SINGLES`] samples of one
//! iteration (exact counts per iteration and their spread), a sample of [`PROBE_ITERS`] that
//! measures what a counted iteration costs, then [`BULK_SAMPLES`] samples of k iterations, k
//! sized so the pass stays within [`BUDGET_SHARE`] of the benchmark's measuring time (the
//! stated bound is a tenth).

use crate::measure::in_process::Metered;
use crate::measure::Batch;
use crate::memory::{AllocCounts, MemoryReply};
use crate::result::memory::{per_iteration, MemoryJson};
use crate::timer::Timer;
use crate::workload::routine::Routine;
use std::time::Instant;

/// One-iteration samples per benchmark: enough for a median and a spread of exact counts.
pub const SINGLES: usize = 15;
/// Iterations of the sample that measures a counted iteration's cost.
pub const PROBE_ITERS: u64 = 64;
/// Samples of k iterations (their total over every iteration gives the mean).
pub const BULK_SAMPLES: usize = 3;
/// Largest k: beyond a million iterations the mean is exact enough for any count.
pub const MAX_BULK_ITERS: u64 = 1 << 20;
/// The share of the benchmark's measuring time the pass aims at: a tenth is the stated bound,
/// a fifth of it kept for what follows the last estimate (a round trip, the process's start).
pub const BUDGET_SHARE: f64 = 0.06;

/// `run(iters, samples)` gives one reading per sample.
pub type RunCounted<'a> = dyn FnMut(u64, usize) -> Result<Vec<AllocCounts>, String> + 'a;

/// The pass for a benchmark whose iteration takes about `per_iter_ns`, measured for
/// `measured_s`; `started` is when the pass began (a process start counts in its cost).
pub fn counting_pass(
    per_iter_ns: f64,
    measured_s: f64,
    started: Instant,
    run: &mut RunCounted<'_>,
) -> Result<MemoryJson, String> {
    let budget_s = BUDGET_SHARE * measured_s;
    let per_iter_s = if per_iter_ns.is_finite() && per_iter_ns > 0.0 {
        per_iter_ns * 1e-9
    } else {
        1e-9
    };
    let singles_n = ((budget_s / 2.0 / per_iter_s) as usize).clamp(1, SINGLES);
    run(1, 1)?; // warm-up: a first call's one-off allocations are not the iteration's
    let singles = run(1, singles_n)?;
    let mut bulk = Vec::new();
    let probe_iters = PROBE_ITERS.min((budget_s / 4.0 / per_iter_s) as u64);
    if probe_iters > 1 {
        let t = Instant::now();
        let c = run(probe_iters, 1)?;
        let counted_iter_s = t.elapsed().as_secs_f64() / probe_iters as f64;
        bulk.push((probe_iters, c[0]));
        let left_s = budget_s - started.elapsed().as_secs_f64();
        // Half of what is left, at the probe's rate: a longer sample may run slower (a
        // growing table in the interposer, caches).
        let k = ((left_s / 2.0 / BULK_SAMPLES as f64 / counted_iter_s) as u64).min(MAX_BULK_ITERS);
        if k > probe_iters {
            bulk.extend(run(k, BULK_SAMPLES)?.into_iter().map(|c| (k, c)));
        }
    }
    let cost_s = started.elapsed().as_secs_f64();
    per_iteration(&singles, &bulk, cost_s, measured_s)
        .ok_or_else(|| "the counting pass took no sample".to_string())
}

/// The counts of a reply's `memory`, or why there are none.
pub fn counted(reply: Option<MemoryReply>) -> Result<Vec<AllocCounts>, String> {
    match reply {
        Some(MemoryReply::Counted(v)) => Ok(v),
        Some(MemoryReply::Unavailable(why)) => Err(why),
        None => Err(
            "the worker's harness does not count allocations (no `mem.` tokens in its \
                     reply): rebuild it against this version of vernier"
                .into(),
        ),
    }
}

/// A suite run on its own: the pass in this process, when it can count (the counting global
/// allocator installed, or the interposer preloaded); `None` when it cannot.
pub fn in_process(
    routine: &mut dyn Routine,
    timer: &Timer,
    per_iter_ns: f64,
    measured_s: f64,
) -> Option<MemoryJson> {
    crate::memory::Source::detect().ok()?;
    let started = Instant::now();
    let mut run = |iters: u64, samples: usize| {
        let mut target = Metered {
            routine: &mut *routine,
            timer,
            counters: None,
        };
        let mut b = Batch::default();
        crate::protocol::memory::measure_counting(&mut target, iters, samples, &mut b)?;
        counted(b.memory)
    };
    counting_pass(per_iter_ns, measured_s, started, &mut run).ok()
}

/// A benchmark declared allocation-free that allocates fails, named, with its counts.
pub fn check_alloc_free(declared: bool, r: &mut crate::result::BenchmarkResult) {
    let Some(m) = r.memory.as_mut().filter(|_| declared) else {
        return;
    };
    m.alloc_free = true;
    if m.allocates() {
        r.status = crate::result::Status::Failed;
        r.error = Some(format!(
            "{} is declared allocation-free but allocates: {} allocation(s) and {} byte(s) per \
             iteration (counted over {} iterations)",
            r.name, m.allocs_per_iter, m.bytes_per_iter, m.iterations
        ));
    }
}
