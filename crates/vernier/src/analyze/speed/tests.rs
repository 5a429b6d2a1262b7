//! The core's speed on synthetic samples: slow states split off or not, the references a run
//! is measured against, and the clock's interval.

use super::*;
use crate::samples::{Phase, Sample};

fn startup(c: f64) -> References {
    References {
        startup_cycle_ns: Some(c),
        known_cycle_ns: None,
        clock_cycle_ns: None,
        unit: crate::analyze::Unit::Ns,
        ..References::default()
    }
}

pub(super) fn timer() -> TimerInfo {
    TimerInfo {
        kind: TimerKind::Tsc,
        resolution_ns: 0.5,
        overhead_ns: 10.0,
        tsc_hz: Some(2.5e9),
    }
}

/// `n` samples; sample i's probe is `probe(i)` ns for 4096 additions and its time is
/// `per_iter(i)` ns per iteration at 1000 iterations.
fn samples(n: usize, probe: impl Fn(usize) -> u64, per_iter: impl Fn(usize) -> f64) -> Samples {
    let mut s = Samples::default();
    for i in 0..n {
        s.push_batch(
            &[Sample {
                iters: 1000,
                ns: (per_iter(i) * 1000.0) as u64,
                t_ns: i as u64 * 30_000,
                process: 0,
                round: 0,
                phase: Phase::Measure,
            }],
            &[],
        );
        s.set_probe(1, 4096, Some(probe(i)), None);
    }
    s
}

/// [`samples`] with the probe's throughput half too: `wide(i)` ns for the 4096 additions.
pub(super) fn samples_wide(
    n: usize,
    probe: impl Fn(usize) -> u64,
    wide: impl Fn(usize) -> u64,
    per_iter: impl Fn(usize) -> f64,
) -> Samples {
    let mut s = samples(n, probe, per_iter);
    s.wide_ns = (0..n).map(|i| Some(wide(i))).collect();
    s
}

/// [`analyze`] with the cycles it is given in production.
pub(super) fn speed_of(
    s: &Samples,
    t: &TimerInfo,
    refs: References,
    wall_ns: u64,
    idx: &[usize],
) -> (Speed, Vec<usize>) {
    let (cycles, wide) = (sample_cycles(s, t), sample_wide(s, t));
    analyze(s, t, &cycles, &wide, refs, wall_ns, idx).unwrap()
}

#[test]
fn a_core_shared_at_the_same_clock_is_a_slow_state_of_its_own() {
    // The clock never moves (the dependent chain: 1648 ns), but for 60 of 200 samples,
    // in runs of 20, the eight independent chains take 1.5x as long (a sibling thread
    // takes a share of the units), and so does the benchmark.
    let shared = |i: usize| (i / 20) % 10 >= 7;
    let s = samples_wide(
        200,
        |_| 1648,
        |i| if shared(i) { 615 } else { 410 },
        |i| if shared(i) { 16.0 } else { 10.0 },
    );
    let idx: Vec<usize> = (0..200).collect();
    let (sp, head) = speed_of(&s, &timer(), References::default(), 6_000_000, &idx);
    assert!(sp.split && sp.core_shared() && !sp.core_slowed(), "{sp:?}");
    // 140 whole, but the sample before the shared stretch (the probe after it read shared).
    assert_eq!(head.len(), 139);
    assert!((sp.fast.median_ns - 10.0).abs() < 1e-9);
    let slow = sp.slow.unwrap();
    assert!((slow.median_ns - 16.0).abs() < 1e-9 && (slow.share - 0.305).abs() < 1e-9);
    // The clock half saw nothing; the throughput half saw 1.5x.
    assert!((slow.cycle_ns / sp.fastest_cycle_ns - 1.0).abs() < 0.01);
    let t = sp.throughput_slowdown().unwrap();
    // (The timer's cost is taken off both probes: 605 / 400.)
    assert!((t - 1.5125).abs() < 1e-9, "{t}");
    assert!((sp.slowdown() - t).abs() < 1e-12);
    // A benchmark that did not feel it (1 % longer in the shared state): one state.
    let calm = samples_wide(
        200,
        |_| 1648,
        |i| if shared(i) { 615 } else { 410 },
        |i| if shared(i) { 10.1 } else { 10.0 },
    );
    let (sp, head) = speed_of(&calm, &timer(), References::default(), 6_000_000, &idx);
    assert!(
        sp.slow.is_none() && !sp.core_slowed() && head.len() == 200,
        "{sp:?}"
    );
    // Without the throughput half (an older harness), the same samples are one state.
    let mut old = s.clone();
    old.wide_ns.clear();
    let (sp, head) = speed_of(&old, &timer(), References::default(), 6_000_000, &idx);
    assert!(sp.slow.is_none() && head.len() == 200);
}

#[test]
fn one_state_keeps_every_sample() {
    // 4096 adds in 1648 ns: 0.4 ns per add (2.5 GHz, the nominal rate).
    let s = samples(200, |_| 1648, |_| 10.0);
    let idx: Vec<usize> = (0..200).collect();
    let (sp, head) = speed_of(&s, &timer(), References::default(), 6_000_000, &idx);
    assert_eq!(head, idx);
    assert!(sp.slow.is_none() && !sp.split && !sp.core_slowed());
    assert!((sp.fastest_cycle_ns - 0.4).abs() < 1e-3, "{sp:?}");
}

#[test]
fn two_states_split_with_the_fast_one_as_headline() {
    // 30 % of the samples with the core 1.85× slower; the benchmark 1.85× slower then too.
    let slow = |i: usize| (i / 10) % 10 < 3;
    let s = samples(
        400,
        |i| if slow(i) { 3041 } else { 1648 },
        |i| if slow(i) { 18.5 } else { 10.0 },
    );
    let idx: Vec<usize> = (0..400).collect();
    let (sp, head) = speed_of(&s, &timer(), References::default(), 12_000_000, &idx);
    assert!(sp.split && sp.core_slowed() && !sp.wholly_slow());
    assert_eq!(head.len(), 280);
    assert!(head.iter().all(|&i| !slow(i)));
    let sl = sp.slow.unwrap();
    assert!((sl.share - 0.3).abs() < 1e-12);
    assert!((sp.fast.share - 0.7).abs() < 1e-12);
    assert_eq!((sp.fast.median_ns, sl.median_ns), (10.0, 18.5));
    assert!((sp.slowdown() - 1.85).abs() < 0.01, "{}", sp.slowdown());
}

#[test]
fn a_run_wholly_slow_is_measured_against_the_start_up_speed() {
    // Monotonic timer: no nominal rate; the start-up chain saw 0.4 ns per add.
    let mut t = timer();
    t.kind = TimerKind::Monotonic;
    t.tsc_hz = None;
    let s = samples(200, |_| 3041, |_| 18.5);
    let idx: Vec<usize> = (0..200).collect();
    let (sp, head) = speed_of(&s, &t, startup(0.4), 6_000_000, &idx);
    assert_eq!(sp.reference, Reference::StartUp);
    assert!(sp.wholly_slow() && sp.core_slowed() && !sp.split);
    assert_eq!(
        head, idx,
        "no fast sample: the headline is what was measured"
    );
    // Without any reference faster than the probes, nothing is slow.
    let (sp, _) = speed_of(&s, &t, References::default(), 6_000_000, &idx);
    assert!(sp.slow.is_none());
}

#[test]
fn the_nominal_rate_is_a_reference_with_the_tsc() {
    let s = samples(200, |_| 3041, |_| 18.5);
    let idx: Vec<usize> = (0..200).collect();
    let (sp, _) = speed_of(&s, &timer(), References::default(), 6_000_000, &idx);
    assert_eq!(sp.reference, Reference::Nominal);
    assert!(sp.wholly_slow());
}

#[test]
fn unprobed_batches_take_the_last_probe() {
    let mut s = samples(4, |i| 1000 + i as u64, |_| 1.0);
    s.probe_ns[2] = None;
    let c = sample_cycles(&s, &timer());
    assert_eq!(c[2], c[1]);
    assert!(sample_cycles(&Samples::default(), &timer()).is_empty());
}

#[test]
fn a_lone_slow_probe_does_not_make_a_slow_state() {
    // One batch in 40 has a probe 1.85× slower (an interrupt in all three repetitions);
    // the benchmark itself did not slow down.
    let s = samples(400, |i| if i % 40 == 20 { 3041 } else { 1648 }, |_| 10.0);
    let idx: Vec<usize> = (0..400).collect();
    let (sp, head) = speed_of(&s, &timer(), References::default(), 1, &idx);
    assert!(sp.slow.is_none(), "{sp:?}");
    assert_eq!(head.len(), 400);
}

#[test]
fn a_run_slower_than_the_machine_s_known_speed_is_slow() {
    // 15 % slower than what earlier runs measured; monotonic timer (no nominal rate).
    let mut t = timer();
    t.kind = TimerKind::Monotonic;
    t.tsc_hz = None;
    let s = samples(200, |_| 1895, |_| 11.5);
    let idx: Vec<usize> = (0..200).collect();
    let refs = References {
        startup_cycle_ns: Some(0.42),
        known_cycle_ns: Some(0.4),
        clock_cycle_ns: None,
        unit: crate::analyze::Unit::Ns,
        ..References::default()
    };
    let (sp, head) = speed_of(&s, &t, refs, 1, &idx);
    assert_eq!(sp.reference, Reference::Known);
    assert!(sp.core_slowed() && sp.slow.is_none() && !sp.split);
    assert_eq!(head, idx);
    let ratio = sp.fast.cycle_ns / sp.behind_known_cycle_ns.unwrap();
    assert!((ratio - 1.15).abs() < 0.01, "{ratio}");
    // 5 % slower than the known speed: within what runs vary on a shared machine.
    let s = samples(200, |_| 1730, |_| 10.5);
    let (sp, _) = speed_of(&s, &t, refs, 1, &idx);
    assert!(!sp.core_slowed(), "{sp:?}");
    // 2 % slower than the known speed.
    let s = samples(200, |_| 1681, |_| 10.2);
    let (sp, _) = speed_of(&s, &t, refs, 1, &idx);
    assert!(
        !sp.core_slowed() && sp.behind_known_cycle_ns.is_none(),
        "{sp:?}"
    );
}

#[test]
fn the_clock_interval_is_the_cycles_at_both_ends_of_the_range() {
    // 0.4 ns per addition, 10 ns per iteration: 25 cycles.
    let s = samples(200, |_| 1648, |i| 10.0 + 0.01 * (i % 7) as f64);
    let idx: Vec<usize> = (0..200).collect();
    let (sp, _) = speed_of(&s, &timer(), References::default(), 1, &idx);
    let cyc = sp.cycles_per_iter.unwrap();
    assert!((cyc.median - 25.07).abs() < 0.05, "{cyc:?}");
    let (lo, hi) = clock_interval(&sp, Some((0.38, 0.42))).unwrap();
    assert!((lo - cyc.lo * 0.38).abs() < 1e-12 && (hi - cyc.hi * 0.42).abs() < 1e-12);
    // No range, or one that is not a range: nothing to add.
    assert!(clock_interval(&sp, None).is_none());
    assert!(clock_interval(&sp, Some((0.42, 0.38))).is_none());
    assert!(clock_interval(&sp, Some((0.0, 0.38))).is_none());
    assert!(clock_interval(&sp, Some((f64::NAN, 0.38))).is_none());
}

#[test]
fn nothing_probed_gives_no_speed() {
    let mut s = samples(50, |_| 1648, |_| 10.0);
    s.probe_ns.clear();
    assert!(analyze(
        &s,
        &timer(),
        &sample_cycles(&s, &timer()),
        &[],
        startup(0.4),
        1,
        &[0, 1, 2]
    )
    .is_none());
}
