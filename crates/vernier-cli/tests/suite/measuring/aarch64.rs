//! Vernier on aarch64 Linux, under emulation: the aarch64 builds of `scripts/aarch64.sh` (the
//! directory named by `VERNIER_AARCH64`), run through qemu by the kernel (binfmt_misc). Ignored
//! by the test command's measuring tier: the script builds them, then runs these with
//! `--ignored`; run so without the builds, each fails and names the script. Under emulation
//! no figure means anything, so only structure is asserted: the protocol, the timer's name and
//! rate, the diagnostics, the marked loop, a verdict's direction.

use crate::common::{cli, conformance};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vernier::result::ResultFile;

/// The directory of the aarch64 builds; each program named from it must be an aarch64 ELF
/// executable, so that nothing here passes on an x86-64 build by mistake.
fn builds() -> PathBuf {
    let dir = std::env::var_os("VERNIER_AARCH64").unwrap_or_else(|| {
        panic!(
            "VERNIER_AARCH64 is not set: these checks run the aarch64 builds that \
             scripts/aarch64.sh makes (run the script, which runs them)"
        )
    });
    PathBuf::from(dir)
}

/// `name` in the builds' directory, checked to be an aarch64 ELF file (e_machine 183).
fn aarch64(name: &str) -> PathBuf {
    let path = builds().join(name);
    let head = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/aarch64.sh builds it)", path.display()));
    assert!(
        head.len() > 20
            && head[..4] == *b"\x7fELF"
            && u16::from_le_bytes([head[18], head[19]]) == 183,
        "{} is not an aarch64 ELF file",
        path.display()
    );
    path
}

/// The aarch64 `vernier`, with homes of its own (it disassembles aarch64 code with
/// `aarch64-linux-gnu-objdump`, found on the PATH, as on a machine that cross-builds).
fn vernier_arm64() -> Command {
    let mut c = Command::new(aarch64("vernier"));
    c.env("NO_COLOR", "1");
    cli::isolate(&mut c);
    c
}

/// The timer a native worker or a run names on aarch64: the generic timer, with its rate.
fn assert_generic_timer(timer: &vernier::timer::TimerInfo, what: &str) {
    assert_eq!(timer.kind.as_str(), "cntvct", "{what}: {timer:?}");
    assert!(timer.tsc_hz.is_some_and(|hz| hz > 0.0), "{what}: {timer:?}");
}

/// The whole protocol with an aarch64 worker, through qemu, every reply checked; the worker
/// is the harness named.
fn conforms(cmd: Command, implementation: &str) -> conformance::Report {
    let report = conformance::check(cmd);
    let h = &report.hello;
    assert!(h.implementation.starts_with(implementation), "{h:?}");
    report
}

/// The crate's worker (`crates/vernier/examples/chain.rs`).
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn a_rust_worker_conforms_on_aarch64() {
    let r = conforms(Command::new(aarch64("chain")), "vernier-rust/");
    assert_generic_timer(&r.hello.timer, "rust");
}

/// A Criterion benchmark through vernier-criterion (`examples/criterion_api.rs`).
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn a_criterion_benchmark_conforms_on_aarch64() {
    let r = conforms(Command::new(aarch64("criterion_api")), "vernier-criterion/");
    assert_generic_timer(&r.hello.timer, "criterion");
}

/// A C++ program with the header (`examples/cpp/arithmetic.cpp`).
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn a_cpp_worker_conforms_on_aarch64() {
    let r = conforms(Command::new(aarch64("arithmetic")), "vernier-cpp/");
    assert_generic_timer(&r.hello.timer, "c++");
}

/// A Google Benchmark program with the layer (`cmake/gbench-consumer`, linked with the
/// layer's `benchmark_main`).
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn a_google_benchmark_program_conforms_on_aarch64() {
    let r = conforms(Command::new(aarch64("gbench-consumer")), "vernier-cpp/");
    assert_generic_timer(&r.hello.timer, "gbench");
    assert_eq!(r.names, ["BM_accumulate/64", "BM_accumulate/4096"]);
}

/// The Python package (its aarch64 native module) under Debian's arm64 python3. Its loops
/// are timed by Python's monotonic clock, on aarch64 as on x86-64.
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn a_python_worker_conforms_on_aarch64() {
    aarch64("python/vernier/_native.abi3.so");
    let mut cmd = Command::new(builds().join("bin/python3"));
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python/bench_sum.py"))
        .env("PYTHONPATH", builds().join("python"));
    let r = conforms(cmd, "vernier-python/");
    assert_eq!(r.hello.timer.kind.as_str(), "monotonic", "{:?}", r.hello);
    let interp = r.hello.interp.as_deref().unwrap_or_default();
    assert!(interp.starts_with("cpython "), "{:?}", r.hello);
}

/// The aarch64 `vernier demo --quick` runs to the end under qemu: every benchmark, the machine
/// line naming the generic timer and its rate, code that follows the clock judged in cycles,
/// the run said to be emulated, and `sqrt(4.2)` without a barrier told removed by its loop
/// (shown in Arm's code), which has no square root left, while the one with a barrier has.
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn the_aarch64_demo_runs_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("demo.json");
    let o = vernier_arm64()
        .args(["demo", "--quick", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let out = cli::ok(&o);
    let f = ResultFile::load(&json).unwrap_or_else(|e| panic!("{e}\n{}", cli::text(&o)));
    assert_eq!(f.machine.arch, "aarch64");
    assert_generic_timer(&f.timer, "demo");
    let hz = vernier::units::format_hz(f.timer.tsc_hz.unwrap());
    // On the machine's lines: in full on a first run (as here, in a home of its own), the timer
    // line; else the one machine line.
    let named = format!("cntvct at {hz}");
    assert!(
        out.lines()
            .any(|l| (l.starts_with("timer ") || l.starts_with("machine:")) && l.contains(&named)),
        "no machine line names the generic timer at {hz}:\n{out}"
    );
    // Every benchmark of the demo, each measured: the x86-64 build names them on a filter
    // that selects none.
    let none = cli::vernier()
        .args(["demo", "--filter", "^$"])
        .output()
        .unwrap();
    let names: Vec<&str> = f.benchmarks.iter().map(|b| b.name.as_str()).collect();
    let all = format!("the demo has: {}\n", names.join(", "));
    assert!(
        String::from_utf8_lossy(&none.stderr).contains(&all),
        "the aarch64 demo measured {names:?}; {}",
        cli::text(&none)
    );
    for b in &f.benchmarks {
        assert_eq!(b.status, vernier::result::Status::Ok, "{}", b.name);
    }
    let add = f.benchmarks.iter().find(|b| b.name == "add").unwrap();
    assert_eq!(add.headline_unit, vernier::analyze::Unit::Cycles, "{add:?}");
    // Under qemu every time is the emulator's (docs/platforms.md): the tool says it runs
    // emulated, and whether a body was removed is told by what does not time, the measured
    // loops' instructions, not by the `optimized-away` that time gives.
    let emulation = f.system["emulation"].as_str().unwrap_or_default();
    assert!(
        emulation.starts_with("aarch64 code on an x86_64 CPU"),
        "the result file does not say it was measured under emulation: {:?}",
        f.system
    );
    assert!(
        out.contains("\nemulated: aarch64 code on an x86_64 CPU"),
        "{out}"
    );
    // The demo's lesson: the square root without a barrier is removed, the one with it is not.
    // Its sentences, whatever width wrapped them.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for (name, says) in [
        (
            "sqrt(4.2) without barrier",
            "no square root: the compiler removed it.",
        ),
        ("sqrt(4.2) with barrier", "computes a square root."),
    ] {
        let start = flat
            .find(&format!("• {name}: the loop of the iterations has "))
            .unwrap_or_else(|| panic!("no sentence on {name}'s loop:\n{out}"));
        let rest = &flat[start..];
        let sentence = &rest[..rest.find(". ").map_or(rest.len(), |i| i + 1)];
        assert!(sentence.ends_with(says), "{sentence}\n{out}");
    }
    assert_loop_marked(&out, "the demo's sqrt(4.2) lesson");
}

/// A listing's loop of the iterations is marked (`┌▶ … └─`), closed by one of Arm's branches.
fn assert_loop_marked(listing: &str, what: &str) {
    assert!(listing.contains("┌▶"), "{what}: no loop marked:\n{listing}");
    let close = listing
        .lines()
        .find(|l| l.contains("└─"))
        .unwrap_or_else(|| panic!("{what}: the marked loop has no end:\n{listing}"));
    let mnemonic = close
        .split_once(":")
        .map(|(_, rest)| rest.split_whitespace().next().unwrap_or_default())
        .unwrap_or_default();
    assert!(
        mnemonic.starts_with("b.") || ["b", "cbnz", "cbz", "tbnz", "tbz"].contains(&mnemonic),
        "{what}: the loop closes with {mnemonic:?}, not an Arm branch: {close}"
    );
}

/// The aarch64 `vernier asm` prints a C++ program's measured loop, marked.
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn the_aarch64_asm_marks_the_measured_loop() {
    let o = vernier_arm64()
        .args(["asm", "--filter", "^sqrt no barrier$", "--"])
        .arg(aarch64("arithmetic"))
        .output()
        .unwrap();
    let out = cli::ok(&o);
    assert!(out.contains("sqrt no barrier"), "{}", cli::text(&o));
    assert_loop_marked(&out, "asm of sqrt no barrier");
}

/// The x86-64 `vernier compare` of two aarch64 builds (`examples/cpp/kernels.cpp` with a
/// chain of 100 and of 200 dependent adds), each run through qemu: `slower`. Under emulation
/// only the direction is asserted.
#[test]
#[ignore = "needs the aarch64 builds: scripts/aarch64.sh runs it"]
fn compare_finds_twice_the_adds_slower_on_aarch64_builds() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("compare.json");
    let o: Output = cli::vernier_with_ledger(dir.path())
        // The default budget, not --quick: its three process pairs are too few for a verdict
        // when qemu's times spread as they do on a busy machine.
        .args(["compare", "--filter", "^chain$", "--json"])
        .arg(&json)
        .arg(aarch64("kernels-100"))
        .arg(aarch64("kernels-200"))
        .output()
        .unwrap();
    cli::ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let chain = cli::item(&v["comparisons"], "name", "chain");
    assert_eq!(chain["verdict"], "slower", "{}", cli::text(&o));
}
