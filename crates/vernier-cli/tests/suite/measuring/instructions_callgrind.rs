//! `--instructions` for real: small C and Rust programs with a `vernier_measured_loop`
//! function, compiled here, counted under callgrind.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use vernier_cli::instructions::*;

/// The C test program: `kernel NAME K` runs `vernier_measured_loop` once, K iterations of
/// kernel NAME:
/// - `lcg16` / `lcg32` / `lcg64`: 16 / 32 / 64 dependent multiply-adds per iteration;
/// - `hot`: writes one 1 KiB struct, always the same one;
/// - `cold`: writes a different 1 KiB struct each iteration (never touched before).
const KERNEL_C: &str = r#"
#include <stdlib.h>
#include <string.h>

struct Event { char data[1024]; };
volatile unsigned long sink;

static unsigned long lcg(unsigned long x, int reps) {
    for (int r = 0; r < reps; r++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noinline)) void vernier_measured_loop(int kernel, unsigned long k,
                                                     struct Event* events) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < k; i++) {
        switch (kernel) {
        case 0: x = lcg(x, 16); break;
        case 1: x = lcg(x, 32); break;
        case 2: memset(events[0].data, (int)i, sizeof events[0].data); break;
        case 3: memset(events[i].data, (int)i, sizeof events[i].data); break;
        case 4: x = lcg(x, 64); break;
        }
        __asm__ volatile("" ::: "memory");
    }
    sink = x;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const char* names[] = {"lcg16", "lcg32", "hot", "cold", "lcg64"};
    int kernel = -1;
    for (int i = 0; i < 5; i++) if (strcmp(argv[1], names[i]) == 0) kernel = i;
    if (kernel < 0) return 2;
    unsigned long k = strtoul(argv[2], 0, 10);
    struct Event* events = malloc((k + 1) * sizeof(struct Event));
    if (!events) return 3;
    vernier_measured_loop(kernel, k, events);
    free(events);
    return 0;
}
"#;

/// The Rust test program: a generic `#[inline(never)]` measured loop, as the crate has it.
/// `rust_kernel N K` runs K iterations of N dependent multiply-adds.
const KERNEL_RS: &str = r#"
use std::hint::black_box;

#[inline(never)]
fn vernier_measured_loop<F: FnMut() -> u64>(iters: u64, mut f: F) -> u64 {
    let mut acc = 0u64;
    for _ in 0..iters {
        acc = acc.wrapping_add(black_box(f()));
    }
    acc
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: u64 = args[1].parse().unwrap();
    let k: u64 = args[2].parse().unwrap();
    let mut x = black_box(1u64);
    let r = vernier_measured_loop(k, || {
        for _ in 0..reps {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
        }
        x
    });
    black_box(r);
}
"#;

fn build_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("instructions");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn c_kernel() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let dir = build_dir();
        let src = dir.join("kernel.c");
        let exe = dir.join("kernel");
        std::fs::write(&src, KERNEL_C).unwrap();
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let st = Command::new(cc)
            .args(["-O2", "-g", "-o"])
            .arg(&exe)
            .arg(&src)
            .status()
            .expect("a C compiler (cc)");
        assert!(st.success());
        exe
    })
}

fn rust_kernel(mangling: &str) -> PathBuf {
    let dir = build_dir();
    let src = dir.join("rust_kernel.rs");
    let exe = dir.join(format!("rust_kernel_{mangling}"));
    std::fs::write(&src, KERNEL_RS).unwrap();
    let mut cmd = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()));
    cmd.arg("-O");
    if mangling != "legacy" {
        // Legacy is the default (selecting it explicitly needs a nightly flag).
        cmd.arg("-C")
            .arg(format!("symbol-mangling-version={mangling}"));
    }
    let st = cmd.arg("-o").arg(&exe).arg(&src).status().expect("rustc");
    assert!(st.success());
    exe
}

fn c_launcher(kernel: &str) -> impl FnMut(u64, Command) -> anyhow::Result<()> {
    argv_launcher(c_kernel(), vec![OsString::from(kernel)])
}

fn valgrind() -> Option<Callgrind> {
    let c = Callgrind::from_env();
    match c.check() {
        Ok(_) => Some(c),
        Err(e) => panic!("{e} (bash .ci/run installs it)"),
    }
}

#[test]
fn two_runs_give_the_same_instructions_per_iteration() {
    let Some(cg) = valgrind() else { return };
    let a = cg
        .per_iteration(1000, 2000, &mut c_launcher("lcg16"))
        .unwrap();
    let b = cg
        .per_iteration(1000, 2000, &mut c_launcher("lcg16"))
        .unwrap();
    eprintln!("lcg16: {:?}", a.per_iter);
    assert_eq!(a.at_n1.get("Ir"), b.at_n1.get("Ir"));
    assert_eq!(a.at_n2.get("Ir"), b.at_n2.get("Ir"));
    assert_eq!(a.instructions(), b.instructions());
    let ir = a.instructions().unwrap();
    assert_eq!(
        ir,
        ir.round(),
        "a whole number of instructions per iteration"
    );
    assert!(
        ir >= 32.0,
        "16 multiply-adds are at least 32 instructions: {ir}"
    );
    // Branch simulation: the loops' conditional branches; callgrind's simple predictor
    // mispredicts the inner loop's exit once per iteration.
    let (bc, bcm) = (a.get("Bc").unwrap(), a.get("Bcm").unwrap());
    assert!(bc >= 1.0 && (0.0..=bc).contains(&bcm), "{:?}", a.per_iter);
    assert_eq!(a.get("Bcm"), b.get("Bcm"));
    // Different iteration counts, same figure.
    let c = cg
        .per_iteration(500, 3000, &mut c_launcher("lcg16"))
        .unwrap();
    assert_eq!(c.instructions(), a.instructions());
}

#[test]
fn twice_the_work_is_twice_the_instructions() {
    let Some(cg) = valgrind() else { return };
    let ir = |kernel: &str| {
        let r = cg
            .per_iteration(1000, 2000, &mut c_launcher(kernel))
            .unwrap();
        eprintln!(
            "{kernel}: {} instructions per iteration, counted in {:?} (two runs)",
            r.instructions().unwrap(),
            r.wall
        );
        r.instructions().unwrap()
    };
    let (one, two, four) = (ir("lcg16"), ir("lcg32"), ir("lcg64"));
    // Twice the work: twice the instructions, up to the loop's own few per iteration...
    assert!((two - 2.0 * one).abs() <= 12.0, "{one} vs {two}");
    // ...and exactly twice the kernel's increment: the count is linear in the work.
    assert_eq!(four - two, 2.0 * (two - one), "{one}, {two}, {four}");
}

#[test]
fn cold_memory_misses_the_simulated_cache_and_hot_does_not() {
    let Some(cg) = valgrind() else { return };
    let hot = cg
        .per_iteration(1000, 2000, &mut c_launcher("hot"))
        .unwrap();
    let cold = cg
        .per_iteration(1000, 2000, &mut c_launcher("cold"))
        .unwrap();
    eprintln!("hot:  {:?}\ncold: {:?}", hot.per_iter, cold.per_iter);
    // Nearly the same code runs in both (cold also computes the struct's address).
    let (hot_ir, cold_ir) = (hot.instructions().unwrap(), cold.instructions().unwrap());
    assert!((hot_ir - cold_ir).abs() <= 2.0, "{hot_ir} vs {cold_ir}");
    let hot_w = hot.get("D1mw").unwrap();
    let cold_w = cold.get("D1mw").unwrap();
    // 1 KiB = 16 cache lines of 64 bytes, each written for the first time.
    assert!(hot_w < 0.1, "hot D1mw {hot_w}");
    assert!((14.0..=18.0).contains(&cold_w), "cold D1mw {cold_w}");
    assert!(cold.get("DLmw").unwrap() >= 14.0, "{:?}", cold.per_iter);
    assert!(hot.get("DLmw").unwrap() < 0.1, "{:?}", hot.per_iter);
}

#[test]
fn the_wildcard_matches_a_generic_rust_loop_in_both_manglings() {
    let Some(cg) = valgrind() else { return };
    let mut per_iter = Vec::new();
    for mangling in ["legacy", "v0"] {
        let exe = rust_kernel(mangling);
        let ir = |reps: &str| {
            cg.per_iteration(
                1000,
                2000,
                &mut argv_launcher(&exe, vec![OsString::from(reps)]),
            )
            .unwrap()
            .instructions()
            .unwrap()
        };
        let (one, two) = (ir("8"), ir("16"));
        eprintln!("rust ({mangling}): {one} and {two} instructions per iteration");
        assert!(
            one > 8.0 && (two - 2.0 * one).abs() <= 12.0,
            "{one} vs {two}"
        );
        per_iter.push(one);
    }
    assert_eq!(per_iter[0], per_iter[1]);
}

#[test]
fn a_pattern_that_matches_nothing_is_a_clear_error() {
    let Some(mut cg) = valgrind() else { return };
    cg.toggle = "*no_such_function*".into();
    let err = cg
        .per_iteration(10, 20, &mut c_launcher("lcg16"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("*no_such_function*"), "{err}");
    assert!(err.contains("nothing was counted"), "{err}");
}

#[test]
fn a_failing_benchmark_reports_its_exit_status() {
    let Some(cg) = valgrind() else { return };
    let err = cg
        .per_iteration(10, 20, &mut c_launcher("no-such-kernel"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("exit status: 2"), "{err}");
}

#[test]
fn missing_valgrind_names_the_package() {
    let cg = Callgrind {
        valgrind: PathBuf::from("/nonexistent/bin/valgrind"),
        ..Callgrind::default()
    };
    let err = cg
        .per_iteration(10, 20, &mut c_launcher("lcg16"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("apt-get install valgrind"), "{err}");
    assert!(err.contains("/nonexistent/bin/valgrind"), "{err}");
    assert!(err.contains("VERNIER_VALGRIND"), "{err}");
}

#[test]
fn valgrind_path_comes_from_the_environment() {
    // Run the check in a child process so the variable does not leak into other tests.
    if std::env::var_os("VERNIER_INSTRUCTIONS_CHILD").is_some() {
        let err = Callgrind::from_env().check().unwrap_err().to_string();
        assert!(err.contains("/nonexistent/valgrind-from-env"), "{err}");
        assert!(err.contains("apt-get install valgrind"), "{err}");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // The test's name as the harness gives it: its module path without the crate's.
            &format!(
                "{}::valgrind_path_comes_from_the_environment",
                module_path!().split_once("::").unwrap().1
            ),
            "--nocapture",
        ])
        .env("VERNIER_INSTRUCTIONS_CHILD", "1")
        .env("VERNIER_VALGRIND", "/nonexistent/valgrind-from-env")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}
