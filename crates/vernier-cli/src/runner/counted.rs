//! The deterministic mode's counting (for `vernier run --instructions`, whose command is
//! `commands/run/instructions.rs`, and for the timed mode's `optimized-away` check): each
//! benchmark of a worker is counted under callgrind (`instructions.rs`) at two iteration
//! counts, in worker processes started under valgrind and driven by the protocol (`run <i>
//! iters=K samples=1`, then `quit`); [`result_of`] makes its entry of the usual result file
//! (marked `"mode": "instructions"`).
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

use crate::runner::callgraph::{self, CallGraph};
use crate::runner::instructions::{
    difference, instructions_in, parse_callgrind_output, per_thread, threads_of, Callgrind,
    EventCounts, PerIteration, DEFAULT_N1, DEFAULT_N2,
};
use crate::runner::worker::{Control, WorkerProcess};
use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use vernier::analyze::pairs::Comparison;
use vernier::diagnostic::{Diagnostic, Finding};
use vernier::measure::Batch;
use vernier::protocol::BenchRef;
use vernier::result::comparison::ComparisonFile;
use vernier::result::{BenchmarkResult, SamplesJson, Status};
use vernier::samples::Phase;
use vernier::stats::compare::Verdict;

/// A program's benchmarks counted under callgrind ([`count_program`]).
pub struct CountedRun {
    /// The result file, `"mode": "instructions"`.
    pub file: vernier::result::ResultFile,
    /// Benchmarks whose counting failed (in the file as failed).
    pub failed: usize,
    /// Valgrind's version line.
    pub version: String,
    /// The harness's empty loop, instructions per iteration.
    pub empty_ir: Option<f64>,
}

/// Every benchmark of `program` that `filter` selects, counted under callgrind: each
/// benchmark's result handed to `row` as it comes (and the file rewritten to `json` after
/// each), the harness's empty loop first. `timeout` is the native wait for a reply (under
/// valgrind it is multiplied by [`VALGRIND_SLOWDOWN`], and the run says so on standard error).
pub fn count_program(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    timeout: Duration,
    filter: Option<&crate::args::Selection>,
    json: Option<&Path>,
    row: &mut dyn FnMut(&BenchmarkResult),
) -> Result<CountedRun> {
    use vernier::result::{AnalysisSettings, Harness, ResultFile, Session};
    let callgrind = Callgrind::from_env();
    let version = callgrind.check()?;
    let (native, ctl) = controls(timeout, env);
    // The names and the worker's timer, from one ordinary start.
    let mut first = WorkerProcess::spawn(program, args, &native).map_err(anyhow::Error::msg)?;
    let names = first.names.clone();
    let hello = first.hello.clone();
    // Where each benchmark's loop is, for its moves (none without objdump or symbols).
    let located = crate::runner::disasm::locate_in(&mut first).unwrap_or_default();
    first.quit();
    let selected = crate::args::select(program, &names, filter)?;
    let mut machine = vernier::machine::Machine::detect();
    machine.worker_impl = Some(hello.implementation.clone());
    let mut file = ResultFile::begin(Session {
        mode: "instructions",
        machine,
        system: serde_json::Value::Null,
        timer: hello.timer,
        harness: Harness::unmeasured(),
        analysis: AnalysisSettings {
            debug_build: hello.debug_build,
            ..Default::default()
        },
    });
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
    let mut progress = crate::term::ProgressLine::new().of(selected.len() + 1);
    let mut counter = Counter::new(&callgrind, program, args, &ctl);
    progress.step("counting the harness's empty loop under callgrind");
    let empty = counter
        .count(BenchRef::Empty, &mut Vec::new())
        .map_err(|e| anyhow!("counting the harness's empty loop under callgrind: {e:#}"))?;
    let empty_ir = empty.instructions();
    progress.clear();
    let mut failed = 0;
    for &i in &selected {
        if crate::term::interrupted() {
            break;
        }
        progress.step(&format!("counting {} under callgrind", names[i]));
        let mut ns = Vec::new();
        let r = match counter.count(BenchRef::Index(i), &mut ns) {
            Ok(p) => result_of(&names[i], (&located, i), &p, &ns, empty_ir),
            Err(e) => {
                failed += 1;
                BenchmarkResult::failed(&names[i], format!("{e:#}"))
            }
        };
        progress.clear();
        row(&r);
        file.benchmarks.push(r);
        if let Some(path) = json {
            file.write_atomic(path)
                .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    counter.finish();
    Ok(CountedRun {
        file,
        failed,
        version,
        empty_ir,
    })
}

/// The control of a worker started natively (`timeout`, the environment `env`), and of one
/// started under valgrind: the same with its waits [`VALGRIND_SLOWDOWN`] times longer.
pub fn controls(timeout: Duration, env: &[(OsString, OsString)]) -> (Control, Control) {
    let native = Control {
        timeout,
        env: env.to_vec(),
        ..Control::default()
    };
    let ctl = Control {
        timeout: timeout * VALGRIND_SLOWDOWN,
        ..native.clone()
    };
    (native, ctl)
}

/// Under valgrind the worker's start-up and every reply take this many times longer than
/// natively (callgrind with cache and branch simulation: 20–100× on the examples), so the
/// waits of `--timeout` are multiplied by it, and the run says so.
pub const VALGRIND_SLOWDOWN: u32 = 50;
/// `--dump-after` patterns: the functions after whose return callgrind writes the counts of
/// one `run` command. In C++ the measured loops themselves (one call per batch, or per sample
/// with inputs, or per thread and sample for a threaded benchmark: each thread's dump holds
/// its own loop, and the dumps of one `run` are summed); in Rust the sampling function around them (a dump pattern on the toggled
/// function itself stops its counting there).
pub const DUMP_AFTER: [&str; 4] = [
    "*vernier_measured_loop<*",
    "*vernier_measured_loop_inputs<*",
    "*vernier_measured_loop_threads<*",
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
    /// Where callgrind writes its dumps; removed with the session, after its worker ended.
    _dir: crate::scratch::ScratchDir,
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
        let dir = crate::scratch::dir("vernier-callgrind-")?;
        let out = dir.path().join("callgrind.out");
        let mut cmd = callgrind.command(&out);
        for p in DUMP_AFTER {
            cmd.arg(format!("--dump-after={p}"));
        }
        cmd.arg(program).args(args);
        let worker = WorkerProcess::spawn_command(cmd, program, ctl).map_err(|e| anyhow!(e))?;
        Ok(Session {
            worker,
            _dir: dir,
            out,
            next_dump: 1,
        })
    }

    /// One `run` of `iters` iterations; the counts of the dumps it produced (`None`: none),
    /// and the dumps read per function (`None` when one could not be).
    fn run(
        &mut self,
        bench: BenchRef,
        iters: u64,
        ns: &mut Vec<u64>,
    ) -> Result<Option<(EventCounts, Option<CallGraph>)>> {
        let mut b = Batch::default();
        self.worker
            .run(bench, iters, 1, &mut b)
            .map_err(|e| anyhow!(e))?;
        ns.extend(b.ns);
        let mut total: Option<EventCounts> = None;
        let mut graph = Some(CallGraph::default());
        loop {
            let file = self.out.with_extension(format!("out.{}", self.next_dump));
            let Ok(text) = std::fs::read_to_string(&file) else {
                break;
            };
            let _ = std::fs::remove_file(&file);
            self.next_dump += 1;
            graph = match (graph, callgraph::parse(&text)) {
                (Some(mut g), Ok(d)) => {
                    g.merge(d);
                    Some(g)
                }
                _ => None,
            };
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
        Ok(total.map(|t| (t, graph)))
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
        let (at_n1, g1) = once(DEFAULT_N1, ns)?;
        let (at_n2, g2) = once(DEFAULT_N2, ns)?;
        let per_iter =
            difference(DEFAULT_N1, &at_n1, DEFAULT_N2, &at_n2).map_err(SharedError::Failed)?;
        let functions = match (g1, g2) {
            (Some(a), Some(b)) => {
                callgraph::per_iteration(DEFAULT_N1, &a, DEFAULT_N2, &b).unwrap_or_default()
            }
            _ => Vec::new(),
        };
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
            functions,
        })
    }

    fn finish(self, timeout: Duration) {
        let _ = self.worker.quit_and_wait(timeout);
    }
}

/// The benchmarks of one program counted under callgrind: in one shared valgrind process while
/// the harness can be dumped in one, else each in fresh processes.
pub struct Counter<'a> {
    callgrind: &'a Callgrind,
    program: &'a Path,
    args: &'a [OsString],
    ctl: &'a Control,
    session: Option<Session>,
    shared: bool,
}

impl<'a> Counter<'a> {
    pub fn new(
        callgrind: &'a Callgrind,
        program: &'a Path,
        args: &'a [OsString],
        ctl: &'a Control,
    ) -> Counter<'a> {
        Counter {
            callgrind,
            program,
            args,
            ctl,
            session: None,
            shared: true,
        }
    }

    /// `bench` (a benchmark or the empty loop) counted; the times of its runs go to `ns`.
    pub fn count(&mut self, bench: BenchRef, ns: &mut Vec<u64>) -> Result<PerIteration> {
        count_any(
            self.callgrind,
            self.program,
            self.args,
            self.ctl,
            bench,
            &mut self.session,
            &mut self.shared,
            ns,
        )
    }

    /// Ends the shared valgrind process, when one runs.
    pub fn finish(mut self) {
        if let Some(s) = self.session.take() {
            s.finish(self.ctl.timeout);
        }
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
                crate::term::note_once(&format!(
                    "this harness's sampling function is not one callgrind can dump after ({}): \
                     each benchmark is counted in two fresh processes instead",
                    DUMP_AFTER.join(", ")
                ));
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
    r.headline_unit = vernier::analyze::Unit::Instructions;
    // Per thread, as the time is: the removal check below weighs the same figure.
    let threads = threads_of(name);
    let per_iter = per_thread(&p.per_iter, threads);
    r.counters = Some(per_iter.iter().map(|(e, v)| (key_of(e), *v)).collect());
    r.threads = vernier::result::threads::split_name(name).map(|(_, t)| t);
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
    if let (Some(ir), Some(empty)) = (instructions_in(&per_iter), empty_ir) {
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

/// Count benchmark `index` of `program` (run by `threads` threads at a time, 1 unless it is a
/// threaded benchmark) and its bar under callgrind, in one valgrind process (or fresh ones when
/// the harness cannot be dumped in one): the evidence that tells a removed body from one whose
/// work fits in the loop's own cycle. The bar is the harness's empty loop, or for an async
/// benchmark (`on_executor`) the empty future on its executor, as its time is judged against
/// (awaiting a future executes the executor's own instructions on every iteration).
/// `timeout` is the native wait for a reply. Errors when valgrind is not there or the count
/// fails.
pub fn check_instructions(
    program: &Path,
    args: &[OsString],
    ctl: &Control,
    (index, threads, on_executor): (usize, usize, bool),
) -> Result<vernier::analyze::InstructionsCheck> {
    let callgrind = Callgrind::from_env();
    callgrind.check()?;
    let ctl = Control {
        timeout: ctl.timeout * VALGRIND_SLOWDOWN,
        ..ctl.clone()
    };
    let mut counter = Counter::new(&callgrind, program, args, &ctl);
    let bar = if on_executor {
        BenchRef::EmptyFuture(index)
    } else {
        BenchRef::Empty
    };
    let empty = counter.count(bar, &mut Vec::new())?;
    let body = counter.count(BenchRef::Index(index), &mut Vec::new())?;
    counter.finish();
    let ir = instructions_in(&per_thread(&body.per_iter, threads));
    match (ir, empty.instructions()) {
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

// Comparisons in counts (`compare --instructions`, `exec --instructions`).

/// The verdict on `old` and `new` counts (instructions per iteration, or per run): the
/// difference against `threshold`, exact counts having no interval.
pub fn verdict(old: f64, new: f64, threshold: f64) -> Verdict {
    if new - old >= threshold {
        Verdict::Slower
    } else if old - new >= threshold {
        Verdict::Faster
    } else {
        Verdict::NoChange
    }
}

/// The comparison of one benchmark (or command) counted on both sides.
pub fn compared(name: &str, old: f64, new: f64, threshold: f64) -> Comparison {
    let ratio = if old > 0.0 { new / old } else { f64::NAN };
    Comparison {
        name: name.to_string(),
        ratio,
        ci95: [ratio, ratio],
        p_value: f64::NAN,
        p_value_raw: f64::NAN,
        verdict: verdict(old, new, threshold),
        stop: "counted".into(),
        instructions_per_iter: Some([old, new]),
        ..Comparison::default()
    }
}

/// A comparison in counts: each row's count `per` (`instr/iter`) on both sides, the
/// difference, the ratio and the verdict, then the failures, then `footer`.
pub fn counts_table(file: &ComparisonFile, per: &str, footer: &str) -> String {
    use std::fmt::Write as _;
    let w = file
        .comparisons
        .iter()
        .map(|c| c.name.chars().count())
        .chain(std::iter::once("benchmark".len()))
        .max()
        .unwrap_or(9);
    let mut s = format!(
        "{:<w$}  {:>14}  {:>14}  {:>12}  {:>9}  verdict\n",
        "benchmark",
        format!("OLD {per}"),
        format!("NEW {per}"),
        "difference",
        "ratio"
    );
    for c in &file.comparisons {
        let [o, n] = c.instructions_per_iter.unwrap_or([f64::NAN; 2]);
        let _ = writeln!(
            s,
            "{:<w$}  {:>14.2}  {:>14.2}  {:>+12.2}  {:>9.4}  {}",
            c.name,
            o,
            n,
            n - o,
            c.ratio,
            c.verdict.as_str()
        );
    }
    for f in &file.failed {
        let _ = writeln!(s, "{:<w$}  not compared: {}", f.name, f.error);
    }
    let _ = writeln!(s, "{footer}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_instruction_more_per_iteration_is_slower_and_the_same_count_is_not() {
        assert_eq!(verdict(300.0, 301.0, 0.5), Verdict::Slower);
        assert_eq!(verdict(301.0, 300.0, 0.5), Verdict::Faster);
        assert_eq!(verdict(300.0, 300.0, 0.5), Verdict::NoChange);
        assert_eq!(verdict(300.0, 300.25, 0.5), Verdict::NoChange);
        assert_eq!(verdict(300.0, 303.0, 5.0), Verdict::NoChange);
        let c = compared("chain", 400.0, 404.0, 0.5);
        assert_eq!((c.verdict, c.ratio), (Verdict::Slower, 1.01));
        assert_eq!(c.instructions_per_iter, Some([400.0, 404.0]));
    }

    /// Callgrind's count of a body of `per_thread` instructions a thread per iteration (and a
    /// fixed 300), run on `threads` threads, at N1 = 1000 and N2 = 2000 iterations.
    fn counted(per_thread: u64, threads: u64) -> PerIteration {
        let at = |n: u64| EventCounts {
            names: vec!["Ir".into()],
            values: vec![threads * per_thread * n + 300],
        };
        let (at_n1, at_n2) = (at(1000), at(2000));
        PerIteration {
            n1: 1000,
            n2: 2000,
            per_iter: difference(1000, &at_n1, 2000, &at_n2).unwrap(),
            at_n1,
            at_n2,
            wall: Duration::ZERO,
            functions: Vec::new(),
        }
    }

    #[test]
    fn a_threaded_benchmarks_counts_are_per_thread_as_its_removal_check_weighs_them() {
        // Five instructions a thread per iteration, the empty loop's own five: nothing done.
        let two = result_of("add/threads:2", (&[], 0), &counted(5, 2), &[], Some(5.0));
        assert_eq!(
            two.instructions_per_iter(),
            Some(5.0),
            "per thread, not the total 10"
        );
        assert!(two.removed(), "{:?}", two.diagnostics);
        assert_eq!(two.threads, Some(2));
        // The raw counts stay callgrind's totals over both threads.
        assert_eq!(two.samples.counters["Ir"], [Some(10_300), Some(20_300)]);
        let style = vernier::report::Style { color: false };
        let row = vernier::report::instructions_row(&two, style);
        assert!(
            row.lines().next().unwrap().ends_with("per thread of 2"),
            "{row}"
        );
        // One thread doing ten: its own count, and work.
        let one = result_of("add", (&[], 0), &counted(10, 1), &[], Some(5.0));
        assert_eq!(one.instructions_per_iter(), Some(10.0));
        assert!(!one.removed() && one.threads.is_none());
        // Derived again from the raw counts (`analyze`, `history save`): the same, per thread.
        let file: vernier::result::ResultFile = serde_json::from_value(serde_json::json!({
            "schema": 2, "tool": {"name": "vernier", "version": "0"}, "mode": "instructions",
            "machine": vernier::machine::Machine::default(),
            "timer": {"kind": "monotonic", "resolution_ns": 1.0, "overhead_ns": 20.0, "tsc_hz": null},
            "benchmarks": [two, one],
        }))
        .unwrap();
        let again = crate::runner::rederive::rederive_file(&file).unwrap();
        assert_eq!(again.changed, 0);
        let ir: Vec<_> = again
            .file
            .benchmarks
            .iter()
            .map(|b| b.instructions_per_iter())
            .collect();
        assert_eq!(ir, [Some(5.0), Some(10.0)]);
    }
}
