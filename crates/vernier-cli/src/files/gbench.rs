//! Google Benchmark's three outputs written from a result file: its JSON (as its JSON reporter
//! writes it), its CSV and its console table, all three from the same runs (one `iteration`
//! run per benchmark, then the `_BigO` and `_RMS` aggregates of each fitted family).
//! `vernier export --format gbench` writes the JSON; `vernier run --gbench-format` and
//! `--gbench-out` (which the Google Benchmark layer passes when a program run by hand hands
//! itself to the runner, docs/gbench.md) write any of the three.

use super::num;
use serde_json::{json, Value};
use std::fmt::Write as _;
use vernier::result::{ResultFile, Status};

/// One run of Google Benchmark's output: its fields in the order its reporter writes them.
pub type Run = Vec<(&'static str, Value)>;

/// The runs of `file`: one `iteration` run per benchmark whose `real_time` is the median per
/// iteration (ns) and `iterations` the steady samples × iterations per sample. `cpu_time` is
/// the task-clock per iteration when it was counted, else the same median (Vernier times
/// wall-clock only). After the last benchmark of each fitted family, its complexity.
pub fn runs(file: &ResultFile) -> Vec<Run> {
    let benchmarks: Vec<Run> = file
        .benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut o = head(&b.name, i, &b.name, "iteration");
            o.push(("repetition_index", json!(0)));
            o.push(("threads", json!(b.threads.unwrap_or(1))));
            if b.status == Status::Failed {
                o.push(("error_occurred", json!(true)));
                o.push((
                    "error_message",
                    json!(b.error.clone().unwrap_or_else(|| "failed".into())),
                ));
            }
            let cpu = b
                .counters
                .as_ref()
                .and_then(|c| c.get("task-clock_per_iter"))
                .copied()
                .unwrap_or(b.per_iter.median_ns);
            o.push((
                "iterations",
                json!(b.steady_samples as u64 * b.iters_per_sample),
            ));
            o.push(("real_time", num(b.per_iter.median_ns)));
            o.push(("cpu_time", num(cpu)));
            o.push(("time_unit", json!("ns")));
            // Its rate counters, over real time as its reporter gives them (none for a body
            // the compiler removed).
            match b.throughput.filter(|_| !b.removed()) {
                Some(t @ vernier::units::Throughput::BytesPerIter(_)) => {
                    o.push(("bytes_per_second", num(t.per_second(b.per_iter.median_ns))));
                }
                Some(t @ vernier::units::Throughput::ItemsPerIter(_)) => {
                    o.push(("items_per_second", num(t.per_second(b.per_iter.median_ns))));
                }
                None => {}
            }
            // Google Benchmark's memory fields (its MemoryManager's, per iteration), when
            // counted; `max_bytes_used` has no counterpart here and is left out.
            if let Some(m) = &b.memory {
                o.push(("allocs_per_iter", num(m.allocs_per_iter)));
                o.push(("total_allocated_bytes", num(m.bytes_per_iter)));
                o.push(("net_heap_growth", num(m.net_bytes_per_iter)));
            }
            o
        })
        .collect();
    with_complexity(file, benchmarks)
}

/// The fields every run begins with: its name, family and run name and type, one repetition.
fn head(name: &str, family_index: usize, run_name: &str, run_type: &str) -> Run {
    vec![
        ("name", json!(name)),
        ("family_index", json!(family_index)),
        ("per_family_instance_index", json!(0)),
        ("run_name", json!(run_name)),
        ("run_type", json!(run_type)),
        ("repetitions", json!(1)),
    ]
}

/// Google Benchmark's JSON: `context` (`date` as given), then the runs.
pub fn json(file: &ResultFile, date: &str) -> String {
    // The TSC runs at the core's nominal clock; the Arm generic timer's rate is no core's.
    let mhz = file
        .timer
        .tsc_hz
        .filter(|_| file.timer.kind == vernier::timer::TimerKind::Tsc)
        .map(|h| h / 1e6)
        .or_else(|| {
            (file.harness.cycle_ns.is_finite() && file.harness.cycle_ns > 0.0)
                .then(|| 1e3 / file.harness.cycle_ns)
        })
        .unwrap_or(0.0)
        .round() as i64;
    let tuned = file.system.get("tuned").and_then(Value::as_bool);
    let debug = file.analysis.debug_build;
    let context: Run = vec![
        ("date", json!(date)),
        ("host_name", json!(file.machine.hostname)),
        (
            "executable",
            json!(format!("{} {}", file.tool.name, file.tool.version)),
        ),
        ("num_cpus", json!(file.machine.logical_cpus)),
        ("mhz_per_cpu", json!(mhz)),
        (
            "cpu_scaling_enabled",
            json!(tuned.map(|t| !t).unwrap_or(true)),
        ),
        ("caches", json!([])),
        ("load_avg", json!([])),
        (
            "library_version",
            json!(format!("vernier {}", file.tool.version)),
        ),
        (
            "library_build_type",
            json!(if debug { "debug" } else { "release" }),
        ),
        ("json_schema_version", json!(1)),
    ];
    // Keys in the order Google Benchmark's reporter writes them, indented as it does.
    let object = |pairs: &[(&str, Value)], indent: &str| {
        let lines: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{indent}{}: {v}", json!(k)))
            .collect();
        lines.join(",\n")
    };
    let runs: Vec<String> = runs(file)
        .iter()
        .map(|o| format!("    {{\n{}\n    }}", object(o, "      ")))
        .collect();
    format!(
        "{{\n  \"context\": {{\n{}\n  }},\n  \"benchmarks\": [\n{}\n  ]\n}}\n",
        object(&context, "    "),
        runs.join(",\n")
    )
}

/// Google Benchmark's notation of a complexity class (`big_o`): the protocol's, but `(1)`.
fn big_o(c: vernier::stats::complexity::Class) -> &'static str {
    match c {
        vernier::stats::complexity::Class::Constant => "(1)",
        c => c.option(),
    }
}

/// `runs` with, after the last benchmark of each family that has a complexity fit, the two
/// aggregates Google Benchmark writes for `->Complexity()`: `FAMILY_BigO` (the coefficient and
/// the class) and `FAMILY_RMS` (the fit's relative error).
fn with_complexity(file: &ResultFile, mut runs: Vec<Run>) -> Vec<Run> {
    use vernier::result::complexity::{families, member_of};
    for fit in families(&file.benchmarks).iter().rev() {
        let Some(last) = file
            .benchmarks
            .iter()
            .rposition(|b| member_of(b).is_some_and(|(f, _)| f == fit.family))
        else {
            continue;
        };
        let aggregate = |suffix: &str, unit: &str| -> Run {
            let name = format!("{}_{suffix}", fit.family);
            let mut run = head(&name, last, &fit.family, "aggregate");
            run.push(("threads", json!(1)));
            run.push(("aggregate_name", json!(suffix)));
            run.push(("aggregate_unit", json!(unit)));
            run
        };
        let mut bigo = aggregate("BigO", "time");
        bigo.push(("cpu_coefficient", num(fit.coefficient_ns)));
        bigo.push(("real_coefficient", num(fit.coefficient_ns)));
        bigo.push(("big_o", json!(big_o(fit.class))));
        bigo.push(("time_unit", json!("ns")));
        let mut rms = aggregate("RMS", "percentage");
        rms.push(("rms", num(fit.rms)));
        runs.insert(last + 1, rms);
        runs.insert(last + 1, bigo);
    }
    runs
}

/// Field `key` of `run`.
fn get<'r>(run: &'r Run, key: &str) -> Option<&'r Value> {
    run.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// Field `key` of `run` as a number (0 when absent or undefined).
fn number(run: &Run, key: &str) -> f64 {
    get(run, key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// Field `key` of `run` as text: a string's own text, a number's shortest form, "" when
/// absent or undefined.
fn text(run: &Run, key: &str) -> String {
    match get(run, key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// A CSV field as Google Benchmark's CSV reporter writes text: quoted, quotes doubled.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Google Benchmark's CSV header.
pub const CSV_HEADER: &str = "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,\
items_per_second,label,error_occurred,error_message";

/// Google Benchmark's CSV of the runs: a `_BigO` row carries its coefficients as times and its
/// class as the unit, a `_RMS` row its relative error as both times; a failed run only its
/// error.
pub fn csv(file: &ResultFile) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{CSV_HEADER}");
    for r in runs(file) {
        let name = quoted(&text(&r, "name"));
        if get(&r, "error_occurred").is_some() {
            let error = quoted(&text(&r, "error_message"));
            let _ = writeln!(s, "{name},,,,,,,,true,{error}");
            continue;
        }
        let (real, cpu, unit) = if get(&r, "big_o").is_some() {
            let (real, cpu) = (text(&r, "real_coefficient"), text(&r, "cpu_coefficient"));
            (real, cpu, text(&r, "big_o"))
        } else if get(&r, "rms").is_some() {
            (text(&r, "rms"), text(&r, "rms"), String::new())
        } else {
            let (real, cpu) = (text(&r, "real_time"), text(&r, "cpu_time"));
            (real, cpu, text(&r, "time_unit"))
        };
        let row = [
            name,
            text(&r, "iterations"),
            real,
            cpu,
            unit,
            text(&r, "bytes_per_second"),
            text(&r, "items_per_second"),
            String::new(),
            String::new(),
            String::new(),
        ];
        let _ = writeln!(s, "{}", row.join(","));
    }
    s
}

/// `value` in C's `%g` (six significant digits, trailing zeros dropped) with Google
/// Benchmark's SI prefixes (`one_k` 1000) or binary ones (1024).
fn human(value: f64, one_k: f64) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const BINARY: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let (mut v, mut i) = (value, 0);
    while v.abs() >= one_k && i < 6 {
        v /= one_k;
        i += 1;
    }
    let digits = if v == 0.0 {
        0
    } else {
        (5 - v.abs().log10().floor() as i32).clamp(0, 12) as usize
    };
    let mut t = format!("{v:.digits$}");
    if t.contains('.') {
        t = t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let prefix = if one_k == 1024.0 { BINARY[i] } else { SI[i] };
    format!("{t}{prefix}")
}

/// A time in the table's column, with as many decimals as Google Benchmark's console gives.
fn column_time(t: f64) -> String {
    if t < 1.0 {
        format!("{t:10.3}")
    } else if t < 10.0 {
        format!("{t:10.2}")
    } else if t < 100.0 {
        format!("{t:10.1}")
    } else if t > 9_999_999_999.0 {
        format!("{t:1.4e}")
    } else {
        format!("{t:10.0}")
    }
}

/// Google Benchmark's console table of the runs: `Time`, `CPU`, `Iterations`, then the rates.
pub fn console(file: &ResultFile) -> String {
    let runs = runs(file);
    let width = runs
        .iter()
        .map(|r| text(r, "name").len())
        .max()
        .unwrap_or(0)
        .max(10);
    let head = format!(
        "{:<width$} {:>13} {:>15} {:>12}",
        "Benchmark", "Time", "CPU", "Iterations"
    );
    let line = "-".repeat(head.len() + 16);
    let mut s = format!("{line}\n{head} UserCounters...\n{line}\n");
    for r in &runs {
        let _ = write!(s, "{:<width$} ", text(r, "name"));
        if get(r, "error_occurred").is_some() {
            let _ = writeln!(s, "ERROR OCCURRED: '{}'", text(r, "error_message"));
            continue;
        }
        if get(r, "big_o").is_some() {
            let class = text(r, "big_o");
            let (real, cpu) = (number(r, "real_coefficient"), number(r, "cpu_coefficient"));
            let _ = write!(s, "{real:10.2} {class:<4} {cpu:10.2} {class:<4} ");
        } else if get(r, "rms").is_some() {
            let pct = number(r, "rms") * 100.0;
            let _ = write!(s, "{pct:10.0} {:<4} {pct:10.0} {:<4} ", "%", "%");
        } else {
            let unit = text(r, "time_unit");
            let (real, cpu) = (number(r, "real_time"), number(r, "cpu_time"));
            let _ = write!(
                s,
                "{} {unit:<4} {} {unit:<4} {:>10}",
                column_time(real),
                column_time(cpu),
                text(r, "iterations")
            );
        }
        for (key, one_k) in [("bytes_per_second", 1024.0), ("items_per_second", 1000.0)] {
            if number(r, key) > 0.0 {
                let _ = write!(s, " {key}={}/s", human(number(r, key), one_k));
            }
        }
        let _ = writeln!(s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_as_c_prints_them_with_googles_prefixes() {
        assert_eq!(human(1536.0 * 1024.0 * 1024.0, 1024.0), "1.5Gi");
        assert_eq!(human(123_456_789.0, 1000.0), "123.457M");
        assert_eq!(human(999.0, 1000.0), "999");
        assert_eq!(human(0.0, 1000.0), "0");
    }

    /// The committed result files (a demo and a C++ run).
    fn fixtures() -> Vec<ResultFile> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../vernier/tests/fixtures/results");
        ["demo-v0.1.0.json", "run-cpp-v0.1.0.json"]
            .iter()
            .map(|f| ResultFile::load(&dir.join(f)).unwrap())
            .collect()
    }

    #[test]
    fn the_csv_and_the_table_carry_the_jsons_runs() {
        for file in fixtures() {
            let runs = runs(&file);
            assert!(runs.len() >= file.benchmarks.len());
            let csv = csv(&file);
            let rows: Vec<&str> = csv.lines().collect();
            assert_eq!(rows[0], CSV_HEADER);
            assert_eq!(rows.len(), runs.len() + 1, "{csv}");
            let table = console(&file);
            let lines: Vec<&str> = table.lines().collect();
            assert_eq!(lines.len(), runs.len() + 3, "{table}");
            for ((run, row), line) in runs.iter().zip(&rows[1..]).zip(&lines[3..]) {
                let name = text(run, "name");
                let rest = row
                    .strip_prefix(&format!("{},", quoted(&name)))
                    .unwrap_or_else(|| panic!("{name}: {row}"));
                let cells: Vec<&str> = rest.split(',').collect();
                assert_eq!(cells.len(), 9, "{row}");
                if get(run, "real_time").is_some() {
                    assert_eq!(cells[0], text(run, "iterations"), "{row}");
                    let real: f64 = cells[1].parse().unwrap();
                    assert_eq!(real, number(run, "real_time"), "{row}");
                    assert_eq!(cells[3], "ns", "{row}");
                }
                assert!(line.starts_with(&format!("{name} ")), "{line}");
            }
        }
    }

    #[test]
    fn table_times_keep_googles_decimals() {
        assert_eq!(column_time(0.5), "     0.500");
        assert_eq!(column_time(5.0), "      5.00");
        assert_eq!(column_time(50.0), "      50.0");
        assert_eq!(column_time(5000.0), "      5000");
    }
}
