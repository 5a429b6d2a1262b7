//! Is a benchmark's measured code the same in OLD and NEW?
//!
//! Two builds of a program where only some benchmarks changed still place the unchanged ones
//! at other addresses and alignments, and that alone moves their time (by 1–1.6 % for a
//! `std::sort` whose code had not changed). A verdict of `faster` or `slower` then says
//! nothing about the change. So `vernier compare` reads, in both executables, each
//! benchmark's measured-loop function (located as `vernier asm` does) and every function it
//! calls, and compares them instruction by instruction with the addresses taken out:
//!
//! - padding (`nop` of every length, `int3`) is dropped: its length follows the alignment;
//! - a jump within a function names the index of its target instruction, not its address;
//! - a call (or a jump) to another function names that function by its place in the walk (the
//!   first called, the second, …) and the walk goes on into it, pairing OLD's n-th function
//!   with NEW's; its symbol name is not compared (a lambda's number changes when another
//!   lambda is added before it). A call through the PLT, or through a GOT slot that names its
//!   symbol, names the external function (the same shared library serves both);
//! - an operand addressed relative to the instruction pointer names the bytes it points at
//!   (the data object around it when the symbol table has one, else as many bytes as the
//!   operand's register holds), not their address: a constant or an initial value that
//!   changed is a change.
//!
//! The code is `same` when every function of the walk matches, `changed` at the first one that
//! does not, and `unknown` when the walk cannot be completed (an indirect call whose target
//! cannot be read, no symbols, no objdump, more than [`MAX_FUNCTIONS`] functions).

use crate::runner::disasm::{self as asm, Insn, Segment, Symbol};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use vernier::result::comparison::{Code, CodeDetail};

/// What the comparison of one benchmark's code found.
pub type CodeCheck = (Code, CodeDetail);

/// Functions compared per benchmark at most (the loop's function and what it calls).
pub const MAX_FUNCTIONS: usize = 64;

/// One executable's symbols and segments, read once.
struct Image {
    file: PathBuf,
    functions: Vec<Symbol>,
    objects: Vec<Symbol>,
    segments: Vec<Segment>,
}

impl Image {
    fn read(file: &Path) -> Result<Image, String> {
        Ok(Image {
            file: file.to_path_buf(),
            functions: asm::function_symbols(file)?,
            objects: asm::symbols_of(file, 'O')?,
            segments: asm::load_segments(file)?,
        })
    }

    fn function_at(&self, addr: u64) -> Option<&Symbol> {
        self.functions
            .iter()
            .find(|s| s.addr <= addr && addr < s.addr + s.size.max(1))
    }

    /// The bytes an operand at `addr` refers to: the rest of the data object around it, or
    /// `width` bytes.
    fn data(&self, addr: u64, width: u64) -> String {
        let len = self
            .objects
            .iter()
            .find(|s| s.addr <= addr && addr < s.addr + s.size)
            .map_or(width, |s| (s.addr + s.size - addr).min(4096));
        match asm::bytes_at(&self.file, &self.segments, addr, len) {
            Some(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
            None => format!("unmapped+{len}"),
        }
    }
}

/// A function of the walk: its start and size.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Function {
    addr: u64,
    size: u64,
}

impl Function {
    fn of(f: &asm::LoopFunction) -> Function {
        Function {
            addr: f.vaddr,
            size: f.size,
        }
    }
}

/// The functions one side's walk has met, in order.
#[derive(Default)]
struct Walk {
    order: Vec<Function>,
    index: HashMap<u64, usize>,
}

impl Walk {
    fn visit(&mut self, f: Function) -> usize {
        *self.index.entry(f.addr).or_insert_with(|| {
            self.order.push(f);
            self.order.len() - 1
        })
    }
}

/// Mnemonic prefixes objdump prints before the operation.
const PREFIXES: &[&str] = &[
    "cs", "ds", "ss", "es", "fs", "gs", "data16", "data32", "addr32", "rex", "rex.W", "lock",
    "rep", "repz", "repnz", "repe", "repne", "notrack", "bnd",
];

/// The operation of an instruction's text, past its prefixes.
fn operation(text: &str) -> &str {
    text.split_whitespace()
        .find(|t| !PREFIXES.contains(t))
        .unwrap_or("")
}

fn is_padding(text: &str) -> bool {
    let op = operation(text);
    op.starts_with("nop")
        || op == "int3"
        || text.split_whitespace().collect::<Vec<_>>() == ["xchg", "%ax,%ax"]
}

/// The address a direct call or jump goes to (`call 4130 <…>`, `jne 4f20 <…>`; on AArch64
/// `bl 4130 <…>`, `b.ne 4f20 <…>`, `cbz x1, 4f20 <…>`), and the instruction without it
/// (`jne`, `cbz x1`): the operation past its prefixes and the operands before the target.
fn direct_target(text: &str) -> Option<(String, u64)> {
    let from_op = text
        .split_whitespace()
        .skip_while(|t| PREFIXES.contains(t))
        .collect::<Vec<_>>()
        .join(" ");
    let (asm::Flow::Goto(Some(t)) | asm::Flow::Branch(Some(t)) | asm::Flow::Call(Some(t))) =
        asm::flow(&from_op)
    else {
        return None;
    };
    let operands = from_op.split(" <").next()?;
    let head = operands
        .rsplit_once([' ', ','])
        .map_or(operands, |(h, _)| h.trim_end_matches(',').trim_end());
    Some((head.to_string(), t))
}

/// The `# ADDR <SYMBOL>` comment objdump adds to an instruction-pointer-relative operand.
fn rip_comment(text: &str) -> Option<(u64, &str)> {
    if !text.contains("(%rip)") {
        return None;
    }
    let (_, c) = text.split_once('#')?;
    let mut t = c.trim().splitn(2, ' ');
    let addr = u64::from_str_radix(t.next()?, 16).ok()?;
    Some((addr, t.next().unwrap_or("").trim()))
}

/// Bytes a register operand holds (what an instruction-pointer-relative load reads at most).
fn operand_width(text: &str) -> u64 {
    if text.contains("%zmm") {
        64
    } else if text.contains("%ymm") {
        32
    } else if text.contains("%xmm") {
        16
    } else {
        8
    }
}

/// One function's instructions with its addresses taken out; the functions it calls are
/// visited in `walk`. `Err` when the walk cannot go on.
fn normalise(
    img: &Image,
    f: Function,
    insns: &[Insn],
    walk: &mut Walk,
) -> Result<Vec<String>, String> {
    let kept: Vec<&Insn> = insns.iter().filter(|i| !is_padding(&i.text)).collect();
    let at: HashMap<u64, usize> = kept.iter().enumerate().map(|(k, i)| (i.addr, k)).collect();
    let inside = |a: u64| (f.addr..f.addr + f.size).contains(&a);
    let mut out = Vec::with_capacity(kept.len());
    for i in kept {
        let op = operation(&i.text);
        let line = if let Some((op, t)) = direct_target(&i.text) {
            let name = i
                .text
                .split_once(" <")
                .map(|(_, n)| n.trim_end_matches('>'));
            if inside(t) {
                let k = at
                    .get(&t)
                    .map_or_else(|| format!("+{:#x}", t - f.addr), |k| format!("@{k}"));
                format!("{op} {k}")
            } else if let Some(n) = name.filter(|n| n.ends_with("@plt")) {
                format!("{op} {n}")
            } else {
                let s = img.function_at(t).ok_or_else(|| {
                    format!("{op} at {:#x} goes to {t:#x}, in no function", i.addr)
                })?;
                let g = Function {
                    addr: s.addr,
                    size: s.size,
                };
                format!("{op} fn{}+{:#x}", walk.visit(g), t - s.addr)
            }
        } else if let Some((addr, sym)) = rip_comment(&i.text) {
            let head = i.text.split('#').next().unwrap_or("").trim();
            let operands = head
                .split_whitespace()
                .skip_while(|t| *t != op)
                .skip(1)
                .collect::<String>();
            // The displacement before `(%rip)` is the address, relative: drop it.
            let operands = match operands.find("(%rip)") {
                Some(p) => {
                    let start = operands[..p].rfind([',', '*']).map_or(0, |c| c + 1);
                    format!("{}<rip>{}", &operands[..start], &operands[p + 6..])
                }
                None => operands,
            };
            if op.starts_with("call") || op.starts_with('j') {
                // Through a GOT slot: the symbol it names is the function.
                if !sym.contains('@') {
                    return Err(format!(
                        "an indirect {op} at {:#x} through {sym}, whose target cannot be read",
                        i.addr
                    ));
                }
                format!("{op} {operands} {sym}")
            } else {
                format!(
                    "{op} {operands} data:{}",
                    img.data(addr, operand_width(&i.text))
                )
            }
        } else {
            if op.starts_with("call") && i.text.contains('*') {
                return Err(format!(
                    "an indirect call at {:#x} ({}), whose target cannot be read",
                    i.addr, i.text
                ));
            }
            i.text.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        out.push(line);
    }
    Ok(out)
}

/// Compare the walks from OLD's and NEW's measured-loop functions.
fn compare_walks(
    objdump: &Path,
    old: (&Image, Function),
    new: (&Image, Function),
) -> Result<CodeCheck, String> {
    let (mut wo, mut wn) = (Walk::default(), Walk::default());
    wo.visit(old.1);
    wn.visit(new.1);
    let mut k = 0;
    while k < wo.order.len() || k < wn.order.len() {
        if k >= MAX_FUNCTIONS {
            return Err(format!(
                "the loop calls more than {MAX_FUNCTIONS} functions: not all compared"
            ));
        }
        let (Some(&fo), Some(&fn_)) = (wo.order.get(k), wn.order.get(k)) else {
            return Ok(changed(old.0, wo.order.get(k).or(wo.order.last()), k));
        };
        let read = |img: &Image, f: Function| {
            asm::disassemble_range(objdump, &img.file, f.addr, f.size).map_err(|e| format!("{e:#}"))
        };
        let a = normalise(old.0, fo, &read(old.0, fo)?, &mut wo)?;
        let b = normalise(new.0, fn_, &read(new.0, fn_)?, &mut wn)?;
        if a != b {
            return Ok(changed(old.0, Some(&fo), k + 1));
        }
        k += 1;
    }
    Ok((
        Code::Same,
        CodeDetail {
            functions: k,
            differs_in: None,
            reason: None,
        },
    ))
}

fn changed(img: &Image, f: Option<&Function>, functions: usize) -> CodeCheck {
    (
        Code::Changed,
        CodeDetail {
            functions,
            differs_in: f
                .and_then(|f| img.function_at(f.addr))
                .map(|s| s.name.clone()),
            reason: None,
        },
    )
}

/// Why the code could not be compared.
pub fn unknown(reason: String) -> CodeCheck {
    (
        Code::Unknown,
        CodeDetail {
            functions: 0,
            differs_in: None,
            reason: Some(reason),
        },
    )
}

/// For each name, whether its measured code is the same in the two executables (each started
/// once, with its arguments, to locate its benchmarks' loops).
pub fn compare_code(
    old: (&Path, &[OsString]),
    new: (&Path, &[OsString]),
    names: &[String],
) -> Vec<(String, CodeCheck)> {
    let objdump = PathBuf::from("objdump");
    let everyone = |why: String| {
        names
            .iter()
            .map(|n| (n.clone(), unknown(why.clone())))
            .collect()
    };
    if let Err(e) = asm::check_objdump(&objdump) {
        return everyone(format!("{e:#}"));
    }
    let (lo, ln) = match (asm::locate(old.0, old.1), asm::locate(new.0, new.1)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return everyone(format!("{e:#}")),
    };
    let find = |l: &[(String, Result<asm::LoopFunction, String>)], name: &String| {
        l.iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f.clone())
            .unwrap_or_else(|| Err("the worker does not list it".into()))
    };
    // Each executable's symbols and segments, read once.
    let mut images: HashMap<PathBuf, Result<Image, String>> = HashMap::new();
    for (_, f) in lo.iter().chain(&ln) {
        if let Ok(f) = f {
            images
                .entry(f.file.clone())
                .or_insert_with(|| Image::read(&f.file));
        }
    }
    let image = |f: &asm::LoopFunction| {
        let img = images.get(&f.file).expect("read above");
        img.as_ref().map_err(|e| e.clone())
    };
    names
        .iter()
        .map(|name| {
            let check = (|| {
                let (fo, fnew) = (find(&lo, name)?, find(&ln, name)?);
                compare_walks(
                    &objdump,
                    (image(&fo)?, Function::of(&fo)),
                    (image(&fnew)?, Function::of(&fnew)),
                )
            })();
            (name.clone(), check.unwrap_or_else(unknown))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_texts_are_read() {
        assert_eq!(operation("cs nopw 0x0(%rax,%rax,1)"), "nopw");
        assert!(is_padding("data16 cs nopw 0x0(%rax,%rax,1)"));
        assert!(is_padding("xchg   %ax,%ax"));
        assert!(!is_padding("add    $0x1,%eax"));
        assert_eq!(
            direct_target("call   4130 <foo [clone .isra.0]>").map(|d| d.1),
            Some(0x4130)
        );
        for (text, head, target) in [
            ("jne    4f20 <+0xa0>", "jne", 0x4f20),
            ("notrack jmp 4f20 <+0xa0>", "jmp", 0x4f20),
            ("cbz x1, 4f20 <+0xa0>", "cbz x1", 0x4f20),
            ("tbnz w0, #3, 4f20 <+0xa0>", "tbnz w0, #3", 0x4f20),
            ("bl 4130 <foo>", "bl", 0x4130),
        ] {
            assert_eq!(direct_target(text), Some((head.into(), target)), "{text}");
        }
        assert_eq!(direct_target("call   *%rax"), None);
        assert_eq!(
            rip_comment("movsd  0xe3c(%rip),%xmm0        # 6010 <_IO_stdin_used+0x10>"),
            Some((0x6010, "<_IO_stdin_used+0x10>"))
        );
        assert_eq!(operand_width("movsd  0xe3c(%rip),%xmm0"), 16);
    }

    fn image(functions: &[(u64, u64, &str)]) -> Image {
        Image {
            file: PathBuf::from("/nonexistent"),
            functions: functions
                .iter()
                .map(|&(addr, size, name)| Symbol {
                    addr,
                    size,
                    name: name.into(),
                })
                .collect(),
            objects: Vec::new(),
            segments: Vec::new(),
        }
    }

    fn insns(text: &[(u64, &str)]) -> Vec<Insn> {
        text.iter()
            .map(|&(addr, t)| Insn {
                addr,
                text: t.into(),
            })
            .collect()
    }

    #[test]
    fn the_same_code_elsewhere_normalises_alike() {
        // OLD: the loop at 0x1000 with padding before its loop top; its callee at 0x2000.
        let old_img = image(&[(0x1000, 0x40, "loop<{lambda()#2}>"), (0x2000, 0x10, "sort")]);
        let old = insns(&[
            (0x1000, "push   %rbx"),
            (0x1001, "nopl   0x0(%rax)"),
            (0x1008, "add    $0x1,%eax"),
            (0x100b, "jne    1008 <+0x8>"),
            (0x100d, "call   2000 <sort>"),
            (0x1012, "call   3370 <read@plt>"),
            (0x1017, "ret"),
        ]);
        // NEW: the same instructions at 0x1450, other padding, the callee elsewhere and named
        // after another lambda.
        let new_img = image(&[
            (0x1450, 0x40, "loop<{lambda()#3}>"),
            (0x2400, 0x10, "sort'"),
        ]);
        let new = insns(&[
            (0x1450, "push   %rbx"),
            (0x1451, "xchg   %ax,%ax"),
            (0x1453, "cs nopw 0x0(%rax,%rax,1)"),
            (0x1460, "add    $0x1,%eax"),
            (0x1463, "jne    1460 <+0x10>"),
            (0x1465, "call   2400 <sort'>"),
            (0x146a, "call   3390 <read@plt>"),
            (0x146f, "ret"),
        ]);
        let f = |addr| Function { addr, size: 0x40 };
        let (mut wo, mut wn) = (Walk::default(), Walk::default());
        let a = normalise(&old_img, f(0x1000), &old, &mut wo).unwrap();
        let b = normalise(&new_img, f(0x1450), &new, &mut wn).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[2], "jne @1");
        assert_eq!(a[3], "call fn0+0x0");
        assert_eq!(a[4], "call read@plt");
        assert_eq!((wo.order[0].addr, wn.order[0].addr), (0x2000, 0x2400));
        // An immediate is the code, not an address: 1 → 2 is a change.
        let mut changed = new.clone();
        changed[3].text = "add    $0x2,%eax".into();
        let c = normalise(&new_img, f(0x1450), &changed, &mut Walk::default()).unwrap();
        assert_ne!(a, c);
        // A call whose target cannot be read stops the walk.
        let indirect = insns(&[(0x1000, "call   *%rax")]);
        let e = normalise(&old_img, f(0x1000), &indirect, &mut Walk::default()).unwrap_err();
        assert!(e.contains("indirect call"), "{e}");
    }
}
