//! The allocation-counting interposer: a shared library the runner preloads (`LD_PRELOAD`) into
//! the one worker process that counts a benchmark's allocations, never into a timed one
//! (docs/memory.md). It defines `malloc`, `calloc`, `realloc`, `reallocarray`, `free`,
//! `posix_memalign`, `aligned_alloc`, `memalign`, `valloc` and `pvalloc` (C++'s `operator
//! new`/`delete` reach them), forwards each to the next definition (`dlsym(RTLD_NEXT, …)`, the
//! C library's), and keeps four running totals for the whole process, exported as
//!
//! ```c
//! struct vernier_alloc_counts { uint64_t allocs, bytes, frees, freed_bytes; };
//! void vernier_alloc_counts_read(struct vernier_alloc_counts *out);
//! ```
//!
//! which every harness looks up at run time. `freed_bytes` is in requested bytes: a table from
//! pointer to requested size (open addressing in pages of its own, under a spin lock) gives
//! each `free` the size its allocation asked for. `realloc` of a live block counts as one free
//! of the old size and one allocation of the new.
//!
//! It is built by vernier-cli's build script with the same `rustc` as the command (no C
//! compiler needed), embedded in the command and written to the cache directory at run time.
//! `#![no_std]`: nothing here may allocate. Before the next `malloc` is known, `dlsym`'s own
//! requests are served from a static bootstrap buffer, never freed.

#![no_std]
#![allow(clippy::missing_safety_doc)]

use core::ffi::{c_char, c_int, c_void};
use core::ptr::null_mut;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: abort has no preconditions.
    unsafe { abort() }
}

extern "C" {
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64)
        -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
    fn abort() -> !;
}

const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
const PROT_READ_WRITE: c_int = 0x1 | 0x2;
const MAP_PRIVATE_ANONYMOUS: c_int = 0x02 | 0x20;
const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
const ENOMEM: c_int = 12;

/// The four totals.
#[repr(C)]
pub struct VernierAllocCounts {
    pub allocs: u64,
    pub bytes: u64,
    pub frees: u64,
    pub freed_bytes: u64,
}

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
static FREED_BYTES: AtomicU64 = AtomicU64::new(0);

/// Totals since the process started, all threads.
#[no_mangle]
pub unsafe extern "C" fn vernier_alloc_counts_read(out: *mut VernierAllocCounts) {
    if out.is_null() {
        return;
    }
    *out = VernierAllocCounts {
        allocs: ALLOCS.load(Relaxed),
        bytes: BYTES.load(Relaxed),
        frees: FREES.load(Relaxed),
        freed_bytes: FREED_BYTES.load(Relaxed),
    };
}

// ---- The next definitions --------------------------------------------------------------------

type MallocFn = unsafe extern "C" fn(usize) -> *mut c_void;
type CallocFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
type ReallocArrayFn = unsafe extern "C" fn(*mut c_void, usize, usize) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type PosixMemalignFn = unsafe extern "C" fn(*mut *mut c_void, usize, usize) -> c_int;
type AlignFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;

struct Next {
    malloc: AtomicUsize,
    calloc: AtomicUsize,
    realloc: AtomicUsize,
    reallocarray: AtomicUsize,
    free: AtomicUsize,
    posix_memalign: AtomicUsize,
    aligned_alloc: AtomicUsize,
    memalign: AtomicUsize,
    valloc: AtomicUsize,
    pvalloc: AtomicUsize,
}

static NEXT: Next = Next {
    malloc: AtomicUsize::new(0),
    calloc: AtomicUsize::new(0),
    realloc: AtomicUsize::new(0),
    reallocarray: AtomicUsize::new(0),
    free: AtomicUsize::new(0),
    posix_memalign: AtomicUsize::new(0),
    aligned_alloc: AtomicUsize::new(0),
    memalign: AtomicUsize::new(0),
    valloc: AtomicUsize::new(0),
    pvalloc: AtomicUsize::new(0),
};

/// 0: not resolved, 1: resolving (requests go to the bootstrap buffer), 2: resolved.
static STATE: AtomicUsize = AtomicUsize::new(0);

unsafe fn resolve() {
    if STATE.load(Acquire) == 2 {
        return;
    }
    if STATE
        .compare_exchange(0, 1, AcqRel, Acquire)
        .is_err()
    {
        // Another thread resolves: wait for it (its dlsym requests use the bootstrap buffer).
        while STATE.load(Acquire) != 2 {
            core::hint::spin_loop();
        }
        return;
    }
    let get = |name: &[u8]| dlsym(RTLD_NEXT, name.as_ptr().cast()) as usize;
    NEXT.malloc.store(get(b"malloc\0"), Relaxed);
    NEXT.calloc.store(get(b"calloc\0"), Relaxed);
    NEXT.realloc.store(get(b"realloc\0"), Relaxed);
    NEXT.reallocarray.store(get(b"reallocarray\0"), Relaxed);
    NEXT.free.store(get(b"free\0"), Relaxed);
    NEXT.posix_memalign.store(get(b"posix_memalign\0"), Relaxed);
    NEXT.aligned_alloc.store(get(b"aligned_alloc\0"), Relaxed);
    NEXT.memalign.store(get(b"memalign\0"), Relaxed);
    NEXT.valloc.store(get(b"valloc\0"), Relaxed);
    NEXT.pvalloc.store(get(b"pvalloc\0"), Relaxed);
    if NEXT.malloc.load(Relaxed) == 0 || NEXT.free.load(Relaxed) == 0 {
        abort();
    }
    STATE.store(2, Release);
}

/// The next definition of one function, or `None` while resolving (or when there is none).
macro_rules! next {
    ($field:ident, $ty:ty) => {{
        resolve_unless_resolving();
        let f = NEXT.$field.load(Relaxed);
        if f == 0 {
            None
        } else {
            // SAFETY: dlsym returned the address of this C function, of this signature.
            Some(core::mem::transmute::<usize, $ty>(f))
        }
    }};
}

/// Resolve, except on the thread that is resolving (its `dlsym` asked for memory).
unsafe fn resolve_unless_resolving() {
    if STATE.load(Acquire) == 0 {
        resolve();
    }
}

// ---- Bootstrap buffer (dlsym's own requests) --------------------------------------------------

const BOOT_SIZE: usize = 64 * 1024;
#[repr(C, align(16))]
struct Boot([u8; BOOT_SIZE]);
static mut BOOT: Boot = Boot([0; BOOT_SIZE]);
static BOOT_USED: AtomicUsize = AtomicUsize::new(0);

fn boot_base() -> usize {
    // Only the address is taken.
    core::ptr::addr_of!(BOOT) as usize
}

fn in_boot(p: *mut c_void) -> bool {
    let a = p as usize;
    a >= boot_base() && a < boot_base() + BOOT_SIZE
}

/// 16 bytes of header (the size) then the block, zeroed (the buffer is never reused).
fn boot_alloc(n: usize) -> *mut c_void {
    let need = (n.saturating_add(16 + 15)) & !15;
    let at = BOOT_USED.fetch_add(need, Relaxed);
    if at.saturating_add(need) > BOOT_SIZE {
        return null_mut();
    }
    let p = (boot_base() + at) as *mut u8;
    // SAFETY: [at, at + need) lies in BOOT and belongs to this call alone.
    unsafe {
        (p as *mut usize).write(n);
        p.add(16).cast()
    }
}

fn boot_size(p: *mut c_void) -> usize {
    // SAFETY: `p` came from boot_alloc, which wrote its size 16 bytes before it.
    unsafe { ((p as *mut u8).sub(16) as *mut usize).read() }
}

// ---- Pointer → requested size ----------------------------------------------------------------

struct Table {
    slots: *mut [usize; 2],
    cap: usize,
    len: usize,
}

static LOCK: AtomicBool = AtomicBool::new(false);
static mut TABLE: Table = Table {
    slots: null_mut(),
    cap: 0,
    len: 0,
};

struct Guard;
impl Guard {
    fn lock() -> Guard {
        while LOCK
            .compare_exchange_weak(false, true, Acquire, Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        Guard
    }
}
impl Drop for Guard {
    fn drop(&mut self) {
        LOCK.store(false, Release);
    }
}

fn slot_of(key: usize, cap: usize) -> usize {
    ((key >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16) & (cap - 1)
}

unsafe fn map_slots(cap: usize) -> *mut [usize; 2] {
    let p = mmap(null_mut(), cap * 16, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0);
    if p == MAP_FAILED {
        null_mut()
    } else {
        p.cast()
    }
}

impl Table {
    /// Room for one more entry (the table grows at three quarters full); false when no memory.
    unsafe fn reserve(&mut self) -> bool {
        if self.slots.is_null() {
            let cap = 1 << 16;
            self.slots = map_slots(cap);
            self.cap = cap;
            return !self.slots.is_null();
        }
        if (self.len + 1) * 4 <= self.cap * 3 {
            return true;
        }
        let (old, old_cap) = (self.slots, self.cap);
        let cap = old_cap * 2;
        let slots = map_slots(cap);
        if slots.is_null() {
            return false;
        }
        self.slots = slots;
        self.cap = cap;
        self.len = 0;
        for i in 0..old_cap {
            let [k, v] = *old.add(i);
            if k != 0 {
                self.insert(k, v);
            }
        }
        munmap(old.cast(), old_cap * 16);
        true
    }

    unsafe fn insert(&mut self, key: usize, size: usize) {
        if !self.reserve() {
            return;
        }
        let mut i = slot_of(key, self.cap);
        loop {
            let s = &mut *self.slots.add(i);
            if s[0] == 0 {
                *s = [key, size];
                self.len += 1;
                return;
            }
            if s[0] == key {
                s[1] = size;
                return;
            }
            i = (i + 1) & (self.cap - 1);
        }
    }

    /// The requested size of `key`, removed from the table (0 when unknown).
    unsafe fn remove(&mut self, key: usize) -> usize {
        if self.slots.is_null() {
            return 0;
        }
        let mask = self.cap - 1;
        let mut i = slot_of(key, self.cap);
        loop {
            let s = *self.slots.add(i);
            if s[0] == 0 {
                return 0;
            }
            if s[0] == key {
                break;
            }
            i = (i + 1) & mask;
        }
        let size = (*self.slots.add(i))[1];
        // Backward-shift deletion: later entries of the run move into the hole when their home
        // slot does not lie between the hole and them.
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let s = *self.slots.add(j);
            if s[0] == 0 {
                break;
            }
            let home = slot_of(s[0], self.cap);
            let between = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !between {
                *self.slots.add(hole) = s;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        *self.slots.add(hole) = [0, 0];
        self.len -= 1;
        size
    }
}

unsafe fn counted_alloc(p: *mut c_void, n: usize) -> *mut c_void {
    if !p.is_null() {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(n as u64, Relaxed);
        let _g = Guard::lock();
        (*core::ptr::addr_of_mut!(TABLE)).insert(p as usize, n);
    }
    p
}

unsafe fn counted_free(p: *mut c_void) {
    let size = {
        let _g = Guard::lock();
        (*core::ptr::addr_of_mut!(TABLE)).remove(p as usize)
    };
    FREES.fetch_add(1, Relaxed);
    FREED_BYTES.fetch_add(size as u64, Relaxed);
}

// ---- The interposed functions ----------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn malloc(n: usize) -> *mut c_void {
    match next!(malloc, MallocFn) {
        Some(f) => counted_alloc(f(n), n),
        None => boot_alloc(n),
    }
}

#[no_mangle]
pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    match next!(calloc, CallocFn) {
        Some(f) => counted_alloc(f(count, size), count.wrapping_mul(size)),
        None => match count.checked_mul(size) {
            Some(n) => boot_alloc(n),
            None => null_mut(),
        },
    }
}

#[no_mangle]
pub unsafe extern "C" fn free(p: *mut c_void) {
    if p.is_null() || in_boot(p) {
        return;
    }
    if let Some(f) = next!(free, FreeFn) {
        counted_free(p);
        f(p);
    }
}

/// `realloc` and `reallocarray` after the call: the old block freed, the new one allocated.
unsafe fn counted_realloc(old: *mut c_void, q: *mut c_void, n: usize) -> *mut c_void {
    if !old.is_null() && (!q.is_null() || n == 0) {
        counted_free(old);
    }
    counted_alloc(q, n)
}

/// A block of the bootstrap buffer moved to the next allocator.
unsafe fn out_of_boot(p: *mut c_void, n: usize) -> *mut c_void {
    let q = malloc(n);
    if !q.is_null() {
        core::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, boot_size(p).min(n));
    }
    q
}

#[no_mangle]
pub unsafe extern "C" fn realloc(p: *mut c_void, n: usize) -> *mut c_void {
    if in_boot(p) {
        return out_of_boot(p, n);
    }
    match next!(realloc, ReallocFn) {
        Some(f) => counted_realloc(p, f(p, n), n),
        None if p.is_null() => boot_alloc(n),
        None => null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, count: usize, size: usize) -> *mut c_void {
    let Some(n) = count.checked_mul(size) else {
        return realloc_overflow();
    };
    if in_boot(p) {
        return out_of_boot(p, n);
    }
    match next!(reallocarray, ReallocArrayFn) {
        Some(f) => counted_realloc(p, f(p, count, size), n),
        None => realloc(p, n),
    }
}

unsafe fn realloc_overflow() -> *mut c_void {
    extern "C" {
        fn __errno_location() -> *mut c_int;
    }
    *__errno_location() = ENOMEM;
    null_mut()
}

#[no_mangle]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, n: usize) -> c_int {
    match next!(posix_memalign, PosixMemalignFn) {
        Some(f) => {
            let r = f(out, align, n);
            if r == 0 {
                counted_alloc(*out, n);
            }
            r
        }
        None => ENOMEM,
    }
}

#[no_mangle]
pub unsafe extern "C" fn aligned_alloc(align: usize, n: usize) -> *mut c_void {
    match next!(aligned_alloc, AlignFn) {
        Some(f) => counted_alloc(f(align, n), n),
        None => null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn memalign(align: usize, n: usize) -> *mut c_void {
    match next!(memalign, AlignFn) {
        Some(f) => counted_alloc(f(align, n), n),
        None => null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn valloc(n: usize) -> *mut c_void {
    match next!(valloc, MallocFn) {
        Some(f) => counted_alloc(f(n), n),
        None => null_mut(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn pvalloc(n: usize) -> *mut c_void {
    match next!(pvalloc, MallocFn) {
        Some(f) => counted_alloc(f(n), n),
        None => null_mut(),
    }
}
