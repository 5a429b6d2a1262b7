//! `vernier run --instructions` (and `vernier demo --instructions`, on the demo's own worker):
//! each selected benchmark counted under callgrind (`crate::runner::counted`), its row printed
//! as it comes, the result file (`"mode": "instructions"`) rewritten after each.

use crate::args::Common;
use crate::runner::counted::{result_of, Counter, VALGRIND_SLOWDOWN};
use crate::runner::instructions::Callgrind;
use crate::runner::worker::{Control, WorkerProcess};
use crate::term;
use anyhow::{anyhow, Result};
use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};
use vernier::protocol::BenchRef;
use vernier::report;
use vernier::result::{BenchmarkResult, Harness, ResultFile};

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
    let mut progress = term::ProgressLine::new().of(selected.len() + 1);
    let mut counter = Counter::new(&callgrind, program, args, &ctl);
    progress.step("counting the harness's empty loop under callgrind");
    let empty = counter
        .count(BenchRef::Empty, &mut Vec::new())
        .map_err(|e| anyhow!("counting the harness's empty loop under callgrind: {e:#}"))?;
    let empty_ir = empty.instructions();
    progress.clear();
    println!("{}", report::instructions_table_head(style));
    let mut failed = 0;
    for &i in &selected {
        if term::interrupted() {
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
        println!("{}", report::instructions_row(&r, style));
        file.benchmarks.push(r);
        if let Some(path) = &common.json {
            file.write_atomic(path)
                .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    counter.finish();
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
