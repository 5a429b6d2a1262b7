//! `vernier analyze`: live runs of the demo (in process), a Rust worker and a C++ worker
//! re-derived from their files to the same figures; committed files of older builds loaded;
//! damaged files refused with exit 1 and the field named; offline `compare` on the same loader.

use crate::common::{cli, cpp, rust_examples};

use cli::{text, vernier};
use serde_json::Value;
use std::path::{Path, PathBuf};
use vernier::result::ResultFile;

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vernier/tests/fixtures/results")
        .join(name)
}

/// Every number of the two values equal to 1e-12 relative, everything else equal.
fn assert_same(path: &str, a: &Value, b: &Value) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                "{path}: {x} vs {y}"
            );
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{path}"
            );
            for (k, v) in x {
                assert_same(&format!("{path}.{k}"), v, &y[k]);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{path}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                assert_same(&format!("{path}[{i}]"), v, w);
            }
        }
        _ => assert_eq!(a, b, "{path}"),
    }
}

/// `vernier analyze LIVE --json OUT`: every benchmark, figures and diagnostics included, equal.
fn reanalyze_and_compare(live: &Path, tag: &str) {
    let out = tmp(&format!("analyze-{tag}.json"));
    let o = vernier()
        .arg("analyze")
        .arg(live)
        .arg("--json")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("every figure equals the one stored"),
        "{}",
        text(&o)
    );
    let a = ResultFile::load(live).unwrap();
    let b = ResultFile::load(&out).unwrap();
    assert!(!a.benchmarks.is_empty());
    assert_eq!(a.benchmarks.len(), b.benchmarks.len());
    for (x, y) in a.benchmarks.iter().zip(&b.benchmarks) {
        assert_same(
            &x.name,
            &serde_json::to_value(x).unwrap(),
            &serde_json::to_value(y).unwrap(),
        );
    }
}

#[test]
fn the_demo_is_re_derived_exactly() {
    let live = tmp("analyze-demo-live.json");
    let o = vernier()
        .args([
            "demo",
            "--quick",
            "--filter",
            "sqrt|rand|sort|cold",
            "--json",
        ])
        .arg(&live)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    reanalyze_and_compare(&live, "demo");
}

/// `vernier run ARGS --json LIVE -- EXE`, then the re-derivation of LIVE.
fn run_then_reanalyze(args: &[&str], exe: &Path, tag: &str) {
    let live = tmp(&format!("analyze-{tag}-live.json"));
    let o = vernier()
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&live)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    reanalyze_and_compare(&live, tag);
}

#[test]
fn a_rust_worker_run_in_two_processes_is_re_derived_exactly() {
    let exe = rust_examples::examples().join("chain");
    run_then_reanalyze(&["--quick", "--processes", "2"], &exe, "rust");
}

#[test]
fn a_cpp_worker_run_is_re_derived_exactly() {
    run_then_reanalyze(&["--quick"], &cpp::example("arithmetic"), "cpp");
}

#[test]
fn files_of_older_builds_are_read() {
    for name in ["demo-v0.1.0.json", "run-cpp-v0.1.0.json"] {
        let o = vernier()
            .arg("analyze")
            .arg(fixture(name))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("re-derive"), "{name}: {}", text(&o));
        assert!(stdout.contains("vernier 0.1.0"), "{name}: {}", text(&o));
    }
}

#[test]
fn an_edited_figure_is_reported_as_differing() {
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(fixture("run-cpp-v0.1.0.json")).unwrap()).unwrap();
    v["benchmarks"][0]["per_iter"]["median_ns"] = 1234.5.into();
    let path = tmp("analyze-edited.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let o = vernier().arg("analyze").arg(&path).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("per_iter.median_ns stored 1234.5"),
        "{}",
        text(&o)
    );
}

/// A damaged copy of the C++ fixture, written for the CLI.
fn damaged(tag: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(fixture("run-cpp-v0.1.0.json")).unwrap()).unwrap();
    edit(&mut v);
    let path = tmp(&format!("damaged-{tag}.json"));
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

#[test]
fn damaged_files_are_refused_by_analyze_and_compare() {
    let short = damaged("short", |v| {
        v["benchmarks"][0]["samples"]["phase"]
            .as_array_mut()
            .unwrap()
            .pop();
    });
    let nan = tmp("damaged-nan.json");
    let text_nan = std::fs::read_to_string(fixture("run-cpp-v0.1.0.json"))
        .unwrap()
        .replacen("\"median_ns\":", "\"median_ns\":NaN,\"was\":", 1);
    std::fs::write(&nan, text_nan).unwrap();
    let cut = tmp("damaged-cut.json");
    let bytes = std::fs::read(fixture("run-cpp-v0.1.0.json")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let cases = [
        (short.clone(), "`samples.phase`"),
        (
            damaged("type", |v| {
                v["benchmarks"][0]["samples"]["ns"][0] = "x".into()
            }),
            "`samples.ns[0]`",
        ),
        (
            damaged("neg", |v| v["benchmarks"][0]["total_s"] = (-1.0).into()),
            "`total_s`",
        ),
        (
            damaged("huge", |v| {
                v["benchmarks"][0]["samples"]["ns"][0] = u64::MAX.into()
            }),
            "`samples.ns[0]`",
        ),
        (nan, "invalid JSON"),
        (cut, "truncated"),
    ];
    for (path, says) in &cases {
        let o = vernier().arg("analyze").arg(path).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains(says), "{says}: {}", text(&o));
        assert!(!stderr.contains("panicked"), "{}", text(&o));
    }
    // The offline comparison reads through the same loader: a short column is named, where it
    // used to make `compare` panic.
    let o = vernier()
        .arg("compare")
        .arg(fixture("run-cpp-v0.1.0.json"))
        .arg(&short)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("`samples.phase`"), "{}", text(&o));
}

#[test]
fn analyze_names_a_missing_file_and_a_bad_filter() {
    let o = vernier()
        .args(["analyze", "/nonexistent/result.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read /nonexistent/result.json"));
    let o = vernier()
        .arg("analyze")
        .arg(fixture("run-cpp-v0.1.0.json"))
        .args(["--filter", "^nothing$"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("matches no benchmark"));
}

/// `vernier run` remembers the medians of each benchmark of the same executable on this
/// machine (here in a file of the test's own): from the third run on, the interval covers the
/// earlier runs' medians (what this run's samples cannot see), the run's own interval is kept
/// beside it, the file carries the range so `vernier analyze` re-derives it, a different
/// executable starts afresh, and a rebuilt one borrows its old build's spread. A run flagged
/// `core-slowed` (other work shares the cores) is not kept among the earlier runs; nothing is
/// run again, and each step checks what its kept predecessors imply.
#[test]
fn earlier_runs_of_the_same_program_widen_the_interval_and_are_re_derived() {
    let store = tmp("earlier-ledger.json");
    let _ = std::fs::remove_file(&store);
    let exe = cpp::example("arithmetic");
    let run = |exe: &Path, tag: &str| {
        let json = tmp(&format!("earlier-{tag}.json"));
        let o = vernier()
            .env("VERNIER_LEDGER", &store)
            .args([
                "run",
                "--quick",
                "--processes",
                "1",
                "--filter",
                "^sqrt$",
                "--json",
            ])
            .arg(&json)
            .arg("--")
            .arg(exe)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let file = ResultFile::load(&json).unwrap();
        (json, file, o)
    };
    let (_, first, _) = run(&exe, "1");
    assert!(first.benchmarks[0].earlier_runs.is_none());
    let (_, second, o) = run(&exe, "2");
    // One earlier run is not enough to widen anything.
    joins_its_kept_predecessors(&[&first], &second, &o, false);
    let (third_path, third, o) = run(&exe, "3");
    joins_its_kept_predecessors(&[&first, &second], &third, &o, false);
    let b = &third.benchmarks[0];
    let [lo, hi] = b.per_iter.ci95_ns;
    assert!(lo <= b.per_iter.run_ci95_ns[0] && b.per_iter.run_ci95_ns[1] <= hi);
    reanalyze_and_compare(&third_path, "earlier");
    // Another executable (a copy is another file) has no earlier runs.
    let copy = tmp("arithmetic-copy");
    std::fs::copy(&exe, &copy).unwrap();
    let (_, other, _) = run(&copy, "copy");
    assert!(other.benchmarks[0].earlier_runs.is_none());
    // Rebuilt in place (another modification time): its first run borrows the spread of the
    // old build's runs around its own median, marked as such, and `analyze` does the same.
    let (_, second_copy, o) = run(&copy, "copy2");
    joins_its_kept_predecessors(&[&other], &second_copy, &o, false);
    rebuild_in_place(&copy);
    let (rebuilt_path, rebuilt, o) = run(&copy, "rebuilt");
    joins_its_kept_predecessors(&[&other, &second_copy], &rebuilt, &o, true);
    reanalyze_and_compare(&rebuilt_path, "rebuilt");
}

/// What a run's earlier runs must be, given the results before it (`earlier`, oldest first)
/// and which of them were kept ([`kept`]): none below two kept ones; otherwise exactly their
/// range, and the run's interval covers it (for an earlier build, its spread around this
/// run's median), unless the medians lie so far apart that they are taken for other inputs,
/// which the report then says.
fn joins_its_kept_predecessors(
    earlier: &[&ResultFile],
    this: &ResultFile,
    o: &std::process::Output,
    earlier_build: bool,
) {
    let medians: Vec<f64> = earlier
        .iter()
        .filter(|f| kept(f))
        .map(|f| f.benchmarks[0].per_iter.median_ns)
        .collect();
    let b = &this.benchmarks[0];
    if medians.len() < vernier::result::earlier_runs::MIN_EARLIER_RUNS {
        assert!(
            b.earlier_runs.is_none(),
            "{:?}\n{}",
            b.earlier_runs,
            text(o)
        );
        return;
    }
    let e = b.earlier_runs.expect("the kept earlier runs");
    let range = [
        medians.iter().copied().fold(f64::INFINITY, f64::min),
        medians.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ];
    assert_eq!((e.runs, e.median_ns), (medians.len(), range), "{e:?}");
    assert_eq!(e.earlier_build, earlier_build, "{e:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    if e.beyond_clock {
        assert!(
            stdout.contains(&b.name) && stdout.contains("runs read"),
            "{stdout}"
        );
        return;
    }
    let m = b.per_iter.median_ns;
    let [lo, hi] = b.per_iter.ci95_ns;
    let covered = if earlier_build {
        let spread = range[1] / range[0];
        [m / spread * (1.0 + 1e-12), m * spread * (1.0 - 1e-12)]
    } else {
        range
    };
    assert!(lo <= covered[0] && covered[1] <= hi, "{b:?}");
    let own = b.per_iter.run_ci95_ns;
    if !earlier_build && (range[0] < own[0] || range[1] > own[1]) {
        assert!(stdout.contains("recent runs on this machine"), "{stdout}");
    }
}

/// A Rust suite run standalone (`cargo bench`) reads and adds to the same ledger as
/// `vernier run`: its third run's interval covers its kept predecessors' medians, and says so.
#[test]
fn a_standalone_rust_suite_keeps_and_joins_its_earlier_runs() {
    let store = tmp("standalone-ledger.json");
    let _ = std::fs::remove_file(&store);
    let exe = rust_examples::examples().join("chain");
    let run = |tag: &str| {
        let json = tmp(&format!("standalone-{tag}.json"));
        let o = std::process::Command::new(&exe)
            .env("VERNIER_LEDGER", &store)
            .args(["--quick", "--json"])
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        (ResultFile::load(&json).unwrap(), o)
    };
    let (first, _) = run("1");
    assert!(first.benchmarks[0].earlier_runs.is_none());
    let (second, o) = run("2");
    joins_its_kept_predecessors(&[&first], &second, &o, false);
    let (third, o) = run("3");
    joins_its_kept_predecessors(&[&first, &second], &third, &o, false);
    // The machine's speeds were recorded too: one per benchmark with a fast state to read.
    let with_fast_state = [&first, &second, &third]
        .iter()
        .flat_map(|f| &f.benchmarks)
        .filter(|b| {
            b.speed
                .as_ref()
                .is_some_and(|s| s.fast.samples >= vernier::analyze::speed::MIN_STATE_SAMPLES)
        })
        .count();
    let kept: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    let speeds: usize = kept["machines"]
        .as_object()
        .map(|m| m.values().map(|v| v.as_array().unwrap().len()).sum())
        .unwrap_or(0);
    assert_eq!(speeds, with_fast_state, "{kept}");
}

/// Whether a one-benchmark result's median is kept among the earlier runs (not flagged
/// `core-slowed` or as removed work).
fn kept(file: &ResultFile) -> bool {
    let b = &file.benchmarks[0];
    vernier::result::earlier_runs::figure_worth_keeping(b.per_iter.median_ns, &b.diagnostics)
}

/// One executable sized by an environment variable (the chain example, `CHAIN_N=100` or
/// `200`), run with the two sizes alternately and then rebuilt, as a user sizes inputs: each
/// size is its own benchmark for the earlier runs (the environment is part of a program's
/// identity), so no interval reaches halfway to the other size's figure, where one identity
/// for both sizes read [27.07, 54.14] ns for a 27.07 ns median. The ledger is in use, a fresh one of the test's own.
#[test]
fn a_program_sized_by_the_environment_keeps_each_size_s_interval() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("chain");
    std::fs::copy(cpp::example("chain"), &exe).unwrap();
    let run = |n: u32, tag: &str| {
        let json = dir.path().join(format!("chain-{n}-{tag}.json"));
        let o = cli::vernier_with_ledger(dir.path())
            .env("CHAIN_N", n.to_string())
            .args(["run", "--quick", "--json"])
            .arg(&json)
            .arg("--")
            .arg(&exe)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let file = ResultFile::load(&json).unwrap();
        (file.benchmarks[0].clone(), o)
    };
    // The other size reads twice as long: an interval that reached halfway to it would be
    // the two sizes' runs mixed. Within that, how wide the interval is depends on the machine
    // (within ±10 % here when quiet; under load a size's own runs may spread further, and
    // its interval covers them, as it should).
    let within = |b: &vernier::result::BenchmarkResult, o: &std::process::Output| {
        let m = b.per_iter.median_ns;
        let [lo, hi] = b.per_iter.ci95_ns;
        assert!(
            lo >= m / 1.5 && hi <= m * 1.5,
            "{}: {m} ns [{lo}, {hi}], earlier {:?}\n{}",
            b.name,
            b.earlier_runs,
            text(o)
        );
    };
    let mut medians = [Vec::new(), Vec::new()];
    for round in 0..3 {
        for (k, n) in [100, 200].into_iter().enumerate() {
            let (b, o) = run(n, &round.to_string());
            within(&b, &o);
            if let Some(e) = b.earlier_runs {
                // Only this size's runs are its earlier runs.
                let [lo, hi] = e.median_ns;
                assert!(
                    medians[k].contains(&lo) && medians[k].contains(&hi),
                    "{e:?} not among {:?}",
                    medians[k]
                );
            }
            medians[k].push(b.per_iter.median_ns);
        }
    }
    // The 200-add chain is about twice the 100-add one: two sizes indeed.
    assert!(medians[1][0] > 1.5 * medians[0][0], "{medians:?}");
    // Rebuilt in place (another modification time): each size borrows the spread of its own
    // size's runs of the old build, not of both.
    rebuild_in_place(&exe);
    for n in [100, 200] {
        let (b, o) = run(n, "rebuilt");
        within(&b, &o);
        if let Some(e) = b.earlier_runs {
            assert!(e.earlier_build && !e.beyond_clock, "{e:?}");
        }
    }
}

/// What a rebuild changes for the earlier runs: the executable's modification time (a minute
/// ahead, so it differs whatever the file system's resolution).
fn rebuild_in_place(exe: &Path) {
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(exe)
        .unwrap()
        .set_modified(later)
        .unwrap();
}
