//! Google Benchmark's JSON as an input of `vernier compare` (OLD or NEW, against another such
//! file or a vernier result file): always unpaired, and it says so. A Google Benchmark file
//! holds one figure per run, a mean over its iterations, and nothing of the samples behind
//! it: an interval of the median exists only across repetitions
//! (`--benchmark_repetitions=N`, N ≥ 6 for a distribution-free 95 % interval); with fewer,
//! the ratio is shown without a verdict.

use super::{self as cli_compare, CompareArgs};
use anyhow::{bail, Context as _, Result};
use serde_json::Value;
use std::path::Path;
use vernier::result::comparison::{ComparisonFile, Failure};
use vernier::result::{ResultFile, Status};
use vernier::stats::{self, compare::Mode};

/// Fewest repetitions whose order statistics give a 95 % interval of the median.
pub const MIN_REPETITIONS: usize = 6;

/// One benchmark of a Google Benchmark file: its runs' real times per iteration (ns).
#[derive(Clone, Debug)]
pub struct GbBench {
    pub name: String,
    pub values_ns: Vec<f64>,
    pub error: Option<String>,
}

/// A Google Benchmark JSON file: its benchmarks in order of first appearance.
#[derive(Clone, Debug)]
pub struct GbFile {
    pub benchmarks: Vec<GbBench>,
}

/// Whether parsed JSON looks like Google Benchmark's output.
pub fn looks_like(v: &Value) -> bool {
    crate::files::kind(v) == crate::files::Kind::GoogleBenchmark
}

fn unit_ns(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    })
}

/// Read a Google Benchmark file: `iteration` runs only (aggregates such as mean, median and
/// stddev are derived from them), grouped by `run_name` (else `name`).
pub fn parse(v: &Value, origin: &str) -> Result<GbFile> {
    let mut out: Vec<GbBench> = Vec::new();
    let runs = v["benchmarks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for (i, r) in runs.iter().enumerate() {
        if r.get("run_type")
            .and_then(Value::as_str)
            .unwrap_or("iteration")
            != "iteration"
        {
            continue;
        }
        let name = r
            .get("run_name")
            .or_else(|| r.get("name"))
            .and_then(Value::as_str)
            .with_context(|| format!("{origin}: benchmarks[{i}] has no name"))?
            .to_string();
        let at = match out.iter().position(|b| b.name == name) {
            Some(at) => at,
            None => {
                out.push(GbBench {
                    name: name.clone(),
                    values_ns: Vec::new(),
                    error: None,
                });
                out.len() - 1
            }
        };
        if r.get("error_occurred").and_then(Value::as_bool) == Some(true) {
            out[at].error = Some(
                r.get("error_message")
                    .and_then(Value::as_str)
                    .unwrap_or("error_occurred")
                    .to_string(),
            );
            continue;
        }
        let unit = r.get("time_unit").and_then(Value::as_str).unwrap_or("ns");
        let scale = unit_ns(unit).with_context(|| {
            format!("{origin}: {name}: unknown time_unit '{unit}' (expected ns, us, ms or s)")
        })?;
        let t = r
            .get("real_time")
            .and_then(Value::as_f64)
            .with_context(|| format!("{origin}: {name}: no real_time"))?;
        if !(t.is_finite() && t > 0.0) {
            bail!("{origin}: {name}: real_time {t} is not a positive time");
        }
        out[at].values_ns.push(t * scale);
    }
    if out.is_empty() {
        bail!("{origin}: a Google Benchmark file without any iteration run");
    }
    Ok(GbFile { benchmarks: out })
}

/// Load `path` when it is a Google Benchmark file; `Ok(None)` when it is not one.
pub fn load_if(path: &Path) -> Result<Option<GbFile>> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(None);
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(None);
    };
    if !looks_like(&v) {
        return Ok(None);
    }
    parse(&v, &path.display().to_string()).map(Some)
}

/// One side of an offline comparison.
pub enum Side<'a> {
    Vernier(&'a ResultFile),
    Gbench(&'a GbFile),
}

/// A side's figure for one benchmark: the median per iteration and, when one can be
/// computed, its 95 % interval.
enum Figure {
    Interval(f64, (f64, f64)),
    /// One figure (or too few repetitions for an interval): the median, and how many values.
    Bare(f64, usize),
}

impl Side<'_> {
    fn names(&self) -> Vec<String> {
        match self {
            Side::Vernier(f) => f.benchmarks.iter().map(|b| b.name.clone()).collect(),
            Side::Gbench(f) => f.benchmarks.iter().map(|b| b.name.clone()).collect(),
        }
    }

    fn figure(&self, name: &str) -> Result<Figure, String> {
        match self {
            Side::Vernier(f) => {
                let b = f.benchmarks.iter().find(|b| b.name == name).unwrap();
                if b.status == Status::Failed {
                    return Err(format!(
                        "the benchmark failed in its result file: {}",
                        b.error.as_deref().unwrap_or("no reason recorded")
                    ));
                }
                vernier::unpaired::figure(f, b)
                    .map(|(m, ci)| Figure::Interval(m, ci))
                    .ok_or_else(|| "the result file holds no samples for this benchmark".into())
            }
            Side::Gbench(f) => {
                let b = f.benchmarks.iter().find(|b| b.name == name).unwrap();
                if let Some(e) = &b.error {
                    return Err(format!("the Google Benchmark run reported an error: {e}"));
                }
                let n = b.values_ns.len();
                let sorted = vernier::stats::sorted(&b.values_ns);
                let median = vernier::stats::median(&sorted);
                if n >= MIN_REPETITIONS {
                    Ok(Figure::Interval(
                        median,
                        vernier::stats::median_ci_sorted(&sorted),
                    ))
                } else {
                    Ok(Figure::Bare(median, n))
                }
            }
        }
    }
}

/// `vernier compare` with a Google Benchmark file on one side or both: unpaired, each side's
/// median and interval combined as for two result files; a benchmark whose interval cannot be
/// computed gets its ratio and no verdict.
pub fn compare(a: &CompareArgs, old: Side, new: Side, threshold: f64) -> Result<i32> {
    let filter = cli_compare::common(a).filter()?;
    let (on, nn) = (old.names(), new.names());
    let (selected, only_old, only_new) = cli_compare::match_names(&on, &nn, filter.as_ref());
    cli_compare::check_names(&selected, &on, &nn, filter.is_some())?;
    let mut file = ComparisonFile::new(Mode::Unpaired, threshold);
    file.old = a.old.display().to_string();
    file.new = a.new_path().display().to_string();
    file.only_old = only_old;
    file.only_new = only_new;
    cli_compare::warn_one_sided(&file);
    let mut bare = Vec::new();
    for name in &selected {
        let figures = old.figure(name).and_then(|o| Ok((o, new.figure(name)?)));
        let (o, n) = match figures {
            Ok(f) => f,
            Err(error) => {
                file.failed.push(Failure {
                    name: name.clone(),
                    error,
                });
                continue;
            }
        };
        match (o, n) {
            (Figure::Interval(om, oci), Figure::Interval(nm, nci)) => {
                match stats::compare::from_intervals(om, oci, nm, nci) {
                    Ok(e) => file.comparisons.push(vernier::unpaired::comparison(
                        name,
                        &e,
                        (om, nm),
                        0.0,
                        [0, 0],
                    )),
                    Err(e) => file.failed.push(Failure {
                        name: name.clone(),
                        error: format!("the figures cannot be compared: {e}"),
                    }),
                }
            }
            (o, n) => {
                let (om, nm) = (o.median(), n.median());
                let counts = |f: &Figure| match f {
                    Figure::Bare(_, k) => format!("{k} repetition(s)"),
                    Figure::Interval(..) => "median with its interval".into(),
                };
                bare.push(Failure {
                    name: name.clone(),
                    error: format!(
                        "no interval: NEW/OLD = {:.4} from OLD's {} and NEW's {}; a Google \
                         Benchmark file needs at least {MIN_REPETITIONS} repetitions \
                         (--benchmark_repetitions={MIN_REPETITIONS} or more) for a 95 % \
                         interval of its median, so no verdict",
                        nm / om,
                        counts(&o),
                        counts(&n)
                    ),
                });
            }
        }
    }
    file.finalize();
    let width = vernier::report::stdout_width();
    let say = |text: &str| {
        for l in vernier::report::wrap(text, width, 0, 2) {
            println!("{l}");
        }
    };
    say(
        "Unpaired: a Google Benchmark file holds one figure per run and no samples; each side's \
         median (over repetitions) and its 95 % interval are combined as for two result files.",
    );
    // The JSON keeps the benchmarks without a verdict among the failures (with the ratio in
    // words); the terminal lists them apart, as what they are.
    let mut written = file.clone();
    written.failed.extend(bare.iter().cloned());
    if let Some(p) = &a.json {
        written
            .write_atomic(p)
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let code = cli_compare::finish(a, &file)?;
    for b in &bare {
        say(&format!("no verdict: {}: {}", b.name, b.error));
    }
    Ok(code)
}

impl Figure {
    fn median(&self) -> f64 {
        match self {
            Figure::Interval(m, _) | Figure::Bare(m, _) => *m,
        }
    }
}
