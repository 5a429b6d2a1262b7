//! A crate's own Criterion benches, unchanged, under Vernier (`crates/vernier-criterion`,
//! docs/criterion.md), taken from crates.io at test time (adler 1.0.2, whose only
//! dev-dependency is criterion), built with nothing changed but the `criterion` dependency
//! renamed to `vernier-criterion`: listed as Criterion names them, measured by `vernier run`
//! with their throughput, and measured standalone by `cargo bench`.
//!
//! The test's time is the release build of adler and of `vernier` for it: 89–97 s on the
//! shared 2-vCPU machine under a load average of 5–6 (37 s for the build alone when it was
//! quiet); 2.4 s when the outside crates' build directory (common/bench_crate.rs) is still
//! there.

use super::{published_crate, Unreachable};
use crate::common::bench_crate::{tmp, workspace_crate, BenchCrate};
use crate::common::cli::text;
use crate::measuring::criterion::{listed, run_worker};
use std::path::Path;
use std::process::Command;
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

/// adler's published source (fetched from crates.io), copied under `dir`, its manifest's
/// `criterion` dev-dependency renamed to this repository's `vernier-criterion`, with this
/// workspace's lock file and a `[workspace]` table of its own.
fn adler_crate(dir: &Path) -> Result<BenchCrate, Unreachable> {
    let published = published_crate(
        dir,
        CRATE,
        VERSION,
        "whose own Criterion benches this test runs",
    )?;
    let src = dir.join(format!("{CRATE}-{VERSION}"));
    let _ = std::fs::remove_dir_all(&src);
    let o = Command::new("cp")
        .arg("-r")
        .arg(&published)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "cp: {}", text(&o));
    let manifest = src.join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).unwrap();
    let criterion = "[dev-dependencies.criterion]\nversion = \"0.3.2\"\n";
    assert!(
        toml.contains(criterion),
        "{manifest:?} no longer declares criterion as this test expects:\n{toml}"
    );
    let renamed = toml.replace(
        criterion,
        &format!(
            "[dev-dependencies.criterion]\npackage = \"vernier-criterion\"\npath = \"{}\"\n",
            workspace_crate("vernier-criterion").display()
        ),
    );
    let _ = std::fs::remove_file(&manifest);
    Ok(BenchCrate::write(src, &renamed, &[]))
}

#[test]
fn a_crates_own_criterion_benches_run_unchanged_under_vernier() -> Result<(), Unreachable> {
    let dir = tmp("criterion-adler");
    let adler = adler_crate(&dir)?;
    let exe = adler.bench_exe(&[], "bench");
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
    let o = adler.cargo(&["bench", "--bench", "bench", "--", "simple-1k", "--quick"]);
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
