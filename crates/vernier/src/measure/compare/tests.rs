use super::*;
use crate::measure::MockClock;
use crate::result::comparison::ComparisonFile;
use crate::stats::compare::{Mode, Verdict};
use crate::timer::test_tsc;

/// A side whose per-iteration cost is `base × drift(t) × (1 + noise)`; it advances the
/// shared clock by what it took.
struct Mock {
    clock: MockClock,
    base: f64,
    drift: fn(u64) -> f64,
    rng: Rng,
    taken: usize,
    fail_after: Option<usize>,
}

impl Mock {
    fn new(clock: &MockClock, base: f64, drift: fn(u64) -> f64, seed: u64) -> Mock {
        Mock {
            clock: clock.clone(),
            base,
            drift,
            rng: Rng::new(seed),
            taken: 0,
            fail_after: None,
        }
    }
}

impl Target for Mock {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        for _ in 0..count {
            if self.fail_after.is_some_and(|n| self.taken >= n) {
                return Err("worker died: killed by signal 11 (Segmentation fault)".into());
            }
            let now = self.clock.0.get();
            // ±2 % uniform noise plus an occasional 3× spike (an interrupt).
            let mut noise = 1.0 + (self.rng.next_f64() - 0.5) * 0.04;
            if self.rng.next_f64() < 0.01 {
                noise *= 3.0;
            }
            let ns = (self.base * (self.drift)(now) * noise * iters as f64).round() as u64;
            self.taken += 1;
            self.clock.0.set(now + ns + 100);
            out.ns.push(ns.max(1));
        }
        Ok(())
    }
}

/// Doubles the cost over the one-second budget.
fn drift_2x(t: u64) -> f64 {
    1.0 + t as f64 / 1e9
}

fn flat(_: u64) -> f64 {
    1.0
}

fn run(old_base: f64, new_base: f64, drift: fn(u64) -> f64, plan: &PairPlan) -> PairMeasurement {
    let clock = MockClock::default();
    let mut a = Mock::new(&clock, old_base, drift, 1);
    let mut b = Mock::new(&clock, new_base, drift, 2);
    measure_pair(&mut a, &mut b, &clock, plan, &test_tsc(), &mut |_| {})
}

fn plans() -> [PairPlan; 2] {
    let p = Plan::default();
    [
        PairPlan::in_process(&p, 0.005),
        PairPlan::across_processes(&p, 0.005),
    ]
}

#[test]
fn a_against_a_under_2x_drift_is_no_change() {
    for plan in plans() {
        let m = run(5.0, 5.0, drift_2x, &plan);
        let e = m.estimate.unwrap();
        assert!((e.ratio - 1.0).abs() < 0.003, "{e:?}");
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        f.push_paired("a", &m, false);
        assert_eq!(f.comparisons[0].verdict, Verdict::NoChange);
        // The paired interval settles inside the band before the budget is spent.
        assert_eq!(m.stop, PairStop::Settled, "{plan:?}");
        assert!(e.ci95.0 > 1.0 / 1.005 && e.ci95.1 < 1.005, "{e:?}");
    }
}

#[test]
fn a_known_shift_is_measured_despite_drift() {
    for plan in plans() {
        let m = run(5.0, 5.5, drift_2x, &plan);
        let e = m.estimate.unwrap();
        assert!((e.ratio - 1.1).abs() < 0.005, "{e:?}");
        // The interval is about ±0.15 %: it lies close to the truth (a 95 % interval may
        // miss it, by little).
        assert!(e.ci95.0 < 1.1 * 1.002 && e.ci95.1 > 1.1 / 1.002, "{e:?}");
        let mut f = ComparisonFile::new(Mode::Paired, 0.005);
        f.push_paired("a", &m, false);
        assert_eq!(f.comparisons[0].verdict, Verdict::Slower);
        assert_eq!(m.stop, PairStop::Settled);
        let m = run(5.5, 5.0, drift_2x, &plan);
        f.push_paired("b", &m, false);
        assert_eq!(f.comparisons[1].verdict, Verdict::Faster);
        let g = f.geomean_ratio.unwrap();
        assert!((g - 1.0).abs() < 0.005, "{g}");
    }
}

#[test]
fn both_sides_use_the_same_iterations_calibrated_on_the_slower() {
    let plan = &plans()[0];
    let m = run(1.0, 4.0, flat, plan);
    // Goal 20 µs: the slower side (4 ns) needs ≥ 5000 iterations, the faster ≥ 20 000.
    assert!(m.iters_per_sample >= 5_000 && m.iters_per_sample < 20_000);
    let e = m.estimate.unwrap();
    assert!((e.ratio - 4.0).abs() < 0.02, "{e:?}");
}

#[test]
fn unpaired_comparison_of_drifting_runs_is_fooled_where_paired_is_not() {
    // OLD measured during the first half second, NEW during the second, same code.
    let clock = MockClock::default();
    let mut a = Mock::new(&clock, 5.0, drift_2x, 1);
    let mut batch = Batch::default();
    a.measure(25_000, 2000, &mut batch).unwrap();
    let old: Vec<f64> = batch.ns.iter().map(|&x| x as f64 / 25_000.0).collect();
    batch.clear();
    a.measure(25_000, 2000, &mut batch).unwrap();
    let new: Vec<f64> = batch.ns.iter().map(|&x| x as f64 / 25_000.0).collect();
    let u = compare::unpaired(&old, &new).unwrap();
    assert!(u.ratio > 1.1 && u.ci95.0 > 1.05, "{u:?}");
    let m = run(5.0, 5.0, drift_2x, &plans()[0]);
    assert!((m.estimate.unwrap().ratio - 1.0).abs() < 0.003);
}

#[test]
fn rewarm_samples_are_measured_but_not_paired() {
    let plan = &plans()[1];
    let m = run(5.0, 5.0, flat, plan);
    let (so, sn) = m.samples;
    // More samples were taken than paired, and every batch had one extra.
    assert!(so > m.old_ns.len() * (MIN_BATCH + 1) && sn > m.new_ns.len() * (MIN_BATCH + 1));
    let r = m.rewarm.unwrap();
    assert!(
        (r.old - 1.0).abs() < 0.05 && (r.new - 1.0).abs() < 0.05,
        "{r:?}"
    );
}

#[test]
fn no_early_stop_uses_the_budget() {
    let mut plan = plans()[0].clone();
    plan.early_stop = false;
    plan.time_budget_ns = 200_000_000;
    let m = run(5.0, 5.0, flat, &plan);
    assert_eq!(m.stop, PairStop::Budget);
    assert!(m.wall_ns >= plan.time_budget_ns);
    assert!(m.wall_ns < plan.time_budget_ns + plan.time_budget_ns / 20);
}

#[test]
fn a_failing_side_is_named() {
    let clock = MockClock::default();
    let mut a = Mock::new(&clock, 5.0, flat, 1);
    let mut b = Mock::new(&clock, 5.0, flat, 2);
    b.fail_after = Some(200);
    let m = measure_pair(
        &mut a,
        &mut b,
        &clock,
        &plans()[0],
        &test_tsc(),
        &mut |_| {},
    );
    assert_eq!(m.stop, PairStop::Failed);
    let (side, e) = m.error.clone().unwrap();
    assert_eq!(side, Side::New);
    assert!(e.contains("signal 11"));
    let mut f = ComparisonFile::new(Mode::Paired, 0.005);
    f.push_paired("x", &m, false);
    assert!(f.comparisons.is_empty());
    assert!(f.failed[0].error.starts_with("NEW failed: worker died"));
    assert_eq!(f.geomean_ratio, None);
}

#[test]
fn settle_rule() {
    let t = 0.005;
    assert_eq!(settled(1.006, 1.02, t), Some(Settle::Above));
    assert_eq!(settled(0.98, 0.99, t), Some(Settle::Below));
    assert_eq!(settled(0.998, 1.004, t), Some(Settle::Within));
    assert_eq!(settled(0.998, 1.006, t), None);
    assert_eq!(settled(1.001, 1.008, t), None);
}
