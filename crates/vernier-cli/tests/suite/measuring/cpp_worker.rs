//! The C++ header (`include/vernier.hpp`) and its examples (`examples/cpp/`), compiled with the
//! real compiler (`$CXX`, else `g++`) and driven as workers and as standalone programs.
//!
//! No absolute timing threshold here: only structure, exact protocol texts, and ratios
//! measured side by side.

use crate::common::{conformance, cpp};
use cpp::{compile, example, example_source, out_dir};

use conformance::{parse_probe, run, Reply, Session};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use vernier::protocol::Hello;

const EXAMPLES: [&str; 6] = [
    "arithmetic",
    "ijk_loop",
    "pitfalls",
    "chain",
    "faulty",
    "pagefault",
];

/// The program run by hand on a machine without the `vernier` runner (no `VERNIER_BIN`, no
/// PATH to find it on): it measures in its own process.
fn standalone(exe: &Path, args: &[&str]) -> String {
    let o = Command::new(exe)
        .args(args)
        .env_remove("VERNIER_FDS")
        .env_remove("VERNIER_BIN")
        .env_remove("PATH")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{exe:?} {args:?}: {:?}\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

fn median(mut v: Vec<u64>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64
}

#[test]
fn every_example_compiles_warning_free() {
    for name in EXAMPLES {
        assert!(example(name).exists());
    }
}

#[test]
fn header_is_clean_under_strict_warnings_and_links_from_two_translation_units() {
    let dir = out_dir().join("two-units");
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.cpp");
    let b = dir.join("b.cpp");
    std::fs::write(
        &a,
        r#"#include "vernier.hpp"
#include <string>
void register_more() {
    std::string s = "abc";
    vernier::bench("size", [&] { return s.size(); });
    vernier::bench_setup("string copy", [] { return std::string(100, 'x'); },
                         [](std::string& x) { return x + "y"; });
}
"#,
    )
    .unwrap();
    std::fs::write(
        &b,
        r#"#include "vernier.hpp"
#include <vector>
void register_more();
struct Big { double d[8]; };
int main(int argc, char** argv) {
    int i = 3;
    const long c = 4;
    Big big{};
    std::vector<int> v(10, 1);
    vernier::do_not_optimize(i);
    vernier::do_not_optimize(c);
    vernier::do_not_optimize(big);
    vernier::do_not_optimize(v);
    vernier::do_not_optimize(i + 1);
    vernier::clobber_memory();
    vernier::bench("int add", [&] { return i + 1; });
    vernier::bench("void", [&] { v[0] += 1; });
    register_more();
    return vernier::main(argc, argv);
}
"#,
    )
    .unwrap();
    let exe = compile("two-units/prog", &[a, b], cpp::STRICT_FLAGS);
    let names = standalone(&exe, &["--list"]);
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        ["int add", "void", "size", "string copy"]
    );
    // The setup form and a void routine run through the protocol too.
    let mut s = Session::spawn(Command::new(&exe));
    for i in 0..4 {
        assert_eq!(
            run(&mut s, &format!("run {i} iters=50 samples=3"), 3).len(),
            3
        );
    }
    assert_eq!(s.ask("quit"), "bye");
}

#[test]
fn arithmetic_conforms_to_the_protocol() {
    let r = conformance::check(Command::new(example("arithmetic")));
    assert!(r.hello.implementation.starts_with("vernier-cpp/"));
    assert!(!r.hello.debug_build);
    assert_eq!(
        r.names,
        [
            "rand",
            "sqrt no barrier",
            "sqrt",
            "add",
            "mul",
            "div",
            "exp",
            "ln",
            "sin",
            "atan"
        ]
    );
}

#[test]
fn every_example_conforms_to_the_protocol() {
    for name in ["ijk_loop", "pitfalls", "chain"] {
        let r = conformance::check(Command::new(example(name)));
        assert!(!r.names.is_empty(), "{name}");
    }
}

#[test]
fn benchmark_output_never_reaches_the_protocol() {
    // faulty's main prints a banner on stdout and stderr; its benchmark 0 prints on its first
    // call. The conformance run must not see any of it, and the worker's own stdout must.
    let r = conformance::check(Command::new(example("faulty")));
    assert_eq!(r.names, ["ok", "segfault", "hang", "throws"]);
    assert!(
        r.stdout.contains("faulty: banner on standard output"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("'ok' runs for the first time"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("faulty: banner on standard error"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_throwing_benchmark_is_an_error_reply_and_the_worker_goes_on() {
    let mut s = Session::spawn(Command::new(example("faulty")));
    assert_eq!(
        s.ask("run 3 iters=1 samples=1"),
        "error benchmark 3 failed: deliberate failure in 'throws'"
    );
    assert_eq!(run(&mut s, "run 0 iters=10 samples=2", 2).len(), 2);
    assert_eq!(s.ask("quit"), "bye");
    assert_eq!(s.wait(Duration::from_secs(30)).0.code(), Some(0));
}

#[test]
fn a_crashing_worker_closes_the_pipe_and_dies_by_its_signal() {
    let mut s = Session::spawn(Command::new(example("faulty")));
    // "segfault" raises SIGSEGV when its third batch starts.
    assert_eq!(run(&mut s, "run 1 iters=1 samples=1", 1).len(), 1);
    assert_eq!(run(&mut s, "run 1 iters=5 samples=2", 2).len(), 2);
    s.send("run 1 iters=1 samples=1");
    assert_eq!(s.next_reply(conformance::REPLY_TIMEOUT), Reply::Eof);
    let (status, _, stderr) = s.wait(Duration::from_secs(30));
    assert_eq!(
        conformance::signal_of(&status),
        Some(libc::SIGSEGV),
        "{status:?}"
    );
    assert!(stderr.contains("banner on standard error"));
}

#[test]
fn a_hanging_benchmark_gives_no_reply() {
    let mut s = Session::spawn(Command::new(example("faulty")));
    assert!(Hello::parse(&s.ask("hello 1")).is_ok());
    s.send("run 2 iters=1 samples=1");
    assert_eq!(s.next_reply(Duration::from_millis(500)), Reply::Timeout);
    let (status, _, _) = s.kill();
    assert_eq!(
        status.and_then(|st| conformance::signal_of(&st)),
        Some(libc::SIGKILL)
    );
}

#[test]
fn end_of_input_ends_the_worker_cleanly() {
    let mut s = Session::spawn(Command::new(example("arithmetic")));
    assert!(Hello::parse(&s.ask("hello 1")).is_ok());
    s.close_input();
    assert_eq!(s.next_reply(conformance::REPLY_TIMEOUT), Reply::Eof);
    assert_eq!(s.wait(Duration::from_secs(30)).0.code(), Some(0));
}

#[test]
fn probe_reports_environment_size_and_layout_randomisation() {
    let exe = example("ijk_loop");
    // A known environment: "A=aaaa\0" (7 bytes) and "VERNIER_FDS=3,4\0" (16 bytes).
    let probe_with = |no_aslr: bool| {
        let mut cmd = Command::new(&exe);
        cmd.env_clear().env("A", "aaaa");
        if no_aslr {
            use std::os::unix::process::CommandExt;
            // SAFETY: personality is async-signal-safe; it only sets this process's flags.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let mut s = Session::spawn(cmd);
        let p = parse_probe(&s.ask("probe"));
        assert_eq!(s.ask("quit"), "bye");
        p
    };
    let p = probe_with(false);
    assert_eq!(p.env_bytes, 23, "{p:?}");
    let n0 = probe_with(true);
    let n1 = probe_with(true);
    assert!(!n0.aslr && !n1.aslr, "{n0:?} {n1:?}");
    // Without randomisation, the same program with the same environment has the same stack.
    assert_eq!(n0.stack, n1.stack);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    assert!(p.cpu < cpus.max(1024));
}

#[test]
fn a_debug_build_says_so() {
    let exe = compile("arithmetic-O0", &[example_source("arithmetic")], &["-O0"]);
    let mut s = Session::spawn(Command::new(&exe));
    let line = s.ask("hello 1");
    assert!(line.contains(" build=debug "), "{line}");
    assert!(Hello::parse(&line).unwrap().debug_build);
    assert_eq!(s.ask("quit"), "bye");
    let out = standalone(&exe, &["sqrt", "--time", "0.02"]);
    assert!(out.contains("built without optimisation"), "{out}");
}

#[test]
fn standalone_flags_the_sqrt_without_barrier_and_not_the_one_with() {
    let out = standalone(&example("arithmetic"), &["sqrt", "--time", "0.3"]);
    // One result line per benchmark: "<name padded>  T_iter ~ …".
    let line = |name: &str| {
        out.lines()
            .find(|l| {
                l.split("  T_iter ~").next().map(str::trim_end) == Some(name)
                    && l.contains("T_iter ~")
            })
            .unwrap_or_else(|| panic!("no result line for '{name}':\n{out}"))
            .to_string()
    };
    let removed = line("sqrt no barrier");
    let kept = line("sqrt");
    assert!(removed.contains("optimized away?"), "{out}");
    // Time alone cannot tell a removed body from one cheaper than a cycle: said.
    assert!(
        removed.contains("time alone: the runner counts instructions under callgrind"),
        "{removed}"
    );
    assert!(!kept.contains("optimized away?"), "{out}");
    for l in [&removed, &kept] {
        // A quick estimate: the median of a few samples, and no interval.
        assert!(l.contains("(median of 15 samples × "), "{l}");
        assert!(l.contains("; fastest "), "{l}");
        assert!(
            !l.contains('±') && !l.contains("CI") && !l.contains('σ'),
            "{l}"
        );
    }
    assert!(
        out.contains("quick estimate; for the full analysis install vernier"),
        "{out}"
    );
    assert!(
        out.contains("cargo install --path crates/vernier-cli"),
        "{out}"
    );
    assert!(out.contains("`vernier run -- "), "{out}");
    assert_eq!(
        out.matches("T_iter ~").count(),
        2,
        "only the filtered benchmarks:\n{out}"
    );
}

/// With the runner at hand (`VERNIER_BIN`, as a `vernier` on the PATH would be), the program
/// run by hand runs itself through it: `vernier run`'s table, several processes, the result
/// file; its substring filters and `--quick` are passed on.
#[test]
fn standalone_runs_itself_through_the_runner_when_there_is_one() {
    let dir = out_dir().join("self-run");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let o = Command::new(example("arithmetic"))
        .args(["sqrt", "--quick", "--json"])
        .arg(&json)
        .env_remove("VERNIER_FDS")
        .env("VERNIER_BIN", env!("CARGO_BIN_EXE_vernier"))
        .env("VERNIER_LEDGER", dir.join("ledger.json"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("benchmark") && out.contains("±this run"),
        "{out}"
    );
    assert!(!out.contains("T_iter ~"), "{out}");
    let f = vernier::result::ResultFile::load(&json).unwrap();
    let mut names: Vec<&str> = f.benchmarks.iter().map(|b| b.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["sqrt", "sqrt no barrier"], "{out}");
    for b in &f.benchmarks {
        assert!(b.processes.len() >= 2, "{}: {:?}", b.name, b.processes);
    }
    // A runner that cannot be started: said, and the program measures in its own process.
    let o = Command::new(example("arithmetic"))
        .args(["sqrt", "--time", "0.05"])
        .env_remove("VERNIER_FDS")
        .env("VERNIER_BIN", dir.join("no-such-vernier"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("cannot start the runner"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("T_iter ~"));
}

#[test]
fn standalone_lists_and_filters() {
    let exe = example("pitfalls");
    let names = standalone(&exe, &["--list"]);
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        [
            "event hot",
            "event cold",
            "little event",
            "big event",
            "convert nested-if",
            "convert merged-or"
        ]
    );
    assert_eq!(standalone(&exe, &["convert", "--list"]).lines().count(), 2);
    let bad = Command::new(&exe).arg("--frobnicate").output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
}

#[test]
fn the_measured_loop_has_a_findable_symbol() {
    let o = Command::new("nm")
        .arg("-C")
        .arg(example("arithmetic"))
        .output();
    let o = o.expect("nm is not installed: apt-get install binutils");
    let syms = String::from_utf8_lossy(&o.stdout);
    assert!(
        syms.lines().any(|l| l.contains("vernier_measured_loop<")),
        "no vernier_measured_loop symbol"
    );
}

#[test]
fn the_add_chain_grows_with_its_length() {
    // CHAIN_N=100 and CHAIN_N=400 measured side by side: about 4x (one cycle per add).
    let mut short = Session::spawn({
        let mut c = Command::new(example("chain"));
        c.env("CHAIN_N", "100");
        c
    });
    let mut long = Session::spawn({
        let mut c = Command::new(example("chain"));
        c.env("CHAIN_N", "400");
        c
    });
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        a.extend(run(&mut short, "run 0 iters=200 samples=20", 20));
        b.extend(run(&mut long, "run 0 iters=200 samples=20", 20));
    }
    let ratio = median(b) / median(a);
    assert!((2.5..6.0).contains(&ratio), "ratio {ratio}");
}

#[test]
fn the_monotonic_fallback_conforms_too() {
    let mut cmd = Command::new(example("arithmetic"));
    cmd.env("VERNIER_TIMER", "monotonic");
    let r = conformance::check(cmd);
    assert_eq!(r.hello.timer.kind, vernier::timer::TimerKind::Monotonic);
    assert_eq!(r.hello.timer.tsc_hz, None);
}
