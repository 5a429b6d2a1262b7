//! `vernier load`: a bounded background load, for checking how a benchmark holds up on a
//! busy machine. It always stops by itself when its duration is over, and on Ctrl-C
//! (SIGINT) or SIGTERM: workers poll a flag between short blocks of work.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::host::affinity::pin_current_thread;
use crate::host::{machine, CpuSet, SysRoot};
use crate::term::{install_stop_handler, interrupted as stop_requested};

/// Cache thrasher buffer when the last-level cache size is unknown.
const DEFAULT_CACHE_BUFFER: usize = 32 << 20;
/// Upper bound of the cache thrasher buffer (some virtual machines report a host's LLC).
const MAX_CACHE_BUFFER: usize = 1 << 30;
/// Memory streamer buffer, shared out among the threads.
const STREAM_BUFFER: usize = 256 << 20;

/// What kind of work to generate.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// Integer arithmetic in registers: takes CPU time, leaves caches alone
    Cpu,
    /// Random reads over twice the last-level cache: evicts everyone's cached data
    Cache,
    /// Sequential read-modify-write over 256 MiB: takes memory bandwidth
    Memory,
}

/// `vernier load …`
#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// Number of worker threads (default: one per CPU this process may use)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// The former name of --threads. `--cpus` is a CPU list everywhere else (`system show`,
    /// `system tune`), so here it is accepted, said to be the thread count, and hidden.
    #[arg(long, value_name = "N", hide = true, conflicts_with = "threads")]
    pub cpus: Option<usize>,
    /// The kind of load
    #[arg(long, value_enum, default_value_t = LoadKind::Cpu)]
    pub kind: LoadKind,
    /// Seconds before it stops by itself
    #[arg(
        long,
        default_value_t = 10.0,
        value_name = "S",
        allow_negative_numbers = true
    )]
    pub duration: f64,
    /// Pin the threads to these CPUs, round-robin (several threads may share one CPU)
    #[arg(long, value_name = "LIST")]
    pub pin: Option<CpuSet>,
    /// Directory standing for `/` when reading the cache size (default: $VERNIER_SYSROOT, else /)
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

fn lcg(x: u64) -> u64 {
    x.wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
}

enum Work {
    Cpu,
    Cache(Arc<Vec<u64>>),
    Memory(Vec<u64>),
}

/// One worker: short blocks of work until the deadline or a stop signal. Returns blocks done.
fn worker(mut work: Work, deadline: Instant, seed: u64) -> u64 {
    let mut blocks = 0u64;
    let mut x = seed | 1;
    let mut sink = 0u64;
    while Instant::now() < deadline && !stop_requested() {
        match &mut work {
            Work::Cpu => {
                for _ in 0..100_000 {
                    x = lcg(x);
                }
            }
            Work::Cache(buf) => {
                let n = buf.len() as u64;
                for _ in 0..20_000 {
                    x = lcg(x);
                    sink = sink.wrapping_add(buf[((x >> 17) % n) as usize]);
                }
            }
            Work::Memory(buf) => {
                // 1 MiB per block, walking the thread's slice.
                let chunk = (1 << 20) / 8;
                let start = (blocks as usize * chunk) % buf.len().max(1);
                let end = (start + chunk).min(buf.len());
                for v in &mut buf[start..end] {
                    *v = v.wrapping_add(1);
                }
                sink = sink.wrapping_add(buf[start]);
            }
        }
        blocks += 1;
    }
    std::hint::black_box((x, sink));
    blocks
}

/// Run `vernier load`; returns the exit code.
pub fn load_command(args: LoadArgs) -> Result<i32> {
    if !(args.duration.is_finite() && args.duration > 0.0) {
        bail!("--duration must be a positive number of seconds");
    }
    if let Some(n) = args.cpus {
        eprintln!(
            "vernier load: --cpus {n} is read as --threads {n} (the number of load threads); \
             write --threads, and --pin LIST for the CPUs (--cpus is a CPU list in `vernier \
             system`)"
        );
    }
    let threads = args
        .threads
        .or(args.cpus)
        .unwrap_or_else(|| crate::host::affinity::allowed_cpus().len().max(1));
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let pins: Vec<usize> = args
        .pin
        .as_ref()
        .map(|p| p.iter().collect())
        .unwrap_or_default();
    if args.pin.is_some() && pins.is_empty() {
        bail!("--pin needs at least one CPU");
    }
    install_stop_handler(&[libc::SIGINT, libc::SIGTERM], false)?;
    let root = SysRoot::from_option(args.root.as_deref());

    let (desc, cache_buf) = match args.kind {
        LoadKind::Cpu => ("cpu-bound spin".to_string(), None),
        LoadKind::Cache => {
            let (bytes, from) = match machine::last_level_cache_bytes(&root) {
                Some(llc) => (
                    (2 * llc as usize).min(MAX_CACHE_BUFFER),
                    "2× the last-level cache",
                ),
                None => (DEFAULT_CACHE_BUFFER, "default; cache size unknown"),
            };
            let words = bytes / 8;
            let buf: Vec<u64> = (0..words as u64).map(lcg).collect();
            (
                format!("cache thrasher over {} MiB ({from})", bytes >> 20),
                Some(Arc::new(buf)),
            )
        }
        LoadKind::Memory => (
            format!("memory streamer over {} MiB", STREAM_BUFFER >> 20),
            None,
        ),
    };
    let pinned = if pins.is_empty() {
        "unpinned".to_string()
    } else {
        format!("pinned to CPUs {}", args.pin.as_ref().unwrap())
    };
    eprintln!(
        "load: {threads} thread{} ({desc}), {pinned}, for {} s (Ctrl-C stops it)",
        if threads == 1 { "" } else { "s" },
        args.duration
    );

    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(args.duration);
    let mut handles = Vec::new();
    for i in 0..threads {
        let work = match args.kind {
            LoadKind::Cpu => Work::Cpu,
            LoadKind::Cache => Work::Cache(cache_buf.clone().expect("buffer")),
            LoadKind::Memory => Work::Memory(vec![1u64; STREAM_BUFFER / 8 / threads]),
        };
        let pin = (!pins.is_empty()).then(|| pins[i % pins.len()]);
        handles.push(std::thread::spawn(move || -> Result<u64> {
            if let Some(cpu) = pin {
                pin_current_thread(cpu)
                    .map_err(|e| anyhow::anyhow!("cannot pin to CPU {cpu}: {e}"))?;
            }
            Ok(worker(work, deadline, 0x9e3779b97f4a7c15 ^ i as u64))
        }));
    }
    let mut blocks = 0u64;
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(b)) => blocks += b,
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(_) => first_err = first_err.or(Some(anyhow::anyhow!("a load thread panicked"))),
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let how = if stop_requested() {
        "interrupted"
    } else {
        "duration reached"
    };
    eprintln!(
        "load: stopped after {:.2} s ({how}), {blocks} blocks of work",
        start.elapsed().as_secs_f64()
    );
    Ok(0)
}
