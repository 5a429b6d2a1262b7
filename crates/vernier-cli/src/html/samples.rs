//! A benchmark's plots: its samples over time, their histogram, the linearity of time in
//! iterations, and the figure of each process.

use super::*;
use vernier::result::SamplesJson as Samples;

fn kind_of(p: Phase) -> Kind {
    match p {
        Phase::Calibration => Kind::Calibration,
        Phase::Warmup => Kind::Warmup,
        Phase::Measure => Kind::Measure,
    }
}

/// Times at which a column's value changes (the first sample of each new process or round).
fn changes(t_s: &[f64], col: &[u32]) -> Vec<f64> {
    (1..col.len().min(t_s.len()))
        .filter(|&i| col[i] != col[i - 1])
        .map(|i| t_s[i])
        .collect()
}

pub(super) fn sample_plots(h: &mut String, b: &BenchmarkResult) {
    let s = &b.samples;
    let mut not_calibration: Vec<f64> = (0..s.ns.len())
        .filter(|&i| s.phase[i] != Phase::Calibration)
        .map(|i| per_iter(s, i))
        .collect();
    not_calibration.sort_by(f64::total_cmp);
    let typical = if b.per_iter.median_ns.is_finite() {
        b.per_iter.median_ns
    } else {
        vernier::stats::quantile_sorted(&not_calibration, 0.5)
    };
    let unit = Unit::for_ns(typical);
    time_series_plot(h, b, unit);
    histogram_plot(h, b, unit);
    linearity_plot(h, b);
    processes_plot(h, b, unit);
}

/// Sample `i`'s time per iteration.
fn per_iter(s: &Samples, i: usize) -> f64 {
    s.ns[i] as f64 / s.iters[i].max(1) as f64
}

/// The samples' time per iteration against time, marked by phase, with where each worker
/// process and each round starts.
fn time_series_plot(h: &mut String, b: &BenchmarkResult, unit: Unit) {
    let s = &b.samples;
    let n = s.ns.len();
    let over_time: Vec<Point> = (0..n)
        .map(|i| Point {
            x: s.t_s[i],
            y: per_iter(s, i),
            kind: kind_of(s.phase[i]),
        })
        .collect();
    // The scale stops a little above the bulk of the warm-up and of the steady samples (see
    // `plots::upper_fence`): the calibration's first samples (one iteration: the timer's cost)
    // and the scheduler's spikes would otherwise flatten everything else; they are drawn as
    // triangles on a line at the top of the scale.
    let fence = |phase: Phase| {
        let mut v: Vec<f64> = (0..n)
            .filter(|&i| s.phase[i] == phase)
            .map(|i| per_iter(s, i))
            .collect();
        v.sort_by(f64::total_cmp);
        plots::upper_fence(&v)
    };
    let y_max = fence(Phase::Warmup).max(fence(Phase::Measure)) * 1.05;
    let y_max = if y_max.is_finite() && y_max > 0.0 {
        y_max
    } else {
        over_time.iter().map(|p| p.y).fold(0.0, f64::max)
    };
    let processes = changes(&s.t_s, &s.process);
    let rounds = changes(&s.t_s, &s.round);
    let above = over_time.iter().filter(|p| p.y > y_max * 1.0001).count();
    figure(
        h,
        "timeseries",
        plots::time_series(&plots::TimeSeries {
            title: &format!("{}: samples over time", b.name),
            points: &over_time,
            process_starts: &processes,
            round_starts: &rounds,
            y_max_ns: y_max,
            unit,
        }),
        &format!(
            "{n} samples{}; {above} above the scale (triangles on the line at its top). {}",
            if n > plots::MAX_POINTS {
                format!(
                    ", drawn as the lowest, the median and the highest of each of {} runs \
                     of consecutive samples",
                    plots::MAX_POINTS / 3
                )
            } else {
                String::new()
            },
            if processes.is_empty() {
                String::new()
            } else {
                format!("{} worker processes.", processes.len() + 1)
            }
        ),
    );
}

/// The histogram of the steady samples' time per iteration (when there are any).
fn histogram_plot(h: &mut String, b: &BenchmarkResult, unit: Unit) {
    let s = &b.samples;
    let mut steady: Vec<f64> = (0..s.ns.len())
        .filter(|&i| s.phase[i] == Phase::Measure)
        .map(|i| per_iter(s, i))
        .collect();
    steady.sort_by(f64::total_cmp);
    if steady.is_empty() {
        return;
    }
    let hist = plots::Histogram {
        title: &format!("{}: distribution of the steady samples", b.name),
        sorted_ns: &steady,
        median_ns: b.per_iter.median_ns,
        min_ns: b.per_iter.min_ns,
        ci95_ns: b.per_iter.ci95_ns,
        run_ci95_ns: b.per_iter.run_ci95_ns,
        unit,
    };
    let (_, outside) = plots::bins(&hist);
    figure(
        h,
        "histogram",
        plots::histogram(&hist),
        &format!(
            "{} steady samples in {} bins; {outside} beyond the central {} % not shown. \
             Median {}, minimum {}.",
            steady.len(),
            plots::HIST_BINS,
            plots::pct(1.0 - 2.0 * plots::HIST_TAIL),
            format_ns(b.per_iter.median_ns),
            format_ns(b.per_iter.min_ns)
        ),
    );
}

/// Each sample's time against its iterations, with the fit T = a + b·N (when any sample has
/// both).
fn linearity_plot(h: &mut String, b: &BenchmarkResult) {
    let s = &b.samples;
    let tn: Vec<Point> = (0..s.ns.len())
        .map(|i| Point {
            x: s.iters[i] as f64,
            y: s.ns[i] as f64,
            kind: kind_of(s.phase[i]),
        })
        .collect();
    if !tn.iter().any(|p| p.x > 0.0 && p.y > 0.0) {
        return;
    }
    let pi = &b.per_iter;
    figure(
        h,
        "linearity",
        plots::linearity(&plots::Linearity {
            title: &format!("{}: linearity, T against N", b.name),
            points: &tn,
            slope_ns: pi.slope_ns,
            intercept_ns: pi.intercept_ns,
        }),
        &if pi.slope_ns.is_finite() {
            format!(
                "Fit T = a + b·N: a = {}, b = {} per iteration, R² = {:.4}.",
                format_ns(pi.intercept_ns),
                format_ns(pi.slope_ns),
                pi.r2
            )
        } else {
            "No fit (too few distinct iteration counts).".into()
        },
    );
}

/// The median of each worker process with its interval, against the run's (when there are
/// several processes).
fn processes_plot(h: &mut String, b: &BenchmarkResult, unit: Unit) {
    if b.processes.len() > 1 {
        let items: Vec<Estimate> = b
            .processes
            .iter()
            .map(|p| Estimate {
                label: format!("#{}", p.index),
                value: unit.of(p.median_ns),
                ci: [unit.of(p.ci95_ns[0]), unit.of(p.ci95_ns[1])],
                tone: 0,
            })
            .collect();
        let pads: Vec<String> = b
            .processes
            .iter()
            .map(|p| format!("#{} {} B", p.index, p.env_pad_bytes))
            .collect();
        figure(
            h,
            "processes",
            plots::intervals(&plots::Intervals {
                title: &format!("{}: median of each worker process", b.name),
                x_desc: "worker process",
                y_desc: format!("median time per iteration ({})", unit.name),
                items: &items,
                reference: Some((
                    unit.of(b.per_iter.median_ns),
                    [
                        unit.of(b.per_iter.run_ci95_ns[0]),
                        unit.of(b.per_iter.run_ci95_ns[1]),
                    ],
                    "all processes: median and this run's 95 % interval",
                )),
                marks: &[],
            }),
            &format!(
                "Each process with its 95 % interval; environment padding: {}.",
                pads.join(", ")
            ),
        );
    }
}
