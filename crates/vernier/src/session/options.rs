//! A suite's options, parsed from its program's command line, and why it cannot run.

use crate::counters::CounterSelection;
use crate::ledger::Ledger;
use crate::plan::Plan;
use std::path::PathBuf;

/// Why a benchmark program's suite cannot run. [`Suite::try_from_args`] and
/// [`Suite::try_finish`] return it; [`Suite::run_main`] (and so `vernier::main!`) prints it
/// and returns [`SuiteError::exit_code`] as the program's exit status; [`Suite::from_args`]
/// and [`Suite::finish`], the forms for a plain `fn main()`, print it and end the process.
///
/// [`Suite::try_from_args`]: crate::Suite::try_from_args
/// [`Suite::try_finish`]: crate::Suite::try_finish
/// [`Suite::run_main`]: crate::Suite::run_main
/// [`Suite::from_args`]: crate::Suite::from_args
/// [`Suite::finish`]: crate::Suite::finish
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// `--help`: the usage text (not an error: exit status 0).
    #[error("{0}")]
    Usage(String),
    /// A bad command-line argument.
    #[error("{0}")]
    Args(String),
    /// The `--json` destination cannot be written (checked before measuring).
    #[error("vernier: --json {0}")]
    Destination(String),
    /// Serving a runner failed (the link to it broke, or it sent nonsense).
    #[error("vernier worker: {0}")]
    Worker(String),
    /// Benchmarks failed (a panic, a body that stopped): everything else was measured, printed
    /// and saved; the status says the run is not whole, as under `vernier run`.
    #[error("vernier: {} benchmark(s) failed: {}", .0.len(), .0.join(", "))]
    Failed(Vec<String>),
    /// Ctrl-C: what was measured before it is printed and saved (status 130).
    #[error("vernier: interrupted; every benchmark measured before Ctrl-C is kept{0}")]
    Interrupted(String),
}

impl SuiteError {
    /// 0 for `--help`, 130 after Ctrl-C, 1 for anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            SuiteError::Usage(_) => 0,
            SuiteError::Interrupted(_) => 130,
            _ => 1,
        }
    }

    /// Print the message and end the process with [`SuiteError::exit_code`]. Only the
    /// entry points made for a program's `main` ([`Suite::from_args`], [`Suite::finish`]) call
    /// it.
    ///
    /// [`Suite::from_args`]: crate::Suite::from_args
    /// [`Suite::finish`]: crate::Suite::finish
    pub fn exit(&self) -> ! {
        eprintln!("{self}");
        std::process::exit(self.exit_code())
    }

    /// Print the message on standard error and give the exit status a program ends with.
    pub fn report(&self) -> std::process::ExitCode {
        eprintln!("{self}");
        std::process::ExitCode::from(self.exit_code() as u8)
    }
}

/// Options of a suite run (parsed from the command line by `Suite::try_from_args`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Substring a benchmark name must contain.
    pub filter: Option<String>,
    pub exact: bool,
    pub plan: Plan,
    pub json: Option<PathBuf>,
    pub list: bool,
    pub quick: bool,
    /// Only the benchmarks of this shard (`--shard K/N`, see [`crate::shard`]).
    pub shard: Option<crate::shard::Shard>,
    /// The machine audit to record in the result (filled by the `vernier` command).
    pub system: serde_json::Value,
    /// Rounds over the suite (0: the default, `DEFAULT_ROUNDS`).
    pub rounds: usize,
    /// Counters read around each sample (`--counters`).
    pub counters: CounterSelection,
    /// Keep interrupted samples in the estimates (`--keep-interrupted`).
    pub keep_interrupted: bool,
    /// The machine's known speed from earlier runs, ns per addition of the core-speed probe
    /// (filled by the `vernier` command).
    pub known_cycle_ns: Option<f64>,
    /// The range of the core's clock over this machine's recent runs, GHz-equivalent
    /// ([slowest not core-slowed, fastest]; filled by the `vernier` command).
    pub clock_ghz: Option<[f64; 2]>,
    /// The machine's known best ratio of the core-speed probe's two halves (filled by the
    /// `vernier` command; `Harness::known_wide_ratio`).
    pub known_wide_ratio: Option<f64>,
    /// Per benchmark name, the medians of the same program's recent runs on this machine,
    /// which its interval is joined to (`result::earlier_runs`; filled by the `vernier` command).
    pub earlier: std::collections::BTreeMap<String, crate::result::earlier_runs::EarlierRuns>,
    /// The ledger was read for this program's earlier runs (`earlier` holds those with at
    /// least two; filled by the `vernier` command).
    pub earlier_runs_read: bool,
}

/// Benchmarks are measured in two rounds, one after the other over the whole suite, each with
/// half the budget: a change of the machine's state between rounds (another tenant, frequency)
/// widens the interval instead of passing unnoticed, as it would in one contiguous run.
pub const DEFAULT_ROUNDS: usize = 2;

impl Options {
    /// Parse the arguments of a benchmark executable (`cargo bench -- [FILTER] [OPTIONS]`).
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options::default();
        let mut time: Option<f64> = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--bench" | "--nocapture" | "--color=never" | "--color=auto" => {}
                "--quick" => o.quick = true,
                "--list" => o.list = true,
                "--keep-interrupted" => o.keep_interrupted = true,
                "--counters" => {
                    let v = it.next().ok_or("--counters needs a list (or none)")?;
                    o.counters = CounterSelection::parse(v)?;
                }
                "--exact" => o.exact = true,
                "--shard" => {
                    let v = it.next().ok_or("--shard needs K/N (e.g. --shard 1/4)")?;
                    o.shard = Some(crate::shard::Shard::parse(v)?);
                }
                "--time" => {
                    let v = it.next().ok_or("--time needs a number of seconds")?;
                    time = Some(
                        v.parse()
                            .ok()
                            .filter(|t: &f64| *t > 0.0 && t.is_finite())
                            .ok_or(format!("--time {v}: expected a positive number of seconds"))?,
                    );
                }
                "--json" => {
                    o.json = Some(it.next().ok_or("--json needs a file name")?.into());
                }
                "-h" | "--help" => {
                    return Err("usage: BENCH [FILTER] [--quick] [--time SECONDS] [--json FILE] [--list] [--exact]\n\
                                \x20            [--shard K/N]\n\
                                \x20            [--counters LIST|none] [--keep-interrupted]\n\
                                For the full analysis across processes: vernier run -- BENCH"
                        .into())
                }
                s if s.starts_with('-') => {
                    return Err(format!(
                        "unknown option '{s}' (expected FILTER, --quick, --time S, --json FILE, --list, --exact, --shard K/N, --counters LIST, --keep-interrupted)"
                    ))
                }
                s => o.filter = Some(s.to_string()),
            }
        }
        o.plan = match (time, o.quick) {
            (Some(t), _) => Plan::with_budget((t * 1e9) as u64),
            (None, true) => Plan::quick(),
            (None, false) => Plan::default(),
        };
        Ok(o)
    }

    /// Fill what a run in this process needs from the machine's ledger and was not
    /// given: the known speed, the clock's range, and the earlier runs of `program` (a
    /// [`program_identity`](crate::ledger::program_identity)).
    pub fn fill_from_ledger(&mut self, ledger: &Ledger, program: Option<&str>) {
        if self.known_cycle_ns.is_none() {
            self.known_cycle_ns = ledger.known_cycle_ns();
        }
        if self.clock_ghz.is_none() {
            self.clock_ghz = ledger.clock_ghz();
        }
        if self.known_wide_ratio.is_none() {
            self.known_wide_ratio = ledger.known_wide_ratio();
        }
        if let (true, Some(id)) = (self.earlier.is_empty(), program) {
            self.earlier = ledger.earlier_runs_of(id);
        }
        self.earlier_runs_read |= program.is_some() && ledger.in_use();
    }

    pub fn selects(&self, name: &str) -> bool {
        if self.shard.is_some_and(|s| !s.contains(name)) {
            return false;
        }
        match &self.filter {
            None => true,
            Some(f) if self.exact => name == f,
            Some(f) => name.contains(f.as_str()),
        }
    }
}
