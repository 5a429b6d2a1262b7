//! The core's share on synthetic probe readings: a run spent wholly with the core shared is
//! told from its start-up calibration or the machine's known ratio, a benchmark that follows
//! the throughput half is `core-shared` and one that does not is never, and a run whose share
//! never moved cannot tell which it is.

use super::tests::{samples_wide, speed_of, timer};
use super::*;
use crate::samples::Samples;

/// The dependent chain's time for 4096 additions (0.4 ns each once the timer's 10 ns are
/// taken off) and the eight chains' when the thread has the whole core (0.1 ns each: a ratio
/// of 0.25, four additions a cycle).
const LAT: u64 = 1648;
const WHOLE: u64 = 420;
const WHOLE_RATIO: f64 = 0.25;

/// The eight chains' time for sample `i` of a run wholly shared: 1.45× and 1.55× the whole
/// core's (a neighbour taking more or less), alternating in stretches of 20 samples.
fn wide_shared(i: usize) -> u64 {
    if (i / 20).is_multiple_of(2) {
        (410.0 * 1.45) as u64 + 10
    } else {
        (410.0 * 1.55) as u64 + 10
    }
}

fn refs(startup: Option<f64>, known: Option<f64>) -> References {
    References {
        startup_wide_ratio: startup,
        known_wide_ratio: known,
        ..References::default()
    }
}

/// A throughput-bound benchmark: 10 ns on the whole core, slower in proportion to the eight
/// chains' time.
fn throughput_bound(i: usize) -> f64 {
    10.0 * (wide_shared(i) - 10) as f64 / 410.0
}

#[test]
fn a_run_wholly_shared_is_told_by_the_start_up_ratio_and_flagged_when_it_follows() {
    let idx: Vec<usize> = (0..400).collect();
    let s = samples_wide(400, |_| LAT, wide_shared, throughput_bound);
    // Its own probes alone: the best it saw is shared too, nothing to tell.
    let (own, _) = speed_of(&s, &timer(), refs(None, None), 1, &idx);
    assert!(!own.core_shared() && own.slow.is_none(), "{own:?}");
    let sharing = own.sharing.unwrap();
    assert_eq!(sharing.reference, RatioReference::Probes);
    assert!(sharing.core_share > 0.85, "{sharing:?}");
    // Against the start-up calibration (the whole core): the eight chains 1.45 and 1.55 times as slow.
    let (sp, head) = speed_of(&s, &timer(), refs(Some(WHOLE_RATIO), None), 1, &idx);
    assert!(sp.core_shared() && !sp.core_slowed() && !sp.split, "{sp:?}");
    assert_eq!(head, idx, "the headline is the shared core's, said so");
    let sharing = sp.sharing.unwrap();
    assert_eq!(sharing.reference, RatioReference::StartUp);
    // Half the samples at 1/1.45, half at 1/1.55 (and those just before a more shared
    // stretch taken as shared as the probe after them): the median between the two.
    assert!(
        sharing.core_share > 1.0 / 1.55 - 1e-3 && sharing.core_share < 1.0 / 1.45,
        "{sharing:?}"
    );
    assert!((sharing.shared_share - 1.0).abs() < 1e-12);
    // The more shared half read 1.55 / 1.45 as slow.
    let felt = sharing.felt.unwrap();
    assert!((felt - 1.55 / 1.45).abs() < 0.01, "{felt}");
    // The machine's known ratio does the same when the start-up was shared too.
    let (known, _) = speed_of(&s, &timer(), refs(Some(0.4), Some(WHOLE_RATIO)), 1, &idx);
    assert!(known.core_shared(), "{known:?}");
    assert_eq!(known.sharing.unwrap().reference, RatioReference::Known);
}

#[test]
fn a_latency_bound_benchmark_is_never_core_shared() {
    // The same probes, a benchmark that does not follow them (a chain of dependent adds).
    let idx: Vec<usize> = (0..400).collect();
    let s = samples_wide(400, |_| LAT, wide_shared, |i| 20.0 + 0.01 * (i % 7) as f64);
    for unit in [crate::analyze::Unit::Ns, crate::analyze::Unit::Cycles] {
        let r = References {
            unit,
            ..refs(Some(WHOLE_RATIO), Some(WHOLE_RATIO))
        };
        let (sp, head) = speed_of(&s, &timer(), r, 1, &idx);
        assert!(
            !sp.core_shared() && !sp.core_slowed() && sp.slow.is_none(),
            "{sp:?}"
        );
        assert_eq!(head, idx);
        // The share is said all the same.
        assert!(sp.core_share().unwrap() < 0.75, "{sp:?}");
    }
}

#[test]
fn a_share_that_never_moved_cannot_tell_whether_the_benchmark_follows() {
    let idx: Vec<usize> = (0..400).collect();
    let s = samples_wide(400, |_| LAT, |_| wide_shared(0), |_| 14.0);
    let (sp, _) = speed_of(&s, &timer(), refs(Some(WHOLE_RATIO), None), 1, &idx);
    assert!(
        !sp.core_shared() && sp.sharing.unwrap().felt.is_none(),
        "{sp:?}"
    );
    assert!((sp.core_share().unwrap() - 1.0 / 1.45).abs() < 0.01);
}

#[test]
fn shared_stretches_are_set_apart_and_the_headline_is_the_whole_core_s() {
    // 120 of 400 samples with the core shared (1.55×), the rest whole; the benchmark 1.6×
    // slower shared. The run's own best is whole: no reference needed.
    let shared = |i: usize| (i / 20) % 10 >= 7;
    let s = samples_wide(
        400,
        |_| LAT,
        |i| if shared(i) { wide_shared(20) } else { WHOLE },
        |i| if shared(i) { 16.0 } else { 10.0 },
    );
    let idx: Vec<usize> = (0..400).collect();
    let (sp, head) = speed_of(&s, &timer(), refs(None, None), 1, &idx);
    assert!(sp.split && sp.core_shared(), "{sp:?}");
    // The whole core's 280 but the sample just before each of the two shared stretches (the
    // probe after it read shared: the neighbour may have come during its batch).
    assert_eq!(head.len(), 278);
    assert!((sp.fast.median_ns - 10.0).abs() < 1e-9);
    let sharing = sp.sharing.unwrap();
    assert!(
        (sharing.shared_share - 122.0 / 400.0).abs() < 1e-12,
        "{sharing:?}"
    );
    assert!((sharing.felt.unwrap() - 1.6).abs() < 1e-9);
    assert!((sharing.own_best_ratio - WHOLE_RATIO).abs() < 0.001);
}

#[test]
fn a_clock_slow_state_stays_core_slowed() {
    // The clock 1.5× slower for 30 % (both halves slower alike): not a shared core.
    let slow = |i: usize| (i / 20) % 10 >= 7;
    let s = samples_wide(
        400,
        |i| if slow(i) { 2462 } else { LAT },
        |i| if slow(i) { 625 } else { WHOLE },
        |i| if slow(i) { 15.0 } else { 10.0 },
    );
    let idx: Vec<usize> = (0..400).collect();
    let (sp, _) = speed_of(&s, &timer(), refs(Some(WHOLE_RATIO), None), 1, &idx);
    assert!(sp.core_slowed() && !sp.core_shared(), "{sp:?}");
    assert!(sp.core_share().unwrap() > 0.95);
}

/// The recording of a shared Zen 3 guest (`tests/fixtures/zen3-vm/two-probes.txt.gz`): 20,000
/// windows of both probes on one CPU, TSC ticks per addition of one dependent chain (`lat`)
/// and of eight independent ones (`thr`), taken one right after the other.
fn two_probes() -> Vec<(f64, f64)> {
    let gz = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/zen3-vm/two-probes.txt.gz");
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(out.status.success(), "gzip -dc {}", gz.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<f64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[1], f[2]))
        })
        .collect()
}

/// One batch of one sample per window, probed by the window's two readings (as ns for 65536
/// additions, the ticks standing for ns), the sample's time per iteration `body(lat, thr)`.
fn windows_as_samples(w: &[(f64, f64)], body: impl Fn(f64, f64) -> f64) -> Samples {
    let mut s = Samples::default();
    let adds = 65536.0;
    for (i, &(lat, thr)) in w.iter().enumerate() {
        s.push_batch(
            &[crate::samples::Sample {
                iters: 1000,
                ns: (body(lat, thr) * 1000.0) as u64,
                t_ns: i as u64 * 500_000,
                process: 0,
                round: 0,
                phase: crate::samples::Phase::Measure,
            }],
            &[],
        );
        s.set_probe(
            1,
            adds as u64,
            Some((lat * adds) as u64),
            Some((thr * adds) as u64),
        );
    }
    s
}

// The recording is unpacked by the system's gzip, which a Windows test run (Wine) has not.
#[test]
#[cfg_attr(windows, ignore = "gzip unpacks the recording; a Windows run has none")]
fn on_the_recording_of_a_shared_core_the_throughput_half_is_shared_and_the_clock_is_not() {
    let w = two_probes();
    assert_eq!(w.len(), 20_000);
    let idx: Vec<usize> = (0..w.len()).collect();
    // The ticks stand for ns: no nominal rate to hold the clock half to.
    let t = TimerInfo {
        kind: TimerKind::Monotonic,
        tsc_hz: None,
        ..timer()
    };
    // 64 rounds of 8 independent adds follows the eight chains; 64 dependent adds, the one.
    let thr = windows_as_samples(&w, |_, thr| 64.0 * 8.0 * thr);
    let lat = windows_as_samples(&w, |lat, _| 64.0 * lat);
    let (tp, head) = speed_of(&thr, &t, References::default(), 1, &idx);
    let sharing = tp.sharing.unwrap();
    // The whole core: four additions a cycle, a ratio near 0.25 (0.253 at best here).
    assert!(
        sharing.best_ratio > 0.24 && sharing.best_ratio < 0.27,
        "{sharing:?}"
    );
    // The clock held (no clock-slow state), the core was shared most of the time, and the
    // throughput-bound body is core-shared with its headline on the whole core's windows.
    assert!(tp.core_shared() && tp.split && !tp.core_slowed(), "{tp:?}");
    assert!(
        sharing.shared_share > 0.5 && sharing.core_share < 0.85,
        "{sharing:?}"
    );
    assert!(head.len() >= MIN_STATE_SAMPLES && head.len() < w.len() / 2);
    let felt = sharing.felt.unwrap();
    assert!(felt > 1.2, "{felt}");
    // The latency-bound chain on the same windows: never core-shared, the share still said.
    let (lp, head) = speed_of(&lat, &t, References::default(), 1, &idx);
    assert!(!lp.core_shared() && lp.slow.is_none(), "{lp:?}");
    assert_eq!(head.len(), w.len());
    assert!(lp.core_share().unwrap() < 0.85);
}
