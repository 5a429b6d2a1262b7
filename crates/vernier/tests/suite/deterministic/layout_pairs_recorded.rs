//! The pair analysis on layouts recorded on another machine: the processes of one build of the
//! 64 MiB pointer chase, run five times on an Intel KVM guest (three processes a run, each with
//! its own environment padding and ASLR). Two processes of one run paired as OLD and NEW are an
//! A/A pair whose ratio is the difference their layouts (and the clock, which a real pair would
//! cancel) make: the processes disagree far beyond their own intervals, up to 8.8 % in a run.

use std::path::PathBuf;
use vernier::analyze::pairs::{
    comparison_from_process_pairs, ProcessPair, Unresolved, LAYOUT_AVERAGE_MIN_PAIRS,
};
use vernier::result::comparison::ComparisonFile;
use vernier::stats::compare::{Mode, Verdict};

/// Every two processes of a run (the earlier as OLD), as pairs with their own 95 % interval
/// (the two processes' relative half-widths in quadrature).
fn recorded_pairs() -> Vec<ProcessPair> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/stats/intel_chase_processes.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let fig = |p: &serde_json::Value| {
        let m = p["median_ns"].as_f64().unwrap();
        let ci = &p["ci95_ns"];
        let half = (ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()) / 2.0 / m;
        (m, half, p["samples"].as_u64().unwrap() as usize)
    };
    let mut pairs = Vec::new();
    for run in v["runs"].as_array().unwrap() {
        let ps: Vec<(f64, f64, usize)> = run
            .as_array()
            .unwrap()
            .iter()
            .map(fig)
            .filter(|p| p.2 >= 10)
            .collect();
        for (i, a) in ps.iter().enumerate() {
            for b in &ps[i + 1..] {
                let r = b.0 / a.0;
                let h = a.1.hypot(b.1);
                let n = pairs.len();
                pairs.push(ProcessPair::from_ratio(
                    n,
                    r,
                    [r * (1.0 - h), r * (1.0 + h)],
                    a.2.min(b.2),
                    0.2,
                ));
            }
        }
    }
    pairs
}

fn judged(pairs: Vec<ProcessPair>) -> vernier::analyze::pairs::Comparison {
    let mut f = ComparisonFile::new(Mode::Paired, 0.005);
    f.comparisons
        .push(comparison_from_process_pairs("chase", pairs, "budget").unwrap());
    f.finalize();
    f.comparisons.remove(0)
}

#[test]
fn recorded_intel_layouts_of_one_build_are_never_a_change() {
    let pairs = recorded_pairs();
    assert!(pairs.len() >= LAYOUT_AVERAGE_MIN_PAIRS, "{}", pairs.len());
    // All of them: the states show, the average over layouts is judged, and it is no change
    // found (A/A): never faster or slower; the states' range reaches both sides of 1.
    let c = judged(pairs.clone());
    let st = c.layout_states.expect("layout states");
    assert!(st.averaged && st.lo < 0.95 && st.hi > 1.04, "{st:?}");
    assert!(
        matches!(c.verdict, Verdict::NoChange | Verdict::Inconclusive),
        "{c:?}"
    );
    assert!(c.ci95[0] <= 1.0 && 1.0 <= c.ci95[1], "{:?}", c.ci95);
    // The first four (two runs' worth): states shown, not yet sampled, no verdict.
    let c = judged(pairs[..4].to_vec());
    assert!(c.layout_states.is_some_and(|s| !s.averaged), "{c:?}");
    assert_eq!(
        c.unresolved(),
        Some(Unresolved::StatesNotSampled {
            pairs: 4,
            need: LAYOUT_AVERAGE_MIN_PAIRS
        })
    );
    // Every window of four consecutive pairs that shows the states: no verdict. (Four pairs
    // that agree within their own intervals show none, and are judged as any pairs are.)
    let mut shown = 0;
    for w in pairs.windows(4) {
        let c = judged(w.to_vec());
        if c.layout_states.is_some() {
            shown += 1;
            assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        }
    }
    assert!(shown >= 5, "{shown}");
}
