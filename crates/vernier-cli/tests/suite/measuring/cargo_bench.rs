//! `cargo bench` in an ordinary crate outside this repository (a path dependency on the
//! `vernier` crate), the forms the README documents:
//! - `cargo bench --bench NAME -- FILTER --quick` (any crate);
//! - `cargo bench -- FILTER --quick` (a crate whose library sets `bench = false`, so cargo does
//!   not run libtest's harness for it, which would reject `--quick`);
//! - `cargo bench --bench a --bench b -- --json F`: both targets' benchmarks end up in F, and a
//!   second invocation replaces them instead of piling up.
//!
//! Built offline with this workspace's lock file; the first build takes a minute or two.

use crate::common::bench_crate::{tmp, workspace_crate, BenchCrate};
use crate::common::cli::text;

use std::path::Path;
use std::process::Output;
use vernier::result::ResultFile;

fn fresh_crate() -> BenchCrate {
    let manifest = format!(
        r#"[lib]
bench = false

[dev-dependencies]
vernier = {{ path = "{}" }}

[[bench]]
name = "a"
harness = false

[[bench]]
name = "b"
harness = false
"#,
        workspace_crate("vernier").display()
    );
    let a = r#"fn arith(s: &mut vernier::Suite) {
    s.bench("sqrt", || vernier::black_box(4.2f64).sqrt());
    s.bench("twice", || fresh::twice(vernier::black_box(21)));
}
vernier::main!(arith);
"#;
    let b = r#"fn other(s: &mut vernier::Suite) {
    s.bench("add", || vernier::black_box(4u64) + 1);
}
vernier::main!(other);
"#;
    BenchCrate::package(
        tmp("fresh-crate"),
        "fresh",
        &manifest,
        &[
            ("src/lib.rs", "pub fn twice(x: u64) -> u64 { 2 * x }\n"),
            ("benches/a.rs", a),
            ("benches/b.rs", b),
        ],
    )
}

/// `cargo bench --offline ARGS` in the crate, which must succeed.
fn cargo_bench(c: &BenchCrate, args: &[&str]) -> Output {
    c.cargo(&[&["bench", "--offline"], args].concat())
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
    let c = fresh_crate();
    let rows = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| ["sqrt ", "twice ", "add "].iter().any(|n| l.starts_with(n)))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    // One target, a filter and an option.
    let o = cargo_bench(&c, &["--bench", "a", "--", "sqrt", "--quick"]);
    assert_eq!(rows(&o), ["sqrt"], "{}", text(&o));
    // Every target: the library's libtest harness is not run (`bench = false`).
    let o = cargo_bench(&c, &["--", "sqrt", "--quick"]);
    assert_eq!(rows(&o), ["sqrt"], "{}", text(&o));
    // Two targets, one result file: both targets' benchmarks, twice in a row.
    let json = c.dir().join("both.json");
    let _ = std::fs::remove_file(&json);
    for _ in 0..2 {
        cargo_bench(
            &c,
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
