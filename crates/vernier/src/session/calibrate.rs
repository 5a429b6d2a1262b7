//! The harness measures its own costs, with the engine itself, once per run: the loop around an
//! empty body, a sample with no iterations, the cycle time (an add chain), and what reading the
//! counters adds to a sample. They go into every result file's `harness`.

use crate::analyze;
use crate::counters::{self, CounterSet, Event as CounterEvent};
use crate::measure::in_process::{sample_routine, InProcess};
use crate::measure::{self, Batch, Measurement, MonotonicClock};
use crate::plan::Plan;
use crate::result::{CountersHarness, Harness};
use crate::timer::Timer;
use crate::workload::routine::{Plain, Routine};
use std::hint::black_box;

/// The per-iteration median of a self-measurement (empty loop, add chain), or `None` when
/// calibration could not lengthen its samples to the plan's minimum (a loaded machine, a
/// budget too short): a harness cost taken from samples dominated by the timer would be wrong,
/// and everything compared with it too.
pub fn self_measurement(
    m: &Measurement,
    plan: &Plan,
    timer: &crate::timer::TimerInfo,
) -> Option<f64> {
    let per: Vec<f64> = measured(m).map(|(_, s)| s.per_iter_ns()).collect();
    if per.is_empty() || m.error.is_some() {
        return None;
    }
    let median = crate::stats::median(&per);
    let sample_ns = median * m.iters_per_sample as f64;
    (sample_ns >= plan.min_sample_ns(timer) as f64 / 2.0).then_some(median)
}

/// The samples a self-measurement's median is taken over (measured at the final count), with
/// their indices.
fn measured(m: &Measurement) -> impl Iterator<Item = (usize, &crate::samples::Sample)> {
    m.samples
        .samples
        .iter()
        .enumerate()
        .filter(|(_, s)| s.iters == m.iters_per_sample && s.phase == crate::samples::Phase::Measure)
}

/// A self-measurement's per-iteration median ([`self_measurement`]) and the same in cycles of
/// the core at that moment: each sample's time over the core-speed probe's cycle around it, as
/// a benchmark's cycles are taken. A bar compared in cycles stays put when the clock moves
/// between its measurement and the benchmark's, where one in ns does not. The cycles are
/// `None` when its batches were not probed; the whole is `None` when there is no median.
pub fn self_measurement_both(
    m: &Measurement,
    plan: &Plan,
    timer: &crate::timer::TimerInfo,
) -> Option<(f64, Option<f64>)> {
    let ns = self_measurement(m, plan, timer)?;
    let cycle = analyze::speed::sample_cycles(&m.samples, timer);
    let per: Vec<f64> = measured(m)
        .filter_map(|(i, s)| {
            let c = *cycle.get(i)?;
            (c.is_finite() && c > 0.0).then(|| s.per_iter_ns() / c)
        })
        .collect();
    Some((ns, (!per.is_empty()).then(|| crate::stats::median(&per))))
}

/// Budget for each start-up self-measurement (empty loop, add chain).
const SELF_BUDGET_NS: u64 = 80_000_000;
/// Additions per chain when estimating the cycle time.
const CHAIN_LEN: u64 = 1000;

/// Measure the harness's own costs with the engine itself: the per-iteration cost of the loop
/// around an empty body, the cost of a sample with no iterations, and the cycle time (from a
/// chain of dependent one-cycle additions).
pub fn calibrate_harness(timer: &Timer, plan: &Plan) -> Harness {
    let (empty_iter_ns, empty_iter_cycles, _) = self_measured(timer, plan, &mut Plain(|| ()));
    let mut zero = Plain(|| ());
    let mut costs: Vec<f64> = (0..2000)
        .map(|_| timer.ticks_to_ns_f64(zero.sample(timer, 0)))
        .collect();
    costs.sort_by(|a, b| a.total_cmp(b));
    Harness {
        empty_iter_ns,
        empty_iter_cycles,
        sample_cost_ns: costs[costs.len() / 2],
        ..calibrate_cycle(timer, plan)
    }
}

/// The cycle time (an add chain) and the machine's far-outlier share measured with it: what a
/// runner needs of its own calibration when the loop's costs are the worker's (`vernier run`
/// measures the worker's empty loop itself, so the runner's own would be thrown away). The
/// loop costs are NaN.
pub fn calibrate_cycle(timer: &Timer, plan: &Plan) -> Harness {
    let mut x = 0u64;
    let (chain, _, chain_m) = self_measured(
        timer,
        plan,
        &mut Plain(move || {
            x = crate::workload::kernels::add_chain(x, black_box(CHAIN_LEN));
            x
        }),
    );
    Harness {
        empty_iter_ns: f64::NAN,
        empty_iter_cycles: None,
        sample_cost_ns: f64::NAN,
        cycle_ns: chain / CHAIN_LEN as f64,
        cycle_source: "add-chain".into(),
        runner_batch_cost_ns: None,
        counters: None,
        noise_far_share: analyze::far_outlier_share(&chain_m),
        noise_sample_ns: analyze::median_sample_ns(&chain_m),
        known_cycle_ns: None,
        clock_ghz: None,
        wide_ratio: crate::workload::kernels::best_wide_ratio(
            timer,
            crate::plan::PROBE_ADDS,
            crate::workload::kernels::RATIO_ROUNDS,
        ),
        known_wide_ratio: None,
        earlier_runs_read: false,
    }
}

/// One start-up self-measurement of `routine` in this process: its per-iteration median (NaN
/// when it could not be measured, see [`self_measurement`]), the same in cycles when its
/// batches were probed ([`self_measurement_both`]), and the measurement.
pub(super) fn self_measured(
    timer: &Timer,
    plan: &Plan,
    routine: &mut dyn Routine,
) -> (f64, Option<f64>, Measurement) {
    let short = plan.rebudget(SELF_BUDGET_NS);
    let mut t = InProcess { routine, timer };
    let m = measure::measure(&mut t, &MonotonicClock, &short, &timer.info(), &mut |_| {});
    let (median, cycles) =
        self_measurement_both(&m, &short, &timer.info()).unwrap_or((f64::NAN, None));
    (median, cycles, m)
}

/// Measure what reading `set` around a sample costs, the way the samples read it: pairs of
/// `read_start` / `read_stop` around an empty timed region (the two clock reads). The wall
/// time of a pair is the read cost; each event's median delta over the empty region is the
/// baseline analysis subtracts from every sample. When the cost exceeds
/// [`plan::MAX_COUNTER_OVERHEAD`](crate::plan::MAX_COUNTER_OVERHEAD) of the plan's sample
/// length, the plan's samples are lengthened. `set` is `None` when nothing could be opened.
pub fn counter_harness(
    requested: &[CounterEvent],
    set: Option<&mut CounterSet>,
    timer: &Timer,
    plan: &mut Plan,
) -> CountersHarness {
    let mut h = CountersHarness {
        requested: requested.iter().map(|e| e.name().to_string()).collect(),
        read_cost_ns: f64::NAN,
        target_sample_ns: plan.target_sample_ns,
        ..CountersHarness::default()
    };
    let Some(set) = set else {
        return h;
    };
    h.events = set.events().iter().map(|e| e.name().to_string()).collect();
    h.unavailable = set.unavailable().to_vec();
    h.note = set.note();
    if set.is_empty() {
        return h;
    }
    let cost = set.read_cost_with(counters::READ_COST_PROBES, || {
        let t0 = timer.start();
        black_box(timer.stop().wrapping_sub(t0));
    });
    h.read_pair_ns = Some(cost.ns);
    h.read_cost_ns = pipeline_cost(set, timer).max(cost.ns);
    h.reads_per_side = cost.reads_per_side;
    h.baseline = cost
        .baseline
        .events()
        .map(|e| {
            (
                e.name().to_string(),
                cost.baseline.get(e).unwrap_or(0) as f64,
            )
        })
        .collect();
    plan.target_sample_ns =
        crate::plan::sample_ns_for_counters(plan.target_sample_ns, h.read_cost_ns);
    h.target_sample_ns = plan.target_sample_ns;
    h.overhead = h.read_cost_ns / plan.target_sample_ns as f64;
    h
}

/// Samples per batch, and batches per setting, when timing what counters add to a sample.
const PIPELINE_PROBE_SAMPLES: usize = 256;
const PIPELINE_PROBE_BATCHES: usize = 9;

/// Wall time the counters add to one sample as the engine takes it (the reads, the deltas and
/// the columns): batches of empty samples with the counters minus the same without, per
/// sample; medians over batches, the two settings alternated.
fn pipeline_cost(set: &mut CounterSet, timer: &Timer) -> f64 {
    let mut empty = Plain(|| ());
    let mut batch = Batch::default();
    let mut with = Vec::new();
    let mut without = Vec::new();
    for k in 0..PIPELINE_PROBE_BATCHES * 2 {
        let on = k % 2 == 0;
        batch.clear();
        let t0 = crate::timer::monotonic_ns();
        let counters = if on { Some(&mut *set) } else { None };
        let _ = sample_routine(
            &mut empty,
            timer,
            counters,
            0,
            PIPELINE_PROBE_SAMPLES,
            &mut batch,
        );
        let dt = (crate::timer::monotonic_ns() - t0) as f64 / PIPELINE_PROBE_SAMPLES as f64;
        if on { &mut with } else { &mut without }.push(dt);
    }
    (crate::stats::median(&with) - crate::stats::median(&without)).max(0.0)
}
