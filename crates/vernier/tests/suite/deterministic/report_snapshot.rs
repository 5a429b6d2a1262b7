//! Snapshot tests of the terminal report: the committed result fixtures rendered at widths
//! 80, 120 and 200 and unlimited (piped), plain and with `-v`, compared with the committed
//! expected text in `tests/fixtures/report/`. After an intended change of the report,
//! regenerate them with `VERNIER_BLESS=1 cargo test -p vernier --test suite report_snapshot` and
//! review the diff.

use std::path::{Path, PathBuf};
use vernier::report::{render_file, text_width, Render, Style};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const FILES: [&str; 3] = ["demo-v0.1.0", "run-cpp-v0.1.0", "demo-clock-range"];
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

/// The cells of a benchmark's row under the interval and cycles titles.
fn cells(text: &str, name: &str) -> std::collections::BTreeMap<String, String> {
    let head = text.lines().next().unwrap();
    let row = text
        .lines()
        .find(|l| {
            // Names are cut in the middle to the column: the first eight characters are kept,
            // and a shorter name is followed by the column's padding.
            let head: String = name.chars().take(8).collect();
            l.starts_with(&head) && (name.chars().count() > 8 || l[head.len()..].starts_with(' '))
        })
        .unwrap_or_else(|| panic!("no row {name}:\n{text}"));
    // Each title ends where its right-aligned cell ends.
    let mut out = std::collections::BTreeMap::new();
    for title in ["median", "±this run", "±next run", "cycles", "±cycles"] {
        let Some(start) = head.find(&format!(" {title} ")) else {
            continue;
        };
        let end = head[..start + 1].chars().count() + title.chars().count();
        let cell: String = row.chars().take(end).collect::<String>();
        let cell = cell.rsplit("  ").next().unwrap().trim().to_string();
        out.insert(title.to_string(), cell);
    }
    out
}

/// "±0.13%" → (0.13, 0.13); "−0.05/+16.0%" → (0.05, 16.0); "<±0.01%" → (0, 0.01).
fn sides(cell: &str) -> (f64, f64) {
    let c = cell.trim_end_matches('%');
    if let Some(x) = c.strip_prefix("<±") {
        return (0.0, x.parse().unwrap());
    }
    if let Some(x) = c.strip_prefix('±') {
        let x: f64 = x.parse().unwrap();
        return (x, x);
    }
    let (lo, hi) = c.split_once('/').unwrap_or_else(|| panic!("cell {cell}"));
    (
        lo.trim_start_matches('−').parse().unwrap(),
        hi.trim_start_matches('+').parse().unwrap(),
    )
}

#[test]
fn the_table_names_each_interval_and_shows_what_the_run_measured() {
    // A quick demo run whose intervals for the next run were joined to the clock range of the
    // machine's recent runs: each row shows its own interval beside that one, and its cycles.
    let name = "demo-clock-range";
    let file = vernier::result::load(&fixtures().join(format!("results/{name}.json"))).unwrap();
    assert!(file.harness.clock_ghz.is_some());
    let text = render(name, Some(120), false);
    let head = text.lines().next().unwrap();
    for title in ["±this run", "±next run", "cycles", "±cycles"] {
        assert!(head.contains(title), "{head}");
    }
    for b in &file.benchmarks {
        if b.diagnostics
            .iter()
            .any(|d| d.code == vernier::diagnostic::Code::OptimizedAway)
        {
            continue;
        }
        let c = cells(&text, &b.name);
        let p = &b.per_iter;
        // Each cell is the interval its title names, as % of the median, both sides shown
        // when one is half again as long as the other.
        for (title, median, ci) in [
            ("±this run", p.median_ns, p.run_ci95_ns),
            ("±next run", p.median_ns, p.ci95_ns),
            (
                "±cycles",
                b.speed.as_ref().unwrap().cycles_per_iter.unwrap(),
                b.speed.as_ref().unwrap().cycles_ci95.unwrap(),
            ),
        ] {
            let (lo, hi) = sides(&c[title]);
            let want = (
                (median - ci[0]) / median * 100.0,
                (ci[1] - median) / median * 100.0,
            );
            let asymmetric = want.0.max(want.1) >= 1.5 * want.0.min(want.1) + 0.01;
            let tol = |x: f64| 0.006 + x * 0.006;
            if asymmetric {
                assert!(
                    (lo - want.0).abs() <= tol(want.0) && (hi - want.1).abs() <= tol(want.1),
                    "{} {title}: {} for {want:?}",
                    b.name,
                    c[title]
                );
            } else {
                let half = (want.0 + want.1) / 2.0;
                assert!(
                    (lo - half).abs() <= tol(half).max(0.01),
                    "{} {title}: {} for {want:?}",
                    b.name,
                    c[title]
                );
            }
        }
        assert_eq!(
            c["cycles"],
            vernier::report::format_count(b.speed.as_ref().unwrap().cycles_per_iter.unwrap()),
            "{}",
            b.name
        );
    }
    // The ±next run of "ln" reaches one way (the clock range of other runs, slower), and the
    // table says so instead of a half-width.
    assert!(cells(&text, "ln")["±next run"].contains('/'), "{text}");
}

#[test]
fn the_line_between_flagged_and_unflagged_rows_is_on_screen() {
    // `unstable` judges this run's own interval in ns and in cycles: a row is flagged exactly
    // when both cells it shows are wider than ±1 % (on either side).
    for name in FILES {
        let file = vernier::result::load(&fixtures().join(format!("results/{name}.json"))).unwrap();
        let text = render(name, Some(120), false);
        for b in &file.benchmarks {
            let c = cells(&text, &b.name);
            let run = c
                .get("±this run")
                .unwrap_or_else(|| panic!("{name}: no ±this run column:\n{text}"));
            if !run.ends_with('%') {
                // No figure (optimized-away): nothing judged.
                continue;
            }
            let wide = |cell: &str| {
                let (lo, hi) = sides(cell);
                (lo + hi) / 2.0 > 1.0
            };
            let judged = wide(run)
                && c.get("±cycles")
                    .is_none_or(|x| !x.ends_with('%') || wide(x));
            let flagged = b
                .diagnostics
                .iter()
                .any(|d| d.code == vernier::diagnostic::Code::Unstable);
            assert_eq!(flagged, judged, "{name} {}: {c:?}", b.name);
        }
    }
}
