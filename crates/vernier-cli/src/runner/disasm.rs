//! The disassembly of each benchmark's measured loop (in doubt, look at the assembly:
//! `docs/asm.md`), its loop body marked: what `vernier asm`, `run -v` and `compare`'s code check
//! read.
//!
//! How a benchmark is mapped to its code (docs/asm.md): the worker is started, and its `loops`
//! reply gives, per benchmark, the run-time address of the measured-loop function its harness
//! instantiated for it (`vernier_measured_loop<…>` in both harnesses). `/proc/PID/maps` of the
//! worker turns the address into a file offset (a position-independent executable is loaded
//! anywhere), the ELF program headers into the address objdump uses, and the symbol table
//! (`objdump -t`) into the function's name and size. `objdump -d` disassembles that function;
//! backward jumps are loops, and the one between the clock reads is the iterations' loop.

use crate::runner::worker::{Control, WorkerProcess};
use anyhow::{bail, Context as _, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A benchmark's measured-loop function, located in its file.
#[derive(Clone, Debug)]
pub struct LoopFunction {
    pub file: PathBuf,
    /// Start address as objdump shows it (the ELF virtual address).
    pub vaddr: u64,
    pub size: u64,
    pub symbol: String,
}

/// A benchmark's name and its loop function, or why it was not found.
pub type LocatedLoop = (String, Result<LoopFunction, String>);

/// Instructions shown before and after the loop of the iterations in `run -v`.
const COMPACT_CONTEXT: usize = 6;

/// One disassembled instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Insn {
    pub addr: u64,
    pub text: String,
}

/// A loop: a backward jump at `end` to `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loop {
    pub start: u64,
    pub end: u64,
}

/// The disassembly of benchmark `index`'s loop for `run -v`, or why there is none.
pub fn for_benchmark(program: &Path, args: &[OsString], index: usize) -> String {
    let objdump = PathBuf::from("objdump");
    let go = || -> Result<String> {
        check_objdump(&objdump)?;
        let located = locate(program, args)?;
        match located.get(index) {
            Some((name, Ok(f))) => render(name, f, &objdump, true),
            Some((_, Err(e))) => Ok(format!("   {e}\n")),
            None => bail!("no benchmark {index}"),
        }
    };
    go().unwrap_or_else(|e| format!("   (no disassembly: {e:#})\n"))
}

pub(crate) fn check_objdump(objdump: &Path) -> Result<()> {
    match Command::new(objdump).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(_) | Err(_) => bail!(
            "{} cannot be run: `vernier asm` disassembles with binutils' objdump. Install \
             binutils (apt-get install binutils, dnf install binutils) or name another with \
             --objdump PATH",
            objdump.display()
        ),
    }
}

/// Start the worker, ask for its loop addresses and map, and locate each benchmark's loop
/// function in its file.
pub fn locate(
    program: &Path,
    args: &[OsString],
) -> Result<Vec<(String, Result<LoopFunction, String>)>> {
    let ctl = Control {
        timeout: std::time::Duration::from_secs_f64(crate::runner::worker::DEFAULT_TIMEOUT_S),
        ..Control::default()
    };
    let mut w = WorkerProcess::spawn(program, args, &ctl).map_err(anyhow::Error::msg)?;
    let located = locate_in(&mut w);
    w.quit();
    located
}

/// [`locate`] in a worker already started (left running).
pub fn locate_in(w: &mut WorkerProcess) -> Result<Vec<(String, Result<LoopFunction, String>)>> {
    let addrs = w.loops().map_err(anyhow::Error::msg);
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", w.pid()))
        .with_context(|| format!("cannot read /proc/{}/maps of the worker", w.pid()));
    let names = w.names.clone();
    let (addrs, maps) = (addrs?, maps?);
    let mut symbols: std::collections::HashMap<PathBuf, Result<Vec<Symbol>, String>> =
        Default::default();
    Ok(names
        .into_iter()
        .zip(addrs)
        .map(|(name, addr)| {
            let found = (|| {
                if addr == 0 {
                    return Err("its harness does not report this benchmark's loop \
                                function"
                        .to_string());
                }
                let (file, offset) = file_offset(&maps, addr)?;
                let vaddr = elf_vaddr(&file, offset)?;
                let syms = symbols
                    .entry(file.clone())
                    .or_insert_with(|| function_symbols(&file))
                    .as_ref()
                    .map_err(|e| e.clone())?;
                let s = syms
                    .iter()
                    .find(|s| s.addr <= vaddr && vaddr < s.addr + s.size.max(1))
                    .ok_or_else(|| {
                        format!(
                            "no function symbol at {vaddr:#x} in {} (stripped?): build the \
                             benchmark without -s / strip, with symbols",
                            file.display()
                        )
                    })?;
                Ok(LoopFunction {
                    file,
                    vaddr: s.addr,
                    size: s.size,
                    symbol: s.name.clone(),
                })
            })();
            (name, found)
        })
        .collect())
}

/// The file mapped at `addr` in a `/proc/PID/maps` text, and the offset of `addr` in it.
pub fn file_offset(maps: &str, addr: u64) -> Result<(PathBuf, u64), String> {
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 {
            continue;
        }
        let Some((lo, hi)) = f[0].split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi), Ok(off)) = (
            u64::from_str_radix(lo, 16),
            u64::from_str_radix(hi, 16),
            u64::from_str_radix(f[2], 16),
        ) else {
            continue;
        };
        if (lo..hi).contains(&addr) {
            let path = f[5..].join(" ");
            if !path.starts_with('/') {
                return Err(format!("{addr:#x} lies in {path}, not in a file"));
            }
            return Ok((PathBuf::from(path), addr - lo + off));
        }
    }
    Err(format!("{addr:#x} is in no mapping of the worker"))
}

/// A loadable segment of an ELF file (a PT_LOAD program header).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
}

/// The loadable segments of a 64-bit ELF file (its PT_LOAD program headers, read with
/// `object`).
pub(crate) fn load_segments(file: &Path) -> Result<Vec<Segment>, String> {
    use object::elf::{FileHeader64, PT_LOAD};
    use object::read::elf::{FileHeader as _, ProgramHeader as _};
    let f =
        std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    // Only the ELF header and the program headers are read: the file may be tens of MB.
    let data = object::ReadCache::new(f);
    let not_elf = |e: object::Error| format!("{} is not a 64-bit ELF file ({e})", file.display());
    let header = FileHeader64::<object::Endianness>::parse(&data).map_err(not_elf)?;
    let endian = header.endian().map_err(not_elf)?;
    let headers = header
        .program_headers(endian, &data)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(headers
        .iter()
        .filter(|h| h.p_type(endian) == PT_LOAD)
        .map(|h| Segment {
            offset: h.p_offset(endian),
            vaddr: h.p_vaddr(endian),
            filesz: h.p_filesz(endian),
            memsz: h.p_memsz(endian),
        })
        .collect())
}

/// The ELF virtual address of file offset `offset` (from the PT_LOAD program headers of a
/// 64-bit ELF file).
pub fn elf_vaddr(file: &Path, offset: u64) -> Result<u64, String> {
    load_segments(file)?
        .iter()
        .find(|s| (s.offset..s.offset + s.filesz).contains(&offset))
        .map(|s| offset - s.offset + s.vaddr)
        .ok_or_else(|| {
            format!(
                "{}: offset {offset:#x} is in no loadable segment",
                file.display()
            )
        })
}

/// The initial contents of `len` bytes at virtual address `vaddr` of `file` as loaded: from
/// the file, or zeros past a segment's file size (`.bss`); `None` when they lie in no segment.
pub(crate) fn bytes_at(file: &Path, segments: &[Segment], vaddr: u64, len: u64) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let s = segments
        .iter()
        .find(|s| s.vaddr <= vaddr && vaddr + len <= s.vaddr + s.memsz)?;
    let mut out = vec![0u8; len as usize];
    let from = vaddr - s.vaddr;
    let in_file = s.filesz.saturating_sub(from).min(len) as usize;
    if in_file > 0 {
        let mut f = std::fs::File::open(file).ok()?;
        f.seek(SeekFrom::Start(s.offset + from)).ok()?;
        f.read_exact(&mut out[..in_file]).ok()?;
    }
    Some(out)
}

#[derive(Clone, Debug)]
pub(crate) struct Symbol {
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) name: String,
}

/// The symbols of `file` (`objdump -t -C`) of one kind: `'F'` functions, `'O'` data objects.
pub(crate) fn symbols_of(file: &Path, kind: char) -> Result<Vec<Symbol>, String> {
    let out = Command::new("objdump")
        .args(["-t", "-C", "-w"])
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run objdump: {e}"))?;
    Ok(parse_symbols(&String::from_utf8_lossy(&out.stdout), kind))
}

/// The function symbols of `file` (`objdump -t -C`); an error naming the fix when it has none.
pub(crate) fn function_symbols(file: &Path) -> Result<Vec<Symbol>, String> {
    let syms = symbols_of(file, 'F')?;
    if syms.is_empty() {
        return Err(format!(
            "{} has no symbols (stripped): `vernier asm` needs them to find the loop \
             function. Build without -s and do not strip it (for Rust: `strip = false`, the \
             default for the bench profile)",
            file.display()
        ));
    }
    Ok(syms)
}

/// Symbols of one kind (`'F'`, `'O'`) from `objdump -t -w` output: `ADDR FLAGS F SECTION SIZE
/// NAME`.
fn parse_symbols(text: &str, kind: char) -> Vec<Symbol> {
    text.lines()
        .filter_map(|l| {
            let addr = u64::from_str_radix(l.get(..16)?, 16).ok()?;
            let rest = l.get(16..)?;
            // Flags occupy 7 columns after a space, `F` marks a function, `O` an object.
            let flags = rest.get(1..8)?;
            if !flags.contains(kind) {
                return None;
            }
            let mut t = rest.get(8..)?.split_whitespace();
            let _section = t.next()?;
            let size = u64::from_str_radix(t.next()?, 16).ok()?;
            let name: Vec<&str> = t.collect();
            (size > 0).then(|| Symbol {
                addr,
                size,
                name: name.join(" "),
            })
        })
        .collect()
}

/// Instructions from `objdump -d --no-show-raw-insn` output.
pub fn parse_disassembly(text: &str) -> Vec<Insn> {
    text.lines()
        .filter_map(|l| {
            let (a, rest) = l.split_once(':')?;
            let a = a.trim();
            if a.is_empty() || !a.bytes().all(|b| b.is_ascii_hexdigit()) || !l.starts_with(' ') {
                return None;
            }
            Some(Insn {
                addr: u64::from_str_radix(a, 16).ok()?,
                text: shorten(&rest.trim().replace('\t', " ")),
            })
        })
        .collect()
}

/// A jump's target within the function is shown as `<+0x70>`, not with the function's whole
/// (demangled, often very long) name again.
fn shorten(text: &str) -> String {
    if text.starts_with('j') && text.ends_with('>') {
        if let (Some(open), Some(plus)) = (text.find(" <"), text.rfind("+0x")) {
            if plus > open {
                return format!("{} <{}", &text[..open], &text[plus..]);
            }
        }
    }
    text.to_string()
}

/// The target of a jump instruction (`jne 1a60 <…>`), when it is one.
fn jump_target(text: &str) -> Option<u64> {
    let mut t = text.split_whitespace();
    let op = t.next()?;
    if !op.starts_with('j') && !op.starts_with('b') {
        return None;
    }
    let target = t.next()?;
    u64::from_str_radix(target.trim_start_matches("0x"), 16).ok()
}

/// Loops (backward jumps within the listing), and the one that runs the iterations.
///
/// The timed region is what control can reach from a clock read at the start (`rdtsc`)
/// without passing the clock read at the stop (`rdtscp`): a walk of the listing following
/// fall-through and jump targets. The iterations' loop is the largest loop whose jump and
/// target lie in that region and that contains no clock read (the loop over a batch's samples
/// contains them; a loop inside the benchmark is nested in the iterations' loop, so smaller).
/// Placement does not matter (clang may move the loop after the function's return, jumping
/// back to the clock read), and a block placed out of line that jumps back (an error path, a
/// counter read) is not taken for it. `None` for the latter when the function reads no TSC
/// (with the monotonic clock the reads are calls).
pub fn find_loops(insns: &[Insn]) -> (Vec<Loop>, Option<Loop>) {
    let (Some(first), Some(last)) = (insns.first(), insns.last()) else {
        return (Vec::new(), None);
    };
    let loops: Vec<Loop> = insns
        .iter()
        .filter_map(|i| {
            let t = jump_target(&i.text)?;
            (t <= i.addr && t >= first.addr && t <= last.addr).then_some(Loop {
                start: t,
                end: i.addr,
            })
        })
        .collect();
    let op = |i: &Insn| i.text.split_whitespace().next().unwrap_or("").to_string();
    let clock_reads: Vec<u64> = insns
        .iter()
        .filter(|i| matches!(op(i).as_str(), "rdtsc" | "rdtscp"))
        .map(|i| i.addr)
        .collect();
    // The timed region: a walk from each `rdtsc`, stopping at `rdtscp`.
    let index: std::collections::HashMap<u64, usize> =
        insns.iter().enumerate().map(|(k, i)| (i.addr, k)).collect();
    let mut region = vec![false; insns.len()];
    let mut todo: Vec<usize> = (0..insns.len())
        .filter(|&k| op(&insns[k]) == "rdtsc")
        .collect();
    while let Some(k) = todo.pop() {
        if region[k] {
            continue;
        }
        region[k] = true;
        let o = op(&insns[k]);
        if o == "rdtscp" || o.starts_with("ret") || o == "ud2" {
            continue;
        }
        let target = jump_target(&insns[k].text).and_then(|t| index.get(&t).copied());
        if o.starts_with('j') {
            todo.extend(target);
        }
        if o != "jmp" && k + 1 < insns.len() {
            todo.push(k + 1);
        }
    }
    let in_region = |a: u64| index.get(&a).is_some_and(|&k| region[k]);
    let timed = loops
        .iter()
        .filter(|l| in_region(l.start) && in_region(l.end))
        .filter(|l| !clock_reads.iter().any(|a| (l.start..=l.end).contains(a)))
        .max_by_key(|l| l.end - l.start)
        .copied();
    (loops, timed)
}

/// The named benchmarks' measured loops, from one start of the worker: for each name found,
/// its compact rendering (as `run -v` shows it) and the instructions of its iterations' loop
/// (empty when the loop is not singled out).
pub fn timed_loops(
    program: &Path,
    args: &[OsString],
    names: &[&str],
) -> Result<Vec<(String, String, Vec<Insn>)>> {
    let objdump = PathBuf::from("objdump");
    check_objdump(&objdump)?;
    let located = locate(program, args)?;
    let mut out = Vec::new();
    for want in names {
        let Some((name, found)) = located.iter().find(|(n, _)| n == want) else {
            continue;
        };
        let f = found.as_ref().map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let d = disassemble(f, &objdump)?;
        let body = d.timed_body().into_iter().cloned().collect();
        out.push((name.clone(), show(name, f, &d, true), body));
    }
    Ok(out)
}

/// The moves in a benchmark's loop of the iterations (`moves` of its `len` instructions), as
/// the instruction check weighs them: copies of a value the loop already holds are not work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopMoves {
    pub moves: usize,
    pub len: usize,
}

impl LoopMoves {
    /// The moves per iteration, given the instructions callgrind counts per iteration (`ir`):
    /// a trip of the loop executes its `len` instructions once and serves one iteration, or
    /// fewer when the compiler unrolled it (`ir / len` trips per iteration, exact for a loop
    /// without calls); a call inside makes `ir / len` overstate the trips, so they are capped
    /// at one per iteration, which never counts more moves than ran.
    pub fn per_iter(&self, ir: f64) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        self.moves as f64 * (ir / self.len as f64).min(1.0)
    }
}

/// Whether an instruction (objdump's AT&T text) only puts into a register a value the loop
/// already holds: a copy from another register or of an immediate (`mov %r15d,%edx`,
/// `movapd %xmm1,%xmm0`, `mov $0x2a,%eax`), a zeroing idiom (`xor %eax,%eax`,
/// `pxor %xmm0,%xmm0`), or a nop. A load, a store, arithmetic, a call are work.
pub fn is_register_move(text: &str) -> bool {
    // objdump's comment (`# 18250 <x>`) is not an operand.
    let text = text.split('#').next().unwrap_or("");
    let mut words = text.split_whitespace();
    let Some(op) = words.next() else {
        return false;
    };
    if text.split_whitespace().any(|w| w.starts_with("nop")) {
        return true;
    }
    let operands: String = words.collect();
    let operands: Vec<&str> = operands.split(',').collect();
    let register = |o: &&str| o.starts_with('%') && !o.contains('(');
    let immediate = |o: &&str| o.starts_with('$');
    const MOVES: [&str; 24] = [
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
    const ZEROING: [&str; 14] = [
        "xor", "xorl", "xorq", "sub", "subl", "subq", "pxor", "xorps", "xorpd", "vpxor", "vpxord",
        "vpxorq", "vxorps", "vxorpd",
    ];
    if MOVES.contains(&op) {
        let (dst, srcs) = operands.split_last().unwrap_or((&"", &[]));
        return register(dst) && srcs.iter().all(|o| register(o) || immediate(o));
    }
    ZEROING.contains(&op)
        && operands.len() >= 2
        && operands.iter().all(register)
        && operands.iter().all(|o| *o == operands[0])
}

/// The register moves of benchmark `index`'s loop of the iterations, from its disassembly
/// (one start of the worker for the loop's address, then objdump). An error when the loop
/// cannot be found or singled out (no objdump, no symbols, the monotonic clock).
pub fn loop_moves(program: &Path, args: &[OsString], index: usize) -> Result<LoopMoves> {
    check_objdump(Path::new("objdump"))?;
    moves_in(&locate(program, args)?, index)
}

/// The register moves of benchmark `index`'s loop, among loop functions already located.
pub fn moves_in(located: &[LocatedLoop], index: usize) -> Result<LoopMoves> {
    let f = match located.get(index) {
        Some((_, Ok(f))) => f,
        Some((name, Err(e))) => bail!("{name}: {e}"),
        None => bail!("no benchmark {index}"),
    };
    let d = disassemble(f, Path::new("objdump"))?;
    let body = d.timed_body();
    if body.is_empty() {
        bail!("the loop of the iterations is not singled out in its disassembly");
    }
    Ok(LoopMoves {
        moves: body.iter().filter(|i| is_register_move(&i.text)).count(),
        len: body.len(),
    })
}

/// A function disassembled: its instructions, its loops, and the loop between the clock
/// reads (the iterations') when there is one.
struct Disassembly {
    insns: Vec<Insn>,
    loops: Vec<Loop>,
    timed: Option<Loop>,
}

impl Disassembly {
    /// The instructions of the iterations' loop (none when it is not singled out).
    fn timed_body(&self) -> Vec<&Insn> {
        match self.timed {
            Some(l) => self
                .insns
                .iter()
                .filter(|i| (l.start..=l.end).contains(&i.addr))
                .collect(),
            None => Vec::new(),
        }
    }
}

/// The instructions of the `size` bytes at `vaddr` in `file` (`objdump -d`).
pub(crate) fn disassemble_range(
    objdump: &Path,
    file: &Path,
    vaddr: u64,
    size: u64,
) -> Result<Vec<Insn>> {
    let out = Command::new(objdump)
        .args(["-d", "-C", "-w", "--no-show-raw-insn"])
        .arg(format!("--start-address={vaddr:#x}"))
        .arg(format!("--stop-address={:#x}", vaddr + size))
        .arg(file)
        .output()
        .with_context(|| format!("cannot run {}", objdump.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed on {}: {}",
            objdump.display(),
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(parse_disassembly(&String::from_utf8_lossy(&out.stdout)))
}

fn disassemble(f: &LoopFunction, objdump: &Path) -> Result<Disassembly> {
    let insns = disassemble_range(objdump, &f.file, f.vaddr, f.size)?;
    let (loops, timed) = find_loops(&insns);
    Ok(Disassembly {
        insns,
        loops,
        timed,
    })
}

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
fn show(name: &str, f: &LoopFunction, d: &Disassembly, compact: bool) -> String {
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
                 needs the TSC's clock reads in the function: with the monotonic clock they are \
                 calls)\n\n"
            .into(),
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_between_the_clock_reads_is_found() {
        let text = "
0000000000001a40 <f>:
    1a40:\tpush   %rbx
    1a41:\tlfence
    1a44:\trdtsc
    1a50:\tsqrtsd %xmm0,%xmm1
    1a54:\tsub    $0x1,%rax
    1a58:\tjne    1a50 <f+0x10>
    1a5a:\trdtscp
    1a5d:\tlfence
    1a60:\tjmp    1a41 <f+0x1>
    1a62:\tret
";
        let insns = parse_disassembly(text);
        assert_eq!(insns.len(), 10);
        let (loops, timed) = find_loops(&insns);
        assert_eq!(loops.len(), 2);
        assert_eq!(
            timed,
            Some(Loop {
                start: 0x1a50,
                end: 0x1a58
            })
        );
        // clang's layout: the iterations' loop placed after the return, jumping back.
        let text = "
    1a40:\trdtsc
    1a44:\tjmp    1a70 <f+0x30>
    1a50:\trdtscp
    1a54:\tjne    1a40 <f>
    1a58:\tret
    1a70:\tsqrtsd %xmm0,%xmm1
    1a74:\tsub    $0x1,%rax
    1a78:\tjne    1a70 <f+0x30>
    1a7a:\tjmp    1a50 <f+0x10>
";
        let (loops, timed) = find_loops(&parse_disassembly(text));
        assert_eq!(loops.len(), 3);
        assert_eq!(
            timed,
            Some(Loop {
                start: 0x1a70,
                end: 0x1a78
            })
        );
        // gcc's layout with an out-of-line block after the return that jumps back (a counter
        // read) and jumps back after the clock's stop: the largest backward jump without a
        // clock read in its range, but outside the timed region.
        let text = "
    1a40:\tmov    (%r15),%edi
    1a44:\tjns    1a80 <f+0x40>
    1a46:\trdtsc
    1a48:\tsqrtsd %xmm0,%xmm1
    1a4c:\tsub    $0x1,%rax
    1a50:\tjne    1a48 <f+0x8>
    1a52:\trdtscp
    1a55:\tadd    $0x1,%r13
    1a59:\tjne    1a40 <f>
    1a5b:\tret
    1a80:\tcall   1000 <read@plt>
    1a85:\tmov    %rax,(%rbx)
    1a88:\tmov    %rax,(%rbx)
    1a8b:\tmov    %rax,(%rbx)
    1a8e:\tjmp    1a55 <f+0x15>
";
        let (loops, timed) = find_loops(&parse_disassembly(text));
        assert_eq!(loops.len(), 3);
        assert_eq!(
            timed,
            Some(Loop {
                start: 0x1a48,
                end: 0x1a50
            })
        );
    }

    #[test]
    fn register_moves_are_told_from_work() {
        for moves in [
            "mov    %r15d,%edx",
            "movapd %xmm1,%xmm0",
            "mov    $0x2a,%eax",
            "movabs $0x4010cccccccccccd,%rax",
            "xor    %eax,%eax",
            "pxor   %xmm0,%xmm0",
            "vxorps %xmm0,%xmm0,%xmm0",
            "nopw   0x0(%rax,%rax,1)",
            "data16 cs nopw 0x0(%rax,%rax,1)",
        ] {
            assert!(is_register_move(moves), "{moves}");
        }
        for work in [
            "mov    0x1359a(%rip),%ecx        # 18250 <x>",
            "mov    %eax,(%rsp)",
            "lea    0x0(,%rcx,8),%eax",
            "sub    %ecx,%eax",
            "sub    $0x1,%rax",
            "xor    %ecx,%eax",
            "sqrtsd %xmm0,%xmm1",
            "call   1000 <f>",
            "jne    4cb0 <+0x70>",
            "movmskpd %xmm0,%eax",
        ] {
            assert!(!is_register_move(work), "{work}");
        }
        let m = LoopMoves { moves: 1, len: 3 };
        assert_eq!(m.per_iter(3.0), 1.0);
        // Unrolled four times: a trip serves four iterations.
        assert_eq!(LoopMoves { moves: 4, len: 6 }.per_iter(1.5), 1.0);
        // A call inside: at most one trip per iteration.
        assert_eq!(LoopMoves { moves: 1, len: 4 }.per_iter(54.0), 1.0);
    }

    #[test]
    fn maps_and_symbols_parse() {
        let maps = "55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 42 /tmp/prog\n\
                    55d0c0a01000-55d0c0a05000 r-xp 00001000 08:01 42 /tmp/prog\n\
                    7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n";
        assert_eq!(
            file_offset(maps, 0x55d0c0a01a40).unwrap(),
            (PathBuf::from("/tmp/prog"), 0x1a40)
        );
        assert!(file_offset(maps, 0x7ffd1010)
            .unwrap_err()
            .contains("[stack]"));
        assert!(file_offset(maps, 0x10).is_err());
        let table = "0000000000001a40 l     F .text\t0000000000000022 void vernier::detail::vernier_measured_loop<Tsc, L>(L&)\n\
             0000000000004010 g     O .bss\t0000000000000008 counter\n";
        let objects = parse_symbols(table, 'O');
        assert_eq!((objects.len(), objects[0].addr), (1, 0x4010));
        let syms = parse_symbols(table, 'F');
        assert_eq!(syms.len(), 1);
        assert_eq!(syms[0].addr, 0x1a40);
        assert_eq!(syms[0].size, 0x22);
        assert!(syms[0]
            .name
            .starts_with("void vernier::detail::vernier_measured_loop"));
    }
}
