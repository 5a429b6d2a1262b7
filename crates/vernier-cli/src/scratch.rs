//! Temporary directories: in `$TMPDIR`, under an unpredictable name and created exclusively
//! (`tempfile`: a name planted in advance, as a link or a directory, is never used), removed
//! when the work that needed them ends: when dropped (an error unwinds to the drop, as does
//! the first Ctrl-C), or by the removing thread when a signal ends the process first (a
//! second Ctrl-C; `vernier::measure::ctrlc::remove_on_signal`). docs/files.md lists them.

use std::path::Path;
use vernier::measure::ctrlc::{made_and_removed_on_signal, RemoveOnSignal};

/// A temporary directory of this process's own.
pub struct ScratchDir {
    // Dropped in this order: the directory is removed, then unregistered.
    dir: tempfile::TempDir,
    _on_signal: RemoveOnSignal,
}

impl ScratchDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A new directory `$TMPDIR/<prefix><random>`, readable by this user only.
pub fn dir(prefix: &str) -> anyhow::Result<ScratchDir> {
    use std::os::unix::fs::PermissionsExt;
    // Made while the registry is held: a signal in between cannot leave it behind.
    let (dir, _on_signal) = made_and_removed_on_signal(
        || {
            tempfile::Builder::new()
                .prefix(prefix)
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir()
        },
        |d| d.path().to_path_buf(),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot make a temporary directory in {} ({e}): set TMPDIR to a directory \
                 you can write to",
            std::env::temp_dir().display()
        )
    })?;
    Ok(ScratchDir { dir, _on_signal })
}
