//! CMake: a project that includes vernier with `add_subdirectory` and sets no build type is
//! warned at configure time (its benchmarks would be built without optimisation); with a
//! build type, or vernier as the top-level project (which defaults to RelWithDebInfo), no
//! warning. Needs cmake (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Configure `source` into a fresh build directory; the configure output.
fn configure(source: &Path, build: &str, defs: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cmake-build-type")
        .join(build);
    let _ = std::fs::remove_dir_all(&dir);
    let o = Command::new("cmake")
        .arg("-S")
        .arg(source)
        .arg("-B")
        .arg(&dir)
        .args(defs)
        .output()
        .unwrap_or_else(|e| panic!("cmake is needed (apt-get install cmake): {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    text
}

#[test]
fn add_subdirectory_without_a_build_type_is_warned_at_configure_time() {
    let consumer = repo().join("cmake/consumer");
    let src = format!("-DVERNIER_SOURCE_DIR={}", repo().display());
    let untyped = configure(&consumer, "untyped", &[&src]);
    assert!(
        untyped.contains("CMAKE_BUILD_TYPE is not set")
            && untyped.contains("-DCMAKE_BUILD_TYPE=Release"),
        "{untyped}"
    );
    let release = configure(&consumer, "release", &[&src, "-DCMAKE_BUILD_TYPE=Release"]);
    assert!(
        !release.contains("CMAKE_BUILD_TYPE is not set"),
        "{release}"
    );
    let quiet = configure(&consumer, "quiet", &[&src, "-DVERNIER_QUIET_BUILD_TYPE=ON"]);
    assert!(!quiet.contains("CMAKE_BUILD_TYPE is not set"), "{quiet}");
    let top = configure(&repo(), "top", &[]);
    assert!(!top.contains("CMAKE_BUILD_TYPE is not set"), "{top}");
}
