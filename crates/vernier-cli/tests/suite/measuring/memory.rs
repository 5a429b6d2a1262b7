//! Allocation counts (docs/memory.md), through the real runner on programs written as users
//! write them: the C++ header with the interposer preloaded into the counting process, the
//! Rust harness as a worker and on its own with `vernier::CountingAlloc`. Only counts are
//! asserted: they are exact in any machine state.

use crate::common::{cli, cpp, rust_examples};

use std::path::{Path, PathBuf};
use vernier::result::{BenchmarkResult, ResultFile, Status};

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// `vernier run --quick` with the user's defaults (a fresh ledger of its own) on `exe`.
fn run(exe: &Path, json: &str) -> (std::process::Output, ResultFile) {
    let dir = tmp(&format!("{json}-home"));
    std::fs::create_dir_all(&dir).unwrap();
    let json = tmp(json);
    let o = cli::vernier_with_ledger(&dir)
        .args(["run", "--quick", "--json"])
        .arg(&json)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    (o, f)
}

fn get<'a>(f: &'a ResultFile, name: &str) -> &'a BenchmarkResult {
    f.benchmarks.iter().find(|b| b.name == name).unwrap()
}

/// (allocations, bytes, frees, net bytes) per iteration.
fn counts(f: &ResultFile, name: &str) -> (f64, f64, f64, f64) {
    let m = get(f, name)
        .memory
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: not counted: {:?}", get(f, name).diagnostics));
    (
        m.allocs_per_iter,
        m.bytes_per_iter,
        m.frees_per_iter,
        m.net_bytes_per_iter,
    )
}

fn cpp_program(out: &str, flags: &[&str]) -> PathBuf {
    let src = cpp::repo_root().join("crates/vernier-cli/tests/fixtures/memory/allocs.cpp");
    cpp::compile(out, &[src], &[&["-O2"], flags].concat())
}

#[test]
fn a_cpp_program_s_allocations_are_counted_exactly() {
    let (o, f) = run(&cpp_program("allocs", &[]), "mem-cpp.json");
    assert_eq!(o.status.code(), Some(0), "{}", cli::text(&o));
    assert_eq!(counts(&f, "vector1000"), (1.0, 4000.0, 1.0, 0.0));
    assert_eq!(counts(&f, "unique_array4096"), (1.0, 4096.0, 1.0, 0.0));
    assert_eq!(counts(&f, "add_chain"), (0.0, 0.0, 0.0, 0.0));
    assert_eq!(counts(&f, "leaked_int"), (1.0, 4.0, 0.0, 4.0));
    assert!(get(&f, "add_chain").memory.as_ref().unwrap().alloc_free);
    for b in &f.benchmarks {
        assert!(b
            .processes
            .iter()
            .all(|p| p.peak_rss_bytes.unwrap_or(0) > 0));
    }
    // Google Benchmark's memory fields in the export.
    let o = cli::vernier()
        .args(["export", "--format", "gbench"])
        .arg(tmp("mem-cpp.json"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let vector = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "vector1000")
        .unwrap()
        .clone();
    assert_eq!(vector["allocs_per_iter"], 1.0, "{vector}");
    assert_eq!(vector["total_allocated_bytes"], 4000.0);
    assert_eq!(vector["net_heap_growth"], 0.0);
    // The HTML report's memory table.
    let page = cli::report_page(&tmp("mem-cpp.json"), &tmp("mem-cpp.html"));
    assert!(page.contains("memory (per iteration)"));
    assert!(page.contains("<td class=\"name\">bytes requested</td><td>3.9 KiB</td>"));
    assert!(page.contains("Peak resident memory per process"));
}

#[test]
fn a_benchmark_declared_allocation_free_that_allocates_fails_the_run_named() {
    let (o, f) = run(&cpp_program("allocs-liar", &["-DLIAR"]), "mem-liar.json");
    assert_eq!(o.status.code(), Some(1), "{}", cli::text(&o));
    let liar = get(&f, "liar");
    assert_eq!(liar.status, Status::Failed);
    let e = liar.error.as_deref().unwrap();
    assert!(
        e.contains(
            "liar is declared allocation-free but allocates: 1 allocation(s) and 40 byte(s)"
        ),
        "{e}"
    );
    assert_eq!(get(&f, "add_chain").status, Status::Ok);
}

#[test]
fn a_static_binary_says_memory_unavailable_and_why() {
    let (o, f) = run(
        &cpp_program("allocs-static", &["-static"]),
        "mem-static.json",
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "add_chain cannot be checked: {}",
        cli::text(&o)
    );
    let v = get(&f, "vector1000");
    assert!(v.memory.is_none());
    let d = v
        .diagnostics
        .iter()
        .find(|d| d.code.as_str() == "memory-unavailable")
        .unwrap_or_else(|| panic!("{:?}", v.diagnostics));
    assert!(d.message.contains("statically linked"), "{}", d.message);
    assert!(d.message.contains("drop -static"), "{}", d.message);
}

#[test]
fn the_rust_harness_counts_as_a_worker_and_on_its_own() {
    let exe = rust_examples::examples().join("alloc");
    let check = |f: &ResultFile| {
        assert_eq!(counts(f, "vec1000"), (1.0, 4000.0, 1.0, 0.0));
        assert_eq!(counts(f, "box4096"), (1.0, 4096.0, 1.0, 0.0));
        assert_eq!(counts(f, "add"), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(counts(f, "leak"), (1.0, 4.0, 0.0, 4.0));
    };
    let (o, f) = run(&exe, "mem-rust-worker.json");
    assert_eq!(o.status.code(), Some(0), "{}", cli::text(&o));
    check(&f);

    // On its own: the counting global allocator counts in the process.
    let json = tmp("mem-rust-standalone.json");
    let o = std::process::Command::new(&exe)
        .args(["--quick", "--json"])
        .arg(&json)
        .env("VERNIER_LEDGER", tmp("mem-rust-standalone-ledger.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    check(&ResultFile::load(&json).unwrap());

    // Declared allocation-free and allocating, as a worker: the run fails naming it.
    let json = tmp("mem-rust-liar.json");
    let o = cli::vernier()
        .args(["run", "--quick", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .env("ALLOC_LIAR", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", cli::text(&o));
    let f = ResultFile::load(&json).unwrap();
    assert!(get(&f, "liar")
        .error
        .as_deref()
        .is_some_and(|e| e.contains("liar is declared allocation-free but allocates")));
}

/// The two builds of `one_more.cpp`: NEW allocates 4096 bytes more per iteration.
fn one_more_builds() -> (PathBuf, PathBuf) {
    let src = cpp::repo_root().join("crates/vernier-cli/tests/fixtures/memory/one_more.cpp");
    let old = cpp::compile("one-more-old", std::slice::from_ref(&src), &["-O2"]);
    let new = cpp::compile("one-more-new", &[src], &["-O2", "-DONE_MORE"]);
    (old, new)
}

#[test]
fn compare_names_one_more_allocation_per_iteration_exactly() {
    let (old, new) = one_more_builds();
    let dir = tmp("mem-compare-home");
    std::fs::create_dir_all(&dir).unwrap();
    let json = tmp("mem-compare.json");
    let o = cli::vernier_with_ledger(&dir)
        .args(["compare", "--quick", "--json"])
        .arg(&json)
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("work: +1 allocation and +4.0 KiB per iteration"),
        "{}",
        cli::text(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let m = &v["comparisons"][0]["memory"];
    assert_eq!(m["old_allocs_per_iter"], 1.0, "{v}");
    assert_eq!(m["new_allocs_per_iter"], 2.0);
    assert_eq!(m["old_bytes_per_iter"], 4000.0);
    assert_eq!(m["new_bytes_per_iter"], 8096.0);
}

#[test]
fn history_check_exits_2_on_more_allocations_per_iteration() {
    let (old, new) = one_more_builds();
    let db = tmp("mem-history.sqlite");
    let _ = std::fs::remove_file(&db);
    let dir = tmp("mem-history-home");
    std::fs::create_dir_all(&dir).unwrap();
    for (commit, exe) in [("a1", &old), ("b2", &new)] {
        let o = cli::vernier_with_ledger(&dir)
            .args(["run", "--quick", "--processes", "1", "--save", "--db"])
            .arg(&db)
            .args(["--commit", commit, "--branch", "main", "--"])
            .arg(exe)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", cli::text(&o));
    }
    let o = cli::vernier()
        .args(["history", "check", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", cli::text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("regression: work (machine")
            && out.contains("2 allocations per iteration, 1 before, at commit b2"),
        "{out}"
    );
    // `history --json` carries the counts of each point.
    let o = cli::vernier()
        .args(["history", "--json", "--filter", "^work$", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    let h: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let allocs: Vec<f64> = h["series"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["allocs_per_iter"].as_f64().unwrap())
        .collect();
    assert_eq!(allocs, [1.0, 2.0], "{h}");
}

#[test]
fn analyze_keeps_the_counts_and_each_process_s_peak_memory() {
    let (_, f) = run(&cpp_program("allocs", &[]), "mem-analyze.json");
    let out = tmp("mem-analyzed.json");
    let o = cli::vernier()
        .arg("analyze")
        .arg(tmp("mem-analyze.json"))
        .arg("--json")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    let again = ResultFile::load(&out).unwrap();
    for b in &f.benchmarks {
        let a = get(&again, &b.name);
        assert_eq!(a.memory, b.memory, "{}", b.name);
        let peaks = |r: &BenchmarkResult| -> Vec<Option<u64>> {
            r.processes.iter().map(|p| p.peak_rss_bytes).collect()
        };
        assert_eq!(peaks(a), peaks(b));
    }
}
