//! `vernier history bisect --good C1 --bad C2 --build CMD -- PROGRAM`: the first commit
//! between C1 and C2 where the benchmark moved. Each commit is checked out in a worktree of
//! the command's own (the user's checkout is never touched), built with CMD, and its PROGRAM
//! (copied out of the worktree) measured: against the good build in OLD/NEW process pairs,
//! or with `--instructions` by counting under callgrind (exact; each count is saved to the
//! history as it is made). A commit moved when its ratio to the good build is past half the
//! bad build's (in counts: when its count left the good one's). Binary search over the
//! first-parent commits of the range: about log2(commits) builds beside the good and the bad
//! ones. A build that fails is said and another commit of the range is taken: it is never
//! blamed.

use crate::runner::compare::{self, PairsConfig};
use crate::runner::counted::count_program;
use crate::runner::link::{Launch, ProcessLauncher};
use crate::runner::worker::Control;
use anyhow::{anyhow, bail, Context as _, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use vernier::measure::compare::{default_process_pairs, Side};
use vernier::measure::MonotonicClock;
use vernier::result::comparison::ComparisonFile;
use vernier::stats::compare::Mode;

/// A timed benchmark is followed when the bad build moved it by this much or more against the
/// good one: well beyond what a paired comparison of the same build reads (a few tenths of a
/// percent).
pub const FOLLOWED: f64 = 0.01;

#[derive(Args, Clone, Debug)]
pub struct BisectArgs {
    /// A commit where the benchmark is as it should be.
    #[arg(long, value_name = "COMMIT")]
    pub good: String,
    /// A later commit where it moved.
    #[arg(long, value_name = "COMMIT")]
    pub bad: String,
    /// The shell command that builds PROGRAM, run with `sh -c` at the root of a checkout of
    /// each commit (e.g. 'cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build').
    #[arg(long, value_name = "CMD")]
    pub build: String,
    /// The benchmarks to follow (default: every one the program has).
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Count instructions under callgrind instead of timing: exact, and each count is saved
    /// to the history under its commit.
    #[arg(long)]
    pub instructions: bool,
    /// Measurement budget per benchmark of each timed comparison, in seconds.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub time: f64,
    /// The history store the counts are saved to (default: $VERNIER_DB, else
    /// ~/.local/share/vernier/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The program the build makes, its path relative to the checkout's root, and its
    /// arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub program: Vec<OsString>,
}

/// `git ARGS` in `dir`: its standard output, trimmed, or an error that names the command.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("cannot run git (is it installed?)")?;
    if !o.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A worktree of the command's own, removed when dropped.
struct Worktree {
    repo: PathBuf,
    dir: crate::scratch::ScratchDir,
}

impl Worktree {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let dir = self.dir.path().to_string_lossy().into_owned();
        let _ = git(&self.repo, &["worktree", "remove", "--force", &dir]);
    }
}

/// A commit of the range: its hash and subject.
#[derive(Clone, Debug)]
struct Commit {
    sha: String,
    subject: String,
}

impl Commit {
    fn short(&self) -> &str {
        &self.sha[..self.sha.len().min(10)]
    }
}

/// What one build measured: per followed benchmark, the ratio to the good build (timed) or the
/// instructions per iteration (counted).
type Figures = BTreeMap<String, f64>;

struct Bisect<'a> {
    a: &'a BisectArgs,
    tree: Worktree,
    builds: PathBuf,
    /// Builds made so far (good and bad included).
    built: usize,
    good_build: Option<PathBuf>,
    /// `--filter`, parsed once.
    filter: Option<crate::args::Selection>,
}

impl Bisect<'_> {
    /// Check `c` out in the worktree, build it, and copy PROGRAM out; `Err` with the reason
    /// when the build fails (said, never blamed).
    fn build(&mut self, c: &Commit) -> Result<PathBuf, String> {
        let wt = self.tree.path().to_path_buf();
        git(&wt, &["checkout", "--quiet", "--detach", "--force", &c.sha])
            .map_err(|e| e.to_string())?;
        self.built += 1;
        eprintln!("vernier: building {} {} …", c.short(), c.subject);
        let o = Command::new("sh")
            .args(["-c", &self.a.build])
            .current_dir(&wt)
            .output()
            .map_err(|e| format!("cannot run sh: {e}"))?;
        if !o.status.success() {
            let err = String::from_utf8_lossy(&o.stderr);
            let tail: Vec<&str> = err.lines().rev().take(3).collect();
            return Err(format!(
                "the build failed ({}): {}",
                o.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            ));
        }
        let made = wt.join(&self.a.program[0]);
        let kept = self.builds.join(c.short());
        std::fs::copy(&made, &kept).map_err(|e| {
            format!(
                "the build made no {} ({e}): give PROGRAM's path in the checkout",
                made.display()
            )
        })?;
        Ok(kept)
    }

    /// Measure `program` (a build of commit `c`).
    fn measure(&self, program: &Path, c: &Commit) -> Result<Figures> {
        let args: Vec<OsString> = self.a.program[1..].to_vec();
        if self.a.instructions {
            let counted = count_program(
                program,
                &args,
                &[],
                std::time::Duration::from_secs_f64(crate::runner::worker::DEFAULT_TIMEOUT_S),
                self.filter.as_ref(),
                None,
                &mut |_| {},
            )?;
            let save = crate::args::SaveArgs {
                save: true,
                db: self.a.db.clone(),
                commit: Some(c.sha.clone()),
                ..Default::default()
            };
            crate::history::save_file(&save, &counted.file, "bisect", None)?;
            return Ok(counted
                .file
                .benchmarks
                .iter()
                .filter_map(|b| Some((b.name.clone(), b.instructions_per_iter()?)))
                .collect());
        }
        let good = self
            .good_build
            .as_deref()
            .ok_or_else(|| anyhow!("no good build"))?;
        let file = timed(good, program, &args, self.filter.as_ref(), self.a.time)?;
        Ok(file
            .comparisons
            .iter()
            .filter(|c| c.ratio.is_finite() && c.ratio > 0.0)
            .map(|c| (c.name.clone(), c.ratio))
            .collect())
    }

    /// Binary search over `commits` (the last one moved): `(lo, hi)` where commits up to
    /// `lo` did not move (`None`: only the good commit) and `hi` did; commits whose build
    /// failed are skipped.
    fn search(
        &mut self,
        commits: &[Commit],
        good_fig: &Figures,
        bad_fig: &Figures,
    ) -> Result<(Option<usize>, usize)> {
        let counted = self.a.instructions;
        let (mut lo, mut hi): (Option<usize>, usize) = (None, commits.len() - 1);
        let mut failed: Vec<usize> = Vec::new();
        loop {
            let from = lo.map_or(0, |l| l + 1);
            let open: Vec<usize> = (from..hi).filter(|i| !failed.contains(i)).collect();
            if open.is_empty() {
                break;
            }
            // The middle of what is left, skipping commits whose build failed.
            let mid = open[open.len() / 2];
            let c = commits[mid].clone();
            let build = match self.build(&c) {
                Ok(p) => p,
                Err(why) => {
                    eprintln!(
                        "vernier: {} {}: {why}: skipped, not blamed",
                        c.short(),
                        c.subject
                    );
                    failed.push(mid);
                    continue;
                }
            };
            let fig = self.measure(&build, &c)?;
            let m = moved(&fig, good_fig, bad_fig, counted);
            let figures: Vec<String> = bad_fig
                .keys()
                .filter_map(|name| {
                    let x = fig.get(name)?;
                    Some(if counted {
                        format!("{name} {x:.1} instructions")
                    } else {
                        format!("{name} ×{x:.4}")
                    })
                })
                .collect();
            println!(
                "{} {}: {} ({})",
                c.short(),
                c.subject,
                if m { "moved" } else { "as the good commit" },
                figures.join(", ")
            );
            if m {
                hi = mid;
            } else {
                lo = Some(mid);
            }
        }
        Ok((lo, hi))
    }
}

/// OLD against NEW in process pairs, for the benchmarks `filter` selects.
fn timed(
    old: &Path,
    new: &Path,
    args: &[OsString],
    filter: Option<&crate::args::Selection>,
    time_s: f64,
) -> Result<ComparisonFile> {
    let plan = vernier::plan::Plan::with_budget((time_s * 1e9) as u64);
    let launch = |which, program: &Path| Launch {
        which,
        program: program.to_path_buf(),
        args: args.to_vec(),
        env: Vec::new(),
    };
    let mut launcher = ProcessLauncher {
        old: launch(Side::Old, old),
        new: launch(Side::New, new),
        ctl: Control {
            timeout: std::time::Duration::from_secs_f64(crate::runner::worker::DEFAULT_TIMEOUT_S),
            ..Control::default()
        },
    };
    let cfg = PairsConfig {
        pairs: default_process_pairs(plan.time_budget_ns),
        layout_pairs: vernier::measure::compare::MAX_LAYOUT_PROCESS_PAIRS,
        plan,
        threshold: 0.005,
        cpus: crate::host::affinity::allowed_cpus().iter().collect(),
        env_pad: None,
        max_env_pad: crate::runner::processes::MAX_ENV_PAD,
        seed: std::process::id() as u64 ^ vernier::timer::monotonic_ns(),
    };
    let mut file = ComparisonFile::new(Mode::Paired, cfg.threshold);
    compare::run(
        &mut launcher,
        &MonotonicClock,
        &cfg,
        &mut file,
        &mut |o, n| {
            Ok(o.iter()
                .filter(|x| n.contains(x) && filter.is_none_or(|re| re.is_match(x)))
                .cloned()
                .collect())
        },
        &crate::term::interrupted,
        &mut |_| {},
    )
    .map_err(anyhow::Error::msg)?;
    Ok(file)
}

/// The commits after `good` up to `bad` (first parents, oldest first), or why there are none.
fn range(repo: &Path, good: &str, bad: &str) -> Result<(Commit, Vec<Commit>)> {
    let resolve = |which: &str, c: &str| {
        git(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{c}^{{commit}}"),
            ],
        )
        .map_err(|_| anyhow!("--{which} {c}: not a commit of this repository"))
    };
    let (g, b) = (resolve("good", good)?, resolve("bad", bad)?);
    if git(repo, &["merge-base", "--is-ancestor", &g, &b]).is_err() || g == b {
        bail!(
            "--good {good} .. --bad {bad} is not a range: the good commit must be an ancestor \
             of the bad one (git log --oneline {good}..{bad} lists the commits between)"
        );
    }
    let subject = |sha: &str| git(repo, &["log", "-1", "--format=%s", sha]).unwrap_or_default();
    let list = git(
        repo,
        &[
            "rev-list",
            "--first-parent",
            "--reverse",
            &format!("{g}..{b}"),
        ],
    )?;
    let commits = list
        .lines()
        .map(|sha| Commit {
            sha: sha.to_string(),
            subject: subject(sha),
        })
        .collect();
    Ok((
        Commit {
            subject: subject(&g),
            sha: g,
        },
        commits,
    ))
}

/// Whether a build's figures moved from the good build's towards the bad build's: past half
/// the bad build's log-ratio (timed), or off the good count by half an instruction (counted).
fn moved(fig: &Figures, good: &Figures, bad: &Figures, counted: bool) -> bool {
    bad.iter().any(|(name, &b)| {
        let Some(&x) = fig.get(name) else {
            return false;
        };
        if counted {
            let g = good.get(name).copied().unwrap_or(f64::NAN);
            (x - g).abs() >= crate::history::changepoint::EXACT_THRESHOLD
        } else {
            x.ln() / b.ln() > 0.5
        }
    })
}

pub fn bisect_command(a: &BisectArgs) -> Result<i32> {
    if a.instructions {
        // The store the counts are saved to, opened before the first build: a wrong --db
        // fails now, not after the builds.
        let loc = crate::history::store::Location::resolve(a.db.as_deref())?;
        crate::history::open_store(&loc)?;
    }
    let repo = clean_repository()?;
    if a.instructions {
        crate::runner::instructions::Callgrind::from_env().check()?;
    }
    let (good, commits) = range(&repo, &a.good, &a.bad)?;
    let dir = crate::scratch::dir("vernier-bisect-builds-")?;
    let wt = crate::scratch::dir("vernier-bisect-")?;
    git(
        &repo,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            &wt.path().to_string_lossy(),
            &good.sha,
        ],
    )?;
    let mut b = Bisect {
        a,
        tree: Worktree {
            repo: repo.clone(),
            dir: wt,
        },
        builds: dir.path().to_path_buf(),
        built: 0,
        good_build: None,
        filter: crate::args::Selection::new(crate::args::parse_filter(a.filter.as_deref())?, None),
    };
    let good_build = b
        .build(&good)
        .map_err(|e| anyhow!("--good {}: {e}", a.good))?;
    b.good_build = Some(good_build.clone());
    let bad_commit = commits.last().cloned().expect("a range has a last commit");
    let bad_build = b
        .build(&bad_commit)
        .map_err(|e| anyhow!("--bad {}: {e}", a.bad))?;
    // The step itself: the good build against the bad one.
    let good_fig = if a.instructions {
        b.measure(&good_build, &good)?
    } else {
        Figures::new()
    };
    let bad_all = b.measure(&bad_build, &bad_commit)?;
    let bad_fig = followed(a, &good_fig, bad_all)?;
    if bad_fig.is_empty() {
        println!(
            "no benchmark moved between {} and {} ({} builds): nothing to bisect",
            good.short(),
            bad_commit.short(),
            b.built
        );
        return Ok(super::EXIT_REGRESSION);
    }
    for (name, x) in &bad_fig {
        let what = if a.instructions {
            format!(
                "{:.1} → {x:.1} instructions per iteration",
                good_fig.get(name).copied().unwrap_or(f64::NAN)
            )
        } else {
            format!("×{x:.4} against the good build")
        };
        println!("{name}: {what} at {}", bad_commit.short());
    }
    let (lo, hi) = b.search(&commits, &good_fig, &bad_fig)?;
    say_first(&commits, (lo, hi), b.built);
    Ok(0)
}

/// The root of the git repository of the current directory, whose work tree must hold no
/// change not committed.
fn clean_repository() -> Result<PathBuf> {
    let here = std::env::current_dir()?;
    let repo = PathBuf::from(
        git(&here, &["rev-parse", "--show-toplevel"])
            .map_err(|_| anyhow!("history bisect runs in a git repository: cd into yours"))?,
    );
    if !git(&repo, &["status", "--porcelain", "--untracked-files=no"])?.is_empty() {
        bail!(
            "the work tree has changes not committed: bisect builds commits in a worktree of \
             its own, and a change not committed would be in none of them; commit or stash it \
             first (git stash)"
        );
    }
    Ok(repo)
}

/// The benchmarks of the bad build (`bad_all`) that moved from the good one: an instruction
/// count that differs from the good build's, a time moved by [`FOLLOWED`] or more.
fn followed(a: &BisectArgs, good_fig: &Figures, bad_all: Figures) -> Result<Figures> {
    if bad_all.is_empty() {
        bail!(
            "no benchmark of {} was measured in both builds{}: give a --filter that matches \
             some (`{} --list` names them)",
            a.program[0].to_string_lossy(),
            a.filter
                .as_deref()
                .map(|f| format!(" (--filter '{f}' selects none)"))
                .unwrap_or_default(),
            a.program[0].to_string_lossy(),
        );
    }
    Ok(bad_all
        .into_iter()
        .filter(|(name, x)| {
            if a.instructions {
                good_fig
                    .get(name)
                    .is_some_and(|g| (x - g).abs() >= crate::history::changepoint::EXACT_THRESHOLD)
            } else {
                x.ln().abs() >= FOLLOWED.ln_1p()
            }
        })
        .collect())
}

/// The commit the search ended on (`hi`, after the last good one `lo`), with the commits
/// between whose builds failed.
fn say_first(commits: &[Commit], (lo, hi): (Option<usize>, usize), built: usize) {
    let first = &commits[hi];
    let between: Vec<&str> = (lo.map_or(0, |l| l + 1)..hi)
        .map(|i| commits[i].short())
        .collect();
    if between.is_empty() {
        println!(
            "first commit where it moved: {} {} ({} builds for {} commits)",
            first.sha,
            first.subject,
            built,
            commits.len()
        );
    } else {
        println!(
            "it moved at {} {} or at one of {} before it, whose builds failed ({} builds for {} \
             commits)",
            first.sha,
            first.subject,
            between.join(", "),
            built,
            commits.len()
        );
    }
}
