//! Whether a standard stream (0, 1, 2) is a terminal, and the width of the one it is.

/// Whether the descriptor is a terminal.
#[cfg(unix)]
pub fn is_terminal(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

/// The width of the terminal on descriptor `fd` (TIOCGWINSZ), if it is one.
#[cfg(unix)]
pub fn width(fd: i32) -> Option<usize> {
    if !is_terminal(fd) {
        return None;
    }
    // SAFETY: a zeroed winsize is a valid value; TIOCGWINSZ only writes into the struct we own.
    let (rc, ws) = unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        let rc = libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws);
        (rc, ws)
    };
    (rc == 0 && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// Whether standard stream `fd` (0, 1 or 2) is a console.
#[cfg(windows)]
pub fn is_terminal(fd: i32) -> bool {
    use std::io::IsTerminal;
    match fd {
        0 => std::io::stdin().is_terminal(),
        1 => std::io::stdout().is_terminal(),
        2 => std::io::stderr().is_terminal(),
        _ => false,
    }
}

/// The width of the console window standard stream `fd` (1 or 2) writes to.
#[cfg(windows)]
pub fn width(fd: i32) -> Option<usize> {
    use windows_sys::Win32::System::Console::{
        GetConsoleScreenBufferInfo, GetStdHandle, CONSOLE_SCREEN_BUFFER_INFO, STD_ERROR_HANDLE,
        STD_OUTPUT_HANDLE,
    };
    let which = match fd {
        1 => STD_OUTPUT_HANDLE,
        2 => STD_ERROR_HANDLE,
        _ => return None,
    };
    if !is_terminal(fd) {
        return None;
    }
    // SAFETY: GetStdHandle has no preconditions; a zeroed info struct is valid and the call
    // only writes into it.
    let (ok, info) = unsafe {
        let mut info: CONSOLE_SCREEN_BUFFER_INFO = std::mem::zeroed();
        let ok = GetConsoleScreenBufferInfo(GetStdHandle(which), &mut info) != 0;
        (ok, info)
    };
    let cols = i32::from(info.srWindow.Right) - i32::from(info.srWindow.Left) + 1;
    (ok && cols > 0).then_some(cols as usize)
}
