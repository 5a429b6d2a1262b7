//! The one door to `/sys` and `/proc`: every read and write of kernel settings goes through a
//! [`SysRoot`], so tests can point the whole audit, tuning and reset machinery at a fake tree.
//!
//! The root is chosen by `--root DIR`, else the `VERNIER_SYSROOT` environment variable, else `/`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Environment variable naming the root directory of `/sys` and `/proc`.
pub const SYSROOT_ENV: &str = "VERNIER_SYSROOT";

/// A root directory under which `/sys`, `/proc` and friends are looked up.
#[derive(Debug, Clone)]
pub struct SysRoot {
    dir: PathBuf,
    real: bool,
}

/// Why a write to a kernel file failed, kept apart from the path so callers can decide
/// whether the kernel merely refused a value (`EIO`/`EINVAL`) or the tree is broken.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}")]
pub struct WriteError {
    pub path: String,
    #[source]
    pub source: io::Error,
}

impl WriteError {
    /// The kernel refused the value (typical for IRQs it manages itself), as opposed to the
    /// file being absent, not writable, or not a file.
    pub fn is_refused_value(&self) -> bool {
        matches!(
            self.source.raw_os_error(),
            Some(libc::EIO) | Some(libc::EINVAL)
        )
    }
}

impl SysRoot {
    /// A root at `dir`; `/` (or any path that resolves to it) is the real machine.
    pub fn new(dir: impl Into<PathBuf>) -> SysRoot {
        let dir = dir.into();
        let real = fs::canonicalize(&dir)
            .map(|p| p == Path::new("/"))
            .unwrap_or(false);
        SysRoot { dir, real }
    }

    /// The root from an explicit option, else `VERNIER_SYSROOT`, else `/`.
    pub fn from_option(dir: Option<&Path>) -> SysRoot {
        match dir {
            Some(d) => SysRoot::new(d),
            None => match std::env::var_os(SYSROOT_ENV) {
                Some(d) if !d.is_empty() => SysRoot::new(PathBuf::from(d)),
                _ => SysRoot::new("/"),
            },
        }
    }

    /// True when this root is the running machine's `/` (tuning it needs privileges and
    /// talks to services; a fake tree is only files).
    pub fn is_real(&self) -> bool {
        self.real
    }

    /// The directory this root stands for.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the absolute kernel path `abs` (e.g. `/proc/cmdline`) lives under this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.dir.join(abs.trim_start_matches('/'))
    }

    /// True when `abs` exists under the root.
    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// The raw content of `abs`, `None` when it does not exist or cannot be read: a missing
    /// file means "not available here", never an error.
    pub fn read_raw(&self, abs: &str) -> Option<String> {
        fs::read(self.path(abs))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The content of `abs` with surrounding whitespace trimmed.
    pub fn read(&self, abs: &str) -> Option<String> {
        self.read_raw(abs).map(|s| s.trim().to_string())
    }

    /// The content of `abs` parsed as a number.
    pub fn read_num<T: std::str::FromStr>(&self, abs: &str) -> Option<T> {
        self.read(abs).and_then(|s| s.parse().ok())
    }

    /// Names of the entries of directory `abs` (empty when absent), sorted.
    pub fn list(&self, abs: &str) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.path(abs))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Write `value` to the existing kernel file `abs`, the way `echo value > file` would
    /// (truncate, one write). Never creates files: a kernel file that is absent is an error.
    pub fn write(&self, abs: &str, value: &str) -> Result<(), WriteError> {
        use std::io::Write;
        let p = self.path(abs);
        let err = |source| WriteError {
            path: abs.to_string(),
            source,
        };
        let mut f = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&p)
            .map_err(err)?;
        f.write_all(value.as_bytes()).map_err(err)?;
        Ok(())
    }

    /// Select `word` in a kernel "selector" file such as
    /// `/sys/kernel/mm/transparent_hugepage/enabled` (`always [madvise] never`).
    ///
    /// The kernel takes the bare word and shows the bracketed list; a fake tree is plain
    /// files, so there the write is emulated by moving the brackets, which keeps a
    /// tune-then-reset cycle byte-for-byte exact on fixtures.
    pub fn write_selector(&self, abs: &str, word: &str) -> Result<(), WriteError> {
        if self.real {
            return self.write(abs, word);
        }
        let current = self.read_raw(abs).ok_or_else(|| WriteError {
            path: abs.to_string(),
            source: io::Error::from(io::ErrorKind::NotFound),
        })?;
        let line = current.trim_end_matches('\n');
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_start_matches('[').trim_end_matches(']'))
            .collect();
        if !words.contains(&word) {
            return Err(WriteError {
                path: abs.to_string(),
                source: io::Error::from_raw_os_error(libc::EINVAL),
            });
        }
        let shown: Vec<String> = words
            .iter()
            .map(|w| {
                if *w == word {
                    format!("[{w}]")
                } else {
                    w.to_string()
                }
            })
            .collect();
        let newline = if current.ends_with('\n') { "\n" } else { "" };
        self.write(abs, &format!("{}{newline}", shown.join(" ")))
    }
}

/// The selected word of a selector file's content (`always [madvise] never` → `madvise`).
pub fn selected_word(content: &str) -> Option<String> {
    content
        .split_whitespace()
        .find(|w| w.starts_with('[') && w.ends_with(']'))
        .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_emulation_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path());
        let abs = "/sys/kernel/mm/transparent_hugepage/enabled";
        std::fs::create_dir_all(root.path("/sys/kernel/mm/transparent_hugepage")).unwrap();
        std::fs::write(root.path(abs), "[always] madvise never\n").unwrap();
        root.write_selector(abs, "madvise").unwrap();
        assert_eq!(root.read_raw(abs).unwrap(), "always [madvise] never\n");
        assert_eq!(
            selected_word(&root.read_raw(abs).unwrap()).unwrap(),
            "madvise"
        );
        root.write_selector(abs, "always").unwrap();
        assert_eq!(root.read_raw(abs).unwrap(), "[always] madvise never\n");
        assert!(root.write_selector(abs, "bogus").is_err());
    }

    #[test]
    fn missing_files_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path());
        assert!(!root.is_real());
        assert!(root.read("/proc/cmdline").is_none());
        assert!(root.list("/proc/irq").is_empty());
        assert!(root.write("/proc/sys/kernel/nmi_watchdog", "0").is_err());
    }
}
