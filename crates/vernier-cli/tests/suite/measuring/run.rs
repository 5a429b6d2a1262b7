//! `vernier run` driving real workers (the C++ examples, compiled here with the real
//! compiler): results, process control, and robustness to workers that crash, hang, babble or
//! are not workers at all. No absolute times: flags, orderings within one run, structure.

use crate::common::{cli, cpp, medians_in_one_unit};

use cli::{text, vernier};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use vernier::diagnostic::Code;
use vernier::result::{ResultFile, Status};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("run-tests");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn bench<'a>(f: &'a ResultFile, name: &str) -> &'a vernier::result::BenchmarkResult {
    f.benchmarks
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn flagged(f: &ResultFile, name: &str, code: Code) -> bool {
    bench(f, name).diagnostics.iter().any(|d| d.code == code)
}

#[test]
fn cpp_arithmetic_through_the_runner() {
    let exe = cpp::example("arithmetic");
    let json = tmp("arithmetic.json");
    let (o, f) = cli::run_json(
        vernier(),
        &[
            "--quick",
            "--processes",
            "2",
            "--filter",
            "^(add|div|sqrt|sqrt no barrier)$",
        ],
        &json,
        &exe,
    );
    assert_eq!(f.benchmarks.len(), 4, "{}", text(&o));
    assert!(f
        .machine
        .worker_impl
        .as_deref()
        .unwrap()
        .starts_with("vernier-cpp/"));
    assert!(f.harness.runner_batch_cost_ns.unwrap() > 0.0);
    assert!(
        flagged(&f, "sqrt no barrier", Code::OptimizedAway),
        "{}",
        text(&o)
    );
    assert!(!flagged(&f, "sqrt", Code::OptimizedAway), "{}", text(&o));
    let (div, add, unit) = medians_in_one_unit(bench(&f, "div"), bench(&f, "add"));
    assert!(div > add, "div {div} {unit}, add {add} {unit}");
    for b in &f.benchmarks {
        assert_eq!(b.status, Status::Ok);
        // Two processes, each with its own environment padding, both in the samples and both
        // listed (a process wholly in a slow state of the core is listed with no headline
        // sample).
        assert_eq!(b.processes.len(), 2, "{}: {:?}", b.name, b.processes);
        assert!(b.samples.process.contains(&0) && b.samples.process.contains(&1));
        assert!(b.processes.iter().all(|p| p.env_pad_bytes < 4096));
        // The C++ worker served the core-speed probe: one per probed batch, in each process,
        // at a small share of the time.
        let s = &b.samples;
        assert_eq!(s.probe_ns.len(), s.ns.len(), "{}", b.name);
        assert_eq!(s.probe_adds, vernier::plan::PROBE_ADDS);
        for p in [0, 1] {
            assert!((0..s.ns.len()).any(|i| s.process[i] == p && s.probe_ns[i].is_some()));
        }
        // And its throughput half, beside each probe.
        assert_eq!(s.wide_ns.len(), s.ns.len(), "{}", b.name);
        assert!((0..s.ns.len()).all(|i| s.probe_ns[i].is_some() == s.wide_ns[i].is_some()));
        let sp = b.speed.as_ref().expect("a speed summary");
        assert!(sp.probe_share > 0.0 && sp.probe_share < 0.02, "{sp:?}");
        assert!(sp.fastest_ghz > 0.0, "{sp:?}");
        // A benchmark that ran wholly in a slow state (another build beside it) has no
        // fast-state figure, and says so.
        if sp.fast.samples > 0 {
            assert!(sp.fast.ghz > 0.0, "{sp:?}");
        } else {
            assert!(flagged(&f, &b.name, Code::CoreSlowed), "{sp:?}");
        }
        assert!(sp.fastest_throughput.is_some_and(|t| t > 0.0), "{sp:?}");
    }
}

#[test]
fn crashes_hangs_and_exceptions_fail_their_benchmark_only() {
    let exe = cpp::example("faulty");
    let json = tmp("faulty.json");
    let (o, f) = cli::run_quick_one_process(&exe, &json);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let names: Vec<&str> = f.benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert!(names.len() >= 4, "{names:?}");
    let ok = bench(&f, "ok");
    assert_eq!(ok.status, Status::Ok);
    let seg = bench(&f, "segfault");
    assert_eq!(seg.status, Status::Failed);
    let e = seg.error.as_deref().unwrap();
    assert!(e.contains("signal 11"), "{e}");
    // What was measured before the crash is kept.
    assert!(!seg.samples.ns.is_empty());
    let hang = bench(&f, "hang");
    assert!(
        hang.error
            .as_deref()
            .unwrap()
            .contains("no reply within 2 s"),
        "{:?}",
        hang.error
    );
    let throws = bench(&f, "throws");
    assert!(
        throws.error.as_deref().unwrap().contains("failed"),
        "{:?}",
        throws.error
    );
}

#[test]
fn a_program_that_is_not_a_worker_is_told_how_to_become_one() {
    let o = vernier()
        .args(["run", "--quick", "--", "/bin/true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not a vernier worker") && err.contains("vernier::main"),
        "{err}"
    );
    let o = vernier()
        .args(["run", "--", "/no/such/program"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such program"));
}

/// A worker written as a shell script: correct handshake, then a malformed reply.
fn babbling_worker() -> PathBuf {
    let p = tmp("babble.sh");
    std::fs::write(
        &p,
        "#!/bin/sh\n\
         while read -r cmd rest <&3; do\n\
           case \"$cmd\" in\n\
             hello) echo 'hello 1 impl=sh/0 timer=monotonic resolution_ns=1 overhead_ns=20 tsc_hz=0 build=release pid=1' >&4;;\n\
             list) printf 'bench 0 x\\nend 1\\n' >&4;;\n\
             run) echo 'samples 3 ns=1,2,banana' >&4;;\n\
             quit) echo bye >&4; exit 0;;\n\
             *) echo \"error unknown command '$cmd'\" >&4;;\n\
           esac\n\
         done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_malformed_protocol_line_is_quoted() {
    let json = tmp("babble.json");
    let o = vernier()
        .args(["run", "--quick", "--processes", "1", "--json"])
        .arg(&json)
        .arg("--")
        .arg(babbling_worker())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let f = ResultFile::load(&json).unwrap();
    let e = f.benchmarks[0].error.as_deref().unwrap();
    assert!(e.contains("banana"), "{e}");
}

fn probe(args: &[&str], exe: &Path) -> String {
    let o = vernier()
        .arg("probe")
        .args(args)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|t| t.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

#[test]
fn env_padding_aslr_and_pinning_reach_the_worker() {
    let exe = cpp::example("arithmetic");
    let a = probe(&["--env-pad", "0"], &exe);
    let b = probe(&["--env-pad", "1000"], &exe);
    let env = |l: &str| field(l, "env_bytes").parse::<i64>().unwrap();
    assert_eq!(env(&b) - env(&a), 1000, "{a}\n{b}");
    // Without randomisation the stack lands at the same address every time.
    let x = probe(&["--no-aslr", "--env-pad", "64"], &exe);
    let y = probe(&["--no-aslr", "--env-pad", "64"], &exe);
    assert_eq!(field(&x, "aslr"), "0");
    assert_eq!(field(&x, "stack"), field(&y, "stack"));
    assert_eq!(field(&a, "aslr"), "1");
    // Pinning: the worker runs where it is told.
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    for cpu in 0..cpus.min(2) {
        let l = probe(&["--cpu", &cpu.to_string()], &exe);
        assert_eq!(field(&l, "cpu"), cpu.to_string(), "{l}");
    }
    let o = vernier()
        .args(["probe", "--cpu", "4096", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such CPU"));
}

#[test]
fn fifo_refused_names_the_missing_permission() {
    let exe = cpp::example("arithmetic");
    let setpriv = Path::new("/usr/bin/setpriv");
    // SAFETY: geteuid has no preconditions.
    assert!(
        setpriv.exists() && unsafe { libc::geteuid() } == 0,
        "this test needs root (CI runs as root) and setpriv (apt-get install util-linux)"
    );
    // Copies the unprivileged user can run, wherever the checkout is (a home directory
    // may be closed to others).
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let open = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(dir.path(), open.clone()).unwrap();
    let (runner, worker) = (dir.path().join("vernier"), dir.path().join("arithmetic"));
    for (from, to) in [
        (Path::new(env!("CARGO_BIN_EXE_vernier")), &runner),
        (&exe, &worker),
    ] {
        std::fs::copy(from, to).unwrap();
        std::fs::set_permissions(to, open.clone()).unwrap();
    }
    let o = Command::new(setpriv)
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&runner)
        .args(["probe", "--fifo", "--"])
        .arg(&worker)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        err.contains("SCHED_FIFO") && err.contains("CAP_SYS_NICE"),
        "{err}"
    );
}

#[test]
fn ctrl_c_keeps_every_finished_benchmark_and_marks_the_one_cut_short() {
    let exe = cpp::example("arithmetic");
    let json = tmp("interrupted.json");
    let out = tmp("interrupted.out");
    let _ = std::fs::remove_file(&json);
    let mut child = vernier()
        .args(["run", "--time", "5", "--processes", "1", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until at least one benchmark is in the file, then interrupt the next one while it
    // is being measured (none stops before 30 % of its 5 s budget).
    let start = Instant::now();
    while !json.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(150));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let f = ResultFile::load(&json).unwrap();
    let stdout = std::fs::read_to_string(&out).unwrap();
    assert!(f.benchmarks.len() >= 2, "{stdout}");
    assert!(f.benchmarks.len() < 10, "Ctrl-C stopped the run early");
    let (last, finished) = f.benchmarks.split_last().unwrap();
    assert!(finished.iter().all(|b| b.status == Status::Ok), "{stdout}");
    assert_eq!(last.status, Status::Interrupted, "{stdout}");
    assert_eq!(last.stop, "interrupted");
    // The row of the benchmark cut short says so; no other row does.
    assert_eq!(stdout.matches("INTERRUPTED").count(), 1, "{stdout}");
    let row = stdout.lines().find(|l| l.contains("INTERRUPTED")).unwrap();
    assert!(row.starts_with(&last.name), "{stdout}");
}

#[test]
fn the_readme_cpp_snippet_compiles_and_runs() {
    let readme = std::fs::read_to_string(cpp::repo_root().join("README.md")).unwrap();
    let start = readme
        .find("```cpp\n")
        .expect("a C++ snippet in the README")
        + 7;
    let end = start + readme[start..].find("```").unwrap();
    let src = tmp("readme_snippet.cpp");
    std::fs::write(&src, &readme[start..end]).unwrap();
    let exe = cpp::compile("readme_snippet", &[src], &["-O2"]);
    let o = Command::new(&exe)
        .args(["--time", "0.05"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("sqrt"));
}
