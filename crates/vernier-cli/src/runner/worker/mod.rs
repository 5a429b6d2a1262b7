//! A benchmark executable driven as a worker: spawned with the protocol on file descriptors
//! 3 (commands) and 4 (replies), in its own process group (so a terminal's Ctrl-C reaches the
//! runner only), with the process controls the runner asks for: CPU affinity, SCHED_FIFO,
//! no address-space randomisation, environment padding. Its stdout and stderr are collected
//! so a failure can quote their last lines.

mod child;
mod spawn;

pub(crate) use child::apply_in_child;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use vernier::measure::{Batch, Target};
use vernier::protocol::{self, BenchRef, Hello};

/// Default of --timeout: the longest wait for a reply, start-up included, in seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 30.0;

/// How the runner controls a worker process.
#[derive(Clone, Debug, Default)]
pub struct Control {
    /// CPUs the worker may run on (sched_setaffinity); empty: no pinning.
    pub cpus: Vec<usize>,
    /// Run under SCHED_FIFO at this priority.
    pub fifo: Option<i32>,
    /// Disable address-space layout randomisation (personality ADDR_NO_RANDOMIZE).
    pub no_aslr: bool,
    /// Bytes of padding added to the environment (moves the initial stack).
    pub env_pad: u64,
    /// Longest wait for one reply.
    pub timeout: Duration,
    /// Options added to every `run` command (e.g. `counters=cycles,task-clock`).
    pub run_options: Vec<(String, String)>,
    /// Extra environment variables for the worker.
    pub env: Vec<(OsString, OsString)>,
}

/// Lines kept from the worker's output for error messages.
const TAIL_LINES: usize = 12;
/// How many of a worker's first lines on standard error are kept for [`WorkerProcess::said`].
const SAID_LINES: usize = 40;

/// The first lines a worker wrote on standard error (its harness's notes: options it does not
/// follow under the runner, a declaration it could not take), and how many more it wrote.
#[derive(Debug, Default, PartialEq)]
pub struct Said {
    pub lines: Vec<String>,
    pub more: usize,
}

/// Say once, before the table, what a program's first worker process wrote on standard error
/// (a harness's notes: options it does not follow under the runner, declarations it could not
/// take): every process of the program says the same, and the rest are not shown.
pub fn tell(who: &str, said: &Said) {
    if said.lines.is_empty() {
        return;
    }
    eprintln!(
        "vernier: {who} wrote on standard error (the first process; the others are not shown):"
    );
    for l in &said.lines {
        eprintln!("  {l}");
    }
    if said.more > 0 {
        eprintln!("  … and {} more lines", said.more);
    }
}

impl Said {
    fn push(&mut self, line: &str) {
        if self.lines.len() < SAID_LINES {
            self.lines.push(line.to_string());
        } else {
            self.more += 1;
        }
    }
}

/// A running worker.
pub struct WorkerProcess {
    child: Child,
    to: std::fs::File,
    from: OwnedFd,
    buf: Vec<u8>,
    tail: Arc<Mutex<VecDeque<String>>>,
    /// How many of the worker's stdout and stderr were read to their end.
    tail_closed: Arc<std::sync::atomic::AtomicUsize>,
    /// Its first lines on standard error.
    said: Arc<Mutex<Said>>,
    program: PathBuf,
    timeout: Duration,
    run_options: Vec<(String, String)>,
    /// The process was pinned (`--cpu`): every `run` says `pin=1`, so that a threaded
    /// benchmark pins its threads one per CPU (docs/threads.md).
    pinned: bool,
    pub hello: Hello,
    pub names: Vec<String>,
    /// Per benchmark: declared allocation-free (`alloc_free=1` on its `list` line).
    pub alloc_free: Vec<bool>,
    /// Per benchmark: the work one iteration does (`bytes=N` or `items=N` on its line).
    pub throughput: Vec<Option<vernier::units::Throughput>>,
    /// Per benchmark: how its complexity is fitted (`family=`, `n=`, `complexity=`, `f=`,
    /// `function=` on its line).
    pub complexity: Vec<Option<vernier::result::complexity::Declared>>,
    /// Per benchmark: an async one's executor, its name and whether its work runs on the
    /// calling core (`executor=`, `on_calling_core=` on its line).
    pub executors: Vec<Option<(String, bool)>>,
    /// Peak resident bytes of the exited process (`wait4`'s `ru_maxrss`), once reaped.
    pub peak_rss_bytes: Option<u64>,
}

/// Why a worker could not be started or stopped answering.
pub fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        // SAFETY: strsignal returns a pointer to a static (or thread-local) string.
        let name = unsafe {
            let p = libc::strsignal(sig);
            if p.is_null() {
                String::new()
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        format!(
            "was killed by signal {sig} ({name}{})",
            if status.core_dumped() {
                ", core dumped"
            } else {
                ""
            }
        )
    } else {
        format!("exited with status {}", status.code().unwrap_or(-1))
    }
}

impl WorkerProcess {
    /// `why` ends with the program's last output when there was some (the errors of `send`
    /// and `read_line` carry it).
    fn not_a_worker(&mut self, why: &str) -> String {
        format!(
            "{} is not a vernier worker. Make it one: in C++, register benchmarks with \
             vernier::bench and end main with `return vernier::main(argc, argv);` \
             (#include \"vernier.hpp\"); in Rust, use `vernier::main!` or `Suite::run_main`.\n      What happened: {why}",
            self.program.display(),
        )
    }

    fn handshake(&mut self) -> Result<(), String> {
        if let Err(e) = self.send(&format!("hello {}", protocol::VERSION)) {
            return Err(self.not_a_worker(&format!("it did not read the protocol: {e}")));
        }
        // The program's own start-up (building its data) happens before it answers: the wait
        // is the caller's --timeout, like every other reply.
        let line = match self.read_line(self.timeout) {
            Ok(l) => l,
            Err(e) => return Err(self.not_a_worker(&e)),
        };
        if !line.starts_with("hello ") {
            if let Some(msg) = line.strip_prefix("error ") {
                return Err(format!("{}: {msg}", self.program.display()));
            }
            let why = format!(
                "it answered '{}' to 'hello'{}",
                protocol::clip(&line),
                self.tail_text()
            );
            return Err(self.not_a_worker(&why));
        }
        self.hello = Hello::parse(&line)?;
        self.send("list")?;
        loop {
            let line = self
                .read_line(self.timeout)
                .map_err(|e| format!("during 'list': {e}"))?;
            // `bench <index> <name> [key=value …]`: of the options after the name, the runner
            // reads `alloc_free=1`, `bytes=N` / `items=N`, the complexity declaration and
            // an async benchmark's executor; others (`threads=T`) are ignored
            // here, and the samples say what it needs of them.
            let mut t = line.split(' ');
            match (t.next(), t.next(), t.next()) {
                (Some("bench"), Some(_), Some(name)) => {
                    self.names.push(protocol::decode_name(name)?);
                    let options: Vec<&str> = t.collect();
                    self.alloc_free.push(options.contains(&"alloc_free=1"));
                    let malformed =
                        |e| format!("malformed protocol line '{}': {e}", protocol::clip(&line));
                    let work = options
                        .iter()
                        .find_map(|o| vernier::units::Throughput::parse_option(o))
                        .transpose()
                        .map_err(malformed)?;
                    self.throughput.push(work);
                    let fit = vernier::result::complexity::Declared::parse_options(
                        options.iter().copied(),
                    )
                    .map_err(malformed)?;
                    self.complexity.push(fit);
                    let executor = protocol::parse_executor_options(options.iter().copied())
                        .map_err(malformed)?;
                    self.executors.push(executor);
                }
                (Some("end"), Some(n), None) => {
                    if n.parse::<usize>().ok() != Some(self.names.len()) {
                        return Err(format!("malformed protocol line '{line}': it announces {n} benchmarks after listing {}", self.names.len()));
                    }
                    return Ok(());
                }
                _ => {
                    return Err(format!(
                        "malformed protocol line '{}' in reply to 'list'",
                        protocol::clip(&line)
                    ))
                }
            }
        }
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let mut s = line.to_string();
        s.push('\n');
        self.to
            .write_all(s.as_bytes())
            .map_err(|e| format!("cannot send '{line}' to the worker ({e}){}", self.death()))
    }

    /// Exit status and output tail of a worker that stopped answering.
    fn death(&mut self) -> String {
        // Give a dying process a moment to be reaped.
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break None,
            }
        };
        let what = status
            .map(|s| format!(": the worker {}", describe_status(s)))
            .unwrap_or_default();
        // Its last words: once it has exited, its output is read to the end (a busy machine
        // may run the readers late), unless a child of its own keeps the pipes open.
        if status.is_some() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while self.tail_closed.load(std::sync::atomic::Ordering::Acquire) < 2
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        format!("{what}{}", self.tail_text())
    }

    fn tail_text(&self) -> String {
        let t = self.tail.lock().unwrap();
        if t.is_empty() {
            String::new()
        } else {
            let lines: Vec<&str> = t.iter().map(|s| s.as_str()).collect();
            format!("\n      last output:\n        {}", lines.join("\n        "))
        }
    }

    /// Read one reply line, waiting at most `timeout`.
    fn read_line(&mut self, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(pos) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return String::from_utf8(line[..line.len() - 1].to_vec())
                    .map(|s| s.trim_end_matches('\r').to_string())
                    .map_err(|_| "malformed protocol line: not UTF-8".to_string());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.kill();
                return Err(format!(
                    "no reply within {:.0} s: the benchmark hangs or is slower than --timeout; \
                     the worker was killed{}",
                    timeout.as_secs_f64(),
                    self.tail_text()
                ));
            }
            let mut pfd = libc::pollfd {
                fd: self.from.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: pfd is a valid pollfd for the duration of the call.
            let r = unsafe { libc::poll(&mut pfd, 1, ms.max(1)) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("poll: {e}"));
            }
            if r == 0 {
                continue;
            }
            let mut chunk = [0u8; 65536];
            // SAFETY: chunk is writable for its length; the fd is open.
            let n = unsafe {
                libc::read(
                    self.from.as_raw_fd(),
                    chunk.as_mut_ptr().cast(),
                    chunk.len(),
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("reading the worker's reply: {e}"));
            }
            if n == 0 {
                return Err(format!("the worker closed the protocol{}", self.death()));
            }
            self.buf.extend_from_slice(&chunk[..n as usize]);
            if self.buf.len() > 64 << 20 {
                return Err("malformed protocol reply: a line longer than 64 MiB".into());
            }
        }
    }

    /// One batch of samples.
    pub fn run(
        &mut self,
        bench: BenchRef,
        iters: u64,
        samples: usize,
        out: &mut Batch,
    ) -> Result<(), String> {
        let mut extra = self.run_options.clone();
        if out.probe_adds > 0 {
            extra.push(("probe".into(), out.probe_adds.to_string()));
        }
        if self.pinned {
            extra.push(("pin".into(), "1".into()));
        }
        let cmd = protocol::Command::Run(protocol::RunRequest {
            bench,
            iters,
            samples,
            extra,
        });
        self.send(&cmd.to_line())?;
        let line = self.read_line(self.timeout)?;
        let b = protocol::parse_samples(&line, samples)?;
        out.ns.extend_from_slice(&b.ns);
        out.counters.extend(b.counters);
        out.probe_ns = b.probe_ns;
        out.wide_ns = b.wide_ns;
        out.thread_ns = b.thread_ns;
        out.thread_cpu_ns = b.thread_cpu_ns;
        out.thread_wait_ns = b.thread_wait_ns;
        out.cpus = b.cpus;
        out.memory = b.memory;
        Ok(())
    }

    /// The address of each benchmark's measured-loop function in the worker (`loops`, see
    /// docs/asm.md), in list order; 0 when the harness does not know it.
    pub fn loops(&mut self) -> Result<Vec<u64>, String> {
        self.send("loops")?;
        let mut addrs = vec![0; self.names.len()];
        loop {
            let line = self.read_line(self.timeout)?;
            if let Some(msg) = line.strip_prefix("error ") {
                return Err(format!(
                    "the worker does not report its loop functions ({msg}): its harness predates \
                     `vernier asm`; rebuild it against this version of vernier"
                ));
            }
            match protocol::parse_loop_line(&line)? {
                None => return Ok(addrs),
                Some((i, a)) if i < addrs.len() => addrs[i] = a,
                Some((i, _)) => {
                    return Err(format!(
                        "'loops' reply names benchmark {i}, but there are {}",
                        addrs.len()
                    ))
                }
            }
        }
    }

    /// The worker's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A `probe` reply.
    #[allow(dead_code)] // for checks of the process controls
    pub fn probe(&mut self) -> Result<String, String> {
        self.send("probe")?;
        self.read_line(self.timeout)
    }

    pub fn kill(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: signalling our own child's process group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the worker process is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Options added to every `run` command from now on.
    pub fn set_run_options(&mut self, options: Vec<(String, String)>) {
        self.run_options = options;
    }

    /// Ask the worker to quit and wait up to `timeout` for it to exit (a tool it runs under
    /// writes its output then); an error when it does not, or exits with a failure.
    pub fn quit_and_wait(mut self, timeout: Duration) -> Result<(), String> {
        self.send("quit")?;
        let _ = self.read_line(self.timeout);
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) if st.success() => return Ok(()),
                Ok(Some(st)) => {
                    std::thread::sleep(Duration::from_millis(20));
                    return Err(format!(
                        "the worker {} after 'quit'{}",
                        describe_status(st),
                        self.tail_text()
                    ));
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {
                    self.kill();
                    return Err(format!(
                        "the worker did not exit within {:.0} s of 'quit'; killed",
                        timeout.as_secs_f64()
                    ));
                }
            }
        }
    }

    /// [`WorkerProcess::quit`], then what it wrote on standard error over its life (read to
    /// the end: at most half a second is waited for the pipe to close).
    pub fn quit_and_tell(self) -> Said {
        let said = self.said.clone();
        let closed = self.tail_closed.clone();
        self.quit();
        let deadline = Instant::now() + Duration::from_millis(500);
        while closed.load(std::sync::atomic::Ordering::Acquire) < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut s = said.lock().unwrap();
        std::mem::take(&mut *s)
    }

    /// Ask the worker to quit; kill it if it does not. Returns its peak resident memory in
    /// bytes when it exited and was reaped here.
    pub fn quit(mut self) -> Option<u64> {
        if self.send("quit").is_ok() && self.read_line(Duration::from_secs(2)).is_ok() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                if self.reap() {
                    return self.peak_rss_bytes;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.kill();
        None
    }

    /// Reap the exited worker with `wait4`, keeping its peak resident memory; false while it
    /// runs.
    fn reap(&mut self) -> bool {
        let mut status = 0;
        // SAFETY: rusage is plain data, written by wait4.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waiting (without blocking) for our own child; both pointers are valid.
        let r = unsafe {
            libc::wait4(
                self.child.id() as i32,
                &mut status,
                libc::WNOHANG,
                &mut usage,
            )
        };
        if r == self.child.id() as i32 {
            // ru_maxrss is in KiB on Linux.
            self.peak_rss_bytes = Some(usage.ru_maxrss.max(0) as u64 * 1024);
            return true;
        }
        // An error (already reaped) also means it has exited.
        r < 0
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// One benchmark of a worker (or its empty loop), as a target for the engine. `vernier run`'s
/// benchmarks go through the worker-link seam instead (`crate::runner::processes::measure_in_processes`), which
/// also counts the runner's own time between batches.
pub struct WorkerTarget<'a> {
    pub worker: &'a mut WorkerProcess,
    pub bench: BenchRef,
}

impl Target for WorkerTarget<'_> {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        self.worker.run(self.bench, iters, count, out)
    }
}
