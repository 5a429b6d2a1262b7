//! Allocation counts: where a Rust worker reads them, the counting global allocator for a suite
//! run on its own (docs/memory.md; the protocol's `mem.` tokens are in `protocol::memory`).
//!
//! Two sources, in this order:
//! - the runner's interposer, preloaded into the counting process only: it exports
//!   `vernier_alloc_counts_read` (looked up with `dlsym(RTLD_DEFAULT, …)`) and counts every
//!   `malloc`/`free` of the process, whatever language made it;
//! - [`CountingAlloc`], installed by the user in one line
//!   (`#[global_allocator] static A: vernier::CountingAlloc = vernier::CountingAlloc;`): it
//!   counts Rust's own allocations, and only while a counting sample runs. Outside them each
//!   allocation pays one relaxed load of a flag.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// Running totals (or the difference of two readings): allocation calls, bytes requested, free
/// calls, and the bytes those frees released, as requested at allocation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocCounts {
    pub allocs: u64,
    pub bytes: u64,
    pub frees: u64,
    pub freed_bytes: u64,
}

impl AllocCounts {
    /// `self - before`, field by field (totals only grow; a wrap reads as 0).
    pub fn since(&self, before: &AllocCounts) -> AllocCounts {
        AllocCounts {
            allocs: self.allocs.saturating_sub(before.allocs),
            bytes: self.bytes.saturating_sub(before.bytes),
            frees: self.frees.saturating_sub(before.frees),
            freed_bytes: self.freed_bytes.saturating_sub(before.freed_bytes),
        }
    }

    /// Bytes allocated less bytes freed (negative: more released than taken).
    pub fn net_bytes(&self) -> i128 {
        self.bytes as i128 - self.freed_bytes as i128
    }
}

/// The name of the interposer's reading function (the C ABI every harness looks up).
pub const READ_SYMBOL: &str = "vernier_alloc_counts_read";

// ---- The counting global allocator -------------------------------------------------------------

const INSTALLED: u8 = 1;
const COUNTING: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(0);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
static FREED_BYTES: AtomicU64 = AtomicU64::new(0);

/// A global allocator that counts allocations while a counting sample runs and otherwise only
/// forwards to the system allocator:
///
/// ```
/// #[global_allocator]
/// static ALLOC: vernier::CountingAlloc = vernier::CountingAlloc;
/// ```
///
/// With it, a suite run on its own (`cargo bench`) shows allocations and bytes per iteration,
/// and a worker counts Rust allocations even where the runner's interposer cannot load.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAlloc;

#[inline]
fn on_alloc(size: usize) {
    let s = STATE.load(Relaxed);
    if s & COUNTING != 0 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(size as u64, Relaxed);
    } else if s & INSTALLED == 0 {
        STATE.fetch_or(INSTALLED, Relaxed);
    }
}

#[inline]
fn on_free(size: usize) {
    if STATE.load(Relaxed) & COUNTING != 0 {
        FREES.fetch_add(1, Relaxed);
        FREED_BYTES.fetch_add(size as u64, Relaxed);
    }
}

// SAFETY: every call forwards to `System` with the caller's layout and pointer unchanged; the
// counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            on_alloc(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            on_alloc(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        on_free(layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            on_free(layout.size());
            on_alloc(new_size);
        }
        p
    }
}

// ---- Where this process reads its counts ---------------------------------------------------------

type ReadFn = unsafe extern "C" fn(*mut AllocCounts);

/// Where this process's allocation counts come from.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// The runner's interposer (every `malloc` of the process).
    Interposer(ReadFn),
    /// [`CountingAlloc`] (Rust's allocations, while counting).
    Global,
}

impl Source {
    /// The interposer when it is loaded, else [`CountingAlloc`] when installed, else why
    /// neither counts.
    pub fn detect() -> Result<Source, String> {
        if let Some(f) = crate::os::symbols::lookup(c"vernier_alloc_counts_read") {
            // SAFETY: the interposer exports this symbol with exactly this C signature.
            return Ok(Source::Interposer(unsafe {
                std::mem::transmute::<*mut std::ffi::c_void, ReadFn>(f)
            }));
        }
        if STATE.load(Relaxed) & INSTALLED != 0 {
            return Ok(Source::Global);
        }
        Err(format!(
            "no allocation counter in this process: the runner's interposer is not loaded \
             ({READ_SYMBOL} not found) and no vernier::CountingAlloc is installed (add \
             `#[global_allocator] static ALLOC: vernier::CountingAlloc = vernier::CountingAlloc;`)"
        ))
    }

    /// Turn counting on (the global allocator counts only while on; the interposer always).
    pub fn start(&self) {
        if let Source::Global = self {
            STATE.fetch_or(COUNTING, Relaxed);
        }
    }

    /// Turn counting off again.
    pub fn stop(&self) {
        if let Source::Global = self {
            STATE.fetch_and(!COUNTING, Relaxed);
        }
    }

    /// The totals now.
    #[inline]
    pub fn read(&self) -> AllocCounts {
        match self {
            Source::Interposer(f) => {
                let mut c = AllocCounts::default();
                // SAFETY: `c` is a valid, writable struct of the C layout the function fills.
                unsafe { f(&mut c) };
                c
            }
            Source::Global => AllocCounts {
                allocs: ALLOCS.load(Relaxed),
                bytes: BYTES.load(Relaxed),
                frees: FREES.load(Relaxed),
                freed_bytes: FREED_BYTES.load(Relaxed),
            },
        }
    }
}

/// Allocations per iteration of both sides of a comparison (`memory` in the comparison file).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemoryChange {
    pub old_allocs_per_iter: f64,
    pub new_allocs_per_iter: f64,
    pub old_bytes_per_iter: f64,
    pub new_bytes_per_iter: f64,
}

/// What a `run … memory=1` reply says about memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryReply {
    /// One reading per sample (the counts of that sample's iterations).
    Counted(Vec<AllocCounts>),
    /// The worker cannot count, and why.
    Unavailable(String),
}
