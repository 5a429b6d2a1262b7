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

/// Each command's median with the shell's start-up subtracted: the median less the start-up's
/// median, its interval `[lo − startup_hi, hi − startup_lo]` (the start-up's uncertainty added
/// to the command's).
pub fn net_of_shell(own: &BenchmarkResult, startup: &BenchmarkResult) -> Option<(f64, [f64; 2])> {
    let (o, s) = (&own.per_iter, &startup.per_iter);
    let ok = |x: f64| x.is_finite();
    if !(ok(o.median_ns) && ok(s.median_ns)) {
        return None;
    }
    Some((
        o.median_ns - s.median_ns,
        [o.ci95_ns[0] - s.ci95_ns[1], o.ci95_ns[1] - s.ci95_ns[0]],
    ))
}

/// Under the table, with `--shell`: each command net of the shell's start-up.
pub fn net_of_shell_line(own: &[BenchmarkResult], startup: &BenchmarkResult) -> String {
    let f = vernier::report::format_ns;
    let parts: Vec<String> = own
        .iter()
        .filter_map(|b| {
            let (m, [lo, hi]) = net_of_shell(b, startup)?;
            Some(format!("{}: {} [{}, {}]", b.name, f(m), f(lo), f(hi)))
        })
        .collect();
    format!(
        "through the shell: the figures above include its start-up ({}, measured in the same \
         rounds); net of it (its median subtracted, its interval's width added): {}",
        startup.name,
        if parts.is_empty() {
            "none measured".to_string()
        } else {
            parts.join("; ")
        }
    )
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

/// The measurement of one command: each measured run one sample of one iteration; the
/// warm-up found from the data (MSER on the runs' wall times).
pub fn measurement(s: &Series, stop: Stop, error: Option<String>) -> Measurement {
    let mut samples = Samples::default();
    let batch: Vec<Sample> = s
        .measured()
        .zip(&s.t_ns)
        .map(|(r, &t)| Sample {
            iters: 1,
            ns: r.wall_ns,
            t_ns: t,
            process: 0,
            round: 0,
            phase: Phase::Measure,
        })
        .collect();
    samples.push_batch(&batch, &[]);
    let series: Vec<f64> = batch.iter().map(|x| x.ns as f64).collect();
    let mut st = steady::detect(&series);
    // MSER works on medians of five: one cold first run hides in its batch. Runs of a whole
    // command are each a process: a first run that stands out from every later one is cut too.
    let cold = cold_start(&series);
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
) -> BenchmarkResult {
    let m = measurement(s, stop, error.clone());
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
    let o: Vec<f64> = old.measured().map(|r| r.in_unit(unit) as f64).collect();
    let n: Vec<f64> = new.measured().map(|r| r.in_unit(unit) as f64).collect();
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

/// The comparison of every command against the reference (`reference`: its index), paired by
/// round, Holm over the commands, in CPU time when every command is CPU-bound and in wall time
/// otherwise ([`judged_unit`]); every run of each command kept.
pub fn comparisons(
    specs: &[Spec],
    series: &[Series],
    reference: usize,
    stop: Stop,
    threshold: f64,
) -> ComparisonFile {
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    let runs: Vec<&[Run]> = series.iter().map(|s| &s.runs[..]).collect();
    let unit = judged_unit(&runs);
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
