//! The exact profile of a program's benchmarks (`vernier profile`, `compare --profile`): each
//! benchmark counted under callgrind as `--instructions` counts it (the measured loop only, at
//! N1 and N2 iterations, differenced), read per function: own and inclusive costs per
//! iteration for every simulated event, the estimated cycles, and the folded stacks of its
//! flame graph.

use crate::files::profile::{
    estimated_cycles, BenchProfile, FunctionCosts, LineCosts, ProfileFile, EXACT,
};
use crate::runner::callgraph::{self, FnPerIter};
use crate::runner::counted::{controls, Counter};
use crate::runner::instructions::{Callgrind, PerIteration};
use crate::runner::worker::WorkerProcess;
use anyhow::{anyhow, Result};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;
use vernier::protocol::BenchRef;

/// Every benchmark of `program` that `filter` selects, profiled under callgrind; each handed
/// to `each` as it comes. A benchmark that cannot be profiled carries its error.
pub fn profile_program(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    timeout: Duration,
    filter: Option<&crate::args::Selection>,
    each: &mut dyn FnMut(&ProfileFile, &BenchProfile),
) -> Result<ProfileFile> {
    let callgrind = Callgrind::from_env();
    callgrind.check()?;
    let (native, ctl) = controls(timeout, env);
    let first = WorkerProcess::spawn(program, args, &native).map_err(anyhow::Error::msg)?;
    let names = first.names.clone();
    let interpreted = first.hello.implementation.starts_with("vernier-python");
    first.quit();
    if interpreted {
        return Err(interpreted_worker(program));
    }
    let selected = crate::args::select(program, &names, filter)?;
    let mut counter = Counter::new(&callgrind, program, args, &ctl);
    let mut file = ProfileFile {
        profile: EXACT.into(),
        program: program.display().to_string(),
        events: Vec::new(),
        benchmarks: Vec::new(),
    };
    let mut progress = crate::term::ProgressLine::new().of(selected.len());
    for &i in &selected {
        if crate::term::interrupted() {
            break;
        }
        progress.step(&format!("profiling {} under callgrind", names[i]));
        let b = match counter.count(BenchRef::Index(i), &mut Vec::new()) {
            Ok(p) => {
                if file.events.is_empty() {
                    // Each function's lists are in the order of callgrind's `events:` line.
                    file.events = p.at_n2.names.clone();
                }
                bench_profile(&names[i], &p, &file.events)
            }
            Err(e) => BenchProfile::failed(&names[i], format!("{e:#}")),
        };
        progress.clear();
        each(&file, &b);
        file.benchmarks.push(b);
    }
    counter.finish();
    Ok(file)
}

/// The measured loop: the harness's loop function (`vernier_measured_loop…`) that counted the
/// most, else the function with the most inclusive instructions.
fn root(functions: &[FnPerIter]) -> Option<&FnPerIter> {
    let ir = |f: &&FnPerIter| f.inclusive.first().copied().unwrap_or(0.0);
    let most = |a: &&FnPerIter, b: &&FnPerIter| ir(a).total_cmp(&ir(b));
    functions
        .iter()
        .filter(|f| f.name.contains("vernier_measured_loop"))
        .max_by(most)
        .or_else(|| functions.iter().max_by(most))
}

/// The names of the measured loop and of every function it calls, directly or not.
fn within_loop(functions: &[FnPerIter]) -> std::collections::BTreeSet<&str> {
    let by_name: std::collections::BTreeMap<&str, &FnPerIter> =
        functions.iter().map(|f| (f.name.as_str(), f)).collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut todo: Vec<&str> = root(functions)
        .map(|r| r.name.as_str())
        .into_iter()
        .collect();
    while let Some(n) = todo.pop() {
        if seen.insert(n) {
            if let Some(f) = by_name.get(n) {
                todo.extend(f.calls.keys().map(String::as_str));
            }
        }
    }
    seen
}

fn bench_profile(name: &str, p: &PerIteration, events: &[String]) -> BenchProfile {
    if p.functions.is_empty() {
        return BenchProfile::failed(
            name,
            "callgrind's output could not be read per function (the totals could): \
             `vernier run --instructions` still counts it"
                .into(),
        );
    }
    // The lists in the file's event order (a function's lists follow callgrind's).
    let order: Vec<usize> = events
        .iter()
        .map(|e| {
            p.at_n2
                .names
                .iter()
                .position(|n| n == e)
                .unwrap_or(usize::MAX)
        })
        .collect();
    let pick = |v: &[f64]| -> Vec<f64> {
        order
            .iter()
            .map(|&k| v.get(k).copied().unwrap_or(0.0))
            .collect()
    };
    // Only the measured loop and what it calls: callgrind also charges the loop's callers
    // (main, the harness) with the calls that led to it.
    let within = within_loop(&p.functions);
    let mut functions: Vec<FunctionCosts> = p
        .functions
        .iter()
        .filter(|f| within.contains(f.name.as_str()))
        .map(|f| FunctionCosts {
            name: f.name.clone(),
            own: pick(&f.own),
            inclusive: pick(&f.inclusive),
        })
        .collect();
    let ir = events.iter().position(|e| e == "Ir").unwrap_or(0);
    functions.sort_by(|a, b| {
        let own = |f: &FunctionCosts| f.own.get(ir).copied().unwrap_or(0.0);
        own(b).total_cmp(&own(a)).then_with(|| a.name.cmp(&b.name))
    });
    let folded = root(&p.functions)
        .map(|r| callgraph::folded(&p.functions, &r.name))
        .unwrap_or_default();
    let mut lines: Vec<LineCosts> = p
        .functions
        .iter()
        .filter(|f| within.contains(f.name.as_str()))
        .flat_map(|f| {
            f.lines.iter().map(|(file, line, own)| LineCosts {
                file: file.clone(),
                line: *line,
                function: f.name.clone(),
                own: pick(own),
            })
        })
        .collect();
    let own = |l: &LineCosts| l.own.get(ir).copied().unwrap_or(0.0);
    lines.sort_by(|a, b| own(b).total_cmp(&own(a)).then_with(|| a.line.cmp(&b.line)));
    lines.truncate(crate::files::profile::LINES_KEPT);
    BenchProfile {
        name: name.into(),
        instructions_per_iter: p.get("Ir"),
        estimated_cycles_per_iter: estimated_cycles(|e| p.get(e)),
        functions,
        folded,
        per: p.n2 - p.n1,
        lines,
        samples: None,
        error: None,
    }
}

/// The same benchmark in two profiles: per function, the change of its own instructions per
/// iteration, largest growth first (a function in one profile only counts as 0 in the other).
pub fn differential(old: &BenchProfile, new: &BenchProfile, ir: usize) -> Vec<(String, f64, f64)> {
    let mut d: Vec<(String, f64, f64)> = crate::files::profile::own_side_by_side(old, new, ir)
        .into_iter()
        .filter(|(_, a, b)| (b - a).abs() >= 0.005)
        .collect();
    d.sort_by(|a, b| {
        (b.2 - b.1)
            .total_cmp(&(a.2 - a.1))
            .then_with(|| a.0.cmp(&b.0))
    });
    d
}

/// Why a Python worker is not profiled: its loop runs in the interpreter.
pub fn interpreted_worker(program: &Path) -> anyhow::Error {
    anyhow!(
        "{} is a Python worker: its loop runs in the interpreter, so a profile would name \
         CPython's functions, not the script's. `vernier profile` profiles compiled workers \
         (C++, Rust); for Python, profile the script's functions with cProfile or py-spy",
        program.display()
    )
}

/// Why a program cannot be profiled: it has no symbols for callgrind to name its functions.
pub fn check_symbols(program: &Path) -> Result<()> {
    // A bare name is looked up on the PATH, as starting it does.
    let found = if program.components().count() == 1 && !program.exists() {
        crate::runner::processes::find_on_path(program)
    } else {
        Some(program.to_path_buf())
    };
    let Some(path) = found else {
        // Starting it will say what is wrong.
        return Ok(());
    };
    let bytes =
        std::fs::read(&path).map_err(|e| anyhow!("cannot read {}: {e}", program.display()))?;
    let Ok(obj) = object::File::parse(&*bytes) else {
        return Ok(());
    };
    use object::Object as _;
    if obj.symbols().next().is_none() {
        anyhow::bail!(
            "{} has no symbol table (it was stripped): a profile names functions by their \
             symbols; build it without -s / strip (debug information, -g, also gives callgrind \
             the source lines)",
            program.display()
        );
    }
    Ok(())
}

/// One benchmark's lines: its totals, then its top functions by own instructions (or own
/// samples).
pub fn render(p: &ProfileFile, b: &BenchProfile, top: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if let Some(e) = &b.error {
        let _ = writeln!(s, "\n{}: not profiled: {e}", b.name);
        return s;
    }
    if let Some(n) = b.samples {
        let _ = writeln!(s, "\n{}: {n} samples in the loop", b.name);
        let _ = writeln!(
            s,
            "  {:>6} {:>6} {:>7} {:>9}  function",
            "own %", "±95%", "total %", "samples"
        );
        for f in b.functions.iter().take(top) {
            let pct = |x: f64| 100.0 * x / n.max(1) as f64;
            let _ = writeln!(
                s,
                "  {:>6.1} {:>6.1} {:>7.1} {:>9}  {}",
                pct(f.own[0]),
                100.0 * crate::files::profile::share_half_width(f.own[0], n),
                pct(f.inclusive[0]),
                f.own[0],
                crate::files::profile::brief(&f.name)
            );
        }
        let _ = writeln!(
            s,
            "  ±95%: the sampling error of a share of {n} samples (normal approximation; \
             the samples are taken as independent)"
        );
        if b.functions.len() > top {
            let _ = writeln!(
                s,
                "  … {} more (--top N, or --json)",
                b.functions.len() - top
            );
        }
        return s;
    }
    let total = b.instructions_per_iter.unwrap_or(0.0);
    let _ = writeln!(
        s,
        "\n{}: {} instructions/iter{}",
        b.name,
        vernier::report::format_count(total),
        b.estimated_cycles_per_iter
            .map(|c| format!(
                ", estimated {} cycles/iter (L1 hits + 5 × LL hits + 35 × RAM)",
                vernier::report::format_count(c)
            ))
            .unwrap_or_default()
    );
    let ev = |f: &[f64], e: &str| p.event(e).and_then(|k| f.get(k).copied());
    let _ = writeln!(
        s,
        "  {:>6} {:>7} {:>12} {:>9} {:>9}  function",
        "own %", "total %", "own instr", "D1 miss", "LL miss"
    );
    for f in b.functions.iter().take(top) {
        let own = ev(&f.own, "Ir").unwrap_or(0.0);
        let inc = ev(&f.inclusive, "Ir").unwrap_or(0.0);
        let pct = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
        let sum = |a: &str, b: &str| Some(ev(&f.own, a)? + ev(&f.own, b)?);
        let miss = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "—".into());
        let _ = writeln!(
            s,
            "  {:>6.1} {:>7.1} {:>12.2} {:>9} {:>9}  {}",
            pct(own),
            pct(inc),
            own,
            miss(sum("D1mr", "D1mw")),
            miss(sum("DLmr", "DLmw")),
            crate::files::profile::brief(&f.name)
        );
    }
    if b.functions.len() > top {
        let _ = writeln!(
            s,
            "  … {} more (--top N, or --json)",
            b.functions.len() - top
        );
    }
    s.push_str(&hot_lines(p, b, HOT_LINES));
    s
}

/// Source lines shown under a counted profile's functions.
const HOT_LINES: usize = 5;

/// A counted profile's `shown` costliest source lines: own instructions per iteration, the
/// file and line, the function, and the line's text when the file can be read here. Empty
/// without line information (a program built without `-g`).
fn hot_lines(p: &ProfileFile, b: &BenchProfile, shown: usize) -> String {
    use std::fmt::Write as _;
    let lines = b.costliest_lines(p.event("Ir").unwrap_or(0), shown);
    if lines.is_empty() {
        return String::new();
    }
    let mut sources: std::collections::BTreeMap<&str, Option<Vec<String>>> = Default::default();
    let mut s = String::from("  costliest lines (own instructions per iteration):\n");
    for (l, own) in lines {
        let text = sources
            .entry(l.file.as_str())
            .or_insert_with(|| {
                std::fs::read_to_string(&l.file)
                    .ok()
                    .map(|t| t.lines().map(|x| x.trim().to_string()).collect())
            })
            .as_ref()
            .and_then(|t| t.get(l.line as usize - 1))
            .map(|t| format!("  │ {}", t.chars().take(60).collect::<String>()))
            .unwrap_or_default();
        let file = std::path::Path::new(&l.file)
            .file_name()
            .map_or(l.file.clone(), |f| f.to_string_lossy().into_owned());
        let _ = writeln!(
            s,
            "  {:>12.2}  {file}:{}  {}{text}",
            own,
            l.line,
            crate::files::profile::brief(&l.function)
        );
    }
    s
}

/// `--profile` on `run` and `demo`: after the run (its table printed, its result kept), each
/// selected benchmark's loop profiled under callgrind, its top functions printed, and with
/// `html` the run's report written again with a flame graph per benchmark.
pub fn after_run(
    worker: (&Path, &[OsString], &[(OsString, OsString)]),
    timeout: Duration,
    filter: Option<&crate::args::Selection>,
    html: Option<(
        &Path,
        &vernier::result::ResultFile,
        Option<&vernier::result::comparison::ComparisonFile>,
    )>,
) -> Result<()> {
    if crate::term::interrupted() {
        return Ok(());
    }
    check_symbols(worker.0)?;
    Callgrind::from_env().check()?;
    println!("\nprofiles (counted under callgrind, the measured loop only; per iteration):");
    let profile = profile_program(
        worker.0,
        worker.1,
        worker.2,
        timeout,
        filter,
        &mut |p, b| print!("{}", render(p, b, 5)),
    )?;
    if let Some((path, file, pairs)) = html {
        let written = crate::html::write_result_profiled(path, file, pairs, &profile);
        crate::html::write_or_warn(path, written, None);
    }
    Ok(())
}
