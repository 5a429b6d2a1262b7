//! hyperfine's own scripts (`scripts/` of its crate on crates.io, with numpy, scipy and
//! matplotlib from PyPI) read what `vernier exec --export-json` writes, a comparison and a
//! parameter scan, without error.

use super::{published_crate, Unreachable};
use crate::common::cli::{text, vernier};
use std::path::{Path, PathBuf};
use std::process::Command;

const HYPERFINE: &str = "1.19.0";

/// A Python with numpy, scipy and matplotlib (what hyperfine's scripts import), installed
/// from PyPI into a virtual environment kept under `dir`.
fn python_with_plots(dir: &Path) -> Result<PathBuf, Unreachable> {
    let venv = dir.join("venv");
    let python = venv.join("bin/python");
    let ready = venv.join("ready");
    if !ready.exists() {
        let o = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap();
        assert!(o.status.success(), "python3 -m venv: {}", text(&o));
        let o = Command::new(&python)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(["numpy", "scipy", "matplotlib"])
            .output()
            .unwrap();
        Unreachable::unless(
            &o,
            "PyPI",
            "`pip install numpy scipy matplotlib` (what hyperfine's scripts import)",
        )?;
        std::fs::write(&ready, "").unwrap();
    }
    Ok(python)
}

#[test]
fn hyperfines_own_scripts_read_the_exported_json() -> Result<(), Unreachable> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hyperfine-scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let scripts =
        published_crate(&dir, "hyperfine", HYPERFINE, "for its scripts/")?.join("scripts");
    let python = python_with_plots(&dir)?;
    let two = dir.join("two.json");
    let o = vernier()
        .args(["exec", "-r", "12", "true", "sh -c true", "--export-json"])
        .arg(&two)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let scan = dir.join("scan.json");
    let o = vernier()
        .args([
            "exec",
            "-r",
            "5",
            "-P",
            "n",
            "1",
            "3",
            "sh -c 'exit 0' {n}",
            "--export-json",
        ])
        .arg(&scan)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let runs: [(&str, &Path, &[&str]); 6] = [
        ("advanced_statistics.py", &two, &[]),
        ("welch_ttest.py", &two, &[]),
        ("plot_whisker.py", &two, &["-o", "whisker.png"]),
        ("plot_histogram.py", &two, &["-o", "histogram.png"]),
        ("plot_progression.py", &two, &["-o", "progression.png"]),
        ("plot_parametrized.py", &scan, &["-o", "parametrized.png"]),
    ];
    for (script, file, extra) in runs {
        let o = Command::new(&python)
            .arg(scripts.join(script))
            .arg(file)
            .args(extra)
            .env("MPLBACKEND", "Agg")
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{script}: {}", text(&o));
    }
    assert!(dir.join("whisker.png").exists() && dir.join("parametrized.png").exists());
    Ok(())
}
