//! A bench crate written as a user writes one, outside this repository: its manifest (with path
//! dependencies on this workspace's crates, and a `[workspace]` table of its own so that cargo
//! does not take it for a member of this one), this workspace's lock file (the versions of the
//! dependencies the workspace is tested with), its sources, built and run by the cargo that runs
//! the tests.
//!
//! Every such crate builds into one target directory, shared by the test binary's runs and by
//! its tiers, so that the dependencies they have in common (the same versions and features) are
//! compiled once.
#![allow(dead_code)]

use crate::common::cli::text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A crate directory and what cargo is run there with.
pub struct BenchCrate {
    dir: PathBuf,
}

/// The canonical path of this workspace's crate directory `crates/NAME`, for a manifest's path
/// dependency.
pub fn workspace_crate(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .canonicalize()
        .unwrap()
}

/// This workspace's `Cargo.lock`.
pub fn workspace_lock() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock")
}

/// `NAME` in the test binary's temporary directory, for a crate's directory.
pub fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// The target directory every outside crate builds into.
fn shared_target() -> PathBuf {
    tmp("outside-crates-target")
}

/// Writes `contents` to `path` unless it already holds them: an unchanged source keeps its
/// modification time, so cargo does not build it again.
fn write_if_changed(path: &Path, contents: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

impl BenchCrate {
    /// The crate in `dir`: `manifest` (the whole of `Cargo.toml` but the `[workspace]` table,
    /// which is added) and `files` (relative path, contents), with this workspace's lock file.
    /// Files already holding what is given are left as they are.
    pub fn write(dir: PathBuf, manifest: &str, files: &[(&str, &str)]) -> BenchCrate {
        write_if_changed(
            &dir.join("Cargo.toml"),
            &format!("{manifest}\n[workspace]\n"),
        );
        for (path, contents) in files {
            write_if_changed(&dir.join(path), contents);
        }
        let lock = std::fs::read_to_string(workspace_lock()).unwrap();
        write_if_changed(&dir.join("Cargo.lock"), &lock);
        BenchCrate { dir }
    }

    /// The package `name` (version 0.1.0, edition 2021) in `dir`: `rest` is its manifest
    /// after the `[package]` table (dependencies, targets), `files` as for [`BenchCrate::write`].
    pub fn package(dir: PathBuf, name: &str, rest: &str, files: &[(&str, &str)]) -> BenchCrate {
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{rest}"
        );
        BenchCrate::write(dir, &manifest, files)
    }

    /// A crate already on disk (a published crate unpacked), built as the others are.
    pub fn at(dir: PathBuf) -> BenchCrate {
        BenchCrate { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `cargo ARGS` in the crate, which must succeed: colour off, the crate's own ledger
    /// in use (as a user's is), the shared target directory.
    pub fn cargo(&self, args: &[&str]) -> Output {
        let o = self.command(args).output().unwrap();
        assert!(o.status.success(), "cargo {args:?}: {}", text(&o));
        o
    }

    /// `cargo ARGS` in the crate, not yet run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO"));
        c.args(args)
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", shared_target())
            .env("NO_COLOR", "1")
            .env("VERNIER_LEDGER", self.dir.join("ledger.json"))
            .env_remove("VERNIER_FDS");
        c
    }

    /// The executable of the bench target `bench`, built by `cargo bench --no-run` with
    /// `args` before it (`--offline`, say): the path cargo names.
    pub fn bench_exe(&self, args: &[&str], bench: &str) -> PathBuf {
        let args = [args, &["bench", "--bench", bench, "--no-run"]].concat();
        let built = self.cargo(&args);
        let stderr = String::from_utf8_lossy(&built.stderr);
        let prefix = format!("Executable benches/{bench}.rs (");
        stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix(prefix.as_str())?.strip_suffix(')'))
            .map(|p| self.dir.join(p).canonicalize().unwrap())
            .unwrap_or_else(|| panic!("no bench executable in cargo's output:\n{stderr}"))
    }
}
