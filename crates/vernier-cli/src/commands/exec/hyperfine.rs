//! hyperfine's files (`--export-json`, `--export-csv`, `--export-markdown`) written from the
//! runs, in hyperfine's formats: its JSON (`{"results": [...]}` with `command`, `mean`,
//! `stddev`, `median`, `user`, `system`, `min`, `max`, `times`, `exit_codes` and, with
//! parameters, `parameters`) is what hyperfine's own `scripts/` read. Every figure is in
//! seconds over the measured runs, as hyperfine computes it (mean and sample standard
//! deviation included): these files are for hyperfine's readers; Vernier's own figures are in
//! `--json`.

use super::engine::Series;
use super::ExecArgs;
use anyhow::{Context as _, Result};
use serde::Serialize;
use std::collections::BTreeMap;

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

/// hyperfine's unit for a table: µs below a millisecond, ms below a second, else s (from the
/// first command's mean), and a value in it.
fn unit(first_mean: f64) -> (&'static str, f64, usize) {
    if first_mean < 0.001 {
        ("µs", 1e6, 1)
    } else if first_mean < 1.0 {
        ("ms", 1e3, 1)
    } else {
        ("s", 1.0, 3)
    }
}

/// hyperfine's Markdown table: mean ± standard deviation, min, max, and the mean relative to
/// the fastest command's (± by propagating both standard deviations, as hyperfine does).
pub fn markdown(entries: &[Entry]) -> String {
    let Some(first) = entries.first() else {
        return String::new();
    };
    let (u, scale, digits) = unit(first.mean);
    let f = |v: f64| format!("{:.*}", digits, v * scale);
    let fastest = entries
        .iter()
        .min_by(|a, b| a.mean.total_cmp(&b.mean))
        .unwrap_or(first);
    let mut out = format!(
        "| Command | Mean [{u}] | Min [{u}] | Max [{u}] | Relative |\n|:---|---:|---:|---:|---:|\n"
    );
    for e in entries {
        let sd = e.stddev.map(|s| format!(" ± {}", f(s))).unwrap_or_default();
        let rel = if fastest.mean > 0.0 {
            e.mean / fastest.mean
        } else {
            f64::INFINITY
        };
        let rel_sd = match (std::ptr::eq(e, fastest), e.stddev, fastest.stddev) {
            (false, Some(a), Some(b)) if e.mean > 0.0 && fastest.mean > 0.0 => format!(
                " ± {:.2}",
                rel * ((a / e.mean).powi(2) + (b / fastest.mean).powi(2)).sqrt()
            ),
            _ => String::new(),
        };
        out.push_str(&format!(
            "| `{}` | {}{sd} | {} | {} | {rel:.2}{rel_sd} |\n",
            e.command.replace('|', "\\|"),
            f(e.mean),
            f(e.min),
            f(e.max),
        ));
    }
    out
}

/// Write the files hyperfine's flags asked for.
pub fn export(a: &ExecArgs, entries: &[Entry]) -> Result<()> {
    let write = |flag: &str, path: &std::path::Path, bytes: &[u8]| -> Result<()> {
        vernier::result::write_atomic(path, bytes)
            .with_context(|| format!("{flag} {}: cannot write it", path.display()))
    };
    if let Some(p) = &a.export_json {
        write("--export-json", p, &json(entries)?)?;
    }
    if let Some(p) = &a.export_csv {
        write("--export-csv", p, csv(entries).as_bytes())?;
    }
    if let Some(p) = &a.export_markdown {
        write("--export-markdown", p, markdown(entries).as_bytes())?;
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
        let md = markdown(&[e, one]);
        assert!(md.contains("| Command | Mean [ms] |"), "{md}");
        // The fastest (`b`) ran once: no standard deviation, so no ± on the relative speed.
        assert!(
            md.contains("| `a` | 20.0 ± 10.0 | 10.0 | 30.0 | 2.00 |"),
            "{md}"
        );
        assert!(md.contains("| `b` | 10.0 | 10.0 | 10.0 | 1.00 |"), "{md}");
        let a = entry("a", &series(&[10, 20, 30]), &[]).unwrap();
        let md = markdown(&[a, entry("c", &series(&[10, 10]), &[]).unwrap()]);
        assert!(
            md.contains("| `a` | 20.0 ± 10.0 | 10.0 | 30.0 | 2.00 ± 1.00 |"),
            "{md}"
        );
    }
}
