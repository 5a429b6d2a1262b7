//! Drives the real `vernier compare` binary on real workers (the crate's `chain` and
//! `fault_worker` examples, built here with cargo) and on result files. Ratios and structure
//! only, never absolute times.

use crate::common::{cpp, rust_examples};
use rust_examples::examples;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn vernier() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vernier"));
    c.env("NO_COLOR", "1");
    c
}

fn chain() -> PathBuf {
    examples().join("chain")
}

fn fault_worker() -> PathBuf {
    examples().join("fault_worker")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn load(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn compare_chains(old_n: u32, new_n: u32, extra: &[&str]) -> (Output, serde_json::Value) {
    let json = tmp(&format!("chain-{old_n}-{new_n}.json"));
    let c = chain();
    let out = vernier()
        .arg("compare")
        .arg(&c)
        .arg(&c)
        .arg(format!("--old-env=CHAIN_N={old_n}"))
        .arg(format!("--new-env=CHAIN_N={new_n}"))
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    let v = load(&json);
    (out, v)
}

#[test]
fn chain_100_against_100_is_no_change() {
    let (out, v) = compare_chains(100, 100, &[]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert_eq!(v["schema"], 1);
    assert_eq!(v["mode"], "paired");
    let c = &v["comparisons"][0];
    assert_eq!(c["name"], "chain");
    assert_eq!(c["verdict"], "no-change", "{so}");
    let r = c["ratio"].as_f64().unwrap();
    assert!((r - 1.0).abs() < 0.02, "{r}");
    for k in ["ci95", "p_value", "seconds", "pairs"] {
        assert!(!c[k].is_null(), "{k}");
    }
    assert!(v["geomean_ratio"].as_f64().is_some());
    assert!(
        so.contains("no-change") && so.contains("Process pairs"),
        "{so}"
    );
    // The same program on both sides: the noise floor is printed.
    assert!(
        so.contains("noise floor") && so.contains("smallest detectable change"),
        "{so}"
    );
    check_pairs(c);
}

/// The process pairs behind a live comparison: at least the minimum, each pinned, alternating
/// which side starts, the shares of the uncertainty adding up to one.
fn check_pairs(c: &serde_json::Value) {
    let pairs = c["process_pairs"].as_array().unwrap();
    assert!(pairs.len() >= 4, "{c}");
    assert_eq!(
        c["spread"]["process_pairs"].as_u64().unwrap() as usize,
        pairs.len()
    );
    let share = c["spread"]["within_share"].as_f64().unwrap()
        + c["spread"]["between_share"].as_f64().unwrap();
    assert!((share - 1.0).abs() < 1e-9, "{c}");
    assert!(c["smallest_detectable"].as_f64().unwrap() > 0.0);
    for w in pairs.windows(2) {
        assert_ne!(w[0]["old_first"], w[1]["old_first"], "{c}");
    }
    for p in pairs {
        assert!(
            p["cpu"].as_u64().is_some(),
            "pinned even without --cpu: {p}"
        );
        let s = &p["samples"];
        assert_eq!(
            s["old_ns"].as_array().unwrap().len(),
            s["new_ns"].as_array().unwrap().len()
        );
    }
}

#[test]
fn chain_100_against_200_is_twice_as_slow_and_gates() {
    let (out, v) = compare_chains(100, 200, &["--fail-on-regression"]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{so}\n{se}");
    assert!(se.contains("regression"), "{se}");
    let c = &v["comparisons"][0];
    assert_eq!(c["verdict"], "slower");
    let r = c["ratio"].as_f64().unwrap();
    assert!(r > 1.7 && r < 2.3, "{r}");
    let ci = c["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= r && r <= ci[1].as_f64().unwrap());
    // Both sides ran the same iterations per sample; the pairs are in the file.
    assert_eq!(c["iters_per_sample"][0], c["iters_per_sample"][1]);
    check_pairs(c);
    // The reverse is faster, and without the flag a verdict is not a failure.
    let (out, v) = compare_chains(200, 100, &["--quick"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(v["comparisons"][0]["verdict"], "faster");
}

#[test]
fn a_crash_fails_its_benchmark_and_the_others_go_on() {
    let w = fault_worker();
    let json = tmp("crash.json");
    let out = vernier()
        .arg("compare")
        .arg(&w)
        .arg(&w)
        .args(["--new-env", "WORKER_NAMES=crash,chain,extra"])
        .args(["--new-env", "CRASH_IN=crash", "--quick", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    let v = load(&json);
    assert_eq!(v["failed"][0]["name"], "crash");
    let e = v["failed"][0]["error"].as_str().unwrap();
    assert!(e.starts_with("NEW failed"), "{e}");
    assert!(e.contains("signal 6") || e.contains("Abort"), "{e}");
    assert!(e.contains("aborting on purpose"), "{e}");
    // The benchmark after the crash was compared with fresh workers.
    assert_eq!(v["comparisons"][0]["name"], "chain");
    let verdict = v["comparisons"][0]["verdict"].as_str().unwrap();
    assert!(
        verdict == "no-change" || verdict == "inconclusive",
        "{verdict}"
    );
    // Names only one side has are reported, not compared.
    assert_eq!(v["only_new"][0], "extra");
    assert!(se.contains("only in NEW"), "{se}");
    assert!(so.contains("FAILED"), "{so}");
}

#[test]
fn no_benchmark_in_common_is_an_error_naming_both_sides() {
    let w = fault_worker();
    let out = vernier()
        .arg("compare")
        .arg(&w)
        .arg(&w)
        .args([
            "--old-env",
            "WORKER_NAMES=a,b",
            "--new-env",
            "WORKER_NAMES=c",
        ])
        .output()
        .unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(se.contains("no benchmark in common"), "{se}");
    assert!(
        se.contains("OLD has: a, b") && se.contains("NEW has: c"),
        "{se}"
    );
}

#[test]
fn a_program_that_is_not_a_worker_is_named() {
    let script = tmp("not-a-worker.sh");
    std::fs::write(&script, "#!/bin/sh\necho 'just a program'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = vernier()
        .arg("compare")
        .arg(chain())
        .arg(&script)
        .output()
        .unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(se.contains("NEW"), "{se}");
    assert!(se.contains("is not a vernier worker"), "{se}");
    assert!(se.contains("just a program"), "{se}");
}

fn demo_json(name: &str) -> PathBuf {
    let json = tmp(name);
    let out = vernier()
        .args(["demo", "--time", "0.1", "--filter", "^(add|mul)$", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    json
}

#[test]
fn result_files_are_compared_unpaired_with_a_drift_warning() {
    let (a, b) = (demo_json("a.json"), demo_json("b.json"));
    // Rename one benchmark in NEW: it is reported as one-sided.
    let mut v = load(&b);
    v["benchmarks"][1]["name"] = "mul2".into();
    std::fs::write(&b, serde_json::to_vec(&v).unwrap()).unwrap();
    let json = tmp("unpaired.json");
    let out = vernier()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("Unpaired") && so.contains("drift"), "{so}");
    let v = load(&json);
    assert_eq!(v["mode"], "unpaired");
    assert_eq!(v["comparisons"].as_array().unwrap().len(), 1);
    assert_eq!(v["comparisons"][0]["name"], "add");
    assert_eq!(v["only_old"][0], "mul");
    assert_eq!(v["only_new"][0], "mul2");
    let r = v["comparisons"][0]["ratio"].as_f64().unwrap();
    assert!(r > 0.5 && r < 2.0, "{r}");

    // A mix of a result file and an executable.
    let out = vernier()
        .arg("compare")
        .arg(&a)
        .arg(chain())
        .output()
        .unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(se.contains("same kind"), "{se}");

    // A missing file, a truncated result file, a comparison file.
    let out = vernier()
        .arg("compare")
        .arg(tmp("nope.json"))
        .arg(&a)
        .output()
        .unwrap();
    assert!(text(&out).1.contains("OLD") && text(&out).1.contains("no such file"));
    let bad = tmp("truncated.json");
    let full = std::fs::read(&a).unwrap();
    std::fs::write(&bad, &full[..full.len() / 2]).unwrap();
    let out = vernier().arg("compare").arg(&a).arg(&bad).output().unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        se.contains("NEW") && se.contains("not a vernier result file"),
        "{se}"
    );
    let out = vernier()
        .arg("compare")
        .arg(&json)
        .arg(&a)
        .output()
        .unwrap();
    assert!(
        text(&out).1.contains("is a comparison file"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn demo_compares_its_variant_pairs_in_process() {
    let json = tmp("demo-pairs.json");
    let out = vernier()
        .args(["demo", "--quick", "--filter", "event", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let (so, se) = text(&out);
    assert!(out.status.success(), "{so}\n{se}");
    assert!(so.contains("event copy: cold / hot"), "{so}");
    let v = load(&json);
    // Same event, 256 Ki events, a fresh event per copy.
    assert_eq!(v["benchmarks"].as_array().unwrap().len(), 3);
    let c = &v["comparison"];
    assert_eq!(c["mode"], "paired");
    assert_eq!(c["comparisons"][0]["name"], "event copy: cold / hot");
    // Cold against hot, measured in the same pairs. Which is slower depends on the machine
    // (a prefetcher can hide the walk: 1.01-1.08x here, and under load either way), so the
    // verdict is checked against its own interval, not against an expected ordering.
    let cmp = &c["comparisons"][0];
    let (lo, hi) = (
        cmp["ci95"][0].as_f64().unwrap(),
        cmp["ci95"][1].as_f64().unwrap(),
    );
    assert!(lo <= cmp["ratio"].as_f64().unwrap() && cmp["ratio"].as_f64().unwrap() <= hi);
    match cmp["verdict"].as_str().unwrap() {
        "slower" => assert!(lo > 1.0, "{cmp}"),
        "faster" => assert!(hi < 1.0, "{cmp}"),
        "no-change" | "inconclusive" => {}
        v => panic!("verdict {v}"),
    }
    // The result file still loads as schema 1.
    vernier::result::ResultFile::load(&json).unwrap();
}

#[test]
fn fewer_process_pairs_than_the_minimum_are_refused() {
    let c = chain();
    let out = vernier()
        .arg("compare")
        .arg(&c)
        .arg(&c)
        .args(["--processes", "2"])
        .output()
        .unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        se.contains("--processes 2") && se.contains("at least 4"),
        "{se}"
    );
}

fn kernels(name: &str, flags: &[&str]) -> PathBuf {
    let mut f = vec!["-O2"];
    f.extend_from_slice(flags);
    cpp::compile(name, &[cpp::example_source("kernels")], &f)
}

fn compare_json(
    old: &Path,
    new: &Path,
    extra: &[&str],
    json: &Path,
) -> (Output, serde_json::Value) {
    let out = vernier()
        .arg("compare")
        .arg(old)
        .arg(new)
        .arg("--json")
        .arg(json)
        .args(extra)
        .output()
        .unwrap();
    let (so, se) = text(&out);
    assert!(out.status.code() == Some(0), "{so}\n{se}");
    let v = load(json);
    (out, v)
}

#[test]
fn cpp_kernels_against_themselves_find_no_change() {
    let k = kernels("kernels", &[]);
    let (_, v) = compare_json(&k, &k, &["--time", "1"], &tmp("cpp-aa.json"));
    let cs = v["comparisons"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "{v}");
    for c in cs {
        // On a loaded machine the interval may stay wider than the threshold: never a change.
        let verdict = c["verdict"].as_str().unwrap();
        assert!(verdict == "no-change" || verdict == "inconclusive", "{c}");
        let r = c["ratio"].as_f64().unwrap();
        assert!((r - 1.0).abs() < 0.05, "{c}");
        check_pairs(c);
    }
}

#[test]
fn cpp_builds_twice_as_long_are_slower() {
    let old = kernels("kernels", &[]);
    let new = kernels(
        "kernels-200",
        &["-DKERNELS_CHAIN_N=200", "-DKERNELS_MEM_STEPS=200"],
    );
    let (_, v) = compare_json(
        &old,
        &new,
        &["--filter", "chain|chase"],
        &tmp("cpp-ab.json"),
    );
    let cs = v["comparisons"].as_array().unwrap();
    assert_eq!(cs.len(), 2, "{v}");
    for c in cs {
        assert_eq!(c["verdict"], "slower", "{c}");
        // Twice the work; how much longer it takes depends on the core (a loop of 200 adds
        // may lose the loop predictor's exact exit, a chase of 200 steps overlap less).
        let r = c["ratio"].as_f64().unwrap();
        assert!(r > 1.3 && r < 4.0, "{c}");
        check_pairs(c);
    }
}

#[test]
fn a_chase_one_load_longer_is_never_faster_and_says_how_it_was_judged() {
    // A pointer chase through 64 MiB, 100 against 101 loads (+1 %), at the default options:
    // memory-bound, so its pairs may fall into layout states. Whatever the machine's state, an
    // honest comparison never calls it faster; what it reports follows the pairs it ran.
    let old = kernels("kernels", &[]);
    let new = kernels("kernels-mem101", &["-DKERNELS_MEM_STEPS=101"]);
    let (out, v) = compare_json(&old, &new, &["--filter", "chase"], &tmp("cpp-chase.json"));
    let (so, _) = text(&out);
    let c = &v["comparisons"][0];
    assert_eq!(c["name"], "chase", "{v}");
    let verdict = c["verdict"].as_str().unwrap();
    assert_ne!(verdict, "faster", "{c}");
    check_pairs(c);
    let pairs = c["process_pairs"].as_array().unwrap().len();
    if let Some(st) = c.get("layout_states") {
        // The states' range is kept; the interval is the layout average from 10 pairs on,
        // and before that spans the states with no verdict.
        let (lo, hi) = (st["lo"].as_f64().unwrap(), st["hi"].as_f64().unwrap());
        assert!(lo < hi, "{st}");
        let averaged = st["averaged"].as_bool().unwrap();
        assert_eq!(averaged, pairs >= 10, "{st}");
        assert!(so.contains("layout states"), "{so}");
        if !averaged {
            assert_eq!(verdict, "inconclusive", "{c}");
            let ci = c["ci95"].as_array().unwrap();
            assert!(
                ci[0].as_f64().unwrap() <= lo && ci[1].as_f64().unwrap() >= hi,
                "{c}"
            );
        }
    }
    if verdict == "inconclusive" {
        assert!(so.contains("chase: inconclusive: "), "{so}");
    }
}

#[test]
fn result_files_of_different_kinds_are_refused() {
    let a = demo_json("kind-a.json");
    let b = tmp("kind-b.json");
    let mut v = load(&a);
    v["mode"] = "instructions".into();
    std::fs::write(&b, serde_json::to_vec(&v).unwrap()).unwrap();
    let out = vernier().arg("compare").arg(&a).arg(&b).output().unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        se.contains("times") && se.contains("instruction counts") && se.contains("same kind"),
        "{se}"
    );
}

/// A C++ file with two benchmarks, built twice: `mix` changes between the builds (more rounds,
/// a multiply), `sort` does not.
const TWO_BENCHMARKS: &str = r#"#include "vernier.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

int main(int argc, char** argv) {
    std::vector<int> data(500);
    std::uint32_t x = 12345;
    for (auto& v : data) {
        x = x * 1664525u + 1013904223u;
        v = static_cast<int>(x >> 8);
    }
    std::vector<int> work;
    volatile std::uint32_t seed = 7;
    vernier::bench("mix", [&] {
        std::uint32_t h = seed;
        for (int i = 0; i < MIX_ROUNDS; ++i) {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
#ifdef MIX_MULTIPLY
            h *= 0x9E3779B1u;
#endif
        }
        return h;
    });
    vernier::bench("sort", [&] {
        work = data;
        std::sort(work.begin(), work.end());
        return work[work.size() / 2];
    });
    return vernier::main(argc, argv);
}
"#;

/// Where `vernier asm` finds a benchmark's measured-loop function (its address in the file).
fn loop_address(exe: &Path, name: &str) -> String {
    let out = vernier()
        .args(["asm", "--filter", &format!("^{name}$"), "--"])
        .arg(exe)
        .output()
        .unwrap();
    let so = text(&out).0;
    let line = so.lines().nth(1).unwrap_or_default();
    let at = line
        .rfind("(0x")
        .map(|i| &line[i + 1..])
        .unwrap_or_default();
    assert!(at.starts_with("0x"), "{so}");
    at.split(',').next().unwrap().to_string()
}

#[test]
fn code_that_did_not_change_is_said_to_be_the_same_whatever_its_ratio() {
    let src = tmp("two-benchmarks.cpp");
    std::fs::write(&src, TWO_BENCHMARKS).unwrap();
    let old = cpp::compile(
        "two-old",
        std::slice::from_ref(&src),
        &["-O2", "-DMIX_ROUNDS=16"],
    );
    let new = cpp::compile(
        "two-new",
        &[src],
        &["-O2", "-DMIX_ROUNDS=64", "-DMIX_MULTIPLY"],
    );
    // `mix` grew, so `sort`'s code sits at another address in NEW: the comparison must take
    // the addresses out to see that it is the same.
    assert_ne!(loop_address(&old, "sort"), loop_address(&new, "sort"));
    let json = tmp("two-builds.json");
    let out = vernier()
        .arg("compare")
        .arg(&old)
        .arg(&new)
        .arg("--fail-on-regression")
        .arg("--json")
        .arg(&json)
        .env("VERNIER_LEDGER", tmp("ledger.json"))
        .output()
        .unwrap();
    let (so, se) = text(&out);
    let v = load(&json);
    let find = |name: &str| {
        v["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {v}"))
            .clone()
    };
    let (mix, sort) = (find("mix"), find("sort"));
    // The changed benchmark: changed code, four times the rounds, a regression.
    assert_eq!(mix["code"], "changed", "{}", mix["code_detail"]);
    assert_eq!(mix["verdict"], "slower", "{so}");
    // The unchanged one: the same code, whatever its ratio (the loop's function and the
    // functions std::sort calls).
    assert_eq!(sort["code"], "same", "{}\n{so}", sort["code_detail"]);
    assert!(
        sort["code_detail"]["functions"].as_u64().unwrap() >= 2,
        "{sort}"
    );
    // Only `mix` is a regression.
    assert_eq!(out.status.code(), Some(2), "{so}\n{se}");
    let gate = se
        .lines()
        .find(|l| l.contains("regression (--fail-on-regression)"))
        .unwrap_or_else(|| panic!("{se}"));
    assert!(gate.contains("mix") && !gate.contains("sort"), "{gate}");
    // A difference measured on the same code is not shown as a plain verdict.
    let row = so.lines().find(|l| l.starts_with("sort ")).unwrap();
    match sort["verdict"].as_str().unwrap() {
        "faster" | "slower" => assert!(
            row.contains("placement") && so.contains("sort: placement"),
            "{so}"
        ),
        _ => assert!(!row.contains("placement"), "{so}"),
    }
}
