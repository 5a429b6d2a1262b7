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
        }
        let with = WithFits {
            file: self,
            complexity: super::complexity::families(&self.benchmarks),
        };
        let json = serde_json::to_vec(&with).map_err(std::io::Error::other)?;
        write_atomic(path, &json)
    }
}

/// Write bytes to `path` atomically (temporary file in the same directory, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
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
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
    let probe = dir.join(format!(
        ".{}.{}.probe",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "result".into()),
        std::process::id()
    ));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "{shown}: cannot create a file in {} ({e}): choose a directory you can write to",
            dir.display()
        )),
    }
}
