//! In-process paired comparisons on the add chain, a kernel of known cost: n = 100 against
//! itself is no change; against n = 200 it is about twice as slow. Ratios measured in the same
//! run, never absolute times.

use vernier::black_box;
use vernier::session::compare::run_suite_pairs;
use vernier::session::Event;
use vernier::stats::compare::Verdict;
use vernier::workload::kernels::add_chain;
use vernier::{Options, Suite};

fn chain(n: u64) -> impl FnMut() -> u64 {
    let mut x = 0u64;
    move || {
        x = add_chain(x, black_box(n));
        x
    }
}

#[test]
fn chain_100_against_100_and_200() {
    let mut suite = Suite::new(Options::default());
    suite.compare("chain 100 vs 100", chain(100), chain(100));
    suite.compare("chain 100 vs 200", chain(100), chain(200));
    suite.bench("chain 200", chain(200));
    suite.bench("chain 100", chain(100));
    // Two registered benchmarks compared by name (NEW is the faster one here).
    suite.compare_benches("by name", "chain 200", "chain 100");
    suite.compare_benches("missing", "chain 100", "no such");
    assert_eq!(suite.comparison_names().len(), 4);
    let mut started = Vec::new();
    let file = run_suite_pairs(&mut suite, 0.005, &mut |ev| {
        if let Event::Start { name } = ev {
            started.push(name.to_string())
        }
    });
    assert_eq!(started.len(), 4);
    let get = |n: &str| file.comparisons.iter().find(|c| c.name == n).unwrap();

    let same = get("chain 100 vs 100");
    assert_eq!(same.verdict, Verdict::NoChange, "{same:?}");
    assert!((same.ratio - 1.0).abs() < 0.02, "{}", same.ratio);

    let double = get("chain 100 vs 200");
    assert_eq!(double.verdict, Verdict::Slower, "{double:?}");
    assert!(double.ratio > 1.7 && double.ratio < 2.3, "{}", double.ratio);
    assert!(double.ci95[0] <= double.ratio && double.ratio <= double.ci95[1]);
    assert_eq!(double.iters_per_sample[0], double.iters_per_sample[1]);

    let half = get("by name");
    assert_eq!(half.verdict, Verdict::Faster, "{half:?}");
    assert!(half.ratio > 1.0 / 2.3 && half.ratio < 1.0 / 1.7);

    assert_eq!(file.failed.len(), 1);
    assert!(file.failed[0]
        .error
        .contains("no benchmark named 'no such'"));
    let g = file.geomean_ratio.unwrap();
    assert!(g.is_finite() && g > 0.0);
    // The verdicts come within the budget (about a second each).
    for c in &file.comparisons {
        assert!(c.seconds < 3.0, "{}: {} s", c.name, c.seconds);
    }
}
