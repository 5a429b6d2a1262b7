//! `vernier exec` measuring programs the tests build, of known work: a chain of N dependent
//! steps with N an argument (`tests/fixtures/cpp/exec_chain.cpp`, a recurrence neither the
//! compiler nor the core can fold), and `cat` of a file evicted from the page cache. Asserted
//! only what an honest tool guarantees on a busy machine: the same command twice is never
//! `faster` or `slower`; 2 % more steps is `slower` (judged in CPU time, which the machine's
//! waits do not lengthen: under a load average of 10 to 14 on 2 CPUs, four runs of four found
//! it, with ratios from 1.013 to 1.04: a crowded core stretches CPU time too, so only the
//! direction is asserted); a scan over four N fits O(N); a cold first run is cut as
//! warm-up; counted under callgrind (`--instructions`), 2 % more steps is `slower` by the
//! ratio of the counts and the same command twice is `no-change`, its counts equal; `--sort`
//! orders the comparison and the exported table by time (commands 50, 10 and 1 ms long). Also a
//! command line from hyperfine's README, unchanged (hyperfine's own scripts reading
//! `--export-json` are in the registry tier: `registry::hyperfine`).

use crate::common::cli::{text, vernier};
use crate::common::cpp;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn chain() -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpp/exec_chain.cpp");
    cpp::compile("exec_chain", &[src], &["-O2"])
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-measuring");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Steps of about 10 ms of CPU time here: the process's start is a small part of a run.
const N: u64 = 7_000_000;

fn compare(old: &str, new: &str, name: &str) -> Value {
    let f = tmp(name);
    let o = vernier()
        .args(["exec", old, new, "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    json(&f)
}

#[test]
fn the_same_command_twice_is_never_faster_or_slower() {
    let c = format!("{} {N}", chain().display());
    let v = compare(&c, &c, "same.json");
    let verdict = v["comparisons"][0]["verdict"].as_str().unwrap().to_string();
    assert!(
        verdict == "no-change" || verdict == "inconclusive",
        "{verdict}: {}",
        v["comparisons"][0]
    );
}

#[test]
fn two_percent_more_steps_is_slower() {
    let exe = chain();
    let old = format!("{} {N}", exe.display());
    let new = format!("{} {}", exe.display(), N + N / 50);
    let v = compare(&old, &new, "two-percent.json");
    let c = &v["comparisons"][0];
    assert_eq!(c["verdict"], "slower", "{c}");
    assert!(c["ci95"][0].as_f64().unwrap() > 1.0, "{c}");
    assert_eq!(v["exec"]["judged"], "cpu", "{}", v["exec"]["judged"]);
}

/// Steps counted under callgrind (about 50 times slower than a run).
const COUNTED_N: u64 = 1_000_000;

/// `exec --instructions OLD NEW --json`: the comparison file and the table printed.
fn count(old: &str, new: &str, name: &str) -> (Value, String) {
    let f = tmp(name);
    let o = vernier()
        .args([
            "exec",
            "--instructions",
            "--fail-on-regression",
            old,
            new,
            "--json",
        ])
        .arg(&f)
        .output()
        .unwrap();
    let v = json(&f);
    let code = if v["comparisons"][0]["verdict"] == "slower" {
        2
    } else {
        0
    };
    assert_eq!(o.status.code(), Some(code), "{}", text(&o));
    (v, text(&o))
}

#[test]
fn counted_two_percent_more_steps_is_slower_by_the_ratio_of_the_counts() {
    let exe = chain();
    let old = format!("{} {COUNTED_N}", exe.display());
    let new = format!("{} {}", exe.display(), COUNTED_N + COUNTED_N / 50);
    let (v, out) = count(&old, &new, "counted-two-percent.json");
    let c = &v["comparisons"][0];
    assert_eq!(
        (&v["mode"], &c["verdict"]),
        (&"instructions".into(), &"slower".into()),
        "{c}"
    );
    let [o, n] = [0, 1].map(|i| c["instructions_per_iter"][i].as_f64().unwrap());
    // Each of the 20 000 steps more adds the same whole number of instructions to the count.
    let more = (n - o) as u64;
    assert!(more > 0 && more.is_multiple_of(COUNTED_N / 50), "{c}");
    // The ratio is NEW / OLD of the counts (to the last bit the file's decimals carry).
    let ratio = c["ratio"].as_f64().unwrap();
    assert!((ratio - n / o).abs() <= f64::EPSILON * ratio, "{c}");
    assert_eq!(c["ci95"][0], c["ci95"][1], "{c}");
    // Each command counted twice, the same both times.
    assert_eq!(out.matches("  equal").count(), 2, "{out}");
}

#[test]
fn counted_the_same_command_twice_is_no_change_with_equal_counts() {
    let c = format!("{} {COUNTED_N}", chain().display());
    let (v, out) = count(&c, &c, "counted-same.json");
    let cmp = &v["comparisons"][0];
    assert_eq!(cmp["verdict"], "no-change", "{cmp}");
    let [o, n] = [0, 1].map(|i| cmp["instructions_per_iter"][i].as_f64().unwrap());
    assert_eq!(o, n, "{cmp}");
    assert!(o >= (COUNTED_N as f64), "{cmp}");
    assert_eq!(out.matches("  equal").count(), 2, "{out}");
}

#[test]
fn one_counted_command_keeps_its_count_per_run_in_the_result_file() {
    let f = tmp("counted-one.json");
    let c = format!("{} {COUNTED_N}", chain().display());
    let o = vernier()
        .args(["exec", "--instructions", &c, "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = json(&f);
    let b = &v["benchmarks"][0];
    assert_eq!(
        (&v["mode"], &b["name"]),
        (&"instructions".into(), &c.as_str().into())
    );
    let per_run = b["counters"]["instructions_per_iter"].as_f64().unwrap();
    let ir = &b["samples"]["counters"]["Ir"];
    assert_eq!(
        (ir[0].as_f64(), ir[1].as_f64()),
        (Some(per_run), Some(per_run)),
        "{b}"
    );
    assert!(
        text(&o).contains(&format!("{}  equal", per_run as u64)),
        "{}",
        text(&o)
    );
}

#[test]
fn a_counted_command_that_fails_is_named_with_its_status_and_its_last_lines() {
    let o = vernier()
        .args([
            "exec",
            "--instructions",
            "sh -c 'echo no input >&2; exit 3'",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("exited with status 3") && err.contains("\n    no input"),
        "{err}"
    );
}

#[test]
fn counted_commands_run_their_hooks_around_each_count_and_keep_what_was_counted() {
    let log = tmp("hooks.log");
    let _ = std::fs::remove_file(&log);
    let hook = |word: &str| format!("sh -c 'echo {word} >> {}'", log.display());
    let exe = chain();
    let old = format!("{} {COUNTED_N}", exe.display());
    let new = format!("{} {}", exe.display(), COUNTED_N + COUNTED_N / 50);
    let f = tmp("counted-hooks.json");
    let o = vernier()
        .args(["exec", "--instructions", "--instruction-threshold", "1e9"])
        .args(["--setup", &hook("setup"), "--prepare", &hook("prepare")])
        .args([
            "--conclude",
            &hook("conclude"),
            "--cleanup",
            &hook("cleanup"),
        ])
        .args([old.as_str(), new.as_str(), "sh -c 'exit 3'", "--json"])
        .arg(&f)
        .output()
        .unwrap();
    // The third command fails (no -i): named, and the two counted before it are compared.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("exited with status 3"), "{}", text(&o));
    let order = std::fs::read_to_string(&log)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let one = "setup prepare conclude prepare conclude cleanup";
    // The failing command: its setup, a prepare, the failing count, its cleanup.
    assert_eq!(order, format!("{one} {one} setup prepare cleanup"));
    let v = json(&f);
    let c = &v["comparisons"][0];
    // 20 000 steps more, within a threshold of 1e9 instructions: no change.
    assert_eq!(
        (&c["verdict"], &v["threshold"]),
        (&"no-change".into(), &1e9.into()),
        "{v}"
    );
    // With -i, a failing run is counted like any other.
    let o = vernier()
        .args(["exec", "--instructions", "-i", "sh -c 'exit 3'"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("  equal"), "{}", text(&o));
}

#[test]
fn a_scan_of_n_over_four_values_reads_linear() {
    let f = tmp("scan.json");
    let template = format!("{} {{n}}000000", chain().display());
    let o = vernier()
        .args(["exec", "-P", "n", "4", "16", "-D", "4", &template, "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let file = vernier::result::load(&f).unwrap();
    assert_eq!(file.benchmarks.len(), 4);
    let fits = vernier::result::complexity::families(&file.benchmarks);
    assert_eq!(fits.len(), 1, "{fits:?}");
    // Every size measured: fitted, or left out as not settled (a busy machine).
    let mut sizes = [&fits[0].sizes[..], &fits[0].left_out[..]].concat();
    sizes.sort_unstable();
    assert_eq!(sizes, [4, 8, 12, 16], "{fits:?}");
    assert_eq!(
        fits[0].class,
        vernier::stats::complexity::Class::Linear,
        "{fits:?}\n{}",
        text(&o)
    );
    assert!(text(&o).contains("complexity of"), "{}", text(&o));
}

#[test]
fn a_cold_first_read_of_a_file_is_cut_as_warm_up() {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;
    let data = tmp("cold.bin");
    {
        let mut f = std::fs::File::create(&data).unwrap();
        let block: Vec<u8> = (0..1 << 20)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for _ in 0..64 {
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
        // SAFETY: posix_fadvise only advises the kernel about this open file's pages.
        let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(r, 0);
    }
    let f = tmp("cold.json");
    let o = vernier()
        .args(["exec", &format!("cat {}", data.display()), "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let b = &json(&f)["benchmarks"][0];
    let walls: Vec<f64> = b["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["wall_ns"].as_f64().unwrap())
        .collect();
    let rest = vernier::stats::median(&walls[1..]);
    assert!(
        walls[0] > 1.5 * rest,
        "the first read was not slower: {walls:?}"
    );
    // The first run is warm-up, left out of every figure.
    assert_eq!(b["samples"]["phase"][0], "warmup", "{}", b["warmup"]);
    assert!(b["warmup"]["samples"].as_u64().unwrap() >= 1);
}

#[test]
fn a_command_line_from_hyperfines_readme_runs_unchanged() {
    // hyperfine's README: `hyperfine --runs 5 'sleep 0.3'`.
    let o = vernier()
        .args(["exec", "--runs", "5", "sleep 0.3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("sleep 0.3") && out.contains("5×1"), "{out}");
}

#[test]
fn sort_orders_the_comparison_and_the_exported_tables_by_time() {
    // Three commands 50, 10 and about 1 ms long, the slowest first (the reference).
    let commands = ["sleep 0.05", "sleep 0.01", "true"];
    let run = |sort: &str| {
        let md = tmp(&format!("sort-{sort}.md"));
        let o = vernier()
            .args(["exec", "--runs", "3", "--sort", sort, "--export-markdown"])
            .arg(&md)
            .args(commands)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        // The comparison's rows: after its head, the commands compared with the reference.
        let compared: Vec<&str> = out
            .lines()
            .skip_while(|l| !(l.starts_with("benchmark") && l.contains("ratio")))
            .filter_map(|l| commands[1..].iter().copied().find(|c| l.starts_with(c)))
            .collect();
        let table = std::fs::read_to_string(&md).unwrap();
        let rows: Vec<&str> = table
            .lines()
            .filter_map(|l| {
                commands
                    .iter()
                    .copied()
                    .find(|c| l.starts_with(&format!("| `{c}`")))
            })
            .collect();
        (compared, rows)
    };
    // hyperfine's default: the comparison by time, the table in the commands' order.
    let (compared, rows) = run("auto");
    assert_eq!(compared, ["true", "sleep 0.01"]);
    assert_eq!(rows, commands);
    let (compared, rows) = run("command");
    assert_eq!(compared, ["sleep 0.01", "true"]);
    assert_eq!(rows, commands);
    let (compared, rows) = run("mean-time");
    assert_eq!(compared, ["true", "sleep 0.01"]);
    assert_eq!(rows, ["true", "sleep 0.01", "sleep 0.05"]);
}
