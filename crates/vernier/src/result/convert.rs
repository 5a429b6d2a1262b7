//! From a measurement and its analysis to a result entry, and back: [`BenchmarkResult::new`]
//! and its inverse [`BenchmarkResult::measurement`], a file's header ([`ResultFile::begin`])
//! and the analysis context it gives back ([`ResultFile::analysis_context`]).

use super::{
    threads, BenchmarkResult, Outliers, PerIter, ProcessJson, ResultFile, SamplesJson, Session,
    SpeedJson, SpeedStateJson, Status, Tool, Warmup, SCHEMA,
};
use crate::analyze::{Analysis, Context};
use crate::diagnostic::Diagnostic;
use crate::measure::{Measurement, StopReason};
use crate::samples::{CounterColumn, Phase, Sample, Samples};
use crate::stats::steady::{SteadyState, WarmupClass};
use std::collections::BTreeMap;

impl SpeedJson {
    fn new(s: &crate::analyze::speed::Speed) -> SpeedJson {
        let state = |f: &crate::analyze::speed::StateFigure| SpeedStateJson {
            samples: f.samples,
            share: f.share,
            ghz: 1.0 / f.cycle_ns,
            median_ns: f.median_ns,
            throughput: (f.wide_ns.is_finite() && f.wide_ns > 0.0).then(|| 1.0 / f.wide_ns),
        };
        SpeedJson {
            fastest_ghz: 1.0 / s.fastest_cycle_ns,
            reference: s.reference.as_str().into(),
            fastest_throughput: s.fastest_wide_ns.map(|w| 1.0 / w),
            fast: state(&s.fast),
            slow: s.slow.as_ref().map(state),
            split: s.split,
            probed_batches: s.probed_batches,
            probe_share: s.probe_share,
            behind_known_ghz: s.behind_known_cycle_ns.map(|c| 1.0 / c),
            cycles_per_iter: s.cycles_per_iter.map(|c| c.median),
            cycles_ci95: s
                .cycles_next_ci95
                .or(s.cycles_per_iter.map(|c| [c.lo, c.hi])),
            cycles_run_ci95: s.cycles_per_iter.map(|c| [c.lo, c.hi]),
            core_share: s.core_share(),
            shared_share: s.sharing.map(|h| h.shared_share),
            wide_ratio_best: s.sharing.map(|h| h.best_ratio),
            wide_ratio_reference: s.sharing.map(|h| h.reference.as_str().into()),
            wide_ratio: s.sharing.map(|h| h.own_best_ratio),
        }
    }
}

fn stop_str(s: StopReason) -> &'static str {
    match s {
        StopReason::Precise => "precise",
        StopReason::Budget => "budget",
        StopReason::Interrupted => "interrupted",
        StopReason::Failed => "failed",
    }
}

/// One entry per process that took samples, in index order. A process with samples in the
/// headline has its figures from them (`samples` counts them); a process without (all its
/// samples in a slow state of the core, in warm-up or in calibration) is still listed, so
/// that its padding, hash seed and peak memory are kept, with the median of its own samples
/// past calibration (of all of them when it took no other) and `samples` 0.
fn process_entries(
    s: &[Sample],
    headline: &[crate::analyze::ProcessFigure],
    env_pad: &dyn Fn(u32) -> u64,
) -> Vec<ProcessJson> {
    let entry = |index: u32, median_ns: f64, ci: (f64, f64), samples: usize| ProcessJson {
        index,
        env_pad_bytes: env_pad(index),
        median_ns,
        ci95_ns: [ci.0, ci.1],
        samples,
        hash_seed: None,
        peak_rss_bytes: None,
    };
    let mut out: Vec<ProcessJson> = headline
        .iter()
        .map(|p| entry(p.index, p.median_ns, p.ci95_ns, p.samples))
        .collect();
    let mut by: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for x in s {
        if !headline.iter().any(|p| p.index == x.process) {
            let (past, all) = by.entry(x.process).or_default();
            if x.phase != Phase::Calibration {
                past.push(x.per_iter_ns());
            }
            all.push(x.per_iter_ns());
        }
    }
    for (index, (past, all)) in by {
        let v = if past.is_empty() { all } else { past };
        let ci = crate::stats::median_interval(&v);
        out.push(entry(index, ci.median, (ci.lo, ci.hi), 0));
    }
    out.sort_by_key(|p| p.index);
    out
}

impl BenchmarkResult {
    /// Assemble a benchmark's entry from its measurement and analysis.
    pub fn new(
        name: &str,
        m: &Measurement,
        a: &Analysis,
        env_pad: &dyn Fn(u32) -> u64,
    ) -> BenchmarkResult {
        let s = &m.samples.samples;
        BenchmarkResult {
            name: name.to_string(),
            status: if m.error.is_some() {
                Status::Failed
            } else if m.stop == crate::measure::StopReason::Interrupted {
                Status::Interrupted
            } else {
                Status::Ok
            },
            error: m.error.clone(),
            iters_per_sample: m.iters_per_sample,
            per_iter: a.per_iter,
            total_s: m.wall_ns as f64 * 1e-9,
            warmup: a.warmup,
            counters: (!a.counters.is_empty()).then(|| a.counters.clone()),
            interrupted: a.interrupted,
            processes: process_entries(s, &a.processes, env_pad),
            // Worded here, from the findings: the file's `message` is for its readers.
            diagnostics: a.diagnostics.iter().map(Diagnostic::from).collect(),
            steady_samples: a.steady_samples,
            outliers: a.outliers,
            worst_sigma: a.worst_sigma,
            stop: stop_str(m.stop).into(),
            speed: a.speed.as_ref().map(SpeedJson::new),
            headline_unit: a.headline_unit,
            instructions_check: None,
            earlier_runs: None,
            slowed_stretches: a.slowed_stretches.clone(),
            cache_cold: false,
            threads: a.threads.as_ref().map(|t| t.threads),
            scaling: a.threads.as_ref().map(threads::Scaling::new),
            memory: None,
            throughput: None,
            complexity: None,
            runs: Vec::new(),
            exec: None,
            executor: None,
            samples: SamplesJson {
                iters: s.iter().map(|x| x.iters).collect(),
                ns: s.iter().map(|x| x.ns).collect(),
                t_s: s.iter().map(|x| x.t_ns as f64 * 1e-9).collect(),
                phase: s.iter().map(|x| x.phase).collect(),
                process: s.iter().map(|x| x.process).collect(),
                round: if s.iter().any(|x| x.round > 0) {
                    s.iter().map(|x| x.round).collect()
                } else {
                    Vec::new()
                },
                counters: m
                    .samples
                    .counters
                    .iter()
                    .map(|c| (c.event.clone(), c.values.clone()))
                    .collect(),
                counters_scaled: m
                    .samples
                    .counters
                    .iter()
                    .filter(|c| c.scaled.contains(&true))
                    .map(|c| (c.event.clone(), c.scaled.clone()))
                    .collect(),
                interrupted: a.interrupted_samples.clone(),
                probe_ns: m.samples.probe_ns.clone(),
                probe_adds: m.samples.probe_adds,
                wide_ns: m.samples.wide_ns.clone(),
                thread_ns: m.samples.thread_ns.clone(),
                thread_cpu_ns: m.samples.thread_cpu_ns.clone(),
                thread_wait_ns: m.samples.thread_wait_ns.clone(),
                cpus: m.samples.cpus,
            },
        }
    }

    /// A benchmark that could not be measured at all.
    pub fn failed(name: &str, error: String) -> BenchmarkResult {
        BenchmarkResult {
            name: name.into(),
            status: Status::Failed,
            error: Some(error),
            iters_per_sample: 0,
            per_iter: PerIter::undefined(),
            total_s: 0.0,
            warmup: Warmup {
                samples: 0,
                seconds: 0.0,
                class: WarmupClass::Flat,
            },
            counters: None,
            interrupted: None,
            processes: vec![],
            diagnostics: vec![],
            steady_samples: 0,
            outliers: Outliers::default(),
            worst_sigma: 0.0,
            stop: "failed".into(),
            speed: None,
            headline_unit: crate::analyze::Unit::Ns,
            instructions_check: None,
            earlier_runs: None,
            slowed_stretches: Vec::new(),
            cache_cold: false,
            threads: None,
            scaling: None,
            memory: None,
            throughput: None,
            complexity: None,
            runs: Vec::new(),
            exec: None,
            executor: None,
            samples: SamplesJson::default(),
        }
    }
}

impl ResultFile {
    /// A result file with its session's header and no benchmark yet, recorded now: made as
    /// its measuring starts (the harness's own costs measured, the first benchmark not yet).
    pub fn begin(session: Session) -> ResultFile {
        ResultFile {
            schema: SCHEMA,
            tool: Tool::default(),
            recorded_at: Some(super::recorded::now()),
            machine: session.machine,
            system: session.system,
            timer: session.timer,
            harness: session.harness,
            mode: session.mode.into(),
            analysis: session.analysis,
            benchmarks: Vec::new(),
        }
    }

    /// The analysis context of this run, built from its header: the one place a `Context` is
    /// made, for a live run (after its header is assembled) and for `vernier analyze` alike.
    pub fn analysis_context(&self) -> Context {
        let counters = self.harness.counters.as_ref();
        Context {
            timer: self.timer,
            empty_iter_ns: Some(self.harness.empty_iter_ns).filter(|x| x.is_finite()),
            empty_iter_cycles: self.harness.empty_iter_cycles.filter(|x| x.is_finite()),
            cycle_ns: Some(self.harness.cycle_ns).filter(|c| c.is_finite()),
            debug_build: self.analysis.debug_build,
            target_rel_ci: self.analysis.target_rel_ci,
            timer_factor: self.analysis.timer_factor,
            counter_baseline: counters.map(|c| c.baseline.clone()).unwrap_or_default(),
            counters_note: counters.and_then(|c| c.note.clone()),
            counters_unavailable: counters
                .map(|c| {
                    c.unavailable
                        .iter()
                        .map(|u| u.event.name().to_string())
                        .collect()
                })
                .unwrap_or_default(),
            keep_interrupted: self.analysis.keep_interrupted,
            known_cycle_ns: self.harness.known_cycle_ns,
            clock_cycle_ns: self
                .harness
                .clock_ghz
                .filter(|[lo, hi]| lo.is_finite() && *lo > 0.0 && hi >= lo)
                .map(|[lo, hi]| (1.0 / hi, 1.0 / lo)),
            noise_far_share: self.harness.noise_far_share,
            noise_sample_ns: self.harness.noise_sample_ns,
            wide_ratio: self.harness.wide_ratio,
            known_wide_ratio: self.harness.known_wide_ratio,
            off_calling_core: false,
        }
    }
}

impl BenchmarkResult {
    /// The measurement this entry was made from, rebuilt from its raw samples: the inverse of
    /// [`BenchmarkResult::new`] for everything the analysis reads. The entry must have passed
    /// validation (every column as long as `ns`), as every loaded file has.
    pub fn measurement(&self) -> Measurement {
        let c = &self.samples;
        let samples = (0..c.ns.len())
            .map(|i| Sample {
                iters: c.iters[i],
                ns: c.ns[i],
                t_ns: (c.t_s[i] * 1e9).round() as u64,
                process: c.process[i],
                round: c.round.get(i).copied().unwrap_or(0),
                phase: c.phase[i],
            })
            .collect();
        let counters = c
            .counters
            .iter()
            .map(|(event, values)| CounterColumn {
                event: event.clone(),
                values: values.clone(),
                scaled: c.counters_scaled.get(event).cloned().unwrap_or_default(),
            })
            .collect();
        let steady = self.samples.phase.iter().position(|p| *p == Phase::Measure);
        Measurement {
            samples: Samples {
                samples,
                counters,
                probe_ns: c.probe_ns.clone(),
                probe_adds: c.probe_adds,
                wide_ns: c.wide_ns.clone(),
                thread_ns: c.thread_ns.clone(),
                thread_cpu_ns: c.thread_cpu_ns.clone(),
                thread_wait_ns: c.thread_wait_ns.clone(),
                cpus: c.cpus,
            },
            iters_per_sample: self.iters_per_sample,
            wall_ns: (self.total_s * 1e9).round() as u64,
            stop: stop_of(&self.stop),
            steady: steady.map(|first| SteadyState {
                first,
                class: self.warmup.class,
            }),
            error: self.error.clone(),
            // A stored result holds the count it measured at.
            calibration: crate::measure::CalibrationEnd::Found,
        }
    }
}

fn stop_of(s: &str) -> StopReason {
    match s {
        "precise" => StopReason::Precise,
        "interrupted" => StopReason::Interrupted,
        "failed" => StopReason::Failed,
        _ => StopReason::Budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_process_that_took_samples_is_listed_with_or_without_headline_samples() {
        let sample = |process, phase, ns| Sample {
            iters: 10,
            ns,
            t_ns: 0,
            process,
            round: 0,
            phase,
        };
        let s = [
            sample(0, Phase::Calibration, 900),
            sample(0, Phase::Measure, 300),
            sample(0, Phase::Measure, 310),
            sample(1, Phase::Measure, 100),
            sample(2, Phase::Calibration, 700),
        ];
        // Only process 1 is in the headline (process 0 ran in a slow state of the core,
        // process 2 ran out of time while it calibrated).
        let headline = [crate::analyze::ProcessFigure {
            index: 1,
            median_ns: 10.0,
            ci95_ns: (9.0, 11.0),
            samples: 1,
        }];
        let e = process_entries(&s, &headline, &|p| 64 * u64::from(p));
        let got: Vec<(u32, u64, f64, usize)> = e
            .iter()
            .map(|p| (p.index, p.env_pad_bytes, p.median_ns, p.samples))
            .collect();
        assert_eq!(got, [(0, 0, 30.5, 0), (1, 64, 10.0, 1), (2, 128, 70.0, 0)]);
    }
}
