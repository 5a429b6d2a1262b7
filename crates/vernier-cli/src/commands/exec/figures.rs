//! From the runs to the figures, through the same steps as any benchmark: a command's measured
//! runs become a [`Measurement`] (one sample per run, one iteration each) that
//! [`vernier::pipeline::finish`] analyses, and two commands' runs of the same rounds become the
//! pairs of a [`PairMeasurement`] that the comparison file judges
//! ([`ComparisonFile::push_paired`]: the paired interval, Holm over the commands, the verdict).

use super::engine::{Series, Spec, Stop};
use vernier::measure::compare::{steady_ratios, PairMeasurement, PairStop};
use vernier::measure::{CalibrationEnd, Measurement, StopReason};
use vernier::result::comparison::ComparisonFile;
use vernier::result::exec::{judged_unit, Judged, Run};
use vernier::result::{BenchmarkResult, ResultFile};
use vernier::samples::{Phase, Sample, Samples};
use vernier::stats::steady;

/// The shell's own start-up as a command of its own: `SHELL -c ''`, measured in the same
/// rounds as the commands run through it.
pub fn shell_startup(shell: &str) -> Spec {
    Spec {
        name: format!("{shell} start-up ({shell} -c '')"),
        inv: crate::runner::exec::Invocation::through_shell(shell, ""),
        setup: None,
        prepare: None,
        conclude: None,
        cleanup: None,
    }
}

/// The shell's start-up as it is taken off each run through the shell: the median of its
/// measured runs' wall, user and system times (`None` when none was measured).
pub fn startup_figure(startup: &Series) -> Option<Run> {
    let runs: Vec<&Run> = startup.measured().collect();
    if runs.is_empty() {
        return None;
    }
    let median = |f: &dyn Fn(&Run) -> u64| {
        let v: Vec<f64> = runs.iter().map(|r| f(r) as f64).collect();
        vernier::stats::median(&v).round() as u64
    };
    Some(Run {
        wall_ns: median(&|r| r.wall_ns),
        user_ns: median(&|r| r.user_ns),
        system_ns: median(&|r| r.system_ns),
        exit_code: Some(0),
        ..Run::default()
    })
}

/// A command's runs net of the shell's start-up `startup`: its wall, user and system times
/// each less the start-up's, at least 0 (as hyperfine takes the start-up off each run and
/// clamps); the rest of each run as measured.
pub fn net_of(series: &Series, startup: &Run) -> Series {
    let mut net = series.clone();
    for r in &mut net.runs {
        r.wall_ns = r.wall_ns.saturating_sub(startup.wall_ns);
        r.user_ns = r.user_ns.saturating_sub(startup.user_ns);
        r.system_ns = r.system_ns.saturating_sub(startup.system_ns);
    }
    net
}

/// Under the table: the time the figures are in, and why.
pub fn unit_line(unit: Judged) -> String {
    match unit {
        Judged::Cpu => "the figures are each run's CPU time (user + system, from wait4): every \
                       command is CPU-bound, so a busy machine's waits are left out"
            .to_string(),
        Judged::Wall => "the figures are each run's wall time: a command waits off the CPU \
                         (or used none), so CPU time would leave its waits out"
            .to_string(),
    }
}

/// Whether a command's own time, net of the shell's start-up, is within the start-up's
/// spread (its runs' interquartile range, in wall time): what is left cannot be told from
/// how the start-up varies (hyperfine warns below 5 ms whatever the spread).
pub fn within_startup(net: &Series, startup: &Series) -> bool {
    let walls = |s: &Series| -> Vec<f64> { s.measured().map(|r| r.wall_ns as f64).collect() };
    let (own, st) = (walls(net), vernier::stats::sorted(&walls(startup)));
    if own.is_empty() || st.is_empty() {
        return false;
    }
    let spread =
        vernier::stats::quantile_sorted(&st, 0.75) - vernier::stats::quantile_sorted(&st, 0.25);
    vernier::stats::median(&own) <= spread
}

/// Under the table, with `--shell`: what was taken off each run, and the commands whose own
/// time it leaves within the start-up's spread.
pub fn net_of_shell_line(startup: &BenchmarkResult, taken: &Run, within: &[String]) -> String {
    let f = vernier::report::format_ns;
    let mut line = format!(
        "through the shell: the commands' figures, verdicts and exports are net of its start-up \
         ({}, measured in the same rounds): its median wall {} (user {}, system {}) taken off \
         each run (at least 0 left)",
        startup.name,
        f(taken.wall_ns as f64),
        f(taken.user_ns as f64),
        f(taken.system_ns as f64),
    );
    if !within.is_empty() {
        line.push_str(&format!(
            "; {}: what is left is within the start-up's own spread and cannot be told from it: \
             run without a shell (-N, the default) to time the command alone",
            within.join(", ")
        ));
    }
    line
}

/// Fewest later runs a first run is judged against.
pub const COLD_START_MIN_REST: usize = 8;
/// ... and a cold run is at least this much slower than their median: a series as tight as a
/// sleeper's (a far fence 1 % above its median) would otherwise cut a first run for a
/// difference no verdict rests on.
pub const COLD_START_MIN_EXCESS: f64 = 0.1;

/// How many of the first runs are a cold start: each, from the first, slower than the far
/// fence (Q3 + 3 IQR, the outliers' far rule) of every run after it and than their median by
/// [`COLD_START_MIN_EXCESS`], and at most a quarter of the runs. The first run of a command whose files are not yet in the page cache reads them
/// from the disk (ten times slower is common); the runs after it find them cached.
pub fn cold_start(series: &[f64]) -> usize {
    let mut k = 0;
    while k < series.len() / 4 {
        let rest = vernier::stats::sorted(&series[k + 1..]);
        if rest.len() < COLD_START_MIN_REST {
            break;
        }
        let (q1, q3) = (
            vernier::stats::quantile_sorted(&rest, 0.25),
            vernier::stats::quantile_sorted(&rest, 0.75),
        );
        let median = vernier::stats::median_sorted(&rest);
        if series[k] > q3 + 3.0 * (q3 - q1) && series[k] > (1.0 + COLD_START_MIN_EXCESS) * median {
            k += 1;
        } else {
            break;
        }
    }
    k
}

fn stop_reason(stop: Stop) -> StopReason {
    match stop {
        // The runs asked for (`-r`, `-M`) are a budget too: nothing was judged precise.
        Stop::Budget | Stop::Runs => StopReason::Budget,
        Stop::Interrupted => StopReason::Interrupted,
        Stop::Failed => StopReason::Failed,
    }
}

/// The measurement of one command: each measured run one sample of one iteration, its time
/// in `unit` (at least 1 ns: a run net of the shell's start-up can read 0), with the probe
/// taken beside it; the warm-up found from the data (MSER on the runs).
pub fn measurement(s: &Series, stop: Stop, error: Option<String>, unit: Judged) -> Measurement {
    let mut samples = Samples::default();
    let mut series = Vec::new();
    for (k, (r, &t)) in s.measured().zip(&s.t_ns).enumerate() {
        let sample = Sample {
            iters: 1,
            ns: r.in_unit(unit).max(1),
            t_ns: t,
            process: 0,
            round: 0,
            phase: Phase::Measure,
        };
        samples.push_batch(&[sample], &[]);
        if let Some(Some((chain, wide))) = s.probe.get(k) {
            samples.set_probe(1, super::engine::PROBE_ADDS, Some(*chain), Some(*wide));
        }
        series.push(sample.ns as f64);
    }
    let mut st = steady::detect(&series);
    // MSER works on medians of five: one cold first run hides in its batch. Runs of a whole
    // command are each a process: a first run that stands out from every later one is cut too,
    // in wall time or in the unit judged (a wait for the disk is off the CPU).
    let walls: Vec<f64> = s.measured().map(|r| r.wall_ns as f64).collect();
    let cold = cold_start(&series).max(cold_start(&walls));
    if cold > st.map_or(0, |s| s.first) {
        st = Some(steady::SteadyState {
            first: cold,
            class: steady::WarmupClass::Warmup,
        });
    }
    samples.set_warmup_cut(st.map_or(0, |s| s.first.min(series.len())));
    Measurement {
        samples,
        iters_per_sample: 1,
        wall_ns: s.wall_ns,
        stop: stop_reason(stop),
        steady: st,
        error,
        calibration: CalibrationEnd::Found,
    }
}

/// A command's result entry, with every run kept.
pub fn result(
    name: &str,
    s: &Series,
    stop: Stop,
    error: Option<String>,
    ctx: &vernier::pipeline::Context,
    unit: Judged,
) -> BenchmarkResult {
    let m = measurement(s, stop, error.clone(), unit);
    let mut r = if m.samples.is_empty() {
        BenchmarkResult::failed(
            name,
            error.unwrap_or_else(|| "no run was measured (interrupted before the first)".into()),
        )
    } else {
        vernier::pipeline::finish(name, &m, ctx, vernier::pipeline::Instructions::None)
    };
    r.runs = s.runs.clone();
    r
}

/// The pairs of `old` and `new`: their measured runs round by round (a round cut short by a
/// failure or Ctrl-C pairs only what both finished). The warm-up is cut on the pairs' ratios,
/// where a drift both sides share cancels, by the rule the paired engine uses
/// ([`steady_ratios`]: MSER, a cut that moves the ratio by less than a quarter of the
/// threshold left uncut).
pub fn pairs(
    old: &Series,
    new: &Series,
    stop: Stop,
    threshold: f64,
    unit: Judged,
) -> PairMeasurement {
    // At least 1 ns, as the samples: a run net of the shell's start-up can read 0.
    let o: Vec<f64> = old
        .measured()
        .map(|r| r.in_unit(unit).max(1) as f64)
        .collect();
    let n: Vec<f64> = new
        .measured()
        .map(|r| r.in_unit(unit).max(1) as f64)
        .collect();
    let k = o.len().min(n.len());
    let (o, n) = (o[..k].to_vec(), n[..k].to_vec());
    let ratios: Vec<f64> = o
        .iter()
        .zip(&n)
        .map(|(a, b)| if *a > 0.0 && *b > 0.0 { b / a } else { 1.0 })
        .collect();
    let st = steady_ratios(&ratios, threshold);
    let first = st.map_or(0, |s| s.first.min(k));
    let estimate = if k > first {
        vernier::stats::compare::paired(&o[first..], &n[first..]).ok()
    } else {
        None
    };
    PairMeasurement {
        iters_per_sample: 1,
        t_s: old.t_ns[..k]
            .iter()
            .zip(&new.t_ns[..k])
            .map(|(a, b)| (*a.max(b)) as f64 / 1e9)
            .collect(),
        old_ns: o,
        new_ns: n,
        first_steady: first,
        warmup: st.map(|s| s.class),
        estimate,
        stop: match stop {
            Stop::Budget | Stop::Runs => PairStop::Budget,
            Stop::Interrupted => PairStop::Interrupted,
            Stop::Failed => PairStop::Failed,
        },
        wall_ns: old.wall_ns + new.wall_ns,
        error: None,
        rewarm: None,
        samples: (k, k),
        looks: 0,
    }
}

/// The unit every command of a run is judged in, one rule for one command and for several:
/// CPU time when every command is CPU-bound, wall time otherwise ([`judged_unit`]).
pub fn unit_of(series: &[Series]) -> Judged {
    let runs: Vec<&[Run]> = series.iter().map(|s| &s.runs[..]).collect();
    judged_unit(&runs)
}

/// The comparison of every command against the reference (`reference`: its index), paired by
/// round, Holm over the commands, in `unit` ([`unit_of`]); every run of each command kept.
pub fn comparisons(
    specs: &[Spec],
    series: &[Series],
    reference: usize,
    stop: Stop,
    threshold: f64,
    unit: Judged,
) -> ComparisonFile {
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    let mut file = ComparisonFile::new(vernier::stats::compare::Mode::Paired, threshold);
    (file.old, file.new) = old_and_new(&names, reference);
    for (i, s) in series.iter().enumerate() {
        if i != reference {
            file.push_paired(
                &names[i],
                &pairs(&series[reference], s, stop, threshold, unit),
                true,
            );
        }
    }
    file.exec = Some(vernier::result::exec::Comparison {
        judged: unit,
        commands: specs
            .iter()
            .zip(series)
            .map(|(s, series)| vernier::result::exec::Command {
                name: s.name.clone(),
                command: s.inv.line.clone(),
                runs: series.runs.clone(),
            })
            .collect(),
        shell_startup: None,
    });
    file
}

/// Under the table: each command's median CPU time, peak RSS and page faults per run (`None`
/// when no run was measured).
pub fn resources_line(file: &ResultFile) -> Option<String> {
    let mut parts = Vec::new();
    for b in &file.benchmarks {
        let runs: Vec<&vernier::result::exec::Run> = b.runs.iter().filter(|r| !r.warmup).collect();
        if runs.is_empty() {
            continue;
        }
        let med = |f: &dyn Fn(&vernier::result::exec::Run) -> u64| {
            let v: Vec<f64> = runs.iter().map(|r| f(r) as f64).collect();
            vernier::stats::median(&v)
        };
        parts.push(format!(
            "{}: user {} · system {} · peak RSS {:.1} MiB · {:.0} minor / {:.0} major faults · {:.0} voluntary / {:.0} involuntary switches",
            b.name,
            vernier::report::format_ns(med(&|r| r.user_ns)),
            vernier::report::format_ns(med(&|r| r.system_ns)),
            med(&|r| r.max_rss_bytes) / (1024.0 * 1024.0),
            med(&|r| r.minor_faults),
            med(&|r| r.major_faults),
            med(&|r| r.voluntary_switches),
            med(&|r| r.involuntary_switches),
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "per run (median of the measured runs, from wait4): {}",
            parts.join("; ")
        )
    })
}

/// A comparison file's `old` (the reference's name) and `new` (the others', joined).
pub fn old_and_new(names: &[String], reference: usize) -> (String, String) {
    let new = names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != reference)
        .map(|(_, n)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    (names[reference].clone(), new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cold_first_run_is_cut_and_a_steady_series_is_not() {
        let mut runs = vec![
            175.0, 12.0, 7.0, 13.0, 11.0, 19.0, 7.4, 16.8, 18.7, 16.5, 19.3, 15.4,
        ];
        assert_eq!(cold_start(&runs), 1);
        runs[1] = 120.0;
        assert_eq!(cold_start(&runs), 2);
        let steady = [10.0, 11.0, 10.5, 10.2, 10.8, 10.1, 10.9, 10.4, 10.6, 10.3];
        assert_eq!(cold_start(&steady), 0);
        // A sleeper's first run 1 % slow is beyond its tight fence, not a cold start.
        let tight = [
            707.0, 700.0, 700.2, 700.1, 700.3, 700.0, 700.2, 700.1, 700.4, 700.2,
        ];
        assert_eq!(cold_start(&tight), 0);
        // Too few runs after it to tell.
        assert_eq!(cold_start(&[100.0, 10.0, 10.0, 10.0]), 0);
    }
}
