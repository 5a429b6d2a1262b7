//! Snapshot tests of the terminal report: the committed result fixtures rendered at widths
//! 80, 120 and 200 and unlimited (piped), plain and with `-v`, compared with the committed
//! expected text in `tests/fixtures/report/`. After an intended change of the report,
//! regenerate them with `VERNIER_BLESS=1 cargo test -p vernier --test report_snapshot` and
//! review the diff.

use std::path::{Path, PathBuf};
use vernier::report::{render_file, text_width, Render, Style};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const FILES: [&str; 2] = ["demo-v0.1.0", "run-cpp-v0.1.0"];
const WIDTHS: [Option<usize>; 4] = [Some(80), Some(120), Some(200), None];

fn render(name: &str, width: Option<usize>, verbose: bool) -> String {
    let file = vernier::result::load(&fixtures().join(format!("results/{name}.json")))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    render_file(
        &file,
        Render {
            width,
            style: Style { color: false },
            verbose,
        },
    )
}

fn snapshot_name(name: &str, width: Option<usize>, verbose: bool) -> String {
    let w = width.map_or("piped".to_string(), |w| w.to_string());
    let v = if verbose { "-v" } else { "" };
    format!("{name}-{w}{v}.txt")
}

#[test]
fn the_report_matches_its_snapshots() {
    let bless = std::env::var_os("VERNIER_BLESS").is_some();
    let mut differing = Vec::new();
    for name in FILES {
        for width in WIDTHS {
            for verbose in [false, true] {
                if verbose && width != Some(120) {
                    continue;
                }
                let got = render(name, width, verbose);
                let path = fixtures()
                    .join("report")
                    .join(snapshot_name(name, width, verbose));
                if bless {
                    std::fs::write(&path, &got).unwrap();
                    continue;
                }
                let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                    panic!(
                        "{}: {e} (VERNIER_BLESS=1 writes the snapshots)",
                        path.display()
                    )
                });
                if got != want {
                    differing.push(format!("{}:\n{got}", path.display()));
                }
            }
        }
    }
    assert!(
        differing.is_empty(),
        "the report differs from its snapshots (VERNIER_BLESS=1 rewrites them; review the diff):\n{}",
        differing.join("\n")
    );
}

#[test]
fn no_line_is_wider_than_the_width() {
    for name in FILES {
        for width in [40, 60, 80, 100, 120, 200] {
            for verbose in [false, true] {
                let text = render(name, Some(width), verbose);
                for line in text.lines() {
                    assert!(
                        text_width(line) <= width,
                        "{name} at {width} (-v {verbose}): {} columns: {line}",
                        text_width(line)
                    );
                }
            }
        }
    }
}

#[test]
fn at_most_two_lines_per_benchmark_at_120_columns() {
    for name in FILES {
        let file = vernier::result::load(&fixtures().join(format!("results/{name}.json"))).unwrap();
        let text = render(name, Some(120), false);
        let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        // The title, then each benchmark's row and at most one more line.
        assert!(
            table.len() - 1 <= 2 * file.benchmarks.len(),
            "{name}: {} lines for {} benchmarks:\n{text}",
            table.len() - 1,
            file.benchmarks.len()
        );
        let rows = table.iter().filter(|l| !l.starts_with(' ')).count();
        assert_eq!(rows, 1 + file.benchmarks.len(), "{text}");
        // Each code that occurred is explained once.
        for code in vernier::diagnostic::Code::ALL {
            let explained = text
                .lines()
                .filter(|l| l.starts_with(&format!("{code} (")))
                .count();
            let occurs = file
                .benchmarks
                .iter()
                .any(|b| b.diagnostics.iter().any(|d| d.code == code));
            if code != vernier::diagnostic::Code::CountersUnavailable {
                assert_eq!(explained, usize::from(occurs), "{code}:\n{text}");
            }
        }
    }
}

#[test]
fn piped_output_cuts_nothing() {
    for name in FILES {
        let file = vernier::result::load(&fixtures().join(format!("results/{name}.json"))).unwrap();
        let text = render(name, None, false);
        for b in &file.benchmarks {
            assert!(
                text.lines().any(|l| l.starts_with(&b.name)),
                "{}:\n{text}",
                b.name
            );
        }
        assert_eq!(
            text.lines().take_while(|l| !l.is_empty()).count(),
            1 + file.benchmarks.len(),
            "{text}"
        );
    }
}

#[test]
fn a_failed_benchmark_says_why_without_v() {
    let mut file = vernier::result::load(&fixtures().join("results/run-cpp-v0.1.0.json")).unwrap();
    file.benchmarks
        .push(vernier::result::BenchmarkResult::failed(
            "broken",
            "the worker ended with signal 11 (SIGSEGV)".to_string(),
        ));
    let text = render_file(
        &file,
        Render {
            width: Some(80),
            style: Style { color: false },
            verbose: false,
        },
    );
    let mut lines = text.lines().skip_while(|l| !l.starts_with("broken"));
    let row = lines.next().unwrap_or_else(|| panic!("no row:\n{text}"));
    assert!(row.contains("FAILED") && row.contains('—'), "{row}");
    let why = lines.next().unwrap();
    assert!(
        why.trim_start()
            .starts_with("error: the worker ended with signal 11"),
        "{text}"
    );
}
