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

mod elf;
mod isa;
mod objdump;
mod render;

pub(crate) use elf::{bytes_at, load_segments, Segment};
pub use elf::{elf_vaddr, file_offset};
pub(crate) use objdump::{check_objdump, disassemble_range, function_symbols, symbols_of, Symbol};
pub(crate) use render::render;

pub use isa::is_register_move;
use isa::{clock_read, ClockRead};
pub(crate) use isa::{flow, Flow};

use crate::runner::worker::{Control, WorkerProcess};
use anyhow::{bail, Context as _, Result};
use render::show;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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

/// Loops (backward jumps within the listing), and the one that runs the iterations.
///
/// The timed region is what control can reach from a clock read at the start (`rdtsc`; on
/// AArch64 `mrs …, cntvct_el0` followed by `isb`) without passing the clock read at the stop
/// (`rdtscp`; `mrs …, cntvct_el0` without one): a walk of the listing following fall-through
/// and the targets of every branch form (`jne`, `jmp`; `b.ne`, `cbnz`, `tbz`, `b`). The iterations' loop is the largest loop whose jump and
/// target lie in that region and that contains no clock read (the loop over a batch's samples
/// contains them; a loop inside the benchmark is nested in the iterations' loop, so smaller).
/// Placement does not matter (clang may move the loop after the function's return, jumping
/// back to the clock read), and a block placed out of line that jumps back (an error path, a
/// counter read) is not taken for it. In a Google Benchmark function (`include/gbench`) the
/// clock is read inside the calls that begin and end its `for (auto _ : state)` loop, and they
/// bound the region instead: a call to `State::StartKeepRunning()` starts it, a call or tail
/// jump to `State::FinishKeepRunning()` ends it. `None` for the latter when the function has
/// neither (with the monotonic clock vernier's reads are calls).
pub fn find_loops(insns: &[Insn]) -> (Vec<Loop>, Option<Loop>) {
    let (Some(first), Some(last)) = (insns.first(), insns.last()) else {
        return (Vec::new(), None);
    };
    let loops: Vec<Loop> = insns
        .iter()
        .filter_map(|i| {
            let (Flow::Goto(Some(t)) | Flow::Branch(Some(t))) = flow(&i.text) else {
                return None;
            };
            (t <= i.addr && t >= first.addr && t <= last.addr).then_some(Loop {
                start: t,
                end: i.addr,
            })
        })
        .collect();
    let calls = |i: &Insn, what: &str, tail: bool| {
        let f = flow(&i.text);
        (matches!(f, Flow::Call(_)) || (tail && matches!(f, Flow::Goto(_))))
            && i.text.contains(&format!("benchmark::State::{what}("))
    };
    let starts = |k: usize| {
        clock_read(insns, k) == Some(ClockRead::Start)
            || calls(&insns[k], "StartKeepRunning", false)
    };
    let stops = |k: usize| {
        clock_read(insns, k) == Some(ClockRead::Stop) || calls(&insns[k], "FinishKeepRunning", true)
    };
    let clock_reads: Vec<u64> = (0..insns.len())
        .filter(|&k| starts(k) || stops(k))
        .map(|k| insns[k].addr)
        .collect();
    // The timed region: a walk from each start, stopping at a stop.
    let index: std::collections::HashMap<u64, usize> =
        insns.iter().enumerate().map(|(k, i)| (i.addr, k)).collect();
    let mut region = vec![false; insns.len()];
    let mut todo: Vec<usize> = (0..insns.len()).filter(|&k| starts(k)).collect();
    while let Some(k) = todo.pop() {
        if region[k] {
            continue;
        }
        region[k] = true;
        if stops(k) {
            continue;
        }
        let at = |t: Option<u64>| t.and_then(|t| index.get(&t).copied());
        let next = (k + 1 < insns.len()).then_some(k + 1);
        match flow(&insns[k].text) {
            Flow::End => {}
            Flow::Goto(t) => todo.extend(at(t)),
            Flow::Branch(t) => todo.extend(at(t).into_iter().chain(next)),
            Flow::Next | Flow::Call(_) => todo.extend(next),
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

fn disassemble(f: &LoopFunction, objdump: &Path) -> Result<Disassembly> {
    let insns = disassemble_range(objdump, &f.file, f.vaddr, f.size)?;
    let (loops, timed) = find_loops(&insns);
    Ok(Disassembly {
        insns,
        loops,
        timed,
    })
}

#[cfg(test)]
mod tests {
    use super::objdump::parse_disassembly;
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
    fn an_aarch64_loop_between_the_generic_timers_reads_is_found() {
        // aarch64-linux-gnu-g++ -O2 of examples/cpp/kernels.cpp, `sqrt`'s measured loop: the
        // start's `mrs` is followed by an `isb`, the stop's is not; the counters' reads are
        // placed after the return and branch back with `b.eq`, `tbnz` and `b`.
        let text = "
    37f8:\tldr\tw0, [x21]
    37fc:\ttbz\tw0, #31, 390c <f+0x15c>
    3800:\tldr\tw0, [x21, #4]
    3804:\ttbz\tw0, #31, 3940 <f+0x190>
    3808:\tisb
    380c:\tmrs\tx27, cntvct_el0
    3810:\tisb
    3814:\tcbz\tx24, 384c <f+0x9c>
    3818:\tmov\tx19, x24
    381c:\tnop
    3820:\tmov\tx5, x20
    3824:\tfmov\td0, x5
    3828:\tfadd\td0, d8, d0
    382c:\tfcmp\td0, #0.0
    3830:\tb.pl\t383c <f+0x8c>  // b.nfrst
    3834:\tbl\t29a0 <sqrt@plt>
    3838:\tb\t3840 <f+0x90>
    383c:\tfsqrt\td0, d0
    3840:\tfmov\tx20, d0
    3844:\tsubs\tx19, x19, #0x1
    3848:\tb.ne\t3820 <f+0x70>  // b.any
    384c:\tisb
    3850:\tmrs\tx19, cntvct_el0
    3854:\tldr\tw0, [x21, #4]
    3858:\ttbz\tw0, #31, 38d8 <f+0x128>
    385c:\tldr\tw0, [x21]
    3860:\ttbz\tw0, #31, 38a4 <f+0xf4>
    3864:\tsub\tx19, x19, x27
    3868:\tstr\tx19, [x26, x22, lsl #3]
    386c:\tadd\tx22, x22, #0x1
    3874:\tcmp\tx25, x22
    3878:\tb.ne\t37f8 <f+0x48>  // b.any
    38a0:\tret
    38a4:\tbl\t2640 <read@plt>
    38a8:\tcmp\tx0, x28
    38ac:\tb.eq\t3864 <f+0xb4>  // b.none
    38b0:\tb\t3864 <f+0xb4>
    38d8:\tbl\t2640 <read@plt>
    38dc:\tcmp\tx0, x28
    38e0:\tb.eq\t385c <f+0xac>  // b.none
    38e4:\tstr\txzr, [x5, x4]
    38e8:\tmov\tx2, x28
    38ec:\tmov\tx2, x28
    38f0:\tmov\tx2, x28
    38f4:\tmov\tx2, x28
    38f8:\tmov\tx2, x28
    38fc:\tb\t385c <f+0xac>
    390c:\tbl\t2640 <read@plt>
    3930:\tb.eq\t3800 <f+0x50>  // b.none
    3934:\tldr\tw0, [x21, #4]
    393c:\ttbnz\tw0, #31, 3808 <f+0x58>
    3940:\tbl\t2640 <read@plt>
    3964:\tb.eq\t3808 <f+0x58>  // b.none
    396c:\tb\t3808 <f+0x58>
";
        let insns = parse_disassembly(text);
        assert_eq!(insns[14].text, "b.pl 383c <+0x8c>  // b.nfrst");
        let (loops, timed) = find_loops(&insns);
        assert_eq!(loops.len(), 10, "{loops:?}");
        // The samples' loop and the blocks that branch back before the start hold the clock
        // reads; the largest loop out of line (385c–38fc) lies after the stop.
        assert_eq!(
            timed,
            Some(Loop {
                start: 0x3820,
                end: 0x3848
            })
        );
    }

    #[test]
    fn a_google_benchmark_loop_is_bounded_by_the_states_calls() {
        // g++ -O2 of `for (auto _ : state) benchmark::DoNotOptimize(1);` built with
        // include/gbench: the constant is handed to the barrier by a register move each trip.
        let text = "
    5c80:\tpush   %rbx
    5c81:\tmov    %rdi,%rbx
    5c84:\tcall   12080 <benchmark::State::StartKeepRunning()>
    5c89:\tcmpb   $0x0,0x1a(%rbx)
    5c8d:\tjne    5cb8 <BM_a(benchmark::State&)+0x38>
    5c8f:\tmov    0x10(%rbx),%rax
    5c93:\ttest   %rax,%rax
    5c96:\tje     5cb8 <BM_a(benchmark::State&)+0x38>
    5c98:\tmov    $0x1,%edx
    5c9d:\ttest   %rax,%rax
    5ca0:\tjle    5cc1 <BM_a(benchmark::State&)+0x41>
    5ca2:\tsub    $0x1,%rax
    5ca6:\tje     5cb8 <BM_a(benchmark::State&)+0x38>
    5ca8:\tmov    $0x1,%ecx
    5cad:\tnopl   (%rax)
    5cb0:\tmov    %ecx,%edx
    5cb2:\tsub    $0x1,%rax
    5cb6:\tjne    5cb0 <BM_a(benchmark::State&)+0x30>
    5cb8:\tmov    %rbx,%rdi
    5cbb:\tpop    %rbx
    5cbc:\tjmp    121a0 <benchmark::State::FinishKeepRunning()>
    5cc1:\tlea    0x25378(%rip),%rcx
    5cc8:\tcall   4290 <__assert_fail@plt>
";
        let insns = parse_disassembly(text);
        let (_, timed) = find_loops(&insns);
        let timed = timed.expect("the loop between the state's calls");
        assert_eq!((timed.start, timed.end), (0x5cb0, 0x5cb6));
        let body: Vec<&Insn> = insns
            .iter()
            .filter(|i| (timed.start..=timed.end).contains(&i.addr))
            .collect();
        let moves = body.iter().filter(|i| is_register_move(&i.text)).count();
        assert_eq!((moves, body.len()), (1, 3));
        // Without the calls (another library's `State`), nothing is singled out.
        let other = text.replace("benchmark::State::", "other::State::");
        assert_eq!(find_loops(&parse_disassembly(&other)).1, None);
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
}
