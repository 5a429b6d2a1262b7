//! The demo's lessons: the sentences printed under its tables, each computed from the figures
//! the tables show, the whole-program checkpoints, and the measured loops of `sqrt(4.2)`
//! without and with a barrier.

use super::kernels::{message, COLD_DOMINATES};
use super::sharing;
use vernier::black_box;
use vernier::report;

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
    // Under emulation a time is the emulator's translation of the loop: the loops printed
    // below, not the times, tell a removed body (the line below the table says why).
    let emulated = file.system["emulation"].is_string();
    match (flagged("sqrt(4.2) without barrier"), flagged("sqrt(4.2) with barrier")) {
        (Some(true), Some(false)) => out.push(
            "sqrt(4.2) without a barrier was flagged optimized-away (the compiler removed it); with black_box it is real work."
                .into(),
        ),
        (Some(_), Some(_)) if emulated => out.push(
            "sqrt(4.2) without and with a barrier: under emulation their times are the \
             emulator's and cannot tell a removed body; the loops below show which one still \
             computes a square root."
                .into(),
        ),
        (Some(false), Some(false)) => {
            let over = file
                .benchmarks
                .iter()
                .find(|b| b.name == "sqrt(4.2) without barrier")
                .and_then(|b| b.cycles_over_bar(&file.harness));
            out.push(match over {
                Some(c) if c < vernier::analyze::NEAR_EMPTY_CYCLES => format!(
                    "sqrt(4.2) without a barrier ran {c:.1} cycles over the empty loop: time alone \
                     cannot tell a removed body from a little work that close (its loop's layout \
                     differs from the empty one's); the loops below show what is left, and \
                     `vernier run` counts the instructions."
                ),
                _ => "unexpected: sqrt(4.2) without a barrier was not flagged optimized-away, \
                      and ran well above the empty loop."
                    .into(),
            });
        }
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

/// Checkpoints around a whole program's phases: 64 MiB of events allocated, the
/// message copied into each of them, the same copy again, and the memory freed. The two
/// copies are the same work; the first is the first write to each page, which the kernel
/// maps then (a page fault per page). A benchmark that builds its input before timing, as
/// the event copies above do, never shows that cost. Returns the lines to print: a heading,
/// prints a heading and the table, and returns a sentence from its figures.
pub fn checkpoints(width: Option<usize>) -> Vec<String> {
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
        "Whole-program phases, timed with checkpoints (vernier::checkpoint in Rust and C++). Each phase is timed once, so its time has no interval: run the program again to see how far it moves (the page faults are the kernel's exact counts):",
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

/// "In doubt, look at the assembly", on the case it was first said of: the loop of the
/// iterations of `sqrt(4.2)` without a barrier beside the one with it, when both were
/// measured, with a sentence on whether each loop holds a square root instruction.
pub fn loops_without_and_with_barrier(
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
        "The measured loops of sqrt(4.2) without and with a barrier (in doubt, look at the assembly; `vernier asm -- PROGRAM` shows any benchmark's):",
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
