//! The two instruction sets `vernier asm` reads, as objdump prints them: x86-64 (AT&T syntax)
//! and AArch64. Their mnemonics do not overlap where it matters (`j…` and `call` against `b…`,
//! `cbz`, `tbz` and `bl`; `rdtsc` against `mrs …, cntvct_el0`), so an instruction's text says
//! which set it is from and nothing above this module asks.

use super::Insn;

/// What an instruction does to the flow of control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Falls through to the next instruction.
    Next,
    /// Always jumps (`jmp`, `b`, `br`): to the target when it is direct.
    Goto(Option<u64>),
    /// Jumps or falls through (`jne`, `b.ne`, `cbnz`, `tbz`, …).
    Branch(Option<u64>),
    /// Calls and comes back (`call`, `bl`, `blr`): to the target when it is direct.
    Call(Option<u64>),
    /// Leaves the function (`ret`) or stops the program (`ud2`, `udf`, `brk`).
    End,
}

/// The operation of an instruction's text (its first word).
pub(crate) fn op(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

/// The direct target of a branch: the last operand before objdump's `<symbol+offset>`
/// (`jne 1a60 <…>`, `b.ne 1a60 <…>`, `cbnz x1, 1a60 <…>`, `tbnz w0, #3, 1a60 <…>`).
fn target(text: &str) -> Option<u64> {
    let operands = text.split(" <").next()?;
    let last = operands.rsplit([' ', ',']).next()?;
    u64::from_str_radix(last.trim_start_matches("0x"), 16).ok()
}

/// What `text` does to the flow of control.
pub(crate) fn flow(text: &str) -> Flow {
    let o = op(text);
    match o {
        // x86-64
        "jmp" | "jmpq" => Flow::Goto(target(text)),
        _ if o.starts_with('j') => Flow::Branch(target(text)),
        _ if o.starts_with("call") => Flow::Call(target(text)),
        _ if o.starts_with("ret") || o == "ud2" => Flow::End,
        // AArch64
        "b" | "br" => Flow::Goto(target(text)),
        "cbz" | "cbnz" | "tbz" | "tbnz" => Flow::Branch(target(text)),
        _ if o.starts_with("b.") || o.starts_with("bc.") => Flow::Branch(target(text)),
        "bl" | "blr" => Flow::Call(target(text)),
        "eret" | "udf" | "brk" | "hlt" => Flow::End,
        _ => Flow::Next,
    }
}

/// A read of the clock the harnesses read directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClockRead {
    Start,
    Stop,
}

/// Whether instruction `k` reads the counter, and at which end of the timed region: `rdtsc`
/// starts and `rdtscp` stops on x86-64; on AArch64 both are `mrs …, cntvct_el0`, the start's
/// followed by an `isb` (nothing may begin before it is read) and the stop's not.
pub(crate) fn clock_read(insns: &[Insn], k: usize) -> Option<ClockRead> {
    let text = &insns[k].text;
    match op(text) {
        "rdtsc" => Some(ClockRead::Start),
        "rdtscp" => Some(ClockRead::Stop),
        "mrs" if text.contains("cntvct_el0") => {
            let isb_after = insns.get(k + 1).is_some_and(|i| op(&i.text) == "isb");
            Some(if isb_after {
                ClockRead::Start
            } else {
                ClockRead::Stop
            })
        }
        _ => None,
    }
}

/// x86-64 moves (AT&T): a copy from a register or of an immediate into a register.
const X86_MOVES: [&str; 24] = [
    "mov",
    "movl",
    "movq",
    "movw",
    "movb",
    "movabs",
    "movd",
    "movaps",
    "movapd",
    "movups",
    "movupd",
    "movdqa",
    "movdqu",
    "movss",
    "movsd",
    "vmovaps",
    "vmovapd",
    "vmovups",
    "vmovupd",
    "vmovdqa",
    "vmovdqu",
    "vmovd",
    "vmovq",
    "vmovdqa64",
];
/// x86-64 operations that zero a register when both operands are it (`xor %eax,%eax`).
const X86_ZEROING: [&str; 14] = [
    "xor", "xorl", "xorq", "sub", "subl", "subq", "pxor", "xorps", "xorpd", "vpxor", "vpxord",
    "vpxorq", "vxorps", "vxorpd",
];
/// AArch64 moves: a register or a constant into a register (`mov x1, x2`, `mov w0, #0x2a`,
/// `movk`, `fmov d0, d1`, `movi v0.2d, #0x0`).
const ARM_MOVES: [&str; 7] = ["mov", "movz", "movn", "movk", "fmov", "movi", "mvni"];

/// Whether an instruction only puts into a register a value the loop already holds: a copy
/// from another register or of an immediate (`mov %r15d,%edx`, `movapd %xmm1,%xmm0`,
/// `mov $0x2a,%eax`; `mov x1, x2`, `fmov d0, d1`, `mov w0, #0x2a`), a zeroing idiom
/// (`xor %eax,%eax`, `pxor %xmm0,%xmm0`, `eor x0, x0, x0`), or a nop. A load, a store,
/// arithmetic, a call are work.
pub fn is_register_move(text: &str) -> bool {
    // objdump's comments (`# 18250 <x>` on x86-64, `// #42` on AArch64) are not operands.
    let text = text.split(['#', '/']).next().unwrap_or("");
    let full = text;
    let mut words = text.split_whitespace();
    let Some(o) = words.next() else {
        return false;
    };
    if text.split_whitespace().any(|w| w.starts_with("nop")) {
        return true;
    }
    let operands: String = words.collect();
    let operands: Vec<&str> = operands.split(',').filter(|o| !o.is_empty()).collect();
    if full.contains('%') || full.contains('$') {
        let register = |o: &&str| o.starts_with('%') && !o.contains('(');
        let immediate = |o: &&str| o.starts_with('$');
        if X86_MOVES.contains(&o) {
            let (dst, srcs) = operands.split_last().unwrap_or((&"", &[]));
            return register(dst) && srcs.iter().all(|o| register(o) || immediate(o));
        }
        return X86_ZEROING.contains(&o)
            && operands.len() >= 2
            && operands.iter().all(register)
            && operands.iter().all(|o| *o == operands[0]);
    }
    // AArch64: the destination first; an immediate's `#` was cut with the comments, so an
    // operand list that ends early (`mov w0,`) held one.
    let memory = text.contains('[');
    if ARM_MOVES.contains(&o) {
        return !memory && !operands.is_empty();
    }
    o == "eor" && !memory && operands.len() == 3 && operands.iter().all(|r| *r == operands[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_forms_of_both_sets_are_read() {
        assert_eq!(flow("jne 1a50 <+0x10>"), Flow::Branch(Some(0x1a50)));
        assert_eq!(flow("jmp 1a41 <f+0x1>"), Flow::Goto(Some(0x1a41)));
        assert_eq!(flow("jmp *%rax"), Flow::Goto(None));
        assert_eq!(flow("call 1000 <read@plt>"), Flow::Call(Some(0x1000)));
        assert_eq!(flow("call *%rax"), Flow::Call(None));
        assert_eq!(flow("ret"), Flow::End);
        assert_eq!(flow("bt %eax,%ecx"), Flow::Next);
        assert_eq!(flow("b.ne 1a50 <f+0x10>"), Flow::Branch(Some(0x1a50)));
        assert_eq!(flow("b.cs 1a50 <f+0x10>"), Flow::Branch(Some(0x1a50)));
        assert_eq!(flow("bc.eq 1a50 <f+0x10>"), Flow::Branch(Some(0x1a50)));
        assert_eq!(flow("cbnz x1, 1a50 <f+0x10>"), Flow::Branch(Some(0x1a50)));
        assert_eq!(flow("cbz w19, 2b0c <f+0x2c>"), Flow::Branch(Some(0x2b0c)));
        assert_eq!(
            flow("tbnz w0, #3, 1a50 <f+0x10>"),
            Flow::Branch(Some(0x1a50))
        );
        assert_eq!(
            flow("tbz x2, #63, 1a60 <f+0x20>"),
            Flow::Branch(Some(0x1a60))
        );
        assert_eq!(flow("b 1a40 <f>"), Flow::Goto(Some(0x1a40)));
        assert_eq!(flow("br x16"), Flow::Goto(None));
        assert_eq!(
            flow("bl 12080 <benchmark::State::StartKeepRunning()>"),
            Flow::Call(Some(0x12080))
        );
        assert_eq!(flow("blr x3"), Flow::Call(None));
        assert_eq!(flow("udf #0"), Flow::End);
        assert_eq!(flow("bic x0, x0, x1"), Flow::Next);
        assert_eq!(flow("add x0, x0, x1"), Flow::Next);
    }

    #[test]
    fn the_generic_timers_reads_are_told_apart() {
        let insns: Vec<Insn> = ["isb", "mrs x1, cntvct_el0", "isb", "fsqrt d0, d1", "isb"]
            .iter()
            .chain(["mrs x2, cntvct_el0", "sub x1, x2, x1", "mrs x0, cntfrq_el0"].iter())
            .enumerate()
            .map(|(k, t)| Insn {
                addr: 4 * k as u64,
                text: t.to_string(),
            })
            .collect();
        let reads: Vec<_> = (0..insns.len()).map(|k| clock_read(&insns, k)).collect();
        assert_eq!(reads[1], Some(ClockRead::Start));
        assert_eq!(reads[5], Some(ClockRead::Stop));
        assert_eq!(reads.iter().flatten().count(), 2, "{reads:?}");
    }

    #[test]
    fn arm_register_moves_are_told_from_work() {
        for moves in [
            "mov x1, x2",
            "mov w0, #0x2a // #42",
            "movk x0, #0x4010, lsl #48",
            "fmov d0, d1",
            "fmov d0, #1.000000000000000000e+00",
            "movi v0.2d, #0x0",
            "eor x3, x3, x3",
            "nop",
        ] {
            assert!(is_register_move(moves), "{moves}");
        }
        for work in [
            "ldr x0, [x1]",
            "str d0, [sp, #8]",
            "add x0, x0, x1",
            "fsqrt d0, d1",
            "eor x0, x0, x1",
            "subs x1, x1, #0x1",
            "bl 1000 <f>",
            "b.ne 4cb0 <+0x70>",
        ] {
            assert!(!is_register_move(work), "{work}");
        }
    }
}
