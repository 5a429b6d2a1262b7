//! Signals on Unix: `sigaction` routes them to an async-signal-safe handler; the paths to
//! remove are removed by a thread that waits on a pipe the handler writes to.

use super::{remove_registered, second_ends_now, INTERRUPTED};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

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

/// The signals that end the process, when not stop signals, after the registered paths are
/// removed (their default action, kept: the exit status says which signal it was).
const ENDING_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe throughout: clock_gettime, atomics, write, signal, raise, _exit.
    if STOP_SIGNALS.load(Ordering::SeqCst) & (1u64 << sig) == 0 {
        end_process(sig);
        return;
    }
    if second_ends_now() {
        // A second Ctrl-C means "stop now": status 130.
        end_process(0);
        return;
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

/// Make each of `signals` set the stop flag ([`super::interrupted`]) instead of ending the
/// process; with `once`, a second signal at least half a second after the first ends the
/// process.
pub fn install_stop_handler(signals: &[libc::c_int], once: bool) -> std::io::Result<()> {
    if once {
        super::SECOND_ENDS.store(true, Ordering::SeqCst);
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

/// A pipe whose ends are closed in children (`pipe2(O_CLOEXEC)` where it exists; `pipe` and
/// `FD_CLOEXEC` on macOS, before any child can be started from this thread).
fn cloexec_pipe() -> Option<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    #[cfg(not(target_os = "macos"))]
    // SAFETY: fds is a valid array of two ints; O_CLOEXEC keeps them out of children.
    let ok = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
    #[cfg(target_os = "macos")]
    // SAFETY: fds is a valid array of two ints; fcntl only sets a flag on each.
    let ok = unsafe {
        libc::pipe(fds.as_mut_ptr()) == 0
            && fds
                .iter()
                .all(|&fd| libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0)
    };
    ok.then_some(fds)
}

/// The removing thread, waiting on a pipe the signal handler writes to; then the signals
/// that would end the process without it are routed to the handler. Without a pipe or a
/// thread, nothing changes (the paths are left where a signal ends the process).
pub(super) fn start_remover() {
    let Some([read_fd, write_fd]) = cloexec_pipe() else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("vernier-remover".into())
        .spawn(move || {
            let mut how = 0u8;
            // SAFETY: reads one byte into `how`, which outlives the call.
            while unsafe { libc::read(read_fd, (&mut how as *mut u8).cast(), 1) } != 1 {}
            remove_registered();
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
