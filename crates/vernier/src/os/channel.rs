//! The worker's end of its channel to the runner: the two pipe ends the runner left open in
//! this process, named in `VERNIER_FDS` as "R,W" (file descriptors on Unix, inherited handle
//! values on Windows).

use std::fs::File;

/// The two files of "R,W", or `None` when it is not two numbers.
///
/// # Safety
/// The runner must have passed these descriptors (handles) to this process, and nothing else
/// in the process may own them: each `File` takes sole ownership of one. Call it once.
pub unsafe fn open(fds: &str) -> Option<(File, File)> {
    let (r, w) = fds.split_once(',')?;
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        let (r, w) = (r.parse::<i32>().ok()?, w.parse::<i32>().ok()?);
        // SAFETY: the caller's contract.
        Some(unsafe { (File::from_raw_fd(r), File::from_raw_fd(w)) })
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::{FromRawHandle, RawHandle};
        let (r, w) = (r.parse::<usize>().ok()?, w.parse::<usize>().ok()?);
        // SAFETY: the caller's contract.
        Some(unsafe {
            (
                File::from_raw_handle(r as RawHandle),
                File::from_raw_handle(w as RawHandle),
            )
        })
    }
}
