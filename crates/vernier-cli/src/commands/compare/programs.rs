//! `vernier compare OLD NEW` with two executables: compared live over OLD/NEW process pairs
//! (`crate::runner::compare`), each pair alternating batches between its two processes on one
//! CPU so that drift cancels, the interval taken over the pairs.

use super::{
    check_names, common, finish, match_names, parse_env, warn_one_sided, write, CompareArgs,
};
use crate::runner::compare::{self, PairsConfig};
use crate::runner::link::{Launch, ProcessLauncher};
use crate::runner::same_code;
use crate::term;
use anyhow::{bail, Result};
use std::ffi::OsString;
use std::path::Path;
use vernier::measure::compare::{
    default_process_pairs, Side, MAX_LAYOUT_PROCESS_PAIRS, MIN_PROCESS_PAIRS,
};
use vernier::measure::MonotonicClock;
use vernier::result::comparison::ComparisonFile;
use vernier::stats::compare::Mode;

/// The default budget per benchmark of a live comparison, over all its process pairs.
pub const DEFAULT_TIME_S: f64 = 2.0;

/// How many process pairs are allowed (`--processes`, or the default for the budget) and the
/// CPUs they are pinned to in turn (those given, or else those this process may use).
fn pairs_and_cpus(
    a: &CompareArgs,
    plan: &vernier::plan::Plan,
    ctl: &crate::runner::worker::Control,
) -> Result<(usize, Vec<usize>)> {
    let pairs = match a.process.processes {
        Some(n) if n < MIN_PROCESS_PAIRS => bail!(
            "--processes {n}: a comparison needs at least {} OLD/NEW process pairs, to estimate \
             how much pairs differ from one another (the default fits --time: {} pairs for {} s)",
            MIN_PROCESS_PAIRS,
            default_process_pairs(plan.time_budget_ns),
            plan.time_budget_ns as f64 / 1e9
        ),
        Some(n) => n,
        None => default_process_pairs(plan.time_budget_ns),
    };
    // The pairs are pinned in turn to the CPUs given, or else to those this process may use.
    let cpus = if ctl.cpus.is_empty() {
        crate::host::affinity::allowed_cpus().iter().collect()
    } else {
        ctl.cpus.clone()
    };
    Ok((pairs, cpus))
}

/// The line after a live comparison: the pairs used of those allowed, the CPUs, the wall time.
fn say_pairs_used(file: &ComparisonFile, cfg: &PairsConfig, started: std::time::Instant) {
    let pairs_used = file
        .comparisons
        .iter()
        .filter_map(|c| c.spread.map(|s| s.process_pairs))
        .max()
        .unwrap_or(0);
    let layout = if cfg.layout_pairs > cfg.pairs {
        format!(
            " (up to {} for a benchmark with layout states while its --time lasts)",
            cfg.layout_pairs
        )
    } else {
        String::new()
    };
    println!(
        "{} process pair(s) of {} allowed{layout}, CPUs {}; wall time {:.1} s",
        pairs_used,
        cfg.pairs,
        if cfg.cpus.is_empty() {
            "unpinned".to_string()
        } else {
            cfg.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        },
        started.elapsed().as_secs_f64()
    );
}

pub(super) fn compare_programs(
    a: &CompareArgs,
    old: &Path,
    new: &Path,
    threshold: f64,
) -> Result<i32> {
    let mut c = common(a);
    if c.time.is_none() && !c.quick {
        c.time = Some(DEFAULT_TIME_S);
    }
    let plan = c.plan()?;
    let filter = c.filter()?;
    let ctl = a.process.control()?;
    let cfg = pairs_config(a, plan, &ctl, threshold)?;
    let mut launcher = ProcessLauncher {
        old: Launch {
            which: Side::Old,
            program: old.to_path_buf(),
            args: a.old_arg.clone(),
            env: parse_env(&a.old_env, "--old-env")?,
        },
        new: Launch {
            which: Side::New,
            program: new.to_path_buf(),
            args: a.new_arg.clone(),
            env: parse_env(&a.new_env, "--new-env")?,
        },
        ctl,
    };
    let same = launcher.old.program == launcher.new.program
        && launcher.old.args == launcher.new.args
        && launcher.old.env == launcher.new.env;
    if same {
        eprintln!(
            "vernier: note: OLD and NEW are the same program with the same arguments and \
             environment: this measures the noise floor (the spread between process pairs and \
             the smallest change a comparison can detect here)"
        );
    }
    let mut file = ComparisonFile::new(Mode::Paired, threshold);
    file.old = old.display().to_string();
    file.new = new.display().to_string();
    term::install_ctrlc();
    let started = std::time::Instant::now();
    let only = measure_pairs(a, &mut launcher, &cfg, &mut file, filter.as_ref())?;
    let same_inputs =
        launcher.old.args == launcher.new.args && launcher.old.env == launcher.new.env;
    mark_code(&mut file, (old, &a.old_arg), (new, &a.new_arg), same_inputs);
    crate::runner::memory::count_comparisons(
        &mut file,
        [&launcher.old, &launcher.new],
        &launcher.ctl,
    );
    file.only_old = only.0;
    file.only_new = only.1;
    warn_one_sided(&file);
    write(&file, a.json.as_ref())?;
    say_pairs_used(&file, &cfg, started);
    if same {
        print_noise_floor(&file);
    }
    let code = finish(a, &file)?;
    if a.profile {
        super::profile::profile_pair(a, old, new, &file)?;
    }
    Ok(code)
}

/// The live comparison's settings: the pairs allowed, their CPUs, the plan and the seed.
fn pairs_config(
    a: &CompareArgs,
    plan: vernier::plan::Plan,
    ctl: &crate::runner::worker::Control,
    threshold: f64,
) -> Result<PairsConfig> {
    let (pairs, cpus) = pairs_and_cpus(a, &plan, ctl)?;
    let seed = a
        .seed
        .unwrap_or_else(|| std::process::id() as u64 ^ vernier::timer::monotonic_ns());
    Ok(PairsConfig {
        pairs,
        // An explicit --processes is the count; the default may grow for layout states.
        layout_pairs: if a.process.processes.is_some() {
            pairs
        } else {
            MAX_LAYOUT_PROCESS_PAIRS
        },
        plan,
        threshold,
        cpus,
        env_pad: a.process.env_pad,
        max_env_pad: crate::runner::processes::MAX_ENV_PAD,
        seed,
    })
}

/// Measure the benchmarks both programs have (those `filter` selects) over the process pairs
/// into `file`, with the progress line and the workers' notes on the terminal; the names only
/// OLD and only NEW have.
fn measure_pairs(
    a: &CompareArgs,
    launcher: &mut ProcessLauncher,
    cfg: &PairsConfig,
    file: &mut ComparisonFile,
    filter: Option<&crate::args::Selection>,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut shown = Shown {
        a,
        pairs: cfg.pairs,
        progress: term::ProgressLine::new(),
        warned: false,
        label: String::new(),
    };
    let mut only = (Vec::new(), Vec::new());
    let outcome = compare::run(
        launcher,
        &MonotonicClock,
        cfg,
        file,
        &mut |on, nn| {
            let (selected, only_old, only_new) = match_names(on, nn, filter);
            check_names(&selected, on, nn, filter.is_some()).map_err(|e| e.to_string())?;
            only = (only_old, only_new);
            Ok(selected)
        },
        &term::interrupted,
        &mut |ev| shown.on(ev),
    );
    shown.progress.clear();
    outcome.map_err(anyhow::Error::msg)?;
    Ok(only)
}

/// What a live comparison shows as it goes: the progress line with the pair under way, a
/// warning for a debug build, the workers' notes; the file so far kept after each pair.
struct Shown<'a> {
    a: &'a CompareArgs,
    pairs: usize,
    progress: term::ProgressLine,
    warned: bool,
    label: String,
}

impl Shown<'_> {
    fn on(&mut self, ev: compare::Event) {
        let a = self.a;
        match ev {
            compare::Event::PairStarted { setup, old, new } => {
                self.label = format!(
                    "pair {}/{}{}",
                    setup.index + 1,
                    self.pairs,
                    setup.cpu.map(|c| format!(" cpu {c}")).unwrap_or_default()
                );
                if !self.warned {
                    self.warned = true;
                    for (which, l, p) in [
                        ("OLD", old, &a.old),
                        ("NEW", new, &a.new_path().to_path_buf()),
                    ] {
                        if l.debug_build() {
                            self.progress.clear();
                            eprintln!(
                                "vernier: warning: {which} ({}) is a debug build: its timings say \
                                 little about optimised code (build with --release)",
                                p.display()
                            );
                        }
                    }
                }
            }
            compare::Event::Progress { name, progress: p } => {
                self.progress.update(&format!("{name} ({})", self.label), p)
            }
            compare::Event::Said { old, new } => {
                self.progress.clear();
                let (po, pn) = (a.old.display(), a.new_path().display());
                if old.lines == new.lines {
                    crate::runner::worker::tell(&format!("OLD ({po}) and NEW ({pn})"), &old);
                } else {
                    crate::runner::worker::tell(&format!("OLD ({po})"), &old);
                    crate::runner::worker::tell(&format!("NEW ({pn})"), &new);
                }
            }
            compare::Event::PairDone { file, .. } => {
                self.progress.clear();
                if let Some(p) = &a.json {
                    // Written after each pair, so an interrupted run keeps what it measured.
                    let _ = file.write_atomic(p);
                }
            }
        }
    }
}

/// Whether each compared benchmark's measured code is the same in OLD and NEW (read after the
/// measurement, so that it does not disturb it). Sides run with different arguments or
/// environment are not compared: what each measures may differ by its inputs.
fn mark_code(
    file: &mut ComparisonFile,
    old: (&Path, &[OsString]),
    new: (&Path, &[OsString]),
    same_inputs: bool,
) {
    if file.comparisons.is_empty() || term::interrupted() {
        return;
    }
    let names: Vec<String> = file.comparisons.iter().map(|c| c.name.clone()).collect();
    let checks = if same_inputs {
        same_code::compare_code(old, new, &names)
    } else {
        let why = "OLD and NEW run with different arguments or environment: what each measures \
                   may differ by its inputs, so the code is not compared";
        names
            .iter()
            .map(|n| (n.clone(), same_code::unknown(why.into())))
            .collect()
    };
    for (c, (_, (code, detail))) in file.comparisons.iter_mut().zip(checks) {
        c.code = Some(code);
        c.code_detail = Some(detail);
    }
}

/// `compare a a`: the noise floor of this machine, per benchmark.
fn print_noise_floor(file: &ComparisonFile) {
    println!("noise floor (OLD and NEW are the same program):");
    for c in &file.comparisons {
        if let (Some(s), Some(d)) = (c.spread, c.smallest_detectable) {
            println!(
                "  {}: spread between process pairs (sd) {:.2}%, within a pair (se) {:.2}%; \
                 smallest detectable change {:.2}%",
                c.name,
                s.spread_sd * 100.0,
                s.within_se * 100.0,
                d * 100.0
            );
        }
    }
}
