//! Files: a new file created exclusively, never through a planted symbolic link; 64 bits from
//! the system's random source for unguessable names; a read at an offset that leaves the
//! file's position alone.

use std::fs::{File, OpenOptions};
use std::path::Path;

/// Create `path` for writing, exclusively: an existing file, directory or symbolic link of that
/// name is an error (`AlreadyExists`), never opened. `O_CREAT | O_EXCL | O_NOFOLLOW` on Unix,
/// `CREATE_NEW` on Windows (which fails on any existing name, a link included).
pub fn create_new(path: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW);
    }
    o.open(path)
}

/// 64 bits from the system's random source: `getrandom` on Linux, `getentropy` on macOS,
/// `BCryptGenRandom` (the system's preferred generator) on Windows; `None` when it fails.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn random_u64() -> Option<u64> {
    let mut v = 0u64;
    // SAFETY: getrandom writes at most 8 bytes into `v`, which outlives the call.
    let n = unsafe { libc::getrandom((&mut v as *mut u64).cast(), 8, libc::GRND_NONBLOCK) };
    (n == 8).then_some(v)
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
pub fn random_u64() -> Option<u64> {
    let mut v = 0u64;
    // SAFETY: getentropy writes exactly 8 bytes (at most 256 allowed) into `v`.
    let rc = unsafe { libc::getentropy((&mut v as *mut u64).cast(), 8) };
    (rc == 0).then_some(v)
}

#[cfg(windows)]
pub fn random_u64() -> Option<u64> {
    use windows_sys::Win32::Security::Cryptography::{
        BCryptGenRandom, BCRYPT_USE_SYSTEM_PREFERRED_RNG,
    };
    let mut v = 0u64;
    // SAFETY: no algorithm handle with the system-preferred flag; writes 8 bytes into `v`.
    let status = unsafe {
        BCryptGenRandom(
            std::ptr::null_mut(),
            (&mut v as *mut u64).cast(),
            8,
            BCRYPT_USE_SYSTEM_PREFERRED_RNG,
        )
    };
    (status == 0).then_some(v)
}

/// Read into `buf` from `offset` of `f`, without moving its position (Unix `pread`; Windows
/// moves it, which no caller relies on).
pub fn read_at(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(f, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(f, buf, offset)
    }
}
