//! No Rust source file of the workspace is over 600 lines outside its tests: a file that grows
//! past it holds more than one job and is split by job (as `session/suite.rs` was into the
//! registering forms, `options.rs` and `declare.rs`). A file's tests are the lines from its
//! first `#[cfg(test)]` at the start of a line; a module of tests alone (`tests.rs`, the crates'
//! `tests/` folders) is not held to it.

use std::fs;
use std::path::{Path, PathBuf};

/// The most lines a source file has before its tests.
const MAX_FILE_LINES: usize = 600;

/// The lines of `text` before its tests (its first `#[cfg(test)]` at the start of a line).
fn lines_outside_tests(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

/// The Rust files under `dir`, less the folders of integration tests and `tests.rs` modules.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() && name != "tests" && name != "target" {
            sources(&p, out);
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(p);
        }
    }
}

#[test]
fn the_count_stops_at_the_tests() {
    let text = "use x;\n\nfn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\n";
    assert_eq!(lines_outside_tests(text), 3);
    assert_eq!(lines_outside_tests("fn a() {}\n    #[cfg(test)]\n"), 2);
}

#[test]
fn no_rust_file_is_over_the_limit_outside_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["crates", "python/src"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files found", files.len());
    let mut over: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = lines_outside_tests(&fs::read_to_string(f).unwrap());
            let rel = f.strip_prefix(&root).unwrap_or(f).display();
            (n > MAX_FILE_LINES).then(|| format!("{rel}: {n} lines"))
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "over {MAX_FILE_LINES} lines outside tests (split by job):\n{}",
        over.join("\n")
    );
}
