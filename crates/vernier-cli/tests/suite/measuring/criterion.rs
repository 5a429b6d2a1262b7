//! Criterion benches, unchanged, under Vernier (`crates/vernier-criterion`, docs/criterion.md):
//! - a crate's own benches taken from crates.io at test time (adler 1.0.2, whose only
//!   dev-dependency is criterion), built with nothing changed but the `criterion` dependency
//!   renamed to `vernier-criterion`: listed as Criterion names them, measured by `vernier run`
//!   with their throughput, and measured standalone by `cargo bench`;
//! - the crate's example of every API form: its names, the protocol's conformance, each form
//!   measured as a worker, and its failures (a panicking body, a closure without `iter`).
//!
//! The first test's time is the release build of adler and of `vernier` for it: 89–97 s on
//! the shared 2-vCPU machine under a load average of 5–6 (37 s for the build alone when it
//! was quiet); 2.4 s when the build directory, kept beside the unpacked source, is still
//! there. The second takes 2–3 s once the example is built.

use crate::common::{cli, conformance};

use cli::text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vernier::result::{ResultFile, Status};
use vernier::Throughput;

const CRATE: &str = "adler";
const VERSION: &str = "1.0.2";

/// The benchmarks adler's `benches/bench.rs` registers, as Criterion names them
/// (`group/function`), each with the throughput its group sets.
fn adler_benchmarks() -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for (group, size, suffix) in [
        ("simple-100b", 100u64, "100"),
        ("simple-1k", 1024, "1k"),
        ("simple-1m", 1024 * 1024, "1m"),
    ] {
        for f in ["zeroes", "ones"] {
            v.push((format!("{group}/{f}-{suffix}"), size));
        }
    }
    for f in ["5552", "8k", "64k", "1m"] {
        v.push((format!("chunked-16m/{f}"), 16 * 1024 * 1024));
    }
    v
}

/// adler's published source, fetched from crates.io by cargo (`cargo vendor` of a scratch
/// crate that depends on it, through the registry cargo is set up with) and copied under
/// `dir`, its manifest's `criterion` dev-dependency renamed to this repository's
/// `vernier-criterion` (and a `[workspace]` table, so that cargo does not take it for a member
/// of this one).
fn adler_crate(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir.join(format!("{CRATE}-{VERSION}")));
    let fetch = dir.join("fetch");
    std::fs::create_dir_all(fetch.join("src")).unwrap();
    std::fs::write(
        fetch.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{CRATE} = \"={VERSION}\"\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(fetch.join("src/lib.rs"), "").unwrap();
    let _ = std::fs::remove_dir_all(fetch.join("vendor"));
    let o = Command::new(env!("CARGO"))
        .args(["vendor", "--versioned-dirs", "--quiet", "vendor"])
        .current_dir(&fetch)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cargo vendor could not fetch {CRATE} {VERSION} from crates.io: this test needs the \
         registry to reach the crate's own Criterion benches\n{}",
        text(&o)
    );
    let src = dir.join(format!("{CRATE}-{VERSION}"));
    let o = Command::new("cp")
        .arg("-r")
        .arg(fetch.join("vendor").join(format!("{CRATE}-{VERSION}")))
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "cp: {}", text(&o));
    let manifest = src.join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).unwrap();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vernier-criterion")
        .canonicalize()
        .unwrap();
    let published = "[dev-dependencies.criterion]\nversion = \"0.3.2\"\n";
    assert!(
        toml.contains(published),
        "{manifest:?} no longer declares criterion as this test expects:\n{toml}"
    );
    let renamed = toml.replace(
        published,
        &format!(
            "[dev-dependencies.criterion]\npackage = \"vernier-criterion\"\npath = \"{}\"\n",
            ours.display()
        ),
    );
    std::fs::write(&manifest, format!("{renamed}\n[workspace]\n")).unwrap();
    // This workspace's lock: the versions of vernier's dependencies it was tested with.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
        src.join("Cargo.lock"),
    )
    .unwrap();
    src
}

fn cargo(src: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(src)
        // Beside the unpacked source, which each run replaces: a later run builds only what
        // changed.
        .env("CARGO_TARGET_DIR", src.join("../target"))
        .env("NO_COLOR", "1")
        .env("VERNIER_SPEED_FILE", src.join("core-speed.json"))
        .env_remove("VERNIER_FDS")
        .output()
        .unwrap();
    assert!(o.status.success(), "cargo {args:?}: {}", text(&o));
    o
}

/// The names a bench program lists with Criterion's `--list` (`NAME: benchmark`).
fn listed(exe: &Path, args: &[&str]) -> Vec<String> {
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
fn run_worker(exe: &Path, json: &Path) -> ResultFile {
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
fn a_crates_own_criterion_benches_run_unchanged_under_vernier() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("criterion-adler");
    let src = adler_crate(&dir);
    let built = cargo(&src, &["bench", "--bench", "bench", "--no-run"]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    let exe = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Executable benches/bench.rs (")?
                .strip_suffix(')')
        })
        .map(|p| src.join(p))
        .map(|p| p.canonicalize().unwrap())
        .unwrap_or_else(|| panic!("no bench executable in cargo's output:\n{stderr}"));
    let expected = adler_benchmarks();
    let names: Vec<String> = expected.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(listed(&exe, &["--bench"]), names);
    // A worker: every benchmark measured, none failed, each with its group's throughput.
    let file = run_worker(&exe, &dir.join("adler.json"));
    let measured: Vec<(String, Status, Option<Throughput>)> = file
        .benchmarks
        .iter()
        .map(|b| (b.name.clone(), b.status, b.throughput))
        .collect();
    let want: Vec<(String, Status, Option<Throughput>)> = expected
        .iter()
        .map(|(n, bytes)| {
            (
                n.clone(),
                Status::Ok,
                Some(Throughput::BytesPerIter(*bytes)),
            )
        })
        .collect();
    assert_eq!(measured, want);
    // The same code, the same figures' order: the 1 KiB checksum takes longer than the
    // 100-byte one, measured in the same run.
    let median = |n: &str| {
        file.benchmarks
            .iter()
            .find(|b| b.name == n)
            .unwrap()
            .per_iter
            .median_ns
    };
    assert!(median("simple-1k/ones-1k") > 2.0 * median("simple-100b/ones-100"));
    // Standalone under `cargo bench`: a filter as Criterion takes it, Vernier's table.
    let o = cargo(
        &src,
        &["bench", "--bench", "bench", "--", "simple-1k", "--quick"],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("simple-"))
        .collect();
    assert_eq!(
        rows,
        ["simple-1k/zeroes-1k", "simple-1k/ones-1k"],
        "{}",
        text(&o)
    );
    assert!(stdout.contains("GiB/s"), "no rate in the table:\n{stdout}");
}

/// The crate's example of every API form, built with the cargo that runs the tests.
fn api_example() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_vernier"));
    let profile_dir = bin.parent().unwrap();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "-q",
        "-p",
        "vernier-criterion",
        "--example",
        "criterion_api",
    ]);
    if profile_dir.file_name().unwrap() == "release" {
        cmd.arg("--release");
    }
    let st = cmd
        .env("CARGO_TARGET_DIR", profile_dir.parent().unwrap())
        .status()
        .unwrap();
    assert!(st.success(), "building the criterion_api example failed");
    profile_dir.join("examples/criterion_api")
}

#[test]
fn every_criterion_form_is_named_as_criterion_names_it_and_measured() {
    let exe = api_example();
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
