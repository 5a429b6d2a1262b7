//! Fresh memory straight from the system, in small pages, each faulting once when first
//! touched (an allocation could reuse pages the allocator already holds): what tests of page
//! fault counts touch.

/// A private anonymous mapping (`mmap`, without huge pages on Linux; `VirtualAlloc` on
/// Windows), released when dropped.
pub struct Fresh {
    ptr: *mut u8,
    len: usize,
}

impl Fresh {
    /// `len` bytes of fresh zeroed memory; `None` when the system refuses.
    pub fn new(len: usize) -> Option<Fresh> {
        let ptr = map(len)?;
        Some(Fresh { ptr, len })
    }

    /// The first byte; `len` bytes from it are this mapping's.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        unmap(self.ptr, self.len);
    }
}

#[cfg(unix)]
fn map(len: usize) -> Option<*mut u8> {
    // SAFETY: an anonymous private mapping, no file, no fixed address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: the range is the mapping just created.
    unsafe {
        libc::madvise(p, len, libc::MADV_NOHUGEPAGE)
    };
    Some(p.cast())
}

#[cfg(unix)]
fn unmap(p: *mut u8, len: usize) {
    // SAFETY: unmaps exactly the mapping `map` created.
    unsafe { libc::munmap(p.cast(), len) };
}

#[cfg(windows)]
fn map(len: usize) -> Option<*mut u8> {
    use windows_sys::Win32::System::Memory::{
        VirtualAlloc, MEM_COMMIT, MEM_RESERVE, PAGE_READWRITE,
    };
    // SAFETY: a new region at an address of the system's choosing.
    let p = unsafe {
        VirtualAlloc(
            std::ptr::null(),
            len,
            MEM_RESERVE | MEM_COMMIT,
            PAGE_READWRITE,
        )
    };
    (!p.is_null()).then_some(p.cast())
}

#[cfg(windows)]
fn unmap(p: *mut u8, _len: usize) {
    use windows_sys::Win32::System::Memory::{VirtualFree, MEM_RELEASE};
    // SAFETY: releases exactly the region `map` reserved (size 0 with MEM_RELEASE).
    unsafe { VirtualFree(p.cast(), 0, MEM_RELEASE) };
}
