//! The probe's chains in AArch64 assembly: `add xd, xd, xm`, one cycle each on every Arm core,
//! the added value in a register, not an immediate (an add-immediate chain is what a core may
//! fold at register renaming, as recent x86 cores do); `subs` and `b.ne` count the rounds.

/// `n` dependent additions of one to `start`: blocks of eight, then the rest one by one.
#[inline(always)]
pub(super) fn add_chain(start: u64, n: u64) -> u64 {
    let mut x: u64 = start;
    // Blocks of eight additions, then the rest one by one; a count of zero skips its loop.
    // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
    unsafe {
        core::arch::asm!(
            "cbz {b}, 3f",
            "2:",
            "add {x}, {x}, {one}", "add {x}, {x}, {one}",
            "add {x}, {x}, {one}", "add {x}, {x}, {one}",
            "add {x}, {x}, {one}", "add {x}, {x}, {one}",
            "add {x}, {x}, {one}", "add {x}, {x}, {one}",
            "subs {b}, {b}, #1",
            "b.ne 2b",
            "3:",
            x = inout(reg) x,
            b = inout(reg) n / 8 => _,
            one = in(reg) 1u64,
            options(nomem, nostack),
        );
    }
    add_ones(x, n % 8)
}

/// The chains' remainder after their rounds of eight: `n` dependent one-cycle additions to
/// `x` (inline assembly, the added value in a register), one at a time.
#[inline(always)]
fn add_ones(mut x: u64, n: u64) -> u64 {
    // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
    unsafe {
        core::arch::asm!(
            "cbz {r}, 3f",
            "2:",
            "add {x}, {x}, {one}",
            "subs {r}, {r}, #1",
            "b.ne 2b",
            "3:",
            x = inout(reg) x,
            r = inout(reg) n => _,
            one = in(reg) 1u64,
            options(nomem, nostack),
        );
    }
    x
}

/// `n` additions over eight independent chains (`n / 8` rounds, the rest on the first);
/// returns the sum of the chains.
#[inline(always)]
pub(super) fn wide_add_chain(start: u64, n: u64) -> u64 {
    let (mut a, mut b, mut c, mut d) = (start, start, start, start);
    let (mut e, mut f, mut g, mut h) = (start, start, start, start);
    // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
    unsafe {
        core::arch::asm!(
            "cbz {k}, 3f",
            "2:",
            "add {a}, {a}, {one}", "add {b}, {b}, {one}",
            "add {c}, {c}, {one}", "add {d}, {d}, {one}",
            "add {e}, {e}, {one}", "add {f}, {f}, {one}",
            "add {g}, {g}, {one}", "add {h}, {h}, {one}",
            "subs {k}, {k}, #1",
            "b.ne 2b",
            "3:",
            a = inout(reg) a, b = inout(reg) b, c = inout(reg) c, d = inout(reg) d,
            e = inout(reg) e, f = inout(reg) f, g = inout(reg) g, h = inout(reg) h,
            k = inout(reg) n / 8 => _,
            one = in(reg) 1u64,
            options(nomem, nostack),
        );
    }
    add_ones(a, n % 8)
        .wrapping_add(b)
        .wrapping_add(c)
        .wrapping_add(d)
        .wrapping_add(e)
        .wrapping_add(f)
        .wrapping_add(g)
        .wrapping_add(h)
}
