//! The demo's lesson on sharing between threads: each thread adding to its own counter on its
//! own cache line, every thread adding to one shared atomic, and two counters on one cache line
//! written by one thread each (false sharing), at one and two threads (docs/threads.md).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use vernier::analyze::threads::contended_below;
use vernier::diagnostic::{Code, Finding, Interruption};
use vernier::result::threads::name;
use vernier::result::ResultFile;
use vernier::workload::threads::CacheLine;
use vernier::Suite;

/// A counter alone on its cache line; two counters sharing one.
type Padded = CacheLine<AtomicU64>;
type Pair = CacheLine<[AtomicU64; 2]>;

const COUNTS: [usize; 2] = [1, 2];

/// The note after a speed-up whose threads took turns on a CPU (not `contended`).
const WAITED: &str = " (threads waited for a CPU)";

pub fn register(s: &mut Suite) {
    let own: Arc<Vec<Padded>> = Arc::new((0..COUNTS.len()).map(|_| Padded::default()).collect());
    s.bench_threads("counter per thread", &COUNTS, move |t| {
        own[t].0.fetch_add(1, Ordering::Relaxed)
    });
    let shared = Arc::new(AtomicU64::new(0));
    s.bench_threads("one shared counter", &COUNTS, move |_| {
        shared.fetch_add(1, Ordering::Relaxed)
    });
    let pair = Arc::new(Pair::default());
    s.bench_threads("two counters, one cache line", &COUNTS, move |t| {
        pair.0[t % 2].fetch_add(1, Ordering::Relaxed)
    });
}

/// The lesson in a sentence, from the speed-ups measured at two threads.
pub fn lesson(file: &ResultFile) -> Option<String> {
    let speedup = |base: &str| {
        let b = file.benchmarks.iter().find(|b| b.name == name(base, 2))?;
        let s = b.scaling.as_ref()?.against_one?;
        let note = b.diagnostics.iter().find_map(|d| match d.finding() {
            _ if d.code == Code::Contended => Some(" (contended)"),
            Some(Finding::Interrupted(Interruption::ThreadsWaited { .. })) => Some(WAITED),
            _ => None,
        });
        Some((s.speedup, note.unwrap_or_default()))
    };
    let word = |(s, note): (f64, &str)| format!("{s:.2}×{note}");
    let private = speedup("counter per thread")?;
    let (shared, pair) = (
        speedup("one shared counter")?,
        speedup("two counters, one cache line")?,
    );
    let figures = format!(
        "Two threads do {} the work of one with a counter each on its own cache line, {} on one \
         shared atomic and {} with two counters on one cache line",
        word(private),
        word(shared),
        word(pair)
    );
    let took_turns = [shared.1, pair.1].contains(&WAITED);
    Some(if private.0 < contended_below(2) || took_turns {
        format!(
            "{figures}: the threads did not all get a CPU of their own at the same time (the \
             machine is busy), so the sharing did not show; run it again on a quiet machine \
             (docs/threads.md)."
        )
    } else {
        format!(
            "{figures}: threads that write the same cache line wait for each other, even when \
             they share no variable (docs/threads.md)."
        )
    })
}
