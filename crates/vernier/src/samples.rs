//! Raw samples: every measurement the engine took, calibration and warm-up included (flagged),
//! never dropped. Integers only: iteration counts and nanoseconds. Per-iteration figures become
//! floating point in `analyze`, not here.

use serde::{Deserialize, Serialize};

/// A Python worker's garbage collections per sample (the protocol's `gc.collections=`), kept
/// as a counter column of this name: stored with the samples and shown when not zero.
pub const GC_COLLECTIONS: &str = "gc.collections";

/// Why a sample was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Taken while doubling the iteration count.
    Calibration,
    /// Taken before the detected steady state; excluded from the estimates.
    Warmup,
    /// Part of the steady state; the estimates are computed on these.
    Measure,
}

/// One timed region: `iters` iterations that took `ns` nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub iters: u64,
    pub ns: u64,
    /// When the sample ended, in ns since the benchmark started (runner's clock).
    pub t_ns: u64,
    /// Which worker process took it (0 in-process).
    pub process: u32,
    /// Which round of the suite (benchmarks are visited in several rounds, spread in time, so
    /// slow changes of the machine's state show as a spread between rounds).
    pub round: u32,
    pub phase: Phase,
}

impl Sample {
    /// Per-iteration time of this sample, in ns.
    pub fn per_iter_ns(&self) -> f64 {
        self.ns as f64 / self.iters.max(1) as f64
    }
}

/// A named column of counter deltas, one value per sample (aligned with `Samples::samples`).
/// A sample in which the event was not counted (its group never ran, a read failed, or the
/// batch did not carry the event) has `None`: absent, never zero.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterColumn {
    pub event: String,
    pub values: Vec<Option<u64>>,
    /// Per sample, whether the value was scaled for PMU multiplexing (an estimate). Empty when
    /// no value of the column was scaled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaled: Vec<bool>,
}

impl CounterColumn {
    /// A column of exact values.
    pub fn exact(event: impl Into<String>, values: Vec<u64>) -> CounterColumn {
        CounterColumn {
            event: event.into(),
            values: values.into_iter().map(Some).collect(),
            scaled: Vec::new(),
        }
    }

    /// Whether the value of sample `i` was scaled.
    pub fn is_scaled(&self, i: usize) -> bool {
        self.scaled.get(i).copied().unwrap_or(false)
    }
}

/// Every sample of one benchmark, in the order they were taken.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    pub samples: Vec<Sample>,
    /// Counter deltas per sample; empty when no counters were read.
    pub counters: Vec<CounterColumn>,
    /// The core's speed: elapsed ns of the reference probe (a chain of `probe_adds` dependent
    /// additions) run just before a batch, in the same process, outside every timed region,
    /// on the batch's first sample (`None` on the others, and on a batch that was not probed).
    /// Aligned with `samples`; empty when no batch was probed.
    pub probe_ns: Vec<Option<u64>>,
    /// Additions in the reference probe's chain (0 when nothing was probed).
    pub probe_adds: u64,
    /// The probe's throughput half: elapsed ns of as many additions in eight independent
    /// chains, beside `probe_ns` (`None` where that batch's worker did not run it). Empty
    /// when no batch had it.
    pub wide_ns: Vec<Option<u64>>,
    /// A threaded benchmark's own time of each thread: `thread_ns[k][i]`, the ns from sample
    /// `i`'s release to thread `k`'s finish (`None` where a batch did not carry it). Empty for
    /// a benchmark of one thread without the pool.
    pub thread_ns: Vec<Vec<Option<u64>>>,
    /// Per thread, its time on a CPU over sample `i`'s window (`thread_cpu_ns[k][i]`, ns; see
    /// `measure::Batch`); `None` where a batch did not carry it; empty when none did.
    pub thread_cpu_ns: Vec<Vec<Option<u64>>>,
    /// Per thread, its run-queue wait (runnable, waiting for a CPU) over the same window;
    /// `None` where unknown; empty when never known.
    pub thread_wait_ns: Vec<Vec<Option<u64>>>,
    /// The CPUs the process running a threaded benchmark could use (its affinity mask).
    pub cpus: Option<u32>,
}

/// Append a batch's per-thread columns `cols` (values of its last `count` samples) to
/// `into`, the other columns' place in the batch left without a value; nothing for an empty
/// batch column set (a column set absent until now stays empty).
fn push_thread_cols(into: &mut Vec<Vec<Option<u64>>>, len: usize, count: usize, cols: &[Vec<u64>]) {
    if cols.is_empty() {
        for t in into.iter_mut() {
            t.resize(len, None);
        }
        return;
    }
    let start = len.saturating_sub(count);
    if into.len() < cols.len() {
        into.resize(cols.len(), Vec::new());
    }
    for (k, t) in into.iter_mut().enumerate() {
        t.resize(start, None);
        let col = cols.get(k).map_or(&[][..], |c| &c[..c.len().min(count)]);
        t.extend(col.iter().map(|&v| Some(v)));
        t.resize(len, None);
    }
}

/// Append `other`'s per-thread columns after `before` samples of `into` (now `len` long).
fn extend_thread_cols(
    into: &mut Vec<Vec<Option<u64>>>,
    before: usize,
    len: usize,
    other: &[Vec<Option<u64>>],
) {
    if other.is_empty() {
        for t in into.iter_mut() {
            t.resize(len, None);
        }
        return;
    }
    if into.len() < other.len() {
        into.resize(other.len(), Vec::new());
    }
    for (k, t) in into.iter_mut().enumerate() {
        t.resize(before, None);
        if let Some(o) = other.get(k) {
            t.extend_from_slice(o);
        }
        t.resize(len, None);
    }
}

impl Samples {
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Append a batch of samples (and their counters, if any).
    pub fn push_batch(&mut self, batch: &[Sample], counters: &[CounterColumn]) {
        let before = self.samples.len();
        self.samples.extend_from_slice(batch);
        for col in counters {
            let slot = match self.counters.iter().position(|c| c.event == col.event) {
                Some(i) => i,
                None => {
                    self.counters.push(CounterColumn {
                        event: col.event.clone(),
                        values: vec![None; before],
                        scaled: Vec::new(),
                    });
                    self.counters.len() - 1
                }
            };
            let c = &mut self.counters[slot];
            let start = c.values.len();
            let n = col.values.len().min(batch.len());
            c.values.extend_from_slice(&col.values[..n]);
            if !col.scaled.is_empty() || !c.scaled.is_empty() {
                c.scaled.resize(start, false);
                c.scaled.extend((0..n).map(|i| col.is_scaled(i)));
            }
        }
        if !self.probe_ns.is_empty() {
            self.probe_ns.resize(self.samples.len(), None);
        }
        if !self.wide_ns.is_empty() {
            self.wide_ns.resize(self.samples.len(), None);
        }
        for t in self
            .thread_ns
            .iter_mut()
            .chain(&mut self.thread_cpu_ns)
            .chain(&mut self.thread_wait_ns)
        {
            t.resize(self.samples.len(), None);
        }
        // Columns absent from this batch stay aligned, with no value (never a zero).
        for c in &mut self.counters {
            c.values.resize(self.samples.len(), None);
            if !c.scaled.is_empty() {
                c.scaled.resize(self.samples.len(), false);
            }
        }
    }

    /// Record the probe taken before the last `count` samples (one batch): `probe_ns` of a
    /// chain of `adds` additions, on the batch's first sample. Nothing is stored for a batch
    /// that was not probed.
    pub fn set_probe(
        &mut self,
        count: usize,
        adds: u64,
        probe_ns: Option<u64>,
        wide_ns: Option<u64>,
    ) {
        let (Some(p), true) = (probe_ns, count > 0) else {
            return;
        };
        let len = self.samples.len();
        self.probe_ns.resize(len, None);
        self.probe_ns[len.saturating_sub(count)] = Some(p);
        self.probe_adds = adds;
        if let Some(w) = wide_ns {
            self.wide_ns.resize(len, None);
            self.wide_ns[len.saturating_sub(count)] = Some(w);
        }
    }

    /// Record the threads' figures of the last `count` samples (one batch): `[own, cpu, wait]`
    /// columns per thread (`thread_ns`, `thread_cpu_ns`, `thread_wait_ns`; the last two may be
    /// empty). Nothing is stored for a batch without threads.
    pub fn push_threads(&mut self, count: usize, cols: [&[Vec<u64>]; 3], cpus: Option<u32>) {
        let [own, cpu, wait] = cols;
        if own.is_empty() {
            return;
        }
        let len = self.samples.len();
        push_thread_cols(&mut self.thread_ns, len, count, own);
        push_thread_cols(&mut self.thread_cpu_ns, len, count, cpu);
        push_thread_cols(&mut self.thread_wait_ns, len, count, wait);
        self.cpus = cpus.or(self.cpus);
    }

    /// Append another set of samples (another process or round), probes included.
    pub fn extend(&mut self, other: &Samples) {
        let before = self.samples.len();
        self.push_batch(&other.samples, &other.counters);
        if !other.thread_ns.is_empty() {
            let len = self.samples.len();
            extend_thread_cols(&mut self.thread_ns, before, len, &other.thread_ns);
            extend_thread_cols(&mut self.thread_cpu_ns, before, len, &other.thread_cpu_ns);
            extend_thread_cols(&mut self.thread_wait_ns, before, len, &other.thread_wait_ns);
            self.cpus = other.cpus.or(self.cpus);
        }
        if !other.probe_ns.is_empty() {
            self.probe_ns.resize(before, None);
            self.probe_ns.extend_from_slice(&other.probe_ns);
            self.probe_ns.resize(self.samples.len(), None);
            self.probe_adds = other.probe_adds;
        }
        if !other.wide_ns.is_empty() {
            self.wide_ns.resize(before, None);
            self.wide_ns.extend_from_slice(&other.wide_ns);
            self.wide_ns.resize(self.samples.len(), None);
        }
    }

    /// The effective cycle time around sample `i`, in ns per dependent addition of the probe
    /// (the timer's cost `timer_overhead_ns` taken off the chain's time), if it was probed.
    pub fn probe_cycle_ns(&self, i: usize, timer_overhead_ns: f64) -> Option<f64> {
        self.per_addition(&self.probe_ns, i, timer_overhead_ns)
    }

    /// The time per addition of the probe's throughput half around sample `i` (ns, the
    /// timer's cost taken off), if it was probed with it.
    pub fn probe_wide_ns(&self, i: usize, timer_overhead_ns: f64) -> Option<f64> {
        self.per_addition(&self.wide_ns, i, timer_overhead_ns)
    }

    /// A probe column's time at sample `i` per addition, the timer's cost taken off.
    fn per_addition(
        &self,
        column: &[Option<u64>],
        i: usize,
        timer_overhead_ns: f64,
    ) -> Option<f64> {
        let p = (*column.get(i)?)? as f64;
        if self.probe_adds == 0 {
            return None;
        }
        let net = p - timer_overhead_ns.max(0.0);
        (net > 0.0).then(|| net / self.probe_adds as f64)
    }

    /// The column of `event`, if any sample carried it.
    pub fn counter(&self, event: &str) -> Option<&CounterColumn> {
        self.counters.iter().find(|c| c.event == event)
    }

    /// Mark samples with index < `cut` among the non-calibration ones as warm-up.
    pub fn set_warmup_cut(&mut self, first_steady: usize) {
        for (i, s) in self.samples.iter_mut().enumerate() {
            if s.phase != Phase::Calibration {
                s.phase = if i < first_steady {
                    Phase::Warmup
                } else {
                    Phase::Measure
                };
            }
        }
    }
}
