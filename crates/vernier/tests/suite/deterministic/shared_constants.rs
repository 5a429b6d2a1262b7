//! The constants a harness shares with the runner and the Rust harness are defined once, in
//! Rust; the C++ header (`include/vernier.hpp`, which cannot link Rust) and the Python package's
//! Python files (`python/vernier/`) write some of them again. This test reads those sources and fails when one of
//! their copies differs from the Rust definition, or is no longer found.

use std::path::{Path, PathBuf};
use vernier::workload::{cache, threads};
use vernier::{memory, plan, protocol};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The value of an integer expression as the header and the package write them: a literal
/// (digits, `'` or `_` separators), `std::uint64_t{N}`, `A << B`.
fn eval(expr: &str) -> Option<u64> {
    let expr = expr.trim();
    if let Some((a, b)) = expr.split_once("<<") {
        return Some(eval(a)? << eval(b)?);
    }
    let lit = expr
        .strip_prefix("std::uint64_t{")
        .and_then(|e| e.strip_suffix('}'))
        .unwrap_or(expr);
    lit.replace(['\'', '_'], "").parse().ok()
}

/// The right-hand side of the definition of `name` in `src`: `constexpr TYPE name = RHS;`
/// (C++), `#define name RHS` (C preprocessor) or `name = RHS` at the start of a line (Python).
fn definition<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    src.lines().find_map(|l| {
        let l = l.trim_start();
        if let Some(rest) = l.strip_prefix("#define ") {
            return rest.strip_prefix(name)?.strip_prefix(' ').map(str::trim);
        }
        let l = l.strip_prefix("constexpr ").map_or(l, |rest| {
            rest.split_once(' ').map_or(rest, |(_type, decl)| decl)
        });
        let rhs = l.strip_prefix(name)?.trim_start().strip_prefix('=')?;
        Some(rhs.trim().trim_end_matches(';').trim())
    })
}

fn check_ints(file: &str, expected: &[(&str, u64)]) {
    let src = read(file);
    let mut wrong = Vec::new();
    for &(name, rust) in expected {
        match definition(&src, name) {
            Some(rhs) if eval(rhs) == Some(rust) => {}
            Some(rhs) => wrong.push(format!("{name} = {rhs} (Rust: {rust})")),
            None => wrong.push(format!("{name} is not defined (Rust: {rust})")),
        }
    }
    assert!(wrong.is_empty(), "{file}: {}", wrong.join("; "));
}

fn check_strings(file: &str, expected: &[(&str, &str)]) {
    let src = read(file);
    let mut wrong = Vec::new();
    for &(name, rust) in expected {
        match definition(&src, name) {
            Some(rhs) if rhs == format!("\"{rust}\"") => {}
            Some(rhs) => wrong.push(format!("{name} = {rhs} (Rust: \"{rust}\")")),
            None => wrong.push(format!("{name} is not defined (Rust: \"{rust}\")")),
        }
    }
    assert!(wrong.is_empty(), "{file}: {}", wrong.join("; "));
}

#[test]
fn the_cpp_header_s_constants_are_the_rust_ones() {
    let header = "include/vernier.hpp";
    check_ints(
        header,
        &[
            ("VERNIER_PROTOCOL_VERSION", protocol::VERSION.into()),
            ("kMaxProbeAdds", plan::MAX_PROBE_ADDS),
            ("kProbeRepeats", plan::PROBE_REPEATS as u64),
            ("kFallbackLlcBytes", cache::FALLBACK_LLC_BYTES),
            ("kEvictFactor", cache::EVICT_FACTOR),
            ("kSpinBeforeParkNs", threads::SPIN_BEFORE_PARK_NS),
            ("kSpinsPerYield", threads::SPINS_PER_YIELD.into()),
            ("kArmLeadNs", threads::ARM_LEAD_NS),
            ("kMaxArms", threads::MAX_ARMS.into()),
        ],
    );
    check_strings(header, &[("VERNIER_VERSION", env!("CARGO_PKG_VERSION"))]);
    // Names the header looks up or reads, as string literals in its code.
    let src = read(header);
    for name in [protocol::FDS_ENV, memory::READ_SYMBOL] {
        assert!(
            src.contains(&format!("\"{name}\"")),
            "{header}: no \"{name}\""
        );
    }
}

#[test]
fn the_python_package_s_constants_are_the_rust_ones() {
    // The protocol's version and limits are not in the package: the native module serves
    // the protocol with the Rust crate's loop.
    check_strings(
        "python/vernier/_worker.py",
        &[("VERSION", env!("CARGO_PKG_VERSION"))],
    );
    check_strings(
        "python/vernier/_memory.py",
        &[("READ_SYMBOL", memory::READ_SYMBOL)],
    );
}

/// The reader itself: a copy that differs is found.
#[test]
fn a_copy_that_differs_is_found() {
    let src = "constexpr std::uint64_t kA = std::uint64_t{1} << 20;\n\
               constexpr int kB = 3;\n#define V 1\nX = 1 << 20\nS = \"a\"\n";
    assert_eq!(definition(src, "kA").and_then(eval), Some(1 << 20));
    assert_eq!(definition(src, "kB").and_then(eval), Some(3));
    assert_eq!(definition(src, "V").and_then(eval), Some(1));
    assert_eq!(definition(src, "X").and_then(eval), Some(1 << 20));
    assert_eq!(definition(src, "S"), Some("\"a\""));
    assert_eq!(definition(src, "kC"), None);
    assert_ne!(definition(src, "kB").and_then(eval), Some(4));
}
