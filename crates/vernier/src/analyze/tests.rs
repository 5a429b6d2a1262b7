//! The analysis on synthetic measurements: every diagnostic, each way it can fire and not.

use super::*;
use crate::diagnostic::Code;
use crate::measure::StopReason;
use crate::samples::{Phase, Sample, Samples};
use crate::stats::steady::{SteadyState, WarmupClass};
use crate::timer::TimerKind;

fn ctx() -> Context {
    Context {
        empty_iter_ns: Some(0.33),
        cycle_ns: Some(0.33),
        target_rel_ci: 0.005,
        timer_factor: 1000.0,
        ..Context::new(TimerInfo {
            kind: TimerKind::Tsc,
            resolution_ns: 0.5,
            overhead_ns: 10.0,
            tsc_hz: Some(3e9),
        })
    }
}

/// A measurement of `per_iter(i)` ns per iteration at counts N and the ladder.
fn synth(n: u64, intercept: f64, per_iter: impl Fn(usize) -> f64) -> Measurement {
    let mut samples = Vec::new();
    let mut t = 0u64;
    for i in 0..2000 {
        let iters = match i % 10 {
            3 => n / 16,
            6 => n / 4,
            9 => 2 * n,
            _ => n,
        };
        let ns = (intercept + per_iter(i) * iters as f64).round() as u64;
        t += ns + 100;
        samples.push(Sample {
            iters,
            ns,
            t_ns: t,
            process: 0,
            round: 0,
            phase: Phase::Measure,
        });
    }
    Measurement {
        samples: Samples {
            samples,
            ..Samples::default()
        },
        iters_per_sample: n,
        wall_ns: t,
        stop: StopReason::Precise,
        steady: Some(SteadyState {
            first: 0,
            class: WarmupClass::Flat,
        }),
        error: None,
        calibration: crate::measure::CalibrationEnd::Found,
    }
}

fn codes(a: &Analysis) -> Vec<Code> {
    a.diagnostics.iter().map(|d| d.code()).collect()
}

/// The analysis flags `code` (or not, with `flagged` false); the findings when it does not.
fn assert_flags(a: &Analysis, code: Code, flagged: bool) {
    assert_eq!(codes(a).contains(&code), flagged, "{:?}", a.diagnostics);
}

/// The message of the analysis's `code` diagnostic, worded.
fn message(a: &Analysis, code: Code) -> String {
    let f = a.diagnostics.iter().find(|d| d.code() == code);
    crate::diagnostic::words::message(f.expect("the diagnostic is there"))
}

/// The analysis of a steady benchmark: `per_iter_ns` (±0.1 %) at `n` iterations per sample.
fn steady(n: u64, per_iter_ns: f64) -> Analysis {
    analyze(&synth(n, 20.0, |i| per_iter_ns * wiggle(i)), &ctx())
}

fn wiggle(i: usize) -> f64 {
    1.0 + 0.002 * (((i * 7919) % 13) as f64 / 13.0 - 0.5)
}

#[test]
fn clean_linear_benchmark_has_no_diagnostics() {
    let a = steady(8192, 4.0);
    assert!(codes(&a).is_empty(), "{:?}", a.diagnostics);
    let f = a.fit.unwrap();
    assert!((f.slope - 4.0).abs() < 0.01);
    assert!((a.per_iter.median_ns - 4.0).abs() < 0.01);
    assert!(a.per_iter.ci95_ns[0] <= a.per_iter.median_ns);
    assert!(a.per_iter.ci95_ns[1] >= a.per_iter.median_ns);
}

/// Probes on `m`: sample i's probe took `probe(i)` ns for 4096 additions. With the test
/// context (timer overhead 10 ns, start-up cycle 0.33 ns), 1362 ns is 0.33 ns per addition.
fn with_probes(mut m: Measurement, probe: impl Fn(usize) -> u64) -> Measurement {
    m.samples.probe_ns = (0..m.samples.len()).map(|i| Some(probe(i))).collect();
    m.samples.probe_adds = 4096;
    m
}

#[test]
fn a_core_in_two_states_gives_the_fast_figure_and_says_so() {
    // 300 of the 2000 samples, in runs of 100, with the core's clock 1.2× slower (probe
    // 1634 ns) and the benchmark 1.85× slower: a sibling shared the core's units, and the
    // benchmark's cycles rose with it.
    let slow = |i: usize| (i / 100) % 20 >= 17;
    let bench = |i: usize| 4.0 * wiggle(i) * if slow(i) { 1.85 } else { 1.0 };
    let m = with_probes(
        synth(8192, 20.0, bench),
        |i| {
            if slow(i) {
                1634
            } else {
                1362
            }
        },
    );
    let a = analyze(&m, &ctx());
    assert_eq!(a.headline_unit, Unit::Cycles);
    // The headline rests on the fast state alone: its row carries no word of the machine's
    // state (said once under the table), and `speed` keeps both figures.
    assert_flags(&a, Code::CoreSlowed, false);
    let sp = a.speed.unwrap();
    assert!(sp.split && !sp.wholly_slow());
    let sl = sp.slow.unwrap();
    assert!((sl.share - 0.15).abs() < 0.01, "{sl:?}");
    assert!((sl.median_ns / sp.fast.median_ns - 1.85).abs() < 0.01);
    // The headline and its interval are the fast state's: within the fast samples' range.
    assert!(a.per_iter.median_ns < 4.01 && a.per_iter.ci95_ns[1] < 4.01);
    // The same samples without probes: no speed, no core-slowed, and a wider interval.
    let plain = analyze(&synth(8192, 20.0, bench), &ctx());
    assert!(plain.speed.is_none() && !codes(&plain).contains(&Code::CoreSlowed));
    assert_eq!(plain.headline_unit, Unit::Ns);
    assert!(
        plain.per_iter.ci95_ns[1] - plain.per_iter.ci95_ns[0]
            > a.per_iter.ci95_ns[1] - a.per_iter.ci95_ns[0]
    );
    // The clock alone 1.85× slower in those samples, the benchmark with it: in cycles nothing
    // changed, so no state of its figure and no word on its row.
    let clock = with_probes(
        synth(8192, 20.0, bench),
        |i| if slow(i) { 2510 } else { 1362 },
    );
    let c = analyze(&clock, &ctx());
    assert_eq!(c.headline_unit, Unit::Cycles);
    assert_flags(&c, Code::CoreSlowed, false);
    assert_flags(&c, Code::Unstable, false);
}

#[test]
fn the_ladder_is_read_in_the_headline_s_state() {
    // A first round measured wholly while a busy neighbour shared the core (its rungs and
    // main-count samples 1.6× slower at a clock 1.2× slower), a second in the fast state:
    // the headline is the second round's, and so is the line it is checked against. Pooled,
    // the first round's rungs would bend the line by what the machine did.
    let slow = |i: usize| i < 1200;
    let bench = |i: usize| 4.0 * wiggle(i) * if slow(i) { 1.6 } else { 1.0 };
    let mut m = with_probes(
        synth(8192, 20.0, bench),
        |i| if slow(i) { 1634 } else { 1362 },
    );
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        s.round = u32::from(!slow(i));
    }
    // The slow round's rungs weigh more at the short counts than at the long one.
    m.samples
        .samples
        .retain(|s| s.round == 1 || s.iters != 2 * 8192 || s.t_ns % 3 == 0);
    let a = analyze(&m, &ctx());
    assert!(a.speed.as_ref().is_some_and(|s| s.split), "{:?}", a.speed);
    assert!(a.per_iter.median_ns < 4.01, "{}", a.per_iter.median_ns);
    let fit = a.fit.unwrap();
    assert!(
        (fit.slope / a.per_iter.median_ns - 1.0).abs() < 0.01,
        "{fit:?}"
    );
    assert!(
        fit.r2 > 0.999 && (0.0..100.0).contains(&fit.intercept),
        "{fit:?}"
    );
    assert_flags(&a, Code::Nonlinear, false);
}

#[test]
fn a_run_whose_clock_moved_is_unstable_in_ns_but_not_in_cycles() {
    // The core alternates between two clocks 6 % apart, 100 samples at a time (under the
    // 10 % of core-slowed): the figure in ns moves with it, the blocks' medians spread,
    // and the run's own interval in ns is wider than ±1 %.
    let fast = |i: usize| (i / 100).is_multiple_of(2);
    let clock = |i: usize| if fast(i) { 1.0 } else { 1.06 };
    let bench = |i: usize| 4.0 * wiggle(i) * clock(i);
    let followed = with_probes(synth(8192, 20.0, bench), |i| {
        (1362.0 * clock(i)).round() as u64
    });
    let a = analyze(&followed, &ctx());
    let rel = (a.per_iter.run_ci95_ns[1] - a.per_iter.run_ci95_ns[0]) / 2.0 / a.per_iter.median_ns;
    assert!(rel > UNSTABLE_REL_CI, "{rel}");
    // In cycles it held still: the run measured precisely, and the clock is the machine's.
    assert_flags(&a, Code::CoreSlowed, false);
    assert_flags(&a, Code::Unstable, false);
    // The same times with a steady clock: the spread is the benchmark's, and it is unstable.
    let steady_clock = with_probes(synth(8192, 20.0, bench), |_| 1362);
    assert_flags(&analyze(&steady_clock, &ctx()), Code::Unstable, true);
}

#[test]
fn the_interval_covers_the_machine_s_clock_range_without_calling_the_run_unstable() {
    // 0.33 ns per addition (1362 ns probes), 4 ns per iteration: about 12 cycles; a sample
    // in 25 is 10 % off either way, so the data span more than the clock range below.
    let bench = |i: usize| {
        4.0 * wiggle(i)
            * match i % 50 {
                0 => 1.1,
                25 => 0.9,
                _ => 1.0,
            }
    };
    let m = with_probes(synth(8192, 20.0, bench), |_| 1362);
    let own = analyze(&m, &ctx());
    let cyc = own.speed.unwrap().cycles_per_iter.unwrap();
    assert!((cyc.median - 4.0 / 0.3325).abs() < 0.1, "{cyc:?}");
    // Without a known range the two intervals are one.
    assert_eq!(own.per_iter.ci95_ns, own.per_iter.run_ci95_ns);
    // Recent runs on this machine found the core between 0.32 and 0.34 ns per addition:
    // the interval reaches the cycles at both ends.
    let mut c = ctx();
    c.clock_cycle_ns = Some((0.32, 0.34));
    let a = analyze(&m, &c);
    assert_eq!(a.per_iter.median_ns, own.per_iter.median_ns);
    assert_eq!(a.per_iter.run_ci95_ns, own.per_iter.run_ci95_ns);
    let [lo, hi] = a.per_iter.ci95_ns;
    assert!((lo - cyc.lo * 0.32).abs() < 1e-4, "{lo} {}", cyc.lo * 0.32);
    assert!((hi - cyc.hi * 0.34).abs() < 1e-4, "{hi} {}", cyc.hi * 0.34);
    assert!(lo >= a.per_iter.min_ns && lo < own.per_iter.ci95_ns[0]);
    assert!(hi > own.per_iter.ci95_ns[1]);
    // As stable a run as it was: the clock's range is the machine's, not this run's noise.
    assert_eq!(codes(&a), codes(&own));
    assert_flags(&a, Code::Unstable, false);
    // Never wider than the data: a range far beyond them is cut at their ends.
    c.clock_cycle_ns = Some((0.1, 1.0));
    let a = analyze(&m, &c);
    assert!((a.per_iter.ci95_ns[0] - a.per_iter.min_ns).abs() < 1e-9);
    assert!(a.per_iter.ci95_ns[1] < 4.0 * 1.1 * 1.002);
    // A run wholly at a slower clock (1.84×), the benchmark with it: in cycles it read what
    // the fast run read, and its row says nothing of the machine's clock.
    let slowed = with_probes(synth(8192, 20.0, |i| 7.4 * wiggle(i)), |_| 2510);
    let mut c = ctx();
    c.clock_cycle_ns = Some((0.32, 0.34));
    c.known_cycle_ns = Some(0.33);
    let a = analyze(&slowed, &c);
    assert_flags(&a, Code::CoreSlowed, false);
    let slow_cyc = a.speed.unwrap().cycles_per_iter.unwrap();
    assert!(
        (slow_cyc.median / cyc.median - 1.0).abs() < 0.01,
        "{slow_cyc:?} {cyc:?}"
    );
}

#[test]
fn a_run_wholly_in_the_slow_state_says_so() {
    // Code whose time does not follow the clock (judged in ns), with the core wholly in slow
    // states (its probe 1.76–1.92× the start-up's).
    let probe = |i: usize| {
        if (i / 100).is_multiple_of(2) {
            2400
        } else {
            2620
        }
    };
    let m = with_probes(synth(8192, 20.0, |i| 7.4 * wiggle(i)), probe);
    let a = analyze(&m, &ctx());
    assert_eq!(a.headline_unit, Unit::Ns);
    let sp = a.speed.unwrap();
    assert!(sp.wholly_slow() && !sp.split);
    let msg = message(&a, Code::CoreSlowed);
    assert!(msg.contains("slow state's"), "{msg}");
    // One state at the start-up speed: nothing to say.
    let m = with_probes(synth(8192, 20.0, |i| 4.0 * wiggle(i)), |_| 1362);
    let a = analyze(&m, &ctx());
    assert!(codes(&a).is_empty(), "{:?}", a.diagnostics);
    assert!(a.speed.unwrap().slow.is_none());
}

/// `synth` in two processes: the first 1000 samples in process 0, the rest in process 1.
fn two_processes(per_iter: impl Fn(usize) -> f64) -> Measurement {
    let mut m = synth(8192, 20.0, per_iter);
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        s.process = (i >= 1000) as u32;
    }
    m
}

/// `synth` in three processes: samples 0-1799 in process 0, 1800-1899 in 1, the rest in 2.
fn three_unequal_processes(per_iter: impl Fn(usize) -> f64) -> Measurement {
    let mut m = synth(8192, 20.0, per_iter);
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        s.process = (i >= 1800) as u32 + (i >= 1900) as u32;
    }
    m
}

#[test]
fn processes_that_disagree_weigh_the_same_in_the_headline() {
    // Three layouts: process 0 keeps 1800 samples at 4.0 ns, processes 1 and 2 keep 100 each
    // at 4.8 ns. The pooled median would be process 0's; each layout is one draw, so the
    // headline is the median of the three processes' medians, with process 0 in the interval.
    let m = three_unequal_processes(|i| if i < 1800 { 4.0 } else { 4.8 } * wiggle(i));
    let a = analyze(&m, &ctx());
    assert_flags(&a, Code::LayoutSensitive, true);
    assert!(
        (a.per_iter.median_ns - 4.8).abs() < 0.02,
        "{:?}",
        a.per_iter
    );
    assert!(a.per_iter.ci95_ns[0] <= 4.0 * 1.001, "{:?}", a.per_iter);
    // Processes that agree: the pooled median, as before.
    let a = analyze(&three_unequal_processes(|i| 4.0 * wiggle(i)), &ctx());
    assert_flags(&a, Code::LayoutSensitive, false);
    assert!(
        (a.per_iter.median_ns - 4.0).abs() < 0.01,
        "{:?}",
        a.per_iter
    );
}

#[test]
fn layout_is_not_blamed_for_what_the_core_speed_explains() {
    // Process 1 is 8 % slower, and so is its core (below the 10 % of a slow state).
    let bench = |i: usize| 4.0 * wiggle(i) * if i >= 1000 { 1.08 } else { 1.0 };
    let a = analyze(&two_processes(bench), &ctx());
    assert_flags(&a, Code::LayoutSensitive, true);
    let m = with_probes(
        two_processes(bench),
        |i| if i >= 1000 { 1471 } else { 1362 },
    );
    let a = analyze(&m, &ctx());
    assert_flags(&a, Code::LayoutSensitive, false);
    // Same speed in both processes: the layout is blamed.
    let m = with_probes(two_processes(bench), |_| 1362);
    assert!(codes(&analyze(&m, &ctx())).contains(&Code::LayoutSensitive));
    // The core wanders over 0-9 % slower during process 1 (no slow state: under 10 %), and
    // the benchmark with it: in cycles the processes agree.
    let wander = |i: usize| {
        if i >= 1000 {
            1.0 + 0.09 * ((i / 50) % 10) as f64 / 9.0
        } else {
            1.0
        }
    };
    let m = with_probes(two_processes(|i| 4.0 * wiggle(i) * wander(i)), |i| {
        (1362.0 * wander(i)).round() as u64
    });
    let a = analyze(&m, &ctx());
    assert_flags(&a, Code::LayoutSensitive, false);
    // A memory-bound body whose time did not move while the core's speed did: the processes
    // agree in ns, and nothing is blamed either.
    let m = with_probes(two_processes(|i| 4.0 * wiggle(i)), |i| {
        if i >= 1000 {
            1471
        } else {
            1362
        }
    });
    assert_flags(&analyze(&m, &ctx()), Code::LayoutSensitive, false);
}

#[test]
fn the_interval_is_never_wider_than_the_data() {
    // Four processes, one 10 % slower: the t-interval on four medians (t = 3.18) reaches
    // beyond the fastest and slowest samples; it is cut to their range.
    let mut m = synth(8192, 20.0, |i| {
        4.0 * wiggle(i) * if i >= 1500 { 1.1 } else { 1.0 }
    });
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        s.process = (i / 500) as u32;
    }
    let a = analyze(&m, &ctx());
    let max = m
        .samples
        .samples
        .iter()
        .filter(|s| s.iters == 8192)
        .map(|s| s.per_iter_ns())
        .fold(0.0, f64::max);
    assert!(
        a.per_iter.ci95_ns[0] >= a.per_iter.min_ns,
        "{:?}",
        a.per_iter
    );
    assert!(a.per_iter.ci95_ns[1] <= max, "{:?} {max}", a.per_iter);
}

#[test]
fn outliers_are_reported_only_beyond_the_machine_noise_or_when_they_move_the_median() {
    // One main sample in 16 (6 %) 50 % slower.
    let spiky = |i: usize| {
        4.0 * wiggle(i)
            * if i % 160 < 10 && i % 10 != 3 {
                1.5
            } else {
                1.0
            }
    };
    let a = analyze(&synth(8192, 20.0, spiky), &ctx());
    let share = a.outliers.far as f64 / a.steady_samples as f64;
    assert!(share > OUTLIER_FRACTION, "{share}");
    assert_flags(&a, Code::Outliers, true);
    // A machine that shows 5 % far outliers on its own reference kernel: 6 % is its noise,
    // and the median (robust) is not moved beyond its interval.
    let mut noisy = ctx();
    noisy.noise_far_share = Some(0.05);
    let a = analyze(&synth(8192, 20.0, spiky), &noisy);
    assert_flags(&a, Code::Outliers, false);
    // As many (8 %) just 12 % slower, as a busy neighbour gives every benchmark: under 1 % of
    // the time beyond the median, which the headline does not miss; the machine's to mention.
    let light = |i: usize| {
        4.0 * (1.0 + 0.02 * (((i * 7919) % 1009) as f64 / 1009.0 - 0.5))
            * if i % 125 < 10 && i % 10 != 3 {
                1.12
            } else {
                1.0
            }
    };
    let a = analyze(&synth(8192, 20.0, light), &ctx());
    let share = a.outliers.far as f64 / a.steady_samples as f64;
    assert!(share > OUTLIER_FRACTION, "{share}");
    assert_flags(&a, Code::Outliers, false);
    // On a machine as noisy, a fifth of the samples twice as slow over a broad bulk (±10 %)
    // move the median by more than 1 %: the figure is affected, and the row says so.
    let heavy = |i: usize| {
        4.0 * (1.0 + 0.2 * (((i * 7919) % 1009) as f64 / 1009.0 - 0.5))
            * if i % 5 == 1 { 2.0 } else { 1.0 }
    };
    let mut very_noisy = ctx();
    very_noisy.noise_far_share = Some(0.15);
    let a = analyze(&synth(8192, 20.0, heavy), &very_noisy);
    assert_flags(&a, Code::Outliers, true);
    // A handful of far outliers (0.4 %) on a quiet machine: counted, not reported.
    let rare = |i: usize| 4.0 * wiggle(i) * if i.is_multiple_of(250) { 3.0 } else { 1.0 };
    let a = analyze(&synth(8192, 20.0, rare), &ctx());
    assert!(a.outliers.far > 0 && !codes(&a).contains(&Code::Outliers));
}

#[test]
fn the_machine_s_noise_is_scaled_to_the_length_of_the_benchmark_s_samples() {
    // One sample in 12.5 (8 %) half as slow again, in 33 µs samples. The machine showed 3 %
    // far outliers on its reference: in 10 µs samples, that is 9.5 % of 33 µs ones, and the
    // benchmark's 8 % are the machine's; in reference samples as long as the benchmark's,
    // they are the benchmark's own.
    let spiky = |i: usize| {
        4.0 * wiggle(i)
            * if i % 125 < 10 && i % 10 != 3 {
                1.5
            } else {
                1.0
            }
    };
    let mut c = ctx();
    c.noise_far_share = Some(0.03);
    c.noise_sample_ns = Some(10_000.0);
    let sample_ns = 4.0 * 8192.0;
    let scaled = machine_far_share(&c, sample_ns);
    assert!((scaled - (1.0 - 0.97f64.powf(sample_ns / 10_000.0))).abs() < 1e-12);
    assert_flags(
        &analyze(&synth(8192, 20.0, spiky), &c),
        Code::Outliers,
        false,
    );
    c.noise_sample_ns = Some(sample_ns);
    assert!((machine_far_share(&c, sample_ns) - 0.03).abs() < 1e-12);
    assert_flags(
        &analyze(&synth(8192, 20.0, spiky), &c),
        Code::Outliers,
        true,
    );
    // Shorter samples than the reference's keep its share.
    c.noise_sample_ns = Some(100_000.0);
    assert!((machine_far_share(&c, sample_ns) - 0.03).abs() < 1e-12);
}

#[test]
fn a_burst_of_outliers_in_one_round_is_the_machine_s_not_the_benchmark_s() {
    // Two rounds of 1000 samples; far outliers (50 % slower) in one main sample of 8.
    let spiky = |i: usize| i % 80 < 10 && i % 10 != 3;
    let measured = |burst_in_round_1_too: bool| {
        let mut m = synth(8192, 20.0, |i| {
            let hit = spiky(i) && (i < 1000 || burst_in_round_1_too);
            4.0 * wiggle(i) * if hit { 1.5 } else { 1.0 }
        });
        for (i, s) in m.samples.samples.iter_mut().enumerate() {
            s.round = (i >= 1000) as u32;
        }
        analyze(&m, &ctx())
    };
    // In every round: the benchmark's own.
    assert_flags(&measured(true), Code::Outliers, true);
    // In the first round only: a burst of the machine's noise, and the median shrugs it off.
    let a = measured(false);
    let share = a.outliers.far as f64 / a.steady_samples as f64;
    assert!(share > OUTLIER_FRACTION, "{share}");
    assert_flags(&a, Code::Outliers, false);
}

#[test]
fn bursts_of_outliers_within_one_round_are_the_machine_s_not_the_benchmark_s() {
    // One round of 2000 samples. A busy neighbour for stretches of it: in 3 stretches of 300
    // samples, 1 sample in 4 is 50 % slower (11 % of all samples far out, 6 % of the time
    // beyond the median), and the stretches between are quiet.
    let burst = |i: usize| (i % 600) >= 300 && i < 1800 && i % 4 == 1;
    let a = analyze(
        &synth(8192, 20.0, |i| {
            4.0 * wiggle(i) * if burst(i) { 1.5 } else { 1.0 }
        }),
        &ctx(),
    );
    let share = a.outliers.far as f64 / a.steady_samples as f64;
    assert!(share > OUTLIER_FRACTION, "{share}");
    assert_flags(&a, Code::Outliers, false);
    // As many far outliers spread over the whole round (one sample in 9): the benchmark's own.
    let a = analyze(
        &synth(8192, 20.0, |i| {
            4.0 * wiggle(i) * if i % 9 == 4 { 1.5 } else { 1.0 }
        }),
        &ctx(),
    );
    assert_flags(&a, Code::Outliers, true);
}

#[test]
fn a_body_measurably_slower_than_the_empty_loop_is_not_optimized_away() {
    // Empty loop 0.33 ns; a body at 0.35 ns (a load and a multiply hidden in the loop's
    // cycle: less than a quarter cycle more, but 6 % more, far beyond the interval).
    let a = steady(65536, 0.35);
    assert_flags(&a, Code::OptimizedAway, false);
    // Within 1 % of the empty loop: removed.
    let a = steady(65536, 0.332);
    assert_flags(&a, Code::OptimizedAway, true);
    // 10 % above the empty loop in most samples (a slowed core), but a tenth of them at the
    // empty loop's time: removed, lifted by the machine.
    let lifted = |i: usize| if i.is_multiple_of(10) { 0.331 } else { 0.363 } * wiggle(i);
    let a = analyze(&synth(65536, 20.0, lifted), &ctx());
    assert!(a.per_iter.median_ns > 0.35, "{:?}", a.per_iter);
    assert_flags(&a, Code::OptimizedAway, true);
}

#[test]
fn samples_shortened_by_a_faster_core_are_not_timer_limited() {
    // The floor is 1000 × 10 ns = 10 µs; samples of 7 µs (calibrated at 12 µs in a slow
    // state, then 1.7× faster) keep the timer's share at 0.14 %.
    let a = steady(2000, 3.5);
    assert_flags(&a, Code::TimerLimited, false);
}

#[test]
fn empty_loop_cost_is_optimized_away() {
    let a = steady(65536, 0.33);
    assert_flags(&a, Code::OptimizedAway, true);
}

#[test]
fn an_instruction_count_clears_or_confirms_what_time_could_not_tell() {
    let flagged = steady(65536, 0.33);
    // Three instructions more than the empty loop: work that fits in the loop's cycle.
    let mut a = flagged.clone();
    let work = InstructionsCheck {
        instructions_per_iter: 5.0,
        empty_instructions_per_iter: 2.0,
        moves_per_iter: Some(0.0),
    };
    weigh_instructions(&mut a, &work);
    assert!(!work.removed() && !codes(&a).contains(&Code::OptimizedAway));
    assert_eq!(a.diagnostics.len() + 1, flagged.diagnostics.len());
    // As many as the empty loop: removed, and the message says how it is known.
    let mut a = flagged.clone();
    let none = InstructionsCheck {
        instructions_per_iter: 2.2,
        empty_instructions_per_iter: 2.0,
        moves_per_iter: None,
    };
    weigh_instructions(&mut a, &none);
    assert!(none.removed());
    let msg = message(&a, Code::OptimizedAway);
    assert!(msg.contains("2.20 instructions"), "{msg}");
    // One more than the empty loop, and that one a move of a folded constant into the
    // register the barrier holds: removed, and the message says so.
    let mut a = flagged.clone();
    let folded = InstructionsCheck {
        instructions_per_iter: 3.0,
        empty_instructions_per_iter: 2.0,
        moves_per_iter: Some(1.0),
    };
    weigh_instructions(&mut a, &folded);
    assert!(folded.removed());
    let msg = message(&a, Code::OptimizedAway);
    assert!(msg.contains("1.00 of them moves"), "{msg}");
    // Without the disassembly the same count is work.
    let unread = InstructionsCheck {
        moves_per_iter: None,
        ..folded
    };
    assert!(!unread.removed());
    // Not flagged by time (a removed body's loop a cycle slower than the empty loop's, by
    // where its code lies): a count that says removed flags it; one that says work leaves it.
    let clean = steady(8192, 4.0);
    let mut b = clean.clone();
    weigh_instructions(&mut b, &work);
    assert_eq!(codes(&b), codes(&clean));
    weigh_instructions(&mut b, &none);
    assert!(codes(&b).contains(&Code::OptimizedAway));
    assert!(!codes(&clean).contains(&Code::OptimizedAway));
}

#[test]
fn sub_quarter_cycle_is_optimized_away_without_empty_reference() {
    let mut c = ctx();
    c.empty_iter_ns = None;
    let a = analyze(&synth(65536, 20.0, |i| 0.05 * wiggle(i)), &c);
    assert_flags(&a, Code::OptimizedAway, true);
}

#[test]
fn constant_time_independent_of_n_is_flagged() {
    // Every sample costs 50 µs whatever N: the slope is zero.
    let mut m = synth(8192, 0.0, |_| 0.0);
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        s.ns = 50_000 + (i % 7) as u64;
    }
    let mut c = ctx();
    c.empty_iter_ns = None;
    let a = analyze(&m, &c);
    assert!(codes(&a).contains(&Code::OptimizedAway) || codes(&a).contains(&Code::Nonlinear));
    assert!(a.fit.unwrap().slope.abs() < 0.01);
}

#[test]
fn big_intercept_is_nonlinear() {
    // 20 µs of setup per sample on top of 4 ns × N.
    let a = analyze(&synth(8192, 20_000.0, |i| 4.0 * wiggle(i)), &ctx());
    assert_flags(&a, Code::Nonlinear, true);
}

#[test]
fn debug_build_and_noise_are_reported() {
    let mut c = ctx();
    c.debug_build = true;
    let a = analyze(
        &synth(8192, 20.0, |i| {
            4.0 * (1.0 + 0.2 * ((i * 2654435761) % 1000) as f64 / 1000.0)
        }),
        &c,
    );
    let k = codes(&a);
    assert!(k.contains(&Code::DebugBuild));
    // ±10 % noise over 1400 samples still gives a sub-1 % interval: no `unstable`.
    assert!(!k.contains(&Code::Unstable));
}

#[test]
fn periodic_far_outliers_report_their_period() {
    let mut m = synth(8192, 20.0, |i| 4.0 * wiggle(i));
    // Every 25th sample is 5× slower: a regular interruption.
    let mut count = 0;
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        if i % 25 == 0 && s.iters == 8192 {
            s.ns *= 5;
            count += 1;
        }
    }
    let a = analyze(&m, &ctx());
    assert!(a.outliers.far >= count - 1);
    assert!(a.outliers.period_ns.is_some());
    assert_flags(&a, Code::Outliers, true);
    assert!(a.worst_sigma > 100.0);
}

#[test]
fn short_samples_are_timer_limited() {
    let a = steady(16, 4.0);
    assert_flags(&a, Code::TimerLimited, true);
}

/// Adds counter columns: `f(i, iters)` gives sample i's deltas as (event, value) pairs.
fn with_counters(
    mut m: Measurement,
    f: impl Fn(usize, u64) -> Vec<(&'static str, u64)>,
) -> Measurement {
    use crate::samples::CounterColumn;
    let mut cols: Vec<CounterColumn> = Vec::new();
    for (i, s) in m.samples.samples.iter().enumerate() {
        for (e, v) in f(i, s.iters) {
            match cols.iter_mut().find(|c| c.event == e) {
                Some(c) => c.values.push(Some(v)),
                None => cols.push(CounterColumn {
                    event: e.into(),
                    values: vec![Some(v)],
                    scaled: vec![],
                }),
            }
        }
    }
    m.samples.counters = cols;
    m
}

#[test]
fn interrupted_samples_are_counted_and_excluded() {
    // Every 50th sample is interrupted and 3× slower: 2 % of the samples.
    let mut m = synth(8192, 20.0, |i| 4.0 * wiggle(i));
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        if i % 50 == 7 {
            s.ns *= 3;
        }
    }
    let m = with_counters(m, |i, _| {
        vec![
            ("context-switches", (i % 50 == 7) as u64),
            ("cpu-migrations", 0),
            ("task-clock", 500),
        ]
    });
    let a = analyze(&m, &ctx());
    let i = a.interrupted.unwrap();
    assert!(i.excluded);
    assert_eq!(i.of, a.steady_samples + i.samples);
    // 40 of the 1400 samples at the main count (index 7 mod 10 is a main sample).
    assert_eq!((i.samples, i.of), (40, 1400));
    assert!((i.share - 40.0 / 1400.0).abs() < 1e-12, "{i:?}");
    assert!(i.median_with_ns >= i.median_without_ns);
    // Excluded, 2.9 % of the samples, the median unmoved beyond its interval: no word.
    assert_flags(&a, Code::Interrupted, false);
    // The estimate is the clean one; no interrupted sample is left in it.
    assert!(a.per_iter.median_ns < 4.1);
    assert_eq!(a.interrupted_samples.iter().filter(|&&b| b).count(), 40);

    let mut keep = ctx();
    keep.keep_interrupted = true;
    let k = analyze(&m, &keep);
    assert!(!k.interrupted.unwrap().excluded);
    assert_eq!(k.steady_samples, i.of);
    assert!(message(&k, Code::Interrupted).contains("--keep-interrupted"));
}

#[test]
fn many_interrupted_samples_are_reported_even_when_excluded() {
    // One sample in eight (12.5 %) interrupted and 3× slower.
    let mut m = synth(8192, 20.0, |i| 4.0 * wiggle(i));
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        if i % 8 == 7 {
            s.ns *= 3;
        }
    }
    let m = with_counters(m, |i, _| vec![("context-switches", (i % 8 == 7) as u64)]);
    let a = analyze(&m, &ctx());
    assert!(a.interrupted.unwrap().excluded);
    assert!(a.interrupted.unwrap().share > INTERRUPTED_MANY);
    assert_flags(&a, Code::Interrupted, true);
}

#[test]
fn a_rare_interruption_is_excluded_without_a_diagnostic() {
    let m = with_counters(synth(8192, 20.0, |i| 4.0 * wiggle(i)), |i, _| {
        vec![("context-switches", (i == 500) as u64)]
    });
    let a = analyze(&m, &ctx());
    assert_eq!(a.interrupted.unwrap().samples, 1);
    assert!(a.interrupted.unwrap().excluded);
    assert_flags(&a, Code::Interrupted, false);
}

#[test]
fn counter_figures_subtract_the_baseline_and_derive_ratios() {
    // 3 cycles, 4 instructions and 1.2 ns of task-clock per iteration, plus what the
    // reads add (baseline: 100 cycles, 400 ns).
    let m = with_counters(synth(8192, 20.0, |i| 1.2 * wiggle(i)), |i, n| {
        vec![
            ("cycles", 3 * n + 100),
            ("instructions", 4 * n + 50 + (i % 3) as u64),
            ("task-clock", (1.2 * n as f64) as u64 + 400),
            ("page-faults", 0),
        ]
    });
    let mut c = ctx();
    c.counter_baseline = [
        ("cycles", 100.0),
        ("instructions", 50.0),
        ("task-clock", 400.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let a = analyze(&m, &c);
    let f = &a.counters;
    assert!((f["cycles_per_iter"] - 3.0).abs() < 1e-9, "{f:?}");
    assert!((f["instructions_per_iter"] - 4.0).abs() < 1e-3);
    assert!(f["instructions_per_iter_ci95_lo"] <= f["instructions_per_iter"]);
    assert!(f["instructions_per_iter_ci95_hi"] >= f["instructions_per_iter"]);
    assert!((f["ipc"] - 4.0 / 3.0).abs() < 1e-3);
    assert!((f["ghz"] - 2.5).abs() < 0.01, "{}", f["ghz"]);
    assert_eq!(f["page-faults_per_iter"], 0.0);
    assert!(!f.contains_key("branch_miss_rate"));
    assert!(a.interrupted.is_none());
    // The counted cycle time (0.4 ns) replaces the add-chain estimate.
    assert!((a.cycle_ns.unwrap() - 0.4).abs() < 0.01);
}

#[test]
fn optimized_away_uses_the_counted_cycle_time() {
    // 0.2 ns per iteration: a quarter cycle of the context's 0.33 ns estimate would not
    // flag it against a 0.1 ns empty loop, but the counted cycles say 1 cycle = 1 ns.
    let m = with_counters(synth(65536, 20.0, |i| 0.2 * wiggle(i)), |_, n| {
        vec![("cycles", n / 5), ("task-clock", n / 5)]
    });
    let mut c = ctx();
    c.empty_iter_ns = Some(0.01);
    let a = analyze(&m, &c);
    assert!((a.cycle_ns.unwrap() - 1.0).abs() < 0.01);
    let msg = message(&a, Code::OptimizedAway);
    assert!(msg.contains("counted cycles"), "{msg}");
    assert!(
        !codes(&analyze(&synth(65536, 20.0, |i| 0.2 * wiggle(i)), &c))
            .contains(&Code::OptimizedAway)
    );
}

#[test]
fn absent_counter_values_are_skipped_not_zero() {
    let mut m = with_counters(synth(8192, 20.0, |i| 4.0 * wiggle(i)), |_, n| {
        vec![("cycles", 12 * n)]
    });
    for (i, v) in m.samples.counters[0].values.iter_mut().enumerate() {
        if i % 2 == 0 {
            *v = None;
        }
    }
    let a = analyze(&m, &ctx());
    assert_eq!(a.counters["cycles_per_iter"], 12.0);
}

#[test]
fn the_note_about_unavailable_counters_is_a_diagnostic() {
    let mut c = ctx();
    c.counters_note =
        Some("counters not read (absent from the results, not zero): cycles: no PMU".into());
    c.counters_unavailable = vec!["cycles".into()];
    let a = analyze(&synth(8192, 20.0, |i| 4.0 * wiggle(i)), &c);
    assert_eq!(codes(&a), vec![Code::CountersUnavailable]);
    assert!(message(&a, Code::CountersUnavailable).starts_with("not read: cycles. "));
}

#[test]
fn a_body_a_few_cycles_from_the_empty_loop_is_near_it_in_cycles_whatever_the_clock() {
    // The empty loop: 2 cycles at start-up (0.66 ns at 0.33 ns a cycle). A folded constant whose
    // loop runs 1.4 cycles slower, measured while the core ran 20 % slower than at start-up:
    // 3.4 cycles, 1.35 ns, which the start-up cycle would call 4.1 cycles over 2.
    let c = Context {
        empty_iter_ns: Some(0.66),
        ..ctx()
    };
    let slow_cycle = 0.33 * 1.2;
    let m = with_probes(synth(65536, 20.0, |i| 3.4 * slow_cycle * wiggle(i)), |_| {
        (1362.0 * 1.2f64).round() as u64
    });
    let a = analyze(&m, &c);
    let net = cycles_over_empty(&a, &c).unwrap();
    assert!((net - 1.4).abs() < 0.1, "{net}");
    assert!(near_empty_loop(&a, &c));
    // The bar's own cycles, when its measurement had them, stand for its time over the
    // start-up cycle: a bar of 2.5 cycles leaves 0.9.
    let own = Context {
        empty_iter_cycles: Some(2.5),
        ..c.clone()
    };
    let net = cycles_over_empty(&a, &own).unwrap();
    assert!((net - 0.9).abs() < 0.1, "{net}");
    // Three dependent additions and more are counted too; twenty cycles of work are not.
    let m = with_probes(synth(8192, 20.0, |i| 22.0 * 0.33 * wiggle(i)), |_| 1362);
    assert!(!near_empty_loop(&analyze(&m, &c), &c));
    // Without a cycle estimate, the span is that of four cycles at 2.5 GHz.
    let no_cycle = Context {
        cycle_ns: None,
        ..c.clone()
    };
    let m = synth(65536, 20.0, |i| (0.66 + 1.2) * wiggle(i));
    assert!(near_empty_loop(&analyze(&m, &no_cycle), &no_cycle));
}

#[test]
fn a_removed_body_carries_no_code_that_only_restates_it() {
    // A loop the compiler removed: every sample takes the clock reads' 30 ns whatever N.
    let m = synth(1 << 20, 30.0, |_| 0.0);
    let mut c = ctx();
    c.debug_build = true;
    let a = analyze(&m, &c);
    // The analysis alone finds the body's consequences too (samples of 30 ns are short).
    assert!(codes(&a).contains(&Code::OptimizedAway), "{:?}", codes(&a));
    assert!(codes(&a).contains(&Code::TimerLimited), "{:?}", codes(&a));
    let step = crate::pipeline::Context {
        analysis: &c,
        cold: false,
        earlier: None,
        env_pad: &|_| 0,
        throughput: None,
        complexity: None,
        others: &[],
        executor: None,
    };
    let r = crate::pipeline::finish("removed", &m, &step, crate::pipeline::Instructions::None);
    let kept: Vec<Code> = r.diagnostics.iter().map(|d| d.code).collect();
    // The result says it was removed, and what holds whatever the body costs (the build).
    assert_eq!(kept, [Code::DebugBuild, Code::OptimizedAway]);
    // A body that works keeps every code it earns.
    let work = synth(8192, 30_000.0, |i| 4.0 * wiggle(i));
    let r = crate::pipeline::finish("work", &work, &step, crate::pipeline::Instructions::None);
    assert!(!r.removed());
    assert!(
        r.diagnostics.iter().any(|d| d.code == Code::Nonlinear),
        "{:?}",
        r.diagnostics
    );
}

/// `synth` in two rounds of one process (samples 0–999 and 1000–1999), the clock steady (the
/// probes read 0.33 ns per addition): judged in cycles.
fn two_rounds(per_iter: impl Fn(usize) -> f64) -> Measurement {
    let mut m = with_probes(synth(8192, 20.0, per_iter), |_| 1362);
    for (i, s) in m.samples.samples.iter_mut().enumerate() {
        s.round = (i >= 1000) as u32;
    }
    m
}

#[test]
fn a_burst_at_the_end_of_a_round_is_a_slowed_stretch_left_out_not_a_drift() {
    // sin in an Intel demo: 24.49, 24.50, 24.51 and 37.44 cycles by quarter of its first
    // round, 24.46–24.52 throughout its second. Here the last quarter of the first round reads
    // 1.53× the level, in cycles too (the clock did not move).
    let burst = |i: usize| (750..1000).contains(&i);
    let m = two_rounds(|i| 8.1 * wiggle(i) * if burst(i) { 1.53 } else { 1.0 });
    let a = analyze(&m, &ctx());
    assert_eq!(a.headline_unit, Unit::Cycles);
    for code in [Code::NoSteadyState, Code::Unstable, Code::Outliers] {
        assert_flags(&a, code, false);
    }
    assert_eq!(a.slowed_stretches.len(), 1, "{:?}", a.slowed_stretches);
    let st = a.slowed_stretches[0];
    assert_eq!((st.process, st.round, st.unit), (0, 0, Unit::Cycles));
    let level = 8.1 / 0.33;
    assert!((st.median / level - 1.53).abs() < 0.01, "{st:?}");
    assert!((st.level / level - 1.0).abs() < 0.01, "{st:?}");
    // About the burst's 175 samples at the main count, its edges included.
    assert!((160..=200).contains(&st.samples), "{st:?}");
    assert!((a.per_iter.median_ns / 8.1 - 1.0).abs() < 0.002);
    // The same burst in both rounds is the benchmark's own: nothing is left out, and the
    // run says it did not settle.
    let own = |i: usize| (750..1000).contains(&i) || (1750..2000).contains(&i);
    let m = two_rounds(|i| 8.1 * wiggle(i) * if own(i) { 1.53 } else { 1.0 });
    let a = analyze(&m, &ctx());
    assert!(a.slowed_stretches.is_empty(), "{:?}", a.slowed_stretches);
    assert!(!codes(&a).is_empty(), "{:?}", a.diagnostics);
}

#[test]
fn rounds_that_agree_to_a_tenth_of_a_percent_in_cycles_did_not_drift() {
    // Each round wanders 3 % within itself, the same way: their medians agree.
    let ramp = |i: usize| 1.0 + 0.03 * ((i % 1000) as f64 / 1000.0 - 0.5);
    let m = two_rounds(|i| 4.0 * wiggle(i) * ramp(i));
    let a = analyze(&m, &ctx());
    assert_eq!(a.headline_unit, Unit::Cycles);
    assert_flags(&a, Code::NoSteadyState, false);
    // One round only: nothing to weigh the drift against.
    let mut m = with_probes(synth(8192, 20.0, |i| 4.0 * wiggle(i) * ramp(i / 2)), |_| {
        1362
    });
    m.steady = Some(SteadyState {
        first: 0,
        class: WarmupClass::NoSteadyState,
    });
    let a = analyze(&m, &ctx());
    assert_flags(&a, Code::NoSteadyState, true);
}

#[test]
fn a_bar_measured_at_another_clock_is_held_in_cycles() {
    use crate::result::ExecutorJson;
    // The empty future took 4 cycles at 0.30 ns (1.20 ns) when it was measured; the clock then
    // slowed to 0.33 ns a cycle (probe 1362 ns), and a body awaiting nothing takes the same 4
    // cycles, 1.32 ns. In ns it reads 10 % above its bar, measurably; in cycles it is level.
    let c = ctx();
    let bar = |cycles: Option<f64>| ExecutorJson {
        name: "smol".into(),
        empty_future_ns: 1.20,
        empty_future_cycles: cycles,
        on_calling_core: true,
    };
    let judged = |body_cycles: f64, bar: &ExecutorJson| {
        let m = with_probes(
            synth(65536, 20.0, |i| body_cycles * 0.33 * wiggle(i)),
            |_| 1362,
        );
        let a = analyze(&m, &crate::pipeline::for_executor(&c, Some(bar)));
        assert_eq!(a.headline_unit, Unit::Cycles);
        codes(&a).contains(&Code::OptimizedAway)
    };
    assert!(
        !judged(4.0, &bar(None)),
        "in ns the slower clock hides the removed body"
    );
    assert!(judged(4.0, &bar(Some(4.0))));
    // One cycle of work above the bar is work, in cycles too.
    assert!(!judged(5.0, &bar(Some(4.0))));
    // The same for the synchronous empty loop's bar (`harness.empty_iter_cycles`): 2 cycles
    // measured at 0.30 ns, the body's 2 cycles at 0.33 ns.
    let sync = Context {
        empty_iter_ns: Some(0.60),
        empty_iter_cycles: Some(2.0),
        ..ctx()
    };
    let m = with_probes(synth(65536, 20.0, |i| 0.66 * wiggle(i)), |_| 1362);
    assert!(codes(&analyze(&m, &sync)).contains(&Code::OptimizedAway));
    let in_ns = Context {
        empty_iter_cycles: None,
        ..sync
    };
    assert!(!codes(&analyze(&m, &in_ns)).contains(&Code::OptimizedAway));
}

#[test]
fn an_async_body_is_judged_against_its_executor_s_empty_future_and_off_the_core_in_ns() {
    use crate::result::ExecutorJson;
    // A body awaiting nothing on an executor whose empty future costs 4 cycles (1.32 ns): well
    // above the empty loop (0.33 ns), level with the empty future.
    let m = with_probes(synth(65536, 20.0, |i| 1.32 * wiggle(i)), |_| 1362);
    let c = ctx();
    assert!(!codes(&analyze(&m, &c)).contains(&Code::OptimizedAway));
    let mut on = ExecutorJson {
        name: "smol".into(),
        empty_future_ns: 1.32,
        empty_future_cycles: None,
        on_calling_core: true,
    };
    let a = analyze(&m, &crate::pipeline::for_executor(&c, Some(&on)));
    assert!(codes(&a).contains(&Code::OptimizedAway), "{:?}", codes(&a));
    assert_eq!(a.headline_unit, Unit::Cycles);
    // Work on a multi-thread runtime: judged in ns, probes or not.
    let work = with_probes(synth(8192, 20.0, |i| 40.0 * wiggle(i)), |_| 1362);
    on.on_calling_core = false;
    let a = analyze(&work, &crate::pipeline::for_executor(&c, Some(&on)));
    assert_eq!(a.headline_unit, Unit::Ns);
    assert!(!codes(&a).contains(&Code::OptimizedAway));
    assert_eq!(analyze(&work, &c).headline_unit, Unit::Cycles);
    // Without an executor, the run's context as it is.
    assert!(matches!(
        crate::pipeline::for_executor(&c, None),
        std::borrow::Cow::Borrowed(_)
    ));
}
