//! Ctrl-C during `vernier demo`: every benchmark measured so far is in the result file, and
//! those cut short (the one being measured, and those whose second round never ran) have the
//! status `interrupted` and are marked in the table. (`run` is covered in tests/run.rs.)

#[path = "common/cli.rs"]
mod cli;

use cli::vernier;
use std::path::Path;
use std::time::Duration;
use vernier::result::{ResultFile, Status};

#[test]
fn ctrl_c_in_demo_marks_the_benchmarks_cut_short() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interrupted");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("demo.json");
    let out = dir.join("demo.out");
    let _ = std::fs::remove_file(&json);
    // 4 s per benchmark: after 3 s the first benchmarks are being measured, whatever the
    // machine's speed.
    let mut child = vernier()
        .args(["demo", "--time", "4", "--json"])
        .arg(&json)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let stdout = std::fs::read_to_string(&out).unwrap();
    assert_eq!(status.code(), Some(130), "{stdout}");
    // Said once.
    let stderr = std::fs::read_to_string(out.with_extension("err")).unwrap();
    assert_eq!(
        stderr
            .matches("every benchmark finished before Ctrl-C is kept")
            .count(),
        1,
        "{stderr}"
    );
    let f = ResultFile::load(&json).unwrap();
    assert!(!f.benchmarks.is_empty(), "{stdout}");
    let cut: Vec<&str> = f
        .benchmarks
        .iter()
        .filter(|b| b.status == Status::Interrupted)
        .map(|b| b.name.as_str())
        .collect();
    // With 2 rounds of 2 s each, nothing finished both rounds within 3 s.
    assert_eq!(cut.len(), f.benchmarks.len(), "{stdout}");
    assert!(f.benchmarks.iter().all(|b| b.stop == "interrupted"));
    for name in &cut {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&name.chars().take(20).collect::<String>()))
            .unwrap_or_else(|| panic!("no row for {name}:\n{stdout}"));
        assert!(row.contains("INTERRUPTED"), "{row}");
    }
}

/// The same Ctrl-C delivered twice at once (as `timeout -s INT` does: to the process and to
/// its group) is one Ctrl-C: the run stops and keeps what it measured, instead of being
/// killed by the second copy with nothing written.
#[test]
fn a_ctrl_c_delivered_twice_at_once_still_keeps_what_was_measured() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interrupted-twice");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("demo.json");
    let _ = std::fs::remove_file(&json);
    let mut child = vernier()
        .args(["demo", "--time", "4", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    for _ in 0..2 {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let f = ResultFile::load(&json).unwrap();
    assert!(!f.benchmarks.is_empty());
}
