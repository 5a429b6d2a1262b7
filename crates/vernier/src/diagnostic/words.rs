//! Every diagnostic in words, from its code and figures: the result file's `message`, the
//! report's short forms, and each code's general explanation. The one place a diagnostic's
//! text is written; analysis only fills in a [`Finding`], and nothing reads a message back.

use super::{
    Code, CycleSource, Estimates, Finding, Interruption, Removed, Shared, Slowed, SpeedReference,
};
use crate::units::format_ns;

/// What to do about `optimized-away`.
pub const OPTIMIZED_AWAY_FIX: &str = "Pass inputs through vernier::black_box (C++: \
    vernier::do_not_optimize) and return the result from the closure, so the compiler cannot \
    drop the work.";

/// What to do about a core that changed speed (`core-slowed` with a slow state).
const CORE_SLOWED_FIX: &str = "The machine's cores change speed (a busy sibling thread or \
      neighbour on the host, power or thermal limits): re-run when it is quiet, pin the \
      benchmark to an isolated core (--cpu; `vernier system show`), and compare only figures \
      measured in the same state.";

/// What to do about a core whose issue width a neighbour shares (`core-shared`).
pub const CORE_SHARED_FIX: &str = "Measure on a machine with whole cores: a dedicated or \
      bare-metal runner, or a larger cloud instance whose vCPUs are whole cores; `vernier system \
      noise` says how often this machine's core is shared, and compare only figures measured in \
      the same state.";

/// The diagnostic's message: what was found, with its figures, and the fix.
pub fn message(f: &Finding) -> String {
    match f {
        Finding::OptimizedAway(r) => removed(r),
        Finding::Nonlinear {
            intercept_ns,
            slope_ns,
            r2,
            median_ns,
        } => format!(
            "sample time is not proportional to the iteration count: T = {intercept_ns:.1} ns + \
             {slope_ns:.4} ns × N (R² = {r2:.3}) against a median of {median_ns:.4} ns per \
             iteration. Work outside the loop body, or state carried between iterations (caches, \
             allocations), is being measured: move setup out of the timed closure \
             (bench_with_setup) and check the samples in --json."
        ),
        Finding::NoSteadyState { seconds } => format!(
            "the timings kept drifting for the whole {seconds:.2} s: no steady state was found, \
             and the figures come from the last part only. Give it longer (--time), or look at \
             the time series (--json) for what changes."
        ),
        Finding::Unstable {
            rel_ci,
            limit_rel_ci,
            seconds,
            steady_samples,
        } => format!(
            "the 95 % interval is ±{:.2} % of the median after {seconds:.2} s ({steady_samples} \
             steady samples), wider than ±{:.1} %: the machine is noisy. Run longer (--time), \
             pin the benchmark (--cpu), and see `vernier system show` and `vernier system \
             noise`.",
            rel_ci * 100.0,
            limit_rel_ci * 100.0
        ),
        Finding::TimerLimited {
            sample_ns,
            timer_factor,
            overhead_ns,
            resolution_ns,
        } => format!(
            "samples last {sample_ns:.0} ns, less than {timer_factor:.0}× the timer's cost \
             ({overhead_ns:.1} ns) and resolution ({resolution_ns:.2} ns): the clock's own error \
             is a visible part of each sample. Give the benchmark more time (--time) so \
             calibration can lengthen samples."
        ),
        Finding::Outliers { far, of, period_ns } => outliers(*far, *of, *period_ns),
        Finding::Interrupted(i) => interrupted(i),
        Finding::LayoutSensitive {
            processes,
            spread,
            lo_ns,
            hi_ns,
            within,
        } => format!(
            "the {processes} processes disagree by {:.2} % (medians {} to {}), more than their \
             own intervals (±{:.2} %) explain: the code is sensitive to memory layout \
             (environment size, stack and code alignment). The interval above covers the spread \
             between processes; reproduce one layout with --env-pad BYTES --no-aslr.",
            spread * 100.0,
            format_ns(*lo_ns),
            format_ns(*hi_ns),
            within * 100.0
        ),
        Finding::DebugBuild => "the benchmark was compiled without optimisation: its figures \
             say nothing about release code. Build with --release (cargo) or -O2 (C++)."
            .into(),
        // First sentence: what is missing (the report prints it under every benchmark); then
        // the run's note with the reasons and fixes (printed once per run).
        Finding::CountersUnavailable { events, note } => {
            format!("not read: {}. {note}", events.join(", "))
        }
        Finding::CoreSlowed(s) => slowed(s),
        Finding::CoreShared(s) => core_shared(s),
        Finding::Contended {
            threads,
            speedup,
            speedup_ci95,
            below,
            on_cpu_speedup,
            cpu_wait_share,
        } => format!(
            "{threads} threads together do {speedup:.2}× the work of one thread per unit of time \
             (95 % interval {:.2}–{:.2}×{}), less than the {below:.2}× of throughput growing half \
             as fast as the threads: they wait for each other (a lock, an atomic, a cache line \
             written by several threads). Give each thread its own data, on its own cache line \
             (alignas(64), #[repr(align(64))]), and combine at the end (docs/threads.md).",
            speedup_ci95[0],
            speedup_ci95[1],
            on_cpu_detail(*on_cpu_speedup, *cpu_wait_share)
        ),
        Finding::Oversubscribed {
            threads,
            cpus,
            cpu_wait_share,
        } => format!(
            "{threads} threads on {cpus} CPUs: threads took turns on a CPU{}, so the figure \
             includes the scheduler's time slices. Use at most {cpus} threads, or give the run \
             more CPUs (--cpu).",
            cpu_wait_share
                .map(|w| format!(" (they waited for one {} of the time)", percent(w)))
                .unwrap_or_default()
        ),
        Finding::MemoryUnavailable { reason } => {
            format!("allocations were not counted: {reason}")
        }
        Finding::Shifted {
            unit,
            median,
            earlier,
            runs,
        } => shifted(unit, *median, *earlier, *runs),
    }
}

/// `outliers`: `far` of `of` samples, and the period they recur with when they do.
fn outliers(far: usize, of: usize, period_ns: Option<f64>) -> String {
    let period = period_ns
        .map(|p| format!(", recurring every {:.2} ms ({:.0} Hz)", p * 1e-6, 1e9 / p))
        .unwrap_or_default();
    format!(
        "{far} of {of} samples ({:.1} %) are far outliers (beyond 3 × IQR){period}: interrupts \
         or other processes are stealing the CPU. The median is robust to them; to remove them, \
         pin to a quiet CPU (`vernier system noise`) and see `vernier system show`.",
        100.0 * far as f64 / of as f64
    )
}

/// `shifted`: this run's `median` per iteration in `unit` (`ns` or cycles) beside the range
/// `[lo, hi]` of the program's `runs` recent runs, each figure in that unit.
fn shifted(unit: &str, median: f64, [lo, hi]: [f64; 2], runs: usize) -> String {
    let side = if median > hi { "above" } else { "below" };
    let (m, lo, hi) = if unit == "ns" {
        (format_ns(median), format_ns(lo), format_ns(hi))
    } else {
        let c = crate::units::format_count;
        (
            format!("{} cycles", c(median)),
            c(lo),
            format!("{} cycles", c(hi)),
        )
    };
    format!(
        "this run read {m} per iteration, {side} the {runs} recent runs of this program on this \
         machine ({lo}–{hi}), in the unit it is judged in: something the core's clock does not \
         explain changed between runs (a first run after a pause, a busy neighbour, other \
         inputs). Run again before reading a change into it."
    )
}

/// A share as a percentage: whole percents, one decimal below 10 %.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p < 10.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.0} %")
    }
}

/// What `contended` adds when the threads' own clocks were read: the speed-up with the waits
/// for a CPU left out, which is what makes the finding the code's.
fn on_cpu_detail(on_cpu_speedup: Option<f64>, cpu_wait_share: Option<f64>) -> String {
    match (on_cpu_speedup, cpu_wait_share) {
        (Some(b), Some(w)) => format!(
            "; {b:.2}× with their waits for a CPU left out, which took {} of their time",
            percent(w)
        ),
        (Some(b), None) => format!("; {b:.2}× counting only their time on a CPU"),
        (None, _) => String::new(),
    }
}

fn interrupted(i: &Interruption) -> String {
    match i {
        Interruption::Samples {
            samples,
            of,
            share,
            median_with_ns,
            median_without_ns,
            estimates,
            cpu_wait_share,
        } => {
            let without = median_without_ns.unwrap_or(f64::NAN);
            let shift = (median_with_ns / without - 1.0) * 100.0;
            let what = match estimates {
                Estimates::Excluded => {
                    "excluded from the estimates (--keep-interrupted keeps them)"
                }
                Estimates::KeptAsAsked => "kept in the estimates (--keep-interrupted)",
                Estimates::KeptAllInterrupted => {
                    "kept in the estimates: every steady sample was interrupted"
                }
            };
            let (cause, waited) = match cpu_wait_share {
                Some(w) => (
                    "a context switch, a CPU migration or a thread waiting for a CPU",
                    format!(
                        " (the threads waited for a CPU {} of their time)",
                        percent(*w)
                    ),
                ),
                None => ("a context switch or a CPU migration", String::new()),
            };
            format!(
                "{samples} of {of} steady samples ({:.1} %) had {cause}{waited}, {what}; median \
                 {} with them, {} without ({shift:+.2} %). Another task shares the CPU or the \
                 benchmark blocks (sleeps, I/O, locks): pin it to a quiet CPU (--cpu) and see \
                 `vernier system show`.",
                share * 100.0,
                format_ns(*median_with_ns),
                format_ns(without),
            )
        }
        Interruption::ThreadsWaited {
            threads,
            speedup,
            on_cpu_speedup,
            below,
            cpu_wait_share,
            off_cpu_share,
        } => {
            let (why, unknown) = match (cpu_wait_share, off_cpu_share) {
                (Some(w), _) => (
                    format!("threads waited for a CPU {} of the time", percent(*w)),
                    "",
                ),
                (None, o) => (
                    format!(
                        "threads were off their CPUs {} of the time",
                        o.map_or_else(|| "part".to_string(), percent)
                    ),
                    " (this system does not say whether they waited for a CPU or blocked on a \
                     lock: /proc/thread-self/schedstat is missing, so contention is not ruled \
                     out)",
                ),
            };
            let left_out = on_cpu_speedup
                .map(|b| format!(", {b:.2}× with that time left out"))
                .unwrap_or_default();
            format!(
                "{why}: the scaling reflects the machine's load, not the code; re-run on an \
                 idle machine or with fewer threads. {threads} threads did {speedup:.2}× the \
                 work of one per unit of time (below the {below:.2}× of half of perfect \
                 scaling){left_out}{unknown}."
            )
        }
    }
}

fn removed(r: &Removed) -> String {
    let fix = OPTIMIZED_AWAY_FIX;
    match r {
        Removed::BelowQuarterCycle { median_ns, cycle } => {
            let cycles = match cycle {
                Some(c) => format!(
                    "{:.2} cycles by {}",
                    median_ns / c.ns,
                    match c.source {
                        CycleSource::Counters => "counted cycles",
                        CycleSource::AddChain => "an add-chain estimate",
                    }
                ),
                None => "no cycle estimate".into(),
            };
            format!(
                "{median_ns:.3} ns per iteration ({cycles}) is below a quarter of a cycle: no \
                 real work is being measured. {fix}"
            )
        }
        Removed::LikeEmptyLoop {
            median_ns,
            empty_ns,
        } => format!(
            "{median_ns:.3} ns per iteration is indistinguishable from the harness's loop around \
             an empty body ({empty_ns:.3} ns): the work was removed, or it fits in the loop's own \
             cycle (no instruction count tells them apart here: `--instructions` counts them \
             under callgrind). {fix}"
        ),
        Removed::NoSlope { slope_ns } => format!(
            "sample time does not grow with the iteration count (slope {slope_ns:.4} ns per \
             iteration): the loop body was removed or hoisted out. {fix}"
        ),
        Removed::Instructions {
            median_ns,
            instructions_per_iter: ir,
            empty_instructions_per_iter: empty,
            moves_per_iter,
        } => {
            let moves = match moves_per_iter {
                Some(m) if *m >= 0.5 => format!(
                    " ({m:.2} of them moves into a register of a value computed before the loop: \
                     a constant the compiler folded, handed to the barrier)"
                ),
                _ => String::new(),
            };
            match median_ns {
                Some(median_ns) => format!(
                    "{median_ns:.3} ns per iteration is within reach of the empty loop's time \
                     (an async body's: the empty future's on its executor), and callgrind counts \
                     {ir:.2} instructions per iteration{moves}, no more than that bar's \
                     {empty:.2}: the work was removed. {fix}"
                ),
                None => format!(
                    "{ir:.2} instructions per iteration{moves}, no more than the harness's loop \
                     around an empty body (an async body's: the empty future on its executor) \
                     ({empty:.2}): the work was removed. {fix}"
                ),
            }
        }
    }
}

/// Whether a slow state is one of shared units rather than of the clock: the probe's
/// throughput half slowed clearly more (5 %) than its clock half.
fn shared(throughput_slowdown: f64, clock_slowdown: f64) -> bool {
    throughput_slowdown > clock_slowdown * 1.05
}

/// Why a core gives a thread less throughput at the same clock.
const SHARED: &str = "something shared the core's units, most likely a busy sibling thread on \
                      the host";

fn core_shared(s: &Shared) -> String {
    let head = format!(
        "a neighbour shared the core's issue width (another thread on the physical core: SMT, \
         another tenant on a cloud machine) for {:.0} % of the steady samples: the throughput \
         half of the core-speed probe (eight independent chains of additions) had {:.0} % of \
         this core's best rate (median) while its clock half held",
        s.shared_share * 100.0,
        s.core_share * 100.0,
    );
    let fix = CORE_SHARED_FIX;
    match (s.wholly, s.unshared_median_ns, s.shared_median_ns) {
        (false, Some(u), Some(sh)) => format!(
            "{head}. This benchmark felt it ({:.2}× in the unit judged): the headline is the \
             unshared samples' figure ({}); shared, it took {}. {fix}",
            s.slowdown,
            format_ns(u),
            format_ns(sh),
        ),
        _ => format!(
            "{head}, for too much of the run to give an unshared figure. This benchmark's \
             samples follow that probe (those taken more shared read {:.1} % slower): the \
             figure is the shared core's, higher than on a whole core, and the next run may \
             find the core whole. {fix}",
            (s.slowdown - 1.0) * 100.0,
        ),
    }
}

fn slowed(s: &Slowed) -> String {
    let ghz = |c: f64| 1.0 / c;
    let fix = CORE_SLOWED_FIX;
    match s {
        Slowed::BehindKnown {
            fast_cycle_ns,
            known_cycle_ns,
        } => format!(
            "the core ran {:.1} % slower ({:.2} GHz-equivalent on a chain of additions) than \
             this machine's known speed ({:.2} GHz, the fast state of earlier runs) for the \
             whole benchmark: a compute-bound figure is up to that much higher than on the \
             machine at its usual speed, beyond the interval. Re-run when the machine is quiet, \
             pin the benchmark to an isolated core (--cpu; `vernier system show`), and compare \
             only figures measured at the same speed.",
            (fast_cycle_ns / known_cycle_ns - 1.0) * 100.0,
            ghz(*fast_cycle_ns),
            ghz(*known_cycle_ns)
        ),
        Slowed::TwoStates {
            fast_cycle_ns,
            fast_share,
            fast_median_ns,
            slow_cycle_ns,
            slow_share,
            slow_median_ns,
            fastest_cycle_ns,
            throughput_slowdown,
        } => {
            let clock = slow_cycle_ns / fastest_cycle_ns;
            let slow = match throughput_slowdown.filter(|t| shared(*t, clock)) {
                Some(t) => format!(
                    ", and for {:.0} % at {:.2} GHz but with {t:.2}× less throughput for \
                     independent work (eight chains of additions): {SHARED}",
                    slow_share * 100.0,
                    ghz(*slow_cycle_ns),
                ),
                None => format!(
                    " and {clock:.2}× slower ({:.2} GHz) for {:.0} %",
                    ghz(*slow_cycle_ns),
                    slow_share * 100.0,
                ),
            };
            format!(
                "the core ran in two states: {:.2} GHz-equivalent (a chain of additions) for \
                 {:.0} % of the steady samples{slow}. The distribution is bimodal: the headline \
                 is the fast state's figure ({}); in the slow state the benchmark took {} \
                 ({:+.1} %). {fix}",
                ghz(*fast_cycle_ns),
                fast_share * 100.0,
                format_ns(*fast_median_ns),
                format_ns(*slow_median_ns),
                (slow_median_ns / fast_median_ns - 1.0) * 100.0,
            )
        }
        Slowed::SlowState {
            slow_cycle_ns,
            slow_share,
            fastest_cycle_ns,
            throughput_slowdown: Some(t),
            ..
        } if shared(*t, slow_cycle_ns / fastest_cycle_ns) => format!(
            "the core gave this thread {t:.2}× less throughput for independent work (eight \
             chains of additions) than at its best during this benchmark, at {:.2} GHz, for \
             {:.0} % of the steady samples, too many to give a figure in the fast state: \
             {SHARED}; the figure is the slow state's, and would differ in the fast one (by how \
             much depends on what bounds the benchmark). {fix}",
            ghz(*slow_cycle_ns),
            slow_share * 100.0,
        ),
        Slowed::SlowState {
            slow_cycle_ns,
            slow_share,
            fastest_cycle_ns,
            against,
            ..
        } => format!(
            "the core ran {:.2}× slower ({:.2} GHz-equivalent on a chain of additions) than {} \
             ({:.2} GHz) for {:.0} % of the steady samples, too many to give a figure in the \
             fast state: the figure is the slow state's, and would differ in the fast one (by \
             how much depends on what bounds the benchmark). {fix}",
            slow_cycle_ns / fastest_cycle_ns,
            ghz(*slow_cycle_ns),
            match against {
                SpeedReference::Probes => "its fastest state during this benchmark",
                SpeedReference::StartUp => "the speed measured when the harness started",
                SpeedReference::Nominal => "the processor's nominal (TSC) rate",
                SpeedReference::Known => "this machine's known speed (earlier runs)",
            },
            ghz(*fastest_cycle_ns),
            slow_share * 100.0,
        ),
    }
}

/// A benchmark's row names the counters it could not read; why, and the fix, are the run's
/// note, printed once below the table.
pub fn not_read_row(events: &[String]) -> String {
    format!(
        "not read: {} (why, and the fix: the counters note of the run)",
        events.join(", ")
    )
}

/// The counters line names the counters it could not read (never a silently missing column).
pub fn not_read_counters(events: &[String]) -> String {
    format!("not read: {} (counters-unavailable)", events.join(", "))
}

/// What a code means and the fix, in general terms (each benchmark's own figures are in its
/// diagnostic's message, under `-v` and in the result file).
pub fn explanation(code: Code) -> &'static str {
    match code {
        Code::OptimizedAway => {
            "the time per iteration is that of an empty loop, under a quarter of a cycle, or does \
             not grow with the iteration count: the compiler removed the work. Pass inputs \
             through vernier::black_box (C++: vernier::do_not_optimize) and return the result, \
             or count instructions with --instructions."
        }
        Code::Nonlinear => {
            "the time of a sample does not grow in proportion to its iterations (T = a + b·N \
             fits poorly, or its slope disagrees with the median): state carried between \
             iterations, or a cost per sample. Check the benchmark's setup; -v shows the fit."
        }
        Code::NoSteadyState => {
            "the times never settled within the budget: the figures include a drift. Run longer \
             (--time) and see `vernier system show`."
        }
        Code::Unstable => {
            "the run's own 95 % interval in the unit the benchmark is judged in (±cycles for code \
             that follows the clock, ±this run otherwise: docs/units.md) stayed wider than ±1 % \
             after the budget: the machine is noisy. Run longer (--time), pin the benchmark \
             (--cpu), see `vernier system show` and `vernier system noise`."
        }
        Code::TimerLimited => {
            "samples are short beside the timer's cost or resolution: the figure leans on the \
             clock. Give the benchmark more work per iteration or a longer budget."
        }
        Code::Outliers => {
            "many samples far outside the bulk (beyond 3 × IQR): interrupts or other processes \
             took the CPU. The median is robust to them; pin to a quiet CPU (`vernier system \
             noise`)."
        }
        Code::Interrupted => {
            "a share of samples saw a context switch or a CPU migration, or (threads) a thread \
             waiting for a CPU (excluded unless --keep-interrupted; -v gives the count and how \
             far they move the median); a threaded benchmark's poor scaling may be its threads' \
             waits for a CPU rather than contention (the message gives the share). Pin (--cpu) \
             and quiet the machine."
        }
        Code::LayoutSensitive => {
            "processes with different memory layouts (environment size) disagree beyond their \
             intervals: the code is sensitive to alignment. The median spans the processes; \
             `vernier sweep` maps the effect."
        }
        Code::DebugBuild => {
            "the benchmark was compiled without optimisation: its figures say little about a \
             release build. Build with optimisation (-O2, --release, CMAKE_BUILD_TYPE=Release)."
        }
        Code::CountersUnavailable => {
            "some performance counters could not be read (absent from the results, not zero); \
             `vernier system show` says why and the fix."
        }
        Code::MemoryUnavailable => {
            "allocations could not be counted for this benchmark (the message says why): \
             docs/memory.md lists the causes and fixes."
        }
        Code::CoreSlowed => {
            "the core ran markedly slower than its own fastest state (or the machine's known \
             speed) during the benchmark: the figure is of a slowed core. Run again when the \
             machine is idle; -v gives the speeds."
        }
        Code::Contended => {
            "a threaded benchmark's throughput grows less than half as fast as its threads: \
             they wait for each other (a lock, an atomic, a cache line written by several \
             threads). Give each thread its own data on its own cache line (docs/threads.md)."
        }
        Code::Oversubscribed => {
            "more threads than the CPUs the run may use: threads took turns on a CPU. Use at \
             most as many threads as CPUs, or give the run more (--cpu)."
        }
        Code::CoreShared => {
            "a neighbour shared the core's issue width while the benchmark ran (the throughput \
             half of the core-speed probe slow, its clock half not), and the benchmark's \
             samples followed it: throughput-bound code runs up to 1.7× slower on a shared \
             core. Measure on whole cores (a dedicated or bare-metal runner, a larger \
             instance); `vernier system noise` says how often the core is shared."
        }
        Code::Shifted => {
            "this run's figure lies beyond this program's recent runs on this machine, in the \
             unit it is judged in (beyond the run's own interval and 1 %): something the clock \
             does not explain changed between runs. Run again before reading a change into it."
        }
    }
}
