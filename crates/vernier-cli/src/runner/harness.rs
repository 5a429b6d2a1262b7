//! What the runner measures of a worker's harness before its benchmarks, in the first
//! worker: the empty loop's cost per iteration (to tell a body from the loop around it), and
//! the hardware counters' cost and baseline (what their reads add to every sample).

use crate::runner::worker::{Control, WorkerProcess, WorkerTarget};
use std::time::Instant;
use vernier::counters::CounterSelection;
use vernier::counters::{CounterSet, Event as CounterEvent, Unavailable};
use vernier::measure::{self, Batch, MonotonicClock};
use vernier::plan::Plan;
use vernier::protocol::BenchRef;
use vernier::result::{CountersHarness, ExecutorJson};
use vernier::samples::Samples;
use vernier::session::calibrate;

/// Samples per batch when measuring the counters' cost and baseline in a worker.
const COUNTER_PROBE_SAMPLES: usize = 256;
/// Batches per setting (the first, which opens the counters, is dropped).
const COUNTER_PROBE_BATCHES: usize = 8;

/// Counters in a worker: each `run` asks for `counters=<list>`; the worker opens them and
/// returns `ctr.` tokens for those it reads. Here, on an empty loop of one iteration:
/// - the baseline: each event's median delta per sample (what the reads add to every sample,
///   subtracted by the analysis);
/// - the cost: wall time per sample of a batch with the counters minus one without;
/// - what was not read: requested events absent from the reply, explained by opening the same
///   events in this process (same machine, same permissions); an event this process can read
///   but the worker does not return is put down to the worker's harness.
///
/// Sets `ctl.run_options` and lengthens `plan`'s samples when the reads cost more than
/// `MAX_COUNTER_OVERHEAD` of a sample. `None` when counters are off.
pub fn worker_counters(
    worker: &mut WorkerProcess,
    selection: &CounterSelection,
    ctl: &mut Control,
    plan: &mut Plan,
) -> Result<Option<CountersHarness>, String> {
    let requested = selection.events();
    if requested.is_empty() {
        return Ok(None);
    }
    let list: Vec<&str> = requested.iter().map(|e| e.name()).collect();
    let option = vec![("counters".to_string(), list.join(","))];
    let timed = |worker: &mut WorkerProcess| -> Result<(f64, Samples), String> {
        let mut times = Vec::new();
        let mut all = Samples::default();
        for k in 0..COUNTER_PROBE_BATCHES {
            let mut b = Batch::default();
            let t0 = Instant::now();
            worker.run(BenchRef::Empty, 1, COUNTER_PROBE_SAMPLES, &mut b)?;
            if k > 0 {
                times.push(t0.elapsed().as_nanos() as f64);
                let s: Vec<vernier::samples::Sample> =
                    b.ns.iter()
                        .map(|&ns| vernier::samples::Sample {
                            iters: 1,
                            ns,
                            t_ns: 0,
                            process: 0,
                            round: 0,
                            phase: vernier::samples::Phase::Calibration,
                        })
                        .collect();
                all.push_batch(&s, &b.counters);
            }
        }
        Ok((vernier::stats::median(&times), all))
    };
    // One batch first: a harness that returns none of the requested events (a Python
    // worker sends its garbage collections only) needs no measure of their cost, and is not
    // kept busy for it.
    worker.set_run_options(option.clone());
    let mut first = Batch::default();
    worker.run(BenchRef::Empty, 1, COUNTER_PROBE_SAMPLES, &mut first)?;
    let answered = |c: &vernier::samples::CounterColumn| list.contains(&c.event.as_str());
    let (without, with, batch) = if !first.counters.iter().any(answered) {
        (0.0, 0.0, Samples::default())
    } else {
        worker.set_run_options(Vec::new());
        let (without, _) = timed(worker)?;
        worker.set_run_options(option.clone());
        let (with, batch) = timed(worker)?;
        (without, with, batch)
    };

    let read: Vec<CounterEvent> = CounterEvent::ALL
        .iter()
        .copied()
        .filter(|e| {
            batch
                .counters
                .iter()
                .any(|c| c.event == e.name() && c.values.iter().any(|v| v.is_some()))
        })
        .collect();
    let own = CounterSet::open(&requested);
    let mut unavailable: Vec<Unavailable> = requested
        .iter()
        .filter(|e| !read.contains(e))
        .map(|&e| {
            own.unavailable()
                .iter()
                .find(|u| u.event == e)
                .cloned()
                .unwrap_or_else(|| Unavailable {
                    event: e,
                    reason: "the worker did not return it (its harness does not read counters, \
                             or could not open this one)"
                        .into(),
                    fix: None,
                })
        })
        .collect();
    unavailable.sort_by_key(|u| u.event);
    let baseline = batch
        .counters
        .iter()
        .filter_map(|c| {
            let v: Vec<f64> = c.values.iter().flatten().map(|&x| x as f64).collect();
            (!v.is_empty()).then(|| (c.event.clone(), vernier::stats::median(&v)))
        })
        .collect();
    let cost = ((with - without) / COUNTER_PROBE_SAMPLES as f64).max(0.0);
    if !read.is_empty() {
        ctl.run_options = option;
        plan.target_sample_ns = vernier::plan::sample_ns_for_counters(plan.target_sample_ns, cost);
    } else {
        worker.set_run_options(Vec::new());
    }
    let groups = read
        .iter()
        .map(|e| e.kind())
        .collect::<std::collections::HashSet<_>>()
        .len();
    Ok(Some(CountersHarness {
        requested: list.iter().map(|s| s.to_string()).collect(),
        events: read.iter().map(|e| e.name().to_string()).collect(),
        note: vernier::counters::unavailable_note(&unavailable),
        unavailable,
        read_cost_ns: if read.is_empty() { f64::NAN } else { cost },
        read_pair_ns: None,
        reads_per_side: groups,
        baseline,
        target_sample_ns: plan.target_sample_ns,
        overhead: cost / plan.target_sample_ns as f64,
    }))
}

/// Budget of the worker's empty-loop measurement. Its median serves only to tell a body from
/// the loop around it (`optimized-away`), which needs it to a few percent: 40 ms of samples
/// give that with room, and leave the benchmarks' budget nearly whole.
const EMPTY_LOOP_BUDGET_NS: u64 = 40_000_000;

/// How many times the empty loop's budget the empty future gets when that budget was too short
/// to measure it.
const EMPTY_FUTURE_WIDER: u64 = 5;

/// The worker harness's empty-loop cost per iteration, in ns and in cycles of the core at that
/// time (when its batches were probed), measured once in the first worker.
pub fn empty_loop(first: &mut WorkerProcess, plan: &Plan) -> Option<(f64, Option<f64>)> {
    let empty_plan = plan.rebudget(EMPTY_LOOP_BUDGET_NS);
    self_measured(first, BenchRef::Empty, &empty_plan)
}

/// One self-measurement of the harness in the worker (its empty loop, an executor's empty
/// future): the per-iteration median in ns and in cycles, `None` when it gave no figure.
fn self_measured(
    first: &mut WorkerProcess,
    bench: BenchRef,
    plan: &Plan,
) -> Option<(f64, Option<f64>)> {
    let timer = first.hello.timer;
    let mut t = WorkerTarget {
        worker: first,
        bench,
    };
    let m = measure::measure(&mut t, &MonotonicClock, plan, &timer, &mut |_| {});
    calibrate::self_measurement_both(&m, plan, &timer)
}

/// Each async benchmark's executor with its empty future's time per iteration, measured in
/// the first worker once per executor (`run empty_future:<index>` of the first selected
/// benchmark on it, with the empty loop's budget), in the order of `selected`; `None` for a
/// synchronous benchmark. A figure that could not be measured is NaN.
pub fn empty_futures(
    first: &mut WorkerProcess,
    plan: &Plan,
    selected: &[usize],
) -> Vec<Option<ExecutorJson>> {
    let mut measured: Vec<ExecutorJson> = Vec::new();
    let kinds: Vec<_> = selected
        .iter()
        .map(|&i| first.executors.get(i).cloned().flatten().map(|k| (i, k)))
        .collect();
    kinds
        .into_iter()
        .map(|kind| {
            let (i, (name, on_calling_core)) = kind?;
            if let Some(e) = measured.iter().find(|e| e.name == name) {
                return Some(e.clone());
            }
            // An executor made anew for each sample (a Python event loop) can spend the empty
            // loop's budget on its own start-ups before the count of iterations is found: then
            // once more with a budget EMPTY_FUTURE_WIDER times longer.
            let (empty_future_ns, empty_future_cycles) = [
                plan.rebudget(EMPTY_LOOP_BUDGET_NS),
                plan.rebudget(EMPTY_LOOP_BUDGET_NS * EMPTY_FUTURE_WIDER),
            ]
            .iter()
            .find_map(|p| self_measured(&mut *first, BenchRef::EmptyFuture(i), p))
            .unwrap_or((f64::NAN, None));
            let e = ExecutorJson {
                name,
                empty_future_ns,
                empty_future_cycles,
                on_calling_core,
            };
            measured.push(e.clone());
            Some(e)
        })
        .collect()
}

/// The counters' cost and baseline in the worker; a worker that cannot serve counters still
/// gets its benchmarks measured, without them (and a worker that cannot serve anything fails
/// each benchmark with the reason).
pub fn counters_or_none(
    first: &mut WorkerProcess,
    selection: &CounterSelection,
    ctl: &mut Control,
    plan: &mut Plan,
) -> Option<CountersHarness> {
    match worker_counters(first, selection, ctl, plan) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vernier: counters are off for this run: measuring their cost in the worker failed: {e}");
            ctl.run_options.retain(|(k, _)| k != "counters");
            None
        }
    }
}
