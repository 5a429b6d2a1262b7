//! A benchmark's loop function as text: its disassembly, the loop of the iterations marked
//! (what `vernier asm` and `run -v` print).

use super::{disassemble, Disassembly, Loop, LoopFunction};
use anyhow::Result;
use std::path::Path;

/// Instructions shown before and after the loop of the iterations in `run -v`.
const COMPACT_CONTEXT: usize = 6;

pub(crate) fn render(
    name: &str,
    f: &LoopFunction,
    objdump: &Path,
    compact: bool,
) -> Result<String> {
    Ok(show(name, f, &disassemble(f, objdump)?, compact))
}

/// The disassembly as text, the iterations' loop marked (`compact`: only it and a few
/// instructions around it).
pub(super) fn show(name: &str, f: &LoopFunction, d: &Disassembly, compact: bool) -> String {
    let (insns, loops, timed) = (&d.insns, &d.loops, d.timed);
    let mut s = format!(
        "── {name}\n   {} ({:#x}, {} bytes) in {}\n",
        f.symbol,
        f.vaddr,
        f.size,
        f.file.display()
    );
    let shown = match (compact, timed) {
        (true, Some(l)) => {
            let first = insns.iter().position(|i| i.addr >= l.start).unwrap_or(0);
            let last = insns
                .iter()
                .position(|i| i.addr >= l.end)
                .unwrap_or(insns.len());
            first.saturating_sub(COMPACT_CONTEXT)..(last + 1 + COMPACT_CONTEXT).min(insns.len())
        }
        _ => 0..insns.len(),
    };
    for i in &insns[shown] {
        let inside = |l: &Loop| (l.start..=l.end).contains(&i.addr);
        let mark = match timed {
            Some(l) if i.addr == l.start => "┌▶",
            Some(l) if i.addr == l.end => "└─",
            Some(l) if inside(&l) => "│ ",
            _ if loops.iter().any(inside) => "· ",
            _ => "  ",
        };
        s += &format!(" {mark} {:>8x}:  {}\n", i.addr, i.text);
    }
    s += &match timed {
        Some(l) => {
            let n = d.timed_body().len();
            format!(
                "   ┌▶…└─ the loop of the iterations: {n} instructions ({:#x}–{:#x}), run between \
                 the clock reads; · other loops\n\n",
                l.start, l.end
            )
        }
        None if loops.is_empty() => "   no backward jump: this function has no loop\n\n".into(),
        None => "   · loops (backward jumps); none is singled out as the iterations' loop (that \
                 needs the counter's clock reads in the function, `rdtsc` or `mrs …, cntvct_el0`: \
                 with the monotonic clock they are calls)\n\n"
            .into(),
    };
    s
}
