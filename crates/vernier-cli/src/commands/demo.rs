//! `vernier demo`: the seeds' experiments, in Rust, in this process.
//!
//! Seed 000's table of basic operations on a black-boxed `f64` and its `rand()`, the
//! `sqrt(4.2)` whose result nobody uses (the compiler removes it: it must be flagged) beside the
//! same with barriers, seed 004's message copied into one event again and again versus into a
//! large set of events (hot vs cold memory), and its two "equivalent" fraction-to-string
//! implementations.

use crate::args::Common;
use crate::commands::compare;
use crate::commands::system::audit_and_hint;
use crate::runner::counted;
use crate::term;
use anyhow::{bail, Result};
use vernier::black_box;
use vernier::report;
use vernier::result::known as known_speed;
use vernier::session::Event as SuiteEvent;
use vernier::Options;
use vernier::Suite;

mod sharing;

/// Register the demo suite.
pub fn register(s: &mut Suite) {
    arithmetic(s);
    barriers(s);
    events(s);
    fractions(s);
    latency_and_cold(s);
    sharing::register(s);
    pairs(s);
}

/// Register only the benchmarks `re` selects (`--filter`, `--shard`).
pub fn register_filtered(s: &mut Suite, re: &crate::args::Selection) {
    let mut all = Suite::default();
    register(&mut all);
    for (name, routine) in all.into_entries() {
        if re.is_match(&name) {
            s.add(name, routine);
        }
    }
    pairs(s);
}

/// The variant pairs, compared paired and interleaved after the benchmarks (`Suite::compare`):
/// registered only when both members are in the suite (a filter may leave one out).
pub fn pairs(s: &mut Suite) {
    let names = s.names();
    let pairs = [
        (
            "fraction to text: merged or / nested if",
            "fraction to text, nested if",
            "fraction to text, merged or",
        ),
        (
            "event copy: cold / hot",
            "event copy, same event (hot)",
            "event copy, 256Ki events (cold)",
        ),
    ];
    for (name, old, new) in pairs {
        if names.iter().any(|n| n == old) && names.iter().any(|n| n == new) {
            s.compare_benches(name, old, new);
        }
    }
}

fn arithmetic(s: &mut Suite) {
    let (x, y) = (4.2f64, 1.3f64);
    s.bench("add", move || black_box(x) + black_box(y));
    s.bench("mul", move || black_box(x) * black_box(y));
    s.bench("div", move || black_box(x) / black_box(y));
    s.bench("sqrt", move || black_box(x).sqrt());
    s.bench("exp", move || black_box(x).exp());
    s.bench("ln", move || black_box(x).ln());
    s.bench("sin", move || black_box(x).sin());
    s.bench("atan", move || black_box(x).atan());
    // SAFETY: rand() has no preconditions (the seed's std::rand(): global state, side effects).
    s.bench("rand()", || unsafe { libc::rand() });
}

fn barriers(s: &mut Suite) {
    // The result is discarded and the input is a constant: the optimiser removes the call.
    #[allow(clippy::let_underscore_untyped)]
    s.bench("sqrt(4.2) without barrier", || {
        let _ = 4.2f64.sqrt();
    });
    s.bench("sqrt(4.2) with barrier", || black_box(4.2f64).sqrt());
    s.bench("empty closure", || ());
}

/// A square root's latency beside its throughput ("sqrt" above), and an L1-resident pointer
/// chase (16 dependent loads in 8 KiB) hot and with cold caches (seed 004; `docs/experiments.md`).
fn latency_and_cold(s: &mut Suite) {
    s.bench_latency("sqrt latency", 4.2f64, |x| (x + 1.5).sqrt());
    let (buf, start) = vernier::workload::kernels::chase_cycle(CHASE_LINES, CHASE_HOPS, 42);
    let hot = buf.clone();
    s.bench_latency("chase 16 loads/8 KiB (hot)", start, move |p| {
        vernier::workload::kernels::chase(&hot, p, CHASE_HOPS)
    });
    s.bench_cold("chase 16 loads/8 KiB (cold)", move || {
        vernier::workload::kernels::chase(&buf, black_box(start), CHASE_HOPS)
    });
}

/// The pointer chase: 128 lines of 64 bytes (8 KiB), 16 hops.
const CHASE_LINES: usize = 128;
const CHASE_HOPS: usize = 16;

/// Seed 004's event: a fixed buffer, and a heap block when the message does not fit.
pub struct Event {
    data: [u8; 1024],
    extra: Option<Box<[u8]>>,
}

impl Event {
    fn new() -> Event {
        Event {
            data: [0; 1024],
            extra: None,
        }
    }
}

/// Copy a NUL-terminated message into an event (the seed's `set_event`).
#[inline(never)]
pub fn set_event(event: &mut Event, msg: &[u8]) -> usize {
    let size = msg.iter().position(|&b| b == 0).unwrap_or(msg.len()) + 1;
    let size = size.min(msg.len());
    if size > event.data.len() {
        let mut b = vec![0u8; size].into_boxed_slice();
        b.copy_from_slice(&msg[..size]);
        event.extra = Some(b);
    } else {
        event.data[..size].copy_from_slice(&msg[..size]);
    }
    size
}

/// The memory lesson: the fresh event's allocations per iteration against the reused one's,
/// when both were counted.
fn fresh_event_line(file: &vernier::result::ResultFile) -> Option<String> {
    let get = |name: &str| file.benchmarks.iter().find(|b| b.name == name);
    let (fresh, same) = (
        get("event copy, fresh event (allocated)")?,
        get("event copy, same event (hot)")?,
    );
    let (f, s) = (fresh.memory.as_ref()?, same.memory.as_ref()?);
    use vernier::report::memory::{format_allocs, format_bytes};
    Some(format!(
        "a fresh event for each message makes {} allocation(s) of {} per iteration, the reused one {}: memory the time alone does not show ({} against {} per copy).",
        format_allocs(f.allocs_per_iter),
        format_bytes(f.bytes_per_iter),
        format_allocs(s.allocs_per_iter),
        vernier::report::format_ns(fresh.per_iter.median_ns),
        vernier::report::format_ns(same.per_iter.median_ns),
    ))
}

/// Events in the "cold" set: 2¹⁸ × 1 KiB = 256 MiB, far beyond any cache.
pub const COLD_EVENTS: usize = 1 << 18;
/// The cold copy is said to be dominated by memory when it costs at least this much more
/// than the hot one.
pub const COLD_DOMINATES: f64 = 1.2;
/// Overrides the size of the cold set (`demo --instructions` sets it: see below).
pub const COLD_EVENTS_ENV: &str = "VERNIER_DEMO_COLD_EVENTS";
/// The cold set under callgrind: `--instructions` runs a benchmark 1000 + 1000 + 2000
/// iterations in one process, each on the next event, so 8192 events (8 MiB) give every
/// iteration an event never written before, without building 256 MiB under simulation
/// (seconds per run).
pub const COLD_EVENTS_INSTRUCTIONS: usize = 8192;

fn cold_events() -> usize {
    std::env::var(COLD_EVENTS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(COLD_EVENTS)
}

fn message() -> Vec<u8> {
    let mut m = vec![b'a'; 100];
    m.push(0);
    m
}

fn events(s: &mut Suite) {
    let msg = message();
    let mut one = Box::new(Event::new());
    s.bench("event copy, same event (hot)", move || {
        set_event(&mut one, black_box(&msg))
    });
    // Seed 004's other lesson: an event made afresh for each message allocates once per
    // iteration where the reused one never does.
    let msg = message();
    s.bench("event copy, fresh event (allocated)", move || {
        let mut fresh = Box::new(Event::new());
        set_event(&mut fresh, black_box(&msg))
    });
    let msg = message();
    let mut i = 0usize;
    let cold = cold_events();
    s.bench_with_init(
        "event copy, 256Ki events (cold)",
        // Built before the first sample and written once, so page faults are not measured.
        move || (0..cold).map(|_| Event::new()).collect::<Vec<Event>>(),
        move |evs| {
            i += 1;
            if i == cold {
                i = 0;
            }
            set_event(&mut evs[i], black_box(&msg))
        },
    );
}

const DIGITS: &[u8; 200] =
    b"00010203040506070809101112131415161718192021222324252627282930313233343536373839\
40414243444546474849505152535455565758596061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Fraction part of `value / factor` as text ("0.0123"), two digits at a time; the last pair
/// is written as one digit when its second digit is a trailing zero. Variant A tests the two
/// "write a pair" conditions in separate branches.
#[inline(never)]
#[allow(clippy::if_same_then_else)] // the duplicated branch is the point of this variant
pub fn fraction_nested_if(buf: &mut [u8; 64], value: u64, mut factor: u64) -> usize {
    let mut pos = 0;
    buf[pos] = b'0';
    pos += 1;
    let mut fraction = value % factor;
    if fraction > 0 {
        buf[pos] = b'.';
        pos += 1;
        loop {
            let index;
            if factor >= 100 {
                factor /= 100;
                index = (fraction / factor) as usize * 2;
                fraction %= factor;
            } else if factor == 10 {
                index = fraction as usize * 20;
                fraction = 0;
            } else {
                index = fraction as usize * 2;
                fraction = 0;
            }
            if fraction > 0 {
                buf[pos..pos + 2].copy_from_slice(&DIGITS[index..index + 2]);
                pos += 2;
            } else if DIGITS[index + 1] != b'0' {
                buf[pos..pos + 2].copy_from_slice(&DIGITS[index..index + 2]);
                pos += 2;
            } else {
                buf[pos] = DIGITS[index];
                pos += 1;
            }
            if fraction == 0 {
                break;
            }
        }
    }
    pos
}

/// Variant B: the same logic with the two conditions merged into one `||`.
#[inline(never)]
pub fn fraction_merged_or(buf: &mut [u8; 64], value: u64, mut factor: u64) -> usize {
    let mut pos = 0;
    buf[pos] = b'0';
    pos += 1;
    let mut fraction = value % factor;
    if fraction > 0 {
        buf[pos] = b'.';
        pos += 1;
        loop {
            let index;
            if factor >= 100 {
                factor /= 100;
                index = (fraction / factor) as usize * 2;
                fraction %= factor;
            } else if factor == 10 {
                index = fraction as usize * 20;
                fraction = 0;
            } else {
                index = fraction as usize * 2;
                fraction = 0;
            }
            if fraction > 0 || DIGITS[index + 1] != b'0' {
                buf[pos..pos + 2].copy_from_slice(&DIGITS[index..index + 2]);
                pos += 2;
            } else {
                buf[pos] = DIGITS[index];
                pos += 1;
            }
            if fraction == 0 {
                break;
            }
        }
    }
    pos
}

/// The factor of seed 004's test: fractions of a millionth.
pub const FACTOR: u64 = 1_000_000;

fn fractions(s: &mut Suite) {
    let mut buf = [0u8; 64];
    let mut v = 0u64;
    s.bench("fraction to text, nested if", move || {
        v = if v + 1 == FACTOR { 0 } else { v + 1 };
        fraction_nested_if(&mut buf, black_box(v), FACTOR)
    });
    let mut buf = [0u8; 64];
    let mut v = 0u64;
    s.bench("fraction to text, merged or", move || {
        v = if v + 1 == FACTOR { 0 } else { v + 1 };
        fraction_merged_or(&mut buf, black_box(v), FACTOR)
    });
}

/// The ratio a sentence quotes for a variant pair: the paired comparison's (the table printed
/// below the sentences) when it ran, else the ratio of the two medians in the table above.
fn pair_ratio(
    file: &vernier::result::ResultFile,
    pairs: Option<&vernier::result::comparison::ComparisonFile>,
    pair: &str,
    new: &str,
    old: &str,
) -> Option<(f64, String)> {
    if let Some(c) = pairs.and_then(|p| p.comparisons.iter().find(|c| c.name == pair)) {
        return Some((
            c.ratio,
            format!(
                "{:.4}× [{:.4}, {:.4}] (paired, as in the table below)",
                c.ratio, c.ci95[0], c.ci95[1]
            ),
        ));
    }
    let med = |name: &str| {
        file.benchmarks
            .iter()
            .find(|b| b.name == name && b.status == vernier::result::Status::Ok)
            .map(|b| b.per_iter.median_ns)
    };
    let r = med(new)? / med(old)?;
    Some((r, format!("{r:.2}× (ratio of the medians above)")))
}

/// Figures worth a sentence after the table, computed from the figures the tables show.
pub fn summary(
    file: &vernier::result::ResultFile,
    pairs: Option<&vernier::result::comparison::ComparisonFile>,
) -> Vec<String> {
    use vernier::diagnostic::Code;
    let get = |name: &str| {
        file.benchmarks
            .iter()
            .find(|b| b.name == name && b.status == vernier::result::Status::Ok)
    };
    let med = |name: &str| get(name).map(|b| b.per_iter.median_ns);
    let flagged =
        |name: &str| get(name).map(|b| b.diagnostics.iter().any(|d| d.code == Code::OptimizedAway));
    let mut out = Vec::new();
    let ratio = |a: &str, b: &str| Some(med(a)? / med(b)?);
    if let (Some(add), Some(div), Some(sqrt)) = (med("add"), med("div"), med("sqrt")) {
        out.push(format!(
            "div costs {:.2}× an add and sqrt {:.2}× ({} and {} against {}): \"sqrt is slow\" is a claim to measure, not to assume.",
            div / add,
            sqrt / add,
            report::format_ns(div),
            report::format_ns(sqrt),
            report::format_ns(add)
        ));
    }
    match (flagged("sqrt(4.2) without barrier"), flagged("sqrt(4.2) with barrier")) {
        (Some(true), Some(false)) => out.push(
            "sqrt(4.2) without a barrier was flagged optimized-away (the compiler removed it); with black_box it is real work."
                .into(),
        ),
        (Some(a), Some(b)) => out.push(format!(
            "unexpected: sqrt without barrier flagged={a}, with barrier flagged={b}."
        )),
        _ => {}
    }
    if let Some((r, quoted)) = pair_ratio(
        file,
        pairs,
        "event copy: cold / hot",
        "event copy, 256Ki events (cold)",
        "event copy, same event (hot)",
    ) {
        // The sentence follows the figure: on some machines the prefetcher hides a walk
        // through memory in order, and cold costs about what hot does.
        out.push(if r >= COLD_DOMINATES {
            format!(
                "copying into 256 Ki different events costs {quoted} copying into one: cold memory, not the copy, dominates."
            )
        } else {
            format!(
                "copying into 256 Ki different events costs {quoted} copying into one: here the events, written in order, reach the cache in time (the hardware prefetcher), so cold memory costs little more than hot."
            )
        });
    }
    if let Some(line) = fresh_event_line(file) {
        out.push(line);
    }
    if let Some(r) = ratio("sqrt latency", "sqrt") {
        out.push(format!(
            "a chain of dependent square roots (x = sqrt(x + 1.5)) costs {r:.1}× independent ones: latency, not throughput."
        ));
    }
    if let Some(r) = ratio("chase 16 loads/8 KiB (cold)", "chase 16 loads/8 KiB (hot)") {
        out.push(format!(
            "16 dependent loads in 8 KiB cost {r:.0}× more with the caches evicted before each sample (one iteration per sample, the timer's {:.0} ns included) than from L1.",
            file.timer.overhead_ns
        ));
    }
    if let Some((_, quoted)) = pair_ratio(
        file,
        pairs,
        "fraction to text: merged or / nested if",
        "fraction to text, merged or",
        "fraction to text, nested if",
    ) {
        out.push(format!(
            "the two \"equivalent\" fraction-to-text variants: merged-or costs {quoted} nested-if with this compiler."
        ));
    }
    if let Some(b) = get("rand()") {
        out.push(format!("rand(): {}.", report::warmup_words(b)));
    }
    out.extend(sharing::lesson(file));
    out
}

/// What `--filter` must match for the demo to run its checkpoints.
pub const CHECKPOINTS: &str = "checkpoints";
/// The program of the checkpoints: 64 Ki events of 1 KiB (64 MiB), beyond the caches.
const PHASE_EVENTS: usize = 1 << 16;
const EVENT_BYTES: usize = 1024;

/// Seed 004's checkpoints around a whole program's phases: 64 MiB of events allocated, the
/// message copied into each of them, the same copy again, and the memory freed. The two
/// copies are the same work; the first is the first write to each page, which the kernel
/// maps then (a page fault per page). A benchmark that builds its input before timing, as
/// the event copies above do, never shows that cost. Returns the lines to print: a heading,
/// prints a heading and the table, and returns a sentence from its figures.
fn checkpoints(width: Option<usize>) -> Vec<String> {
    use vernier::session::checkpoint;
    let msg = message();
    let copy_into_each = |mem: &mut [u8]| {
        for event in mem.chunks_exact_mut(EVENT_BYTES) {
            event[..msg.len()].copy_from_slice(black_box(&msg));
        }
    };
    checkpoint::checkpoint("start");
    // Zeroed memory this large comes from the kernel unmapped: no page is touched yet.
    let mut mem = vec![0u8; PHASE_EVENTS * EVENT_BYTES];
    checkpoint::checkpoint("allocate 64 MiB");
    copy_into_each(&mut mem);
    checkpoint::checkpoint("copy into each event, first");
    copy_into_each(&mut mem);
    checkpoint::checkpoint("copy into each event, again");
    black_box(&mem);
    drop(mem);
    checkpoint::checkpoint("free");
    for l in report::wrap(
        "Whole-program phases, timed with checkpoints (seed 004; vernier::checkpoint in Rust and C++). Each phase is timed once, so its time has no interval: run the program again to see how far it moves (the page faults are the kernel's exact counts):",
        width,
        0,
        0,
    ) {
        println!("{l}");
    }
    // Prints the table, and writes VERNIER_CHECKPOINTS_JSON when it is set.
    let summary = checkpoint::checkpoint_summary().unwrap_or_else(|e| {
        eprintln!("vernier: {e}");
        checkpoint::summary()
    });
    let mut out = Vec::new();
    let phase = |name: &str| summary.phases.iter().find(|p| p.name == name);
    if let (Some(first), Some(again)) = (
        phase("copy into each event, first"),
        phase("copy into each event, again"),
    ) {
        let r = first.ns as f64 / again.ns.max(1) as f64;
        out.extend(report::wrap(
            &format!(
                "• the same copy into 64 Ki events took {} the first time ({} page faults) and {} again ({} page faults): {r:.1}×. The first write to each page makes the kernel map it; a benchmark that builds its input before timing never shows that cost.",
                report::format_ns(first.ns as f64),
                first.counters.page_faults,
                report::format_ns(again.ns as f64),
                again.counters.page_faults,
            ),
            width,
            0,
            2,
        ));
    }
    out
}

/// Seed 000's advice, "in doubt, look at the assembly", on its own case: the loop of the
/// iterations of `sqrt(4.2)` without a barrier beside the one with it, when both were
/// measured, with a sentence on whether each loop holds a square root instruction.
fn loops_without_and_with_barrier(
    file: &vernier::result::ResultFile,
    width: Option<usize>,
) -> Vec<String> {
    let names = ["sqrt(4.2) without barrier", "sqrt(4.2) with barrier"];
    if !names
        .iter()
        .all(|n| file.benchmarks.iter().any(|b| b.name == *n))
    {
        return Vec::new();
    }
    let mut out = vec![String::new()];
    out.extend(report::wrap(
        "The measured loops of sqrt(4.2) without and with a barrier (seed 000: in doubt, look at the assembly; `vernier asm -- PROGRAM` shows any benchmark's):",
        width,
        0,
        0,
    ));
    let (exe, mut args) = match crate::args::self_command() {
        Ok(c) => c,
        Err(e) => {
            out.push(format!("  (no disassembly: {e:#})"));
            return out;
        }
    };
    args.push("__demo-worker".into());
    match crate::runner::disasm::timed_loops(&exe, &args, &names) {
        Ok(loops) => {
            let mut sqrt = Vec::new();
            for (name, text, body) in &loops {
                out.extend(text.lines().map(|l| fit(l, width)));
                if !body.is_empty() {
                    sqrt.push((
                        name,
                        body.iter().any(|i| i.text.contains("sqrt")),
                        body.len(),
                    ));
                }
            }
            for (name, has, n) in sqrt {
                out.extend(report::wrap(
                    &format!(
                        "• {name}: the loop of the iterations has {n} instructions and {}.",
                        if has {
                            "computes a square root"
                        } else {
                            "no square root: the compiler removed it"
                        }
                    ),
                    width,
                    0,
                    2,
                ));
            }
        }
        Err(e) => out.push(format!("  (no disassembly: {e:#})")),
    }
    out
}

/// `line` cut to `width` columns (a disassembly line is not wrapped).
fn fit(line: &str, width: Option<usize>) -> String {
    match width {
        Some(w) => vernier::report::cut_end(line, w),
        None => line.to_string(),
    }
}

/// `vernier demo`: the suite measured in this process, its variant pairs compared, the
/// seeds' lessons in sentences.
pub fn demo_command(c: &Common) -> Result<i32> {
    let filter = c.filter()?;
    if c.instructions {
        // The demo serves itself as a worker (`vernier __demo-worker`), counted under callgrind
        // like any other worker.
        let (exe, mut args) = crate::args::self_command()?;
        args.push("__demo-worker".into());
        return counted::run_instructions(
            c,
            &exe,
            &args,
            &[(
                COLD_EVENTS_ENV.into(),
                COLD_EVENTS_INSTRUCTIONS.to_string().into(),
            )],
            std::time::Duration::from_secs_f64(crate::runner::worker::DEFAULT_TIMEOUT_S),
        );
    }
    let plan = c.plan()?;
    let known = known_speed::KnownSpeed::load(&vernier::machine::Machine::detect());
    // The demo's benchmarks are this executable's: their earlier runs here are its own.
    let identity = crate::args::self_command()
        .ok()
        .and_then(|(exe, mut args)| {
            args.push("demo".into());
            known_speed::program_identity(&exe, &args, "hot")
        });
    let mut options = Options {
        system: audit_and_hint(),
        plan,
        json: c.json.clone(),
        quick: c.quick,
        counters: c.counters()?,
        keep_interrupted: c.keep_interrupted,
        ..Options::default()
    };
    options.fill_known(&known, identity.as_deref());
    let mut suite = Suite::new(options);
    register(&mut suite);
    if let Some(re) = &filter {
        let names = suite.names();
        if !names.iter().any(|n| re.is_match(n)) {
            bail!(
                "{} selects no benchmark; the demo has: {}",
                re.describe(),
                names.join(", ")
            );
        }
        suite = Suite::new(Options {
            filter: None,
            ..suite.options().clone()
        });
        register_filtered(&mut suite, re);
    }
    term::install_ctrlc();
    let render = report::Render::for_stdout(c.verbose);
    let names = suite.names();
    // The command counts its own allocations (`CountingAlloc`, main.rs): their columns show.
    let table =
        report::Table::new(&names, render).with_memory(vernier::memory::Source::detect().is_ok());
    let mut progress = term::ProgressLine::new().of(names.len());
    let mut head = false;
    let started = std::time::Instant::now();
    let file = suite.run_in_process(&mut |ev| match ev {
        SuiteEvent::Start { .. } => {}
        SuiteEvent::Progress { name, progress: p } => progress.update(name, p),
        SuiteEvent::Done { result, .. } => {
            progress.clear();
            if !head {
                println!("{}", table.head());
                head = true;
            }
            println!("{}", table.row(result));
        }
    });
    progress.clear();
    known.record_run(&file, identity.as_deref());
    let pairs = compare::demo_pairs(&mut suite, &file, c.json.as_deref())?;
    // After the result is kept: a report that cannot be written loses nothing measured.
    let html_failed = c.html.as_ref().is_some_and(|p| {
        let written = crate::html::write_result(p, &file, pairs.as_ref());
        !crate::html::write_or_warn(p, written, c.json.as_deref())
    });
    print!("{}", report::after_table(&file, &table));
    if let Some(line) = report::earlier_note(&file) {
        print!("{}", table.dim_wrapped(&line));
    }
    println!();
    for line in summary(&file, pairs.as_ref()) {
        for l in report::wrap(&format!("• {line}"), render.width, 0, 2) {
            println!("{l}");
        }
    }
    if let Some(p) = &pairs {
        println!();
        for l in report::wrap("Variants compared paired and interleaved in this process (ratio = NEW/OLD, the second named over the first):", render.width, 0, 0) {
            println!("{l}");
        }
        print!("{}", vernier::report::compare::table_fitted(p, render));
    }
    if !term::interrupted() {
        let wanted = |what: &str| filter.as_ref().is_none_or(|re| re.is_match(what));
        if wanted(CHECKPOINTS) {
            println!();
            for l in checkpoints(render.width) {
                println!("{l}");
            }
        }
        for l in loops_without_and_with_barrier(&file, render.width) {
            println!("{l}");
        }
    }
    println!(
        "\n{} benchmarks in {:.1} s{}",
        file.benchmarks.len(),
        started.elapsed().as_secs_f64(),
        term::written_to(c.json.as_deref())
    );
    crate::history::save_if_asked(&c.save, &file, "demo", c.pick.shard)?;
    if let Some(code) = term::interrupted_exit() {
        return Ok(code);
    }
    Ok(if html_failed { 1 } else { 0 })
}

/// `__demo-worker`: the demo suite served over the worker protocol (what `demo
/// --instructions` runs).
pub fn worker_command() -> anyhow::Result<i32> {
    if std::env::var_os(vernier::protocol::FDS_ENV).is_none() {
        anyhow::bail!("__demo-worker is started by `vernier demo --instructions`, not by hand");
    }
    let mut suite = vernier::Suite::new(vernier::Options::default());
    register(&mut suite);
    suite.try_finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_fraction_variants_agree() {
        for v in [0u64, 1, 10, 12_300, 120_000, 999_999, 500_000, 7] {
            let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
            let na = fraction_nested_if(&mut a, v, FACTOR);
            let nb = fraction_merged_or(&mut b, v, FACTOR);
            assert_eq!(&a[..na], &b[..nb], "value {v}");
        }
        let mut a = [0u8; 64];
        let n = fraction_nested_if(&mut a, 12_300, FACTOR);
        assert_eq!(&a[..n], b"0.0123");
    }

    #[test]
    fn set_event_copies_and_spills() {
        let mut e = Event::new();
        assert_eq!(set_event(&mut e, b"hello\0"), 6);
        assert_eq!(&e.data[..6], b"hello\0");
        let mut big = vec![b'x'; 2000];
        big.push(0);
        assert_eq!(set_event(&mut e, &big), 2001);
        assert!(e.extra.is_some());
    }
}
