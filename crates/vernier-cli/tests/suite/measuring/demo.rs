//! Drives the real `vernier demo` binary. No absolute times: orderings measured in the same
//! run, structure, and the flags the talks predict.

use crate::common::{cli, medians_in_one_unit};

use std::process::Command;
use vernier::diagnostic::Code;
use vernier::report;
use vernier::result::{ResultFile, Status};

/// `vernier` as a user runs it: the ledger in use (this test binary's own, filled by its
/// runs as a user's is by theirs).
fn vernier() -> Command {
    cli::vernier()
}

fn has(file: &ResultFile, name: &str, code: Code) -> bool {
    bench(file, name).diagnostics.iter().any(|d| d.code == code)
}

fn bench<'a>(file: &'a ResultFile, name: &str) -> &'a vernier::result::BenchmarkResult {
    file.benchmarks
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no benchmark {name}"))
}

/// `vernier demo --quick ARGS --json JSON` at 120 columns without colour, which must succeed;
/// its standard output.
fn quick_demo_at_120(mut c: Command, args: &[&str], json: &std::path::Path) -> String {
    let out = c
        .args(["demo", "--quick"])
        .args(args)
        .arg("--json")
        .arg(json)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_quick_demo_shows_each_benchmarks_own_precision_and_its_cycles() {
    // As a user runs it: the machine's ledger in use (a fresh one here), 120 columns.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo-cycles");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("demo.json");
    let mut c = Command::new(env!("CARGO_BIN_EXE_vernier"));
    c.env("VERNIER_LEDGER", dir.join("ledger.json"));
    let stdout = quick_demo_at_120(c, &["--filter", "^(add|mul|div)$"], &json);
    let head = stdout.lines().next().unwrap();
    for title in ["median", "±this run", "±next run", "cycles", "±cycles"] {
        assert!(head.contains(title), "{title}: {head}");
    }
    let file = ResultFile::load(&json).unwrap();
    assert_eq!(file.benchmarks.len(), 3, "{stdout}");
    for b in &file.benchmarks {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{} ", b.name)))
            .unwrap_or_else(|| panic!("no row {}:\n{stdout}", b.name));
        // The row shows this run's own interval, the one for the next run, and the figure in
        // cycles with its interval, as the result file holds them.
        let p = &b.per_iter;
        let sp = b.speed.as_ref().expect("the probe ran in-process");
        let (cyc, cyc_ci) = (sp.cycles_per_iter.unwrap(), sp.cycles_ci95.unwrap());
        for cell in [
            report::interval_pct(p.median_ns, p.run_ci95_ns),
            report::interval_pct(p.median_ns, p.ci95_ns),
            report::format_count(cyc),
            report::interval_pct(cyc, cyc_ci),
        ] {
            assert!(row.contains(&format!(" {cell} ")), "{cell}: {row}");
        }
    }
}

#[test]
fn demo_quick_writes_a_complete_result_file() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("demo.json");
    let mut c = vernier();
    c.env("VERNIER_CHECKPOINTS_JSON", dir.join("checkpoints.json"));
    let stdout = quick_demo_at_120(c, &[], &json);
    // Plain text when piped: no escape sequences.
    assert!(!stdout.contains('\x1b'));
    assert!(stdout.contains("median") && stdout.contains("±this run"));
    // Fitted to COLUMNS: no line wider, at most two lines per benchmark in the table.
    for line in stdout.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
    // A threaded row is followed by its thread count's figures (indented four spaces,
    // "N thread(s): …", wrapped onto lines indented six): those are not counted.
    let mut in_figures = false;
    let table = stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| {
            let t = l.trim_start();
            let figures = l.starts_with("    ")
                && t.split_once(' ').is_some_and(|(n, rest)| {
                    n.parse::<u32>().is_ok() && rest.starts_with("thread")
                });
            in_figures = figures || (in_figures && l.starts_with("      "));
            !in_figures
        })
        .count();
    let file = ResultFile::load(&json).unwrap();
    assert!(
        table <= 1 + 2 * file.benchmarks.len(),
        "{table} lines:\n{stdout}"
    );

    assert_eq!(file.schema, vernier::result::SCHEMA);
    assert_eq!(file.benchmarks.len(), 26);
    // The pitfalls talk's memory lesson: counted in the command's own process, exactly.
    let mem = |name: &str| {
        let b = file.benchmarks.iter().find(|b| b.name == name).unwrap();
        let m = b
            .memory
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: not counted"));
        (m.allocs_per_iter, m.net_bytes_per_iter)
    };
    assert_eq!(mem("event copy, same event (hot)"), (0.0, 0.0));
    assert_eq!(mem("event copy, fresh event (allocated)"), (1.0, 0.0));
    assert!(
        stdout.contains("a fresh event for each message makes 1 allocation"),
        "{stdout}"
    );
    assert!(file.timer.resolution_ns > 0.0 && file.timer.overhead_ns > 0.0);
    assert!(file.harness.empty_iter_ns > 0.0);
    assert!(!file.machine.cpu_model.is_empty());
    for b in &file.benchmarks {
        assert_eq!(b.status, Status::Ok, "{}: {:?}", b.name, b.error);
        let s = &b.samples;
        let n = s.ns.len();
        assert!(n > 0);
        assert!(
            s.iters.len() == n && s.t_s.len() == n && s.phase.len() == n && s.process.len() == n
        );
        // Calibration samples are kept and flagged.
        assert!(s.phase.contains(&vernier::samples::Phase::Calibration));
        assert!(b.per_iter.ci95_ns[0] <= b.per_iter.median_ns);
        assert!(b.per_iter.median_ns <= b.per_iter.ci95_ns[1]);
        assert!(b.per_iter.min_ns <= b.per_iter.median_ns);
        // The core-speed probe ran in-process before the batches, at a small share of the time.
        assert_eq!(s.probe_ns.len(), n, "{}", b.name);
        let sp = b.speed.as_ref().expect("a speed summary");
        assert!(
            sp.probe_share > 0.0 && sp.probe_share < 0.02,
            "{}: {sp:?}",
            b.name
        );
    }

    // The precision talk's lesson: without a barrier the computation disappears; with one it
    // does not. Time alone flags a removed body only when its loop runs as fast as the empty
    // one; where the loop's layout makes it run a fraction of a cycle slower (1.7 cycles
    // against 1.0 on one host), the body is still within a few cycles of the empty loop, where
    // `vernier run` counts instructions to be sure and the demo, in one process, cannot.
    let removed_or_near_empty = |name: &str| {
        let over = bench(&file, name).cycles_over_bar(&file.harness);
        has(&file, name, Code::OptimizedAway)
            || over.is_some_and(|c| c < vernier::analyze::NEAR_EMPTY_CYCLES)
    };
    assert!(removed_or_near_empty("sqrt(4.2) without barrier"));
    assert!(!has(&file, "sqrt(4.2) with barrier", Code::OptimizedAway));
    assert!(removed_or_near_empty("empty closure"));
    // Orderings within the same run, in cycles where both have them.
    let med = |n: &str| bench(&file, n).per_iter.median_ns;
    let slower = |a: &str, b: &str| {
        let (x, y, unit) = medians_in_one_unit(bench(&file, a), bench(&file, b));
        assert!(x > y, "{a} {x} {unit}, {b} {y} {unit}\n{stdout}");
    };
    slower("div", "add");
    // A dependent chain waits for each square root; the caches evicted before each sample
    // send the L1 chase's 16 loads to memory (about 100× here: 3× leaves a wide margin).
    slower("sqrt latency", "sqrt");
    assert!(
        med("chase 16 loads/8 KiB (cold)") > 3.0 * med("chase 16 loads/8 KiB (hot)"),
        "{stdout}"
    );
    // Cold against hot depends on the machine (a prefetcher can hide the walk through the
    // events): the closing sentence must follow the measured ratio, whichever it is.
    // The sentence quotes the paired comparison when it ran (stored beside the result).
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let paired = v["comparison"]["comparisons"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "event copy: cold / hot"))
        .and_then(|c| c["ratio"].as_f64());
    let r = paired
        .unwrap_or(med("event copy, 256Ki events (cold)") / med("event copy, same event (hot)"));
    let says_dominates = stdout.contains("cold memory, not the copy, dominates");
    assert_eq!(says_dominates, r >= 1.2, "ratio {r}: {stdout}");

    // The pitfalls talk's checkpoints: the first write to 64 MiB of fresh memory faults its pages in;
    // the same copy again faults none (the kernel's counts: deterministic).
    let phases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("checkpoints.json")).unwrap()).unwrap();
    let phase = |name: &str| {
        phases["phases"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["name"] == name))
            .unwrap_or_else(|| panic!("no phase {name}: {phases}"))
            .clone()
    };
    let (first, again) = (
        phase("copy into each event, first"),
        phase("copy into each event, again"),
    );
    let faults = |p: &serde_json::Value| p["counters"]["page_faults"].as_u64().unwrap();
    // 64 MiB is 16 Ki pages of 4 KiB (or 32 huge pages): at least 32 faults the first time.
    assert!(
        faults(&first) >= 32 && faults(&again) < faults(&first) / 4,
        "{phases}"
    );
    assert!(stdout.contains("copy into each event, first") && stdout.contains("page-faults"));

    // The precision talk: the loops' assembly, read from this executable, shows the removed sqrt.
    let objdump = Command::new("objdump").arg("--version").output();
    if objdump.is_ok_and(|o| o.status.success()) {
        // A sentence wrapped to COLUMNS continues on lines indented by two spaces.
        let flat = stdout.replace("\n  ", " ");
        let bullet = |name: &str| {
            flat.lines()
                .find(|l| l.starts_with(&format!("• {name}: the loop of the iterations")))
                .unwrap_or_else(|| panic!("no sentence on {name}'s loop: {stdout}"))
                .to_string()
        };
        assert!(
            bullet("sqrt(4.2) without barrier").contains("no square root"),
            "{stdout}"
        );
        assert!(
            bullet("sqrt(4.2) with barrier").contains("computes a square root"),
            "{stdout}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_filter_is_a_clear_error() {
    let out = vernier().args(["demo", "--filter", "("]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--filter"), "{err}");
    let out = vernier()
        .args(["demo", "--filter", "nothing-matches-this"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the demo has"));
}

#[test]
fn corrupt_result_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("corrupt.json");
    std::fs::write(&p, "{\"schema\": 1, \"benchmarks\": [").unwrap();
    let e = ResultFile::load(&p).unwrap_err().to_string();
    assert!(
        e.contains("not a vernier result file") && e.contains("truncated"),
        "{e}"
    );
}
