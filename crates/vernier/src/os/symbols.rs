//! A symbol another library loaded into the process exports (the runner's allocation
//! interposer, preloaded with `LD_PRELOAD` or `DYLD_INSERT_LIBRARIES`). Windows has no
//! preloading: nothing is found there.

/// The address of `name` in the process's global scope, if some library exports it.
#[cfg(unix)]
pub fn lookup(name: &std::ffi::CStr) -> Option<*mut std::ffi::c_void> {
    // SAFETY: dlsym with a NUL-terminated name only looks the symbol up.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!f.is_null()).then_some(f.cast())
}

#[cfg(windows)]
pub fn lookup(_name: &std::ffi::CStr) -> Option<*mut std::ffi::c_void> {
    None
}
