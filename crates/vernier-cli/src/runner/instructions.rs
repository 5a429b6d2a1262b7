//! Deterministic mode (`--instructions`): instructions, simulated cache misses and simulated
//! branch mispredictions per iteration, counted under valgrind's callgrind instead of timed.
//!
//! A benchmark is run twice under callgrind, at N1 and N2 iterations, each time in a fresh
//! process that runs exactly one sample of that many iterations. Collection is switched off at
//! start-up (`--collect-atstart=no`) and toggled on only inside the harness's measured-loop
//! function (`--toggle-collect=<pattern>`, by default `*vernier_measured_loop*`), so start-up,
//! calibration and I/O are not counted. What the loop costs once per call (entering it, reading
//! the clock) is the same at both counts, so the difference cancels it:
//!
//! ```text
//! per iteration = (count(N2) − count(N1)) / (N2 − N1)      for Ir, D1mr, D1mw, DLmr, DLmw, Bc, Bcm, Bi, Bim, …
//! ```
//!
//! Why callgrind and not cachegrind: both simulate the same caches and branch predictor, but
//! only callgrind can restrict counting to the dynamic extent of one function (the measured
//! loop and everything it calls) with `--toggle-collect`. Cachegrind counts the whole program
//! (3.22 added client requests to toggle it, which would need code in the harness).
//!
//! The counts are deterministic for deterministic code: two runs agree to the instruction, so a
//! change of a few instructions per iteration is visible where timing noise would hide it.
//! Cache figures come from valgrind's simulation of this machine's cache geometry (first-level
//! data, last level), not from the hardware.
//!
//! How the benchmark is told to run exactly K iterations once is the caller's business: it
//! gets the valgrind command line to prefix and K (see [`Launch`]). With the worker protocol
//! that is `run <index> iters=K samples=1` sent on the worker's command descriptor; for a plain
//! program it can be an argument ([`argv_launcher`]).

use anyhow::{anyhow, bail, Context, Result};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Environment variable naming the valgrind binary (default: `valgrind` on `PATH`).
pub const VALGRIND_ENV: &str = "VERNIER_VALGRIND";
/// The default toggle pattern: the harnesses' measured-loop function, `noinline` in the C++
/// header and `#[inline(never)]` in the Rust crate. The wildcards match the Rust symbol in both
/// manglings (`crate::vernier_measured_loop` and `crate::vernier_measured_loop::<…>`) and C++
/// names with namespaces or parameter lists.
pub const DEFAULT_TOGGLE: &str = "*vernier_measured_loop*";
/// Default iteration counts. Instruction counts are exact at any difference; a difference of
/// 1000 iterations also averages data-dependent branches and cache effects over many
/// iterations while keeping the slowest kernels (×50–100 under simulation) tolerable.
pub const DEFAULT_N1: u64 = 1_000;
pub const DEFAULT_N2: u64 = 2_000;
/// The events reported per iteration, in this order, when callgrind produced them.
pub const REPORTED_EVENTS: [&str; 9] = [
    "Ir", "D1mr", "D1mw", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim",
];

/// How to run callgrind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Callgrind {
    /// The valgrind executable.
    pub valgrind: PathBuf,
    /// `--toggle-collect` pattern (callgrind's wildcards: `*` and `?`).
    pub toggle: String,
    /// `--cache-sim=yes`: D1 and LL misses (I1mr, D1mr, D1mw, ILmr, DLmr, DLmw).
    pub cache_sim: bool,
    /// `--branch-sim=yes`: conditional and indirect branches and mispredictions (Bc, Bcm, Bi,
    /// Bim).
    pub branch_sim: bool,
    /// Further valgrind options, before the program.
    pub extra_args: Vec<OsString>,
}

impl Default for Callgrind {
    fn default() -> Callgrind {
        Callgrind {
            valgrind: PathBuf::from("valgrind"),
            toggle: DEFAULT_TOGGLE.to_string(),
            cache_sim: true,
            branch_sim: true,
            extra_args: Vec::new(),
        }
    }
}

/// Runs the benchmark for exactly `iters` iterations (one sample) under the given valgrind
/// command: append the program and its arguments to `valgrind`, run it (speaking the worker
/// protocol if needed) and wait for it to exit. Errors carry the program's own message.
pub trait Launch {
    fn launch(&mut self, iters: u64, valgrind: Command) -> Result<()>;
}

impl<F: FnMut(u64, Command) -> Result<()>> Launch for F {
    fn launch(&mut self, iters: u64, valgrind: Command) -> Result<()> {
        self(iters, valgrind)
    }
}

/// A launcher for programs that take the iteration count as their last argument:
/// `program args… K`.
pub fn argv_launcher(
    program: impl Into<OsString>,
    args: Vec<OsString>,
) -> impl FnMut(u64, Command) -> Result<()> {
    let program = program.into();
    move |iters, mut cmd| {
        cmd.arg(&program).args(&args).arg(iters.to_string());
        run_to_completion(cmd)
    }
}

/// Run a command, its standard output discarded; a failure reports the exit status and the
/// tail of its standard error.
pub fn run_to_completion(mut cmd: Command) -> Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("cannot start {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{} under callgrind failed ({}): {}",
            cmd.get_args()
                .find(|a| !a.to_string_lossy().starts_with('-'))
                .unwrap_or(OsStr::new("the benchmark"))
                .to_string_lossy(),
            out.status,
            stderr_tail(&out.stderr)
        );
    }
    Ok(())
}

fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// Event totals of one callgrind run, as named in the output's `events:` header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventCounts {
    pub names: Vec<String>,
    pub values: Vec<u64>,
}

impl EventCounts {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.values[i])
    }
}

/// Parse a callgrind output file: the `events:` header and the `totals:` line (or `summary:`,
/// which older versions write instead). Trailing zero counts may be omitted by callgrind; they
/// are restored.
pub fn parse_callgrind_output(text: &str) -> Result<EventCounts> {
    let mut names: Option<Vec<String>> = None;
    let mut totals: Option<&str> = None;
    let mut summary: Option<&str> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            names = Some(rest.split_whitespace().map(str::to_string).collect());
        } else if let Some(rest) = line.strip_prefix("totals:") {
            totals = Some(rest);
        } else if let Some(rest) = line.strip_prefix("summary:") {
            summary = Some(rest);
        }
    }
    let names = names.ok_or_else(|| anyhow!("callgrind output has no `events:` line"))?;
    let line = totals
        .or(summary)
        .ok_or_else(|| anyhow!("callgrind output has no `totals:` or `summary:` line"))?;
    let mut values = line
        .split_whitespace()
        .map(|v| {
            v.parse::<u64>()
                .with_context(|| format!("bad count `{v}` in callgrind totals"))
        })
        .collect::<Result<Vec<u64>>>()?;
    if values.len() > names.len() {
        bail!(
            "callgrind totals have {} counts for {} events",
            values.len(),
            names.len()
        );
    }
    values.resize(names.len(), 0);
    Ok(EventCounts { names, values })
}

/// Per-iteration figures from two runs: `(count(N2) − count(N1)) / (N2 − N1)` per event.
#[derive(Clone, Debug, PartialEq)]
pub struct PerIteration {
    pub n1: u64,
    pub n2: u64,
    pub at_n1: EventCounts,
    pub at_n2: EventCounts,
    /// Event name and count per iteration (may be negative for noisy simulated events, never
    /// for `Ir` of a loop).
    pub per_iter: Vec<(String, f64)>,
    /// Wall time of both runs under valgrind.
    pub wall: Duration,
    /// Each function's costs per iteration (the exact profile), when the dumps could be read
    /// per function (empty otherwise: the totals above stand on their own).
    pub functions: Vec<crate::runner::callgraph::FnPerIter>,
}

impl PerIteration {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.per_iter
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    /// Instructions per iteration.
    pub fn instructions(&self) -> Option<f64> {
        instructions_in(&self.per_iter)
    }
}

/// The instructions (`Ir`) among counts per iteration.
pub fn instructions_in(per_iter: &[(String, f64)]) -> Option<f64> {
    per_iter.iter().find(|(e, _)| e == "Ir").map(|&(_, v)| v)
}

/// The differencing itself. Every event of [`REPORTED_EVENTS`] present in both runs is
/// reported, in that order, then any other event both runs have.
pub fn difference(
    n1: u64,
    at_n1: &EventCounts,
    n2: u64,
    at_n2: &EventCounts,
) -> Result<Vec<(String, f64)>> {
    if n2 <= n1 {
        bail!("iteration counts must grow: N1 = {n1}, N2 = {n2}");
    }
    let dn = (n2 - n1) as f64;
    let mut order: Vec<&str> = REPORTED_EVENTS.to_vec();
    for n in &at_n2.names {
        if !order.contains(&n.as_str()) {
            order.push(n);
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|name| {
            let a = at_n1.get(name)?;
            let b = at_n2.get(name)?;
            Some((name.to_string(), (b as f64 - a as f64) / dn))
        })
        .collect())
}

/// The threads a benchmark named `NAME/threads:T` runs its body on (1 for any other).
pub fn threads_of(name: &str) -> usize {
    vernier::result::threads::split_name(name).map_or(1, |(_, t)| t.max(1))
}

/// A benchmark's counts per iteration as its time is given: per thread. Callgrind counts the
/// measured loop in each of a threaded benchmark's `threads` threads (each runs every iteration
/// of a sample), so [`difference`]'s totals over them are divided by their number; a
/// benchmark on one thread keeps its own.
pub fn per_thread(per_iter: &[(String, f64)], threads: usize) -> Vec<(String, f64)> {
    let t = threads.max(1) as f64;
    per_iter.iter().map(|(e, v)| (e.clone(), v / t)).collect()
}

impl Callgrind {
    /// The defaults, with the valgrind path from `VERNIER_VALGRIND` when set.
    pub fn from_env() -> Callgrind {
        let mut c = Callgrind::default();
        if let Some(path) = std::env::var_os(VALGRIND_ENV).filter(|p| !p.is_empty()) {
            c.valgrind = PathBuf::from(path);
        }
        c
    }

    /// Check that valgrind runs; returns its version (`valgrind-3.19.0`).
    pub fn check(&self) -> Result<String> {
        let out = Command::new(&self.valgrind)
            .arg("--version")
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(out) if out.status.success() => {
                Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
            }
            Ok(out) => bail!(
                "`{} --version` failed ({}): {}",
                self.valgrind.display(),
                out.status,
                stderr_tail(&out.stderr)
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "counting instructions needs valgrind, which was not found (looked for `{}`): install \
                 it (Debian/Ubuntu: `apt-get install valgrind`) or set {} to its path",
                self.valgrind.display(),
                VALGRIND_ENV
            ),
            Err(e) => bail!("cannot run `{}`: {e}", self.valgrind.display()),
        }
    }

    /// The valgrind command line writing its counts to `out_file`; the program and its
    /// arguments are appended by the caller.
    pub fn command(&self, out_file: &Path) -> Command {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        let mut cmd = Command::new(&self.valgrind);
        // --vgdb=no: no gdbserver, whose pipes valgrind would otherwise make in $TMPDIR
        // under names built from the process id.
        cmd.arg("--tool=callgrind")
            .arg("--vgdb=no")
            .arg("--collect-atstart=no")
            .arg(format!("--toggle-collect={}", self.toggle))
            .arg(format!("--cache-sim={}", yes_no(self.cache_sim)))
            .arg(format!("--branch-sim={}", yes_no(self.branch_sim)))
            .arg({
                let mut a = OsString::from("--callgrind-out-file=");
                a.push(out_file);
                a
            })
            .args(&self.extra_args);
        cmd
    }

    /// Run the benchmark once for `iters` iterations under callgrind and read its totals.
    pub fn run_once(&self, iters: u64, launch: &mut dyn Launch) -> Result<EventCounts> {
        self.run_once_graph(iters, launch).map(|(c, _)| c)
    }

    /// As [`Callgrind::run_once`], with the dump read per function too (`None` when it could
    /// not be).
    pub fn run_once_graph(
        &self,
        iters: u64,
        launch: &mut dyn Launch,
    ) -> Result<(EventCounts, Option<crate::runner::callgraph::CallGraph>)> {
        let dir = crate::scratch::dir("vernier-callgrind-")?;
        let out_file = dir.path().join("callgrind.out");
        let result = launch
            .launch(iters, self.command(&out_file))
            .and_then(|()| {
                std::fs::read_to_string(&out_file).with_context(|| {
                    format!(
                        "callgrind wrote no output ({}): did the benchmark run under valgrind?",
                        out_file.display()
                    )
                })
            })
            .and_then(|text| {
                let graph = crate::runner::callgraph::parse(&text).ok();
                parse_callgrind_output(&text).map(|c| (c, graph))
            });
        drop(dir);
        let (counts, graph) = result?;
        if counts.values.iter().all(|&v| v == 0) {
            bail!(
                "nothing was counted at {iters} iterations: no function matching `{}` ran \
                 (is the measured loop inlined, or renamed? the pattern is set with \
                 --toggle-collect's value)",
                self.toggle
            );
        }
        Ok((counts, graph))
    }

    /// Counts per iteration from runs at `n1` and `n2` iterations (`n1 < n2`).
    pub fn per_iteration(&self, n1: u64, n2: u64, launch: &mut dyn Launch) -> Result<PerIteration> {
        if n1 == 0 || n2 <= n1 {
            bail!("--instructions needs 0 < N1 < N2, got N1 = {n1}, N2 = {n2}");
        }
        self.check()?;
        let t0 = Instant::now();
        let (at_n1, g1) = self.run_once_graph(n1, launch)?;
        let (at_n2, g2) = self.run_once_graph(n2, launch)?;
        let wall = t0.elapsed();
        let per_iter = difference(n1, &at_n1, n2, &at_n2)?;
        let functions = match (g1, g2) {
            (Some(a), Some(b)) => {
                crate::runner::callgraph::per_iteration(n1, &a, n2, &b).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        Ok(PerIteration {
            n1,
            n2,
            at_n1,
            at_n2,
            per_iter,
            wall,
            functions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_has_the_toggle_and_the_simulations() {
        let c = Callgrind::default();
        let cmd = c.command(Path::new("/scratch/x.out"));
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().to_string())
            .collect();
        assert_eq!(
            args,
            [
                "--tool=callgrind",
                "--vgdb=no",
                "--collect-atstart=no",
                "--toggle-collect=*vernier_measured_loop*",
                "--cache-sim=yes",
                "--branch-sim=yes",
                "--callgrind-out-file=/scratch/x.out"
            ]
        );
    }
}
