//! `vernier run --instructions` (and `vernier demo --instructions`, on the demo's own worker):
//! each selected benchmark counted under callgrind (`crate::runner::counted`), its row printed
//! as it comes, the result file (`"mode": "instructions"`) rewritten after each.

use crate::args::Common;
use crate::runner::counted::{count_program, CountedRun};
use crate::runner::instructions::Callgrind;
use crate::term;
use anyhow::Result;
use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};
use vernier::report;

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
    command: &str,
) -> Result<i32> {
    let filter = common.filter()?;
    term::install_ctrlc();
    let started = Instant::now();
    let style = term::style();
    let mut head = false;
    let counted = count_program(
        program,
        args,
        env,
        timeout,
        filter.as_ref(),
        common.json.as_deref(),
        &mut |r| {
            if !head {
                println!("{}", report::instructions_table_head(style));
                head = true;
            }
            println!("{}", report::instructions_row(r, style));
        },
    )?;
    let CountedRun {
        file,
        failed,
        version,
        empty_ir,
    } = counted;
    let html_failed = common.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_result(p, &file, None);
        !crate::html::write_or_warn(p, written, common.json.as_deref())
    });
    println!("\n{}", report::instructions_legend(style));
    let closing = format!(
        "{version} · callgrind, collection on inside `{}` only · empty loop {} instructions/iter · {} benchmarks in {:.1} s{}",
        Callgrind::from_env().toggle,
        empty_ir.map(report::format_count).unwrap_or_else(|| "—".into()),
        file.benchmarks.len(),
        started.elapsed().as_secs_f64(),
        term::written_to(common.json.as_deref())
    );
    for line in report::wrap(&closing, report::stdout_width(), 0, 2) {
        println!("{line}");
    }
    // Counted runs form their own series in the history (judged in instructions).
    crate::history::save_if_asked(&common.save, &file, command, common.pick.shard)?;
    if let Some(code) = term::interrupted_exit() {
        return Ok(code);
    }
    Ok(if failed > 0 || html_failed { 1 } else { 0 })
}
