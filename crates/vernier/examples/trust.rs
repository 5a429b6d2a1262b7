//! Three kernels bound by different parts of the machine, for `scripts/trust-figures.sh`
//! (issue 11: how far a figure can be trusted when the machine's speed changes):
//!
//! - `chain`: 100 dependent one-cycle additions (compute-bound: follows the core's clock);
//! - `sqrt`: a dependent chain of square roots (latency of the divide/sqrt unit);
//! - `chase64m`: a pointer chase over a random cycle through 64 MiB (memory latency).
//!
//! Standalone, or a worker under `vernier run -- target/release/examples/trust`.

/// Bytes the pointer chase walks through: far beyond any last-level cache.
const CHASE_BYTES: usize = 64 << 20;

/// A random cyclic permutation of `n` slots (Sattolo's algorithm): following `next[i]` from
/// any slot visits every slot once before coming back, in an order no prefetcher can guess.
fn cycle(n: usize) -> Vec<usize> {
    let mut next: Vec<usize> = (0..n).collect();
    let mut rng = vernier::Rng::new(0x7275_7374);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        next.swap(i, j);
    }
    next
}

fn main() -> std::process::ExitCode {
    vernier::Suite::run_main(|suite| {
        let mut x = 0u64;
        suite.bench("chain", move || {
            x = vernier::workload::kernels::add_chain(x, vernier::black_box(100));
            x
        });
        let mut y = 2.0f64;
        suite.bench("sqrt", move || {
            // Each root waits for the previous one: the unit's latency, not its throughput.
            y = (vernier::black_box(y) + 2.0).sqrt();
            y
        });
        // Built before any benchmark runs (a worker has no set-up step outside its budget).
        let next = cycle(CHASE_BYTES / std::mem::size_of::<usize>());
        let mut at = 0usize;
        suite.bench("chase64m", move || {
            at = next[vernier::black_box(at)];
            at
        });
    })
}
