//! Every ordinary routine form (captures by value and by reference, const or not, `mutable`
//! state, move-only captures, large, reference, void and const-member results, function
//! pointers, functors with a const `operator()`) compiles with g++ and clang++ at -O0, -O2
//! and -O3, runs standalone and as a `vernier run` worker; and the barrier still keeps the
//! work: at -O2 and -O3 the square root of a captured input is not flagged "optimized away",
//! while the control (the square root of a constant) is, in the same run.
//!
//! clang++ is required (CI installs it: `.ci/run`).

use crate::common::{cli, cpp};

use cli::{text, vernier};
use std::path::PathBuf;
use std::process::Command;
use vernier::result::Status;

fn source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpp/routine_forms.cpp")
}

/// The benchmark names the source registers, read from it (`vernier::bench("NAME", …`).
fn names() -> Vec<String> {
    let src = std::fs::read_to_string(source()).unwrap();
    src.split("vernier::bench(\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

fn build(compiler: &str, level: &str) -> PathBuf {
    let exe = cpp::out_dir().join(format!("routine_forms-{compiler}{level}"));
    let o = Command::new(compiler)
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", level])
        .arg(format!("-I{}", cpp::repo_root().join("include").display()))
        .arg(source())
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {compiler} ({e}): install it (apt-get install g++ clang)")
        });
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{compiler} {level}:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

fn check(compiler: &str, level: &str) {
    let exe = build(compiler, level);
    let names = names();
    assert!(names.len() >= 25, "{names:?}");

    // Standalone: every benchmark measured, none failed.
    let o = Command::new(&exe)
        .args(["--time", "0.02"])
        .env_remove("VERNIER_FDS")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{compiler} {level}: {}", text(&o));
    let row = |name: &str| {
        out.lines()
            .find(|l| {
                l.strip_prefix(name)
                    .is_some_and(|rest| rest.trim_start().starts_with("T_iter"))
            })
            .unwrap_or_else(|| panic!("{compiler} {level}: no row for '{name}':\n{out}"))
            .to_string()
    };
    for n in &names {
        row(n);
    }
    if level != "-O0" {
        for n in names
            .iter()
            .filter(|n| n.starts_with("sqrt ") && !n.ends_with("(control)"))
        {
            assert!(
                !row(n).contains("optimized away"),
                "{compiler} {level}: the barrier let the work of '{n}' go:\n{out}"
            );
        }
        assert!(
            row("sqrt of a constant (control)").contains("optimized away"),
            "{compiler} {level}: the control should be flagged (else the check above proves \
             nothing):\n{out}"
        );
    }

    // As a worker under the runner: every benchmark measured, status ok.
    let json = cpp::out_dir().join(format!("routine_forms-{compiler}{level}.json"));
    let (_, f) = cli::run_json(
        vernier(),
        &["--time", "0.03", "--processes", "1", "--counters", "none"],
        &json,
        &exe,
    );
    let got: Vec<&str> = f.benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(got, names, "{compiler} {level}");
    for b in &f.benchmarks {
        assert_eq!(
            b.status,
            Status::Ok,
            "{compiler} {level} {}: {:?}",
            b.name,
            b.error
        );
        assert!(b.per_iter.median_ns > 0.0, "{compiler} {level} {}", b.name);
    }
}

macro_rules! forms {
    ($($test:ident: $compiler:literal $level:literal;)*) => {
        $(
            #[test]
            fn $test() {
                check($compiler, $level);
            }
        )*
    };
}

forms! {
    gcc_o0: "g++" "-O0";
    gcc_o2: "g++" "-O2";
    gcc_o3: "g++" "-O3";
    clang_o0: "clang++" "-O0";
    clang_o2: "clang++" "-O2";
    clang_o3: "clang++" "-O3";
}

/// The standalone summary (no runner at hand): microseconds are written `µs`, and no interval
/// is printed (one process cannot back one).
#[test]
fn standalone_estimates_have_no_interval_and_microseconds_are_written_us() {
    let dir = cpp::out_dir().join("standalone-format");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("format.cpp");
    std::fs::write(
        &src,
        r#"#include "vernier.hpp"
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
    if (std::getenv("FORMAT_RULES")) {
        // The unit rule, on a chosen value.
        double scale = 0;
        const char* unit = vernier::detail::time_unit(25000.0, scale);
        std::printf("unit %s %g\n", unit, scale);
        return 0;
    }
    // 100000 dependent multiply-adds, 50-100 µs per iteration (10 µs on a fast core for
    // 20000 was too close to the unit's threshold): the summary is in µs.
    vernier::bench("slow", [] {
        unsigned long x = 1;
        for (int i = 0; i < 100000; ++i) {
            vernier::do_not_optimize(x);
            x = x * 3 + 1;
        }
        return x;
    });
    return vernier::main(argc, argv);
}
"#,
    )
    .unwrap();
    let exe = cpp::compile("standalone-format.exe", &[src], &["-O2"]);
    let o = Command::new(&exe)
        .env("FORMAT_RULES", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.lines().any(|l| l == "unit µs 0.001"), "{out}");
    let o = Command::new(&exe)
        .args(["--time", "0.1"])
        .env_remove("VERNIER_FDS")
        .env_remove("VERNIER_BIN")
        .env_remove("PATH")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    let row = out.lines().find(|l| l.starts_with("slow")).unwrap();
    assert!(row.contains(" µs ") && !row.contains(" us "), "{row}");
    assert!(!row.contains('±'), "{row}");
}
