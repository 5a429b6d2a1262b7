//! Building the C++ examples for tests: once per test binary, with the real compiler.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn cxx() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "g++".into())
}

pub fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp-examples");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compile `sources` into an executable named `out` with `flags` (plus `-std=c++17 -Wall
/// -Wextra -Werror -Iinclude`). Each (out, flags) is built once per test binary, even when
/// tests ask concurrently.
pub fn compile(out: &str, sources: &[PathBuf], flags: &[&str]) -> PathBuf {
    type Cell = Arc<OnceLock<PathBuf>>;
    static BUILT: OnceLock<Mutex<HashMap<String, Cell>>> = OnceLock::new();
    let key = format!("{out} {flags:?}");
    let cell = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_default()
        .clone();
    cell.get_or_init(|| {
        let exe = out_dir().join(out);
        let mut cmd = Command::new(cxx());
        cmd.args(["-std=c++17", "-Wall", "-Wextra", "-Werror"])
            .args(flags)
            .arg(format!("-I{}", repo_root().join("include").display()))
            .args(sources)
            .arg("-o")
            .arg(&exe);
        let o = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C++ compiler '{}' (set CXX): {e}", cxx()));
        assert!(
            o.status.success(),
            "{cmd:?} failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let warnings = String::from_utf8_lossy(&o.stderr);
        assert!(warnings.trim().is_empty(), "compiler output:\n{warnings}");
        exe
    })
    .clone()
}

/// `-O2` and the strict warnings the header must compile cleanly under.
pub const STRICT_FLAGS: &[&str] = &[
    "-O2",
    "-Wpedantic",
    "-Wshadow",
    "-Wconversion",
    "-Wsign-conversion",
    "-Wold-style-cast",
    "-Wcast-qual",
];

pub fn example_source(name: &str) -> PathBuf {
    repo_root().join("examples/cpp").join(format!("{name}.cpp"))
}

/// An example built as the tests require: `-O2 -std=c++17 -Wall -Wextra -Werror`.
pub fn example(name: &str) -> PathBuf {
    compile(name, &[example_source(name)], &["-O2"])
}
