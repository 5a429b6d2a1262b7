//! Signals on Windows: one console control handler, which the system runs on a thread of its
//! own (so it may take locks and remove files). Ctrl-C and Ctrl-Break count as SIGINT; closing
//! the console, logging off and shutting down as SIGTERM. A stop signal raises the flag; any
//! other removes the registered paths and lets the system's default handler end the process.

use super::{remove_registered, second_ends_now, INTERRUPTED};
use std::sync::atomic::{AtomicU64, Ordering};
use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
};
use windows_sys::Win32::System::Threading::ExitProcess;

/// The signals that set the stop flag (bit `1 << signal`: SIGINT, SIGTERM).
static STOP_SIGNALS: AtomicU64 = AtomicU64::new(0);
/// The handler was installed, once.
static INSTALLED: std::sync::Once = std::sync::Once::new();

unsafe extern "system" fn on_control(event: u32) -> BOOL {
    let sig = match event {
        CTRL_C_EVENT | CTRL_BREAK_EVENT => libc::SIGINT,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => libc::SIGTERM,
        _ => return 0,
    };
    if STOP_SIGNALS.load(Ordering::SeqCst) & (1u64 << sig) == 0 {
        // Not ours to stop on: remove the paths, then the next handler (the system's default)
        // ends the process with its usual status.
        remove_registered();
        return 0;
    }
    if second_ends_now() {
        // A second Ctrl-C means "stop now": status 130, as on Unix.
        remove_registered();
        // SAFETY: ends the process; nothing runs after it.
        unsafe { ExitProcess(130) };
    }
    INTERRUPTED.store(true, Ordering::SeqCst);
    1
}

/// Install the handler, once; its error is the system's.
fn install() -> std::io::Result<()> {
    let mut result = Ok(());
    INSTALLED.call_once(|| {
        // SAFETY: registers a handler with the right signature, which lives for the process.
        if unsafe { SetConsoleCtrlHandler(Some(on_control), 1) } == 0 {
            result = Err(std::io::Error::last_os_error());
        }
    });
    result
}

/// Make each of `signals` (SIGINT, SIGTERM; others have no console event) set the stop flag
/// ([`super::interrupted`]) instead of ending the process; with `once`, a second signal at
/// least half a second after the first ends the process.
pub fn install_stop_handler(signals: &[libc::c_int], once: bool) -> std::io::Result<()> {
    if once {
        super::SECOND_ENDS.store(true, Ordering::SeqCst);
    }
    for &sig in signals {
        if (0..64).contains(&sig) {
            STOP_SIGNALS.fetch_or(1u64 << sig, Ordering::SeqCst);
        }
    }
    install()
}

/// Route the console events to the handler, which removes the registered paths before the
/// process ends.
pub(super) fn start_remover() {
    let _ = install();
}
