//! `optimized-away` weighs its evidence: a body whose time cannot be told from the empty
//! loop's is counted under callgrind, and the count decides. A multiply of a volatile executes
//! 3 more instructions per iteration than the empty loop (it fits in the loop's own cycle, so
//! time alone cannot see it): not flagged. An empty body executes none: flagged, and the
//! message gives the counts. A lambda returning a constant executes one more, the move of the
//! folded constant into the register the barrier holds, which the loop's disassembly shows is
//! not work: flagged. The counts are kept in the result file, so `vernier analyze` reaches
//! the same verdicts. A threaded constant is flagged at one thread and at two. Run as a user
//! runs it (the machine's ledger in use, a fresh one
//! here). Needs valgrind and objdump (CI installs them: `.ci/run`).

use crate::common::{cli, cpp, rust_examples};

use cli::{text, vernier, vernier_with_ledger};
use std::path::PathBuf;
use std::process::Output;
use vernier::analyze::InstructionsCheck;
use vernier::diagnostic::Code;
use vernier::result::{BenchmarkResult, ResultFile};

/// `vernier run OPTIONS --json FILE -- FIXTURE` of the C++ fixture `name` (built at -O2) with a
/// ledger of its own, `env` set, which must succeed; its directory, output and result file.
fn run_fixture(
    name: &str,
    options: &[&str],
    env: &[(&str, &str)],
) -> (tempfile::TempDir, Output, PathBuf) {
    let src = cpp::repo_root().join(format!("crates/vernier-cli/tests/fixtures/cpp/{name}.cpp"));
    let exe = cpp::compile(name, &[src], &["-O2"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = vernier_with_ledger(dir.path())
        .envs(env.iter().copied())
        .arg("run")
        .args(options)
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    (dir, o, json)
}

/// The benchmark `b` of the run whose output is `o`, flagged `optimized-away` on its callgrind
/// count (kept in the result), the flag's message saying `says`: the count.
fn removed_by_its_count(b: &BenchmarkResult, says: &str, o: &Output) -> InstructionsCheck {
    let d = b
        .diagnostics
        .iter()
        .find(|d| d.code == Code::OptimizedAway)
        .unwrap_or_else(|| panic!("{} is not flagged\n{}", b.name, text(o)));
    assert!(d.message.contains(says), "{}", d.message);
    let check = b
        .instructions_check
        .unwrap_or_else(|| panic!("{} was not counted under callgrind", b.name));
    assert!(check.removed(), "{check:?}");
    check
}

#[test]
fn an_instruction_count_tells_work_in_the_loop_s_cycle_from_a_removed_body() {
    let (dir, o, json) = run_fixture("fits_in_the_loop", &["--time", "0.3"], &[]);
    let f = ResultFile::load(&json).unwrap();
    let get = |f: &ResultFile, n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap().clone();
    let flagged = |b: &vernier::result::BenchmarkResult| {
        b.diagnostics.iter().any(|d| d.code == Code::OptimizedAway)
    };

    removed_by_its_count(&get(&f, "empty body"), "callgrind counts", &o);

    // A folded constant: one instruction more than the empty loop, a register move.
    let check = removed_by_its_count(&get(&f, "folded constant"), "moves into a register", &o);
    assert!(
        check.instructions_per_iter > check.empty_instructions_per_iter + 0.5
            && check.moves_per_iter.is_some_and(|m| m >= 0.5),
        "the count alone does not tell it from work: {check:?}"
    );

    // Real work, whether or not its time stood out from the empty loop's this time.
    let times7 = get(&f, "volatile times 7");
    assert!(!flagged(&times7), "{}", text(&o));
    if let Some(c) = times7.instructions_check {
        assert!(!c.removed(), "{c:?}");
        assert!(
            c.instructions_per_iter >= c.empty_instructions_per_iter + 2.0,
            "{c:?}"
        );
    }

    // Offline, the stored counts weigh the same.
    let again = dir.path().join("again.json");
    let o = vernier()
        .arg("analyze")
        .arg(&json)
        .arg("--json")
        .arg(&again)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let g = ResultFile::load(&again).unwrap();
    for name in ["empty body", "volatile times 7", "folded constant"] {
        let (a, b) = (get(&f, name), get(&g, name));
        assert_eq!(a.instructions_check, b.instructions_check, "{name}");
        let codes = |b: &vernier::result::BenchmarkResult| {
            b.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>()
        };
        assert_eq!(codes(&a), codes(&b), "{name}");
    }
}

/// Small bodies as a user writes them, at default options: the count decides for every body
/// within a few cycles of the empty loop, whatever this host's loop costs. The two folded
/// constants are flagged, with the count as the evidence; the one to three cycles of real work
/// are not.
#[test]
fn folded_constants_are_flagged_and_small_work_is_not_at_default_options() {
    let (_dir, o, json) = run_fixture("small_bodies", &[], &[]);
    let f = ResultFile::load(&json).unwrap();
    for b in &f.benchmarks {
        let flagged = b.diagnostics.iter().any(|d| d.code == Code::OptimizedAway);
        let folded = b.name.starts_with("folded");
        assert_eq!(flagged, folded, "{}: {}", b.name, text(&o));
        if folded {
            let c = b
                .instructions_check
                .unwrap_or_else(|| panic!("{} was not counted: {}", b.name, text(&o)));
            assert!(c.removed(), "{}: {c:?}", b.name);
        } else if let Some(c) = b.instructions_check {
            assert!(
                c.working_per_iter() > c.empty_instructions_per_iter + 0.5,
                "{c:?}"
            );
        }
    }
    assert_eq!(f.benchmarks.len(), 5, "{}", text(&o));
}

/// A threaded body that returns a constant is removed at every thread count: at one thread its
/// time is the empty loop's, at two the release and the threads' waits lift it, and the count
/// per thread (callgrind counts the loop in both threads) decides. Its rows show no rate and no
/// code that only restates the removal; a body adding the thread's index to a value the
/// barrier hides is never flagged. The harness's threaded loops are dumped in the shared
/// callgrind process, and a note about the harness would be said once.
#[test]
fn a_threaded_constant_is_flagged_at_every_thread_count_with_no_rate() {
    let (_dir, o, json) = run_fixture("threaded_bodies", &["--time", "0.3"], &[]);
    let f = ResultFile::load(&json).unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    for t in [1, 2] {
        let name = format!("constant/threads:{t}");
        let b = f.benchmarks.iter().find(|b| b.name == name).unwrap();
        assert!(b.removed(), "{name}: {}", text(&o));
        let check = b
            .instructions_check
            .unwrap_or_else(|| panic!("{name} was not counted: {}", text(&o)));
        assert!(check.removed(), "{name}: {check:?}");
        assert!(
            b.diagnostics.iter().all(|d| !d.code.restates_removed()),
            "{name}: {:?}",
            b.diagnostics
        );
        // Its row, and no throughput line under it.
        let mut lines = stdout.lines().skip_while(|l| !l.starts_with(&name));
        assert!(lines.next().is_some(), "{name}: {}", text(&o));
        let next = lines.next().unwrap_or("");
        assert!(
            !next.contains("ops/s") && !next.contains("per op"),
            "{name}: {}",
            text(&o)
        );

        let name = format!("index plus k/threads:{t}");
        let b = f.benchmarks.iter().find(|b| b.name == name).unwrap();
        assert!(!b.removed(), "{name}: {}", text(&o));
        if let Some(c) = b.instructions_check {
            assert!(!c.removed(), "{name}: {c:?}");
        }
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr
            .matches("sampling function is not one callgrind")
            .count()
            <= 1,
        "{}",
        text(&o)
    );
}

/// The same in Rust: `bench_threads("constant", &[1, 2], |_| 0u64)` of the sharing example,
/// whose loop hands the closure, the thread's index and the constant to `black_box` through a
/// stack slot (moves of values the loop holds), is flagged at one thread and at two; the
/// private counters beside it are not.
#[test]
fn a_rust_threaded_constant_is_flagged_at_every_thread_count() {
    let exe = rust_examples::examples().join("sharing");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let (o, f) = cli::run_json(
        vernier_with_ledger(dir.path()),
        &["--time", "0.3", "--filter", "constant|private"],
        &json,
        &exe,
    );
    for b in &f.benchmarks {
        let constant = b.name.starts_with("constant/");
        assert_eq!(b.removed(), constant, "{}: {}", b.name, text(&o));
        if constant {
            let c = b
                .instructions_check
                .unwrap_or_else(|| panic!("{} was not counted: {}", b.name, text(&o)));
            assert!(c.removed(), "{}: {c:?}", b.name);
        }
    }
    assert_eq!(f.benchmarks.len(), 4, "{}", text(&o));
}

/// Without valgrind, a body near the empty loop's time cannot be counted: the line under the
/// table names it and says that its verdict rests on time alone, and how to install valgrind.
#[test]
fn without_valgrind_a_verdict_near_the_empty_loop_says_it_rests_on_time_alone() {
    let (_dir, o, _) = run_fixture(
        "small_bodies",
        &["--quick", "--filter", "folded integer"],
        &[("VERNIER_VALGRIND", "/nonexistent/valgrind")],
    );
    let out = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        out.contains("`folded integer` ran within a few cycles of the empty loop")
            && out.contains("rests on time alone")
            && out.contains("apt-get install valgrind"),
        "{}",
        text(&o)
    );
}
