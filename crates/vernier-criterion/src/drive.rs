//! The three drivers of the running passes: the runner's protocol (a worker under
//! `vernier run`), the standalone suite (`cargo bench`) and the test mode
//! (`cargo test --benches`).

use crate::session::{panic_message, run_passes, Driver, Listing};
use std::cell::Cell;
use std::io::{BufReader, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use vernier::measure::Batch;
use vernier::protocol::serve::{open_fds, serve_until, Sampler, Worker};
use vernier::protocol::{samples_line, BenchRef, Hello, RunRequest};
use vernier::timer::Timer;
use vernier::workload::routine::Routine;

// ---------------------------------------------------------------------------------------
// Worker: the runner's requests, answered while the benchmark they name is entered.

/// Serve the runner over `fds` (`VERNIER_FDS`) until it says `quit`.
pub fn worker(groups: &[fn()], listing: &Listing, fds: &str) -> ExitCode {
    let (input, output) = match open_fds(fds) {
        Ok(io) => io,
        Err(e) => {
            eprintln!("vernier worker: {e}");
            return ExitCode::FAILURE;
        }
    };
    let failed = Rc::new(Cell::new(None::<String>));
    let driver = ProtocolDriver {
        input,
        output,
        sampler: Sampler::new(),
        listing: listing.clone(),
        failed: vec![None; listing.listed.len()],
        pending: None,
        broken: failed.clone(),
    };
    run_passes(groups, listing, Box::new(driver));
    match failed.take() {
        Some(e) => {
            eprintln!("vernier worker: {e}");
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    }
}

struct ProtocolDriver {
    input: BufReader<std::fs::File>,
    output: std::fs::File,
    sampler: Sampler,
    listing: Listing,
    /// Why each benchmark failed (its requests are then answered with the reason).
    failed: Vec<Option<String>>,
    /// A `run` request for a benchmark that was not entered when it came.
    pending: Option<RunRequest>,
    /// The link to the runner broke (said once the passes end).
    broken: Rc<Cell<Option<String>>>,
}

/// The worker as `serve_until` sees it while benchmark `current` (if any) is entered.
struct Serving<'a> {
    sampler: &'a mut Sampler,
    listing: &'a Listing,
    failed: &'a [Option<String>],
    current: Option<(usize, &'a mut dyn Routine)>,
}

impl Worker for Serving<'_> {
    fn hello(&self) -> Hello {
        let mut h = self.sampler.hello();
        h.implementation = format!("vernier-criterion/{}", env!("CARGO_PKG_VERSION"));
        h
    }

    fn names(&self) -> Vec<String> {
        self.listing.listed.iter().map(|l| l.name.clone()).collect()
    }

    fn throughput(&self) -> Vec<Option<vernier::Throughput>> {
        self.listing.listed.iter().map(|l| l.throughput).collect()
    }

    /// Only the entered benchmark's loop is known (the others' routines do not exist yet).
    fn loop_addrs(&self) -> Vec<usize> {
        let mut v = vec![0; self.listing.listed.len()];
        if let Some((i, r)) = &self.current {
            v[*i] = r.loop_addr();
        }
        v
    }

    fn run(&mut self, req: &RunRequest, out: &mut Batch) -> Result<(), String> {
        match (req.bench, &mut self.current) {
            (BenchRef::Empty, _) => self.sampler.run(None, req, out),
            (BenchRef::Index(i), Some((c, r))) if i == *c => {
                self.sampler.run(Some(&mut **r), req, out)
            }
            // No benchmark is announced with an executor: its routine does not exist at `list`.
            (BenchRef::EmptyFuture(i), _) => Err(format!("benchmark {i} announced no executor")),
            (BenchRef::Index(i), _) => match self.failed.get(i) {
                Some(Some(why)) => Err(format!("benchmark {i} failed: {why}")),
                _ => Err(format!(
                    "no benchmark {i} (there are {})",
                    self.listing.listed.len()
                )),
            },
        }
    }

    fn probe(&self) -> String {
        vernier::protocol::serve::probe_line()
    }

    /// A benchmark other than the entered one: the passes enter it, then it is answered.
    fn defer(&self, req: &RunRequest) -> bool {
        match req.bench {
            BenchRef::Index(i) => {
                i < self.listing.listed.len()
                    && self.failed[i].is_none()
                    && self.current.as_ref().is_none_or(|(c, _)| *c != i)
            }
            BenchRef::Empty | BenchRef::EmptyFuture(_) => false,
        }
    }
}

impl ProtocolDriver {
    /// Serve until a request for another benchmark (kept pending, its index returned) or the
    /// end.
    fn serve_from<'s>(
        &'s mut self,
        current: Option<(usize, &'s mut (dyn Routine + 's))>,
    ) -> Option<usize> {
        let mut w = Serving {
            sampler: &mut self.sampler,
            listing: &self.listing,
            failed: &self.failed,
            current,
        };
        match serve_until(&mut w, &mut self.input, &mut self.output) {
            Ok(Some(req)) => {
                let next = match req.bench {
                    BenchRef::Index(i) => Some(i),
                    BenchRef::Empty | BenchRef::EmptyFuture(_) => None,
                };
                self.pending = Some(req);
                next
            }
            Ok(None) => None,
            Err(e) => {
                self.broken
                    .set(Some(format!("the link to the runner broke: {e}")));
                None
            }
        }
    }

    fn reply(&mut self, line: &str) -> bool {
        let r = self
            .output
            .write_all(line.as_bytes())
            .and_then(|()| self.output.write_all(b"\n"))
            .and_then(|()| self.output.flush());
        if let Err(e) = r {
            self.broken
                .set(Some(format!("the link to the runner broke: {e}")));
            return false;
        }
        true
    }
}

impl Driver for ProtocolDriver {
    fn next(&mut self) -> Option<usize> {
        match &self.pending {
            Some(RunRequest {
                bench: BenchRef::Index(i),
                ..
            }) => Some(*i),
            _ => self.serve_from(None),
        }
    }

    fn serve(&mut self, index: usize, routine: &mut dyn Routine) -> Option<usize> {
        if let Some(req) = self.pending.take() {
            if req.bench == BenchRef::Index(index) {
                let mut batch = Batch::default();
                let line = match self.sampler.run(Some(&mut *routine), &req, &mut batch) {
                    Ok(()) => samples_line(&batch),
                    Err(e) => format!("error {e}"),
                };
                if !self.reply(&line) {
                    return None;
                }
            } else {
                self.pending = Some(req);
                return self.next();
            }
        }
        self.serve_from(Some((index, routine)))
    }

    fn fail(&mut self, index: usize, why: String) -> Option<usize> {
        if let Some(slot) = self.failed.get_mut(index) {
            *slot = Some(why.clone());
        }
        if let Some(req) = self.pending.take_if(|r| r.bench == BenchRef::Index(index)) {
            let _ = req;
            if !self.reply(&format!("error benchmark {index} failed: {why}")) {
                return None;
            }
        }
        self.next()
    }
}

// ---------------------------------------------------------------------------------------
// Test mode: each selected benchmark once.

/// Run each selected benchmark's routine once, as Criterion does under `cargo test`.
pub fn test(groups: &[fn()], listing: &Listing, selected: Vec<usize>) -> ExitCode {
    let failures = Rc::new(Cell::new(0usize));
    let driver = TestDriver {
        names: listing.listed.iter().map(|l| l.name.clone()).collect(),
        selected,
        pos: 0,
        timer: Timer::monotonic(),
        failures: failures.clone(),
    };
    run_passes(groups, listing, Box::new(driver));
    match failures.get() {
        0 => ExitCode::SUCCESS,
        n => {
            eprintln!("vernier-criterion: {n} benchmark(s) failed");
            ExitCode::FAILURE
        }
    }
}

struct TestDriver {
    names: Vec<String>,
    selected: Vec<usize>,
    pos: usize,
    timer: Timer,
    failures: Rc<Cell<usize>>,
}

impl Driver for TestDriver {
    fn next(&mut self) -> Option<usize> {
        self.selected.get(self.pos).copied()
    }

    fn serve(&mut self, index: usize, routine: &mut dyn Routine) -> Option<usize> {
        let timer = &self.timer;
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            routine.prepare();
            routine.sample(timer, 1);
        }));
        match r {
            Ok(()) => {
                println!("Testing {}\nSuccess\n", self.names[index]);
                self.pos += 1;
                self.next()
            }
            Err(p) => self.fail(index, format!("panicked: {}", panic_message(&p))),
        }
    }

    fn fail(&mut self, index: usize, why: String) -> Option<usize> {
        let name = self.names.get(index).map_or("?", String::as_str);
        println!("Testing {name}\nFAILED: {why}\n");
        self.failures.set(self.failures.get() + 1);
        self.pos += 1;
        self.next()
    }
}

// ---------------------------------------------------------------------------------------
// Standalone: a Vernier suite whose routines are proxies for the benchmarks, entered on a
// thread of their own.

enum ToBench {
    /// Enter this benchmark.
    Goto(usize),
    /// One sample of this many iterations, with the suite's timer.
    Sample(u64, Timer),
    Done,
}

enum FromBench {
    Ready,
    Failed(String),
    Ticks(u64),
    Panicked(String),
}

/// Measure the benchmarks with a Vernier suite in this process (`cargo bench`): its table,
/// `--json`, rounds and summary. The group functions run on a thread of their own, where a
/// benchmark's routine lives while it is measured; the suite's routines ask it for samples.
pub fn standalone(groups: &[fn()], listing: &Listing, mut options: vernier::Options) -> ExitCode {
    // The counters would be read on this thread, not on the one that runs the benchmarks
    // (which would also make every sample look interrupted): none here; `vernier run` reads
    // them on the thread that measures.
    options.counters = vernier::counters::CounterSelection::Off;
    let (to_tx, to_rx) = sync_channel::<ToBench>(1);
    let (from_tx, from_rx) = sync_channel::<FromBench>(1);
    let bench_groups = groups.to_vec();
    let bench_listing = listing.clone();
    let count = listing.listed.len();
    let thread = std::thread::Builder::new()
        .name("benchmarks".into())
        // The main thread's usual stack: the benchmarks were written to run on it.
        .stack_size(8 << 20)
        .spawn(move || {
            let driver = ChannelDriver {
                rx: to_rx,
                tx: from_tx,
                failed: vec![None; count],
            };
            run_passes(&bench_groups, &bench_listing, Box::new(driver));
        });
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            eprintln!("vernier-criterion: cannot start the benchmarks' thread: {e}");
            return ExitCode::FAILURE;
        }
    };
    let link = Rc::new(Link {
        tx: to_tx,
        rx: from_rx,
        current: Cell::new(None),
    });
    let mut suite = vernier::Suite::new(options);
    for (index, l) in listing.listed.iter().enumerate() {
        suite.add(
            l.name.clone(),
            Box::new(Proxy {
                index,
                link: link.clone(),
            }),
        );
        if let Some(t) = l.throughput {
            suite.throughput(t);
        }
    }
    let r = suite.try_finish();
    let _ = link.tx.send(ToBench::Done);
    let _ = thread.join();
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

struct Link {
    tx: SyncSender<ToBench>,
    rx: Receiver<FromBench>,
    /// The benchmark entered on the benchmarks' thread.
    current: Cell<Option<usize>>,
}

/// A benchmark of the suite, measured on the benchmarks' thread.
struct Proxy {
    index: usize,
    link: Rc<Link>,
}

impl Proxy {
    /// Have the benchmarks' thread enter this benchmark; a failure to is a panic here, which
    /// the suite reports as the benchmark's failure.
    fn enter(&self) {
        if self.link.current.get() == Some(self.index) {
            return;
        }
        self.link.current.set(None);
        let reply = self
            .link
            .tx
            .send(ToBench::Goto(self.index))
            .ok()
            .and_then(|()| self.link.rx.recv().ok());
        match reply {
            Some(FromBench::Ready) => self.link.current.set(Some(self.index)),
            Some(FromBench::Failed(why)) | Some(FromBench::Panicked(why)) => {
                panic::resume_unwind(Box::new(why))
            }
            Some(FromBench::Ticks(_)) | None => {
                panic::resume_unwind(Box::new("the benchmarks' thread ended".to_string()))
            }
        }
    }
}

impl Routine for Proxy {
    fn prepare(&mut self) {
        self.enter();
    }

    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.enter();
        let reply = self
            .link
            .tx
            .send(ToBench::Sample(iters, *timer))
            .ok()
            .and_then(|()| self.link.rx.recv().ok());
        match reply {
            Some(FromBench::Ticks(t)) => t,
            Some(FromBench::Panicked(why)) | Some(FromBench::Failed(why)) => {
                self.link.current.set(None);
                panic::resume_unwind(Box::new(why))
            }
            Some(FromBench::Ready) | None => {
                self.link.current.set(None);
                panic::resume_unwind(Box::new("the benchmarks' thread ended".to_string()))
            }
        }
    }
}

struct ChannelDriver {
    rx: Receiver<ToBench>,
    tx: SyncSender<FromBench>,
    failed: Vec<Option<String>>,
}

/// How long the benchmarks' thread waits for the next request without sleeping: between two
/// samples the suite's own work is short, and a thread that slept may wake on another CPU,
/// its caches cold (a 1 MiB routine measured 2.3 times slower so on 2 vCPUs).
const SPIN: std::time::Duration = std::time::Duration::from_millis(1);

impl ChannelDriver {
    /// The next request: waited for on the CPU for [`SPIN`], then asleep.
    fn recv(&self) -> Result<ToBench, std::sync::mpsc::RecvError> {
        let start = std::time::Instant::now();
        let mut spins = 0u32;
        loop {
            match self.rx.try_recv() {
                Ok(m) => return Ok(m),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    return Err(std::sync::mpsc::RecvError)
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
            spins += 1;
            if spins.is_multiple_of(64) {
                if start.elapsed() > SPIN {
                    return self.rx.recv();
                }
                // On a single CPU, the suite's thread runs meanwhile.
                std::thread::yield_now();
            }
            std::hint::spin_loop();
        }
    }
}

impl Driver for ChannelDriver {
    fn next(&mut self) -> Option<usize> {
        loop {
            match self.recv() {
                Ok(ToBench::Goto(i)) => match self.failed.get(i) {
                    Some(Some(why)) => {
                        let _ = self.tx.send(FromBench::Failed(why.clone()));
                    }
                    _ => return Some(i),
                },
                Ok(ToBench::Sample(..)) => {
                    let _ = self
                        .tx
                        .send(FromBench::Failed("no benchmark is entered".into()));
                }
                Ok(ToBench::Done) | Err(_) => return None,
            }
        }
    }

    fn serve(&mut self, index: usize, routine: &mut dyn Routine) -> Option<usize> {
        if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| routine.prepare())) {
            return self.fail(index, format!("its set-up panicked: {}", panic_message(&p)));
        }
        if self.tx.send(FromBench::Ready).is_err() {
            return None;
        }
        loop {
            match self.recv() {
                Ok(ToBench::Sample(iters, timer)) => {
                    match panic::catch_unwind(AssertUnwindSafe(|| routine.sample(&timer, iters))) {
                        Ok(t) => {
                            if self.tx.send(FromBench::Ticks(t)).is_err() {
                                return None;
                            }
                        }
                        Err(p) => {
                            let why = panic_message(&p);
                            self.failed[index] = Some(why.clone());
                            let _ = self.tx.send(FromBench::Panicked(why));
                            return self.next();
                        }
                    }
                }
                Ok(ToBench::Goto(i)) if i == index => {
                    if self.tx.send(FromBench::Ready).is_err() {
                        return None;
                    }
                }
                Ok(ToBench::Goto(i)) => match self.failed.get(i) {
                    Some(Some(why)) => {
                        let _ = self.tx.send(FromBench::Failed(why.clone()));
                    }
                    _ => return Some(i),
                },
                Ok(ToBench::Done) | Err(_) => return None,
            }
        }
    }

    fn fail(&mut self, index: usize, why: String) -> Option<usize> {
        if let Some(slot) = self.failed.get_mut(index) {
            *slot = Some(why.clone());
        }
        if self.tx.send(FromBench::Failed(why)).is_err() {
            return None;
        }
        self.next()
    }
}
