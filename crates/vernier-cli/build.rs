//! Builds the allocation-counting interposer (`interposer/alloc_counts.rs`, a `no_std` cdylib)
//! with the same `rustc` as the command, for the command to embed (`include_bytes!`) and write
//! to the cache directory when a run counts allocations. No C compiler is needed, and an
//! installed `vernier` carries it (`cargo install --path crates/vernier-cli`). Where it cannot
//! be built (not Linux, or the compile fails), an empty file is embedded and a run says
//! `memory-unavailable` with that reason.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "interposer/alloc_counts.rs";
    println!("cargo:rerun-if-changed={src}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let so = out.join("libvernier_alloc_counts.so");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let built = target.contains("linux")
        && {
            let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
            let mut cmd = Command::new(rustc);
            cmd.args([
                "--crate-type",
                "cdylib",
                "--crate-name",
                "vernier_alloc_counts",
                "--edition",
                "2021",
                "-C",
                "panic=abort",
                "-C",
                "opt-level=2",
            ])
            .arg(src)
            .arg("-o")
            .arg(&so);
            if target != host {
                cmd.args(["--target", &target]);
            }
            // The linker Cargo was told to use for the target (a cross build's
            // `aarch64-linux-gnu-gcc`): the host's `cc` cannot link another machine's code.
            println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
            if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
                let mut arg = std::ffi::OsString::from("linker=");
                arg.push(linker);
                cmd.arg("-C").arg(arg);
            }
            match cmd.status() {
                Ok(s) if s.success() => true,
                other => {
                    println!("cargo:warning=the allocation-counting interposer was not built ({other:?}): runs will report memory-unavailable");
                    false
                }
            }
        };
    if !built {
        std::fs::write(&so, b"").expect("write the empty interposer");
    }
}
