//! Ctrl-C and the signals that end the process: the first Ctrl-C (or another stop signal)
//! raises [`INTERRUPTED`] so that measuring stops at the next batch boundary, keeping every
//! sample taken; a second, half a second or more later, ends the process (status 130).
//!
//! A signal that ends the process at once (the second Ctrl-C; Ctrl-C, SIGTERM or SIGHUP where
//! no stop handler is installed) runs no destructor: the temporary files and directories
//! registered with [`remove_on_signal`] are then removed before the process ends, as their
//! owners' drops would have.
//!
//! Unix (`unix.rs`) routes signals to an async-signal-safe handler and removes the paths from
//! a thread of its own; Windows (`windows.rs`) has a console control handler, which the system
//! runs on a thread of its own: Ctrl-C and Ctrl-Break are SIGINT there, closing the console,
//! logging off and shutting down are SIGTERM.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as sys;

pub use sys::install_stop_handler;

/// Raised by the first stop signal; the engine stops between batches.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// With `once`: when the first stop signal arrived (monotonic ns; 0: none yet).
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);
static SECOND_ENDS: AtomicBool = AtomicBool::new(false);
/// A second signal this long after the first ends the process. Sooner, it is the same Ctrl-C
/// reaching the process twice: `timeout -s INT` signals both the process and its group, and
/// a process killed by that second copy lost everything it had measured.
const SECOND_SIGNAL_AFTER_NS: u64 = 500_000_000;
/// The removing side started, once.
static REMOVER_STARTED: std::sync::Once = std::sync::Once::new();

/// The paths [`remove_on_signal`] registered and whose guards are alive.
static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Whether a stop signal arriving now is the second one that ends the process (`once` was
/// asked, and the first came half a second or more ago); the first is noted. Signal-safe:
/// the clock and atomics only.
fn second_ends_now() -> bool {
    if !SECOND_ENDS.load(Ordering::SeqCst) {
        return false;
    }
    let now = super::clock::monotonic_ns();
    match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => false,
        Err(first) => now.saturating_sub(first) >= SECOND_SIGNAL_AFTER_NS,
    }
}

/// Remove every registered path (not from a signal handler: it takes the registry's lock).
fn remove_registered() {
    let paths = REGISTERED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for p in paths {
        if p.is_dir() && !p.is_symlink() {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// First Ctrl-C: stop measuring at the next batch boundary and keep everything measured.
/// A second Ctrl-C, half a second or more later, ends the process (status 130).
pub fn install_ctrlc() {
    // Cannot fail: SIGINT is a valid signal and the struct is fully initialised.
    let _ = install_stop_handler(&[libc::SIGINT], true);
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// While alive, its path is removed (recursively) if a signal ends the process.
#[must_use = "the path is removed on a signal only while the guard lives"]
pub struct RemoveOnSignal {
    path: PathBuf,
}

impl Drop for RemoveOnSignal {
    fn drop(&mut self) {
        let mut paths = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = paths.iter().position(|p| *p == self.path) {
            paths.swap_remove(i);
        }
    }
}

/// Have `path` (a temporary file or directory, which its owner removes when done) removed
/// too if a signal ends the process before that: the second Ctrl-C, or Ctrl-C, SIGTERM or
/// SIGHUP where they are not stop signals ([`install_stop_handler`]) and not ignored. The
/// first registration starts the removing side and routes those signals to it.
pub fn remove_on_signal(path: &Path) -> RemoveOnSignal {
    REGISTERED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_path_buf());
    REMOVER_STARTED.call_once(sys::start_remover);
    RemoveOnSignal {
        path: path.to_path_buf(),
    }
}

/// [`remove_on_signal`] for a path `make` creates, with no moment in between when a signal
/// would leave it behind: the removing side is started (and the signals routed to it)
/// first, and the registry is held while `make` runs, so a signal that arrives meanwhile
/// removes the path once it is registered. `make` must not register a path itself.
pub fn made_and_removed_on_signal<T, E>(
    make: impl FnOnce() -> Result<T, E>,
    path_of: impl FnOnce(&T) -> PathBuf,
) -> Result<(T, RemoveOnSignal), E> {
    REMOVER_STARTED.call_once(sys::start_remover);
    let mut paths = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    let made = make()?;
    let path = path_of(&made);
    paths.push(path.clone());
    Ok((made, RemoveOnSignal { path }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_unregisters_its_path_when_dropped() {
        let p = Path::new("/nonexistent/vernier-registered");
        let g = remove_on_signal(p);
        let has = || REGISTERED.lock().unwrap().iter().any(|q| q == p);
        assert!(has());
        drop(g);
        assert!(!has());
    }
}
