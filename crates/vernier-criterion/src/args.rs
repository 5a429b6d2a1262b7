//! The bench program's command line: Criterion's (`cargo bench -- FILTER`, `--list`,
//! `--exact`, `--bench`/`--test`, and its sampling, baseline and plot options, accepted) and
//! Vernier's own (`--time`, `--quick`, `--json`, `--shard`, `--keep-interrupted`), turned
//! into a mode and Vernier's [`vernier::Options`].

/// What the program does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `cargo bench`: measure and print the table.
    Bench,
    /// `cargo test --benches` (no `--bench`), or `--test`: run each benchmark once.
    Test,
    /// `--list`: each benchmark's name, as Criterion prints it (`NAME: benchmark`).
    List,
}

#[derive(Debug)]
pub struct Args {
    pub mode: Mode,
    pub options: vernier::Options,
    /// Options of Criterion's that mean nothing here, said once on standard error.
    pub ignored: Vec<String>,
}

/// Criterion's options that take a value and mean nothing to Vernier.
const IGNORED_WITH_VALUE: &[&str] = &[
    "--color",
    "-c",
    "--save-baseline",
    "-s",
    "--baseline",
    "-b",
    "--baseline-lenient",
    "--load-baseline",
    "--format",
    "--sample-size",
    "--warm-up-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--plotting-backend",
    "--output-format",
];

/// Criterion's flags that mean nothing to Vernier (libtest's `--nocapture` and
/// `--show-output` included, which `cargo bench` may pass).
const IGNORED_FLAGS: &[&str] = &[
    "--verbose",
    "-v",
    "--quiet",
    "--noplot",
    "-n",
    "--discard-baseline",
    "--ignored",
    "--nocapture",
    "--show-output",
    "--include-ignored",
];

pub const USAGE: &str = "usage: BENCH [FILTER] [--bench] [--list] [--exact] [--test]\n\
\x20      [--quick] [--time SECONDS] [--measurement-time SECONDS] [--json FILE]\n\
\x20      [--shard K/N] [--keep-interrupted]\n\
FILTER selects the benchmarks whose name contains it (--exact: equal to it).\n\
Criterion's other options (--save-baseline, --sample-size, --noplot, ...) are accepted and ignored.\n\
For the full analysis across processes: vernier run -- BENCH";

/// Parse the program's arguments; `Err` holds the message (`usage…` for `--help`).
pub fn parse(args: &[String]) -> Result<Args, String> {
    let (mut bench, mut test, mut list) = (false, false, false);
    let mut ignored = Vec::new();
    let mut vernier_args: Vec<String> = Vec::new();
    let mut filter: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or(format!("{name} needs a value")),
            }
        };
        match flag {
            "--bench" => bench = true,
            "--test" => test = true,
            "--list" => list = true,
            "-h" | "--help" => return Err(USAGE.into()),
            "--exact" | "--quick" | "--keep-interrupted" => vernier_args.push(flag.into()),
            "--time" | "--json" | "--shard" => {
                let v = value(flag)?;
                vernier_args.extend([flag.to_string(), v]);
            }
            // Criterion's measuring time is Vernier's budget per benchmark.
            "--measurement-time" | "--profile-time" => {
                let v = value(flag)?;
                vernier_args.extend(["--time".to_string(), v]);
            }
            "--counters" => {
                return Err(
                    "--counters: counters are read under the runner: vernier run \
                            --counters LIST -- BENCH"
                        .into(),
                )
            }
            f if IGNORED_WITH_VALUE.contains(&f) => {
                let v = value(f)?;
                ignored.push(format!("{f} {v}"));
            }
            f if IGNORED_FLAGS.contains(&f) => ignored.push(f.to_string()),
            f if f.starts_with('-') => {
                return Err(format!(
                    "unknown option '{a}' (expected FILTER, --bench, --list, --exact, --test, \
                     --quick, --time S, --measurement-time S, --json FILE, --shard K/N, \
                     --keep-interrupted, or one of Criterion's options)"
                ))
            }
            _ => {
                if let Some(f) = &filter {
                    return Err(format!(
                        "two filters ('{f}' and '{a}'): give one (a benchmark is selected when its \
                         name contains it)"
                    ));
                }
                filter = Some(a.clone());
            }
        }
    }
    if let Some(f) = filter {
        vernier_args.push(f);
    }
    let options = vernier::Options::parse(&vernier_args)?;
    // Criterion: `cargo bench` passes `--bench`; without it (`cargo test --benches`) each
    // benchmark runs once, as a test; `--bench --test` tests too.
    let mode = if list {
        Mode::List
    } else if test || !bench {
        Mode::Test
    } else {
        Mode::Bench
    };
    Ok(Args {
        mode,
        options,
        ignored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Args, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn cargo_bench_and_cargo_test_and_list_are_criterion_s_modes() {
        assert_eq!(parse_str("--bench").unwrap().mode, Mode::Bench);
        assert_eq!(parse_str("").unwrap().mode, Mode::Test);
        assert_eq!(parse_str("--bench --test").unwrap().mode, Mode::Test);
        assert_eq!(parse_str("--bench --list").unwrap().mode, Mode::List);
        let a = parse_str("--bench simple-1k --exact --noplot --save-baseline main").unwrap();
        assert_eq!(a.options.filter.as_deref(), Some("simple-1k"));
        assert!(a.options.exact);
        assert_eq!(a.ignored, ["--noplot", "--save-baseline main"]);
        let a = parse_str("--bench --measurement-time=0.5").unwrap();
        assert_eq!(a.options.plan.time_budget_ns, 500_000_000);
        assert!(parse_str("--bench --frobnicate")
            .unwrap_err()
            .contains("'--frobnicate'"));
        assert!(parse_str("--bench a b")
            .unwrap_err()
            .contains("two filters"));
        assert!(parse_str("--bench --counters cycles")
            .unwrap_err()
            .contains("vernier run"));
        assert!(parse_str("--help").unwrap_err().starts_with("usage"));
    }
}
