//! Writing a result file: atomically (temporary file + rename), so a crash never leaves half
//! a file, and a destination checked before anything is measured.

use super::ResultFile;
use std::path::Path;

impl ResultFile {
    /// Write atomically: a temporary file beside the target, then a rename. The complexity
    /// of each family of benchmarks over a numeric argument is derived from the benchmarks
    /// and written with them (`complexity`, docs/result-schema.md).
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        /// The file with its families' fits beside its fields, written in one pass.
        #[derive(serde::Serialize)]
        struct WithFits<'a> {
            #[serde(flatten)]
            file: &'a ResultFile,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            complexity: Vec<super::complexity::FamilyFit>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            complexity_undetermined: Vec<super::complexity::Untold>,
        }
        let (complexity, complexity_undetermined) = super::complexity::fits(&self.benchmarks);
        let with = WithFits {
            file: self,
            complexity,
            complexity_undetermined,
        };
        let json = serde_json::to_vec(&with).map_err(std::io::Error::other)?;
        write_atomic(path, &json)
    }
}

/// Write bytes to `path` atomically (temporary file in the same directory, fsync, rename).
/// The temporary file has an unpredictable name and is created exclusively
/// ([`create_exclusive`]); it is removed when anything fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let (dir, name) = dir_and_name(path);
    let (mut f, tmp) = create_exclusive(dir, &name, "tmp")?;
    let written = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    drop(f);
    written.inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The directory `path` is in (`.` for a bare name) and its file name.
fn dir_and_name(path: &Path) -> (&Path, String) {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result".into());
    (dir, name)
}

/// A new file `.<name>.<16 random hex digits>.<ext>` in `dir`, opened for writing. Created
/// exclusively (`O_CREAT | O_EXCL`, and `O_NOFOLLOW`): a name already taken, by a file, a
/// directory or a planted symbolic link, is never opened but skipped for another. The name's
/// digits come from the kernel's random source, so no other user can plant it in advance.
pub fn create_exclusive(
    dir: &Path,
    name: &str,
    ext: &str,
) -> std::io::Result<(std::fs::File, std::path::PathBuf)> {
    let mut last = None;
    for _ in 0..16 {
        let p = dir.join(format!(".{name}.{:016x}.{ext}", random_u64()));
        match crate::os::files::create_new(&p) {
            Ok(f) => return Ok((f, p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

/// 64 bits from the system's random source (`getrandom`, `getentropy`, `BCryptGenRandom`),
/// else from the clock's nanoseconds mixed with a stack address (a name taken by then is
/// skipped: [`create_exclusive`]).
fn random_u64() -> u64 {
    let v = 0u64;
    if let Some(r) = crate::os::files::random_u64() {
        return r;
    }
    let mut r =
        crate::workload::input::Rng::new(crate::timer::monotonic_ns() ^ (&v as *const u64 as u64));
    r.next_u64()
}

/// Check, before anything is measured, that a result can be written to `path` the way
/// [`write_atomic`] will write it: `path` is not a directory, its directory exists, and a file
/// can be created there (one is created and removed). The error names the problem and the
/// fix, without the option's name (the caller adds it).
pub fn check_destination(path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err("an empty path: give a file name such as result.json".into());
    }
    if path.is_dir() {
        return Err(format!(
            "{shown} is a directory: give a file path, such as {}",
            path.join("result.json").display()
        ));
    }
    let (dir, name) = dir_and_name(path);
    if !dir.exists() {
        return Err(format!(
            "{shown}: the directory {} does not exist (create it first: mkdir -p {})",
            dir.display(),
            dir.display()
        ));
    }
    if !dir.is_dir() {
        return Err(format!("{shown}: {} is not a directory", dir.display()));
    }
    match create_exclusive(dir, &name, "probe") {
        Ok((_, probe)) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "{shown}: cannot create a file in {} ({e}): choose a directory you can write to",
            dir.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_write_leaves_only_its_file_and_a_failed_one_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(entries(dir.path()), ["r.json"]);
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        // A directory in the way: the rename fails, and the temporary file is removed.
        let blocked = dir.path().join("d");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), "").unwrap();
        assert!(write_atomic(&blocked, b"{}").is_err());
        assert_eq!(entries(dir.path()), ["d", "r.json"]);
        // The destination check creates and removes its probe.
        check_destination(&path).unwrap();
        assert_eq!(entries(dir.path()), ["d", "r.json"]);
    }

    #[test]
    fn temporary_names_differ_and_are_created_exclusively() {
        let dir = tempfile::tempdir().unwrap();
        let (_, a) = create_exclusive(dir.path(), "r.json", "tmp").unwrap();
        let (_, b) = create_exclusive(dir.path(), "r.json", "tmp").unwrap();
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        let digits = name
            .strip_prefix(".r.json.")
            .and_then(|r| r.strip_suffix(".tmp"))
            .unwrap();
        assert!(
            digits.len() == 16 && digits.chars().all(|c| c.is_ascii_hexdigit()),
            "{name}"
        );
    }
}
