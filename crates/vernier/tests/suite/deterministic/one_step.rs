//! `pipeline::finish` is the one step from a measurement to a result: it builds the result
//! (`BenchmarkResult::new` is called nowhere else), and what a result holds beyond its
//! measurement (the throughput and complexity the benchmark declared, a threaded benchmark's
//! relation to its one-thread run) travels in its context. A caller that set such a figure
//! after the step would make a path that the others do not share: the sources of every crate
//! that call the step are read here for it.

use super::layers::{code, rust_files};
use std::fs;
use std::path::{Path, PathBuf};

/// Every Rust source of the workspace outside tests (and the Python module's), with its path
/// from the workspace root.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in fs::read_dir(root.join("crates")).unwrap() {
        let src = dir.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    rust_files(&root.join("python/src"), &mut files);
    files
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|f| {
            let rel = f.strip_prefix(&root).unwrap().display().to_string();
            (rel, code(&fs::read_to_string(&f).unwrap()))
        })
        .collect()
}

/// What a caller of the step must not do after it, by the text that does it.
const SET_AFTER: [&str; 6] = [
    ".throughput =",
    ".complexity =",
    ".executor =",
    ".scaling =",
    "threads::relate(",
    "BenchmarkResult::new(",
];

/// The lines of `code` that set a result's figure by hand.
fn figures_set(code: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        for what in SET_AFTER {
            if line.contains(what) {
                found.push((i + 1, what));
            }
        }
    }
    found
}

#[test]
fn no_caller_of_the_step_sets_a_figure_after_it() {
    let mut callers = Vec::new();
    let mut bad = Vec::new();
    for (path, code) in sources() {
        if path.ends_with("vernier/src/pipeline.rs") {
            continue;
        }
        if !(code.contains("pipeline::finish(") || code.contains("pipeline::again(")) {
            continue;
        }
        callers.push(path.clone());
        for (line, what) in figures_set(&code) {
            bad.push(format!(
                "{path}:{line}: `{what}` beside the step: give it to `pipeline::Context`"
            ));
        }
    }
    // The paths that make a result: a suite in this process, `vernier run`, a file derived
    // again, an unpaired comparison, the Python module. Found, or the check reads nothing.
    assert!(callers.len() >= 5, "callers of the step: {callers:?}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_result_is_built_only_by_the_step() {
    let builders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, code)| code.contains("BenchmarkResult::new("))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(builders, ["crates/vernier/src/pipeline.rs"]);
}

#[test]
fn a_figure_set_by_hand_is_found() {
    let c =
        code("let r = pipeline::finish(n, &m, &ctx, i);\nr.throughput = t; // r.complexity = c\n");
    assert_eq!(figures_set(&c), [(2, ".throughput =")]);
}
