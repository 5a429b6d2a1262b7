//! A crate's own Criterion benches, unchanged, under Vernier (`crates/vernier-criterion`,
//! docs/criterion.md), taken from crates.io at test time (adler 1.0.2, whose only
//! dev-dependency is criterion), built with nothing changed but the `criterion` dependency
//! renamed to `vernier-criterion`: listed as Criterion names them, measured by `vernier run`
//! with their throughput, and measured standalone by `cargo bench`.
//!
//! The test's time is the release build of adler and of `vernier` for it: 89–97 s on the
//! shared 2-vCPU machine under a load average of 5–6 (37 s for the build alone when it was
//! quiet); 2.4 s when the build directory, kept beside the unpacked source, is still there.

use super::Unreachable;
use crate::common::cli::text;
use crate::measuring::criterion::{listed, run_worker};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vernier::result::Status;
use vernier::Throughput;

const CRATE: &str = "adler";
const VERSION: &str = "1.0.2";

/// The benchmarks adler's `benches/bench.rs` registers, as Criterion names them
/// (`group/function`), each with the throughput its group sets.
fn adler_benchmarks() -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for (group, size, suffix) in [
        ("simple-100b", 100u64, "100"),
        ("simple-1k", 1024, "1k"),
        ("simple-1m", 1024 * 1024, "1m"),
    ] {
        for f in ["zeroes", "ones"] {
            v.push((format!("{group}/{f}-{suffix}"), size));
        }
    }
    for f in ["5552", "8k", "64k", "1m"] {
        v.push((format!("chunked-16m/{f}"), 16 * 1024 * 1024));
    }
    v
}

/// adler's published source, fetched from crates.io by cargo (`cargo vendor` of a scratch
/// crate that depends on it, through the registry cargo is set up with) and copied under
/// `dir`, its manifest's `criterion` dev-dependency renamed to this repository's
/// `vernier-criterion` (and a `[workspace]` table, so that cargo does not take it for a member
/// of this one).
fn adler_crate(dir: &Path) -> Result<PathBuf, Unreachable> {
    let _ = std::fs::remove_dir_all(dir.join(format!("{CRATE}-{VERSION}")));
    let fetch = dir.join("fetch");
    std::fs::create_dir_all(fetch.join("src")).unwrap();
    std::fs::write(
        fetch.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{CRATE} = \"={VERSION}\"\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(fetch.join("src/lib.rs"), "").unwrap();
    let _ = std::fs::remove_dir_all(fetch.join("vendor"));
    let o = Command::new(env!("CARGO"))
        .args(["vendor", "--versioned-dirs", "--quiet", "vendor"])
        .current_dir(&fetch)
        .output()
        .unwrap();
    Unreachable::unless(
        &o,
        "crates.io (the registry cargo is set up with)",
        &format!("`cargo vendor` of {CRATE} {VERSION}, whose own Criterion benches this test runs"),
    )?;
    let src = dir.join(format!("{CRATE}-{VERSION}"));
    let o = Command::new("cp")
        .arg("-r")
        .arg(fetch.join("vendor").join(format!("{CRATE}-{VERSION}")))
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "cp: {}", text(&o));
    let manifest = src.join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).unwrap();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vernier-criterion")
        .canonicalize()
        .unwrap();
    let published = "[dev-dependencies.criterion]\nversion = \"0.3.2\"\n";
    assert!(
        toml.contains(published),
        "{manifest:?} no longer declares criterion as this test expects:\n{toml}"
    );
    let renamed = toml.replace(
        published,
        &format!(
            "[dev-dependencies.criterion]\npackage = \"vernier-criterion\"\npath = \"{}\"\n",
            ours.display()
        ),
    );
    std::fs::write(&manifest, format!("{renamed}\n[workspace]\n")).unwrap();
    // This workspace's lock: the versions of vernier's dependencies it was tested with.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
        src.join("Cargo.lock"),
    )
    .unwrap();
    Ok(src)
}

fn cargo(src: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(src)
        // Beside the unpacked source, which each run replaces: a later run builds only what
        // changed.
        .env("CARGO_TARGET_DIR", src.join("../target"))
        .env("NO_COLOR", "1")
        .env("VERNIER_LEDGER", src.join("ledger.json"))
        .env_remove("VERNIER_FDS")
        .output()
        .unwrap();
    assert!(o.status.success(), "cargo {args:?}: {}", text(&o));
    o
}

#[test]
fn a_crates_own_criterion_benches_run_unchanged_under_vernier() -> Result<(), Unreachable> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("criterion-adler");
    let src = adler_crate(&dir)?;
    let built = cargo(&src, &["bench", "--bench", "bench", "--no-run"]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    let exe = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Executable benches/bench.rs (")?
                .strip_suffix(')')
        })
        .map(|p| src.join(p))
        .map(|p| p.canonicalize().unwrap())
        .unwrap_or_else(|| panic!("no bench executable in cargo's output:\n{stderr}"));
    let expected = adler_benchmarks();
    let names: Vec<String> = expected.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(listed(&exe, &["--bench"]), names);
    // A worker: every benchmark measured, none failed, each with its group's throughput.
    let file = run_worker(&exe, &dir.join("adler.json"));
    let measured: Vec<(String, Status, Option<Throughput>)> = file
        .benchmarks
        .iter()
        .map(|b| (b.name.clone(), b.status, b.throughput))
        .collect();
    let want: Vec<(String, Status, Option<Throughput>)> = expected
        .iter()
        .map(|(n, bytes)| {
            (
                n.clone(),
                Status::Ok,
                Some(Throughput::BytesPerIter(*bytes)),
            )
        })
        .collect();
    assert_eq!(measured, want);
    // The same code, the same figures' order: the 1 KiB checksum takes longer than the
    // 100-byte one, measured in the same run.
    let median = |n: &str| {
        file.benchmarks
            .iter()
            .find(|b| b.name == n)
            .unwrap()
            .per_iter
            .median_ns
    };
    assert!(median("simple-1k/ones-1k") > 2.0 * median("simple-100b/ones-100"));
    // Standalone under `cargo bench`: a filter as Criterion takes it, Vernier's table.
    let o = cargo(
        &src,
        &["bench", "--bench", "bench", "--", "simple-1k", "--quick"],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("simple-"))
        .collect();
    assert_eq!(
        rows,
        ["simple-1k/zeroes-1k", "simple-1k/ones-1k"],
        "{}",
        text(&o)
    );
    assert!(stdout.contains("GiB/s"), "no rate in the table:\n{stdout}");
    Ok(())
}
