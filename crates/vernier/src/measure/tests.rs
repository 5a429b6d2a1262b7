use super::*;
use crate::timer::test_tsc;

/// A target whose per-iteration cost is a function of the time elapsed, plus a fixed
/// per-sample overhead; it advances the mock clock by what it "took".
struct Scripted<F: Fn(u64, usize) -> f64> {
    clock: MockClock,
    per_iter: F,
    overhead_ns: u64,
    taken: usize,
    /// What the core-speed probe takes, when the target runs it.
    probe_ns: Option<u64>,
}
impl<F: Fn(u64, usize) -> f64> Target for Scripted<F> {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        if let (true, Some(p)) = (out.probe_adds > 0, self.probe_ns) {
            // The probe's repetitions take time, outside the samples.
            let now = self.clock.0.get();
            self.clock
                .0
                .set(now + p * crate::plan::PROBE_REPEATS as u64);
            out.probe_ns = Some(p);
        }
        for _ in 0..count {
            let now = self.clock.0.get();
            let ns =
                self.overhead_ns + ((self.per_iter)(now, self.taken) * iters as f64).round() as u64;
            self.taken += 1;
            self.clock.0.set(now + ns + 50);
            out.ns.push(ns);
        }
        Ok(())
    }
}

fn jitter(k: usize) -> f64 {
    // Deterministic ±1 % pseudo-noise.
    let x = (k as u64).wrapping_mul(0x9E3779B97F4A7C15) >> 40;
    (x as f64 / (1u64 << 24) as f64 - 0.5) * 0.02
}

fn run<F: Fn(u64, usize) -> f64>(f: F, plan: &Plan) -> Measurement {
    run_probed(f, plan, None)
}

fn run_probed<F: Fn(u64, usize) -> f64>(f: F, plan: &Plan, probe_ns: Option<u64>) -> Measurement {
    let clock = MockClock::default();
    let mut t = Scripted {
        clock: clock.clone(),
        per_iter: f,
        overhead_ns: 10,
        taken: 0,
        probe_ns,
    };
    measure(&mut t, &clock, plan, &test_tsc(), &mut |_| {})
}

#[test]
fn calibration_grows_the_count_until_a_sample_lasts_the_goal() {
    // Goal 20 µs; a sample of N iterations takes 10 ns × N.
    let mut c = Calibration::new(20_000, 1 << 40, None, 1_000_000_000);
    let mut rounds = 0;
    let done = loop {
        rounds += 1;
        if let Some(d) = c.step(10 * c.iters, 0) {
            break d;
        }
    };
    assert!(done.iters * 10 >= 20_000, "{done:?}");
    assert_eq!(done.est_sample_ns, (done.iters * 10) as f64);
    // One jump to an eighth of the goal, then doublings: 1, 250, 500, 1000, 2000.
    assert_eq!(rounds, 5);
    // A fixed count is taken at once; the ceiling and half the budget end it too.
    let mut fixed = Calibration::new(20_000, 1 << 40, Some(7), 1_000_000_000);
    assert_eq!(fixed.step(70, 0).map(|d| d.iters), Some(7));
    let mut capped = Calibration::new(20_000, 4, None, 1_000_000_000);
    while capped.step(10 * capped.iters, 0).is_none() {}
    assert_eq!(capped.iters, 4);
    let mut late = Calibration::new(20_000, 1 << 40, None, 1_000);
    assert_eq!(late.step(10, 500).map(|d| d.iters), Some(1));
}

#[test]
fn calibration_stops_once_the_count_shows_the_body_costs_nothing() {
    // A loop the compiler removed: every sample takes the clock reads' 10 ns, whatever the
    // count. Calibration stops where a thousandth of a ns per iteration would have filled the
    // 20 µs goal, far below the 2^40 guard.
    let plan = Plan::quick();
    let m = run(|_, _| 0.0, &plan);
    let bound = removed_bound(plan.min_sample_ns(&test_tsc()));
    assert_eq!(removed_bound(20_000), 20_000_000);
    assert_eq!(m.iters_per_sample, bound);
    assert!(m.iters_per_sample < 1 << 25);
    assert_eq!(m.calibration, CalibrationEnd::Found);
    // A body at the fastest pace of a real loop (0.006 ns: 32 empty iterations a cycle at
    // 5 GHz) reaches the goal before the bound.
    let fast = run(|_, _| 0.006, &plan);
    assert!(fast.iters_per_sample < bound, "{}", fast.iters_per_sample);
    let mut c = Calibration::new(20_000, 1 << 40, None, 1_000_000_000);
    while c.step(10, 0).is_none() {}
    assert_eq!(c.iters, removed_bound(20_000));
}

#[test]
fn probes_are_recorded_and_cost_at_most_their_share() {
    let plan = Plan::default();
    let m = run_probed(|_, k| 5.0 * (1.0 + jitter(k)), &plan, Some(1500));
    let s = &m.samples;
    assert_eq!(s.probe_ns.len(), s.len());
    assert_eq!(s.probe_adds, crate::plan::PROBE_ADDS);
    // The first batch (calibration) is probed; later ones as the budget allows.
    assert_eq!(s.probe_ns[0], Some(1500));
    // One probe per probed batch, on its first sample; their cost within the share.
    let probed = s.probe_ns.iter().filter(|p| p.is_some()).count();
    assert!(probed >= 10, "{probed} probes");
    let cost = (probed as u64 * 1500 * crate::plan::PROBE_REPEATS as u64) as f64;
    let share = cost / m.wall_ns as f64;
    assert!(
        share <= 2.0 * crate::plan::MAX_PROBE_SHARE,
        "probes took {share}"
    );
    // A target that cannot probe leaves no column.
    let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
    assert!(m.samples.probe_ns.is_empty());
    // A plan without the probe asks for none.
    let off = Plan {
        probe_adds: 0,
        ..Plan::default()
    };
    let m = run_probed(|_, k| 5.0 * (1.0 + jitter(k)), &off, Some(1500));
    assert!(m.samples.probe_ns.is_empty());
}

#[test]
fn the_early_stop_waits_for_the_minimum_span() {
    let plan = Plan::default();
    assert_eq!(
        plan.min_span_ns,
        (plan.time_budget_ns as f64 * crate::plan::MIN_SPAN_FRACTION) as u64
    );
    let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
    assert_eq!(m.stop, StopReason::Precise);
    // Precise long before, but the samples span at least the minimum.
    let last = m.samples.samples.last().unwrap().t_ns;
    assert!(last >= plan.min_span_ns, "{last}");
}

#[test]
fn calibration_reaches_the_goal_by_doubling() {
    let m = run(|_, k| 2.0 * (1.0 + jitter(k)), &Plan::default());
    // Goal: 20 µs at 2 ns per iteration → N ≥ 10 000; N is reached by doubling steps.
    assert!(m.iters_per_sample >= 10_000 && m.iters_per_sample < 40_000);
    let cal: Vec<u64> = m
        .samples
        .samples
        .iter()
        .filter(|s| s.phase == Phase::Calibration)
        .map(|s| s.iters)
        .collect();
    assert!(cal.windows(2).all(|w| w[1] >= w[0]));
    assert!(cal.iter().collect::<std::collections::BTreeSet<_>>().len() >= 3);
}

#[test]
fn flat_series_stops_early_when_precise() {
    let plan = Plan::default();
    let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
    assert_eq!(m.stop, StopReason::Precise);
    assert!(m.wall_ns < plan.time_budget_ns);
    assert!(m.wall_ns >= plan.min_time_ns);
    assert_eq!(m.steady.unwrap().class, WarmupClass::Flat);
}

#[test]
fn budget_is_never_exceeded_by_more_than_a_batch() {
    let plan = Plan {
        target_rel_ci: 0.0, // never precise enough
        ..Plan::default()
    };
    let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &plan);
    assert_eq!(m.stop, StopReason::Budget);
    let slack = (plan.time_budget_ns as f64 * MAX_BATCH_FRACTION * 1.5) as u64;
    assert!(m.wall_ns <= plan.time_budget_ns + slack, "{}", m.wall_ns);
}

#[test]
fn warmup_is_detected_and_excluded() {
    // 3× slower for the first 200 ms, decaying.
    let m = run(
        |t, k| 4.0 * (1.0 + 2.0 * (-(t as f64) / 50e6).exp()) * (1.0 + jitter(k)),
        &Plan::default(),
    );
    let st = m.steady.unwrap();
    assert_eq!(st.class, WarmupClass::Warmup);
    let warm = m
        .samples
        .samples
        .iter()
        .filter(|s| s.phase == Phase::Warmup)
        .count();
    assert!(warm > 0);
    // Every measured sample is within 10 % of the steady cost.
    for s in m
        .samples
        .samples
        .iter()
        .filter(|s| s.phase == Phase::Measure)
    {
        if s.iters == m.iters_per_sample {
            assert!(s.per_iter_ns() < 4.0 * 1.1, "{}", s.per_iter_ns());
        }
    }
}

#[test]
fn never_steady_is_reported() {
    // Keeps slowing down for the whole budget.
    let m = run(
        |t, k| (2.0 + t as f64 / 1e8) * (1.0 + jitter(k)),
        &Plan::default(),
    );
    assert_eq!(m.steady.unwrap().class, WarmupClass::NoSteadyState);
    assert_eq!(m.stop, StopReason::Budget);
}

#[test]
fn slowdown_is_classified() {
    let m = run(
        |t, k| if t < 50_000_000 { 3.0 } else { 4.0 } * (1.0 + jitter(k)),
        &Plan::default(),
    );
    assert_eq!(m.steady.unwrap().class, WarmupClass::Slowdown);
}

#[test]
fn periodic_spikes_leave_the_state_flat() {
    // Every 4 ms, a 30 µs stall lands in a sample (a 250 Hz tick).
    let m = run(
        |t, k| {
            let base = 5.0 * (1.0 + jitter(k));
            if t % 4_000_000 < 25_000 {
                base * 3.0
            } else {
                base
            }
        },
        &Plan::default(),
    );
    assert_eq!(m.steady.unwrap().class, WarmupClass::Flat);
}

#[test]
fn ladder_samples_exist_at_several_counts() {
    let m = run(|_, k| 5.0 * (1.0 + jitter(k)), &Plan::default());
    let n = m.iters_per_sample;
    let counts: std::collections::BTreeSet<u64> = m
        .samples
        .samples
        .iter()
        .filter(|s| s.phase != Phase::Calibration)
        .map(|s| s.iters)
        .collect();
    assert!(counts.contains(&n) && counts.contains(&(2 * n)) && counts.contains(&(n / 4)));
}

#[test]
fn a_failing_target_keeps_what_was_measured() {
    struct Dies(usize);
    impl Target for Dies {
        fn measure(&mut self, _: u64, count: usize, out: &mut Batch) -> Result<(), String> {
            if self.0 == 0 {
                return Err("worker died: signal 11 (SIGSEGV)".into());
            }
            self.0 -= 1;
            out.ns.extend(std::iter::repeat_n(25_000, count));
            Ok(())
        }
    }
    let clock = MonotonicClock;
    let m = measure(
        &mut Dies(3),
        &clock,
        &Plan::quick(),
        &test_tsc(),
        &mut |_| {},
    );
    assert_eq!(m.stop, StopReason::Failed);
    assert!(m.error.unwrap().contains("SIGSEGV"));
    assert!(!m.samples.is_empty());
}
