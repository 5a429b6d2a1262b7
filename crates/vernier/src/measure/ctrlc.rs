//! Ctrl-C while measuring: the first stops the measuring at the next batch boundary
//! ([`INTERRUPTED`]), keeping every sample taken; a second, half a second or more later, ends
//! the process (status 130). Installed by the `vernier` commands and by a standalone suite
//! (`cargo bench`, a benchmark program run by hand); a worker leaves Ctrl-C to its runner.

use super::INTERRUPTED;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// With `once`: when the first stop signal arrived (CLOCK_MONOTONIC ns; 0: none yet).
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);
static SECOND_ENDS: AtomicBool = AtomicBool::new(false);
/// A second signal this long after the first ends the process. Sooner, it is the same Ctrl-C
/// reaching the process twice: `timeout -s INT` signals both the process and its group, and
/// a process killed by that second copy lost everything it had measured.
const SECOND_SIGNAL_AFTER_NS: u64 = 500_000_000;

extern "C" fn on_sigint(_: libc::c_int) {
    // Async-signal-safe throughout: clock_gettime, atomics, _exit.
    if SECOND_ENDS.load(Ordering::SeqCst) {
        let now = crate::timer::monotonic_ns();
        match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {}
            Err(first) if now.saturating_sub(first) >= SECOND_SIGNAL_AFTER_NS => {
                // SAFETY: _exit is async-signal-safe; a second Ctrl-C means "stop now".
                unsafe { libc::_exit(130) }
            }
            Err(_) => {}
        }
    }
    INTERRUPTED.store(true, Ordering::SeqCst);
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
        // SAFETY: the handler only reads the clock, uses atomics and may _exit (all
        // async-signal-safe); sigaction is given a fully initialised struct (empty mask).
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigint as *const () as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
