//! Ctrl-C while measuring: the first stops the measuring at the next batch boundary
//! ([`INTERRUPTED`]), keeping every sample taken; a second, half a second or more later, ends
//! the process (status 130). Installed by the `vernier` commands and by a standalone suite
//! (`cargo bench`, a benchmark program run by hand); a worker leaves Ctrl-C to its runner.
//!
//! A signal that ends the process at once (the second Ctrl-C; Ctrl-C, SIGTERM or SIGHUP where
//! no stop handler is installed) runs no destructor: the temporary files and directories
//! registered with [`remove_on_signal`] are then removed by a thread of their own before the
//! process ends, as their owners' drops would have.

use super::INTERRUPTED;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;

/// With `once`: when the first stop signal arrived (CLOCK_MONOTONIC ns; 0: none yet).
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);
static SECOND_ENDS: AtomicBool = AtomicBool::new(false);
/// A second signal this long after the first ends the process. Sooner, it is the same Ctrl-C
/// reaching the process twice: `timeout -s INT` signals both the process and its group, and
/// a process killed by that second copy lost everything it had measured.
const SECOND_SIGNAL_AFTER_NS: u64 = 500_000_000;
/// The signals that set the stop flag (bit `1 << signal`); the others this handler receives
/// end the process once the registered paths are removed.
static STOP_SIGNALS: AtomicU64 = AtomicU64::new(0);
/// The write end of the pipe the removing thread waits on (-1: no path was ever registered).
static REMOVER: AtomicI32 = AtomicI32::new(-1);
/// Set by the signal that ends the process: a further one ends it without waiting.
static ENDING: AtomicBool = AtomicBool::new(false);
/// How that signal ends it ([`die`]'s argument), for an exit that would come first.
static ENDING_HOW: AtomicI32 = AtomicI32::new(0);
/// How long an exit waits for the removing thread to end the process, once a signal set
/// [`ENDING`]: it removes a few temporary paths, so this is only reached if it is stuck.
const EXIT_WAITS_FOR_REMOVER_MS: u32 = 10_000;
/// The removing thread started, once.
static REMOVER_STARTED: std::sync::Once = std::sync::Once::new();

/// The paths [`remove_on_signal`] registered and whose guards are alive.
static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The signals that end the process, when not stop signals, after the registered paths are
/// removed (their default action, kept: the exit status says which signal it was).
const ENDING_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe throughout: clock_gettime, atomics, write, signal, raise, _exit.
    if STOP_SIGNALS.load(Ordering::SeqCst) & (1u64 << sig) == 0 {
        end_process(sig);
        return;
    }
    if SECOND_ENDS.load(Ordering::SeqCst) {
        let now = crate::timer::monotonic_ns();
        match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {}
            Err(first) if now.saturating_sub(first) >= SECOND_SIGNAL_AFTER_NS => {
                // A second Ctrl-C means "stop now": status 130.
                end_process(0);
                return;
            }
            Err(_) => {}
        }
    }
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// End the process from a signal handler: `how` 0 exits with status 130, a signal number
/// dies of that signal (its default action). With paths registered, the removing thread is
/// woken to remove them and end the process; a signal arriving while it works ends it at once.
fn end_process(how: libc::c_int) {
    let fd = REMOVER.load(Ordering::SeqCst);
    if fd >= 0 && !ENDING.swap(true, Ordering::SeqCst) {
        ENDING_HOW.store(how, Ordering::SeqCst);
        let byte = how as u8;
        // SAFETY: write is async-signal-safe; `byte` outlives the call.
        if unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) } == 1 {
            return;
        }
    }
    die(how);
}

/// Run by `exit` (a return from `main`, `std::process::exit`): once a signal is ending the
/// process, its removing thread ends it with that signal's status; an exit on another thread
/// meanwhile (the main thread, woken by a child that the same Ctrl-C ended, reporting that
/// child's failure) must not end it first with a status of its own. It waits for the removing
/// thread, and ends the process as the signal would if that thread never does.
extern "C" fn wait_for_remover() {
    if !ENDING.load(Ordering::SeqCst) {
        return;
    }
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    for _ in 0..EXIT_WAITS_FOR_REMOVER_MS {
        // SAFETY: nanosleep reads `pause`, valid for the call; a null remainder is allowed.
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
    die(ENDING_HOW.load(Ordering::SeqCst));
}

/// `_exit(130)` for `how` 0, else death by the signal `how` with its default action.
fn die(how: libc::c_int) {
    // SAFETY: signal, sigprocmask, raise and _exit are async-signal-safe; SIG_DFL is a valid
    // disposition and `set` is initialised by sigemptyset before use. In the handler the
    // signal is blocked: it is unblocked so that the raised copy is delivered.
    unsafe {
        if how != 0 {
            libc::signal(how, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, how);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(how);
        }
        libc::_exit(if how != 0 { 128 + how } else { 130 })
    }
}

/// First Ctrl-C: stop measuring at the next batch boundary and keep everything measured.
/// A second Ctrl-C, half a second or more later, ends the process (status 130).
pub fn install_ctrlc() {
    // Cannot fail: SIGINT is a valid signal and the struct is fully initialised.
    let _ = install_stop_handler(&[libc::SIGINT], true);
}

/// Make each of `signals` set the stop flag ([`interrupted`]) instead of ending the process;
/// with `once`, a second signal at least half a second after the first ends the process.
pub fn install_stop_handler(signals: &[libc::c_int], once: bool) -> std::io::Result<()> {
    if once {
        SECOND_ENDS.store(true, Ordering::SeqCst);
    }
    for &sig in signals {
        STOP_SIGNALS.fetch_or(1u64 << sig, Ordering::SeqCst);
        handle(sig)?;
    }
    Ok(())
}

/// Route `sig` to [`on_signal`].
fn handle(sig: libc::c_int) -> std::io::Result<()> {
    // SAFETY: the handler only reads the clock, uses atomics and may write to a pipe, reset a
    // disposition, raise or _exit (all async-signal-safe); sigaction is given a fully
    // initialised struct (empty mask).
    let rc = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
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
/// first registration starts the removing thread and routes those signals to it.
pub fn remove_on_signal(path: &Path) -> RemoveOnSignal {
    REGISTERED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_path_buf());
    REMOVER_STARTED.call_once(start_remover);
    RemoveOnSignal {
        path: path.to_path_buf(),
    }
}

/// [`remove_on_signal`] for a path `make` creates, with no moment in between when a signal
/// would leave it behind: the removing thread is started (and the signals routed to it)
/// first, and the registry is held while `make` runs, so a signal that arrives meanwhile
/// removes the path once it is registered. `make` must not register a path itself.
pub fn made_and_removed_on_signal<T, E>(
    make: impl FnOnce() -> Result<T, E>,
    path_of: impl FnOnce(&T) -> PathBuf,
) -> Result<(T, RemoveOnSignal), E> {
    REMOVER_STARTED.call_once(start_remover);
    let mut paths = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    let made = make()?;
    let path = path_of(&made);
    paths.push(path.clone());
    Ok((made, RemoveOnSignal { path }))
}

/// The removing thread, waiting on a pipe the signal handler writes to; then the signals
/// that would end the process without it are routed to the handler. Without a pipe or a
/// thread, nothing changes (the paths are left where a signal ends the process).
fn start_remover() {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints; O_CLOEXEC keeps them out of children.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_fd, write_fd] = fds;
    let spawned = std::thread::Builder::new()
        .name("vernier-remover".into())
        .spawn(move || {
            let mut how = 0u8;
            // SAFETY: reads one byte into `how`, which outlives the call.
            while unsafe { libc::read(read_fd, (&mut how as *mut u8).cast(), 1) } != 1 {}
            let paths = REGISTERED.lock().unwrap_or_else(|e| e.into_inner()).clone();
            for p in paths {
                if p.is_dir() && !p.is_symlink() {
                    let _ = std::fs::remove_dir_all(&p);
                } else {
                    let _ = std::fs::remove_file(&p);
                }
            }
            die(libc::c_int::from(how));
        });
    if spawned.is_err() {
        return;
    }
    // SAFETY: registers a function with no arguments that only uses atomics, nanosleep and
    // `die` (async-signal-safe calls); it runs when the process exits normally.
    unsafe { libc::atexit(wait_for_remover) };
    REMOVER.store(write_fd, Ordering::SeqCst);
    for sig in ENDING_SIGNALS {
        if STOP_SIGNALS.load(Ordering::SeqCst) & (1u64 << sig) != 0 {
            continue;
        }
        // SAFETY: sigaction with a null new action only reads the current one into `old`.
        let default = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_DFL
        };
        // An ignored signal (a background job's Ctrl-C) stays ignored; another handler stays.
        if default {
            let _ = handle(sig);
        }
    }
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
