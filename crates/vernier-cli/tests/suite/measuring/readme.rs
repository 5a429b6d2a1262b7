//! The README's first steps as a new user follows them: the install command puts a `vernier`
//! on the PATH, and the commands of "Quick start" and "A first C++ benchmark" run as written
//! with that `vernier` on the PATH (the binary under test, in a directory of its own as
//! `cargo install --path crates/vernier-cli` leaves it in `~/.cargo/bin`; the install itself,
//! a release build of several minutes, is not repeated here). The Rust snippets run as
//! doctests (`crates/vernier/src/readme.rs`).

use crate::common::cpp;

use std::path::{Path, PathBuf};
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(cpp::repo_root().join("README.md")).unwrap()
}

/// The first fenced block of `lang` after the heading `heading`.
fn block_after(readme: &str, heading: &str, lang: &str) -> String {
    let at = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no heading {heading:?} in the README"));
    let fence = format!("```{lang}\n");
    let start = at + readme[at..].find(&fence).expect("a fenced block") + fence.len();
    let end = start + readme[start..].find("```").unwrap();
    readme[start..end].to_string()
}

/// The commands of a shell block: each line without its comment, empty ones left out.
fn commands(block: &str) -> Vec<String> {
    block
        .lines()
        .map(|l| l.split(" #").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn the_readme_says_how_to_get_vernier_on_the_path() {
    let readme = readme();
    let install = "cargo install --path crates/vernier-cli";
    assert!(
        readme.lines().any(|l| l.starts_with(install)),
        "the README gives {install:?} as a command of its own"
    );
    // That crate installs a binary named `vernier`.
    let manifest =
        std::fs::read_to_string(cpp::repo_root().join("crates/vernier-cli/Cargo.toml")).unwrap();
    let bins: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|section| {
            let line = section
                .lines()
                .find(|l| l.trim_start().starts_with("name"))?;
            line.split('"').nth(1)
        })
        .collect();
    assert!(bins.contains(&"vernier"), "{bins:?}");
    // No command of the README runs the CLI before the install is described.
    let first_use = readme
        .lines()
        .position(|l| l.trim_start().starts_with("vernier "))
        .unwrap();
    let described = readme.lines().position(|l| l.starts_with(install)).unwrap();
    assert!(
        described < first_use,
        "line {first_use} runs vernier before line {described}"
    );
}

/// `sh -c LINE` in `dir`, with `bin` first on the PATH and a fresh ledger; must succeed.
fn run_as_written(line: &str, dir: &Path, bin: &Path) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let o = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("VERNIER_LEDGER", dir.join("ledger.json"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("sh -c {line}: {e}"));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "`{line}` as the README writes it failed ({:?}; is the compiler installed? \
         apt-get install g++):\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

#[test]
fn the_readme_first_steps_run_as_written() {
    let readme = readme();
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-steps");
    let _ = std::fs::remove_dir_all(&root);
    // `vernier` on the PATH, as the install leaves it.
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vernier"), bin.join("vernier")).unwrap();
    // The repository's root as the README's commands see it: its `include/`, and the C++
    // snippet saved as bench.cpp.
    let dir = root.join("repo");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(cpp::repo_root().join("include"), dir.join("include")).unwrap();
    std::fs::write(
        dir.join("bench.cpp"),
        block_after(&readme, "## A first C++ benchmark", "cpp"),
    )
    .unwrap();

    // The quick start is two commands: the demo through `cargo run` (run here as the `vernier`
    // command it builds), and the tests.
    let quick = commands(&block_after(&readme, "## Quick start", "sh"));
    let through_cargo = "cargo run --release -p vernier-cli -- ";
    assert_eq!(quick.len(), 2, "{quick:?}");
    assert!(quick[0].starts_with(through_cargo), "{quick:?}");
    assert_eq!(quick[1], "bash .ci/run", "{quick:?}");
    let line = format!("vernier {}", &quick[0][through_cargo.len()..]);
    let out = run_as_written(&line, &dir, &bin);
    assert!(out.contains("median"), "{line}:\n{out}");
    let steps = commands(&block_after(&readme, "## A first C++ benchmark", "sh"));
    assert!(
        steps.iter().any(|c| c.starts_with("vernier run")),
        "{steps:?}"
    );
    for line in &steps {
        let out = run_as_written(line, &dir, &bin);
        if line.starts_with("vernier ") || line.starts_with("./") {
            assert!(out.contains("sqrt"), "{line}:\n{out}");
        }
    }
}
