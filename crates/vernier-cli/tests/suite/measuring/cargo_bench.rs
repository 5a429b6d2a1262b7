//! `cargo bench` in an ordinary crate outside this repository (a path dependency on the
//! `vernier` crate), the forms the README documents:
//! - `cargo bench --bench NAME -- FILTER --quick` (any crate);
//! - `cargo bench -- FILTER --quick` (a crate whose library sets `bench = false`, so cargo does
//!   not run libtest's harness for it, which would reject `--quick`);
//! - `cargo bench --bench a --bench b -- --json F`: both targets' benchmarks end up in F, and a
//!   second invocation replaces them instead of piling up.
//!
//! Built offline with this workspace's lock file; the first build takes a minute or two.

use crate::common::cli;

use cli::text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vernier::result::ResultFile;

fn crate_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fresh-crate");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("benches")).unwrap();
    let vernier = root.join("crates/vernier").canonicalize().unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            r#"[package]
name = "fresh"
version = "0.1.0"
edition = "2021"

[lib]
bench = false

[dev-dependencies]
vernier = {{ path = "{}" }}

[[bench]]
name = "a"
harness = false

[[bench]]
name = "b"
harness = false

[workspace]
"#,
            vernier.display()
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn twice(x: u64) -> u64 { 2 * x }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("benches/a.rs"),
        r#"fn arith(s: &mut vernier::Suite) {
    s.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
    s.bench("twice", || fresh::twice(vernier::black_box(21)));
}
vernier::main!(arith);
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("benches/b.rs"),
        r#"fn other(s: &mut vernier::Suite) {
    s.bench("add", || vernier::black_box(4u64) + 1);
}
vernier::main!(other);
"#,
    )
    .unwrap();
    dir
}

fn cargo_bench(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO"))
        .arg("bench")
        .arg("--offline")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("NO_COLOR", "1")
        // The ledger in use, as a user's is, but the test's own.
        .env("VERNIER_LEDGER", dir.join("ledger.json"))
        .env_remove("VERNIER_FDS")
        .output()
        .unwrap();
    assert!(o.status.success(), "cargo bench {args:?}: {}", text(&o));
    o
}

fn names(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = ResultFile::load(path)
        .unwrap()
        .benchmarks
        .into_iter()
        .map(|b| b.name)
        .collect();
    v.sort();
    v
}

#[test]
fn the_documented_cargo_bench_forms_work_in_a_fresh_crate() {
    let dir = crate_dir();
    let rows = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| ["sqrt ", "twice ", "add "].iter().any(|n| l.starts_with(n)))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    // One target, a filter and an option.
    let o = cargo_bench(&dir, &["--bench", "a", "--", "sqrt", "--quick"]);
    assert_eq!(rows(&o), ["sqrt"], "{}", text(&o));
    // Every target: the library's libtest harness is not run (`bench = false`).
    let o = cargo_bench(&dir, &["--", "sqrt", "--quick"]);
    assert_eq!(rows(&o), ["sqrt"], "{}", text(&o));
    // Two targets, one result file: both targets' benchmarks, twice in a row.
    let json = dir.join("both.json");
    let _ = std::fs::remove_file(&json);
    for _ in 0..2 {
        cargo_bench(
            &dir,
            &[
                "--bench",
                "a",
                "--bench",
                "b",
                "--",
                "--quick",
                "--json",
                json.to_str().unwrap(),
            ],
        );
        assert_eq!(names(&json), ["add", "sqrt", "twice"]);
    }
}
