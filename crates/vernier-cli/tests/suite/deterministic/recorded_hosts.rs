//! Result files recorded on a host whose core clock moves (an Intel Xeon KVM guest, the core
//! at 2.5–2.9 GHz, no PMU), re-derived with today's rules by `vernier analyze`: the verdicts
//! hold on a host the rules were not tuned on. Deterministic: the raw samples are fixed.
//! (`tests/fixtures/intel-vm/`: `kernels/runN` are five `vernier run` of
//! `examples/cpp/kernels.cpp`, trimmed to its add chain and `sqrt`; `chain-history/cN` seven
//! `vernier run --quick` of `examples/cpp/chain.cpp`, 100 additions for c1–c4 and 105 from
//! c5; `demo` one `vernier demo`. Gzipped.)

use crate::common::cli;

use cli::{text, vernier};
use std::path::{Path, PathBuf};
use vernier::analyze::Unit;
use vernier::diagnostic::Code;
use vernier::result::{BenchmarkResult, ResultFile};

/// The recorded file `rel` (under `fixtures/intel-vm/`, without `.gz`) as it was written,
/// unpacked into `dir`.
fn recorded(rel: &str, dir: &Path) -> PathBuf {
    recorded_on("intel-vm", rel, dir)
}

/// The file `rel` recorded on `host` (under `fixtures/HOST/`, without `.gz`), unpacked into
/// `dir`.
pub(super) fn recorded_on(host: &str, rel: &str, dir: &Path) -> PathBuf {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(host)
        .join(format!("{rel}.gz"));
    let raw = dir.join(rel.replace('/', "-"));
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(out.status.success(), "gzip -dc {}", gz.display());
    std::fs::write(&raw, out.stdout).unwrap();
    raw
}

/// The recorded file `rel` re-derived with `vernier analyze` into `dir`.
fn rederived(rel: &str, dir: &Path) -> PathBuf {
    rederived_on("intel-vm", rel, dir)
}

/// The file `rel` recorded on `host` re-derived with `vernier analyze` into `dir`.
pub(super) fn rederived_on(host: &str, rel: &str, dir: &Path) -> PathBuf {
    let raw = recorded_on(host, rel, dir);
    let json = dir.join(format!("again-{}", rel.replace('/', "-")));
    let o = vernier()
        .arg("analyze")
        .arg(&raw)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    json
}

/// The codes a benchmark carries about itself (a condition of the machine aside).
fn own_flags(b: &BenchmarkResult) -> Vec<Code> {
    b.diagnostics
        .iter()
        .map(|d| d.code)
        .filter(|c| *c != Code::CountersUnavailable)
        .collect()
}

/// A benchmark's median and next-run interval in its headline unit.
fn in_headline_unit(b: &BenchmarkResult) -> (f64, [f64; 2]) {
    match (b.headline_unit, b.speed.as_ref()) {
        (Unit::Cycles, Some(s)) => (s.cycles_per_iter.unwrap(), s.cycles_ci95.unwrap()),
        _ => (b.per_iter.median_ns, b.per_iter.ci95_ns),
    }
}

#[test]
fn the_add_chain_and_sqrt_are_judged_in_cycles_and_rarely_flagged_and_their_intervals_cover() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<ResultFile> = (1..=5)
        .map(|i| ResultFile::load(&rederived(&format!("kernels/run{i}.json"), dir.path())).unwrap())
        .collect();
    for name in ["chain", "sqrt"] {
        let of: Vec<&BenchmarkResult> = runs
            .iter()
            .map(|f| f.benchmarks.iter().find(|b| b.name == name).unwrap())
            .collect();
        // Code bound by the core, on a clock that moved: judged in cycles every time.
        assert!(
            of.iter().all(|b| b.headline_unit == Unit::Cycles),
            "{name}: {:?}",
            of.iter().map(|b| b.headline_unit).collect::<Vec<_>>()
        );
        let flagged = of.iter().filter(|b| !own_flags(b).is_empty()).count();
        assert!(
            flagged <= 1,
            "{name}: flagged in {flagged} of 5: {:?}",
            of.iter().map(|b| own_flags(b)).collect::<Vec<_>>()
        );
        let mut medians: Vec<f64> = of.iter().map(|b| in_headline_unit(b).0).collect();
        medians.sort_by(f64::total_cmp);
        let median_of_five = medians[2];
        for b in of.iter().filter(|b| own_flags(b).is_empty()) {
            let (m, [lo, hi]) = in_headline_unit(b);
            assert!(
                lo <= median_of_five && median_of_five <= hi,
                "{name}: {m} [{lo}, {hi}] misses the median of five runs {median_of_five}"
            );
        }
    }
}

/// `vernier history save FILES --commit C --branch main --db DB [EXTRA]`.
fn history_save(files: &[&Path], commit: &str, db: &str, extra: &[&str]) -> std::process::Output {
    vernier()
        .args(["history", "save"])
        .args(files)
        .args(["--commit", commit, "--branch", "main", "--db", db])
        .args(extra)
        .output()
        .unwrap()
}

/// The URL of a history store in `dir`.
fn store_in(dir: &Path) -> String {
    format!("sqlite:{}", dir.join("store.sqlite").display())
}

/// `vernier history --json --db DB`: the document.
fn history_json(db: &str) -> serde_json::Value {
    let o = vernier()
        .args(["history", "--json", "--db", db])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn history_check(db: &str) -> std::process::Output {
    vernier()
        .args(["history", "check", "--db", db])
        .output()
        .unwrap()
}

/// The recorded file `rel` re-derived by `vernier analyze --runs-of kernels` with the ledger
/// in `dir`: weighed against the runs re-derived before it, as `vernier run` weighed it.
fn replayed(rel: &str, dir: &Path) -> (ResultFile, String) {
    replayed_by(cli::vernier_with_ledger(dir), rel, dir)
}

/// [`replayed`] by `vernier`, with the ledger its environment names.
fn replayed_by(mut vernier: std::process::Command, rel: &str, dir: &Path) -> (ResultFile, String) {
    let raw = rederived(rel, dir);
    let json = dir.join(format!("replayed-{}", rel.replace('/', "-")));
    let o = vernier
        .arg("analyze")
        .arg(&raw)
        .args(["--runs-of", "kernels", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    (
        ResultFile::load(&json).unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn replayed_in_order_each_run_is_weighed_against_the_ones_before_and_covers_their_centre() {
    let dir = tempfile::tempdir().unwrap();
    let (runs, said): (Vec<ResultFile>, Vec<String>) = (1..=5)
        .map(|i| replayed(&format!("kernels/run{i}.json"), dir.path()))
        .unzip();
    for (i, f) in runs.iter().enumerate() {
        assert!(f.harness.earlier_runs_read, "run {}", i + 1);
    }
    // The first run says what its intervals cannot know yet.
    assert!(
        said[0].contains("not yet how far the level moves between invocations"),
        "{}",
        said[0]
    );
    for name in ["chain", "sqrt"] {
        let of: Vec<&BenchmarkResult> = runs
            .iter()
            .map(|f| f.benchmarks.iter().find(|b| b.name == name).unwrap())
            .collect();
        // The first two runs have fewer than two earlier ones; the file says the ledger
        // was read, so the report says what the interval cannot know yet.
        assert!(of[0].earlier_runs.is_none() && of[1].earlier_runs.is_none());
        let kept = of[..2].iter().filter(|b| own_flags(b).is_empty()).count();
        if kept == 2 {
            assert!(of[2].earlier_runs.is_some(), "{name}: run 3");
        }
        let mut medians: Vec<f64> = of.iter().map(|b| in_headline_unit(b).0).collect();
        medians.sort_by(f64::total_cmp);
        let centre = medians[2];
        for (i, b) in of.iter().enumerate().skip(2) {
            if !own_flags(b).is_empty() {
                continue;
            }
            let (m, [lo, hi]) = in_headline_unit(b);
            assert!(
                lo <= centre && centre <= hi,
                "{name} run {}: {m} [{lo}, {hi}] misses the median of five {centre}",
                i + 1
            );
            // Joined to the levels before it, widened by half their spread: never narrower
            // than their range.
            if let Some(c) = b.earlier_runs.and_then(|e| e.median_cycles) {
                assert!(lo <= c[0] && c[1] <= hi, "{name} run {}: {c:?}", i + 1);
            }
        }
    }
}

#[test]
fn recorded_files_saved_as_they_are_are_judged_by_todays_rules_one_change_point_at_c5() {
    // The files as the earlier version wrote them (judged in ns, every run flagged
    // core-slowed), with no `analyze` step: `history save` re-derives them itself.
    let dir = tempfile::tempdir().unwrap();
    let db = store_in(dir.path());
    let save = |c: usize| {
        let file = recorded(&format!("chain-history/c{c}.json"), dir.path());
        let o = history_save(&[&file], &format!("c{c}"), &db, &[]);
        assert!(o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("re-derived 1 file(s) from their raw samples with this version's rules")
                && err.contains("--as-recorded"),
            "{err}"
        );
    };
    for c in 1..=4 {
        save(c);
    }
    let o = history_check(&db);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for c in 5..=7 {
        save(c);
    }
    let h = history_json(&db);
    let s = &h["series"][0];
    assert_eq!(h["series"].as_array().unwrap().len(), 1, "{h}");
    assert_eq!(s["unit"], "cycles", "{s}");
    let cps = s["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{s}");
    assert_eq!(cps[0]["commit"], "c5", "{s}");
    let ratio = cps[0]["ratio"].as_f64().unwrap();
    assert!((1.03..=1.08).contains(&ratio), "{ratio}");
    let o = history_check(&db);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("since commit c5"), "{}", text(&o));
}

#[test]
fn as_recorded_stores_the_files_own_figures_and_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_in(dir.path());
    let files: Vec<PathBuf> = (1..=2)
        .map(|c| recorded(&format!("chain-history/c{c}.json"), dir.path()))
        .collect();
    for (c, file) in files.iter().enumerate() {
        let o = history_save(&[file], &format!("c{}", c + 1), &db, &["--as-recorded"]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(!text(&o).contains("re-derived"), "{}", text(&o));
    }
    let h = history_json(&db);
    let points = h["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{h}");
    for (p, file) in points.iter().zip(&files) {
        let b = &ResultFile::load(file).unwrap().benchmarks[0];
        let codes: Vec<String> = b.diagnostics.iter().map(|d| d.code.to_string()).collect();
        let flags: Vec<String> = serde_json::from_value(p["flags"].clone()).unwrap();
        assert_eq!(flags, codes, "{p}");
        assert_eq!(p["median_ns"].as_f64(), Some(b.per_iter.median_ns), "{p}");
    }
    // The recorded verdicts: judged in ns, as the version that wrote the files judged them.
    assert_eq!(h["series"][0]["unit"], "ns", "{h}");
}

#[test]
fn history_save_refuses_a_bad_file_by_name_and_saves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = recorded("chain-history/c1.json", dir.path());
    let bad = dir.path().join("truncated.json");
    std::fs::write(&bad, "{\"schema\": 1, \"benchm").unwrap();
    let db = dir.path().join("store.sqlite");
    let o = history_save(&[&good, &bad], "c1", db.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("truncated.json") && err.contains("nothing was saved"),
        "{err}"
    );
    assert!(!db.exists(), "a store was written");
}

#[test]
fn history_save_names_a_file_of_another_kind_and_what_to_save_instead() {
    let dir = tempfile::tempdir().unwrap();
    let good = recorded("chain-history/c1.json", dir.path());
    let db = dir.path().join("store.sqlite");
    // Each kind told by its top-level fields, as every command that takes a file tells them.
    for (kind, json, said) in [
        (
            "comparison",
            r#"{"schema": 1, "comparisons": []}"#,
            "vernier compare --json",
        ),
        (
            "history",
            r#"{"series": [], "machines": []}"#,
            "vernier history --json",
        ),
        (
            "sweep",
            r#"{"schema": 1, "env_pad": {}, "points": []}"#,
            "vernier sweep --json",
        ),
        (
            "profile",
            r#"{"profile": "exact", "benchmarks": []}"#,
            "vernier profile --json",
        ),
        (
            "gbench",
            r#"{"context": {}, "benchmarks": [{"real_time": 1.0}]}"#,
            "Google Benchmark",
        ),
    ] {
        let other = dir.path().join(format!("{kind}.json"));
        std::fs::write(&other, json).unwrap();
        let o = history_save(&[&good, &other], "c1", db.to_str().unwrap(), &[]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("{kind}.json"))
                && err.contains(said)
                && err.contains("nothing was saved"),
            "{kind}: {err}"
        );
        assert!(!db.exists(), "{kind}: a store was written");
    }
}

#[test]
fn a_file_that_cannot_be_re_derived_is_named_with_the_fix_and_what_was_saved_stays() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_in(dir.path());
    let c1 = recorded("chain-history/c1.json", dir.path());
    let c2 = recorded("chain-history/c2.json", dir.path());
    let o = history_save(&[&c1], "c1", &db, &[]);
    assert!(o.status.success(), "{}", text(&o));
    // A file trimmed of its raw samples: its figures stand alone, with nothing to derive
    // them from.
    let mut f = ResultFile::load(&c2).unwrap();
    let b = &mut f.benchmarks[0];
    b.samples = Default::default();
    b.warmup.samples = 0;
    b.processes.clear();
    let trimmed = dir.path().join("trimmed.json");
    f.write_atomic(&trimmed).unwrap();
    ResultFile::load(&trimmed).expect("the trimmed file is a readable result file");

    let o = history_save(&[&c2, &trimmed], "c2", &db, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    for said in [
        "trimmed.json",
        "\"chain\"",
        "no raw samples",
        "nothing was saved",
        "--as-recorded",
    ] {
        assert!(err.contains(said), "{said:?} not in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    let points = |h: &serde_json::Value| -> Vec<String> {
        h["series"][0]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["commit"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(points(&history_json(&db)), ["c1"], "c2 saved, or c1 lost");
    // Asked for, the trimmed file's own figures are kept.
    let o = history_save(&[&trimmed], "c2", &db, &["--as-recorded"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(points(&history_json(&db)), ["c1", "c2"]);
}

#[test]
fn compare_save_keeps_new_re_derived_by_todays_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_in(dir.path());
    let old = recorded("chain-history/c1.json", dir.path());
    let new = recorded("chain-history/c5.json", dir.path());
    let o = vernier()
        .arg("compare")
        .arg(&old)
        .arg(&new)
        .args(["--save", "--commit", "c5", "--db", &db])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("re-derived 1 file(s) from their raw samples with this version's rules"),
        "{}",
        text(&o)
    );
    // What analyze derives from NEW is what the store holds.
    let again = ResultFile::load(&rederived("chain-history/c5.json", dir.path())).unwrap();
    let b = &again.benchmarks[0];
    let h = history_json(&db);
    let s = &h["series"][0];
    assert_eq!(
        s["unit"],
        serde_json::to_value(b.headline_unit).unwrap(),
        "{s}"
    );
    let p = &s["points"][0];
    let codes: Vec<String> = b.diagnostics.iter().map(|d| d.code.to_string()).collect();
    let flags: Vec<String> = serde_json::from_value(p["flags"].clone()).unwrap();
    assert_eq!(flags, codes, "{p}");
    let median = p["median_ns"].as_f64().unwrap();
    assert!(
        (median - b.per_iter.median_ns).abs() <= 1e-9 * median,
        "{median} {}",
        b.per_iter.median_ns
    );
}

#[test]
fn the_demo_warns_few_of_its_ordinary_benchmarks_about_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let f = ResultFile::load(&rederived("demo.json", dir.path())).unwrap();
    let lesson = |b: &&BenchmarkResult| {
        b.threads.is_some() || b.diagnostics.iter().any(|d| d.code == Code::OptimizedAway)
    };
    let ordinary: Vec<&BenchmarkResult> = f.benchmarks.iter().filter(|b| !lesson(b)).collect();
    let flagged: Vec<(&str, Vec<Code>)> = ordinary
        .iter()
        .filter(|b| !own_flags(b).is_empty())
        .map(|b| (b.name.as_str(), own_flags(b)))
        .collect();
    assert_eq!(ordinary.len(), 18);
    // Those left are the benchmarks' own: a level that shifted mid-run with the clock steady
    // (an allocation's, a cold cache's), and far outliers of rand().
    assert!(flagged.len() <= 5, "{} of 18: {flagged:?}", flagged.len());
    assert!(
        flagged.iter().all(|(_, c)| !c.contains(&Code::CoreSlowed)),
        "{flagged:?}"
    );
}

#[test]
fn the_demo_names_its_slowed_stretches_and_leaves_them_out() {
    // The second round of `counter per thread/threads:2` ends with thousands of samples 30 %
    // slower than the rest of the run (11.3 against 8.77 ns): with them in, the row read
    // `unstable`; left out and named, it reads its level.
    let dir = tempfile::tempdir().unwrap();
    let f = ResultFile::load(&rederived("demo.json", dir.path())).unwrap();
    // The file as recorded, beside it.
    let raw = dir.path().join("demo.json");
    let b = f
        .benchmarks
        .iter()
        .find(|b| b.name == "counter per thread/threads:2")
        .unwrap();
    assert!(!b.slowed_stretches.is_empty());
    assert!(
        b.slowed_stretches
            .iter()
            .all(|s| s.round == 1 && s.median > s.level * 1.03),
        "{:?}",
        b.slowed_stretches
    );
    assert!(
        !own_flags(b).contains(&Code::Unstable),
        "{:?}",
        own_flags(b)
    );
    // No row is `no-steady-state` for a stretch alone: those with stretches carry none.
    for b in f
        .benchmarks
        .iter()
        .filter(|b| !b.slowed_stretches.is_empty())
    {
        assert!(
            !own_flags(b).contains(&Code::NoSteadyState),
            "{}: {:?}",
            b.name,
            own_flags(b)
        );
    }
    // The report says them.
    let o = vernier().arg("analyze").arg(&raw).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("slowed for a stretch of a round") && out.contains("counter per thread"),
        "{out}"
    );
}

#[test]
fn two_recorded_runs_compare_in_cycles_when_both_are_judged_in_them() {
    // c1 and c4 are the same 100 additions at different clocks (40.48 and 42.26 ns, 4.4 %
    // apart); c5 has 105. Compared unpaired, in cycles: no change, then the 5 % step.
    let dir = tempfile::tempdir().unwrap();
    let ratio = |a: usize, b: usize| {
        let out = dir.path().join(format!("c{a}-c{b}.json"));
        let o = vernier()
            .arg("compare")
            .arg(rederived(&format!("chain-history/c{a}.json"), dir.path()))
            .arg(rederived(&format!("chain-history/c{b}.json"), dir.path()))
            .arg("--json")
            .arg(&out)
            .output()
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap_or_default();
        let c = v["comparisons"][0].clone();
        assert_eq!(c["unit"], "cycles", "{c} {}", text(&o));
        (
            c["ratio"].as_f64().unwrap(),
            c["verdict"].as_str().unwrap().to_string(),
        )
    };
    let (r, verdict) = ratio(1, 4);
    assert!(
        (r - 1.0).abs() < 0.005 && verdict != "slower" && verdict != "faster",
        "{r} {verdict}"
    );
    let (r, verdict) = ratio(4, 5);
    assert!(
        (1.03..=1.08).contains(&r) && verdict == "slower",
        "{r} {verdict}"
    );
}

/// The ledger was called the speed file: `VERNIER_SPEED_FILE` still names it while
/// `VERNIER_LEDGER` is not set, and a cache home that holds only `core-speed.json` is read,
/// the next run writing `ledger.json` beside it. Each run weighed this way reads the same
/// earlier runs as the runs weighed with the ledger named.
#[test]
fn the_speed_file_under_its_former_names_is_read_as_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("named");
    std::fs::create_dir(&named).unwrap();
    let earlier =
        |f: &ResultFile| -> Vec<_> { f.benchmarks.iter().map(|b| b.earlier_runs).collect() };
    let expected: Vec<_> = (1..=4)
        .map(|i| earlier(&replayed(&format!("kernels/run{i}.json"), &named).0))
        .collect();
    assert!(
        expected[2].iter().any(Option::is_some),
        "the third run reads earlier runs: {:?}",
        expected[2]
    );
    let former = dir.path().join("speed.json");
    for i in 1..=2 {
        let mut c = vernier();
        c.env("VERNIER_SPEED_FILE", &former);
        let (f, _) = replayed_by(c, &format!("kernels/run{i}.json"), dir.path());
        assert!(f.harness.earlier_runs_read);
        assert_eq!(earlier(&f), expected[i - 1], "run {i}");
    }
    let home = dir.path().join("cache");
    let cache = home.join("vernier");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::copy(&former, cache.join("core-speed.json")).unwrap();
    let kept = std::fs::read(cache.join("core-speed.json")).unwrap();
    for i in 3..=4 {
        let mut c = vernier();
        c.env("XDG_CACHE_HOME", &home);
        let (f, _) = replayed_by(c, &format!("kernels/run{i}.json"), dir.path());
        assert_eq!(earlier(&f), expected[i - 1], "run {i}");
        assert!(
            cache.join("ledger.json").exists(),
            "run {i} wrote the ledger"
        );
    }
    assert_eq!(
        std::fs::read(cache.join("core-speed.json")).unwrap(),
        kept,
        "the former file is left as it was"
    );
}
