//! Google Benchmark's own test programs, unchanged, on vernier (`include/gbench`,
//! docs/gbench.md), taken at test time from Debian's source package `benchmark` (`apt-get
//! source`, with an apt state of the test's own): built once against libbenchmark
//! (libbenchmark-dev, which `.ci/run` installs), whose `--benchmark_list_tests` is the
//! reference for the names, and once against the layer; under `vernier run` every benchmark
//! libbenchmark lists is measured, under that name, and none fails.

use super::Unreachable;
use crate::common::cli;
use crate::measuring::gbench::{build, listed, text, tmp, BENCHMARK_TEST_FILTER};
use std::path::{Path, PathBuf};
use std::process::Command;
use vernier::units::Throughput;

/// `KEY=value` of /etc/os-release.
fn os_release(key: &str) -> Option<String> {
    let s = std::fs::read_to_string("/etc/os-release").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(|v| v.trim_matches('"').to_string())
}

/// Google Benchmark's sources (Debian's source package `benchmark`, of this system's release),
/// downloaded with apt-get into a fresh directory with an apt state of its own (a sources list
/// with the `deb-src` line, its own lists and cache: the system's apt configuration is left
/// alone). An archive that cannot be reached is said as such; anything else fails the test,
/// naming what to do.
fn gbench_sources() -> Result<PathBuf, Unreachable> {
    let codename = os_release("VERSION_CODENAME").unwrap_or_default();
    assert!(
        os_release("ID").as_deref() == Some("debian") && !codename.is_empty(),
        "this test takes Google Benchmark's programs from Debian's source package \
         `benchmark`: it needs a Debian system (found ID={:?}, VERSION_CODENAME={codename:?})",
        os_release("ID")
    );
    let root = tmp().join("apt");
    let _ = std::fs::remove_dir_all(&root);
    for d in ["lists/partial", "cache/archives/partial", "src"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    // The source entries of the archive this system installs from (its own mirror, as its apt
    // is set up), for this release.
    let list = root.join("sources.list");
    let parts = root.join("sources.list.d");
    std::fs::create_dir_all(&parts).unwrap();
    let found = source_entries(&codename, &list, &parts);
    assert!(
        found,
        "no `deb` entry for Debian {codename} in /etc/apt/sources.list or \
         /etc/apt/sources.list.d/*.sources: this test fetches Debian's source package \
         `benchmark` from the archive the system's apt uses"
    );
    let apt = |args: &[&str], dir: &Path| -> Result<(), Unreachable> {
        let o = Command::new("apt-get")
            .current_dir(dir)
            .arg("-q")
            .arg(format!("-oDir::Etc::SourceList={}", list.display()))
            .arg(format!("-oDir::Etc::SourceParts={}", parts.display()))
            .arg(format!(
                "-oDir::State::Lists={}",
                root.join("lists").display()
            ))
            .arg(format!("-oDir::Cache={}", root.join("cache").display()))
            .arg("-oDebug::NoLocking=1")
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("apt-get is needed to fetch Debian's `benchmark` source package: {e}")
            });
        Unreachable::unless(
            &o,
            "Debian's archive (the mirror the system's apt uses)",
            &format!(
                "`apt-get {}` of the source package `benchmark` ({codename})",
                args.join(" ")
            ),
        )
    };
    apt(&["update"], &root)?;
    apt(
        &["source", "--download-only", "benchmark"],
        &root.join("src"),
    )?;
    let tarball = std::fs::read_dir(root.join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.starts_with("benchmark_") && n.contains(".orig.tar.")
        })
        .unwrap_or_else(|| {
            panic!(
                "apt-get source benchmark gave no .orig tarball in {}",
                root.display()
            )
        });
    let o = Command::new("tar")
        .arg("xf")
        .arg(&tarball)
        .arg("-C")
        .arg(root.join("src"))
        .output()
        .unwrap();
    assert!(o.status.success(), "tar: {}", text(&o));
    let dir = std::fs::read_dir(root.join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && p.join("test/basic_test.cc").exists())
        .unwrap_or_else(|| {
            panic!(
                "no test/basic_test.cc in the `benchmark` source package under {}",
                root.display()
            )
        });
    Ok(dir)
}

/// Writes `deb-src` twins of the system's `deb` entries for `codename` (its own suite, not
/// `-updates` or `-security`): one-line entries of `/etc/apt/sources.list` into `list`, deb822
/// stanzas of `/etc/apt/sources.list.d/*.sources` into `parts`. Whether any was found.
fn source_entries(codename: &str, list: &Path, parts: &Path) -> bool {
    let mut lines = String::new();
    let text = std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default();
    for l in text.lines().map(str::trim) {
        let mut w = l.split_whitespace();
        if w.next() == Some("deb") && l.split_whitespace().any(|x| x == codename) {
            lines.push_str(&format!("deb-src{}\n", &l[3..]));
        }
    }
    std::fs::write(list, &lines).unwrap();
    let mut stanzas = String::new();
    for e in std::fs::read_dir("/etc/apt/sources.list.d")
        .into_iter()
        .flatten()
    {
        let path = e.unwrap().path();
        if path.extension().and_then(|x| x.to_str()) != Some("sources") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for stanza in text.split("\n\n") {
            let field = |k: &str| {
                stanza
                    .lines()
                    .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
            };
            let ours = field("Types:").is_some_and(|t| t.split_whitespace().any(|x| x == "deb"))
                && field("Suites:").is_some_and(|t| t.split_whitespace().any(|x| x == codename));
            if ours {
                let twin: Vec<String> = stanza
                    .lines()
                    .filter(|l| !l.starts_with('#'))
                    .map(|l| match l.strip_prefix("Types:") {
                        Some(_) => "Types: deb-src".to_string(),
                        None => match l.strip_prefix("Suites:") {
                            Some(_) => format!("Suites: {codename}"),
                            None => l.to_string(),
                        },
                    })
                    .collect();
                stanzas.push_str(&twin.join("\n"));
                stanzas.push_str("\n\n");
            }
        }
    }
    std::fs::write(parts.join("system.sources"), &stanzas).unwrap();
    !lines.is_empty() || !stanzas.is_empty()
}

#[test]
fn google_benchmarks_own_programs_build_unchanged_and_run_under_libbenchmarks_names(
) -> Result<(), Unreachable> {
    let src = gbench_sources()?.join("test");
    let programs: [(&str, &[&str]); 4] = [
        ("map_test", &[]),
        ("fixture_test", &[]),
        ("templated_fixture_test", &[]),
        ("benchmark_test", &[BENCHMARK_TEST_FILTER]),
    ];
    // Both builds of each program, in parallel.
    let built: Vec<(PathBuf, PathBuf)> = std::thread::scope(|s| {
        let handles: Vec<_> = programs
            .iter()
            .map(|(name, _)| {
                let file = src.join(format!("{name}.cc"));
                s.spawn(move || {
                    (
                        build(&format!("gb-{name}"), &file, true),
                        build(&format!("lib-{name}"), &file, false),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut measured = 0;
    for ((name, extra), (ours, theirs)) in programs.iter().zip(&built) {
        let want = listed(theirs, extra);
        assert!(!want.is_empty(), "{name}: libbenchmark lists nothing");
        assert_eq!(
            listed(ours, extra),
            want,
            "{name}: the names differ from libbenchmark's"
        );
        // Measured under the runner: every benchmark, under libbenchmark's name, none failed.
        let json = tmp().join(format!("{name}.json"));
        let o = cli::vernier()
            .args([
                "run",
                "--quick",
                "--processes",
                "1",
                "--counters",
                "none",
                "--json",
            ])
            .arg(&json)
            .arg("--")
            .arg(ours)
            .args(*extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", text(&o));
        let file = vernier::result::ResultFile::load(&json).unwrap();
        let names: Vec<&str> = file.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, want, "{name}");
        for b in &file.benchmarks {
            assert_eq!(
                b.status,
                vernier::result::Status::Ok,
                "{name}: {}: {:?}",
                b.name,
                b.error
            );
        }
        measured += file.benchmarks.len();
        // Throughput where the suite declares it: map_test's lookups declare `size` items per
        // iteration (SetItemsProcessed(iterations * size)); BM_SetInsert/N/M declares M ints
        // of bytes (SetBytesProcessed(iterations * M * sizeof(int))).
        for b in &file.benchmarks {
            let parts: Vec<&str> = b.name.split('/').collect();
            let want = match parts.as_slice() {
                ["BM_MapLookup", n] | ["MapFixture", "Lookup", n] => {
                    Some(Throughput::ItemsPerIter(n.parse().unwrap()))
                }
                ["BM_SetInsert", _, m] => {
                    Some(Throughput::BytesPerIter(m.parse::<u64>().unwrap() * 4))
                }
                _ => continue,
            };
            assert_eq!(b.throughput, want, "{name}: {}", b.name);
        }
        let stdout = String::from_utf8_lossy(&o.stdout);
        if *name == "map_test" {
            assert!(stdout.contains("items/s"), "{stdout}");
            assert!(
                stdout.contains("complexity of BM_MapLookup: O("),
                "{stdout}"
            );
        }
    }
    assert!(measured >= 20, "{measured} benchmarks measured");
    Ok(())
}
