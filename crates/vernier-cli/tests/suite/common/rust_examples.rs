//! The workspace's example workers (`crates/vernier/examples`, and `criterion_api` of
//! `crates/vernier-criterion/examples`), built once per test binary with the cargo that runs
//! the tests, in the same profile.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The examples directory of the profile this test runs with, after building the workers.
pub fn examples() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let bin = Path::new(env!("CARGO_BIN_EXE_vernier"));
        let profile_dir = bin.parent().unwrap();
        let mut cmd = Command::new(env!("CARGO"));
        // `--workspace`: the features the workspace's `cargo test` built the crates with, so
        // that its build of the examples is reused rather than the crates built again (with
        // `-p`, the `vernier` crate's dependencies would lose the features its
        // dev-dependencies add, and it would be built a second time).
        cmd.args(["build", "-q", "--workspace"]);
        for e in [
            "chain",
            "fault_worker",
            "faulty",
            "experiments",
            "sharing",
            "alloc",
            "profile_mix",
            "criterion_api",
        ] {
            cmd.args(["--example", e]);
        }
        if profile_dir.file_name().unwrap() == "release" {
            cmd.arg("--release");
        }
        let target_dir = profile_dir.parent().unwrap();
        let st = cmd.env("CARGO_TARGET_DIR", target_dir).status().unwrap();
        assert!(st.success(), "building the example workers failed");
        profile_dir.join("examples")
    })
}
