//! The HTML report (`vernier report`, `--html`): one self-contained file, one `<svg>` per
//! expected plot, every benchmark named, no network reference, within its size bound; bad
//! files refused with their name; and, when Chromium is installed (CI installs it), rendered
//! by a real browser.

use crate::common::cli;

use cli::{text, vernier};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use vernier::result::ResultFile;

/// The bound on the demo's report.
const MAX_REPORT_BYTES: usize = 2 * 1024 * 1024;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/html")
        .join(name)
}

/// `vernier demo OPTIONS --json JSON --html HTML`.
fn demo(options: &[&str], json: &Path, html: &Path) -> std::process::Output {
    vernier()
        .arg("demo")
        .args(options)
        .arg("--json")
        .arg(json)
        .arg("--html")
        .arg(html)
        .output()
        .unwrap()
}

fn quick_demo(json: &Path, html: &Path) -> std::process::Output {
    demo(&["--quick"], json, html)
}

/// `vernier report FILES -o OUT`, which must succeed; the page.
fn report(files: &[&Path], out: &Path) -> String {
    let o = vernier()
        .arg("report")
        .args(files)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::read_to_string(out).unwrap()
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// Figures whose `data-plot` is `kind`.
fn plots(html: &str, kind: &str) -> usize {
    count(html, &format!("data-plot=\"{kind}\""))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Self-contained: no script or style fetched, no link out of the file. The SVG namespace
/// (`xmlns="http://www.w3.org/2000/svg"`) is a name, not a fetch; it is the only URL allowed.
fn assert_self_contained(html: &str) {
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for bad in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "@import",
    ] {
        assert!(!without_ns.contains(bad), "the report contains {bad:?}");
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
}

/// Every `<svg>` sits in a plot's figure, and every figure holds one.
fn assert_one_svg_per_figure(html: &str) {
    let figures = count(html, "<figure class=\"plot");
    assert!(figures > 0);
    assert_eq!(count(html, "<svg"), figures, "one <svg> per figure");
    assert_eq!(count(html, "</svg>"), figures);
    assert!(!html.contains("plot not drawn"), "a plot failed to draw");
}

#[test]
fn demo_html_has_every_plot_and_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("demo.json");
    let html = dir.path().join("demo.html");
    let o = demo(&["--quick", "--counters", "none"], &json, &html);
    assert!(o.status.success(), "{}", text(&o));
    let file = ResultFile::load(&json).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    assert_one_svg_per_figure(&page);
    assert!(
        page.len() < MAX_REPORT_BYTES,
        "the demo's report is {} bytes, over {MAX_REPORT_BYTES}",
        page.len()
    );
    let measured: Vec<_> = file
        .benchmarks
        .iter()
        .filter(|b| !b.samples.ns.is_empty())
        .collect();
    assert_eq!(plots(&page, "timeseries"), measured.len());
    assert_eq!(plots(&page, "linearity"), measured.len());
    let with_steady = measured
        .iter()
        .filter(|b| b.samples.phase.contains(&vernier::samples::Phase::Measure))
        .count();
    assert_eq!(plots(&page, "histogram"), with_steady);
    // In process: one process, so no per-process plot.
    assert_eq!(plots(&page, "processes"), 0);
    for b in &file.benchmarks {
        assert!(page.contains(&esc(&b.name)), "{} is not named", b.name);
        for d in &b.diagnostics {
            assert!(
                page.contains(&esc(&d.message)),
                "{}: {} missing",
                b.name,
                d.code
            );
        }
    }
    // The variant pairs: the overview and one plot of the pairs each.
    let pairs = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&json).unwrap())
        .unwrap()["comparison"]["comparisons"]
        .as_array()
        .map(|a| a.len())
        .unwrap_or(0);
    assert!(pairs > 0, "the demo compares its variant pairs");
    assert_eq!(plots(&page, "comparisons"), 1);
    assert_eq!(plots(&page, "pairs"), pairs);
    // The summary table is on top and links to each benchmark's section.
    let summary = page.find("class=\"summary\"").unwrap();
    let first_plot = page.find("<figure").unwrap();
    assert!(summary < first_plot);
    for j in 0..file.benchmarks.len() {
        assert!(page.contains(&format!("href=\"#f0-b{j}\"")));
        assert!(page.contains(&format!("id=\"f0-b{j}\"")));
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("HTML report written to"), "{stdout}");

    // The same report from the file, beside a comparison and a history.
    let cmp = dir.path().join("cmp.json");
    let cmp_html = dir.path().join("cmp.html");
    let o = vernier()
        .args(["compare", "--json"])
        .arg(&cmp)
        .arg("--html")
        .arg(&cmp_html)
        .arg(&json)
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let cmp_page = std::fs::read_to_string(&cmp_html).unwrap();
    assert_self_contained(&cmp_page);
    assert_one_svg_per_figure(&cmp_page);
    assert!(cmp_page.contains("Comparison: vernier compare"));
    assert_eq!(plots(&cmp_page, "comparisons"), 1);
    let out = dir.path().join("all.html");
    let all = report(&[&json, &cmp, &fixture("history.json")], &out);
    assert_self_contained(&all);
    assert_one_svg_per_figure(&all);
    assert_eq!(plots(&all, "timeseries"), measured.len());
    // The demo's pairs, and the offline comparison (unpaired: no pairs to draw).
    assert_eq!(plots(&all, "comparisons"), 2);
    assert_eq!(plots(&all, "pairs"), pairs);
    assert_eq!(plots(&all, "history"), 2, "one plot per series");
    for name in ["parse &lt;json&gt;", "hash 64 B", "4d5e6f70 ×1.109"] {
        assert!(all.contains(name), "{name} missing");
    }
    for section in ["Results: ", "Comparison: ", "History: "] {
        assert!(all.contains(section), "{section} missing");
    }
    render_in_chromium(&out, dir.path());
}

#[test]
fn processes_get_their_plot() {
    // A result with three worker processes, made from the demo's file by relabelling its
    // steady samples: the report draws what the file holds.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = vernier()
        .args([
            "demo",
            "--quick",
            "--counters",
            "none",
            "--filter",
            "^add$",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let mut file = ResultFile::load(&json).unwrap();
    let b = &mut file.benchmarks[0];
    let n = b.samples.process.len();
    for (i, p) in b.samples.process.iter_mut().enumerate() {
        *p = (3 * i / n) as u32;
    }
    b.processes = (0..3)
        .map(|i| vernier::result::ProcessJson {
            peak_rss_bytes: None,
            index: i,
            env_pad_bytes: 100 * i as u64,
            median_ns: b.per_iter.median_ns * (1.0 + 0.01 * i as f64),
            ci95_ns: [b.per_iter.ci95_ns[0], b.per_iter.ci95_ns[1] * 1.02],
            samples: n / 3,
            hash_seed: None,
        })
        .collect();
    file.write_atomic(&json).unwrap();
    let page = report(&[&json], &dir.path().join("p.html"));
    assert_one_svg_per_figure(&page);
    assert_eq!(plots(&page, "processes"), 1);
    assert!(page.contains("3 worker processes"));
    assert!(
        page.contains("#2 200 B"),
        "the padding of each process is named"
    );
}

#[test]
fn bad_files_are_refused_with_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.html");
    let cases: Vec<(&str, &str, &str)> = vec![
        ("garbage.json", "{not json", "is not JSON"),
        ("array.json", "[1, 2]", "top level is not a JSON object"),
        ("other.json", "{\"hello\": 1}", "none of the files a report is made from"),
        (
            "history.json",
            "{\"series\": [{\"name\": \"x\", \"points\": [{\"commit\": \"a\", \"median_ns\": -1}]}]}",
            "median_ns is -1",
        ),
        (
            "cp.json",
            "{\"series\": [{\"name\": \"x\", \"points\": [{\"commit\": \"a\", \"median_ns\": 1}], \
             \"change_points\": [{\"commit\": \"b\", \"ratio\": 1.2}]}]}",
            "none of its points has",
        ),
        ("result.json", "{\"schema\": 1, \"benchmarks\": 3}", "result.json"),
        ("cmp.json", "{\"comparisons\": 3}", "damaged comparison file"),
    ];
    for (name, content, why) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        let o = vernier()
            .arg("report")
            .arg(&p)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o));
        assert!(err.contains(name), "{name}: the file is not named: {err}");
        assert!(err.contains(why), "{name}: expected {why:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "nothing is written for a bad file");
    }
    let missing = dir.path().join("missing.json");
    let o = vernier()
        .arg("report")
        .arg(&missing)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
}

#[test]
fn an_unwritable_html_destination_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = quick_demo(&json, &dir.path().join("no/such/dir/r.html"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--html") && err.contains("mkdir -p"), "{err}");
    assert!(!json.exists(), "nothing was measured");
    let o = vernier()
        .args(["report", "x.json", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a directory"));
}

/// The browser on this machine, if any.
fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(str::to_string)
}

/// Headless Chromium renders the report to a PNG: exit 0, a PNG of non-trivial size.
fn render_in_chromium(html: &Path, dir: &Path) {
    let browser = chromium().expect(
        "no chromium on PATH to render the report: apt-get install chromium (bash .ci/run \
         installs it)",
    );
    let png = dir.join("shot.png");
    let mut child = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,2400",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("{browser} did not finish rendering in 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    use std::io::Read as _;
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    assert!(status.success(), "{browser}: {status:?}\n{err}");
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot: {e}\n{err}"));
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // A blank 1280×2400 page compresses to a few kB; the report's text and plots do not.
    assert!(bytes.len() > 50_000, "screenshot of {} bytes", bytes.len());
}

#[test]
fn a_live_comparison_draws_its_process_pairs() {
    // `vernier compare --json` of two executables: four process pairs with their rounds.
    let fixture = fixture("compare-processes.json");
    let c: vernier::result::comparison::ComparisonFile =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let pairs = c.comparisons[0].process_pairs.len();
    assert!(pairs > 1);
    let dir = tempfile::tempdir().unwrap();
    let page = report(&[&fixture], &dir.path().join("c.html"));
    assert_self_contained(&page);
    assert_one_svg_per_figure(&page);
    assert_eq!(plots(&page, "comparisons"), 1);
    assert_eq!(plots(&page, "pairs"), c.comparisons.len());
    assert!(
        page.contains(&format!("in {pairs} process pairs")),
        "the process pairs are counted"
    );
    assert!(page.contains(c.comparisons[0].verdict.as_str()));
}

#[test]
fn the_report_never_replaces_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("r.json");
    let o = quick_demo(&same, &same);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("name the same file"));
    assert!(!same.exists(), "nothing was measured");
    // Nor does `report -o` replace one of its inputs.
    let input = fixture("history.json");
    let before = std::fs::read(&input).unwrap();
    let o = vernier()
        .arg("report")
        .arg(&input)
        .arg("-o")
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("would replace it"));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn counted_results_get_their_counts_not_timing_plots() {
    assert!(
        Command::new("valgrind").arg("--version").output().is_ok(),
        "no valgrind on PATH: apt-get install valgrind (bash .ci/run installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("i.json");
    let html = dir.path().join("i.html");
    let o = demo(
        &["--instructions", "--filter", "^(add|sqrt)$"],
        &json,
        &html,
    );
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    assert_eq!(count(&page, "<svg"), 0, "no timing plot under valgrind");
    assert!(page.contains("<th>instructions</th>"));
    let file = ResultFile::load(&json).unwrap();
    for b in &file.benchmarks {
        assert!(page.contains(&esc(&b.name)));
        let i = b.counters.as_ref().unwrap()["instructions_per_iter"];
        assert!(
            page.contains(&format!("<td>{i:.2}</td>"))
                || page.contains(&format!("<td>{i:.3}</td>")),
            "{i}"
        );
    }
}

#[test]
fn a_layout_sweep_gets_a_plot_per_benchmark() {
    // A sweep of ijk_loop.cpp over 0-512 bytes (`vernier sweep --json`).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.html");
    let page = report(&[&fixture("sweep.json")], &out);
    assert_self_contained(&page);
    assert_one_svg_per_figure(&page);
    assert_eq!(plots(&page, "sweep"), 2, "one plot per benchmark");
    for text in [
        "Layout sweep: ",
        "ijk loop",
        "ijk step",
        "ASLR off",
        "environment padding",
    ] {
        assert!(page.contains(text), "{text} missing");
    }
}

#[test]
fn each_interval_and_figure_is_labelled_for_what_it_is() {
    // A quick demo whose intervals for the next run were joined to the clock range of the
    // machine's recent runs (the library's report fixture).
    let json = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vernier/tests/fixtures/results/demo-clock-range.json");
    let file = ResultFile::load(&json).unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-labels");
    std::fs::create_dir_all(&dir).unwrap();
    let html = report(&[&json], &dir.join("report.html"));
    // per_iter.sigma_ns is σ_run/√N_iter, not an uncertainty of the median.
    assert!(!html.contains("σ of the median"));
    assert!(html.contains("σ<sub>iter</sub> = σ<sub>run</sub>/√N<sub>iter</sub>"));
    // The histogram's two bands, each named; no band claims to be "the" interval of the
    // median when it is the next run's.
    // (SVG text escapes the apostrophe as &apos;.)
    assert!(html.contains("this run&apos;s 95 % interval of the median"));
    assert!(html.contains("95 % interval for the next run"));
    for b in &file.benchmarks {
        let Some(c) = b.speed.as_ref().and_then(|s| s.cycles_per_iter) else {
            continue;
        };
        let cell = vernier::report::format_count(c);
        assert!(
            html.contains(&format!("<b>{cell}</b> cycles per iteration")),
            "{}: {cell}",
            b.name
        );
    }
    // An interval whose sides differ shows both ("ln": the clock range of other runs).
    let ln = &file
        .benchmarks
        .iter()
        .find(|b| b.name == "ln")
        .unwrap()
        .per_iter;
    let cell = vernier::report::interval_pct(ln.median_ns, ln.ci95_ns);
    assert!(cell.contains('/') && html.contains(&cell), "{cell}");
}

#[test]
fn a_sweep_in_cycles_is_plotted_and_summarised_in_cycles() {
    // Three paddings of a chain whose clock moved (ns) while its cycles held (the sweep
    // schema's cycles_per_iter and swing_cycles).
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    let point = |pad: u64, ns: f64| {
        serde_json::json!({"env_pad_bytes": pad, "benchmarks": [{"name": "chain",
            "median_ns": ns, "ci95_ns": [ns * 0.999, ns * 1.001],
            "cycles_per_iter": 100.2, "cycles_ci95": [100.1, 100.3]}]})
    };
    let sweep = serde_json::json!({"schema": 1, "env_pad": {"start": 0, "end": 128, "step": 64},
        "aslr": false, "points": [point(0, 27.07), point(64, 27.9), point(128, 27.1)],
        "summary": [{"name": "chain", "swing": 0.0307, "swing_cycles": 0.0,
                     "period_bytes": null}]});
    std::fs::write(&json, sweep.to_string()).unwrap();
    let page = report(&[&json], &dir.path().join("sweep.html"));
    assert!(page.contains("<th>swing (cycles)</th>"), "{page}");
    assert!(page.contains("<td>3.1 %</td><td>0.0 %</td>"), "{page}");
    assert!(
        page.contains("cycles per iteration (the core"),
        "the plot's axis"
    );
}
