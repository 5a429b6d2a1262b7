//! The history store as a user fills it, measuring: a 5 % step (100 then 105 dependent adds)
//! saved run by run with the machine's ledger in use is never found before the step nor
//! in the wrong direction, and `compare --baseline` never finds 110 adds faster than the 100
//! stored. What is exact about the store is tested in `history.rs`.

use crate::common::{cli, history};

use cli::{text, vernier, vernier_with_ledger};
use history::{change_points, check, history, kernels, run_saved};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Seven runs at c1–c4 (100 adds) and c5–c7 (`after` adds) saved into `db`, one run per
/// commit and none run again: a run on a slowed core is kept, shown, and not used as evidence.
/// Returns the result files, in order.
fn seven_commits(db: &str, dir: &Path, after: u32, ledger: Option<&Path>) -> Vec<PathBuf> {
    let (k100, slower) = (kernels(100), kernels(after));
    let mut files = Vec::new();
    for i in 1..=7 {
        let exe = if i <= 4 { &k100 } else { &slower };
        let json = dir.join(format!("c{i}.json"));
        run_saved(exe, db, &format!("c{i}"), &json, ledger);
        files.push(json);
        if i == 4 {
            assert_eq!(check(db), 0, "c1–c4: the same code, no regression");
        }
    }
    files
}

/// Runs saved with the machine's ledger in use carry a headline interval joined to the
/// clock range of the machine's recent runs (several percent wide); the change points are
/// detected on the runs' own intervals and the spread between runs, so a 5 % step (100 then
/// 105 dependent adds) is found at its commit.
#[test]
fn a_5_percent_step_is_found_with_the_machine_s_ledger_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    // The ledger as a user's is after some use: the three kernels run seven times record
    // 21 speeds (`MIN_CLOCK_RUNS` is 20), so the saved runs' intervals cover the clock range.
    for _ in 0..7 {
        let o = vernier_with_ledger(dir.path())
            .args(["run", "--quick", "--counters", "none", "--"])
            .arg(kernels(100))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let files = seven_commits(&db, dir.path(), 105, Some(dir.path()));
    let last: Value =
        serde_json::from_slice(&std::fs::read(files.last().unwrap()).unwrap()).unwrap();
    assert!(
        last["harness"]["clock_ghz"].is_array(),
        "the clock range is in use: {}",
        last["harness"]
    );
    // What holds in any state of the machine: no change point before the step (c1–c4 also
    // passed `history check` above), and none in the wrong direction. On a quiet machine the
    // step is found at c5, ×1.03–1.08 (105 adds against 100, plus the loop around them); a
    // run on a slowed core is not evidence, so the step is found at the first run after it
    // that is; with the machine loaded, seven runs may not be evidence enough, and then
    // nothing is claimed.
    let cps = change_points(&db);
    let shown = text(&history(&db, &[]));
    assert!(cps.len() <= 1, "{cps:?}\n{shown}");
    match cps.first() {
        Some((commit, ratio, ci)) => {
            let at: usize = commit[1..].parse().unwrap();
            assert!((5..=7).contains(&at), "{cps:?}\n{shown}");
            for skipped in &files[4..at - 1] {
                let r: Value = serde_json::from_slice(&std::fs::read(skipped).unwrap()).unwrap();
                assert!(
                    r["benchmarks"][0]["diagnostics"]
                        .as_array()
                        .is_some_and(|d| d.iter().any(|d| d["code"] == "core-slowed")),
                    "{} is evidence, yet the step was found after it: {cps:?}\n{shown}",
                    skipped.display()
                );
            }
            assert!((1.0..1.16).contains(ratio), "{cps:?}");
            assert!(ci[0] < *ratio && *ratio < ci[1] && ci[0] > 1.0, "{cps:?}");
            assert_eq!(check(&db), 2, "{shown}");
        }
        None => assert_eq!(check(&db), 0, "{shown}"),
    }
}

#[test]
fn compare_baseline_measures_new_against_the_stored_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    run_saved(
        &kernels(100),
        &db,
        "base",
        &dir.path().join("base.json"),
        None,
    );
    let out = dir.path().join("cmp.json");
    let o = vernier()
        .args([
            "compare",
            "--baseline",
            "base",
            "--quick",
            "--filter",
            "^chain$",
        ])
        .args(["--db", &db, "--json"])
        .arg(&out)
        .arg(kernels(110))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("unpaired"), "{stdout}");
    let c: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(c["mode"], "unpaired");
    // What holds in any state of the machine (the stored run and this one are measured at
    // different times, unpaired): 110 adds are never found faster than 100.
    let cmp = &c["comparisons"][0];
    assert_ne!(cmp["verdict"], "faster", "{c}");
    if cmp["verdict"] == "slower" {
        assert!(cmp["ratio"].as_f64().unwrap() > 1.0, "{c}");
    }
    // A reference that is not stored is refused before anything is measured.
    let o = vernier()
        .args(["compare", "--baseline", "nope", "--db", &db])
        .arg(kernels(110))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no stored run at commit or branch 'nope'"),
        "{}",
        text(&o)
    );
}

/// Runs counted under callgrind (`run --instructions --save`) form their own series, judged in
/// instructions, whose counts repeat exactly: 100 then 101 dependent adds (a few instructions
/// more per iteration) give one change point, at c5, with any number of runs of c1–c4 before
/// it and none among them; `history check` passes after c4 and fails after c7. Beside them,
/// a timed run of the same benchmark stays in a series of its own.
#[test]
fn counted_runs_are_a_series_of_their_own_whose_one_change_point_is_exact() {
    let has_valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        has_valgrind,
        "valgrind is not installed: apt-get install valgrind (bash .ci/run installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    // The chain example: CHAIN_N dependent adds per iteration, read from the environment.
    let chain = crate::common::cpp::example("chain");
    let save = |chain_n: u32, commit: &str, counted: bool| {
        let mode: &[&str] = if counted {
            &["--instructions"]
        } else {
            &["--quick"]
        };
        let o = vernier()
            .arg("run")
            .args(mode)
            .args(["--save", "--db", &db, "--commit", commit, "--"])
            .arg(&chain)
            .env("CHAIN_N", chain_n.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    };
    // c1–c4 twice over: the same counts, no change point.
    for round in 0..2 {
        for i in 1..=4 {
            save(100, &format!("c{i}"), true);
        }
        assert_eq!(check(&db), 0, "round {round}: c1–c4 are the same code");
    }
    // A timed run of the same benchmark: its own series, not mixed with the counts.
    save(100, "c4", false);
    for i in 5..=7 {
        save(101, &format!("c{i}"), true);
    }
    let o = history(&db, &["--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    let series = h["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "a counted and a timed series: {h}");
    let counted = series
        .iter()
        .find(|s| s["unit"] == "instructions")
        .expect("a series judged in instructions");
    assert_eq!(counted["points"].as_array().unwrap().len(), 11);
    let cps = counted["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{counted}");
    assert_eq!(cps[0]["commit"], "c5");
    assert!(cps[0]["ratio"].as_f64().unwrap() > 1.0, "{counted}");
    assert_eq!(
        check(&db),
        2,
        "c7 sits after a slower change in the counted series"
    );
}
