//! hyperfine's files written from the runs, in hyperfine's formats: its JSON
//! (`--export-json`: `{"results": [...]}` with `command`, `mean`, `stddev`, `median`, `user`,
//! `system`, `min`, `max`, `times`, `exit_codes` and, with parameters, `parameters`), which
//! hyperfine's own `scripts/` read; its CSV; its table in Markdown, AsciiDoc and Org syntax
//! (`--export-markdown`, `--export-asciidoc`, `--export-orgmode`), one table builder, in the
//! unit of `-u/--time-unit` and the order of `--sort`. Every figure is over the measured runs,
//! as hyperfine computes it (mean and sample standard deviation included), in seconds but in
//! the tables: these files are for hyperfine's readers; Vernier's own figures are in `--json`.

use super::engine::Series;
use super::ExecArgs;
use anyhow::{Context as _, Result};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use vernier::result::comparison::ComparisonFile;

/// One command's entry in hyperfine's JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub command: String,
    pub mean: f64,
    pub stddev: Option<f64>,
    pub median: f64,
    pub user: f64,
    pub system: f64,
    pub min: f64,
    pub max: f64,
    pub times: Vec<f64>,
    pub exit_codes: Vec<Option<i32>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Summary<'a> {
    results: &'a [Entry],
}

/// The entry of a command named `name` from its measured runs (`None`: no run measured).
pub fn entry(name: &str, s: &Series, values: &[(String, String)]) -> Option<Entry> {
    let runs: Vec<_> = s.measured().collect();
    if runs.is_empty() {
        return None;
    }
    let secs = |ns: u64| ns as f64 / 1e9;
    let times: Vec<f64> = runs.iter().map(|r| secs(r.wall_ns)).collect();
    let n = times.len() as f64;
    let mean = times.iter().sum::<f64>() / n;
    let stddev = (times.len() > 1)
        .then(|| (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    let mean_of = |f: &dyn Fn(&vernier::result::exec::Run) -> u64| {
        runs.iter().map(|r| secs(f(r))).sum::<f64>() / n
    };
    Some(Entry {
        command: name.to_string(),
        mean,
        stddev,
        median: vernier::stats::median(&times),
        user: mean_of(&|r| r.user_ns),
        system: mean_of(&|r| r.system_ns),
        min: times.iter().copied().fold(f64::INFINITY, f64::min),
        max: times.iter().copied().fold(0.0, f64::max),
        exit_codes: runs.iter().map(|r| r.exit_code).collect(),
        times,
        parameters: values.iter().cloned().collect(),
    })
}

/// hyperfine's JSON.
pub fn json(entries: &[Entry]) -> Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(&Summary { results: entries })?;
    out.push(b'\n');
    Ok(out)
}

/// A CSV field, quoted when it must be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// hyperfine's CSV: `command,mean,stddev,median,user,system,min,max` and a
/// `parameter_NAME` column per parameter.
pub fn csv(entries: &[Entry]) -> String {
    let mut head = vec![
        "command", "mean", "stddev", "median", "user", "system", "min", "max",
    ]
    .into_iter()
    .map(str::to_string)
    .collect::<Vec<_>>();
    if let Some(e) = entries.first() {
        head.extend(e.parameters.keys().map(|k| format!("parameter_{k}")));
    }
    let mut out = head.join(",") + "\n";
    for e in entries {
        let mut row = vec![csv_field(&e.command)];
        for v in [
            e.mean,
            e.stddev.unwrap_or(0.0),
            e.median,
            e.user,
            e.system,
            e.min,
            e.max,
        ] {
            row.push(v.to_string());
        }
        row.extend(e.parameters.values().map(|v| csv_field(v)));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// hyperfine's `--sort`: the order of the comparison printed and of the exported tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Sort {
    /// The comparison by time, the exported tables in the commands' order
    #[default]
    Auto,
    /// The comparison and the exported tables in the commands' order
    Command,
    /// The comparison and the exported tables by time, fastest first
    MeanTime,
}

impl Sort {
    /// The comparison as it is printed: in the commands' order, or by time (its ratio to the
    /// reference, in the unit compared, fastest first). The file written keeps the commands'
    /// order.
    pub fn comparison(self, file: &ComparisonFile) -> Cow<'_, ComparisonFile> {
        if self == Sort::Command {
            return Cow::Borrowed(file);
        }
        let mut shown = file.clone();
        shown
            .comparisons
            .sort_by(|a, b| a.ratio.total_cmp(&b.ratio));
        Cow::Owned(shown)
    }
}

/// hyperfine's `-u/--time-unit`: the unit of the exported tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeUnit {
    Microsecond,
    Millisecond,
    Second,
}

impl TimeUnit {
    /// hyperfine's unit when none is given: µs below a millisecond, ms below a second, else s
    /// (from the first command's mean).
    fn of(seconds: f64) -> TimeUnit {
        if seconds < 0.001 {
            TimeUnit::Microsecond
        } else if seconds < 1.0 {
            TimeUnit::Millisecond
        } else {
            TimeUnit::Second
        }
    }

    /// A time in seconds written in the unit, as hyperfine writes it: one decimal in µs and ms,
    /// three in s.
    fn format(self, seconds: f64) -> String {
        match self {
            TimeUnit::Microsecond => format!("{:.1}", seconds * 1e6),
            TimeUnit::Millisecond => format!("{:.1}", seconds * 1e3),
            TimeUnit::Second => format!("{seconds:.3}"),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Microsecond => "µs",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Second => "s",
        }
    }
}

/// The syntaxes of hyperfine's exported tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Markup {
    Markdown,
    Asciidoc,
    Orgmode,
}

/// The table's columns: the command left-aligned, the four figures right-aligned.
const COLUMNS: usize = 5;

impl Markup {
    /// A row of cells.
    fn row(self, cells: &[String]) -> String {
        match self {
            Markup::Markdown => crate::markdown::row(cells),
            Markup::Asciidoc => format!("\n| {} \n", cells.join(" \n| ")),
            Markup::Orgmode => format!("| {}  |  {} |\n", cells[0], cells[1..].join(" |  ")),
        }
    }

    /// What comes before the header row.
    fn opening(self) -> String {
        match self {
            Markup::Asciidoc => {
                format!("[cols=\"<{}\"]\n|===", ",>".repeat(COLUMNS - 1))
            }
            Markup::Markdown | Markup::Orgmode => String::new(),
        }
    }

    /// What comes between the header row and the rows.
    fn divider(self) -> String {
        match self {
            Markup::Markdown => format!("|:---|{}\n", "---:|".repeat(COLUMNS - 1)),
            Markup::Asciidoc => String::new(),
            Markup::Orgmode => format!("|{}--|\n", "--+".repeat(COLUMNS - 1)),
        }
    }

    /// What comes after the rows.
    fn closing(self) -> &'static str {
        match self {
            Markup::Asciidoc => "|===\n",
            Markup::Markdown | Markup::Orgmode => "",
        }
    }

    /// A command line in the table (its `|` escaped; in Markdown, the one code span every
    /// Markdown table of Vernier's writes).
    fn command(self, line: &str) -> String {
        let escaped = line.replace('|', "\\|");
        match self {
            Markup::Markdown => crate::markdown::code(line),
            Markup::Asciidoc => format!("`{escaped}`"),
            Markup::Orgmode => format!("={escaped}="),
        }
    }
}

/// hyperfine's table in one of its syntaxes: mean ± standard deviation, min, max, and the
/// mean relative to the fastest command's (± by propagating both standard deviations, as
/// hyperfine does), in `unit` (default: from the first command's mean), the rows in the
/// commands' order or by mean (`--sort mean-time`).
pub fn table(entries: &[Entry], markup: Markup, unit: Option<TimeUnit>, sort: Sort) -> String {
    let Some(first) = entries.first() else {
        return String::new();
    };
    let unit = unit.unwrap_or_else(|| TimeUnit::of(first.mean));
    let f = |v: f64| unit.format(v);
    let fastest = (0..entries.len())
        .min_by(|&a, &b| entries[a].mean.total_cmp(&entries[b].mean))
        .unwrap_or(0);
    let best = &entries[fastest];
    let mut order: Vec<usize> = (0..entries.len()).collect();
    if sort == Sort::MeanTime {
        order.sort_by(|&a, &b| entries[a].mean.total_cmp(&entries[b].mean));
    }
    let u = unit.symbol();
    let mut out = markup.opening();
    out.push_str(&markup.row(&[
        "Command".to_string(),
        format!("Mean [{u}]"),
        format!("Min [{u}]"),
        format!("Max [{u}]"),
        "Relative".to_string(),
    ]));
    out.push_str(&markup.divider());
    for i in order {
        let e = &entries[i];
        let sd = e.stddev.map(|s| format!(" ± {}", f(s))).unwrap_or_default();
        let rel = if i == fastest {
            1.0
        } else if best.mean > 0.0 {
            e.mean / best.mean
        } else {
            f64::INFINITY
        };
        let rel_sd = match (i == fastest, e.stddev, best.stddev) {
            (false, Some(a), Some(b)) if e.mean > 0.0 && best.mean > 0.0 => format!(
                " ± {:.2}",
                rel * ((a / e.mean).powi(2) + (b / best.mean).powi(2)).sqrt()
            ),
            _ => String::new(),
        };
        out.push_str(&markup.row(&[
            markup.command(&e.command),
            format!("{}{sd}", f(e.mean)),
            f(e.min),
            f(e.max),
            format!("{rel:.2}{rel_sd}"),
        ]));
    }
    out.push_str(markup.closing());
    out
}

/// Write the files hyperfine's flags asked for; `-` for a file prints it on standard output
/// after a blank line, as hyperfine does (whatever `--style`).
pub fn export(a: &ExecArgs, entries: &[Entry]) -> Result<()> {
    let write = |flag: &str, path: &std::path::Path, bytes: &[u8]| -> Result<()> {
        if path == std::path::Path::new("-") {
            println!("\n{}", String::from_utf8_lossy(bytes));
            return Ok(());
        }
        vernier::result::write_atomic(path, bytes)
            .with_context(|| format!("{flag} {}: cannot write it", path.display()))
    };
    if let Some(p) = &a.export_json {
        write("--export-json", p, &json(entries)?)?;
    }
    if let Some(p) = &a.export_csv {
        write("--export-csv", p, csv(entries).as_bytes())?;
    }
    for (flag, path, markup) in [
        ("--export-markdown", &a.export_markdown, Markup::Markdown),
        ("--export-asciidoc", &a.export_asciidoc, Markup::Asciidoc),
        ("--export-orgmode", &a.export_orgmode, Markup::Orgmode),
    ] {
        if let Some(p) = path {
            let text = table(entries, markup, a.time_unit, a.sort);
            write(flag, p, text.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier::result::exec::Run;

    fn series(ms: &[u64]) -> Series {
        Series {
            runs: ms
                .iter()
                .map(|&m| Run {
                    wall_ns: m * 1_000_000,
                    user_ns: 1_000_000,
                    exit_code: Some(0),
                    ..Run::default()
                })
                .collect(),
            t_ns: ms.iter().map(|&m| m * 1_000_000).collect(),
            wall_ns: ms.iter().sum::<u64>() * 1_000_000,
            probe: Vec::new(),
        }
    }

    #[test]
    fn the_figures_are_hyperfines() {
        let e = entry("a", &series(&[10, 20, 30]), &[]).unwrap();
        assert!((e.mean - 0.020).abs() < 1e-12);
        assert!((e.stddev.unwrap() - 0.010).abs() < 1e-12);
        assert_eq!((e.min, e.max, e.median), (0.010, 0.030, 0.020));
        assert_eq!(e.exit_codes, vec![Some(0); 3]);
        let v: serde_json::Value =
            serde_json::from_slice(&json(std::slice::from_ref(&e)).unwrap()).unwrap();
        assert_eq!(v["results"][0]["times"].as_array().unwrap().len(), 3);
        assert!(v["results"][0].get("parameters").is_none());
        let one = entry("b", &series(&[10]), &[("n".into(), "1".into())]).unwrap();
        assert_eq!(one.stddev, None);
        let c = csv(std::slice::from_ref(&one));
        assert!(
            c.starts_with("command,mean,stddev,median,user,system,min,max,parameter_n\n"),
            "{c}"
        );
        let md = table(&[e, one], Markup::Markdown, None, Sort::Auto);
        assert!(md.contains("| Command | Mean [ms] |"), "{md}");
        // The fastest (`b`) ran once: no standard deviation, so no ± on the relative speed.
        assert!(
            md.contains("| `a` | 20.0 ± 10.0 | 10.0 | 30.0 | 2.00 |"),
            "{md}"
        );
        assert!(md.contains("| `b` | 10.0 | 10.0 | 10.0 | 1.00 |"), "{md}");
        let a = entry("a", &series(&[10, 20, 30]), &[]).unwrap();
        let c = entry("c", &series(&[10, 10]), &[]).unwrap();
        let md = table(&[a, c], Markup::Markdown, None, Sort::Auto);
        assert!(
            md.contains("| `a` | 20.0 ± 10.0 | 10.0 | 30.0 | 2.00 ± 1.00 |"),
            "{md}"
        );
    }

    /// The figures of hyperfine's own tests of its tables: `sleep 0.1` and `sleep 2`.
    fn two_sleeps() -> Vec<Entry> {
        let e = |command: &str, mean: f64, stddev: f64, min: f64, max: f64| Entry {
            command: command.into(),
            mean,
            stddev: Some(stddev),
            median: mean,
            user: 0.0009,
            system: 0.0011,
            min,
            max,
            times: vec![mean; 3],
            exit_codes: vec![Some(0); 3],
            parameters: BTreeMap::new(),
        };
        vec![
            e("sleep 0.1", 0.1057, 0.0016, 0.1023, 0.1080),
            e("sleep 2", 2.0050, 0.0020, 2.0020, 2.0080),
        ]
    }

    #[test]
    fn the_three_tables_are_hyperfines_text() {
        let two = two_sleeps();
        assert_eq!(
            table(&two, Markup::Markdown, None, Sort::Auto),
            "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |\n\
             |:---|---:|---:|---:|---:|\n\
             | `sleep 0.1` | 105.7 ± 1.6 | 102.3 | 108.0 | 1.00 |\n\
             | `sleep 2` | 2005.0 ± 2.0 | 2002.0 | 2008.0 | 18.97 ± 0.29 |\n"
        );
        assert_eq!(
            table(&two, Markup::Orgmode, None, Sort::Auto),
            "| Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative |\n\
             |--+--+--+--+--|\n\
             | =sleep 0.1=  |  105.7 ± 1.6 |  102.3 |  108.0 |  1.00 |\n\
             | =sleep 2=  |  2005.0 ± 2.0 |  2002.0 |  2008.0 |  18.97 ± 0.29 |\n"
        );
        assert_eq!(
            table(&two, Markup::Asciidoc, Some(TimeUnit::Second), Sort::Auto),
            "[cols=\"<,>,>,>,>\"]\n|===\n\
             | Command \n| Mean [s] \n| Min [s] \n| Max [s] \n| Relative \n\n\
             | `sleep 0.1` \n| 0.106 ± 0.002 \n| 0.102 \n| 0.108 \n| 1.00 \n\n\
             | `sleep 2` \n| 2.005 ± 0.002 \n| 2.002 \n| 2.008 \n| 18.97 ± 0.29 \n\
             |===\n"
        );
    }

    #[test]
    fn the_time_unit_and_the_sort_apply_to_every_table() {
        let mut two = two_sleeps();
        two.reverse();
        two[0].command = "a | b".into();
        // The unit follows the first command's mean unless -u gives it.
        let auto = table(&two, Markup::Markdown, None, Sort::Auto);
        assert!(auto.starts_with("| Command | Mean [s] |"), "{auto}");
        assert!(auto.contains("| `a \\| b` | 2.005 ± 0.002 |"), "{auto}");
        let us = table(
            &two,
            Markup::Orgmode,
            Some(TimeUnit::Microsecond),
            Sort::Auto,
        );
        assert!(us.contains("|  Mean [µs] |"), "{us}");
        assert!(us.contains("| =sleep 0.1=  |  105700.0 ± 1600.0 |"), "{us}");
        // `auto` and `command` keep the commands' order; `mean-time` puts the fastest first.
        let rows = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.contains("sleep") || l.contains("a \\| b"))
                .map(|l| l.split(['`', '=']).nth(1).unwrap().to_string())
                .collect()
        };
        for (sort, order) in [
            (Sort::Auto, ["a \\| b", "sleep 0.1"]),
            (Sort::Command, ["a \\| b", "sleep 0.1"]),
            (Sort::MeanTime, ["sleep 0.1", "a \\| b"]),
        ] {
            for markup in [Markup::Markdown, Markup::Asciidoc, Markup::Orgmode] {
                let t = table(&two, markup, None, sort);
                assert_eq!(rows(&t), order, "{sort:?} {markup:?}: {t}");
            }
        }
    }

    #[test]
    fn the_comparison_is_printed_by_time_unless_sorted_by_command() {
        let mut file = ComparisonFile::new(vernier::stats::compare::Mode::Paired, 0.5);
        for (name, ratio) in [("slow", 1.5), ("fast", 0.5), ("same", 1.0)] {
            file.comparisons.push(vernier::analyze::pairs::Comparison {
                name: name.into(),
                ratio,
                ..Default::default()
            });
        }
        let names = |f: &ComparisonFile| -> Vec<String> {
            f.comparisons.iter().map(|c| c.name.clone()).collect()
        };
        assert_eq!(
            names(&Sort::Command.comparison(&file)),
            ["slow", "fast", "same"]
        );
        for sort in [Sort::Auto, Sort::MeanTime] {
            assert_eq!(names(&sort.comparison(&file)), ["fast", "same", "slow"]);
        }
        // The file itself keeps the commands' order.
        assert_eq!(names(&file), ["slow", "fast", "same"]);
    }
}
