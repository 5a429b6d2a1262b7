//! `optimized-away` weighs its evidence: a body whose time cannot be told from the empty
//! loop's is counted under callgrind, and the count decides. A multiply of a volatile executes
//! 3 more instructions per iteration than the empty loop (it fits in the loop's own cycle, so
//! time alone cannot see it): not flagged. An empty body executes none: flagged, and the
//! message gives the counts. A lambda returning a constant executes one more, the move of the
//! folded constant into the register the barrier holds, which the loop's disassembly shows is
//! not work: flagged. The counts are kept in the result file, so `vernier analyze` reaches
//! the same verdicts. Run as a user runs it (the machine's speed file in use, a fresh one
//! here). Needs valgrind and objdump (CI installs them: `.ci/run`).

#[path = "common/cli.rs"]
mod cli;
#[path = "common/cpp.rs"]
mod cpp;

use cli::{text, vernier, vernier_with_speed_file};
use vernier::diagnostic::Code;
use vernier::result::ResultFile;

#[test]
fn an_instruction_count_tells_work_in_the_loop_s_cycle_from_a_removed_body() {
    let src = cpp::repo_root().join("crates/vernier-cli/tests/fixtures/cpp/fits_in_the_loop.cpp");
    let exe = cpp::compile("fits_in_the_loop", &[src], &["-O2"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = vernier_with_speed_file(dir.path())
        .args(["run", "--time", "0.3", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let f = ResultFile::load(&json).unwrap();
    let get = |f: &ResultFile, n: &str| f.benchmarks.iter().find(|b| b.name == n).unwrap().clone();
    let flagged = |b: &vernier::result::BenchmarkResult| {
        b.diagnostics.iter().any(|d| d.code == Code::OptimizedAway)
    };

    let empty = get(&f, "empty body");
    assert!(flagged(&empty), "{}", text(&o));
    let check = empty
        .instructions_check
        .expect("the empty body was counted under callgrind");
    assert!(check.removed(), "{check:?}");
    let d = empty
        .diagnostics
        .iter()
        .find(|d| d.code == Code::OptimizedAway)
        .unwrap();
    assert!(d.message.contains("callgrind counts"), "{}", d.message);

    // A folded constant: one instruction more than the empty loop, a register move.
    let folded = get(&f, "folded constant");
    assert!(flagged(&folded), "{}", text(&o));
    let check = folded
        .instructions_check
        .expect("the folded constant was counted under callgrind");
    assert!(check.removed(), "{check:?}");
    assert!(
        check.instructions_per_iter > check.empty_instructions_per_iter + 0.5
            && check.moves_per_iter.is_some_and(|m| m >= 0.5),
        "the count alone does not tell it from work: {check:?}"
    );
    let d = folded
        .diagnostics
        .iter()
        .find(|d| d.code == Code::OptimizedAway)
        .unwrap();
    assert!(d.message.contains("moves into a register"), "{}", d.message);

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
