//! Threads and cache lines: each thread adding to its own counter on its own cache line,
//! against all threads adding to one shared atomic, and against two counters written by two
//! threads on one cache line (false sharing). At 1 and 2 threads, plus one oversubscribed
//! count, a body that panics in one thread, and a body that returns a constant (the compiler
//! removes it: flagged `optimized-away` at every thread count). `cargo run --release --example sharing`
//! measures standalone; `vernier run -- target/release/examples/sharing` drives it as a worker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use vernier::workload::threads::CacheLine;

/// A counter alone on its cache line; two counters sharing one.
type Padded = CacheLine<AtomicU64>;
type Pair = CacheLine<[AtomicU64; 2]>;

fn sharing(s: &mut vernier::Suite) {
    let private: Arc<Vec<Padded>> = Arc::new((0..64).map(|_| Padded::default()).collect());
    s.bench_threads("private", &[1, 2], move |t| {
        private[t].0.fetch_add(1, Ordering::Relaxed)
    });
    let shared = Arc::new(AtomicU64::new(0));
    s.bench_threads("shared", &[1, 2], move |_| {
        shared.fetch_add(1, Ordering::Relaxed)
    });
    let pair = Arc::new(Pair::default());
    s.bench_threads("false-shared", &[1, 2], move |t| {
        pair.0[t % 2].fetch_add(1, Ordering::Relaxed)
    });
    // A constant: no work at any thread count.
    s.bench_threads("constant", &[1, 2], |_| 0u64);
    // More threads than CPUs: works, and is flagged.
    let cpus = vernier::workload::threads::allowed_cpus().len();
    let over: Arc<Vec<Padded>> = Arc::new((0..cpus + 1).map(|_| Padded::default()).collect());
    s.bench_threads("oversubscribed", &[cpus + 1], move |t| {
        over[t].0.fetch_add(1, Ordering::Relaxed)
    });
    // A body that panics in thread 1 of 2: fails that benchmark only.
    s.bench_threads("panics", &[2], |t| {
        if t == 1 {
            panic!("thread one gives up");
        }
        t
    });
}

vernier::main!(sharing);
