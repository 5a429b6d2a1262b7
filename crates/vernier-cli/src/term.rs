//! Terminal concerns: colour decisions, the progress line, Ctrl-C.

use std::io::Write;
use std::sync::atomic::Ordering;
use vernier::measure::{Progress, INTERRUPTED};
use vernier::report::Style;

/// Colour on a terminal unless `NO_COLOR` is set (https://no-color.org).
pub fn style() -> Style {
    Style::for_stdout()
}

/// A one-line progress indicator on stderr, shown only when stderr is a terminal.
pub struct ProgressLine {
    enabled: bool,
    shown: bool,
}

impl ProgressLine {
    pub fn new() -> ProgressLine {
        ProgressLine {
            enabled: vernier::report::is_terminal(2),
            shown: false,
        }
    }

    pub fn update(&mut self, name: &str, p: &Progress) {
        if !self.enabled {
            return;
        }
        let frac = (p.elapsed_ns as f64 / p.budget_ns.max(1) as f64).min(1.0);
        let width = 20;
        let filled = (frac * width as f64) as usize;
        let ci = p
            .rel_ci
            .map(|c| format!("±{:.2}%", c * 100.0))
            .unwrap_or_else(|| "warming up".into());
        eprint!(
            "\r\x1b[2K  {name:<28} [{}{}] {:>7} samples  {ci}",
            "#".repeat(filled),
            " ".repeat(width - filled),
            p.samples
        );
        let _ = std::io::stderr().flush();
        self.shown = true;
    }

    /// A line of text in place of the bar (a step that is not sampling).
    pub fn status(&mut self, text: &str) {
        if self.enabled {
            eprint!("\r\x1b[2K  {text}");
            let _ = std::io::stderr().flush();
            self.shown = true;
        }
    }

    pub fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.shown = false;
        }
    }
}

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// First Ctrl-C: stop measuring at the next batch boundary and keep everything measured.
/// A second Ctrl-C kills the process (the handler resets itself).
pub fn install_ctrlc() {
    // Cannot fail: SIGINT is a valid signal and the struct is fully initialised.
    let _ = install_stop_handler(&[libc::SIGINT], true);
}

/// Make each of `signals` set the stop flag ([`interrupted`]) instead of ending the process;
/// with `once`, the handler resets itself so that a second signal ends the process as usual.
pub fn install_stop_handler(signals: &[libc::c_int], once: bool) -> std::io::Result<()> {
    for &sig in signals {
        // SAFETY: the handler only stores to an atomic (async-signal-safe); sigaction is given
        // a fully initialised struct (empty mask).
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigint as *const () as usize;
            sa.sa_flags = if once { libc::SA_RESETHAND } else { 0 };
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

/// `; result written to FILE`, or nothing without `--json`: the end of a run's closing line.
pub fn written_to(json: Option<&std::path::Path>) -> String {
    json.map(|p| format!("; result written to {}", p.display()))
        .unwrap_or_default()
}

/// After Ctrl-C: say that every finished benchmark is kept, and give the exit status (130).
pub fn interrupted_exit() -> Option<i32> {
    interrupted().then(|| {
        eprintln!("vernier: interrupted; every benchmark finished before Ctrl-C is kept");
        130
    })
}
