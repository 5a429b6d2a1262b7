//! Criterion benches, unchanged, under Vernier (`crates/vernier-criterion`, docs/criterion.md):
//! the crate's example of every API form: its names, the protocol's conformance, each form
//! measured as a worker, and its failures (a panicking body, a closure without `iter`). It
//! takes 2–3 s once the example is built. A crate's own benches taken from crates.io at test
//! time are in the registry tier (`registry::criterion`, with the helpers here).

use crate::common::{cli, conformance, rust_examples};

use cli::text;
use std::path::Path;
use std::process::Command;
use vernier::result::{ResultFile, Status};
use vernier::Throughput;

/// The names a bench program lists with Criterion's `--list` (`NAME: benchmark`).
pub(crate) fn listed(exe: &Path, args: &[&str]) -> Vec<String> {
    let o = Command::new(exe).args(args).arg("--list").output().unwrap();
    assert!(o.status.success(), "{exe:?} --list: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            l.strip_suffix(": benchmark")
                .unwrap_or_else(|| panic!("not Criterion's list format: '{l}'"))
                .to_string()
        })
        .collect()
}

/// `vernier run` over every benchmark of `exe`, which must succeed: the result file.
pub(crate) fn run_worker(exe: &Path, json: &Path) -> ResultFile {
    let o = cli::vernier()
        .args(["run", "--time", "0.1", "--processes", "1", "--json"])
        .arg(json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "vernier run -- {exe:?}: {}", text(&o));
    ResultFile::load(json).unwrap_or_else(|e| panic!("{e}\n{}", text(&o)))
}

#[test]
fn every_criterion_form_is_named_as_criterion_names_it_and_measured() {
    let exe = rust_examples::examples().join("criterion_api");
    let names = [
        "fib 20",
        "fib/30",
        "sum/iter",
        "sum/64",
        "sum/rev/64",
        "sum/256",
        "sum/rev/256",
        "sort/small",
        "sort/large",
        "sort/each",
        "sort/ref",
        "sort/setup",
        "sort/large drop",
        "sort/custom",
        "helper/times 2",
        "helper/times 5",
    ];
    assert_eq!(listed(&exe, &["--bench"]), names);
    // Criterion's filter: a substring; `--exact`: the whole name.
    assert_eq!(
        listed(&exe, &["--bench", "sum/rev"]),
        ["sum/rev/64", "sum/rev/256"]
    );
    assert_eq!(listed(&exe, &["--bench", "--exact", "sum/64"]), ["sum/64"]);
    // `cargo test --benches` (no `--bench`): each benchmark once.
    let o = Command::new(&exe).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let tested = String::from_utf8_lossy(&o.stdout)
        .matches("\nSuccess\n")
        .count();
    assert_eq!(tested, names.len(), "{}", text(&o));
    // Settings with no meaning here are said once, grouped.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("sample_size").count(), 1, "{stderr}");
    // The whole protocol, as for any worker (its requests answered while the benchmark they
    // name is entered, bad ones refused).
    let report = conformance::check(Command::new(&exe));
    eprintln!("criterion_api: {report:?}");
    // A worker: every form measured, under its name.
    let json = Path::new(env!("CARGO_TARGET_TMPDIR")).join("criterion-api.json");
    let file = run_worker(&exe, &json);
    let measured: Vec<(&str, Status)> = file
        .benchmarks
        .iter()
        .map(|b| (b.name.as_str(), b.status))
        .collect();
    let want: Vec<(&str, Status)> = names.iter().map(|&n| (n, Status::Ok)).collect();
    assert_eq!(measured, want);
    let throughput = |n: &str| {
        file.benchmarks
            .iter()
            .find(|b| b.name == n)
            .unwrap()
            .throughput
    };
    assert_eq!(throughput("sum/iter"), Some(Throughput::ItemsPerIter(1024)));
    assert_eq!(throughput("sum/256"), Some(Throughput::BytesPerIter(2048)));
    assert_eq!(
        throughput("helper/times 5"),
        Some(Throughput::BytesPerIter(1000))
    );
    assert_eq!(throughput("fib/30"), None);
    // A body that panics and a closure that calls no `iter` method fail alone, each with its
    // reason; the status says the run is not whole.
    let json = Path::new(env!("CARGO_TARGET_TMPDIR")).join("criterion-api-fails.json");
    let (o, file) = {
        let o = cli::vernier()
            .args([
                "run",
                "--time",
                "0.1",
                "--processes",
                "1",
                "--filter",
                "fails|times 2",
            ])
            .arg("--json")
            .arg(&json)
            .arg("--")
            .arg(&exe)
            .env("CRITERION_API_FAIL", "1")
            .output()
            .unwrap();
        let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", text(&o)));
        (o, f)
    };
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let outcome = |n: &str| {
        let b = file.benchmarks.iter().find(|b| b.name == n).unwrap();
        (b.status, b.error.clone().unwrap_or_default())
    };
    assert_eq!(outcome("helper/times 2").0, Status::Ok);
    let (status, error) = outcome("fails/panics");
    assert!(
        status == Status::Failed && error.contains("deliberate failure"),
        "{error}"
    );
    let (status, error) = outcome("fails/no iter");
    assert!(
        status == Status::Failed && error.contains("none of Bencher's iter methods"),
        "{error}"
    );
}
