//! `vernier exec` on tiny scripted commands (`true`, `sh -c 'exit 3'`, a sleeper): what each
//! run keeps, the counts of runs, the parameters and names, hyperfine's files and output flags
//! (`--style`, `--sort`, `-u`, its three tables), and bad input (not found, a non-zero exit, a
//! run past --timeout, a run that fails part-way, a flag's value it does not take) named with
//! its status and the last lines of its standard error, what was measured before it kept.
//! These check structure and counts, never a time.

use crate::common::cli::{text, vernier};
use serde_json::Value;
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-deterministic");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `key` of every entry of the array `list`: the benchmarks' names, the exports' commands.
fn each<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e[key].as_str().unwrap())
        .collect()
}

fn exec(args: &[&str]) -> std::process::Output {
    vernier().arg("exec").args(args).output().unwrap()
}

/// `vernier exec ARGS --json FILE`, FILE a fresh path named `name`: the output and the path.
fn exec_json(args: &[&str], name: &str) -> (std::process::Output, PathBuf) {
    let f = tmp(name);
    let o = vernier()
        .arg("exec")
        .args(args)
        .arg("--json")
        .arg(&f)
        .output()
        .unwrap();
    (o, f)
}

#[test]
fn every_run_keeps_its_resource_use_and_exit_status() {
    let (o, f) = exec_json(&["-r", "7", "-w", "2", "true"], "true.json");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    let b = &v["benchmarks"][0];
    assert_eq!(b["name"], "true");
    let runs = b["runs"].as_array().unwrap();
    // Two warm-up runs first, flagged, then exactly seven measured ones.
    assert_eq!(runs.len(), 9, "{runs:?}");
    assert!(runs[..2].iter().all(|r| r["warmup"] == true));
    assert!(runs[2..].iter().all(|r| r.get("warmup").is_none()));
    for r in runs {
        assert_eq!(r["exit_code"], 0);
        for k in [
            "wall_ns",
            "user_ns",
            "system_ns",
            "max_rss_bytes",
            "minor_faults",
            "major_faults",
            "voluntary_switches",
            "involuntary_switches",
        ] {
            assert!(r[k].is_u64(), "{k}: {r}");
        }
        assert!(r["wall_ns"].as_u64().unwrap() > 0 && r["max_rss_bytes"].as_u64().unwrap() > 0);
    }
    // The samples are the measured runs' times in the unit the file names (CPU time when the
    // command is CPU-bound, wall time otherwise), one iteration each.
    let ns: Vec<u64> = b["samples"]["ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let judged = b["exec"]["judged"].as_str().unwrap();
    let times: Vec<u64> = runs[2..]
        .iter()
        .map(|r| {
            let f = |k: &str| r[k].as_u64().unwrap();
            match judged {
                "cpu" => f("user_ns") + f("system_ns"),
                "wall" => f("wall_ns"),
                other => panic!("judged {other}"),
            }
            .max(1)
        })
        .collect();
    assert_eq!(ns, times);
    assert!(b["samples"]["iters"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i == 1));
    assert_eq!(v["schema"], 2);
    // The table and the resource line.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("true") && out.contains("peak RSS"), "{out}");
}

#[test]
fn the_counts_bound_the_runs() {
    // `vernier exec ARGS true`, which must succeed: how many runs its result file holds.
    let runs = |args: &[&str]| {
        let (o, f) = exec_json(&[args, &["true"]].concat(), "counts.json");
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        json(&f)["benchmarks"][0]["runs"].as_array().unwrap().len()
    };
    // At most 4 runs, whatever the budget.
    assert_eq!(runs(&["-M", "4", "--time", "30"]), 4);
    // At least 12 runs, however small the budget.
    assert_eq!(runs(&["-m", "12", "--time", "0.001"]), 12);
    // Contradictions are refused before anything runs.
    let o = exec(&["-m", "5", "-M", "2", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("--max-runs 2 is below --min-runs 5"),
        "{}",
        text(&o)
    );
    let o = exec(&["-r", "0", "true"]);
    assert!(text(&o).contains("-r 0"), "{}", text(&o));
}

#[test]
fn a_command_that_is_not_found_is_named_with_the_fix() {
    let o = exec(&["-r", "3", "no-such-command-anywhere --flag"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no-such-command-anywhere: command not found") && err.contains("--shell"),
        "{err}"
    );
}

#[test]
fn a_failing_run_is_named_with_its_status_and_its_last_lines() {
    let (o, f) = exec_json(
        &[
            "-r",
            "3",
            "sh -c 'echo first >&2; echo the reason >&2; exit 3'",
        ],
        "fails.json",
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("first") && err.contains("the reason"), "{err}");
    assert!(err.contains("-i"), "{err}");
    let b = &json(&f)["benchmarks"][0];
    assert_eq!(b["status"], "failed");
    // With -i the same command is timed, its status kept.
    let o = exec(&[
        "-r",
        "3",
        "-i",
        "sh -c 'exit 3'",
        "--json",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let runs = json(&f)["benchmarks"][0]["runs"].clone();
    assert_eq!(runs.as_array().unwrap().len(), 3);
    assert!(runs.as_array().unwrap().iter().all(|r| r["exit_code"] == 3));
}

#[test]
fn a_run_that_fails_part_way_keeps_the_runs_before_it() {
    // The fourth run of this command fails: a counter in a file.
    let counter = tmp("counter");
    let _ = std::fs::remove_file(&counter);
    let line = format!(
        "sh -c 'n=$(cat {0} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {0}; \
         [ $n -lt 4 ] || {{ echo out of luck >&2; exit 9; }}'",
        counter.display()
    );
    let (o, f) = exec_json(&["-r", "10", &line], "partway.json");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("(run 4)") && err.contains("status 9"), "{err}");
    assert!(err.contains("out of luck"), "{err}");
    let b = &json(&f)["benchmarks"][0];
    assert_eq!(b["runs"].as_array().unwrap().len(), 3, "{b}");
    assert_eq!(b["samples"]["ns"].as_array().unwrap().len(), 3);
    assert!(b["error"].as_str().unwrap().contains("status 9"));
}

#[test]
fn a_run_past_the_timeout_is_killed_and_named() {
    let o = exec(&["-r", "2", "--timeout", "0.3", "sleep 30"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`sleep 30` did not end within --timeout and was killed"),
        "{err}"
    );
}

#[test]
fn unbalanced_quotes_are_named_and_a_shell_runs_what_needs_one() {
    let o = exec(&["-r", "2", "echo 'open"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("quotes are not closed"), "{}", text(&o));
    // A pipe needs a shell: without one, `|` is an argument of `echo`.
    let out = tmp("piped.txt");
    let o = exec(&[
        "-r",
        "1",
        "--shell",
        "sh",
        "echo one | tr o 0",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "0ne\n");
    let o = exec(&[
        "-r",
        "1",
        "-N",
        "echo one | tr o 0",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "one | tr o 0\n");
}

#[test]
fn parameters_expand_the_commands_and_name_them() {
    let f = tmp("params.json");
    let hj = tmp("params-hyperfine.json");
    let csv = tmp("params.csv");
    let md = tmp("params.md");
    let o = exec(&[
        "-r",
        "2",
        "-P",
        "n",
        "1",
        "3",
        "-n",
        "exit {n}",
        "-i",
        "sh -c 'exit {n}'",
        "--json",
        f.to_str().unwrap(),
        "--export-json",
        hj.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
        "--export-markdown",
        md.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    let names = each(&v["benchmarks"], "name");
    assert_eq!(names, ["exit 1", "exit 2", "exit 3"]);
    for (k, b) in v["benchmarks"].as_array().unwrap().iter().enumerate() {
        assert!(b["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["exit_code"] == k + 1));
        // A numeric scan: each command is a member of the template's family at its value.
        assert_eq!(b["complexity"]["n"], k + 1);
        assert_eq!(b["complexity"]["family"], "sh -c 'exit {n}'");
    }
    // hyperfine's JSON: its fields, every time and exit code, the parameter's value.
    let h = json(&hj);
    let r = h["results"].as_array().unwrap();
    assert_eq!(r.len(), 3);
    for (k, e) in r.iter().enumerate() {
        assert_eq!(e["command"], format!("exit {}", k + 1));
        for key in ["mean", "stddev", "median", "user", "system", "min", "max"] {
            assert!(e[key].is_f64(), "{key}: {e}");
        }
        assert_eq!(e["times"].as_array().unwrap().len(), 2);
        assert_eq!(e["exit_codes"], serde_json::json!([k + 1, k + 1]));
        assert_eq!(e["parameters"]["n"], (k + 1).to_string());
    }
    let c = std::fs::read_to_string(&csv).unwrap();
    assert!(
        c.starts_with("command,mean,stddev,median,user,system,min,max,parameter_n\n"),
        "{c}"
    );
    assert_eq!(c.lines().count(), 4);
    let m = std::fs::read_to_string(&md).unwrap();
    assert!(m.starts_with("| Command | Mean ["), "{m}");
    assert!(m.contains("| `exit 2` |"), "{m}");
    // A list, and a name for each command.
    let o = exec(&[
        "-r",
        "1",
        "-L",
        "w",
        "a,b",
        "echo {w}",
        "--export-json",
        hj.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let h = json(&hj);
    let cmds = each(&h["results"], "command");
    assert_eq!(cmds, ["echo a", "echo b"]);
}

#[test]
fn two_commands_make_a_comparison_file_with_every_run() {
    let (o, f) = exec_json(
        &["-r", "6", "true", "sh -c true", "--reference", "sh -c true"],
        "two.json",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    assert_eq!(v["schema"], 1);
    assert_eq!(v["old"], "sh -c true");
    let c = &v["comparisons"][0];
    assert_eq!(c["name"], "true");
    for k in ["verdict", "ratio", "ci95", "seconds"] {
        assert!(c.get(k).is_some(), "{k}: {c}");
    }
    // The rounds pair the two commands' runs.
    assert_eq!(c["pair_samples"]["old_ns"].as_array().unwrap().len(), 6);
    let part = &v["exec"];
    assert!(
        part["judged"] == "wall" || part["judged"] == "cpu",
        "{part}"
    );
    let cmds = part["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 2);
    assert!(cmds
        .iter()
        .all(|c| c["runs"].as_array().unwrap().len() == 6));
    // A reference that is none of the commands is a command of its own, run first under
    // --reference-name, as in hyperfine 1.20.
    let (o, f) = exec_json(
        &[
            "-r",
            "3",
            "true",
            "--reference",
            "sh -c true",
            "--reference-name",
            "base",
        ],
        "reference.json",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    assert_eq!(
        (&v["old"], &v["new"]),
        (&"base".into(), &"true".into()),
        "{v}"
    );
    assert_eq!(v["exec"]["commands"][0]["command"], "sh -c true");
    // --reference-name names the --reference command: alone, it is refused.
    let o = exec(&["-r", "1", "true", "--reference-name", "base"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--reference"), "{}", text(&o));
}

#[test]
fn two_commands_saved_are_two_series_in_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("h.sqlite").display());
    let o = exec(&[
        "-r",
        "3",
        "true",
        "sh -c true",
        "--save",
        "--db",
        &db,
        "--commit",
        "c1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("saved run 1"), "{}", text(&o));
    let o = vernier()
        .args(["history", "--json", "--db", &db])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut names: Vec<&str> = each(&h["series"], "name");
    names.sort_unstable();
    assert_eq!(names, ["sh -c true", "true"], "{h}");
}

#[test]
fn compare_exec_compares_two_command_lines() {
    let f = tmp("compare-exec.json");
    let o = vernier()
        .args([
            "compare",
            "--exec",
            "true",
            "sh -c true",
            "--time",
            "0.05",
            "--json",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    assert_eq!(v["comparisons"][0]["name"], "sh -c true");
    assert_eq!(v["exec"]["commands"].as_array().unwrap().len(), 2);
}

#[test]
fn prepare_and_conclude_run_around_each_run_and_setup_and_cleanup_once() {
    let log = tmp("around.log");
    let _ = std::fs::remove_file(&log);
    let l = log.display().to_string();
    let o = exec(&[
        "-r",
        "3",
        "--shell",
        "sh",
        "--setup",
        &format!("echo setup >> {l}"),
        "--prepare",
        &format!("echo prepare >> {l}"),
        "--conclude",
        &format!("echo conclude >> {l}"),
        "--cleanup",
        &format!("echo cleanup >> {l}"),
        &format!("echo run >> {l}"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let got = std::fs::read_to_string(&log).unwrap();
    let want = "setup\n".to_string() + &"prepare\nrun\nconclude\n".repeat(3) + "cleanup\n";
    assert_eq!(got, want);
}

#[test]
fn through_a_shell_its_start_up_is_measured_and_taken_off() {
    let (o, f) = exec_json(&["-r", "4", "-S", "sh", "true"], "shell.json");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    let names = each(&v["benchmarks"], "name");
    assert_eq!(names, ["true", "sh start-up (sh -c '')"]);
    // Measured in the same rounds: as many runs.
    assert_eq!(v["benchmarks"][1]["runs"].as_array().unwrap().len(), 4);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("net of its start-up"), "{out}");
    // What was taken off each run is in the file, and the runs are net of it.
    let taken = &v["benchmarks"][0]["exec"]["shell_startup"];
    assert_eq!(taken["command"], "sh -c ''", "{v}");
    let startup_walls: Vec<f64> = v["benchmarks"][1]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["wall_ns"].as_f64().unwrap())
        .collect();
    let median = {
        let mut w = startup_walls.clone();
        w.sort_by(f64::total_cmp);
        (w[1] + w[2]) / 2.0
    };
    assert_eq!(taken["wall_ns"].as_f64().unwrap(), median.round(), "{v}");
    // `vernier analyze` re-derives every figure, what was taken off each run kept.
    let o = vernier().arg("analyze").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("every figure equals the one stored"),
        "{}",
        text(&o)
    );
}

#[test]
fn instructions_without_valgrind_names_the_fix_and_counts_nothing() {
    let f = tmp("no-valgrind.json");
    let o = vernier()
        .env("VERNIER_VALGRIND", "/nonexistent/valgrind")
        .args(["exec", "--instructions", "true", "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("apt-get install valgrind"), "{err}");
    assert!(err.contains("VERNIER_VALGRIND"), "{err}");
    assert!(!f.exists(), "{}", f.display());
}

/// The rows of an exported table: the command of each, in order (its markup stripped).
fn table_rows(table: &str) -> Vec<&str> {
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `").or_else(|| l.strip_prefix("| =")))
        .filter_map(|cell| cell.split(['`', '=']).next())
        .collect()
}

#[test]
fn hyperfines_output_flags_run_unchanged() {
    let (md, adoc, org) = (tmp("out.md"), tmp("out.adoc"), tmp("out.org"));
    // A hyperfine command line, `hyperfine` replaced.
    let o = exec(&[
        "--runs",
        "3",
        "--style",
        "basic",
        "--sort",
        "command",
        "-u",
        "millisecond",
        "--export-markdown",
        md.to_str().unwrap(),
        "--export-asciidoc",
        adoc.to_str().unwrap(),
        "--export-orgmode",
        org.to_str().unwrap(),
        "true",
        "sh -c true",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('\x1b'), "basic has no colour: {out}");
    assert!(out.contains("sh -c true") && out.contains("3×1"), "{out}");
    let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap();
    let (md, adoc, org) = (read(&md), read(&adoc), read(&org));
    // Each table in its syntax, in -u's unit, the commands in their order.
    assert!(
        md.starts_with("| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |\n|:---|"),
        "{md}"
    );
    assert!(
        adoc.starts_with("[cols=\"<,>,>,>,>\"]\n|===\n| Command \n| Mean [ms] \n")
            && adoc.ends_with("|===\n"),
        "{adoc}"
    );
    assert!(
        org.starts_with(
            "| Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative |\n|--+--+--+--+--|\n"
        ),
        "{org}"
    );
    for t in [&md, &adoc, &org] {
        assert_eq!(table_rows(t), ["true", "sh -c true"], "{t}");
    }
}

#[test]
fn the_style_sets_the_colour_and_none_prints_nothing() {
    // Standard output is a pipe here: `auto` has no colour; `color` and `full` have it even
    // under NO_COLOR; `basic` and `nocolor` never.
    for (style, coloured) in [
        ("auto", false),
        ("color", true),
        ("full", true),
        ("basic", false),
        ("nocolor", false),
    ] {
        let o = vernier()
            .env("NO_COLOR", "1")
            .args(["exec", "-r", "3", "--style", style, "true"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out.contains("\x1b["), coloured, "--style {style}: {out}");
        assert!(out.contains("3×1"), "--style {style}: {out}");
    }
    // `none`: nothing on standard output, the files written all the same.
    let (md, html) = (tmp("none.md"), tmp("none.html"));
    let (o, f) = exec_json(
        &[
            "-r",
            "3",
            "--style",
            "none",
            "true",
            "sh -c true",
            "--export-markdown",
            md.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
        "none.json",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert_eq!(json(&f)["comparisons"][0]["name"], "sh -c true");
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    assert_eq!(
        table_rows(&std::fs::read_to_string(&md).unwrap()),
        ["true", "sh -c true"]
    );
    // An export to `-` is printed on standard output, as hyperfine prints it, and only it.
    let o = exec(&["-r", "3", "--style", "none", "--export-csv", "-", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("\ncommand,mean,stddev,"), "{out}");
    assert_eq!(out.lines().count(), 4, "{out}");
    // A failure is still said, on standard error, with its status.
    let o = exec(&["-r", "3", "--style", "none", "sh -c 'exit 3'"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("exited with status 3"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_bad_style_sort_or_time_unit_is_named_with_the_values_taken() {
    for (flag, value, taken) in [
        (
            "--style",
            "fancy",
            "auto, basic, full, nocolor, color, none",
        ),
        ("--sort", "fastest", "auto, command, mean-time"),
        ("-u", "minute", "microsecond, millisecond, second"),
    ] {
        let o = exec(&[flag, value, "true"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("invalid value '{value}'")) && err.contains(taken),
            "{flag} {value}: {err}"
        );
    }
}
