//! `vernier history bisect` on a repository the test makes: 16 commits of a benchmark program,
//! the chain of dependent adds lengthened by 5 % (100 → 105) at a known commit, the other
//! commits touching another file. The commit is named in at most 6 builds, timed and counted;
//! a build that fails is skipped, never blamed; bad input gets a clear error.

use crate::common::cli::{text, vernier};
use crate::common::cpp::repo_root;
use std::path::Path;
use std::process::Command;

/// The commit (1-based, of 16 after the first) that lengthens the chain.
const SLOWER_AT: usize = 11;

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A repository: the good commit, then 16 commits; the chain is 105 adds from commit
/// `SLOWER_AT` on; `broken` commits do not compile. Returns (good, bad, the slower commit).
fn repository(dir: &Path, broken: &[usize]) -> (String, String, String) {
    let include = repo_root().join("include");
    std::fs::copy(
        repo_root().join("examples/cpp/add_chain.hpp"),
        dir.join("add_chain.hpp"),
    )
    .unwrap();
    std::fs::write(
        dir.join("bench.cpp"),
        "#include \"add_chain.hpp\"\n#include \"chain_n.hpp\"\n\
         int main(int argc, char** argv) {\n\
             vernier::bench(\"chain\", [acc = std::uint64_t{0}]() mutable {\n\
                 acc = examples::add_chain(acc, CHAIN_N);\n\
                 return acc;\n\
             });\n\
             return vernier::main(argc, argv);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("build.sh"),
        format!(
            "g++ -O1 -std=c++17 -I{} -I. bench.cpp -o bench\n",
            include.display()
        ),
    )
    .unwrap();
    git(dir, &["init", "-q"]);
    let commit = |i: usize, chain: u32| {
        let mut n = format!("#define CHAIN_N {chain}\n");
        if broken.contains(&i) {
            n.push_str("this does not compile\n");
        }
        std::fs::write(dir.join("chain_n.hpp"), n).unwrap();
        std::fs::write(dir.join("NOTES"), format!("change {i}\n")).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("change {i}")]);
        git(dir, &["rev-parse", "HEAD"])
    };
    let good = commit(0, 100);
    let mut slower = String::new();
    let mut bad = String::new();
    for i in 1..=16 {
        bad = commit(i, if i >= SLOWER_AT { 105 } else { 100 });
        if i == SLOWER_AT {
            slower = bad.clone();
        }
    }
    (good, bad, slower)
}

fn bisect(dir: &Path, good: &str, bad: &str, extra: &[&str]) -> std::process::Output {
    vernier()
        .current_dir(dir)
        .args([
            "history",
            "bisect",
            "--good",
            good,
            "--bad",
            bad,
            "--build",
            "sh build.sh",
        ])
        .args(extra)
        .args(["--", "bench"])
        .output()
        .unwrap()
}

/// How many builds the run says it made.
fn builds(stdout: &str) -> usize {
    let at = stdout
        .find(" builds for ")
        .unwrap_or_else(|| panic!("{stdout}"));
    let head = &stdout[..at];
    head[head.rfind('(').unwrap() + 1..].parse().unwrap()
}

#[test]
fn the_commit_that_slowed_the_chain_is_named_in_at_most_six_builds_timed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad, slower) = repository(dir.path(), &[]);
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    for extra in [&["--time", "0.5"][..], &["--instructions", "--db", &db][..]] {
        let o = bisect(dir.path(), &good, &bad, extra);
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{extra:?}: {}", text(&o));
        assert!(
            stdout.contains(&format!(
                "first commit where it moved: {slower} change {SLOWER_AT}"
            )),
            "{extra:?}: {stdout}"
        );
        assert!(builds(&stdout) <= 6, "{extra:?}: {stdout}");
    }
    // The counts were saved under their commits as the bisection went.
    let o = vernier()
        .args(["history", "--db", &db, "--json"])
        .output()
        .unwrap();
    let h: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        h["series"][0]["points"].as_array().unwrap().len() >= 4,
        "{h}"
    );
}

#[test]
fn a_failing_build_is_skipped_and_bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // The commits the search would look at first do not compile: they are skipped.
    let (good, bad, slower) = repository(dir.path(), &[8, 9, 12]);
    let o = bisect(
        dir.path(),
        &good,
        &bad,
        &[
            "--instructions",
            "--db",
            &format!("sqlite:{}", dir.path().join("h.sqlite").display()),
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout.contains(&slower), "{stdout}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("skipped, not blamed"),
        "{}",
        text(&o)
    );
    // Not a range, not a commit, a dirty work tree.
    let o = bisect(dir.path(), &bad, &good, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("is not a range"), "{}", text(&o));
    let o = bisect(
        dir.path(),
        &good,
        &bad,
        &["--filter", "nomatch", "--time", "0.2"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("--filter 'nomatch' selects none"),
        "{}",
        text(&o)
    );
    let o = bisect(dir.path(), "nope", &bad, &[]);
    assert!(
        text(&o).contains("--good nope: not a commit"),
        "{}",
        text(&o)
    );
    std::fs::write(dir.path().join("NOTES"), "dirty\n").unwrap();
    let o = bisect(dir.path(), &good, &bad, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("commit or stash"), "{}", text(&o));
}
