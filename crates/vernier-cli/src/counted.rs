//! The deterministic mode's pipeline (`vernier run --instructions`, `vernier demo
//! --instructions`): each selected benchmark of a worker is counted under callgrind
//! (`instructions.rs`) at two iteration counts, in fresh worker processes started under
//! valgrind and driven by the protocol (`run <i> iters=K samples=1`, then `quit`), and the
//! per-iteration counts go into the usual result file marked `"mode": "instructions"`.
//!
//! The harness's empty loop is counted the same way, so a benchmark whose loop executes no
//! more instructions than the empty one is flagged `optimized-away`, as in the timed mode.

use crate::instructions::{Callgrind, PerIteration, DEFAULT_N1, DEFAULT_N2};
use crate::worker::{Control, WorkerProcess};
use crate::{term, Common};
use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use vernier::diagnostic::{Code, Diagnostic};
use vernier::measure::Batch;
use vernier::protocol::BenchRef;
use vernier::report;
use vernier::result::{BenchmarkResult, Harness, ResultFile, SamplesJson, Status, Tool, SCHEMA};
use vernier::samples::Phase;

/// Longest wait for a reply, or for valgrind to exit, per worker under callgrind.
pub const CALLGRIND_TIMEOUT: Duration = Duration::from_secs(300);
/// A benchmark executing fewer than this many instructions per iteration more than the
/// harness's empty loop is not doing any work.
pub const OPTIMIZED_AWAY_INSTRUCTIONS: f64 = 0.5;

/// The result key of a callgrind event: `Ir` is `instructions`, the others keep callgrind's
/// names (`D1mr`, `DLmw`, `Bcm`, …).
pub fn key_of(event: &str) -> String {
    let name = if event == "Ir" { "instructions" } else { event };
    format!("{name}_per_iter")
}

/// One benchmark (or the empty loop) counted at N1 and N2 iterations.
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
        w.quit_and_wait(CALLGRIND_TIMEOUT).map_err(|e| anyhow!(e))
    };
    callgrind.per_iteration(DEFAULT_N1, DEFAULT_N2, &mut launch)
}

/// The result entry of a counted benchmark.
pub fn result_of(
    name: &str,
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
        if ir - empty < OPTIMIZED_AWAY_INSTRUCTIONS {
            r.diagnostics.push(Diagnostic::new(
                Code::OptimizedAway,
                format!(
                    "{ir:.2} instructions per iteration, no more than the harness's loop around \
                     an empty body ({empty:.2}): the work was removed. Pass inputs through \
                     vernier::black_box (C++: vernier::do_not_optimize) and return the result \
                     from the closure, so the compiler cannot drop the work."
                ),
            ));
        }
    }
    r
}

/// `--instructions`: count every selected benchmark of `program` under callgrind.
pub fn run_instructions(
    common: &Common,
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
) -> Result<i32> {
    let callgrind = Callgrind::from_env();
    let version = callgrind.check()?;
    let filter = common.filter()?;
    let ctl = Control {
        timeout: CALLGRIND_TIMEOUT,
        env: env.to_vec(),
        ..Control::default()
    };
    term::install_ctrlc();
    let started = Instant::now();
    // The names and the worker's timer, from one ordinary start.
    let first = WorkerProcess::spawn(program, args, &ctl).map_err(anyhow::Error::msg)?;
    let names = first.names.clone();
    let hello = first.hello.clone();
    first.quit();
    if names.is_empty() {
        bail!("{} registers no benchmark", program.display());
    }
    let selected: Vec<usize> = (0..names.len())
        .filter(|&i| filter.as_ref().is_none_or(|re| re.is_match(&names[i])))
        .collect();
    if selected.is_empty() {
        bail!(
            "--filter matches no benchmark; {} has: {}",
            program.display(),
            names.join(", ")
        );
    }
    let mut machine = vernier::machine::Machine::detect();
    machine.worker_impl = Some(hello.implementation.clone());
    let mut file = ResultFile {
        schema: SCHEMA,
        tool: Tool::default(),
        machine,
        system: serde_json::Value::Null,
        timer: hello.timer,
        harness: Harness {
            empty_iter_ns: f64::NAN,
            sample_cost_ns: f64::NAN,
            cycle_ns: f64::NAN,
            cycle_source: "none".into(),
            runner_batch_cost_ns: None,
            counters: None,
            noise_far_share: None,
            known_cycle_ns: None,
        },
        mode: "instructions".into(),
        benchmarks: Vec::new(),
    };
    let style = term::style();
    let empty = count(
        &callgrind,
        program,
        args,
        &ctl,
        BenchRef::Empty,
        &mut Vec::new(),
    )
    .map_err(|e| anyhow!("counting the harness's empty loop under callgrind: {e:#}"))?;
    let empty_ir = empty.instructions();
    println!("{}", report::instructions_table_head(style));
    let mut failed = 0;
    for &i in &selected {
        if term::interrupted() {
            break;
        }
        let mut ns = Vec::new();
        let r = match count(&callgrind, program, args, &ctl, BenchRef::Index(i), &mut ns) {
            Ok(p) => result_of(&names[i], &p, &ns, empty_ir),
            Err(e) => {
                failed += 1;
                BenchmarkResult::failed(&names[i], format!("{e:#}"))
            }
        };
        println!("{}", report::instructions_row(&r, style));
        file.benchmarks.push(r);
        if let Some(path) = &common.json {
            file.write_atomic(path)
                .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    println!("\n{}", report::instructions_legend(style));
    println!(
        "{version} · callgrind, collection on inside `{}` only · empty loop {} instructions/iter · {} benchmarks in {:.1} s{}",
        callgrind.toggle,
        empty_ir.map(report::format_count).unwrap_or_else(|| "—".into()),
        file.benchmarks.len(),
        started.elapsed().as_secs_f64(),
        common
            .json
            .as_ref()
            .map(|p| format!("; result written to {}", p.display()))
            .unwrap_or_default()
    );
    if term::interrupted() {
        eprintln!("vernier: interrupted; every benchmark finished before Ctrl-C is kept");
        return Ok(130);
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
