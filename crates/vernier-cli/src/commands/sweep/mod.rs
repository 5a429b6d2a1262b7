//! `vernier sweep --env-pad START:END:STEP -- PROGRAM`: the layout experiment. One
//! worker process per environment size (and per run, `--runs`), address-space randomisation
//! off unless `--aslr`, so that the only difference between processes is where the stack
//! starts. Each benchmark's median per padding, its swing ((max − min) / min over the
//! paddings) and, when the medians repeat, their period (from the autocorrelation of the
//! series). The result is written after every padding, so Ctrl-C keeps what was measured.
//!
//! Where the worker runs the core-speed probe, each point also has its median in cycles of the
//! core at the time, and the swing and period are judged in cycles: the clock moves during a
//! sweep (a chain of 100 register adds, which no layout can change, read 23.78–25.04 ns over 65
//! paddings, each point ±0.2 %), and that is the clock's swing, not the layout's. The summary
//! says when the swing in ns is the clock's.

mod figures;

pub use crate::files::sweep::{Point, PointBench, Range, Summary, SweepFile};
use crate::runner::worker::{Control, WorkerProcess, WorkerTarget};
use crate::term;
use anyhow::{bail, Context as _, Result};
use clap::Args;
use figures::{in_cycles, summarise, summary_text};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use vernier::measure::{self, MonotonicClock, StopReason};
use vernier::plan::Plan;
use vernier::protocol::BenchRef;
use vernier::report::format_ns;
use vernier::samples::Phase;

#[derive(Args, Clone, Debug)]
pub struct SweepArgs {
    /// Environment paddings to visit, in bytes: START:END:STEP (END included), e.g. 0:4096:64.
    #[arg(long, value_name = "START:END:STEP")]
    pub env_pad: String,
    /// Worker processes per padding (their samples are pooled).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub runs: usize,
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Measurement budget per benchmark and process, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIME_S)]
    pub time: f64,
    /// Write the sweep (the schema in docs/experiments.md) to FILE, after every padding.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the sweep as an HTML report (each benchmark's median against the padding).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Keep address-space layout randomisation on (by default it is off, so the environment's
    /// size is the only layout change between processes).
    #[arg(long)]
    pub aslr: bool,
    /// Pin workers to these CPUs (e.g. `1`).
    #[arg(long, value_name = "LIST")]
    pub cpu: Option<String>,
    /// The benchmark executable and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]")]
    pub program: Vec<OsString>,
}

/// Default budget per benchmark and process: 0.2 s, so a sweep of 65 paddings with
/// two benchmarks takes about half a minute.
pub const DEFAULT_TIME_S: f64 = 0.2;
/// A period is reported when the autocorrelation of the medians at that lag is at least this:
/// the series then repeats with most of its variance.
pub const PERIOD_MIN_ACF: f64 = 0.5;
/// Sweeps of more paddings than this are refused (a typo such as 0:40960:1).
pub const MAX_POINTS: u64 = 100_000;

impl Range {
    pub fn parse(s: &str) -> Result<Range> {
        let bad = || {
            anyhow::anyhow!(
                "--env-pad '{s}': expected START:END:STEP in bytes, e.g. 0:4096:64 (END ≥ START, \
                 STEP ≥ 1)"
            )
        };
        let v: Vec<u64> = s
            .split(':')
            .map(|x| x.trim().parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [start, end, step] = v[..] else {
            return Err(bad());
        };
        if step == 0 || end < start {
            return Err(bad());
        }
        let r = Range { start, end, step };
        if r.count() > MAX_POINTS {
            bail!(
                "--env-pad '{s}' has {} paddings; at most {MAX_POINTS} (take a larger STEP)",
                r.count()
            );
        }
        Ok(r)
    }

    pub fn count(&self) -> u64 {
        (self.end - self.start) / self.step + 1
    }

    pub fn pads(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.count()).map(|i| self.start + i * self.step)
    }
}

/// The sweep's plan and its estimated duration, before it starts.
fn say_plan(a: &SweepArgs, range: &Range, benchmarks: usize, processes: u64, spawn_s: f64) {
    let estimate = processes as f64 * (spawn_s + benchmarks as f64 * a.time);
    println!(
        "sweep: {} paddings ({}–{} bytes, step {}) × {} process(es) × {} benchmark(s) × {} s ≈ {:.0} s; \
         ASLR {}",
        range.count(),
        range.start,
        range.end,
        range.step,
        a.runs,
        benchmarks,
        a.time,
        estimate,
        if a.aslr {
            "on (--aslr): each process also gets a random layout"
        } else {
            "off, so the environment's size is the only layout change (--aslr keeps it on)"
        }
    );
}

/// After the last padding: how many, in how long, the summary, and the HTML report.
fn finish_sweep(a: &SweepArgs, file: &SweepFile, started: Instant) {
    println!(
        "\n{} padding(s) in {:.1} s{}",
        file.points.len(),
        started.elapsed().as_secs_f64(),
        if term::interrupted() {
            " (interrupted: the padding in progress is left out)"
        } else {
            ""
        }
    );
    print!("{}", summary_text(file));
    if let Some(path) = &a.html {
        let what = crate::html::write_sweep(path, file);
        crate::html::write_or_warn(path, what, a.json.as_deref());
    }
}

pub fn sweep_command(a: &SweepArgs) -> Result<i32> {
    let range = Range::parse(&a.env_pad)?;
    if a.runs == 0 {
        bail!("--runs 0: at least one process per padding is needed");
    }
    if !(a.time > 0.0 && a.time.is_finite()) {
        bail!("--time {}: expected a positive number of seconds", a.time);
    }
    crate::args::check_outputs(a.json.as_ref(), a.html.as_ref())?;
    let filter = crate::args::Selection::new(crate::args::parse_filter(a.filter.as_deref())?, None);
    let (program, args) = crate::runner::processes::split_program(&a.program);
    let ctl = Control {
        cpus: a
            .cpu
            .as_deref()
            .map(crate::runner::processes::parse_cpu_list)
            .transpose()?
            .unwrap_or_default(),
        no_aslr: !a.aslr,
        env_pad: range.start,
        timeout: Duration::from_secs_f64(crate::runner::worker::DEFAULT_TIMEOUT_S),
        ..Control::default()
    };
    term::install_ctrlc();

    let t_spawn = Instant::now();
    let first = WorkerProcess::spawn(&program, &args, &ctl).map_err(anyhow::Error::msg)?;
    let spawn_s = t_spawn.elapsed().as_secs_f64();
    let names = first.names.clone();
    first.quit();
    let selected = crate::args::select(&program, &names, filter.as_ref())?;
    let sel_names: Vec<String> = selected.iter().map(|&i| names[i].clone()).collect();
    let processes = range.count() * a.runs as u64;
    say_plan(a, &range, selected.len(), processes, spawn_s);

    let mut sweep = Sweep {
        runs: a.runs,
        program,
        args,
        ctl,
        fixed: vec![None; selected.len()],
        selected,
        names,
        plan: Plan::with_budget((a.time * 1e9) as u64),
    };
    let mut file = SweepFile {
        schema: 1,
        env_pad: range.clone(),
        aslr: a.aslr,
        points: Vec::new(),
        summary: Vec::new(),
    };
    let started = Instant::now();
    let total = range.count();
    for (k, pad) in range.pads().enumerate() {
        let Some(g) = sweep.at_pad(pad)? else {
            break;
        };
        let benchmarks = point_benches(&sel_names, &g.ns, &g.cycles, &g.probes);
        let left = started.elapsed().as_secs_f64() / (k + 1) as f64 * (total - k as u64 - 1) as f64;
        say_point((k, total), pad, &benchmarks, left);
        file.points.push(Point {
            env_pad_bytes: pad,
            benchmarks,
        });
        file.summary = summarise(&sel_names, &file.points, range.step);
        if let Some(path) = &a.json {
            write_json(path, &file)?;
        }
    }
    file.summary = summarise(&sel_names, &file.points, range.step);
    if let Some(path) = &a.json {
        write_json(path, &file)?;
    }
    finish_sweep(a, &file, started);
    Ok(term::interrupted_exit().unwrap_or(0))
}

/// The line of padding `k` of `total`: each benchmark's median (and cycles), the time left.
fn say_point((k, total): (usize, u64), pad: u64, benchmarks: &[PointBench], left: f64) {
    let figures: Vec<String> = benchmarks
        .iter()
        .map(|b| match b.cycles_per_iter {
            Some(c) => format!(
                "{} {} ({} cycles)",
                b.name,
                format_ns(b.median_ns),
                vernier::report::format_count(c)
            ),
            None => format!("{} {}", b.name, format_ns(b.median_ns)),
        })
        .collect();
    println!(
        "  [{:>3}/{total}] env pad {pad:>6} B: {}   ({left:.0} s left)",
        k + 1,
        figures.join(" · ")
    );
}

/// What the sweep keeps from padding to padding: the program, its benchmarks selected, the
/// plan and each benchmark's iteration count, fixed by its first measurement.
struct Sweep {
    runs: usize,
    program: PathBuf,
    args: Vec<OsString>,
    ctl: Control,
    selected: Vec<usize>,
    names: Vec<String>,
    plan: Plan,
    fixed: Vec<Option<u64>>,
}

/// One padding's steady samples of each selected benchmark: their times per iteration, the
/// same in cycles of the core around each (empty when not probed), and the probes themselves
/// (ns per addition, one per probed batch).
struct Gathered {
    ns: Vec<Vec<f64>>,
    cycles: Vec<Vec<f64>>,
    probes: Vec<Vec<f64>>,
}

impl Sweep {
    /// Every selected benchmark measured in `runs` worker processes with environment padding
    /// `pad`; `None` when the sweep is interrupted.
    fn at_pad(&mut self, pad: u64) -> Result<Option<Gathered>> {
        let n = self.selected.len();
        let mut g = Gathered {
            ns: vec![Vec::new(); n],
            cycles: vec![Vec::new(); n],
            probes: vec![Vec::new(); n],
        };
        for _ in 0..self.runs {
            if term::interrupted() || !self.run_once(pad, &mut g)? {
                return Ok(None);
            }
        }
        Ok(Some(g))
    }

    /// One worker process with padding `pad`, each selected benchmark measured in it and its
    /// samples added to `g`; whether it went through (not interrupted).
    fn run_once(&mut self, pad: u64, g: &mut Gathered) -> Result<bool> {
        let mut c = self.ctl.clone();
        c.env_pad = pad;
        let mut w = WorkerProcess::spawn(&self.program, &self.args, &c)
            .map_err(|e| anyhow::anyhow!("env pad {pad}: {e}"))?;
        let timer = w.hello.timer;
        for (j, &i) in self.selected.iter().enumerate() {
            self.plan.fixed_iters = self.fixed[j];
            let mut target = WorkerTarget {
                worker: &mut w,
                bench: BenchRef::Index(i),
            };
            let m = measure::measure(
                &mut target,
                &MonotonicClock,
                &self.plan,
                &timer,
                &mut |_| {},
            );
            if m.stop == StopReason::Interrupted {
                return Ok(false);
            }
            if let Some(e) = &m.error {
                bail!("{} at env pad {pad}: {e}", self.names[i]);
            }
            self.fixed[j] = Some(m.iters_per_sample);
            let cycle_ns = vernier::analyze::speed::sample_cycles(&m.samples, &timer);
            for (i, s) in m.samples.samples.iter().enumerate() {
                if s.phase == Phase::Measure && s.iters == m.iters_per_sample {
                    g.ns[j].push(s.per_iter_ns());
                    if let Some(p) = m.samples.probe_cycle_ns(i, timer.overhead_ns) {
                        g.probes[j].push(p);
                    }
                    if let Some(c) = cycle_ns.get(i).filter(|c| c.is_finite() && **c > 0.0) {
                        g.cycles[j].push(s.per_iter_ns() / c);
                    }
                }
            }
        }
        w.quit();
        Ok(true)
    }
}

/// Each benchmark's figures at one padding, from its samples' times, their cycles and the
/// probes beside them.
fn point_benches(
    sel_names: &[String],
    per_bench: &[Vec<f64>],
    per_bench_cycles: &[Vec<f64>],
    per_bench_probes: &[Vec<f64>],
) -> Vec<PointBench> {
    sel_names
        .iter()
        .zip(per_bench.iter().zip(per_bench_cycles).zip(per_bench_probes))
        .map(|(name, ((v, cyc), probes))| {
            let ci = if v.is_empty() {
                vernier::stats::MedianInterval {
                    median: f64::NAN,
                    lo: f64::NAN,
                    hi: f64::NAN,
                }
            } else {
                vernier::stats::median_interval(v)
            };
            let cycles = in_cycles(v, cyc, probes);
            PointBench {
                name: name.clone(),
                median_ns: ci.median,
                ci95_ns: [ci.lo, ci.hi],
                cycles_per_iter: cycles.map(|c| c.median),
                cycles_ci95: cycles.map(|c| [c.lo, c.hi]),
            }
        })
        .collect()
}

fn write_json(path: &std::path::Path, file: &SweepFile) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(file)?;
    vernier::result::write_atomic(path, &bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::figures::{period, swing};
    use super::*;

    #[test]
    fn ranges_parse_and_refuse_nonsense() {
        let r = Range::parse("0:4096:64").unwrap();
        assert_eq!(r.count(), 65);
        assert_eq!(r.pads().last(), Some(4096));
        assert_eq!(Range::parse("0:100:30").unwrap().pads().last(), Some(90));
        for bad in ["0:4096", "0:4096:0", "10:0:1", "a:b:c", "0:1:2:3"] {
            assert!(Range::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn swing_and_period_of_a_known_series() {
        assert!((swing(&[100.0, 130.0, 110.0]) - 0.3).abs() < 1e-12);
        // A spike every 8 points over 64 points: period 8.
        let s: Vec<f64> = (0..64)
            .map(|i| {
                if i % 8 == 3 {
                    130.0
                } else {
                    100.0 + (i % 3) as f64 * 0.1
                }
            })
            .collect();
        assert_eq!(period(&s), Some(8));
        // A single spike does not repeat: no period.
        let one: Vec<f64> = (0..64)
            .map(|i| if i == 40 { 130.0 } else { 100.0 })
            .collect();
        assert_eq!(period(&one), None);
        // A flat series has none either.
        assert_eq!(period(&[100.0; 20]), None);
    }

    #[test]
    fn no_period_is_read_into_medians_that_scatter_within_their_intervals() {
        let point = |i: usize, half: f64| {
            let m = if i % 8 == 3 { 101.0 } else { 100.0 };
            PointBench {
                name: "b".into(),
                median_ns: m,
                ci95_ns: [m - half, m + half],
                cycles_per_iter: None,
                cycles_ci95: None,
            }
        };
        let points = |half: f64| -> Vec<Point> {
            (0..64)
                .map(|i| Point {
                    env_pad_bytes: i as u64 * 64,
                    benchmarks: vec![point(i, half)],
                })
                .collect()
        };
        // Each median known to ±0.05: the 1 % spikes every 8 paddings are a period.
        let s = summarise(&["b".into()], &points(0.05), 64);
        assert_eq!(s[0].period_bytes, Some(512));
        // Each known to ±2: the same medians are noise, and no period is claimed.
        let s = summarise(&["b".into()], &points(2.0), 64);
        assert_eq!(s[0].period_bytes, None);
        assert!(s[0].swing > 0.0);
    }

    #[test]
    fn a_swing_the_clock_made_is_judged_in_cycles_and_named() {
        // A chain of 400 cycles whose clock drifts 5 % over the sweep, and a benchmark whose
        // cycles step up by 8 % at every eighth padding (a layout effect).
        let points: Vec<Point> = (0..64)
            .map(|i| {
                let cycle_ns = 0.25 * (1.0 + 0.05 * i as f64 / 63.0);
                let bench = |name: &str, cycles: f64| PointBench {
                    name: name.into(),
                    median_ns: cycles * cycle_ns,
                    ci95_ns: [cycles * cycle_ns * 0.999, cycles * cycle_ns * 1.001],
                    cycles_per_iter: Some(cycles),
                    cycles_ci95: Some([cycles * 0.999, cycles * 1.001]),
                };
                let layout = if i % 8 == 3 { 86.4 } else { 80.0 };
                Point {
                    env_pad_bytes: i as u64 * 64,
                    benchmarks: vec![bench("chain", 400.0), bench("chase", layout)],
                }
            })
            .collect();
        let names = ["chain".to_string(), "chase".to_string()];
        let s = summarise(&names, &points, 64);
        assert!((s[0].swing - 0.05).abs() < 1e-9, "{:?}", s[0]);
        assert_eq!(s[0].swing_cycles, Some(0.0));
        assert!(s[0].clock_swing());
        assert_eq!(s[0].period_bytes, None);
        // The layout's swing stays: in cycles, and its period is found in them.
        assert!(
            (s[1].swing_cycles.unwrap() - 0.08).abs() < 1e-9,
            "{:?}",
            s[1]
        );
        assert!(!s[1].clock_swing());
        assert_eq!(s[1].period_bytes, Some(512));
        let file = SweepFile {
            schema: 1,
            env_pad: Range {
                start: 0,
                end: 63 * 64,
                step: 64,
            },
            aslr: false,
            points,
            summary: s,
        };
        let text = summary_text(&file);
        assert!(
            text.contains(
                "the clock's swing, not the layout's: chain: 5.0 % in ns but 0.0 % in cycles"
            ),
            "{text}"
        );
        assert!(!text.contains("chase: "), "{text}");
        let v = serde_json::to_value(&file).unwrap();
        assert_eq!(v["summary"][0]["swing_cycles"], 0.0);
        assert_eq!(v["points"][0]["benchmarks"][0]["cycles_per_iter"], 400.0);
    }
}
