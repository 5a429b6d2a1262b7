//! The published site in a real browser (Debian's chromium, driven through chromedriver),
//! opened from the disk (`file://`) and from `vernier history serve`: the index lists every
//! series, the filter narrows it and the URL keeps it, a sort reorders it, a series page shows
//! its change point at its commit and a point's commit under the pointer, the console shows no
//! error, and names that are markup or script are text (no script of theirs runs). Screenshots
//! of each page are kept under the target directory's `dashboard/` folder.

use crate::common::cli::{text, vernier};
use crate::common::site::{self, hostile_names, planted};
use crate::common::webdriver::Browser;
use serde_json::Value;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shot(b: &Browser, name: &str) {
    let png = b.screenshot();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    std::fs::write(artifacts().join(name), png).unwrap();
}

fn rows_shown(b: &Browser) -> Vec<(String, String)> {
    let v = b.run(
        "return Array.from(document.querySelectorAll('#series tbody tr')).filter(r => !r.hidden)\
         .map(r => [r.dataset.name, r.dataset.machine])",
    );
    serde_json::from_value::<Vec<(String, String)>>(v).unwrap()
}

fn no_errors(b: &Browser, page: &str) {
    let errors = b.console_errors();
    assert!(errors.is_empty(), "console errors on {page}: {errors:?}");
    // Neither hostile name ran: no alert is open (the next command would fail), the title is
    // the page's own, and no image was made.
    // (the hostile name sets the title to exactly `pwned` if it runs; as text it is longer).
    assert_ne!(b.run("return document.title"), Value::from("pwned"));
    assert_eq!(b.run("return document.images.length"), Value::from(0));
}

/// Every check on the site at `base` (a URL ending in `/`); screenshots tagged `tag`.
fn check_site(b: &Browser, base: &str, tag: &str) {
    b.open(&format!("{base}index.html"));
    let all = rows_shown(b);
    assert_eq!(all.len(), 6, "{all:?}");
    for n in hostile_names() {
        assert!(all.iter().any(|(name, _)| *name == n), "{n:.40} not listed");
    }
    let shown: Vec<String> = serde_json::from_value(b.run(
        "return Array.from(document.querySelectorAll('#series td.name a')).map(a => a.textContent)",
    ))
    .unwrap();
    assert!(shown.contains(&hostile_names()[0]), "{shown:?}");
    no_errors(b, "index");
    shot(b, &format!("index-{tag}.png"));

    // The filter narrows the list, and the URL keeps it.
    b.type_into("#q", "sort");
    let sorts = rows_shown(b);
    assert_eq!(sorts.len(), 2, "{sorts:?}");
    assert!(sorts.iter().all(|(n, _)| n == "sort/1000"));
    let hash = b.run("return location.hash");
    assert_eq!(hash, Value::from("#q=sort"));
    b.open(&format!("{base}index.html#m=m-b"));
    let on_b = rows_shown(b);
    assert_eq!(on_b.len(), 3, "{on_b:?}");
    assert!(on_b.iter().all(|(_, m)| m == "m-b"));

    // A click sorts by the latest figure, a second click the other way.
    b.open(&format!("{base}index.html"));
    let latest = |b: &Browser| -> Vec<f64> {
        serde_json::from_value(b.run(
            "return Array.from(document.querySelectorAll('#series tbody tr'))\
             .map(r => parseFloat(r.dataset.latest))",
        ))
        .unwrap()
    };
    b.click("th[data-key=latest] button");
    let up = latest(b);
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "{up:?}");
    b.click("th[data-key=latest] button");
    let down = latest(b);
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "{down:?}");
    assert_ne!(up, down);

    // The series with the step: its change point at c008, and the point of c008 under the
    // pointer says its commit.
    let href = b.run(
        "return document.querySelector('tr[data-name=\"sort/1000\"][data-machine=\"m-a\"] a').href",
    );
    b.open(href.as_str().unwrap());
    let at = b
        .run("return Array.from(document.querySelectorAll('p.change')).map(p => p.dataset.commit)");
    assert_eq!(at, serde_json::json!(["c008"]));
    b.hover("figure[data-plot=series-ns] circle.hit[data-i='8']");
    let tip = b.run("var t = document.getElementById('tip'); return t.hidden ? '' : t.textContent");
    assert!(tip.as_str().unwrap().starts_with("commit c008"), "{tip}");
    no_errors(b, "series");
    shot(b, &format!("series-{tag}.png"));

    b.open(&format!("{base}regressions.html"));
    let commits = b.run(
        "return Array.from(document.querySelectorAll('section.cp')).map(s => s.dataset.commit)",
    );
    assert_eq!(commits, serde_json::json!(["c012", "c008"]));
    no_errors(b, "regressions");
    shot(b, &format!("regressions-{tag}.png"));

    // The hostile series' own page.
    b.open(&format!("{base}index.html"));
    let href =
        b.run("return document.querySelector('#series tbody tr[data-name^=\"</script>\"] a').href");
    b.open(href.as_str().unwrap());
    let h1 = b.run("return document.querySelector('h1').textContent");
    assert_eq!(h1, Value::from(hostile_names()[1].clone()));
    no_errors(b, "hostile series");
}

#[test]
fn the_site_works_in_chromium_from_the_disk_and_from_serve() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite").display().to_string();
    site::plant(dir.path(), &db, &planted(), 0..20);
    let out = dir.path().join("site");
    let o = vernier()
        .args(["history", "publish", "--db", &db])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let b = Browser::start(1400, 1000)
        .expect("no chromedriver to drive chromium: apt-get install chromium chromium-driver");
    check_site(&b, &format!("file://{}/", out.display()), "file");

    let mut server = Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args(["history", "serve", "--port", "0"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    check_site(&b, &url, "serve");
    let _ = server.kill();
    let _ = server.wait();
}

/// The demo's report at 1400 px: the results table shows every column without a horizontal
/// scroll of the page, and the threads plots label whole thread counts only, each once.
#[test]
fn the_demo_report_fits_1400_px_and_ticks_whole_threads() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("demo.html");
    let o = vernier()
        .args(["demo", "--quick", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let b = Browser::start(1400, 1100)
        .expect("no chromedriver to drive chromium: apt-get install chromium chromium-driver");
    b.open(&format!("file://{}", html.display()));
    let fits = b.run(
        "var t = document.querySelector('table.summary'); \
         return [document.documentElement.scrollWidth, window.innerWidth, \
                 t.getBoundingClientRect().right]",
    );
    let [page, window, right]: [f64; 3] = serde_json::from_value(fits).unwrap();
    assert!(
        page <= window && right <= window,
        "page {page}, table to {right}, window {window}"
    );
    shot(&b, "report-1400.png");
    let ticks: Vec<Vec<String>> = serde_json::from_value(b.run(
        "return Array.from(document.querySelectorAll('figure[data-plot=threads] svg')).map(s => \
         Array.from(s.querySelectorAll('text')).map(t => t.textContent.trim()))",
    ))
    .unwrap();
    assert!(!ticks.is_empty(), "no threads plot");
    for labels in &ticks {
        // After the title, the axes' names and the y labels: the thread counts.
        let at = labels.iter().position(|l| l == "threads").unwrap();
        let counts: Vec<&String> = labels[at + 1..]
            .iter()
            .filter(|l| l.parse::<u64>().is_ok())
            .collect();
        let mut seen = counts.clone();
        seen.dedup();
        assert_eq!(seen, counts, "a thread count labelled twice: {labels:?}");
        assert!(
            labels[at + 1..].iter().all(|l| !l.contains('.')),
            "{labels:?}"
        );
    }
    b.run("document.querySelector('figure[data-plot=threads]').scrollIntoView(); return 0");
    shot(&b, "report-threads.png");
}
