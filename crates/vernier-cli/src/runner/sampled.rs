//! The sampled profile (`vernier profile --sampled`): each benchmark run natively in a worker
//! started under `perf record`, for a given time, and only the samples taken inside its
//! measured loop kept (those whose call stack holds the harness's `vernier_measured_loop`
//! frame): start-up, calibration, the protocol and the other benchmarks are left out. The
//! event is the hardware cycle counter where the machine has a PMU, the kernel's software
//! clock (`cpu-clock`) where it has none, and the profile says which. Stacks are unwound from
//! DWARF call-frame information (`--call-graph dwarf`): code built without frame pointers
//! unwinds too.

use crate::files::profile::{BenchProfile, FunctionCosts, ProfileFile};
use crate::runner::worker::{Control, WorkerProcess};
use anyhow::{anyhow, bail, Context as _, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use vernier::measure::Batch;
use vernier::protocol::BenchRef;

pub use crate::files::profile::SAMPLED;
/// The measured loop's frame, as the sampled profile names it.
pub const LOOP: &str = "vernier_measured_loop";
/// Samples per second asked of perf.
pub const FREQUENCY: u32 = 4000;
/// Each sample of the worker's loop lasts about this long.
const SAMPLE_NS: f64 = 5e6;
/// The environment variable naming the perf binary (default: `perf` on the PATH).
pub const PERF_ENV: &str = "VERNIER_PERF";

fn perf() -> PathBuf {
    std::env::var_os(PERF_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("perf"))
}

/// The event sampled, and why: cycles with a PMU, the software clock without.
pub fn event() -> (&'static str, &'static str) {
    let pmu = ["cpu", "cpu_core", "armv8_pmuv3_0"]
        .iter()
        .any(|d| Path::new("/sys/bus/event_source/devices").join(d).exists());
    if pmu {
        ("cycles", "the hardware cycle counter")
    } else {
        (
            "cpu-clock",
            "the software clock: this machine exposes no hardware counters (no PMU)",
        )
    }
}

/// How long each benchmark is sampled unless told (`profile --sampled --time`, `compare
/// --profile --sampled --sample-time`), in seconds.
pub const DEFAULT_SECONDS: f64 = 1.0;

/// Before a sampled profile: `seconds`, given by `flag`, a positive number, and perf usable.
pub fn prepare(flag: &str, seconds: f64) -> Result<()> {
    if !(seconds > 0.0 && seconds.is_finite()) {
        bail!("{flag} {seconds}: expected a positive number of seconds");
    }
    check()
}

/// perf, or why it cannot be used.
pub fn check() -> Result<()> {
    let p = perf();
    match Command::new(&p).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => bail!(
            "a sampled profile needs perf, which was not found (looked for `{}`): install it \
             (Debian: `apt-get install linux-perf`; Ubuntu: `linux-tools-generic`) or set {PERF_ENV} \
             to its path; without --sampled, the profile counts instructions under callgrind \
             instead",
            p.display()
        ),
    }
}

/// Every benchmark of `program` that `filter` selects, sampled for `seconds` each, with `env`
/// added to its environment.
pub fn sample_program(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    timeout: Duration,
    filter: Option<&crate::args::Selection>,
    seconds: f64,
    each: &mut dyn FnMut(&ProfileFile, &BenchProfile),
) -> Result<ProfileFile> {
    check()?;
    let ctl = Control {
        timeout,
        ..Control::default()
    };
    let first =
        WorkerProcess::spawn_with_env(program, args, env, &ctl).map_err(anyhow::Error::msg)?;
    let names = first.names.clone();
    let interpreted = first.hello.implementation.starts_with("vernier-python");
    first.quit();
    if interpreted {
        return Err(crate::runner::profile::interpreted_worker(program));
    }
    let selected = crate::args::select(program, &names, filter)?;
    let (event, _) = event();
    let mut file = ProfileFile {
        profile: SAMPLED.into(),
        program: program.display().to_string(),
        events: vec![event.into()],
        benchmarks: Vec::new(),
    };
    let mut progress = crate::term::ProgressLine::new().of(selected.len());
    for &i in &selected {
        if crate::term::interrupted() {
            break;
        }
        progress.step(&format!("sampling {} under perf", names[i]));
        let b = sample_one(program, args, env, &ctl, i, &names[i], seconds, event)
            .unwrap_or_else(|e| BenchProfile::failed(&names[i], format!("{e:#}")));
        progress.clear();
        each(&file, &b);
        file.benchmarks.push(b);
    }
    Ok(file)
}

#[allow(clippy::too_many_arguments)] // one benchmark's whole launch, passed down once
fn sample_one(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    ctl: &Control,
    index: usize,
    name: &str,
    seconds: f64,
    event: &str,
) -> Result<BenchProfile> {
    let dir = crate::scratch::dir("vernier-perf-")?;
    let data = dir.path().join("perf.data");
    let mut cmd = Command::new(perf());
    cmd.args(["record", "-q", "-e", event, "-F", &FREQUENCY.to_string()])
        .args(["--call-graph", "dwarf", "-o"])
        .arg(&data)
        .arg("--")
        .arg(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)));
    let mut w = WorkerProcess::spawn_command(cmd, program, ctl).map_err(|e| {
        anyhow!("{e} (started under `perf record`: is perf allowed here? see kernel.perf_event_paranoid)")
    })?;
    // How long an iteration takes (the fastest of three samples: the first of a cold process
    // can be several times slower, and would make the samples short), then enough samples of
    // ~5 ms for `seconds`.
    let mut b = Batch::default();
    w.run(BenchRef::Index(index), 100, 3, &mut b)
        .map_err(|e| anyhow!(e))?;
    let per_iter = (b.ns.iter().copied().min().unwrap_or(1) as f64 / 100.0).max(1.0);
    let iters = ((SAMPLE_NS / per_iter) as u64).max(1);
    let samples = ((seconds * 1e9 / SAMPLE_NS).ceil() as usize).max(1);
    let mut done = 0;
    while done < samples {
        let n = (samples - done).min(50);
        let mut b = Batch::default();
        w.run(BenchRef::Index(index), iters, n, &mut b)
            .map_err(|e| anyhow!(e))?;
        done += n;
    }
    w.quit_and_wait(ctl.timeout).map_err(|e| anyhow!(e))?;
    let o = Command::new(perf())
        .args(["script", "-F", "ip,sym", "-i"])
        .arg(&data)
        .output()
        .context("cannot run `perf script`")?;
    if !o.status.success() {
        bail!(
            "`perf script` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    let stacks = loop_stacks(&String::from_utf8_lossy(&o.stdout));
    if stacks.is_empty() {
        bail!(
            "no sample was taken inside the measured loop (`vernier_measured_loop`): is the \
             program built with symbols (no strip), and its loop function not renamed?"
        );
    }
    Ok(from_stacks(name, &stacks))
}

/// The stacks of `perf script -F ip,sym` output taken inside the measured loop, each from the
/// loop's frame (the first) to the sampled function (the last). Frames perf marks `(inlined)`
/// are left out: a sample counts for the function whose code it is in, as callgrind counts
/// instructions (otherwise an iterator's comparison inlined into a loop would take the loop's
/// time from the function that runs it).
pub fn loop_stacks(script: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for block in script.split("\n\n") {
        // Leaf first, as perf prints them: `\t    addr symbol` (or `symbol (inlined)`).
        let frames: Vec<(String, bool)> = block
            .lines()
            .filter(|l| l.starts_with([' ', '\t']))
            .filter_map(|l| {
                let l = l.trim();
                let (_, sym) = l.split_once(' ')?;
                let inlined = sym.ends_with(" (inlined)");
                Some((
                    sym.trim_end_matches(" (inlined)").trim().to_string(),
                    inlined,
                ))
            })
            .collect();
        let Some(at) = frames
            .iter()
            .position(|f| f.0.contains("vernier_measured_loop"))
        else {
            continue;
        };
        let mut stack: Vec<String> = frames[..at]
            .iter()
            .filter(|f| !f.1)
            .map(|f| f.0.clone())
            .collect();
        // The loop's frame under one name: perf names it differently as a function and as
        // inlined code.
        stack.push(LOOP.into());
        stack.reverse();
        // Collapse a function's inlined frames at one address into one frame.
        stack.dedup();
        out.push(stack);
    }
    out
}

/// A benchmark's sampled profile from its loop's stacks.
fn from_stacks(name: &str, stacks: &[Vec<String>]) -> BenchProfile {
    let mut own: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total: BTreeMap<&str, u64> = BTreeMap::new();
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    for s in stacks {
        *own.entry(s.last().unwrap().as_str()).or_default() += 1;
        let distinct: BTreeSet<&str> = s.iter().map(String::as_str).collect();
        for f in distinct {
            *total.entry(f).or_default() += 1;
        }
        let shown: Vec<String> = s.iter().map(|f| crate::files::profile::brief(f)).collect();
        *folded.entry(shown.join(";")).or_default() += 1;
    }
    let mut functions: Vec<FunctionCosts> = total
        .iter()
        .map(|(f, &t)| FunctionCosts {
            name: f.to_string(),
            own: vec![own.get(f).copied().unwrap_or(0) as f64],
            inclusive: vec![t as f64],
        })
        .collect();
    functions.sort_by(|a, b| {
        b.own[0]
            .total_cmp(&a.own[0])
            .then_with(|| a.name.cmp(&b.name))
    });
    BenchProfile {
        name: name.into(),
        instructions_per_iter: None,
        estimated_cycles_per_iter: None,
        functions,
        folded: folded
            .into_iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect(),
        per: 0,
        lines: Vec::new(),
        samples: Some(stacks.len() as u64),
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
mix 
\t            3e55 <u64 as core::cmp::PartialOrd>::lt (inlined)
\t            3e55 heavy
\t            415d vernier::detail::vernier_measured_loop<Clock, main::{lambda()#1}>
\t            415d iterate<main::<lambda()> > (inlined)
\t            9de9 vernier::detail::measure_batch
\t            1ab7 _start

mix 
\t            3e99 light
\t            415d vernier::detail::vernier_measured_loop<Clock, main::{lambda()#1}>
\t            9de9 vernier::detail::measure_batch

mix 
\t            3e55 heavy
\t            415d vernier::detail::vernier_measured_loop<Clock, main::{lambda()#1}>

mix 
\t            e3aa _dl_relocate_object
\t            1ab77 _start
";

    #[test]
    fn only_the_loops_samples_are_kept_and_shared_out() {
        let s = loop_stacks(SCRIPT);
        assert_eq!(s.len(), 3, "the start-up sample is left out");
        assert_eq!(s[0].len(), 2);
        assert_eq!(s[0][1], "heavy");
        let p = from_stacks("mix", &s);
        assert_eq!(p.samples, Some(3));
        assert_eq!(p.functions[0].name, "heavy");
        assert_eq!(p.functions[0].own, vec![2.0]);
        assert_eq!(p.functions[1].name, "light");
        let root = p.functions.iter().find(|f| f.name == LOOP).unwrap();
        assert_eq!((root.own[0], root.inclusive[0]), (0.0, 3.0));
        assert!(p
            .folded
            .contains(&"vernier_measured_loop;heavy 2".to_string()));
    }
}
