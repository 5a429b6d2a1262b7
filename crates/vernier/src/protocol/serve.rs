//! The worker side of the protocol: what a worker serves ([`Worker`]) and the loop that
//! answers the runner's requests ([`serve`]); for a Rust suite, a program launched by a runner
//! (with [`FDS_ENV`](super::FDS_ENV) set) answers them by measuring its registered routines.

use super::{
    encode_name, loops_reply, samples_line, BenchRef, Command, Hello, RunRequest, VERSION,
};
use crate::counters::{self, CounterSet};
use crate::measure::in_process::Metered;
use crate::measure::{Batch, Target};
use crate::protocol;
use crate::stats::complexity::Declared;
use crate::timer::Timer;
use crate::workload::asynchronous::ExecutorKind;
use crate::workload::cache;
use crate::workload::routine::{Plain, Routine};
use crate::workload::Entry;
use std::fmt::Write as _;
use std::io::{BufRead, Write};

/// Serve a suite's `entries` to the runner over the descriptors `fds` ("R,W") until it says
/// `quit`.
pub fn serve_fds(entries: &mut [Entry], fds: &str) -> Result<(), String> {
    let mut worker = SuiteWorker {
        entries,
        sampler: Sampler::new(),
    };
    serve_worker_fds(&mut worker, fds)
}

/// Serve `worker` to the runner over the descriptors `fds` (`VERNIER_FDS`'s "R,W") until it
/// says `quit`: the Rust suite's way, and the Python package's.
pub fn serve_worker_fds(worker: &mut dyn Worker, fds: &str) -> Result<(), String> {
    let (mut input, mut output) = open_fds(fds)?;
    serve(worker, &mut input, &mut output).map_err(|e| e.to_string())
}

/// The runner's two descriptors `fds` (`VERNIER_FDS`'s "R,W"): what it writes, buffered, and
/// where the replies go. Call it once per process: each file takes sole ownership of its
/// descriptor.
pub fn open_fds(fds: &str) -> Result<(std::io::BufReader<std::fs::File>, std::fs::File), String> {
    // SAFETY: the runner opened these descriptors for this process and nothing else in
    // the process owns them; each File takes sole ownership of one.
    let (input, output) = unsafe { crate::os::channel::open(fds) }
        .ok_or_else(|| format!("{}='{fds}' is not 'R,W'", protocol::FDS_ENV))?;
    Ok((std::io::BufReader::new(input), output))
}

struct SuiteWorker<'a> {
    entries: &'a mut [Entry],
    sampler: Sampler,
}

impl Worker for SuiteWorker<'_> {
    fn hello(&self) -> Hello {
        self.sampler.hello()
    }

    fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    fn alloc_free(&self) -> Vec<bool> {
        self.entries.iter().map(|e| e.alloc_free).collect()
    }

    fn throughput(&self) -> Vec<Option<crate::units::Throughput>> {
        self.entries.iter().map(|e| e.throughput).collect()
    }

    fn complexity(&self) -> Vec<Option<Declared>> {
        self.entries.iter().map(|e| e.complexity.clone()).collect()
    }

    fn loop_addrs(&self) -> Vec<usize> {
        self.entries.iter().map(|e| e.routine.loop_addr()).collect()
    }

    fn threads(&self) -> Vec<Option<usize>> {
        self.entries.iter().map(|e| e.routine.threads()).collect()
    }

    fn executors(&self) -> Vec<Option<ExecutorKind>> {
        self.entries.iter().map(|e| e.routine.executor()).collect()
    }

    fn run(&mut self, req: &RunRequest, out: &mut Batch) -> Result<(), String> {
        let count = self.entries.len();
        match req.bench {
            BenchRef::Empty => self.sampler.run(None, req, out),
            BenchRef::Index(i) if i < count => {
                self.sampler
                    .run(Some(&mut *self.entries[i].routine), req, out)
            }
            BenchRef::EmptyFuture(i) if i < count => {
                let Some(mut empty) = self.entries[i].routine.empty_future() else {
                    return Err(format!("benchmark {i} is not async: it has no executor"));
                };
                self.sampler.run(Some(empty.as_mut()), req, out)
            }
            BenchRef::Index(i) | BenchRef::EmptyFuture(i) => {
                Err(format!("no benchmark {i} (there are {count})"))
            }
        }
    }

    fn probe(&self) -> String {
        probe_line()
    }
}

/// How a Rust worker answers a `run` request for one routine: its timer, the counters and the
/// cold-cache buffer kept between requests, and the request's options (`counters=`, `probe=`,
/// `pin=`, `cache=`, `memory=`). A suite's worker keeps one for its registered routines; a
/// worker whose routines exist only for a while (a closure borrowed by a harness built on this
/// crate) keeps one too and hands it each routine while it exists.
pub struct Sampler {
    timer: Timer,
    empty: Box<dyn Routine>,
    /// The counters of the last `counters=` option, kept open while it does not change.
    counters: Option<(String, CounterSet)>,
    /// The buffer `cache=cold` walks before each sample (allocated on first use).
    evictor: cache::Evictor,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new()
    }
}

impl Sampler {
    pub fn new() -> Sampler {
        Sampler {
            timer: Timer::detect(),
            empty: Box::new(Plain(|| ())),
            counters: None,
            evictor: cache::Evictor::default(),
        }
    }

    /// This process's timer, as the samples are taken with it.
    pub fn timer(&self) -> &Timer {
        &self.timer
    }

    /// The `hello` reply of a Rust worker (`impl=vernier-rust/VERSION`).
    pub fn hello(&self) -> Hello {
        Hello {
            version: protocol::VERSION,
            implementation: format!("vernier-rust/{}", env!("CARGO_PKG_VERSION")),
            timer: self.timer.info(),
            debug_build: cfg!(debug_assertions),
            pid: std::process::id(),
            interp: None,
            hash_seed: None,
        }
    }

    /// Answer `req` into `out` with `routine`, the benchmark it names (`None`: the harness's
    /// empty loop, for `run empty`).
    pub fn run(
        &mut self,
        routine: Option<&mut dyn Routine>,
        req: &RunRequest,
        out: &mut Batch,
    ) -> Result<(), String> {
        let RunRequest {
            bench,
            iters,
            samples,
            ref extra,
        } = *req;
        // `counters=<event,…>`: open them (once per distinct list) and read them per sample.
        let wanted = extra.iter().find(|(k, _)| k == "counters").map(|(_, v)| v);
        let counters = match wanted {
            None => None,
            Some(list) => {
                if self.counters.as_ref().is_none_or(|(l, _)| l != list) {
                    let events = counters::parse_event_list(list).map_err(|e| e.to_string())?;
                    self.counters = Some((list.clone(), CounterSet::open(&events)));
                }
                self.counters
                    .as_mut()
                    .map(|(_, c)| c)
                    .filter(|c| !c.is_empty())
            }
        };
        let routine: &mut dyn Routine = match routine {
            Some(r) => r,
            None => self.empty.as_mut(),
        };
        // `probe=<adds>`: the core-speed probe before the batch (`probe_ns=` in the reply).
        out.probe_adds = extra
            .iter()
            .find(|(k, _)| k == "probe")
            .and_then(|(_, v)| protocol::parse_probe_adds(v))
            .unwrap_or(0);
        // `pin=1`: the runner pinned the process; threaded benchmarks pin one thread per CPU.
        crate::workload::threads::set_pinned(extra.iter().any(|(k, v)| k == "pin" && v == "1"));
        // `cache=cold`: the caches are evicted before each sample, outside its timed region.
        let cold = match extra
            .iter()
            .find(|(k, _)| k == "cache")
            .map(|(_, v)| v.as_str())
        {
            None | Some("hot") => false,
            Some("cold") => true,
            Some(v) => return Err(format!("bad option 'cache={v}' (expected hot or cold)")),
        };
        let mut cold_routine;
        let routine: &mut dyn Routine = if cold {
            cold_routine = cache::Cold {
                inner: routine,
                evictor: &mut self.evictor,
            };
            &mut cold_routine
        } else {
            routine
        };
        let mut t = Metered {
            routine,
            timer: &self.timer,
            counters,
        };
        let measured = if protocol::memory::requested(extra) {
            protocol::memory::measure_counting(&mut t, iters, samples, out)
        } else {
            t.measure(iters, samples, out)
        };
        measured.map_err(|e| match bench {
            BenchRef::Index(i) => format!("benchmark {i} failed: {e}"),
            BenchRef::Empty => format!("benchmark empty failed: {e}"),
            BenchRef::EmptyFuture(i) => {
                format!("the empty future on benchmark {i}'s executor failed: {e}")
            }
        })
    }
}

/// Facts about this process for the runner's tests: CPU, environment size, a stack address,
/// whether address-space randomisation is on.
pub fn probe_line() -> String {
    let local = 0u8;
    let (cpu, aslr_off) = (crate::os::cpu::current(), crate::os::host::aslr_off());
    let env_bytes: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2)
        .sum();
    let aslr = if aslr_off { 0 } else { 1 };
    format!(
        "probe pid={} cpu={cpu} env_bytes={env_bytes} stack={:p} aslr={aslr}",
        std::process::id(),
        &local as *const u8
    )
}

/// What a worker serves: names, a way to run samples, and facts for `probe`.
pub trait Worker {
    fn hello(&self) -> Hello;
    fn names(&self) -> Vec<String>;
    /// Answer a `run` request into `out`.
    fn run(&mut self, req: &RunRequest, out: &mut Batch) -> Result<(), String>;
    fn probe(&self) -> String;
    /// The address of each benchmark's measured-loop function in this process (0: unknown),
    /// in list order.
    fn loop_addrs(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Each benchmark's thread count (`None`: not threaded), in list order; the `list` reply
    /// carries it as `threads=T`.
    fn threads(&self) -> Vec<Option<usize>> {
        Vec::new()
    }

    /// Per benchmark, in list order: declared allocation-free (`alloc_free=1` on its line).
    fn alloc_free(&self) -> Vec<bool> {
        Vec::new()
    }

    /// Per benchmark, in list order: the work one iteration does (`bytes=N` or `items=N` on
    /// its line).
    fn throughput(&self) -> Vec<Option<crate::units::Throughput>> {
        Vec::new()
    }

    /// Per benchmark, in list order: how its complexity is fitted (`family=`, `n=`,
    /// `complexity=`, `f=`, `function=` on its line; docs/protocol.md).
    fn complexity(&self) -> Vec<Option<Declared>> {
        Vec::new()
    }

    /// Per benchmark, in list order: the executor of an async one (`executor=` and
    /// `on_calling_core=` on its line), whose empty future `run empty_future:<index>` measures.
    fn executors(&self) -> Vec<Option<ExecutorKind>> {
        Vec::new()
    }

    /// A `run` request this worker cannot answer where it is now: [`serve_until`] returns it
    /// unanswered, for the caller to answer once it can (a harness whose benchmarks are
    /// closures that exist only while their registering function runs). The default: none.
    fn defer(&self, _req: &RunRequest) -> bool {
        false
    }
}

/// Serve the protocol until `quit` or end of input. I/O errors end the loop.
pub fn serve(
    worker: &mut dyn Worker,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> std::io::Result<()> {
    while serve_until(worker, input, output)?.is_some() {}
    Ok(())
}

/// Serve the protocol until `quit` or end of input (`None`), or until a `run` request the
/// worker defers ([`Worker::defer`]), returned unanswered: the caller answers it (a
/// `samples` or `error` line on `output`) and calls again. I/O errors end the loop.
pub fn serve_until(
    worker: &mut dyn Worker,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> std::io::Result<Option<RunRequest>> {
    let mut line = String::new();
    let mut batch = Batch::default();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let reply = match Command::parse(line.trim_end()) {
            Err(e) => format!("error {e}"),
            Ok(Command::Hello(v)) if v != VERSION => {
                format!("error unsupported protocol version {v} (this worker speaks {VERSION})")
            }
            Ok(Command::Hello(_)) => worker.hello().to_line(),
            Ok(Command::List) => {
                let names = worker.names();
                let threads = worker.threads();
                let free = worker.alloc_free();
                let work = worker.throughput();
                let fits = worker.complexity();
                let executors = worker.executors();
                let mut s = String::new();
                for (i, n) in names.iter().enumerate() {
                    let _ = write!(s, "bench {i} {}", encode_name(n));
                    if let Some(t) = threads.get(i).copied().flatten() {
                        let _ = write!(s, " threads={t}");
                    }
                    if free.get(i) == Some(&true) {
                        s.push_str(" alloc_free=1");
                    }
                    if let Some(t) = work.get(i).copied().flatten() {
                        let _ = write!(s, " {}", t.option());
                    }
                    if let Some(d) = fits.get(i).and_then(|d| d.as_ref()) {
                        s.push_str(&d.options());
                    }
                    if let Some(e) = executors.get(i).and_then(|e| e.as_ref()) {
                        s.push_str(&protocol::executor_options(&e.name, e.on_calling_core));
                    }
                    s.push('\n');
                }
                let _ = write!(s, "end {}", names.len());
                s
            }
            Ok(Command::Probe) => worker.probe(),
            Ok(Command::Loops) => loops_reply(&worker.loop_addrs()),
            Ok(Command::Quit) => {
                output.write_all(b"bye\n")?;
                output.flush()?;
                return Ok(None);
            }
            Ok(Command::Run(req)) if worker.defer(&req) => return Ok(Some(req)),
            Ok(Command::Run(req)) => {
                batch.clear();
                batch.probe_adds = 0;
                match worker.run(&req, &mut batch) {
                    Ok(()) => samples_line(&batch),
                    Err(e) => format!("error {e}"),
                }
            }
        };
        output.write_all(reply.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Throughput;

    #[test]
    fn an_async_benchmark_names_its_executor_and_its_empty_future_is_served() {
        use crate::workload::asynchronous::tests::Spin;
        use crate::workload::asynchronous::AsyncPlain;
        let mut entries = vec![
            Entry {
                name: "ready".into(),
                routine: Box::new(AsyncPlain {
                    executor: Spin::default(),
                    body: || async {},
                }),
                alloc_free: false,
                throughput: None,
                complexity: None,
            },
            Entry {
                name: "plain".into(),
                routine: Box::new(Plain(|| ())),
                alloc_free: false,
                throughput: None,
                complexity: None,
            },
        ];
        let mut worker = SuiteWorker {
            entries: &mut entries,
            sampler: Sampler::new(),
        };
        let mut out = Vec::new();
        let script = "list\nrun empty_future:0 iters=4 samples=2\nrun empty_future:1 iters=1 \
                      samples=1\nrun empty_future:9 iters=1 samples=1\nquit\n";
        serve(&mut worker, &mut script.as_bytes(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "bench 0 ready executor=spin on_calling_core=1");
        assert_eq!(lines[1], "bench 1 plain");
        assert!(lines[3].starts_with("samples 2 ns="), "{out}");
        assert_eq!(
            lines[4],
            "error benchmark 1 is not async: it has no executor"
        );
        assert_eq!(lines[5], "error no benchmark 9 (there are 2)");
    }

    #[test]
    fn a_list_line_carries_the_declared_throughput_and_complexity() {
        let entry = |name: &str, throughput| Entry {
            name: name.into(),
            routine: Box::new(Plain(|| ())),
            alloc_free: false,
            throughput,
            complexity: None,
        };
        let mut entries = vec![
            entry("sort/8", Some(Throughput::ItemsPerIter(8))),
            entry("copy", Some(Throughput::BytesPerIter(4096))),
            entry("plain", None),
        ];
        entries[0].complexity = Some(Declared {
            f: Some(24.0),
            function: Some("N lg N".into()),
            ..Declared::default()
        });
        let mut worker = SuiteWorker {
            entries: &mut entries,
            sampler: Sampler::new(),
        };
        let mut out = Vec::new();
        serve(&mut worker, &mut "list\nquit\n".as_bytes(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "bench 0 sort/8 items=8 f=2.4e1 function=N%20lg%20N\nbench 1 copy bytes=4096\n\
             bench 2 plain\nend 3\nbye\n"
        );
    }
}
