//! The deterministic mode's pipeline (`vernier run --instructions`, `vernier demo
//! --instructions`): each selected benchmark of a worker is counted under callgrind
//! (`instructions.rs`) at two iteration counts, in fresh worker processes started under
//! valgrind and driven by the protocol (`run <i> iters=K samples=1`, then `quit`), and the
//! per-iteration counts go into the usual result file marked `"mode": "instructions"`.
//!
//! The harness's empty loop is counted the same way, so a benchmark whose loop executes no
//! more instructions than the empty one is flagged `optimized-away`, as in the timed mode.
//!
//! One valgrind process serves the whole run where it can: callgrind writes a dump each time
//! the harness's sampling function returns (`--dump-after`), so each `run` command's counts
//! are in their own file and the program's start-up (50× slower under valgrind than natively)
//! is paid once, not twice per benchmark. Each benchmark is run three times in that process,
//! at N1 (a warm-up: caches, lazy set-up), N1 and N2, and the last two are differenced as
//! before. A harness whose sampling function is not found by the dump patterns (no dump
//! appears), or a worker that dies, falls back to fresh processes.

use crate::args::Common;
use crate::runner::instructions::{
    difference, parse_callgrind_output, Callgrind, EventCounts, PerIteration, DEFAULT_N1,
    DEFAULT_N2,
};
use crate::runner::worker::{Control, WorkerProcess};
use crate::term;
use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use vernier::diagnostic::{Diagnostic, Finding};
use vernier::measure::Batch;
use vernier::protocol::BenchRef;
use vernier::report;
use vernier::result::{BenchmarkResult, Harness, ResultFile, SamplesJson, Status};
use vernier::samples::Phase;

/// Under valgrind the worker's start-up and every reply take this many times longer than
/// natively (callgrind with cache and branch simulation: 20–100× on the examples), so the
/// waits of `--timeout` are multiplied by it, and the run says so.
pub const VALGRIND_SLOWDOWN: u32 = 50;
/// `--dump-after` patterns: the functions after whose return callgrind writes the counts of
/// one `run` command. In C++ the measured loops themselves (one call per batch, or per sample
/// with inputs); in Rust the sampling function around them (a dump pattern on the toggled
/// function itself stops its counting there).
pub const DUMP_AFTER: [&str; 3] = [
    "*vernier_measured_loop<*",
    "*vernier_measured_loop_inputs<*",
    "*vernier::measure::in_process::sample_routine",
];

/// The result key of a callgrind event: `Ir` is `instructions`, the others keep callgrind's
/// names (`D1mr`, `DLmw`, `Bcm`, …).
pub fn key_of(event: &str) -> String {
    let name = if event == "Ir" { "instructions" } else { event };
    format!("{name}_per_iter")
}

/// One valgrind process serving every benchmark: callgrind dumps its counts after each
/// sampling call (`DUMP_AFTER`) into `out.1`, `out.2`, …
struct Session {
    worker: WorkerProcess,
    dir: std::path::PathBuf,
    out: std::path::PathBuf,
    next_dump: u32,
}

/// Why a benchmark could not be counted in the shared process.
enum SharedError {
    /// No dump appeared: this harness's sampling function is not matched by `DUMP_AFTER`.
    NoDump,
    /// The benchmark failed (its error reply, or the worker's death).
    Failed(anyhow::Error),
}

impl Session {
    fn start(
        callgrind: &Callgrind,
        program: &Path,
        args: &[OsString],
        ctl: &Control,
    ) -> Result<Session> {
        static SESSIONS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "vernier-callgrind-{}-s{}",
            std::process::id(),
            SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow!("cannot create {}: {e}", dir.display()))?;
        let out = dir.join("callgrind.out");
        let mut cmd = callgrind.command(&out);
        for p in DUMP_AFTER {
            cmd.arg(format!("--dump-after={p}"));
        }
        cmd.arg(program).args(args);
        let worker = WorkerProcess::spawn_command(cmd, program, ctl).map_err(|e| {
            let _ = std::fs::remove_dir_all(&dir);
            anyhow!(e)
        })?;
        Ok(Session {
            worker,
            dir,
            out,
            next_dump: 1,
        })
    }

    /// One `run` of `iters` iterations; the counts of the dumps it produced (`None`: none).
    fn run(
        &mut self,
        bench: BenchRef,
        iters: u64,
        ns: &mut Vec<u64>,
    ) -> Result<Option<EventCounts>> {
        let mut b = Batch::default();
        self.worker
            .run(bench, iters, 1, &mut b)
            .map_err(|e| anyhow!(e))?;
        ns.extend(b.ns);
        let mut total: Option<EventCounts> = None;
        loop {
            let file = self.out.with_extension(format!("out.{}", self.next_dump));
            let Ok(text) = std::fs::read_to_string(&file) else {
                break;
            };
            let _ = std::fs::remove_file(&file);
            self.next_dump += 1;
            let c = parse_callgrind_output(&text)?;
            total = Some(match total {
                None => c,
                Some(mut t) => {
                    for (i, n) in c.names.iter().enumerate() {
                        match t.names.iter().position(|m| m == n) {
                            Some(j) => t.values[j] += c.values[i],
                            None => bail!("callgrind dumps with different events ({n})"),
                        }
                    }
                    t
                }
            });
        }
        Ok(total)
    }

    /// `bench` at N1 (warm-up), N1 and N2 iterations.
    fn count(&mut self, bench: BenchRef, ns: &mut Vec<u64>) -> Result<PerIteration, SharedError> {
        let t0 = Instant::now();
        let mut once = |iters: u64, ns: &mut Vec<u64>| match self.run(bench, iters, ns) {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(SharedError::NoDump),
            Err(e) => Err(SharedError::Failed(e)),
        };
        once(DEFAULT_N1, &mut Vec::new())?;
        let at_n1 = once(DEFAULT_N1, ns)?;
        let at_n2 = once(DEFAULT_N2, ns)?;
        let per_iter =
            difference(DEFAULT_N1, &at_n1, DEFAULT_N2, &at_n2).map_err(SharedError::Failed)?;
        if at_n2.values.iter().all(|&v| v == 0) {
            return Err(SharedError::Failed(anyhow!(
                "nothing was counted: no function matching `*vernier_measured_loop*` ran (is the \
                 measured loop inlined, or renamed?)"
            )));
        }
        Ok(PerIteration {
            n1: DEFAULT_N1,
            n2: DEFAULT_N2,
            at_n1,
            at_n2,
            per_iter,
            wall: t0.elapsed(),
        })
    }

    fn finish(self, timeout: Duration) {
        let _ = self.worker.quit_and_wait(timeout);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Counts `bench` in the shared process when it can (starting it if needed), else in fresh
/// processes; `shared` turns false for good when the harness produces no dump.
#[allow(clippy::too_many_arguments)]
fn count_any(
    callgrind: &Callgrind,
    program: &Path,
    args: &[OsString],
    ctl: &Control,
    bench: BenchRef,
    session: &mut Option<Session>,
    shared: &mut bool,
    ns: &mut Vec<u64>,
) -> Result<PerIteration> {
    if *shared {
        if session.is_none() {
            *session = Some(Session::start(callgrind, program, args, ctl)?);
        }
        let s = session.as_mut().unwrap();
        match s.count(bench, ns) {
            Ok(p) => return Ok(p),
            Err(SharedError::Failed(e)) => {
                if !s.worker.is_alive() {
                    if let Some(s) = session.take() {
                        s.finish(Duration::from_secs(1));
                    }
                }
                return Err(e);
            }
            Err(SharedError::NoDump) => {
                eprintln!(
                    "vernier: this harness's sampling function is not one callgrind can dump \
                     after ({}): each benchmark is counted in two fresh processes instead",
                    DUMP_AFTER.join(", ")
                );
                *shared = false;
                if let Some(s) = session.take() {
                    s.finish(ctl.timeout);
                }
                ns.clear();
            }
        }
    }
    count(callgrind, program, args, ctl, bench, ns)
}

/// One benchmark (or the empty loop) counted at N1 and N2 iterations, each in a fresh process.
fn count(
    callgrind: &Callgrind,
    program: &Path,
    args: &[OsString],
    ctl: &Control,
    bench: BenchRef,
    ns: &mut Vec<u64>,
) -> Result<PerIteration> {
    let mut launch = |iters: u64, mut cmd: Command| -> Result<()> {
        cmd.arg(program).args(args);
        let mut w = WorkerProcess::spawn_command(cmd, program, ctl).map_err(|e| anyhow!(e))?;
        let mut b = Batch::default();
        w.run(bench, iters, 1, &mut b).map_err(|e| anyhow!(e))?;
        ns.extend(b.ns);
        w.quit_and_wait(ctl.timeout).map_err(|e| anyhow!(e))
    };
    callgrind.per_iteration(DEFAULT_N1, DEFAULT_N2, &mut launch)
}

/// The result entry of a counted benchmark (`index` among the `located` loop functions, where
/// its loop's moves are read from its disassembly).
pub fn result_of(
    name: &str,
    (located, index): (&[crate::runner::disasm::LocatedLoop], usize),
    p: &PerIteration,
    ns: &[u64],
    empty_ir: Option<f64>,
) -> BenchmarkResult {
    let mut r = BenchmarkResult::failed(name, String::new());
    r.status = Status::Ok;
    r.error = None;
    r.iters_per_sample = p.n2;
    r.total_s = p.wall.as_secs_f64();
    r.stop = "counted".into();
    r.counters = Some(p.per_iter.iter().map(|(e, v)| (key_of(e), *v)).collect());
    let mut counters: BTreeMap<String, Vec<Option<u64>>> = BTreeMap::new();
    for (i, e) in p.at_n2.names.iter().enumerate() {
        counters.insert(e.clone(), vec![p.at_n1.get(e), Some(p.at_n2.values[i])]);
    }
    r.samples = SamplesJson {
        iters: vec![p.n1, p.n2],
        ns: if ns.len() == 2 {
            ns.to_vec()
        } else {
            vec![0, 0]
        },
        t_s: vec![0.0, 0.0],
        phase: vec![Phase::Measure, Phase::Measure],
        process: vec![0, 1],
        counters,
        ..SamplesJson::default()
    };
    if let (Some(ir), Some(empty)) = (p.instructions(), empty_ir) {
        let check = weighed(ir, empty, || {
            crate::runner::disasm::moves_in(located, index).ok()
        });
        if check.removed() {
            let found = Finding::OptimizedAway(check.evidence(None));
            r.diagnostics.push(Diagnostic::from(&found));
        }
    }
    r
}

/// Count benchmark `index` of `program` and the harness's empty loop under callgrind, in one
/// valgrind process (or fresh ones when the harness cannot be dumped in one): the evidence that
/// tells a removed body from one whose work fits in the loop's own cycle. `timeout` is the
/// native wait for a reply. Errors when valgrind is not there or the count fails.
pub fn check_instructions(
    program: &Path,
    args: &[OsString],
    ctl: &Control,
    index: usize,
) -> Result<vernier::analyze::InstructionsCheck> {
    let callgrind = Callgrind::from_env();
    callgrind.check()?;
    let ctl = Control {
        timeout: ctl.timeout * VALGRIND_SLOWDOWN,
        ..ctl.clone()
    };
    let mut session = None;
    let mut shared = true;
    let mut count = |bench| {
        count_any(
            &callgrind,
            program,
            args,
            &ctl,
            bench,
            &mut session,
            &mut shared,
            &mut Vec::new(),
        )
    };
    let empty = count(BenchRef::Empty)?;
    let body = count(BenchRef::Index(index))?;
    if let Some(s) = session.take() {
        s.finish(ctl.timeout);
    }
    match (body.instructions(), empty.instructions()) {
        (Some(ir), Some(e)) => Ok(weighed(ir, e, || {
            crate::runner::disasm::loop_moves(program, args, index).ok()
        })),
        _ => bail!("callgrind reported no instruction count"),
    }
}

/// The instruction check of a benchmark: its count and the empty loop's, and the moves of a
/// value the loop already holds read from its disassembly by `moves` (not read when the count
/// alone shows no more instructions than the empty loop's; `None` when the loop cannot be
/// disassembled).
fn weighed(
    ir: f64,
    empty: f64,
    moves: impl FnOnce() -> Option<crate::runner::disasm::LoopMoves>,
) -> vernier::analyze::InstructionsCheck {
    let mut check = vernier::analyze::InstructionsCheck {
        instructions_per_iter: ir,
        empty_instructions_per_iter: empty,
        moves_per_iter: None,
    };
    if !check.removed() {
        check.moves_per_iter = moves().map(|m| m.per_iter(ir));
    }
    check
}

/// `--instructions`: count every selected benchmark of `program` under callgrind.
///
/// `timeout` is the native wait for a reply (`--timeout`); under valgrind it is multiplied by
/// `VALGRIND_SLOWDOWN`.
pub fn run_instructions(
    common: &Common,
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    timeout: Duration,
) -> Result<i32> {
    let callgrind = Callgrind::from_env();
    let version = callgrind.check()?;
    let filter = common.filter()?;
    let native = Control {
        timeout,
        env: env.to_vec(),
        ..Control::default()
    };
    let ctl = Control {
        timeout: timeout * VALGRIND_SLOWDOWN,
        ..native.clone()
    };
    term::install_ctrlc();
    let started = Instant::now();
    // The names and the worker's timer, from one ordinary start.
    let mut first = WorkerProcess::spawn(program, args, &native).map_err(anyhow::Error::msg)?;
    let names = first.names.clone();
    let hello = first.hello.clone();
    // Where each benchmark's loop is, for its moves (none without objdump or symbols).
    let located = crate::runner::disasm::locate_in(&mut first).unwrap_or_default();
    first.quit();
    let selected = crate::args::select(program, &names, filter.as_ref())?;
    let mut machine = vernier::machine::Machine::detect();
    machine.worker_impl = Some(hello.implementation.clone());
    let mut file = ResultFile::begin(vernier::result::Session {
        mode: "instructions",
        machine,
        system: serde_json::Value::Null,
        timer: hello.timer,
        harness: Harness::unmeasured(),
        analysis: vernier::result::AnalysisSettings {
            debug_build: hello.debug_build,
            ..Default::default()
        },
    });
    let style = term::style();
    eprintln!(
        "vernier: counting {} benchmark(s) of {} under valgrind (callgrind), {}× slower than \
         natively: start-up alone may take a while; a reply is waited for up to {:.0} s \
         (--timeout {:.0} s × {VALGRIND_SLOWDOWN})",
        selected.len(),
        program.display(),
        VALGRIND_SLOWDOWN,
        ctl.timeout.as_secs_f64(),
        timeout.as_secs_f64(),
    );
    let mut progress = Progress::new(selected.len() + 1, started);
    let mut session: Option<Session> = None;
    let mut shared = true;
    progress.show("the harness's empty loop");
    let empty = count_any(
        &callgrind,
        program,
        args,
        &ctl,
        BenchRef::Empty,
        &mut session,
        &mut shared,
        &mut Vec::new(),
    )
    .map_err(|e| anyhow!("counting the harness's empty loop under callgrind: {e:#}"))?;
    let empty_ir = empty.instructions();
    progress.clear();
    println!("{}", report::instructions_table_head(style));
    let mut failed = 0;
    for &i in &selected {
        if term::interrupted() {
            break;
        }
        progress.show(&names[i]);
        let mut ns = Vec::new();
        let r = match count_any(
            &callgrind,
            program,
            args,
            &ctl,
            BenchRef::Index(i),
            &mut session,
            &mut shared,
            &mut ns,
        ) {
            Ok(p) => result_of(&names[i], (&located, i), &p, &ns, empty_ir),
            Err(e) => {
                failed += 1;
                BenchmarkResult::failed(&names[i], format!("{e:#}"))
            }
        };
        progress.clear();
        println!("{}", report::instructions_row(&r, style));
        file.benchmarks.push(r);
        if let Some(path) = &common.json {
            file.write_atomic(path)
                .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    if let Some(s) = session.take() {
        s.finish(ctl.timeout);
    }
    let html_failed = common.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_result(p, &file, None);
        !crate::html::write_or_warn(p, written, common.json.as_deref())
    });
    println!("\n{}", report::instructions_legend(style));
    let closing = format!(
        "{version} · callgrind, collection on inside `{}` only · empty loop {} instructions/iter · {} benchmarks in {:.1} s{}",
        callgrind.toggle,
        empty_ir.map(report::format_count).unwrap_or_else(|| "—".into()),
        file.benchmarks.len(),
        started.elapsed().as_secs_f64(),
        term::written_to(common.json.as_deref())
    );
    for line in report::wrap(&closing, report::stdout_width(), 0, 2) {
        println!("{line}");
    }
    if let Some(code) = term::interrupted_exit() {
        return Ok(code);
    }
    Ok(if failed > 0 || html_failed { 1 } else { 0 })
}

/// "counting NAME (k of n, t s)" on stderr while a benchmark is counted: on a terminal one
/// line rewritten in place, otherwise nothing (each finished row is printed anyway).
struct Progress {
    line: bool,
    done: usize,
    total: usize,
    started: Instant,
}

impl Progress {
    fn new(total: usize, started: Instant) -> Progress {
        Progress {
            line: vernier::report::is_terminal(2),
            done: 0,
            total,
            started,
        }
    }

    fn show(&mut self, name: &str) {
        self.done += 1;
        if self.line {
            use std::io::Write as _;
            eprint!(
                "\r\x1b[2K  counting {name} under callgrind ({} of {}, {:.0} s so far)",
                self.done,
                self.total,
                self.started.elapsed().as_secs_f64()
            );
            let _ = std::io::stderr().flush();
        }
    }

    fn clear(&mut self) {
        if self.line {
            eprint!("\r\x1b[2K");
        }
    }
}
