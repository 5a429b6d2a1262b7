//! Async bodies in a bench crate written as a user would, outside this repository (a path
//! dependency on `vernier` with its `tokio` and `smol` features): the same work measured
//! synchronously and awaited on tokio's current-thread runtime and on smol agrees once the
//! executor's measured empty-future cost is added; a multi-thread runtime is judged in ns; an
//! empty async body is `optimized-away`; and `vernier compare` of an async body doing 10 %
//! more work is never `faster`.
//!
//! Built offline with this workspace's lock file; the first build takes a minute or two.

use crate::common::cli::{self, text, vernier};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vernier::result::ResultFile;

fn crate_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("async-crate");
    std::fs::create_dir_all(dir.join("benches")).unwrap();
    let vernier = root.join("crates/vernier").canonicalize().unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            r#"[package]
name = "asyncfresh"
version = "0.1.0"
edition = "2021"

[dev-dependencies]
vernier = {{ path = "{}", features = ["tokio", "smol"] }}
tokio = {{ version = "1", default-features = false, features = ["rt", "rt-multi-thread"] }}

[[bench]]
name = "a"
harness = false

[workspace]
"#,
            vernier.display()
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("benches/a.rs"),
        r#"use vernier::black_box;

/// The work: a chain of multiply-adds, `WORK` steps (200 unless set).
fn work(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        x = x.wrapping_mul(31).wrapping_add(black_box(i));
    }
    x
}

async fn step(n: u64) -> u64 {
    work(n)
}

fn main() {
    let n: u64 = std::env::var("WORK").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let ct = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let mt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let mut s = vernier::Suite::from_args();
    s.bench("sync", move || work(n));
    s.bench_async("tokio", ct, move || step(n));
    s.bench_async("smol", vernier::SmolExecutor, move || step(n));
    s.bench_async("tokio-mt", mt, move || step(n));
    s.bench_async("empty", vernier::SmolExecutor, || async {});
    s.finish();
}
"#,
    )
    .unwrap();
    dir
}

fn cargo_bench(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO"))
        .arg("bench")
        .arg("--offline")
        .args(["--bench", "a", "--"])
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("NO_COLOR", "1")
        .env("VERNIER_SPEED_FILE", dir.join("core-speed.json"))
        .env_remove("VERNIER_FDS")
        .output()
        .unwrap();
    assert!(o.status.success(), "cargo bench {args:?}: {}", text(&o));
    o
}

/// The bench executable, built by `cargo bench` (`target/release/deps/a-HASH`).
fn built_exe(dir: &Path) -> PathBuf {
    cargo_bench(dir, &["--list"]);
    std::fs::read_dir(dir.join("target/release/deps"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("a-") && !n.contains('.'))
        })
        .expect("the bench executable")
}

#[test]
fn an_async_body_measures_the_sync_work_plus_the_executor_s_empty_future() {
    let dir = crate_dir();
    let json = dir.join("async.json");
    let o = cargo_bench(&dir, &["--json", json.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    let f = ResultFile::load(&json).unwrap();
    let get = |n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap();
    let sync = get("sync");
    assert!(sync.executor.is_none());
    for (name, executor) in [("tokio", "tokio current-thread"), ("smol", "smol")] {
        let b = get(name);
        let e = b
            .executor
            .as_ref()
            .expect("an async result names its executor");
        assert_eq!(e.name, executor);
        assert!(e.on_calling_core);
        assert!(
            e.empty_future_ns.is_finite() && e.empty_future_ns > 0.0,
            "{e:?}"
        );
        let expected = sync.per_iter.median_ns + e.empty_future_ns;
        let off = (b.per_iter.median_ns / expected - 1.0).abs();
        assert!(
            off < 0.05,
            "{name}: {} ns against {} + {} ns\n{out}",
            b.per_iter.median_ns,
            sync.per_iter.median_ns,
            e.empty_future_ns
        );
        assert!(
            out.contains(&format!("async on {executor} ({name}")),
            "the executor is said under the table\n{out}"
        );
    }
    // The multi-thread runtime's work is judged in ns, and the report says why.
    let mt = get("tokio-mt");
    assert_eq!(mt.executor.as_ref().unwrap().name, "tokio multi-thread");
    assert!(!mt.executor.as_ref().unwrap().on_calling_core);
    assert_eq!(mt.headline_unit, vernier::analyze::Unit::Ns);
    assert!(out.contains("judged in ns: its worker threads"), "{out}");
    // An async body awaiting nothing is removed, by the empty future's bar.
    assert!(get("empty").removed(), "{:?}", get("empty").diagnostics);
    assert!(!get("smol").removed() && !get("tokio").removed());
}

#[test]
fn under_vernier_run_the_worker_s_executor_is_measured_and_kept() {
    let dir = crate_dir();
    let filter = "^(sync|smol|tokio-mt|empty)$";
    let (out, f) = cli::run_ok(
        &["--quick", "--filter", filter],
        &dir.join("run.json"),
        &built_exe(&dir),
    );
    let get = |n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap();
    assert!(get("sync").executor.is_none());
    let smol = get("smol")
        .executor
        .clone()
        .expect("the runner kept smol's executor");
    assert_eq!(smol.name, "smol");
    assert!(smol.on_calling_core);
    assert!(
        smol.empty_future_ns.is_finite() && smol.empty_future_ns > 0.0,
        "{smol:?}"
    );
    // One measurement per executor: the two benchmarks on smol share it.
    assert_eq!(get("empty").executor.as_ref(), Some(&smol));
    assert!(out.contains("async on smol (smol, empty)"), "{out}");
    let mt = get("tokio-mt");
    assert_eq!(mt.executor.as_ref().unwrap().name, "tokio multi-thread");
    assert_eq!(mt.headline_unit, vernier::analyze::Unit::Ns);
    // The empty async body is removed by the empty future's bar; the work is not.
    assert!(
        get("empty").removed(),
        "{:?}\n{out}",
        get("empty").diagnostics
    );
    assert!(!get("smol").removed(), "{out}");
}

#[test]
fn compare_of_an_async_body_doing_ten_percent_more_is_never_faster() {
    let dir = crate_dir();
    let exe = built_exe(&dir);
    let json = dir.join("compare.json");
    let o = vernier()
        .arg("compare")
        .arg(&exe)
        .arg(&exe)
        .args(["--old-env=WORK=200", "--new-env=WORK=220"])
        .args(["--filter", "^smol$", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let c = v["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "smol")
        .unwrap_or_else(|| panic!("{}", text(&o)));
    assert_ne!(c["verdict"], "faster", "{}", cli::text(&o));
}

/// A Criterion suite with async benches, written against Criterion's API (tokio's runtime and
/// `FuturesExecutor`, every `AsyncBencher` form), whose `criterion` dependency is renamed to
/// `vernier-criterion` with Criterion's feature names.
fn criterion_crate() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("async-criterion");
    std::fs::create_dir_all(dir.join("benches")).unwrap();
    let vc = root
        .join("crates/vernier-criterion")
        .canonicalize()
        .unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            r#"[package]
name = "asynccrit"
version = "0.1.0"
edition = "2021"

[dev-dependencies]
criterion = {{ package = "vernier-criterion", path = "{}", features = ["async_tokio", "async_futures"] }}
tokio = {{ version = "1", default-features = false, features = ["rt"] }}

[[bench]]
name = "crit"
harness = false

[workspace]
"#,
            vc.display()
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("benches/crit.rs"),
        r#"use criterion::async_executor::FuturesExecutor;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::time::{Duration, Instant};

async fn sum(v: Vec<u64>) -> u64 {
    v.iter().sum()
}

fn asynchronous(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    c.bench_function("tokio sum", |b| {
        b.to_async(&rt).iter(|| sum(black_box(vec![1u64; 64])))
    });
    let mut g = c.benchmark_group("async");
    g.bench_function("futures sum", |b| {
        b.to_async(FuturesExecutor).iter(|| sum(black_box(vec![2u64; 64])))
    });
    g.bench_function("batched", |b| {
        b.to_async(&rt)
            .iter_batched(|| vec![3u64; 256], sum, BatchSize::SmallInput)
    });
    g.bench_function("batched ref", |b| {
        b.to_async(FuturesExecutor).iter_batched_ref(
            || vec![4u64; 256],
            |v| {
                v.sort_unstable();
                let n = v.len();
                async move { n }
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_with_input(BenchmarkId::new("custom", 64), &64u64, |b, &n| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(sum(vec![5u64; n as usize]).await);
            }
            let d: Duration = t.elapsed();
            d
        })
    });
    g.finish();
}

criterion_group!(benches, asynchronous);
criterion_main!(benches);
"#,
    )
    .unwrap();
    dir
}

#[test]
fn a_criterion_suite_with_async_benches_builds_by_renaming_its_dependency_and_runs() {
    let dir = criterion_crate();
    let o = Command::new(env!("CARGO"))
        .args(["bench", "--offline", "--bench", "crit", "--no-run"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let exe = std::fs::read_dir(dir.join("target/release/deps"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("crit-") && !n.contains('.'))
        })
        .expect("the bench executable");
    let names = [
        "tokio sum",
        "async/futures sum",
        "async/batched",
        "async/batched ref",
        "async/custom/64",
    ];
    let json = dir.join("crit.json");
    let o = vernier()
        .args(["run", "--time", "0.1", "--processes", "1", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let f = ResultFile::load(&json).unwrap();
    let measured: Vec<(&str, bool)> = f
        .benchmarks
        .iter()
        .map(|b| {
            (
                b.name.as_str(),
                b.status == vernier::result::Status::Ok && b.per_iter.median_ns > 0.0,
            )
        })
        .collect();
    let want: Vec<(&str, bool)> = names.iter().map(|&n| (n, true)).collect();
    assert_eq!(measured, want, "{}", text(&o));
}
