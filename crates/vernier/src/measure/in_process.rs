//! The engine's targets in this process: a [`Routine`] sampled with this process's timer (and
//! counters), the core-speed probe run before a batch when the engine asks for it, and a panic
//! in the benchmark turned into an error.

use crate::counters::{self, CounterSample, CounterSet};
use crate::measure::{Batch, Target};
use crate::timer::Timer;
use crate::workload::routine::{Meter, Routine};
use std::panic::{self, AssertUnwindSafe};

/// The in-process target: samples a routine with this process's timer. A panic in the
/// benchmark becomes an error (the samples before it are kept by the engine).
pub struct InProcess<'a> {
    pub routine: &'a mut dyn Routine,
    pub timer: &'a Timer,
}

impl Target for InProcess<'_> {
    fn prepare(&mut self) -> Result<(), String> {
        let routine = &mut *self.routine;
        panic::catch_unwind(AssertUnwindSafe(|| routine.prepare()))
            .map_err(|p| format!("benchmark set-up panicked: {}", panic_message(&p)))
    }

    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        probe_before(self.timer, out);
        sample_routine(&mut *self.routine, self.timer, None, iters, count, out)
    }
}

/// The in-process target with counters: like [`InProcess`], reading `counters` (when `Some`)
/// around each sample's timed region.
pub struct Metered<'a> {
    pub routine: &'a mut dyn Routine,
    pub timer: &'a Timer,
    pub counters: Option<&'a mut CounterSet>,
}

impl Target for Metered<'_> {
    fn prepare(&mut self) -> Result<(), String> {
        InProcess {
            routine: &mut *self.routine,
            timer: self.timer,
        }
        .prepare()
    }

    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        probe_before(self.timer, out);
        let counters = self.counters.as_deref_mut();
        sample_routine(&mut *self.routine, self.timer, counters, iters, count, out)
    }
}

/// Run the core-speed probe the engine asked for (`out.probe_adds`), before the batch and
/// outside every timed region, on this thread.
fn probe_before(timer: &Timer, out: &mut Batch) {
    if out.probe_adds > 0 {
        out.probe_ns = Some(crate::workload::kernels::speed_probe(timer, out.probe_adds));
        out.wide_ns = Some(crate::workload::kernels::wide_probe(timer, out.probe_adds));
    }
}

/// `count` samples of `iters` iterations of `routine` into `out`: times, and with `counters`
/// one counter column per event read (computed after the batch, outside every region). A
/// panic becomes an error; the samples before it are kept.
pub fn sample_routine(
    routine: &mut dyn Routine,
    timer: &Timer,
    mut counters: Option<&mut CounterSet>,
    iters: u64,
    count: usize,
    out: &mut Batch,
) -> Result<(), String> {
    let first = out.ns.len();
    let mut deltas: Vec<CounterSample> = Vec::new();
    if counters.is_some() {
        deltas.reserve(count);
    }
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        for _ in 0..count {
            let mut meter = Meter::with_counters(timer, counters.as_deref_mut());
            let ticks = routine.sample_metered(&mut meter, iters);
            out.ns.push(timer.ticks_to_ns(ticks));
            push_threads(out, &*routine, timer);
            if let Some(c) = counters.as_deref() {
                deltas.push(c.sample());
            }
        }
    }))
    .map_err(|p| format!("benchmark panicked: {}", panic_message(&p)));
    if let Some(c) = counters.as_deref() {
        if first == 0 && !deltas.is_empty() {
            deltas.truncate(out.ns.len());
            out.counters = counters::to_columns(c.events(), &deltas);
        }
    }
    r
}

/// A threaded routine's last sample: each thread's own time, on-CPU time and run-queue wait
/// into its columns (the waits only while every sample so far had them).
fn push_threads(out: &mut Batch, r: &dyn Routine, timer: &Timer) {
    let Some(t) = r.thread_times() else {
        return;
    };
    let first = out.thread_ns.first().map_or(0, Vec::len);
    let push = |cols: &mut Vec<Vec<u64>>, xs: &mut dyn Iterator<Item = u64>| {
        for (k, x) in xs.enumerate() {
            if cols.len() <= k {
                cols.push(Vec::new());
            }
            cols[k].push(x);
        }
    };
    push(
        &mut out.thread_ns,
        &mut t.ticks.iter().map(|&x| timer.ticks_to_ns(x)),
    );
    push(&mut out.thread_cpu_ns, &mut t.cpu_ns.iter().copied());
    if t.wait_ns.is_empty() || out.thread_wait_ns.first().map_or(0, Vec::len) != first {
        out.thread_wait_ns.clear();
    } else {
        push(&mut out.thread_wait_ns, &mut t.wait_ns.iter().copied());
    }
    out.cpus = r.cpus().or(out.cpus);
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic)".into())
}
