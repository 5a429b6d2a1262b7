//! `vernier profile` and `compare --profile` on a C++ program whose loop calls two functions,
//! one with three times the other's loop steps. The profile is counted under callgrind, so
//! its figures are exact and the assertions on them are equalities; the timed verdict of
//! `compare` is only held to what it guarantees (never the wrong direction).

use crate::common::{cli, cpp, rust_examples};

use cli::{text, vernier};
use cpp::{compile, repo_root};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn build(name: &str, heavy_n: u32) -> PathBuf {
    compile(
        name,
        &[repo_root().join("crates/vernier-cli/tests/fixtures/cpp/profile_mix.cpp")],
        &["-O2", "-g", &format!("-DHEAVY_N={heavy_n}")],
    )
}

/// Own instructions per iteration of `function` in benchmark `bench` of a profile.
fn own_ir(p: &Value, bench: &str, function: &str) -> f64 {
    let ir = p["events"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e == "Ir")
        .unwrap();
    let b = cli::item(&p["benchmarks"], "name", bench);
    b["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"].as_str().unwrap().starts_with(function))
        .unwrap_or_else(|| panic!("no {function} in {bench}: {b}"))["own"][ir]
        .as_f64()
        .unwrap()
}

/// `vernier profile OPTIONS -- EXE` with the tool it needs pointed at a path where there is
/// none (`var`): exit 1, and the message names how to install it (`needle`).
fn refused_without_tool(exe: &Path, var: (&str, &Path), options: &[&str], needle: &str) {
    let o = vernier()
        .env(var.0, var.1)
        .arg("profile")
        .args(options)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains(needle), "{}", text(&o));
}

#[test]
fn the_exact_profile_splits_a_loop_between_its_functions_by_count() {
    let exe = build("profile-mix", 300);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let html = dir.path().join("p.html");
    let o = cli::succeeds([
        "profile".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
        "--html".as_ref(),
        html.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let p: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // In `mix`, each function costs exactly what it costs measured alone.
    let (h, l) = (own_ir(&p, "mix", "heavy("), own_ir(&p, "mix", "light("));
    assert_eq!(h, own_ir(&p, "heavy", "heavy("), "{out}");
    assert_eq!(l, own_ir(&p, "light", "light("), "{out}");
    // Three times the loop steps: three times the instructions, give or take the calls' own.
    let share = h / (h + l);
    assert!((0.73..=0.76).contains(&share), "{share} {out}");
    // The loop's total is its functions' and its own.
    let mix = cli::item(&p["benchmarks"], "name", "mix");
    let total = mix["instructions_per_iter"].as_f64().unwrap();
    let loop_own = mix["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["name"]
                .as_str()
                .unwrap()
                .contains("vernier_measured_loop")
        })
        .unwrap()["own"][0]
        .as_f64()
        .unwrap();
    assert!((h + l + loop_own - total).abs() < 1e-9, "{out}");
    assert!(mix["estimated_cycles_per_iter"].as_f64().unwrap() >= total);
    // Per source line (built with -g): the costliest is heavy's loop, line 21 of the fixture;
    // heavy's lines add up to its own instructions; the terminal shows the line's text.
    let lines = mix["lines"].as_array().expect("per-line costs");
    let top = &lines[0];
    assert!(
        top["file"].as_str().unwrap().ends_with("profile_mix.cpp")
            && top["line"] == 21
            && top["function"].as_str().unwrap().starts_with("heavy("),
        "{top}"
    );
    let heavy_lines: f64 = lines
        .iter()
        .filter(|l| l["function"].as_str().unwrap().starts_with("heavy("))
        .map(|l| l["own"][0].as_f64().unwrap())
        .sum();
    assert!((heavy_lines - h).abs() < 1e-6, "{heavy_lines} against {h}");
    assert!(
        out.contains("costliest lines") && out.contains("profile_mix.cpp:21  heavy("),
        "{out}"
    );
    assert!(
        out.contains("│ for (int i = 0; i < HEAVY_N; ++i) acc = acc + 1;"),
        "{out}"
    );
    // The terminal shows heavy first; the report has a flame graph with both, and no script.
    let first = out
        .lines()
        .skip_while(|l| !l.starts_with("mix:"))
        .nth(2)
        .unwrap();
    assert!(first.ends_with("heavy(unsigned long)"), "{out}");
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(report.contains("data-plot=\"flamegraph\""));
    assert!(report.contains(">heavy(unsigned long)<") && report.contains(">light(unsigned long)<"));
    assert!(report.contains("source line") && report.contains("profile_mix.cpp:21</code>"));
    assert!(!report.contains("<script"));

    // `run --profile`: the run as usual, then the profile under its table and in its report.
    let html = dir.path().join("run.html");
    let o = cli::succeeds([
        "run".as_ref(),
        "--quick".as_ref(),
        "--filter".as_ref(),
        "^mix$".as_ref(),
        "--profile".as_ref(),
        "--html".as_ref(),
        html.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let after = out
        .split("profiles (counted under callgrind")
        .nth(1)
        .unwrap_or("");
    assert!(after.contains("heavy(unsigned long)"), "{out}");
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(report.contains("data-plot=\"flamegraph\"") && report.contains("Profile:"));

    // A filter that matches nothing names the benchmarks there are.
    let o = vernier()
        .args(["profile", "--filter", "^nothing$", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("mix"), "{}", text(&o));
    // No valgrind, and a program without symbols: each named, with the fix.
    refused_without_tool(
        &exe,
        ("VERNIER_VALGRIND", &dir.path().join("no-valgrind")),
        &[],
        "apt-get install valgrind",
    );
    let stripped = dir.path().join("stripped");
    std::fs::copy(&exe, &stripped).unwrap();
    assert!(std::process::Command::new("strip")
        .arg(&stripped)
        .status()
        .unwrap()
        .success());
    let o = vernier()
        .args(["profile", "--"])
        .arg(&stripped)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no symbol table"), "{}", text(&o));
}

/// The sampled profile of the same loop, with perf (the software clock on a machine without a
/// PMU): the two functions' shares of the loop's samples within 10 points of their 3:1 split.
#[test]
fn the_sampled_profile_shares_the_loop_as_its_steps_do() {
    let exe = build("profile-mix", 300);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let o = vernier()
        .args(["profile", "--sampled", "--filter", "^mix$", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let p: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(p["profile"], "sampled");
    let b = &p["benchmarks"][0];
    let n = b["samples"].as_f64().unwrap();
    assert!(n >= 200.0, "{out}");
    let own = |f: &str| {
        b["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == f)
            .map(|x| x["own"][0].as_f64().unwrap())
            .unwrap_or(0.0)
            / n
    };
    let (h, l) = (own("heavy"), own("light"));
    assert!(
        (h - 0.75).abs() <= 0.10 && (l - 0.25).abs() <= 0.10,
        "{h} {l}: {out}"
    );
    // Only the loop's samples: its frame holds every one.
    let root = cli::item(&b["functions"], "name", "vernier_measured_loop");
    assert_eq!(root["inclusive"][0].as_f64().unwrap(), n, "{out}");
    // Without perf: named, with the package to install.
    refused_without_tool(
        &exe,
        ("VERNIER_PERF", &dir.path().join("no-perf")),
        &["--sampled"],
        "apt-get install linux-perf",
    );
}

/// `compare --profile`'s output for `mix`: the differential's first line is `heavy` (its
/// steps grew), `light` (unchanged) is not listed; the verdict is never `faster`, and when it
/// is `slower`, `heavy` is named under it.
fn assert_heavy_named(o: &std::process::Output, heavy: &str, light: &str) {
    assert!(o.status.success(), "{}", text(o));
    let out = String::from_utf8_lossy(&o.stdout);
    let first = out
        .lines()
        .skip_while(|l| !(l.starts_with("  mix: ") && l.ends_with("instructions/iter")))
        .nth(1)
        .unwrap();
    assert!(first.trim_end().ends_with(heavy), "{out}");
    assert!(!out.contains(light), "{out}");
    let row = out.lines().find(|l| l.starts_with("mix ")).unwrap();
    assert!(!row.contains("faster"), "{out}");
    if row.contains("slower") {
        assert!(
            out.contains(&format!("mix is slower: {heavy} grew most")),
            "{out}"
        );
    }
}

#[test]
fn compare_profile_names_the_function_that_grew() {
    let old = build("profile-mix-300", 300);
    let new = build("profile-mix-390", 390);
    let o = vernier()
        .args(["compare", "--quick", "--filter", "^mix$", "--profile"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    assert_heavy_named(&o, "heavy(unsigned long)", "light(unsigned long)");
}

/// The same in Rust: one build of the example worker, `heavy` given more steps in NEW by its
/// environment.
#[test]
fn compare_profile_names_the_function_that_grew_in_rust() {
    let exe = rust_examples::examples().join("profile_mix");
    let o = vernier()
        .args(["compare", "--quick", "--profile"])
        .args(["--old-env", "HEAVY_N=300", "--new-env", "HEAVY_N=390"])
        .arg(&exe)
        .arg(&exe)
        .output()
        .unwrap();
    assert_heavy_named(&o, "profile_mix::heavy", "profile_mix::light");
}

/// `compare --profile --sampled`: both builds sampled with perf, each function's own time per
/// iteration compared with its sampling error. `heavy` gained 90 steps, a change many times
/// its error, so it comes first, and a `slower` verdict names it; the verdict is never
/// `faster`.
#[test]
fn compare_profile_sampled_names_the_function_that_grew() {
    let old = build("profile-mix-300", 300);
    let new = build("profile-mix-390", 390);
    let o = cli::succeeds([
        "compare".as_ref(),
        "--quick".as_ref(),
        "--filter".as_ref(),
        "^mix$".as_ref(),
        "--profile".as_ref(),
        "--sampled".as_ref(),
        old.as_os_str(),
        new.as_os_str(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("profiles (sampled with perf, 1 s per benchmark and side"),
        "{out}"
    );
    let first = out
        .lines()
        .skip_while(|l| !(l.starts_with("  mix: ") && l.ends_with(" samples)")))
        .nth(1)
        .unwrap_or_else(|| panic!("no differential of mix:\n{out}"));
    // perf names the function without its parameters.
    assert!(first.trim_end().ends_with(" heavy"), "{out}");
    assert!(first.trim_start().starts_with('+'), "{out}");
    let row = out.lines().find(|l| l.starts_with("mix ")).unwrap();
    assert!(!row.contains("faster"), "{out}");
    if row.contains("slower") {
        assert!(out.contains("mix is slower: heavy grew most (+"), "{out}");
    }
}
