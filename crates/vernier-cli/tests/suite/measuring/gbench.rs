//! Google Benchmark programs, unchanged, on vernier (`include/gbench`, docs/gbench.md).
//!
//! Google Benchmark's own test programs, which the test fetches from Debian's archive, are in
//! the registry tier (`registry::gbench`, with the helpers here). Here: a sort and a scan of our own read O(N log N) and O(N), two builds of one
//! program compare as native workers do, the program run by hand writes Google Benchmark's
//! JSON, and CMake's `benchmark::benchmark` builds a program written for libbenchmark.
//! Structure, names and ratios measured in the same run only.

use crate::common::{cli, cpp};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use vernier::units::Throughput;

pub(crate) fn tmp() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gbench");
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub(crate) fn text(o: &Output) -> String {
    cli::text(o)
}

/// `g++ -O2 -DNDEBUG -std=c++17 SOURCES …`: a Google Benchmark program as a release build
/// makes it (their own checks of Google Benchmark's scheduling are `assert`s, which a
/// release build leaves out), against the layer (`gbench`) or against libbenchmark.
pub(crate) fn build(out: &str, source: &Path, gbench: bool) -> PathBuf {
    let exe = tmp().join(out);
    let mut cmd = Command::new(cpp::cxx());
    // The reference build only lists its names: unoptimised, it compiles faster.
    cmd.args([if gbench { "-O2" } else { "-O0" }, "-DNDEBUG", "-std=c++17"]);
    if gbench {
        let root = cpp::repo_root();
        cmd.arg(format!("-I{}", root.join("include/gbench").display()))
            .arg(format!("-I{}", root.join("include").display()));
    }
    cmd.arg(source).arg("-o").arg(&exe);
    if !gbench {
        cmd.args(["-lbenchmark", "-lpthread"]);
    } else {
        cmd.arg("-pthread");
    }
    let o = cmd.output().unwrap();
    if !gbench && !o.status.success() {
        assert!(
            Path::new("/usr/include/benchmark/benchmark.h").exists(),
            "libbenchmark is the reference for the names: apt-get install libbenchmark-dev \
             (`.ci/run` installs it)\n{}",
            text(&o)
        );
    }
    assert!(o.status.success(), "{cmd:?}:\n{}", text(&o));
    exe
}

/// The names a program lists (`--benchmark_list_tests`, and `extra` arguments).
pub(crate) fn listed(exe: &Path, extra: &[&str]) -> Vec<String> {
    let o = Command::new(exe)
        .arg("--benchmark_list_tests")
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A subset of `benchmark_test.cc` that keeps the run short, given to both builds alike, with
/// the forms the other programs do not have: BENCHMARK_CAPTURE, BENCHMARK_TEMPLATE and
/// TEMPLATE2, Range, Ranges, ThreadRange, UseRealTime, UseManualTime, SetBytesProcessed,
/// SetItemsProcessed, PauseTiming.
pub(crate) const BENCHMARK_TEST_FILTER: &str = "--benchmark_filter=BM_CalculatePiRange/8$|\
BM_SetInsert/1024/128|BM_Sequential<std::vector<int>, int>|BM_ParallelMemset|\
BM_ManualTiming/1/|BM_with_args/int_test";

/// A sort of random integers and a sum over them, in Google Benchmark's form, over
/// Range(1<<8, 1<<16) with Complexity(). The sort's input is new in every iteration (a
/// xorshift generator's next N values, an O(N) cost beside the sort's), the generator going
/// on from one call of the function to the next: vernier calls it once per sample, so inputs
/// made from a fixed seed in the function come back in every sample, and sorting the same
/// inputs again and again lets the branch predictor learn their comparisons. On the 2-vCPU
/// AMD EPYC guest this was written on, that made sorts of up to a few thousand elements 3.5
/// times faster per element than larger ones: a cliff no complexity class fits.
const COMPLEXITY: &str = r#"
#include <benchmark/benchmark.h>
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

static std::vector<std::uint32_t> shuffled(std::int64_t n, unsigned seed) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0u);
    std::shuffle(v.begin(), v.end(), std::mt19937(seed));
    return v;
}

static void BM_sort(benchmark::State& state) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(state.range(0)));
    static std::uint64_t s = 0x9e3779b97f4a7c15ull;  // on from one call to the next
    for (auto _ : state) {
        for (auto& x : v) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            x = static_cast<std::uint32_t>(s >> 32);
        }
        std::sort(v.begin(), v.end());
        benchmark::DoNotOptimize(v.data());
        benchmark::ClobberMemory();
    }
    state.SetComplexityN(state.range(0));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_sort)->RangeMultiplier(4)->Range(1 << 8, 1 << 16)->Complexity();

static void BM_scan(benchmark::State& state) {
    const std::vector<std::uint32_t> v = shuffled(state.range(0), 0);
    for (auto _ : state) {
        std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: one dependent step per element
        for (std::uint32_t x : v) h = (h ^ x) * 0x100000001b3ull;
        benchmark::DoNotOptimize(h);
    }
    state.SetComplexityN(state.range(0));
    state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}
BENCHMARK(BM_scan)->RangeMultiplier(4)->Range(1 << 8, 1 << 16)->Complexity(benchmark::oN);

BENCHMARK_MAIN();
"#;

fn complexity_program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let src = tmp().join("complexity.cc");
        std::fs::write(&src, COMPLEXITY).unwrap();
        build("gb-complexity", &src, true)
    })
}

#[test]
fn a_sort_reads_n_log_n_and_a_scan_reads_n() {
    let exe = complexity_program();
    let json = tmp().join("complexity.json");
    let (stdout, file) = cli::run_ok(&["--quick", "--counters", "none"], &json, exe);
    let sizes = [256u64, 1024, 4096, 16384, 65536];
    let names: Vec<&str> = file.benchmarks.iter().map(|b| b.name.as_str()).collect();
    let want: Vec<String> = ["BM_sort", "BM_scan"]
        .iter()
        .flat_map(|f| sizes.iter().map(move |n| format!("{f}/{n}")))
        .collect();
    assert_eq!(names, want);
    for b in &file.benchmarks {
        let n: u64 = b.name.split('/').nth(1).unwrap().parse().unwrap();
        let want = if b.name.starts_with("BM_sort") {
            Throughput::ItemsPerIter(n)
        } else {
            Throughput::BytesPerIter(4 * n)
        };
        assert_eq!(b.throughput, Some(want), "{}", b.name);
    }
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        cli::item(&raw["complexity"], "family", "BM_sort")["class"],
        "O(N log N)",
        "{stdout}"
    );
    assert!(
        stdout.contains("complexity of BM_sort: O(N log N),"),
        "{stdout}"
    );
    // The scan asked for O(N) (`Complexity(benchmark::oN)`): it is fitted in that class, and
    // the best usual class over the same medians, fitted beside it, reads O(N) too.
    let scan = cli::item(&raw["complexity"], "family", "BM_scan");
    assert_eq!(
        (&scan["class"], &scan["declared"], &scan["best"]["class"]),
        (&"O(N)".into(), &true.into(), &"O(N)".into()),
        "{scan}\n{stdout}"
    );
    assert!(
        stdout.contains("complexity of BM_scan: O(N) as declared,")
            && !stdout.contains("the best usual class"),
        "{stdout}"
    );
}

/// Google Benchmark's other forms of `Complexity`: a lambda of N, a class imposed, and a size
/// that is not the name's last argument (`SetComplexityN` of two arguments' product).
const DECLARED: &str = r#"
#include <benchmark/benchmark.h>
#include <cstdint>
#include <numeric>
#include <vector>

static void BM_pairs(benchmark::State& state) {
    const std::vector<std::uint32_t> v(static_cast<std::size_t>(state.range(0)), 3u);
    for (auto _ : state) {
        std::uint64_t s = 0;
        for (std::size_t i = 0; i < v.size(); ++i)
            for (std::size_t j = i + 1; j < v.size(); ++j) s += v[i] ^ v[j];
        benchmark::DoNotOptimize(s);
    }
    state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_pairs)->RangeMultiplier(2)->Range(32, 256)->Complexity(
    [](benchmark::IterationCount n) -> double { return double(n) * double(n - 1) / 2; });

static void BM_grid(benchmark::State& state) {
    const std::vector<std::uint32_t> v(static_cast<std::size_t>(state.range(0) * state.range(1)), 1u);
    for (auto _ : state) benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0u));
    state.SetComplexityN(state.range(0) * state.range(1));
}
BENCHMARK(BM_grid)->Args({16, 4})->Args({32, 8})->Args({64, 16})->Complexity(benchmark::oNLogN);

BENCHMARK_MAIN();
"#;

#[test]
fn a_lambda_a_class_and_set_complexity_n_are_fitted_as_declared() {
    let src = tmp().join("declared.cc");
    std::fs::write(&src, DECLARED).unwrap();
    let exe = build("gb-declared", &src, true);
    let json = tmp().join("declared.json");
    let (stdout, file) = cli::run_ok(
        &["--quick", "--processes", "1", "--counters", "none"],
        &json,
        &exe,
    );
    // Each benchmark carries its family, N and declaration: the lambda's value at N exactly.
    let declared: Vec<(String, String, u64, Option<f64>)> = file
        .benchmarks
        .iter()
        .map(|b| {
            let d = b.complexity.clone().expect("a declaration");
            (b.name.clone(), d.family.unwrap(), d.n.unwrap(), d.f)
        })
        .collect();
    let pairs = |n: u64| {
        (
            format!("BM_pairs/{n}"),
            "BM_pairs".to_string(),
            n,
            Some((n * (n - 1) / 2) as f64),
        )
    };
    let grid = |a: u64, b: u64| {
        (
            format!("BM_grid/{a}/{b}"),
            "BM_grid".to_string(),
            a * b,
            None,
        )
    };
    assert_eq!(
        declared,
        [
            pairs(32),
            pairs(64),
            pairs(128),
            pairs(256),
            grid(16, 4),
            grid(32, 8),
            grid(64, 16)
        ]
    );
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // Each family is fitted through its settled sizes, or, when fewer than three of them are
    // precise enough (a loaded machine), said to be one whose class cannot be told, with every
    // size it measured: never a class read from imprecise sizes.
    let fitted = |family: &str| {
        raw["complexity"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["family"] == family)
            .cloned()
    };
    let untold = |family: &str, sizes: &[u64]| {
        let u = raw["complexity_undetermined"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["family"] == family))
            .unwrap_or_else(|| panic!("{family}: neither fitted nor untold: {raw}"));
        let all: Vec<u64> = u["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_u64())
            .collect();
        assert_eq!(all, sizes, "{u}");
        assert!(u["precise"].as_array().unwrap().len() < 3, "{u}");
        assert!(
            stdout.contains(&format!("{family}: the class cannot be told")),
            "{stdout}"
        );
    };
    let mut exported = Vec::new();
    match fitted("BM_pairs") {
        Some(pairs) => {
            assert_eq!(pairs["class"], "f(N)");
            // The lambda's value at each size fitted (a size whose median is not settled is
            // left out).
            assert_eq!(cli::fit_sizes(&pairs), [32, 64, 128, 256]);
            let f: Vec<serde_json::Value> = pairs["sizes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .map(|n| serde_json::json!((n * (n - 1) / 2) as f64))
                .collect();
            assert_eq!(pairs["f"], serde_json::Value::Array(f));
            assert!(
                stdout.contains("complexity of BM_pairs: f(N) as declared, "),
                "{stdout}"
            );
            exported.push(("BM_pairs_BigO", "f(N)"));
        }
        None => untold("BM_pairs", &[32, 64, 128, 256]),
    }
    match fitted("BM_grid") {
        Some(grid) => {
            assert_eq!(grid["class"], "O(N log N)");
            assert_eq!(cli::fit_sizes(&grid), [64, 256, 1024]);
            assert!(
                stdout.contains("complexity of BM_grid: O(N log N) as declared, "),
                "{stdout}"
            );
            exported.push(("BM_grid_BigO", "NlgN"));
        }
        None => untold("BM_grid", &[64, 256, 1024]),
    }
    // Exported as Google Benchmark writes them: `f(N)` and `NlgN`, for the families fitted.
    let gb = tmp().join("declared.gb.json");
    cli::succeeds([
        "export".as_ref(),
        "--format".as_ref(),
        "gbench".as_ref(),
        json.as_os_str(),
        "-o".as_ref(),
        gb.as_os_str(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&gb).unwrap()).unwrap();
    let big_o: Vec<(&str, &str)> = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| Some((b["name"].as_str()?, b["big_o"].as_str()?)))
        .collect();
    assert_eq!(big_o, exported);
}

/// The program run by hand with Google Benchmark's flags and the runner at hand (`VERNIER_BIN`,
/// as a `vernier` on the PATH would be): it hands itself to `vernier run`, whose own report
/// goes to standard error. The result file it keeps meanwhile leaves nothing in `TMPDIR`.
fn by_hand(args: &[&str]) -> Output {
    let scratch = tempfile::tempdir().unwrap();
    let o = Command::new(complexity_program())
        .args(["--benchmark_min_time=0.05"])
        .args(args)
        .env_remove("VERNIER_FDS")
        .env("VERNIER_BIN", env!("CARGO_BIN_EXE_vernier"))
        .env("VERNIER_LEDGER", tmp().join("by-hand-ledger.json"))
        .env("NO_COLOR", "1")
        .env("TMPDIR", scratch.path())
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?} left in TMPDIR: {}", text(&o));
    o
}

#[test]
fn run_by_hand_it_hands_itself_to_the_runner_which_writes_google_benchmarks_formats() {
    let out = tmp().join("by-hand.json");
    let o = by_hand(&[
        "--benchmark_filter=BM_scan/(256|1024|4096)$",
        "--benchmark_format=json",
        &format!("--benchmark_out={}", out.display()),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // The runner measured: its report is on standard error.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("complexity of BM_scan: O(N)"), "{err}");
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", text(&o)));
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for v in [&printed, &written] {
        for key in [
            "date",
            "host_name",
            "executable",
            "num_cpus",
            "library_build_type",
        ] {
            assert!(!v["context"][key].is_null(), "context.{key}: {v}");
        }
        let rows = v["benchmarks"].as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "BM_scan/256",
                "BM_scan/1024",
                "BM_scan/4096",
                "BM_scan_BigO",
                "BM_scan_RMS"
            ]
        );
        for r in &rows[..3] {
            assert_eq!(r["run_type"], "iteration");
            assert_eq!(r["time_unit"], "ns");
            assert_eq!(r["threads"], 1);
            assert!(r["iterations"].as_u64().unwrap() > 0, "{r}");
            assert!(r["real_time"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["cpu_time"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["bytes_per_second"].as_f64().unwrap() > 0.0, "{r}");
        }
        assert_eq!(rows[3]["big_o"], "N", "{}", rows[3]);
        assert!(rows[4]["rms"].as_f64().is_some(), "{}", rows[4]);
    }
    // The same figures in both: one run, written twice.
    assert_eq!(printed["benchmarks"], written["benchmarks"]);

    // The console table on standard output, and the CSV file.
    let csv = tmp().join("by-hand.csv");
    let o = by_hand(&[
        "--benchmark_filter=BM_scan/256$",
        &format!("--benchmark_out={}", csv.display()),
        "--benchmark_out_format=csv",
    ]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        table.contains("Benchmark") && table.contains("Iterations"),
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("BM_scan/256 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains(" ns ") && row.contains("bytes_per_second="),
        "{table}"
    );
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,\
         error_occurred,error_message"
    );
    let cells: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(cells.len(), 10, "{csv}");
    assert_eq!((cells[0], cells[4]), ("\"BM_scan/256\"", "ns"), "{csv}");
    assert!(cells[2].parse::<f64>().unwrap() > 0.0, "{csv}");
    assert!(cells[5].parse::<f64>().unwrap() > 0.0, "{csv}");

    // libbenchmark's answer to a flag it does not know.
    let o = Command::new(complexity_program())
        .arg("--no_such_flag")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("error: unrecognized command-line flag: --no_such_flag"),
        "{}",
        text(&o)
    );
}

/// Without a runner, the header's quick estimate, said as such; Google Benchmark's JSON is
/// the runner's to write, and asking for it says so.
#[test]
fn run_by_hand_without_a_runner_it_gives_the_headers_estimate() {
    let without_runner = |args: &[&str]| {
        Command::new(complexity_program())
            .args(args)
            .env_remove("VERNIER_FDS")
            .env_remove("VERNIER_BIN")
            .env_remove("PATH")
            .output()
            .unwrap()
    };
    let o = without_runner(&["--benchmark_filter=BM_scan/(256|1024)$"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("T_iter ~").count(), 2, "{out}");
    assert!(out.contains("a quick estimate in this process"), "{out}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no vernier runner"),
        "{}",
        text(&o)
    );
    let o = without_runner(&["--benchmark_filter=BM_scan/256$", "--benchmark_format=json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--benchmark_format=json needs the vernier runner"),
        "{}",
        text(&o)
    );
}

/// One benchmark whose work depends on `-DROUNDS`, one that does not.
const TWO_BUILDS: &str = r#"
#include <benchmark/benchmark.h>
#include <cstdint>

static void BM_mix(benchmark::State& state) {
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (auto _ : state) {
        for (int i = 0; i < ROUNDS; ++i) {
            x ^= x >> 31;
            x *= 0xbf58476d1ce4e5b9ull;
            benchmark::DoNotOptimize(x);
        }
    }
}
BENCHMARK(BM_mix);

static void BM_same(benchmark::State& state) {
    std::uint64_t x = 1;
    for (auto _ : state) {
        for (int i = 0; i < 32; ++i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            benchmark::DoNotOptimize(x);
        }
    }
}
BENCHMARK(BM_same);

BENCHMARK_MAIN();
"#;

#[test]
fn compare_gives_verdicts_on_two_builds_as_on_native_workers() {
    let src = tmp().join("two-builds.cc");
    std::fs::write(&src, TWO_BUILDS).unwrap();
    let compile = |out: &str, rounds: u32| {
        let exe = tmp().join(out);
        let root = cpp::repo_root();
        let o = Command::new(cpp::cxx())
            .args([
                "-O2",
                "-std=c++17",
                "-pthread",
                &format!("-DROUNDS={rounds}"),
            ])
            .arg(format!("-I{}", root.join("include/gbench").display()))
            .arg(format!("-I{}", root.join("include").display()))
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        exe
    };
    let (old, new) = (compile("gb-mix-16", 16), compile("gb-mix-64", 64));
    let json = tmp().join("compare.json");
    let o = cli::vernier()
        .arg("compare")
        .arg(&old)
        .arg(&new)
        .args(["--quick", "--fail-on-regression", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let find = |name: &str| {
        v["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {}", text(&o)))
            .clone()
    };
    let (mix, same) = (find("BM_mix"), find("BM_same"));
    // Four times the rounds: slower, its code changed; the other's code is the same code.
    assert_eq!(mix["verdict"], "slower", "{}", text(&o));
    assert_eq!(mix["code"], "changed", "{}", mix["code_detail"]);
    assert_eq!(same["code"], "same", "{}", same["code_detail"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn cmake_benchmark_targets_build_a_program_written_for_libbenchmark() {
    let dir = tmp().join("cmake");
    let _ = std::fs::remove_dir_all(&dir);
    let run = |args: &[&std::ffi::OsStr]| {
        let o = Command::new("cmake")
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cmake is needed (apt-get install cmake): {e}"));
        assert!(o.status.success(), "cmake {args:?}: {}", text(&o));
    };
    let consumer = cpp::repo_root().join("cmake/gbench-consumer");
    let build = dir.join("build");
    run(&[
        "-S".as_ref(),
        consumer.as_os_str(),
        "-B".as_ref(),
        build.as_os_str(),
        format!("-DVERNIER_SOURCE_DIR={}", cpp::repo_root().display()).as_ref(),
        "-DCMAKE_BUILD_TYPE=Release".as_ref(),
    ]);
    run(&["--build".as_ref(), build.as_os_str()]);
    let names = listed(&build.join("gbench_consumer"), &[]);
    assert_eq!(names, ["BM_accumulate/64", "BM_accumulate/4096"]);
}

/// A Google Benchmark loop whose body is a folded constant (`DoNotOptimize(1)`) is flagged
/// `optimized-away` as a native one is: its time is the empty loop's, callgrind counts one
/// instruction more per iteration, and the disassembly of the function, between the state's
/// `StartKeepRunning` and `FinishKeepRunning` calls, shows that it is the register move handing
/// the constant to the barrier. Run as a user runs it, with a ledger of its own.
#[test]
fn a_folded_constant_in_a_google_benchmark_loop_is_flagged() {
    let src = tmp().join("folded.cc");
    std::fs::write(
        &src,
        "#include <benchmark/benchmark.h>\n\
         static void BM_constant(benchmark::State& state) {\n\
             for (auto _ : state) benchmark::DoNotOptimize(1);\n\
         }\n\
         BENCHMARK(BM_constant);\n\
         BENCHMARK_MAIN();\n",
    )
    .unwrap();
    let exe = build("gb-folded", &src, true);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = cli::vernier_with_ledger(dir.path())
        .args(["run", "--time", "0.3", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let f = vernier::result::ResultFile::load(&json).unwrap();
    let b = cli::only(&f);
    assert!(
        b.diagnostics
            .iter()
            .any(|d| d.code == vernier::diagnostic::Code::OptimizedAway),
        "{}",
        text(&o)
    );
    let check = b.instructions_check.expect("counted under callgrind");
    assert_eq!(check.moves_per_iter, Some(1.0), "{check:?}");
}

/// The layer's notes (an option it does not follow under the runner) reach the user through
/// `run` and `compare`: once each, however many processes said them.
#[test]
fn the_layers_notes_are_shown_once_by_run_and_compare() {
    let src = tmp().join("noted.cc");
    std::fs::write(
        &src,
        "#include <benchmark/benchmark.h>\n\
         static void BM_sum(benchmark::State& state) {\n\
             unsigned s = 0;\n\
             for (auto _ : state) benchmark::DoNotOptimize(s += 3);\n\
         }\n\
         BENCHMARK(BM_sum)->Iterations(100);\n\
         BENCHMARK_MAIN();\n",
    )
    .unwrap();
    let exe = build("gb-noted", &src, true);
    let note = "BM_sum: Iterations(100) is not followed";
    for args in [vec!["run", "--quick", "--"], vec!["compare", "--quick"]] {
        let mut cmd = cli::vernier();
        cmd.args(&args).arg(&exe);
        if args[0] == "compare" {
            cmd.arg(&exe);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.matches(note).count(), 1, "{args:?}: {stderr}");
    }
}
