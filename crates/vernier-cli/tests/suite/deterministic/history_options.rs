//! `vernier history`'s store and times, through the real binary, nothing measured: a result
//! file is stored at the time it was recorded (`recorded_at`), and `--db` before or after the
//! subcommand names the same store for every subcommand and for the listing's modes. Each
//! test has a data home of its own, so the default store is seen to be left alone.

use crate::common::cli::{text, vernier};
use crate::common::cpp::repo_root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};
use vernier::result::recorded::rfc3339_utc;

/// `vernier` with a data home of `home`'s own: its default store is `home/vernier/history.sqlite`.
fn vernier_in(home: &Path) -> Command {
    let mut c = vernier();
    c.env("XDG_DATA_HOME", home);
    c
}

fn default_store(home: &Path) -> PathBuf {
    home.join("vernier").join("history.sqlite")
}

/// The recorded run of the chain kernel (written before `recorded_at` was kept), with
/// `recorded_at` set to `at` when given, written to `dir/name`.
fn result_file(dir: &Path, name: &str, at: Option<&str>) -> PathBuf {
    let fixture = repo_root().join("crates/vernier/tests/fixtures/results/run-cpp-v0.1.0.json");
    let mut r: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    assert!(r.get("recorded_at").is_none());
    if let Some(at) = at {
        r["recorded_at"] = at.into();
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
    path
}

fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", text(o));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each stored point's (commit, time), oldest saved first.
fn points(home: &Path, db: &str) -> Vec<(String, String)> {
    let o = run(vernier_in(home).args(["history", "--json", "--db", db]));
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    h["series"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["commit"].as_str().unwrap().to_string(),
                p["time"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn history_save_stores_a_file_at_the_time_it_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    let week_ago = rfc3339_utc(SystemTime::now() - Duration::from_secs(7 * 86_400));
    let old = result_file(dir.path(), "week.json", Some(&week_ago));
    let err = ok(&run(vernier_in(&home)
        .args(["history", "save"])
        .arg(&old)
        .args(["--commit", "c1", "--db", &db])));
    let shown = format!("{} UTC", &week_ago[..16].replacen('T', " ", 1));
    assert!(
        err.contains(&format!(
            "recorded {shown}, 7 days ago: stored at that time"
        )),
        "{err}"
    );

    // Files written before `recorded_at` was kept: stored at the time of saving, said once.
    let (a, b) = (
        result_file(dir.path(), "a.json", None),
        result_file(dir.path(), "b.json", None),
    );
    let before = rfc3339_utc(SystemTime::now());
    let err = ok(&run(vernier_in(&home)
        .args(["history", "save"])
        .args([&a, &b])
        .args(["--commit", "c2", "--db", &db])));
    let after = rfc3339_utc(SystemTime::now());
    assert_eq!(err.matches("without recorded_at").count(), 1, "{err}");
    assert_eq!(err.matches("saved run").count(), 2, "{err}");

    let p = points(&home, &db);
    assert_eq!(p.len(), 3, "{p:?}");
    assert_eq!(p[0], ("c1".to_string(), week_ago.clone()));
    for (commit, time) in &p[1..] {
        assert_eq!(commit, "c2");
        assert!(
            before.as_str() <= time.as_str() && time.as_str() <= after.as_str(),
            "{time} not within [{before}, {after}]"
        );
    }

    // A time that is not one: refused with the fix, before anything is saved.
    let bad = result_file(dir.path(), "bad.json", Some("last Tuesday"));
    let o = run(vernier_in(&home)
        .args(["history", "save"])
        .args([&old, &bad])
        .args(["--commit", "c3", "--db", &db]));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.json")
            && err.contains("not an RFC 3339 time")
            && err.contains("nothing was saved"),
        "{err}"
    );
    assert_eq!(points(&home, &db).len(), 3);
    assert!(!default_store(&home).exists());
}

/// `history ARGS` with `--db db` before the subcommand (at index `at` of `args`) and after
/// it, each in a data home of its own: both succeed (or exit `code`), and the default store is
/// never made.
fn both_positions(dir: &Path, args: &[&str], at: usize, db: &str, code: i32) -> [Output; 2] {
    [true, false].map(|before| {
        let home = dir.join(format!("home-{}-{before}", args.join("-").replace('/', "")));
        let mut c = vernier_in(&home);
        c.arg("history");
        if before {
            c.args(&args[..at]).args(["--db", db]).args(&args[at..]);
        } else {
            c.args(args).args(["--db", db]);
        }
        let o = run(&mut c);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{args:?} before={before}: {}",
            text(&o)
        );
        assert!(
            !default_store(&home).exists(),
            "{args:?} before={before}: the default store was made"
        );
        o
    })
}

#[test]
fn db_before_or_after_the_subcommand_names_the_same_store_for_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = result_file(d, "r.json", Some(&rfc3339_utc(SystemTime::now())));
    let f = file.to_str().unwrap();

    // save: each position saves into the store named, whichever side of `save` it stands.
    for (i, before) in [true, false].into_iter().enumerate() {
        let db = format!("sqlite:{}", d.join(format!("save-{i}.sqlite")).display());
        let home = d.join(format!("home-save-{i}"));
        let mut c = vernier_in(&home);
        if before {
            c.args(["history", "--db", &db, "save", f, "--commit", "c1"]);
        } else {
            c.args(["history", "save", f, "--commit", "c1", "--db", &db]);
        }
        let err = ok(&run(&mut c));
        assert!(
            err.contains(&format!("to {}", &db["sqlite:".len()..])),
            "{err}"
        );
        assert_eq!(points(&home, &db).len(), 1);
        assert!(!default_store(&home).exists(), "before={before}");
    }
    let db = format!("sqlite:{}", d.join("save-0.sqlite").display());

    // The listing, check, and their modes read the store named (the default one does not
    // exist: reading it would fail).
    for (args, at, code) in [
        (&["check"][..], 0, 0),
        (&["check"][..], 1, 0),
        (&["--fleet", "--commit", "c1"][..], 0, 0),
        (&["check", "--fleet", "--commit", "c1"][..], 1, 0),
        (&["--machines"][..], 0, 0),
        (&["--json"][..], 0, 0),
    ] {
        both_positions(d, args, at, &db, code);
    }
    // `--commit` before `save` is save's commit.
    let home = d.join("home-commit");
    ok(&run(vernier_in(&home).args([
        "history", "--commit", "c9", "save", f, "--db", &db,
    ])));
    assert_eq!(points(&home, &db).last().unwrap().0, "c9");

    // migrate: the store named is made, not the default.
    let m = d.join("m.sqlite");
    let [o, _] = both_positions(d, &["migrate"], 0, &format!("sqlite:{}", m.display()), 0);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("history store {}", m.display())),
        "{}",
        text(&o)
    );

    // bisect --instructions opens its store before the first build: the store named is made
    // (and then the directory, not a git repository, ends the bisection).
    let bisect = [
        "bisect",
        "--instructions",
        "--good",
        "a",
        "--bad",
        "b",
        "--build",
        "true",
        "--",
        "p",
    ];
    for before in [true, false] {
        let b = d.join(format!("bisect-{before}.sqlite"));
        let home = d.join(format!("home-bisect-{before}"));
        let db = format!("sqlite:{}", b.display());
        let mut c = vernier_in(&home);
        c.current_dir(d).arg("history");
        if before {
            c.args(["--db", &db]).args(bisect);
        } else {
            let (head, tail) = bisect.split_at(bisect.len() - 2);
            c.args(head).args(["--db", &db]).args(tail);
        }
        let o = run(&mut c);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(b.exists(), "before={before}: {}", text(&o));
        assert!(!default_store(&home).exists(), "before={before}");
    }
}

#[test]
fn an_option_given_twice_or_to_a_subcommand_without_it_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = result_file(d, "r.json", None);
    let (a, b) = (
        format!("sqlite:{}", d.join("a.sqlite").display()),
        format!("sqlite:{}", d.join("b.sqlite").display()),
    );
    let home = d.join("home");
    for (args, needle) in [
        (
            vec!["--db", &a, "save", "--db", &b, "--commit", "c"],
            "--db is given twice with two values",
        ),
        (
            vec!["--json", "save", "--commit", "c"],
            "`history save` takes no --json",
        ),
        (
            vec!["--filter", "x", "migrate"],
            "`history migrate` takes no --filter",
        ),
        (
            vec!["save", "--db", &a],
            "history save needs --commit COMMIT",
        ),
    ] {
        let mut c = vernier_in(&home);
        c.arg("history").args(&args);
        if args.contains(&"save") {
            c.arg(&file);
        }
        let o = run(&mut c);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}: {}",
            text(&o)
        );
    }
    assert!(!d.join("a.sqlite").exists() && !d.join("b.sqlite").exists());
    assert!(!default_store(&home).exists());
}

/// `recorded_at` of the result file at `path`, which must be there.
fn recorded_at(path: &Path) -> String {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["recorded_at"]
        .as_str()
        .unwrap_or_else(|| panic!("no recorded_at in {}", path.display()))
        .to_string()
}

/// The result files of `demo` (measured in process, as `cargo bench` is) and of `exec` with
/// one command carry the time their measuring started, `analyze` keeps it, and `--save`
/// stores the run at it. Only the times' order is asserted, never a duration.
#[test]
fn every_result_file_says_when_it_was_recorded_and_save_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = d.join("home");
    let db = format!("sqlite:{}", d.join("h.sqlite").display());
    let (demo, exec, again) = (
        d.join("demo.json"),
        d.join("exec.json"),
        d.join("again.json"),
    );
    let before = rfc3339_utc(SystemTime::now());
    ok(&run(vernier_in(&home)
        .args(["demo", "--quick", "--filter", "^add$", "--counters", "none"])
        .args(["--save", "--db", &db, "--commit", "c1", "--json"])
        .arg(&demo)));
    ok(&run(vernier_in(&home)
        .args(["exec", "-r", "3", "true", "--json"])
        .arg(&exec)));
    let after = rfc3339_utc(SystemTime::now());
    for f in [&demo, &exec] {
        let at = recorded_at(f);
        assert!(
            before <= at && at <= after,
            "{}: {at} not within [{before}, {after}]",
            f.display()
        );
    }
    // `--save` stored the demo at its recorded time.
    let o = run(vernier_in(&home).args(["history", "--json", "--db", &db]));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        h["series"][0]["points"][0]["time"],
        recorded_at(&demo),
        "{h}"
    );
    // Analysed again, the file keeps the time it was measured.
    ok(&run(vernier_in(&home)
        .arg("analyze")
        .arg(&demo)
        .arg("--json")
        .arg(&again)));
    assert_eq!(recorded_at(&again), recorded_at(&demo));
}
