//! The worker protocol (`docs/protocol.md`): line formats for both sides. The worker side
//! (`serve`) is used by `Suite` when a runner launched the process; the runner side parses the
//! replies. Pure text handling here; the pipes and processes live with their users.

mod complexity;
pub mod memory;
mod samples;
pub mod serve;

pub use samples::{parse_samples, samples_line, MAX_SAMPLE_VALUE};
pub use serve::{serve, Worker};

use crate::measure::Batch;
use crate::samples::{CounterColumn, GC_COLLECTIONS};
use crate::timer::{TimerInfo, TimerKind};
use std::fmt::Write as _;

/// Protocol version spoken by this crate.
pub const VERSION: u32 = 1;
/// Environment variable naming the protocol's file descriptors, `R,W`.
pub const FDS_ENV: &str = "VERNIER_FDS";
/// Environment variable naming the runner's state file descriptor (docs/protocol.md): a file
/// with no name, shared by every worker the runner starts, for what one learns for the next.
pub const STATE_FD_ENV: &str = "VERNIER_STATE_FD";
/// The descriptor the runner puts its state file on in every worker.
pub const STATE_FD: i32 = 5;

/// Percent-encode a benchmark name (bytes outside `A-Za-z0-9-_./:+,` become `%XX`).
pub fn encode_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-_./:+,".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Decode a percent-encoded name.
pub fn decode_name(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .ok_or_else(|| format!("truncated escape in name '{}'", clip(s)))?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("bad escape '%{hex}' in name '{}'", clip(s)));
            }
            out.push(
                u8::from_str_radix(hex, 16)
                    .map_err(|_| format!("bad escape '%{hex}' in name '{}'", clip(s)))?,
            );
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("name '{}' is not UTF-8", clip(s)))
}

/// Which benchmark a `run` command names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchRef {
    Index(usize),
    /// The harness's loop around an empty body.
    Empty,
    /// The same loop around an empty future (`async {}`) awaited on the executor of the async
    /// benchmark at this index (`run empty_future:<index>`).
    EmptyFuture(usize),
}

/// The reserved benchmark of `run empty_future:<index>`.
const EMPTY_FUTURE: &str = "empty_future:";

/// A `run` request: `samples` samples of `iters` iterations of `bench`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRequest {
    pub bench: BenchRef,
    pub iters: u64,
    pub samples: usize,
    /// Options this side did not interpret (kept for extensions such as `counters=`).
    pub extra: Vec<(String, String)>,
}

/// A command from the runner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Hello(u32),
    List,
    Run(RunRequest),
    Probe,
    /// The address of each benchmark's measured-loop function (`vernier asm`).
    Loops,
    Quit,
}

impl Command {
    pub fn to_line(&self) -> String {
        match self {
            Command::Hello(v) => format!("hello {v}"),
            Command::List => "list".into(),
            Command::Run(RunRequest {
                bench,
                iters,
                samples,
                extra,
            }) => {
                let b = match bench {
                    BenchRef::Index(i) => i.to_string(),
                    BenchRef::Empty => "empty".into(),
                    BenchRef::EmptyFuture(i) => format!("{EMPTY_FUTURE}{i}"),
                };
                let mut s = format!("run {b} iters={iters} samples={samples}");
                for (k, v) in extra {
                    let _ = write!(s, " {k}={v}");
                }
                s
            }
            Command::Probe => "probe".into(),
            Command::Loops => "loops".into(),
            Command::Quit => "quit".into(),
        }
    }

    /// Parse a command line; the error is the text of the `error` reply.
    pub fn parse(line: &str) -> Result<Command, String> {
        let mut toks = line.split_whitespace();
        let cmd = toks.next().unwrap_or("");
        match cmd {
            "hello" => {
                let t = toks.next().unwrap_or("");
                let v = t
                    .parse()
                    .map_err(|_| format!("bad option '{t}' in '{line}'"))?;
                Ok(Command::Hello(v))
            }
            "list" => Ok(Command::List),
            "probe" => Ok(Command::Probe),
            "loops" => Ok(Command::Loops),
            "quit" => Ok(Command::Quit),
            "run" => {
                let which = toks
                    .next()
                    .ok_or_else(|| format!("bad option '' in '{line}'"))?;
                let index = |i: &str| {
                    i.parse()
                        .map_err(|_| format!("bad option '{which}' in '{line}'"))
                };
                let bench = if which == "empty" {
                    BenchRef::Empty
                } else if let Some(i) = which.strip_prefix(EMPTY_FUTURE) {
                    BenchRef::EmptyFuture(index(i)?)
                } else {
                    BenchRef::Index(index(which)?)
                };
                let (mut iters, mut samples, mut extra) = (None, None, Vec::new());
                for t in toks {
                    let (k, v) = t
                        .split_once('=')
                        .ok_or_else(|| format!("bad option '{t}' in '{line}'"))?;
                    match k {
                        "iters" => iters = v.parse::<u64>().ok().filter(|&n| n >= 1),
                        "samples" => samples = v.parse::<usize>().ok().filter(|&n| n >= 1),
                        // Kept in `extra` for the worker, checked here so every harness
                        // answers a bad value alike.
                        "probe" if parse_probe_adds(v).is_none() => {
                            return Err(format!("bad option '{t}' in '{line}'"))
                        }
                        "cache" if v != "hot" && v != "cold" => {
                            return Err(format!("bad option '{t}' in '{line}'"))
                        }
                        _ => extra.push((k.to_string(), v.to_string())),
                    }
                    if (k == "iters" && iters.is_none()) || (k == "samples" && samples.is_none()) {
                        return Err(format!("bad option '{t}' in '{line}'"));
                    }
                }
                Ok(Command::Run(RunRequest {
                    bench,
                    iters: iters.ok_or_else(|| format!("bad option 'iters' in '{line}'"))?,
                    samples: samples.ok_or_else(|| format!("bad option 'samples' in '{line}'"))?,
                    extra,
                }))
            }
            other => Err(format!("unknown command '{other}'")),
        }
    }
}

pub use crate::plan::MAX_PROBE_ADDS;

/// The value of a `probe=<adds>` option: 1 to [`MAX_PROBE_ADDS`] additions.
pub fn parse_probe_adds(v: &str) -> Option<u64> {
    v.parse::<u64>()
        .ok()
        .filter(|&n| (1..=MAX_PROBE_ADDS).contains(&n))
}

/// What a worker says about itself in its `hello` reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    pub version: u32,
    /// `<name>/<version>` of the harness.
    pub implementation: String,
    pub timer: TimerInfo,
    pub debug_build: bool,
    pub pid: u32,
    /// The interpreter running the worker (`interp=`, percent-encoded on the wire): a Python
    /// worker's implementation, version and build flags.
    pub interp: Option<String>,
    /// The worker process's hash seed (`hashseed=`): Python's `PYTHONHASHSEED`, varied per
    /// process like the environment padding.
    pub hash_seed: Option<String>,
}

impl Hello {
    pub fn to_line(&self) -> String {
        let mut s = format!(
            "hello {} impl={} timer={} resolution_ns={} overhead_ns={} tsc_hz={} build={} pid={}",
            self.version,
            self.implementation,
            self.timer.kind.as_str(),
            self.timer.resolution_ns,
            self.timer.overhead_ns,
            self.timer.tsc_hz.unwrap_or(0.0),
            if self.debug_build { "debug" } else { "release" },
            self.pid
        );
        if let Some(i) = &self.interp {
            let _ = write!(s, " interp={}", encode_name(i));
        }
        if let Some(h) = &self.hash_seed {
            let _ = write!(s, " hashseed={h}");
        }
        s
    }

    pub fn parse(line: &str) -> Result<Hello, String> {
        let mut toks = line.split_whitespace();
        if toks.next() != Some("hello") {
            return Err(format!("expected a 'hello' reply, got '{}'", clip(line)));
        }
        let version = toks.next().and_then(|v| v.parse().ok()).ok_or_else(|| {
            format!(
                "malformed hello reply: no protocol version after 'hello' ('{}')",
                clip(line)
            )
        })?;
        let mut h = Hello {
            version,
            implementation: String::new(),
            timer: TimerInfo {
                kind: TimerKind::Monotonic,
                resolution_ns: 0.0,
                overhead_ns: 0.0,
                tsc_hz: None,
            },
            debug_build: false,
            pid: 0,
            interp: None,
            hash_seed: None,
        };
        let bad = |t: &str| {
            format!(
                "malformed token '{}' in hello reply '{}'",
                clip(t),
                clip(line)
            )
        };
        for t in toks {
            let Some((k, v)) = t.split_once('=') else {
                return Err(bad(t));
            };
            // A time or a frequency: a finite number, not negative.
            let num = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        format!(
                            "malformed hello reply: field '{k}' is '{}', expected a finite \
                             number ≥ 0 ('{}')",
                            clip(v),
                            clip(line)
                        )
                    })
            };
            match k {
                "impl" => h.implementation = v.to_string(),
                "timer" => {
                    h.timer.kind = match v {
                        "tsc" => TimerKind::Tsc,
                        "monotonic" => TimerKind::Monotonic,
                        "cntvct" => TimerKind::Cntvct,
                        "qpc" => TimerKind::Qpc,
                        "mach" => TimerKind::Mach,
                        _ => return Err(bad(t)),
                    }
                }
                "resolution_ns" => h.timer.resolution_ns = num()?,
                "overhead_ns" => h.timer.overhead_ns = num()?,
                "tsc_hz" => h.timer.tsc_hz = Some(num()?).filter(|&x| x > 0.0),
                "build" => h.debug_build = v == "debug",
                "interp" => h.interp = Some(decode_name(v)?),
                "hashseed" => h.hash_seed = Some(v.to_string()),
                "pid" => {
                    h.pid = v.parse().map_err(|_| {
                        format!(
                            "malformed hello reply: field 'pid' is '{}', expected a process id",
                            clip(v)
                        )
                    })?
                }
                _ => {}
            }
        }
        Ok(h)
    }
}

/// The options of an async benchmark's `list` line: ` executor=<percent-encoded name>
/// on_calling_core=<0|1>`.
pub fn executor_options(name: &str, on_calling_core: bool) -> String {
    format!(
        " executor={} on_calling_core={}",
        encode_name(name),
        u8::from(on_calling_core)
    )
}

/// The executor a `list` line's options announce (`executor=`, `on_calling_core=`; absent:
/// the work runs on the calling core): `None` for a synchronous benchmark.
pub fn parse_executor_options<'a>(
    options: impl IntoIterator<Item = &'a str>,
) -> Result<Option<(String, bool)>, String> {
    let (mut name, mut on_core) = (None, true);
    for o in options {
        match o.split_once('=') {
            Some(("executor", v)) => name = Some(decode_name(v)?),
            Some(("on_calling_core", v)) => {
                on_core = match v {
                    "1" => true,
                    "0" => false,
                    _ => return Err(format!("'on_calling_core={v}' is not 0 or 1")),
                }
            }
            _ => {}
        }
    }
    Ok(name.map(|n| (n, on_core)))
}

/// Shorten a line for an error message.
pub fn clip(line: &str) -> String {
    if line.len() > 200 {
        let mut end = 200;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &line[..end])
    } else {
        line.to_string()
    }
}

/// The `loops` reply: `loop <index> addr=0x<hex>` per benchmark, then `end <count>`.
pub fn loops_reply(addrs: &[usize]) -> String {
    let mut s = String::new();
    for (i, a) in addrs.iter().enumerate() {
        let _ = writeln!(s, "loop {i} addr={a:#x}");
    }
    let _ = write!(s, "end {}", addrs.len());
    s
}

/// One line of a `loops` reply: `Some((index, address))`, or `None` for `end …`.
pub fn parse_loop_line(line: &str) -> Result<Option<(usize, u64)>, String> {
    let mut t = line.split_whitespace();
    match t.next() {
        Some("end") => return Ok(None),
        Some("loop") => {}
        _ => return Err(format!("malformed 'loops' reply line '{}'", clip(line))),
    }
    let index = t
        .next()
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| format!("malformed 'loops' reply line '{}'", clip(line)))?;
    let addr = t
        .filter_map(|kv| kv.strip_prefix("addr="))
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .ok_or_else(|| format!("no 'addr=0x…' in 'loops' reply line '{}'", clip(line)))?;
    Ok(Some((index, addr)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in ["sqrt", "set event hot", "a%b=c", "π/2", "x,y"] {
            assert_eq!(decode_name(&encode_name(n)).unwrap(), n);
        }
        assert_eq!(encode_name("set event"), "set%20event");
    }

    #[test]
    fn commands_round_trip() {
        let c = Command::Run(RunRequest {
            bench: BenchRef::Index(3),
            iters: 4096,
            samples: 16,
            extra: vec![("cache".into(), "cold".into())],
        });
        assert_eq!(Command::parse(&c.to_line()).unwrap(), c);
        assert_eq!(
            Command::parse("run empty iters=1 samples=1")
                .unwrap()
                .to_line(),
            "run empty iters=1 samples=1"
        );
        assert_eq!(
            Command::parse("run empty_future:2 iters=8 samples=1").unwrap(),
            Command::Run(RunRequest {
                bench: BenchRef::EmptyFuture(2),
                iters: 8,
                samples: 1,
                extra: Vec::new(),
            })
        );
        assert!(Command::parse("run empty_future:x iters=1 samples=1")
            .unwrap_err()
            .contains("'empty_future:x'"));
    }

    #[test]
    fn a_list_line_announces_an_executor() {
        let opts = executor_options("tokio multi-thread", false);
        assert_eq!(opts, " executor=tokio%20multi-thread on_calling_core=0");
        assert_eq!(
            parse_executor_options(opts.split_whitespace()).unwrap(),
            Some(("tokio multi-thread".to_string(), false))
        );
        assert_eq!(
            parse_executor_options(["executor=smol"]).unwrap(),
            Some(("smol".to_string(), true))
        );
        assert_eq!(parse_executor_options(["threads=2"]).unwrap(), None);
        assert!(parse_executor_options(["executor=smol", "on_calling_core=x"]).is_err());
    }

    #[test]
    fn bad_commands_are_named() {
        assert_eq!(
            Command::parse("frobnicate").unwrap_err(),
            "unknown command 'frobnicate'"
        );
        assert!(Command::parse("run 0 iters=0 samples=1")
            .unwrap_err()
            .contains("iters=0"));
        assert!(Command::parse("run 0 samples=1")
            .unwrap_err()
            .contains("iters"));
        assert!(Command::parse("run x iters=1 samples=1")
            .unwrap_err()
            .contains("'x'"));
    }

    #[test]
    fn samples_reply_is_checked() {
        let b = parse_samples("samples 2 ns=10,20 ctr.page-faults=1,1", 2).unwrap();
        assert_eq!(b.ns, vec![10, 20]);
        assert_eq!(b.counters[0].values, vec![Some(1), Some(1)]);
        assert!(parse_samples("samples 2 ns=10", 2).is_err());
        assert!(parse_samples("samples 1 ns=1x", 1)
            .unwrap_err()
            .contains("1x"));
        assert_eq!(
            parse_samples("error no benchmark 7 (there are 2)", 1).unwrap_err(),
            "no benchmark 7 (there are 2)"
        );
    }

    #[test]
    fn counter_tokens_keep_gaps_and_scaled_flags() {
        let line = "samples 3 ns=10,20,30 ctr.cycles=1200,,1210 ctr.context-switches=0,1,0 \
                    scaled.cycles=1,0,0";
        let b = parse_samples(line, 3).unwrap();
        assert_eq!(b.counters[0].event, "cycles");
        assert_eq!(b.counters[0].values, vec![Some(1200), None, Some(1210)]);
        assert_eq!(b.counters[0].scaled, vec![true, false, false]);
        assert_eq!(b.counters[1].values, vec![Some(0), Some(1), Some(0)]);
        assert!(b.counters[1].scaled.is_empty());
        // The worker's own formatting reads back the same.
        assert_eq!(samples_line(&b), line);
        assert_eq!(
            parse_samples(&samples_line(&b), 3).unwrap().counters,
            b.counters
        );
        // The engine's columns of counter samples format to the same tokens.
        use crate::counters::{to_columns, CounterSample, Event};
        let mut a = CounterSample::default();
        a.set(Event::Cycles, Some(1200), true);
        a.set(Event::ContextSwitches, Some(0), false);
        let mut m = CounterSample::default();
        m.set(Event::ContextSwitches, Some(1), false);
        let mut c = CounterSample::default();
        c.set(Event::Cycles, Some(1210), false);
        c.set(Event::ContextSwitches, Some(0), false);
        let cols = to_columns(
            &[Event::Cycles, Event::Instructions, Event::ContextSwitches],
            &[a, m, c],
        );
        let from_cols = Batch {
            ns: vec![10, 20, 30],
            counters: cols,
            ..Batch::default()
        };
        assert_eq!(samples_line(&from_cols), line);
        assert!(parse_samples("samples 2 ns=1,2 ctr.cycles=1,2 scaled.cycles=1", 2).is_err());
        assert!(parse_samples("samples 2 ns=1,2 scaled.cycles=1,0", 2).is_err());
        assert!(parse_samples("samples 2 ns=1,2 ctr.cycles=1,x", 2).is_err());
        // A Python worker's garbage collections: a column of their own, checked like one.
        let gc = parse_samples("samples 2 ns=1,2 gc.collections=0,3", 2).unwrap();
        assert_eq!(gc.counters[0].event, GC_COLLECTIONS);
        assert_eq!(gc.counters[0].values, vec![Some(0), Some(3)]);
        assert!(parse_samples("samples 2 ns=1,2 gc.collections=1", 2).is_err());
        // Written back as it came, and a worker's notes after every other token, unread.
        let mut back = gc;
        back.notes = vec![("tracemalloc.net_bytes".into(), "0,8".into())];
        let line = samples_line(&back);
        assert_eq!(
            line,
            "samples 2 ns=1,2 gc.collections=0,3 tracemalloc.net_bytes=0,8"
        );
        assert!(parse_samples(&line, 2).unwrap().notes.is_empty());
    }

    #[test]
    fn thread_tokens_round_trip_and_are_checked() {
        let line = "samples 2 ns=50,40 cpus=2 thread_ns.0=20,40 thread_ns.1=50,30";
        let b = parse_samples(line, 2).unwrap();
        assert_eq!(b.thread_ns, vec![vec![20, 40], vec![50, 30]]);
        assert_eq!(b.cpus, Some(2));
        assert_eq!(samples_line(&b), line);
        // A column of another length, or out of order, is malformed.
        assert!(parse_samples("samples 2 ns=5,4 thread_ns.0=1", 2).is_err());
        assert!(parse_samples("samples 1 ns=5 thread_ns.1=1", 1).is_err());
        assert!(parse_samples("samples 1 ns=5 cpus=x", 1).is_err());
        // The threads' on-CPU time and run-queue wait: carried when read, absent (unknown) from
        // an older worker's reply, which parses as before.
        assert!(b.thread_cpu_ns.is_empty() && b.thread_wait_ns.is_empty());
        let timed = "samples 2 ns=50,40 cpus=2 thread_ns.0=20,40 thread_ns.1=50,30 \
                     thread_cpu_ns.0=20,39 thread_cpu_ns.1=21,30 thread_wait_ns.0=0,1 \
                     thread_wait_ns.1=29,0";
        let t = parse_samples(timed, 2).unwrap();
        assert_eq!(t.thread_cpu_ns, vec![vec![20, 39], vec![21, 30]]);
        assert_eq!(t.thread_wait_ns, vec![vec![0, 1], vec![29, 0]]);
        assert_eq!(samples_line(&t), timed);
        // On-CPU times without waits (a kernel without schedstat).
        let no_wait = "samples 1 ns=5 cpus=2 thread_ns.0=5 thread_ns.1=4 thread_cpu_ns.0=5 \
                       thread_cpu_ns.1=4";
        let n = parse_samples(no_wait, 1).unwrap();
        assert!(n.thread_wait_ns.is_empty() && n.thread_cpu_ns.len() == 2);
        assert_eq!(samples_line(&n), no_wait);
        // A column per thread, or none.
        let short = "samples 1 ns=5 thread_ns.0=5 thread_ns.1=4 thread_wait_ns.0=1";
        assert!(parse_samples(short, 1)
            .unwrap_err()
            .contains("1 'thread_wait_ns' columns for 2 threads"));
    }

    #[test]
    fn loops_reply_round_trips() {
        let r = loops_reply(&[0x1234, 0]);
        let lines: Vec<_> = r.lines().map(|l| parse_loop_line(l).unwrap()).collect();
        assert_eq!(lines, vec![Some((0, 0x1234)), Some((1, 0)), None]);
        assert!(parse_loop_line("loop 0").is_err());
        assert!(Command::parse("run 0 iters=1 samples=1 cache=tepid").is_err());
        assert_eq!(Command::parse("loops").unwrap(), Command::Loops);
    }

    #[test]
    fn hello_round_trips() {
        let h = Hello {
            version: 1,
            implementation: "vernier-rust/0.1.0".into(),
            timer: TimerInfo {
                kind: TimerKind::Tsc,
                resolution_ns: 0.5,
                overhead_ns: 12.0,
                tsc_hz: Some(2.8e9),
            },
            debug_build: false,
            pid: 42,
            interp: None,
            hash_seed: None,
        };
        assert_eq!(Hello::parse(&h.to_line()).unwrap(), h);
        let py = Hello {
            interp: Some("cpython 3.13.1 debug free-threading".into()),
            hash_seed: Some("1234".into()),
            ..h
        };
        let line = py.to_line();
        assert!(line.contains(" interp=cpython%203.13.1%20debug%20free-threading hashseed=1234"));
        assert_eq!(Hello::parse(&line).unwrap(), py);
        // The Arm generic timer: its name and its rate (from `cntfrq_el0`) in `tsc_hz`.
        let arm = Hello {
            timer: TimerInfo {
                kind: TimerKind::Cntvct,
                resolution_ns: 40.0,
                overhead_ns: 30.0,
                tsc_hz: Some(25e6),
            },
            interp: None,
            hash_seed: None,
            ..py
        };
        let line = arm.to_line();
        assert!(line.contains(" timer=cntvct ") && line.contains(" tsc_hz=25000000 "));
        assert_eq!(Hello::parse(&line).unwrap(), arm);
    }
}
