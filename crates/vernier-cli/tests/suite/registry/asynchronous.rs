//! Async bodies in a bench crate written as a user would, outside this repository (a path
//! dependency on `vernier` with its `tokio`, `smol` and `futures` features): the same work
//! measured synchronously and awaited on tokio's current-thread runtime, on smol and on
//! futures' executor agrees once the
//! executor's measured empty-future cost is added; a multi-thread runtime is judged in ns; an
//! empty async body is `optimized-away`; and `vernier compare` of an async body doing 10 %
//! more work is never `faster`.
//!
//! tokio, smol and futures come from crates.io: each crate's dependencies are fetched first
//! (`cargo fetch`; a registry out of reach fails naming it), then it is built offline with this
//! workspace's lock file. The first build takes a minute or two.

use super::{dependencies_fetched, Unreachable};
use crate::common::bench_crate::{tmp, workspace_crate, BenchCrate};
use crate::common::cli::{self, text, vernier};
use crate::measuring::criterion::run_worker;

use std::process::Output;
use vernier::result::ResultFile;

/// The bench crate: a path dependency on `vernier` with its `tokio`, `smol` and `futures`
/// features, and tokio from crates.io; its dependencies fetched. The Criterion suite below
/// asks for the same features and tokio's, so that both crates link one build of `vernier`.
fn async_crate() -> Result<BenchCrate, Unreachable> {
    let manifest = format!(
        r#"[dev-dependencies]
vernier = {{ path = "{}", features = ["tokio", "smol", "futures"] }}
tokio = {{ version = "1", default-features = false, features = ["rt", "rt-multi-thread"] }}

[[bench]]
name = "a"
harness = false
"#,
        workspace_crate("vernier").display()
    );
    let a = r#"use vernier::black_box;

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
    s.bench_async("futures", vernier::FuturesExecutor, move || step(n));
    s.bench_async("tokio-mt", mt, move || step(n));
    s.bench_async("empty", vernier::SmolExecutor, || async {});
    s.finish();
}
"#;
    let c = BenchCrate::package(
        tmp("async-crate"),
        "asyncfresh",
        &manifest,
        &[("benches/a.rs", a)],
    );
    dependencies_fetched(&c, "an async bench crate (vernier with tokio and smol)")?;
    Ok(c)
}

/// `cargo bench --offline --bench a -- ARGS` in the crate, which must succeed.
fn cargo_bench(c: &BenchCrate, args: &[&str]) -> Output {
    c.cargo(&[&["bench", "--offline", "--bench", "a", "--"], args].concat())
}

#[test]
fn an_async_body_measures_the_sync_work_plus_the_executor_s_empty_future() -> Result<(), Unreachable>
{
    let c = async_crate()?;
    let json = c.dir().join("async.json");
    let o = cargo_bench(&c, &["--json", json.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    let f = ResultFile::load(&json).unwrap();
    let get = |n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap();
    let sync = get("sync");
    assert!(sync.executor.is_none());
    for (name, executor) in [
        ("tokio", "tokio current-thread"),
        ("smol", "smol"),
        ("futures", "futures"),
    ] {
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
        // In cycles when each figure has them (a clock that moved between the three
        // measurements moves their times, not their cycles), in ns otherwise.
        let cycles = |r: &vernier::result::BenchmarkResult| r.speed.as_ref()?.cycles_per_iter;
        let (body, parts, unit) = match (cycles(b), cycles(sync), e.empty_future_cycles) {
            (Some(body), Some(s), Some(f)) => (body, [s, f], "cycles"),
            _ => (
                b.per_iter.median_ns,
                [sync.per_iter.median_ns, e.empty_future_ns],
                "ns",
            ),
        };
        let off = (body / (parts[0] + parts[1]) - 1.0).abs();
        assert!(
            off < 0.05,
            "{name}: {body} {unit} against {} + {} {unit}\n{out}",
            parts[0],
            parts[1],
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
    // An async body awaiting nothing is removed by the empty future's bar, or, where its loop
    // sits in another state of the loop's exit branch than the empty future's (each is code of
    // its own: a quarter of a cycle or so apart on some layouts), within a few cycles of it,
    // and then the report says that the verdict rests on time alone: only an instruction count
    // can tell there (`vernier run` counts it, below), and a suite measured in its own process
    // has none.
    let empty = get("empty");
    let over = empty.cycles_over_bar(&f.harness);
    assert!(
        empty.removed()
            || (over.is_some_and(|c| c < vernier::analyze::NEAR_EMPTY_CYCLES)
                && out.contains("`empty` ran within a few cycles")
                && out.contains("rests on time alone")),
        "{over:?} cycles over the empty future: {:?}\n{out}",
        empty.diagnostics
    );
    assert!(!get("smol").removed() && !get("tokio").removed());
    Ok(())
}

#[test]
fn under_vernier_run_the_worker_s_executor_is_measured_and_kept() -> Result<(), Unreachable> {
    let c = async_crate()?;
    let filter = "^(sync|smol|tokio-mt|empty)$";
    let (out, f) = cli::run_ok(
        &["--quick", "--filter", filter],
        &c.dir().join("run.json"),
        &c.bench_exe(&["--offline"], "a"),
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
    // The empty async body, within a few cycles of the empty future, is counted under
    // callgrind against the empty future on its executor (not the synchronous empty loop: an
    // await executes the executor's own instructions), and the count, the same, removes it
    // whatever its time read; the work is not removed.
    let check = get("empty").instructions_check.unwrap_or_else(|| {
        panic!(
            "the empty async body was not counted (valgrind is installed by bash .ci/run:              apt-get install valgrind)\n{out}"
        )
    });
    assert_eq!(
        check.instructions_per_iter, check.empty_instructions_per_iter,
        "{check:?}"
    );
    assert!(
        get("empty").removed(),
        "{:?}\n{out}",
        get("empty").diagnostics
    );
    assert!(!get("smol").removed(), "{out}");
    Ok(())
}

#[test]
fn compare_of_an_async_body_doing_ten_percent_more_is_never_faster() -> Result<(), Unreachable> {
    let c = async_crate()?;
    let exe = c.bench_exe(&["--offline"], "a");
    let json = c.dir().join("compare.json");
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
    Ok(())
}

/// A Criterion suite with async benches, written against Criterion's API (tokio's runtimes,
/// `SmolExecutor` and `FuturesExecutor`, every `AsyncBencher` form), whose `criterion`
/// dependency is renamed to `vernier-criterion` with Criterion's feature names.
fn criterion_crate() -> Result<BenchCrate, Unreachable> {
    let manifest = format!(
        r#"[dev-dependencies]
criterion = {{ package = "vernier-criterion", path = "{}", features = ["async_tokio", "async_smol", "async_futures"] }}
tokio = {{ version = "1", default-features = false, features = ["rt", "rt-multi-thread"] }}

[[bench]]
name = "crit"
harness = false
"#,
        workspace_crate("vernier-criterion").display()
    );
    let crit = r#"use criterion::async_executor::{FuturesExecutor, SmolExecutor};
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
    let mt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    c.bench_function("tokio mt sum", |b| {
        b.to_async(&mt).iter(|| sum(black_box(vec![1u64; 64])))
    });
    let mut g = c.benchmark_group("async");
    g.bench_function("futures sum", |b| {
        b.to_async(FuturesExecutor).iter(|| sum(black_box(vec![2u64; 64])))
    });
    g.bench_function("smol sum", |b| {
        b.to_async(SmolExecutor).iter(|| sum(black_box(vec![2u64; 64])))
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
"#;
    let c = BenchCrate::package(
        tmp("async-criterion"),
        "asynccrit",
        &manifest,
        &[("benches/crit.rs", crit)],
    );
    dependencies_fetched(
        &c,
        "a Criterion suite with async benches (tokio, smol, futures)",
    )?;
    Ok(c)
}

#[test]
fn a_criterion_suite_with_async_benches_builds_by_renaming_its_dependency_and_runs(
) -> Result<(), Unreachable> {
    let c = criterion_crate()?;
    let exe = c.bench_exe(&["--offline"], "crit");
    let names = [
        "tokio sum",
        "tokio mt sum",
        "async/futures sum",
        "async/smol sum",
        "async/batched",
        "async/batched ref",
        "async/custom/64",
    ];
    let f = run_worker(&exe, &c.dir().join("crit.json"));
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
    assert_eq!(measured, want);
    Ok(())
}
