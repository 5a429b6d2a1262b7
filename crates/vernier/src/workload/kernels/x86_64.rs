//! The probe's chains in x86-64 assembly: `add reg, reg`, one cycle each, the added value in a
//! register (recent cores fold chains of add-immediate at register renaming).

/// `n` dependent additions of one to `start`: blocks of eight, then the rest one by one.
#[inline(always)]
pub(super) fn add_chain(start: u64, n: u64) -> u64 {
    let mut x: u64 = start;
    // Blocks of eight additions, then the rest one by one; a count of zero skips its loop.
    // SAFETY: register-only arithmetic on the named operands; no memory, no stack.
    unsafe {
        core::arch::asm!(
            "test {b}, {b}",
            "jz 3f",
            "2:",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "dec {b}",
            "jnz 2b",
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
            "test {r}, {r}",
            "jz 3f",
            "2:",
            "add {x}, {one}",
            "dec {r}",
            "jnz 2b",
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
            "test {k}, {k}",
            "jz 3f",
            "2:",
            "add {a}, {one}", "add {b}, {one}", "add {c}, {one}", "add {d}, {one}",
            "add {e}, {one}", "add {f}, {one}", "add {g}, {one}", "add {h}, {one}",
            "dec {k}",
            "jnz 2b",
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
