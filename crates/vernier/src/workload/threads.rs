//! Threaded benchmarks: a body run by each of T threads, released together for each sample.
//!
//! The threads are a pool started once per benchmark (on its first sample) and kept: thread 0
//! is the thread that measures (it times the release and runs its share), threads 1..T−1 wait
//! for the release spinning (then parked after [`SPIN_BEFORE_PARK_NS`] without one, so an idle
//! pool costs no CPU). A sample is one release: thread 0 reads the clock, bumps the release
//! counter, runs its iterations; each thread reads the same clock when its own iterations end.
//! The sample's time is from the release to the last thread's finish; each thread's own time
//! is kept too ([`Routine::thread_times`]), for the imbalance between them.
//!
//! Each thread also reads its own clocks ([`thread_clock`](super::thread_clock): time on a
//! CPU, run-queue wait) outside the timed region: after its finish in every round (its
//! reading before the next one), and thread 0 just before each release. When a pool thread's
//! reading is older than [`ARM_LEAD_NS`] at a timed release (the first sample of a batch, a
//! thread that waited long for the others or for a CPU), thread 0 first asks the pool to arm:
//! each thread taking part reads its clocks again, says so and yields. The window of each
//! thread's figures is thus its sample plus at most about that lead.
//!
//! When the run is pinned ([`set_pinned`], the protocol's `pin=1`), thread k is pinned to the
//! k-th CPU of the process's affinity mask (wrapping when there are more threads than CPUs).
//! A body that panics in any thread ends the pool: every thread finishes its sample and is
//! joined before the panic reaches the measuring code, so nothing is left running.

use super::routine::{Routine, ThreadTimes};
use super::thread_clock::{Reading, ThreadClock};
use crate::timer::Timer;
use std::hint::black_box;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a waiting pool thread spins for the next release before parking: longer than a
/// runner's turn between two batches of the same benchmark, short enough that a pool left
/// behind by another benchmark stops using a CPU almost at once.
#[doc(hidden)]
pub const SPIN_BEFORE_PARK_NS: u64 = 2_000_000;
/// Spins between two `yield`s while waiting: a waiting thread that shares its CPU with a
/// working one (more threads than CPUs) gives it the CPU instead of burning its slice.
#[doc(hidden)]
pub const SPINS_PER_YIELD: u32 = 256;
/// The longest time between a pool thread's clock reading and the release: past it the pool
/// arms (each thread reads its clocks again) first, so that a thread's figures stay those of
/// its sample. Longer than the gap between two samples of a batch with the threads on their
/// CPUs, so that arming costs nothing then.
#[doc(hidden)]
pub const ARM_LEAD_NS: u64 = 20_000;
/// How many times a release arms the pool at most before it goes on with the readings it has
/// (each arming waits for every thread to get a CPU: on a loaded machine, time slices).
#[doc(hidden)]
pub const MAX_ARMS: u32 = 2;
/// A run-queue wait not known (`Shared::wait`).
const UNKNOWN: u64 = u64::MAX;

/// A value alone on its cache line (64 bytes, aligned): per-thread data in a threaded benchmark
/// that no other thread's writes share a line with (docs/threads.md).
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct CacheLine<T>(pub T);

static PINNED: AtomicBool = AtomicBool::new(false);

/// Pin the threads of pools started from now on, one per CPU of the process's affinity mask
/// (`pin=1` in the protocol: the runner pinned the process with `--cpu`).
#[doc(hidden)]
pub fn set_pinned(on: bool) {
    PINNED.store(on, Ordering::Relaxed);
}

/// The CPUs this process may run on (its affinity mask when first asked, before a pinned
/// pool narrowed the measuring thread's own), in order.
pub fn allowed_cpus() -> Vec<usize> {
    static CPUS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    CPUS.get_or_init(read_allowed_cpus).clone()
}

fn read_allowed_cpus() -> Vec<usize> {
    crate::os::cpu::affinity().unwrap_or_else(|| {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        (0..n).collect()
    })
}

/// Pin the calling thread to `cpu` (where the system can: not on macOS).
fn pin_to(cpu: usize) {
    let _ = crate::os::cpu::pin_thread(cpu);
}

/// The default thread counts: the powers of two below the CPUs this process may use, and
/// that count itself (1, 2, 4, 6 on six CPUs).
pub fn default_counts() -> Vec<usize> {
    counts_up_to(allowed_cpus().len().max(1))
}

/// Powers of two below `cpus`, then `cpus`.
pub fn counts_up_to(cpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |&t| t.checked_mul(2))
        .take_while(|&t| t < cpus)
        .collect();
    v.push(cpus.max(1));
    v
}

/// Wait until `ready` holds: spin, yielding now and then; after `park_after` (if any) without
/// it, park (`flag` set while parked, so the releaser knows to unpark).
fn wait_for(ready: &dyn Fn() -> bool, park_after: Option<(&AtomicBool, Duration)>) {
    let since = Instant::now();
    let mut spins = 0u32;
    while !ready() {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(SPINS_PER_YIELD) {
            std::thread::yield_now();
            if let Some((flag, after)) = park_after {
                if since.elapsed() > after {
                    flag.store(true, Ordering::SeqCst);
                    if !ready() {
                        std::thread::park_timeout(Duration::from_millis(50));
                    }
                    flag.store(false, Ordering::SeqCst);
                }
            }
        }
    }
}

/// Bits of a release or arming value that hold the thread count taking part (the rest count
/// the rounds): a thread that wakes late reads who takes part in the round it sees, not in a
/// later one being prepared.
const PART_BITS: u32 = 16;

/// Signal a new round (or arming) of `threads` threads on `counter` (thread 0 alone writes it).
fn signal(counter: &AtomicU64, threads: usize) {
    let next = ((counter.load(Ordering::Relaxed) >> PART_BITS) + 1) << PART_BITS;
    counter.store(next | threads as u64, Ordering::Release);
}

/// The thread count taking part in the round (or arming) signalled by `value`.
fn taking_part(value: u64) -> usize {
    (value & ((1 << PART_BITS) - 1)) as usize
}

/// What the threads of a pool share.
struct Shared {
    timer: Timer,
    /// Bumped by thread 0 to release a sample (or, with `iters` 0, an untimed wake-up round).
    release: AtomicU64,
    /// Bumped by thread 0 before a timed release: each taking part reads its clocks and
    /// counts itself in `armed`.
    arm: AtomicU64,
    armed: AtomicUsize,
    /// Each thread's monotonic clock when it last armed.
    armed_at: Vec<AtomicU64>,
    iters: AtomicU64,
    /// Threads taking part in the current round (the benchmark's T).
    active: AtomicUsize,
    /// Threads 1..active that have finished the current round.
    done: AtomicUsize,
    /// Each thread's clock reading at its finish.
    finish: Vec<AtomicU64>,
    /// Each thread's own clocks after its last round (`UNKNOWN` wait: the kernel does not say).
    cpu: Vec<AtomicU64>,
    wait: Vec<AtomicU64>,
    parked: Vec<AtomicBool>,
    stop: AtomicBool,
    /// The first panic: thread and message.
    panic: Mutex<Option<(usize, String)>>,
}

impl Shared {
    fn store_reading(&self, k: usize, r: Reading) {
        self.cpu[k].store(r.cpu_ns, Ordering::Relaxed);
        self.wait[k].store(r.wait_ns.unwrap_or(UNKNOWN), Ordering::Relaxed);
    }

    /// Thread `k`'s reading after its last round (read after that round's `done`).
    fn reading(&self, k: usize) -> Reading {
        let w = self.wait[k].load(Ordering::Relaxed);
        Reading {
            cpu_ns: self.cpu[k].load(Ordering::Relaxed),
            wait_ns: (w != UNKNOWN).then_some(w),
        }
    }

    fn record_panic(&self, k: usize, p: Box<dyn std::any::Any + Send>) {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string panic)".into());
        let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert((k, msg));
    }
}

/// The per-thread measured loop: `iters` calls of `f(thread)`, the body and its result through
/// the barrier, then this thread's clock reading.
#[inline(never)]
#[doc(hidden)]
pub fn vernier_measured_loop_threads<F: Fn(usize) -> R, R>(
    f: &F,
    thread: usize,
    iters: u64,
    timer: &Timer,
) -> u64 {
    for _ in 0..iters {
        let g = black_box(f);
        black_box(g(black_box(thread)));
    }
    timer.stop()
}

/// Threads 1..size−1 of a pool, started once and kept until dropped.
struct Pool<F> {
    shared: Arc<Shared>,
    body: Arc<F>,
    handles: Vec<JoinHandle<()>>,
    pinned: bool,
    /// Thread 0's clocks (opened by the thread that started the pool and measures).
    clock0: ThreadClock,
}

impl<F: Fn(usize) -> R + Send + Sync + 'static, R: 'static> Pool<F> {
    fn start(body: Arc<F>, size: usize, timer: Timer) -> Result<Pool<F>, String> {
        if size >= 1 << PART_BITS {
            return Err(format!(
                "{size} threads: at most {} threads per benchmark",
                (1 << PART_BITS) - 1
            ));
        }
        let pinned = PINNED.load(Ordering::Relaxed);
        let cpus = allowed_cpus();
        let shared = Arc::new(Shared {
            timer,
            release: AtomicU64::new(0),
            arm: AtomicU64::new(0),
            armed: AtomicUsize::new(0),
            armed_at: (0..size).map(|_| AtomicU64::new(0)).collect(),
            iters: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            finish: (0..size).map(|_| AtomicU64::new(0)).collect(),
            cpu: (0..size).map(|_| AtomicU64::new(0)).collect(),
            wait: (0..size).map(|_| AtomicU64::new(UNKNOWN)).collect(),
            parked: (0..size).map(|_| AtomicBool::new(false)).collect(),
            stop: AtomicBool::new(false),
            panic: Mutex::new(None),
        });
        if pinned && !cpus.is_empty() {
            pin_to(cpus[0]);
        }
        let mut pool = Pool {
            shared,
            body,
            handles: Vec::new(),
            pinned,
            clock0: ThreadClock::open(),
        };
        for k in 1..size {
            let (sh, body) = (Arc::clone(&pool.shared), Arc::clone(&pool.body));
            let cpu = (pinned && !cpus.is_empty()).then(|| cpus[k % cpus.len()]);
            let h = std::thread::Builder::new()
                .name(format!("vernier-thread-{k}"))
                .spawn(move || serve(k, &sh, &*body, cpu))
                .map_err(|e| format!("cannot start thread {k} of {size}: {e}"))?;
            pool.handles.push(h);
        }
        Ok(pool)
    }

    /// Release `threads` threads for `iters` iterations each; thread 0 is this one. Returns
    /// the release's clock reading and each thread's clock readings before it (taken when the
    /// pool armed, for a timed round); each thread's finish is in `shared.finish`, its readings
    /// after it in `shared.cpu`/`wait`.
    fn round(&self, threads: usize, iters: u64) -> Result<(u64, Vec<Reading>), String> {
        let sh = &*self.shared;
        sh.done.store(0, Ordering::Relaxed);
        sh.iters.store(iters, Ordering::Relaxed);
        sh.active.store(threads, Ordering::Relaxed);
        let others = threads - 1;
        let mut arms = 0;
        let (t0, before) = loop {
            let mut before: Vec<Reading> = (0..threads).map(|k| sh.reading(k)).collect();
            before[0] = self.clock0.read_before();
            let oldest = (1..threads)
                .map(|k| sh.armed_at[k].load(Ordering::Relaxed))
                .min();
            let t0 = sh.timer.start();
            let late = oldest
                .is_some_and(|a| crate::timer::monotonic_ns().saturating_sub(a) > ARM_LEAD_NS);
            if iters == 0 || !late || arms >= MAX_ARMS {
                break (t0, before);
            }
            sh.armed.store(0, Ordering::Relaxed);
            signal(&sh.arm, threads);
            self.unpark_parked(threads);
            wait_for(&|| sh.armed.load(Ordering::Acquire) >= others, None);
            arms += 1;
        };
        signal(&sh.release, threads);
        self.unpark_parked(threads);
        let own = panic::catch_unwind(AssertUnwindSafe(|| {
            vernier_measured_loop_threads(&*self.body, 0, iters, &sh.timer)
        }));
        match own {
            Ok(t) => sh.finish[0].store(t, Ordering::Relaxed),
            Err(p) => sh.record_panic(0, p),
        }
        sh.store_reading(0, self.clock0.read_after());
        wait_for(&|| sh.done.load(Ordering::Acquire) >= others, None);
        let failed = sh.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        match failed {
            Some((k, msg)) => Err(format!("thread {k} of {threads}: {msg}")),
            None => Ok((t0, before)),
        }
    }

    /// Wake the parked threads among the first `threads` (they see the new round once up).
    fn unpark_parked(&self, threads: usize) {
        let sh = &*self.shared;
        for (k, h) in self
            .handles
            .iter()
            .enumerate()
            .take(threads.saturating_sub(1))
        {
            if sh.parked[k + 1].load(Ordering::SeqCst) {
                h.thread().unpark();
            }
        }
    }

    /// Whether a thread this round needs was parked (an untimed round wakes them first).
    fn any_parked(&self, threads: usize) -> bool {
        self.shared.parked[1..threads]
            .iter()
            .any(|p| p.load(Ordering::SeqCst))
    }
}

/// A pool thread: wait for each release, run its share when it takes part, report.
fn serve<F: Fn(usize) -> R, R>(k: usize, sh: &Shared, body: &F, cpu: Option<usize>) {
    if let Some(c) = cpu {
        pin_to(c);
    }
    let clock = ThreadClock::open();
    let park = Duration::from_nanos(SPIN_BEFORE_PARK_NS);
    let (mut seen, mut seen_arm) = (0u64, 0u64);
    loop {
        wait_for(
            &|| {
                sh.release.load(Ordering::Acquire) != seen
                    || sh.arm.load(Ordering::Acquire) != seen_arm
                    || sh.stop.load(Ordering::Acquire)
            },
            Some((&sh.parked[k], park)),
        );
        if sh.stop.load(Ordering::Acquire) {
            return;
        }
        let arm = sh.arm.load(Ordering::Acquire);
        if arm != seen_arm {
            // A timed release comes once every thread taking part has read its clocks (so no
            // release can have come before this thread's reading).
            seen_arm = arm;
            if k < taking_part(arm) {
                sh.store_reading(k, clock.read_before());
                sh.armed_at[k].store(crate::timer::monotonic_ns(), Ordering::Relaxed);
                sh.armed.fetch_add(1, Ordering::Release);
                // Hand the CPU to the releasing thread at once if it waits for this one (so
                // the moment between this reading and the release stays short).
                std::thread::yield_now();
            }
            continue;
        }
        seen = sh.release.load(Ordering::Acquire);
        if k >= taking_part(seen) {
            continue;
        }
        let iters = sh.iters.load(Ordering::Relaxed);
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            vernier_measured_loop_threads(body, k, iters, &sh.timer)
        }));
        match r {
            Ok(t) => sh.finish[k].store(t, Ordering::Relaxed),
            Err(p) => {
                sh.finish[k].store(sh.timer.stop(), Ordering::Relaxed);
                sh.record_panic(k, p);
            }
        }
        sh.store_reading(k, clock.read_after());
        sh.armed_at[k].store(crate::timer::monotonic_ns(), Ordering::Relaxed);
        sh.done.fetch_add(1, Ordering::Release);
    }
}

impl<F> Drop for Pool<F> {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        for h in &self.handles {
            h.thread().unpark();
        }
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// A benchmark's pool, shared by its thread counts (sized for the largest).
pub(crate) struct PoolSlot<F> {
    body: Arc<F>,
    size: usize,
    pool: Option<Pool<F>>,
}

/// One thread count of a threaded benchmark, as a [`Routine`].
pub(crate) struct Threaded<F> {
    pub(crate) slot: Arc<Mutex<PoolSlot<F>>>,
    pub(crate) threads: usize,
    /// The last sample's thread times.
    last: ThreadTimes,
    cpus: u32,
}

/// The routines of `body` at each of `counts` threads, sharing one pool.
pub(crate) fn routines<F, R>(body: F, counts: &[usize]) -> Vec<(usize, Threaded<F>)>
where
    F: Fn(usize) -> R + Send + Sync + 'static,
    R: 'static,
{
    let slot = Arc::new(Mutex::new(PoolSlot {
        body: Arc::new(body),
        size: counts.iter().copied().max().unwrap_or(1),
        pool: None,
    }));
    counts
        .iter()
        .map(|&t| {
            (
                t,
                Threaded {
                    slot: Arc::clone(&slot),
                    threads: t,
                    last: ThreadTimes::default(),
                    cpus: 0,
                },
            )
        })
        .collect()
}

impl<F: Fn(usize) -> R + Send + Sync + 'static, R: 'static> Routine for Threaded<F> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        let pinned = PINNED.load(Ordering::Relaxed);
        if slot.pool.as_ref().is_some_and(|p| p.pinned != pinned) {
            slot.pool = None;
        }
        if self.cpus == 0 {
            self.cpus = allowed_cpus().len() as u32;
        }
        let fresh = slot.pool.is_none();
        if fresh {
            match Pool::start(Arc::clone(&slot.body), slot.size, *timer) {
                Ok(p) => slot.pool = Some(p),
                Err(e) => panic!("{e}"),
            }
        }
        let t = self.threads;
        let outcome = {
            let pool = slot.pool.as_ref().expect("started above");
            // Threads parked since the last sample are woken by an untimed round first, so
            // that the timed one releases threads that are all waiting on the CPU (and a new
            // pool's threads, which may not have run yet).
            let woken = if fresh || pool.any_parked(t) {
                pool.round(t, 0).map(|_| ())
            } else {
                Ok(())
            };
            woken
                .and_then(|()| pool.round(t, iters))
                .map(|(t0, before)| {
                    let sh = &pool.shared;
                    let last = &mut self.last;
                    last.ticks.clear();
                    last.cpu_ns.clear();
                    last.wait_ns.clear();
                    let mut waits_known = true;
                    for (k, b) in before.iter().enumerate() {
                        last.ticks
                            .push(sh.finish[k].load(Ordering::Relaxed).wrapping_sub(t0));
                        let (cpu, wait) = sh.reading(k).since(b);
                        last.cpu_ns.push(cpu);
                        waits_known &= wait.is_some();
                        last.wait_ns.push(wait.unwrap_or(0));
                    }
                    if !waits_known {
                        last.wait_ns.clear();
                    }
                })
        };
        match outcome {
            Ok(()) => self.last.ticks.iter().copied().max().unwrap_or(0),
            Err(msg) => {
                // Every thread is joined before the failure goes on: none is left behind.
                slot.pool = None;
                drop(slot);
                panic::resume_unwind(Box::new(msg))
            }
        }
    }

    fn prepare(&mut self) {}

    fn thread_times(&self) -> Option<&ThreadTimes> {
        Some(&self.last)
    }

    fn threads(&self) -> Option<usize> {
        Some(self.threads)
    }

    fn cpus(&self) -> Option<u32> {
        (self.cpus > 0).then_some(self.cpus)
    }

    fn loop_addr(&self) -> usize {
        let f: fn(&F, usize, u64, &Timer) -> u64 = vernier_measured_loop_threads::<F, R>;
        f as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_counts_are_powers_of_two_and_the_cpus() {
        assert_eq!(counts_up_to(1), vec![1]);
        assert_eq!(counts_up_to(2), vec![1, 2]);
        assert_eq!(counts_up_to(6), vec![1, 2, 4, 6]);
        assert_eq!(counts_up_to(8), vec![1, 2, 4, 8]);
    }

    #[test]
    fn every_thread_runs_its_share_and_a_panic_leaves_no_thread() {
        use std::sync::atomic::AtomicU64;
        let counts: Arc<Vec<AtomicU64>> = Arc::new((0..3).map(|_| AtomicU64::new(0)).collect());
        let c = Arc::clone(&counts);
        let timer = Timer::detect();
        let mut rs = routines(
            move |k: usize| {
                c[k].fetch_add(1, Ordering::Relaxed);
            },
            &[1, 3],
        );
        let (_, three) = &mut rs[1];
        three.sample(&timer, 10);
        three.sample(&timer, 10);
        let got: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        assert_eq!(got, vec![20, 20, 20]);
        let times = three.thread_times().unwrap();
        assert_eq!(times.ticks.len(), 3);
        assert_eq!(times.cpu_ns.len(), 3);
        // Run-queue waits: one per thread where the kernel keeps them, none elsewhere.
        let known = std::path::Path::new("/proc/thread-self/schedstat").exists();
        assert_eq!(times.wait_ns.len(), if known { 3 } else { 0 });
        // A panicking thread: the sample panics with its message, the pool is gone.
        let mut bad = routines(
            |k: usize| {
                if k == 1 {
                    panic!("thread one fails");
                }
            },
            &[2],
        );
        let (_, two) = &mut bad[0];
        let err = panic::catch_unwind(AssertUnwindSafe(|| two.sample(&timer, 5))).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(msg, "thread 1 of 2: thread one fails");
        assert!(two.slot.lock().unwrap().pool.is_none());
    }
}
