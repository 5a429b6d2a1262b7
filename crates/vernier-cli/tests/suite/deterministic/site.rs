//! `vernier history publish` and `history check --markdown` on a store of synthetic runs with
//! steps at known commits (nothing measured): every planted step is on the change points page
//! at its commit and no other; names that are markup or script are shown as text; the site
//! holds no store location nor hostname; a second publish after one more run rewrites only what
//! changed and says so. The browser's view of the site is in `measuring::dashboard`.

use crate::common::cli::{text, vernier};
use crate::common::site::{self, commit, hostile_names, planted, Planted, HOST};
use std::path::Path;

fn publish(db: &str, dir: &Path, extra: &[&str]) -> String {
    let o = vernier()
        .args(["history", "publish", "--db", db])
        .args(extra)
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every `.html` file of the site, with its text.
fn pages(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in [dir.to_path_buf(), dir.join("s")] {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "html") {
                out.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    out
}

/// The change points page's sections: (commit, the benchmark names listed under it).
fn moved(regressions: &str) -> Vec<(String, Vec<String>)> {
    regressions
        .split("<section class=\"cp\" data-commit=\"")
        .skip(1)
        .map(|sec| {
            let commit = sec[..sec.find('"').unwrap()].to_string();
            let names = sec
                .split("<tr data-series=")
                .skip(1)
                .map(|row| {
                    let a = row.find(".html\">").unwrap() + 7;
                    row[a..a + row[a..].find("</a>").unwrap()].to_string()
                })
                .collect();
            (commit, names)
        })
        .collect()
}

#[test]
fn the_site_shows_each_planted_step_at_its_commit_and_names_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("s3cr3t-store");
    std::fs::create_dir(&db_dir).unwrap();
    let db = db_dir.join("h.sqlite").display().to_string();
    site::plant(dir.path(), &db, &planted(), 0..20);
    let out = dir.path().join("site");
    let said = publish(
        &db,
        &out,
        &["--commit-url", "https://example.org/c/{commit}"],
    );
    let all = pages(&out);
    // index, change points, one page per series.
    assert_eq!(all.len(), 8, "{said}");
    assert!(said.contains("10 of 10 files written"), "{said}");
    let regressions = std::fs::read_to_string(out.join("regressions.html")).unwrap();
    let hostile = hostile_names();
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    // Newest first: c012's step, then c008's; nothing else.
    assert_eq!(
        moved(&regressions),
        vec![
            (commit(12), vec![esc(&hostile[1])]),
            (commit(8), vec!["sort/1000".to_string()]),
        ]
    );
    assert!(regressions.contains("href=\"https://example.org/c/c008\""));
    for (path, page) in &all {
        for bad in [
            "<img",
            "<script>document",
            "onerror=alert(1)>",
            "s3cr3t",
            HOST,
        ] {
            assert!(!page.contains(bad), "{bad:?} in {path}");
        }
        let page = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(
            !page.contains("http://") && !page.contains("src=\"https"),
            "{path} fetches"
        );
    }
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for n in &hostile {
        assert!(
            index.contains(&format!(">{}</a>", esc(n))),
            "{n:.40} not shown as text"
        );
    }
    // With --with-hostnames, the series pages say the host.
    let named = dir.path().join("named");
    publish(&db, &named, &["--with-hostnames"]);
    assert!(pages(&named).iter().any(|(_, p)| p.contains(HOST)));

    // One more run of machine m-b: its three pages, the index and the change points page
    // change, nothing else.
    let more: Vec<Planted> = planted()
        .into_iter()
        .filter(|s| s.machine == "m-b")
        .collect();
    site::plant(dir.path(), &db, &more, 20..21);
    let again = publish(
        &db,
        &out,
        &["--commit-url", "https://example.org/c/{commit}"],
    );
    assert!(again.contains("4 of 10 files written"), "{again}");
    let same = publish(
        &db,
        &out,
        &["--commit-url", "https://example.org/c/{commit}"],
    );
    assert!(same.contains("0 of 10 files written"), "{same}");
}

#[test]
fn history_check_writes_the_summary_with_names_as_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite").display().to_string();
    let series = planted();
    // sort/1000 on m-a is slower from c008 on: the newest commit, c009, is in its new segment.
    site::plant(dir.path(), &db, &series, 0..10);
    let md = dir.path().join("summary.md");
    let summary = dir.path().join("step-summary.md");
    let o = vernier()
        .args(["history", "check", "--db", &db, "--markdown"])
        .arg(&md)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("### Vernier: 1 slower, 5 unchanged"),
        "{text}"
    );
    assert!(text.contains("`c008` → `c009`"), "{text}");
    assert!(text.contains("| `sort/1000 on m-a` | 1.09"), "{text}");
    assert!(
        text.contains("`<img src=x onerror=alert(1)> on m-a`"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap().trim(),
        text.trim()
    );
    // --no-summary leaves the job summary alone.
    let o = vernier()
        .args([
            "history",
            "check",
            "--db",
            &db,
            "--no-summary",
            "--markdown",
        ])
        .arg(&md)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap().trim(),
        text.trim()
    );
}

/// `compare OLD.json NEW.json --markdown FILE`: a recorded run against itself slowed by 10 %
/// (its raw samples scaled, re-derived by `vernier analyze`): the summary names it slower, in a
/// table a GFM reader sees, and the job summary gets the same text.
#[test]
fn an_offline_comparison_writes_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = crate::common::cpp::repo_root()
        .join("crates/vernier/tests/fixtures/results/run-cpp-v0.1.0.json");
    let recorded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    let mut slowed = recorded.clone();
    let ns = &mut slowed["benchmarks"][0]["samples"]["ns"];
    *ns = ns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| serde_json::Value::from((t.as_f64().unwrap() * 1.1).round() as u64))
        .collect();
    let raw = dir.path().join("raw.json");
    std::fs::write(&raw, serde_json::to_vec(&slowed).unwrap()).unwrap();
    let new = dir.path().join("new.json");
    let o = vernier()
        .arg("analyze")
        .arg(&raw)
        .arg("--json")
        .arg(&new)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let md = dir.path().join("pr.md");
    let summary = dir.path().join("summary.md");
    let o = vernier()
        .arg("compare")
        .arg(&fixture)
        .arg(&new)
        .arg("--markdown")
        .arg(&md)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("### Vernier: 1 slower"), "{text}");
    assert!(text.contains("result files `"), "{text}");
    assert!(text.contains("| `chain` | 1.1000 | +10.00 %"), "{text}");
    assert!(text.contains("| **slower** |"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap().trim(),
        text.trim()
    );
}
