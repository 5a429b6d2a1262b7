//! Conformance checks for the worker protocol (`docs/protocol.md`), usable against any harness:
//! give `check` a `Command` that starts a worker (a C++ example, a Rust benchmark binary) and it
//! drives the whole protocol over pipes on fds 3 and 4, exactly as the runner does, asserting
//! every reply. `Session` is the building block for more specific tests (failing workers).
//!
//! Requirements on the worker: at least one benchmark, benchmark 0 fast (a few µs per
//! iteration at most), fewer than 99 benchmarks.
#![allow(dead_code)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use vernier::protocol::{decode_name, parse_samples, Hello};
use vernier::timer::TimerKind;

/// How long any single reply may take (generous: machines running tests are busy).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// What a worker sent back on its protocol pipe.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    Line(String),
    /// The worker closed its end of the pipe (it exited or died).
    Eof,
    /// Nothing within the time limit.
    Timeout,
}

/// A running worker with the protocol on pipes, its stdout and stderr collected.
pub struct Session {
    child: Option<Child>,
    to_worker: Option<File>,
    replies: Receiver<Option<String>>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    pub pid: u32,
}

/// A pipe whose both ends are close-on-exec (the worker gets its ends by `dup2` in `pre_exec`,
/// which clears the flag on the copy).
fn cloexec_pipe() -> (RawFd, RawFd) {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    (fds[0], fds[1])
}

impl Session {
    /// Start `cmd` as a worker: `VERNIER_FDS=3,4`, commands on fd 3, replies on fd 4.
    pub fn spawn(mut cmd: Command) -> Session {
        let (cmd_r, cmd_w) = cloexec_pipe(); // runner → worker
        let (rep_r, rep_w) = cloexec_pipe(); // worker → runner
        cmd.env("VERNIER_FDS", "3,4")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: only async-signal-safe calls (fcntl, dup2, close) between fork and exec.
        // The ends are first copied above fd 10 so that dup2 onto 3 and 4 cannot clobber one
        // with the other; dup2 clears close-on-exec on the copies.
        unsafe {
            cmd.pre_exec(move || {
                let a = libc::fcntl(cmd_r, libc::F_DUPFD, 10);
                let b = libc::fcntl(rep_w, libc::F_DUPFD, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(a);
                libc::close(b);
                Ok(())
            });
        }
        let spawned = cmd.spawn();
        // SAFETY: the worker's ends are ours to close, once each; the runner's ends are wrapped
        // in Files that own them from here on.
        let (to_worker, from_worker) = unsafe {
            libc::close(cmd_r);
            libc::close(rep_w);
            (File::from_raw_fd(cmd_w), File::from_raw_fd(rep_r))
        };
        let mut child = spawned.unwrap_or_else(|e| panic!("cannot start worker {cmd:?}: {e}"));
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from_worker);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        let line = line.strip_suffix('\n').unwrap_or(&line).to_string();
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let collect = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                v
            })
        };
        let stdout = collect(Box::new(child.stdout.take().unwrap()));
        let stderr = collect(Box::new(child.stderr.take().unwrap()));
        Session {
            pid: child.id(),
            child: Some(child),
            to_worker: Some(to_worker),
            replies,
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    /// Send one command line.
    pub fn send(&mut self, line: &str) {
        let w = self
            .to_worker
            .as_mut()
            .expect("protocol pipe already closed");
        w.write_all(format!("{line}\n").as_bytes())
            .and_then(|_| w.flush())
            .unwrap_or_else(|e| panic!("cannot send '{line}' to the worker: {e}"));
    }

    /// The next reply line, end of file or timeout.
    pub fn next_reply(&mut self, timeout: Duration) -> Reply {
        match self.replies.recv_timeout(timeout) {
            Ok(Some(line)) => Reply::Line(line),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => Reply::Eof,
            Err(RecvTimeoutError::Timeout) => Reply::Timeout,
        }
    }

    /// The next reply line; panics (with the worker's stderr) on end of file or timeout.
    pub fn reply(&mut self) -> String {
        match self.next_reply(REPLY_TIMEOUT) {
            Reply::Line(l) => l,
            other => {
                let why = format!("{other:?}");
                let (status, _, err) = self.kill();
                panic!("expected a reply, got {why}; worker {status:?}; stderr:\n{err}");
            }
        }
    }

    /// Send a command and return its one-line reply.
    pub fn ask(&mut self, line: &str) -> String {
        self.send(line);
        self.reply()
    }

    /// Close the protocol pipe (the worker sees end of input).
    pub fn close_input(&mut self) {
        self.to_worker = None;
    }

    /// Wait for the worker to exit (killing it after `timeout`); returns its status and what
    /// it wrote on stdout and stderr.
    pub fn wait(&mut self, timeout: Duration) -> (ExitStatus, String, String) {
        let start = Instant::now();
        let mut child = self.child.take().expect("worker already reaped");
        let status = loop {
            if let Some(s) = child.try_wait().expect("try_wait") {
                break s;
            }
            if start.elapsed() > timeout {
                let _ = child.kill();
                let s = child.wait().expect("wait");
                let (out, err) = self.outputs();
                panic!("worker did not exit within {timeout:?} ({s:?}); stdout:\n{out}\nstderr:\n{err}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let (out, err) = self.outputs();
        (status, out, err)
    }

    /// Kill the worker now; returns its status and outputs.
    pub fn kill(&mut self) -> (Option<ExitStatus>, String, String) {
        let status = self.child.take().map(|mut c| {
            let _ = c.kill();
            c.wait().expect("wait")
        });
        let (out, err) = self.outputs();
        (status, out, err)
    }

    fn outputs(&mut self) -> (String, String) {
        self.to_worker = None;
        let join = |h: Option<JoinHandle<Vec<u8>>>| {
            h.map(|h| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned())
                .unwrap_or_default()
        };
        (join(self.stdout.take()), join(self.stderr.take()))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What a conformant worker told us.
#[derive(Debug)]
pub struct Report {
    pub hello: Hello,
    pub names: Vec<String>,
    pub probe: Probe,
    /// The worker's own standard output and error (never protocol lines).
    pub stdout: String,
    pub stderr: String,
}

/// The fields of a `probe` reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub pid: u32,
    pub cpu: u32,
    pub env_bytes: u64,
    pub stack: u64,
    pub aslr: bool,
}

/// Parse a `probe` reply, checking every field named by the protocol is present and well
/// formed (`stack` is hexadecimal, with or without `0x`).
pub fn parse_probe(line: &str) -> Probe {
    let mut toks = line.split(' ');
    assert_eq!(toks.next(), Some("probe"), "not a probe reply: '{line}'");
    let (mut pid, mut cpu, mut env, mut stack, mut aslr) = (None, None, None, None, None);
    for t in toks {
        let (k, v) = t
            .split_once('=')
            .unwrap_or_else(|| panic!("token '{t}' in '{line}'"));
        fn bad<T>(t: &str, line: &str) -> T {
            panic!("malformed '{t}' in '{line}'")
        }
        match k {
            "pid" => pid = Some(v.parse::<u32>().unwrap_or_else(|_| bad(t, line))),
            "cpu" => cpu = Some(v.parse::<u32>().unwrap_or_else(|_| bad(t, line))),
            "env_bytes" => env = Some(v.parse::<u64>().unwrap_or_else(|_| bad(t, line))),
            "stack" => {
                let hex = v.strip_prefix("0x").unwrap_or(v);
                stack = Some(u64::from_str_radix(hex, 16).unwrap_or_else(|_| bad(t, line)));
            }
            "aslr" => {
                aslr = Some(match v {
                    "0" => false,
                    "1" => true,
                    _ => bad(t, line),
                })
            }
            _ => {} // unknown keys are allowed
        }
    }
    let need = |name: &str| format!("probe reply without {name}: '{line}'");
    Probe {
        pid: pid.unwrap_or_else(|| panic!("{}", need("pid"))),
        cpu: cpu.unwrap_or_else(|| panic!("{}", need("cpu"))),
        env_bytes: env.unwrap_or_else(|| panic!("{}", need("env_bytes"))),
        stack: stack.unwrap_or_else(|| panic!("{}", need("stack"))),
        aslr: aslr.unwrap_or_else(|| panic!("{}", need("aslr"))),
    }
}

/// `list`: the decoded names, checking the indices and the `end` count.
pub fn list(s: &mut Session) -> Vec<String> {
    s.send("list");
    let mut names = Vec::new();
    loop {
        let line = s.reply();
        if let Some(n) = line.strip_prefix("end ") {
            assert_eq!(
                n.parse::<usize>().ok(),
                Some(names.len()),
                "bad end line '{line}'"
            );
            return names;
        }
        let parts: Vec<&str> = line.split(' ').collect();
        assert!(
            // Options may follow the name (`alloc_free=1`).
            parts.len() >= 3 && parts[0] == "bench" && parts[3..].iter().all(|t| t.contains('=')),
            "malformed list line '{line}'"
        );
        assert_eq!(
            parts[1].parse::<usize>().ok(),
            Some(names.len()),
            "index in '{line}'"
        );
        let name = decode_name(parts[2]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!name.is_empty(), "empty name in '{line}'");
        names.push(name);
    }
}

/// Ask `run …` and return the ns values (panics on a malformed or error reply).
pub fn run(s: &mut Session, line: &str, samples: usize) -> Vec<u64> {
    let reply = s.ask(line);
    parse_samples(&reply, samples)
        .unwrap_or_else(|e| panic!("'{line}' got '{reply}': {e}"))
        .ns
}

fn hello(s: &mut Session) -> Hello {
    let line = s.ask("hello 1");
    Hello::parse(&line).unwrap_or_else(|e| panic!("{e}"))
}

/// What a harness may leave out of the protocol (`docs/protocol.md` lets a worker ignore
/// `probe=` and send no token).
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Answers `probe=<adds>` with `probe_ns=` and `wide_ns=`; without it, neither token may
    /// ever be sent.
    pub speed_probe: bool,
}

/// The whole protocol, every reply checked. Ends with `quit`: the worker must answer `bye`
/// and exit with status 0.
pub fn check(cmd: Command) -> Report {
    check_with(cmd, Features { speed_probe: true })
}

/// [`check`] for a harness with the given `features`.
pub fn check_with(cmd: Command, features: Features) -> Report {
    let mut s = Session::spawn(cmd);

    // hello
    let h = hello(&mut s);
    assert_eq!(h.version, 1);
    assert!(
        h.implementation.contains('/'),
        "impl should be <name>/<version>: {h:?}"
    );
    assert!(h.timer.resolution_ns > 0.0, "resolution_ns: {h:?}");
    assert!(h.timer.overhead_ns > 0.0, "overhead_ns: {h:?}");
    match h.timer.kind {
        TimerKind::Tsc => assert!(h.timer.tsc_hz.is_some_and(|hz| hz > 1e8), "tsc_hz: {h:?}"),
        TimerKind::Cntvct => assert!(h.timer.tsc_hz.is_some_and(|hz| hz > 0.0), "rate: {h:?}"),
        TimerKind::Monotonic | TimerKind::Qpc | TimerKind::Mach => {
            assert_eq!(h.timer.tsc_hz, None, "tsc_hz=0 with the system's clock")
        }
    }
    assert_eq!(h.pid, s.pid, "hello's pid is the worker's");

    // list
    let names = list(&mut s);
    assert!(!names.is_empty(), "a worker with no benchmark");
    assert!(
        names.len() < 99,
        "the error checks below assume fewer than 99 benchmarks"
    );

    // run
    assert_eq!(run(&mut s, "run 0 iters=1 samples=1", 1).len(), 1);
    assert_eq!(run(&mut s, "run 0 iters=10 samples=7", 7).len(), 7);
    assert_eq!(run(&mut s, "run empty iters=1000 samples=5", 5).len(), 5);
    // Options in any order; unknown options ignored.
    assert_eq!(
        run(&mut s, "run 0 samples=3 iters=5 future=option", 3).len(),
        3
    );

    // The core-speed probe (`probe=<adds>`): a `probe_ns=` token only when asked, and a chain
    // 64× longer takes longer (structure, not a timing threshold).
    // With it, the throughput half (`wide_ns=`): the same additions in eight independent
    // chains, likewise longer for 64× the additions.
    let probed = |s: &mut Session, adds: u64| -> (Option<u64>, Option<u64>) {
        let line = format!("run 0 iters=1 samples=2 probe={adds}");
        let reply = s.ask(&line);
        let b = parse_samples(&reply, 2).unwrap_or_else(|e| panic!("'{line}' got '{reply}': {e}"));
        (b.probe_ns, b.wide_ns)
    };
    let (short, short_wide) = probed(&mut s, 1024);
    let (long, long_wide) = probed(&mut s, 65536);
    if !features.speed_probe {
        assert_eq!(
            (short, short_wide, long, long_wide),
            (None, None, None, None),
            "a worker without the probe sends none of its tokens"
        );
    }
    if features.speed_probe {
        let (short, long) = (
            short.expect("probe_ns= in the reply to probe=1024"),
            long.expect("probe_ns= in the reply to probe=65536"),
        );
        // 64 times the additions take longer. The short chain reads some time unless it is
        // shorter than one step of the timer (a generic timer that qemu steps by the
        // microsecond): then 0 is what an honest read of it gives.
        let below_a_step =
            |short: u64, long: u64| short == 0 && (long as f64 / 64.0) < h.timer.resolution_ns;
        assert!(
            (short > 0 || below_a_step(short, long)) && long > short,
            "probe_ns {short} (1024 adds), {long} (65536 adds), timer {:?}",
            h.timer
        );
        let (short_wide, long_wide) = (
            short_wide.expect("wide_ns= in the reply to probe=1024"),
            long_wide.expect("wide_ns= in the reply to probe=65536"),
        );
        assert!(
            (short_wide > 0 || below_a_step(short_wide, long_wide)) && long_wide > short_wide,
            "wide_ns {short_wide} (1024 adds), {long_wide} (65536 adds), timer {:?}",
            h.timer
        );
    }
    let plain = s.ask("run 0 iters=1 samples=2");
    assert!(
        !plain.contains("probe_ns=") && !plain.contains("wide_ns="),
        "no probe asked, none sent: {plain}"
    );

    // probe
    let probe = parse_probe(&s.ask("probe"));
    assert_eq!(probe.pid, s.pid);
    assert!(probe.cpu < 65536, "cpu: {probe:?}");
    assert!(
        probe.env_bytes >= "VERNIER_FDS=3,4\0".len() as u64,
        "env_bytes counts at least VERNIER_FDS: {probe:?}"
    );
    assert_ne!(probe.stack, 0);

    // Bad lines: the documented error, and the worker keeps serving.
    let n = names.len();
    let bad: [(&str, String); 10] = [
        (
            "run 0 iters=1 samples=1 probe=0",
            "error bad option 'probe=0' in 'run 0 iters=1 samples=1 probe=0'".into(),
        ),
        (
            "run 0 iters=1 samples=1 probe=x",
            "error bad option 'probe=x' in 'run 0 iters=1 samples=1 probe=x'".into(),
        ),
        ("frobnicate", "error unknown command 'frobnicate'".into()),
        (
            "run 0 iters=0 samples=1",
            "error bad option 'iters=0' in 'run 0 iters=0 samples=1'".into(),
        ),
        (
            "run 99 iters=1 samples=1",
            format!("error no benchmark 99 (there are {n})"),
        ),
        (
            "hello 2",
            "error unsupported protocol version 2 (this worker speaks 1)".into(),
        ),
        (
            "run 0 samples=1",
            "error bad option 'iters' in 'run 0 samples=1'".into(),
        ),
        (
            "run x iters=1 samples=1",
            "error bad option 'x' in 'run x iters=1 samples=1'".into(),
        ),
        (
            "run 0 iters=1 samples=zero",
            "error bad option 'samples=zero' in 'run 0 iters=1 samples=zero'".into(),
        ),
        ("", "error unknown command ''".into()),
    ];
    for (line, expected) in &bad {
        assert_eq!(&s.ask(line), expected, "reply to '{line}'");
        assert_eq!(hello(&mut s).pid, s.pid, "still serving after '{line}'");
    }

    // quit
    assert_eq!(s.ask("quit"), "bye");
    let (status, stdout, stderr) = s.wait(REPLY_TIMEOUT);
    assert_eq!(
        status.code(),
        Some(0),
        "exit after quit ({status:?}); stderr:\n{stderr}"
    );
    assert!(
        !stdout.contains("samples ") && !stdout.contains("hello 1 "),
        "protocol replies leaked to stdout:\n{stdout}"
    );
    Report {
        hello: h,
        names,
        probe,
        stdout,
        stderr,
    }
}

/// The signal that ended a worker, if any.
pub fn signal_of(status: &ExitStatus) -> Option<i32> {
    status.signal()
}
