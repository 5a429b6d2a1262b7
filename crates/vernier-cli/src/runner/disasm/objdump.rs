//! What objdump says of a file: its symbol table (`objdump -t`) and the disassembly of an
//! address range (`objdump -d`), parsed.

use super::Insn;
use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

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
/// (demangled, often very long) name again. objdump's comment on an AArch64 branch
/// (`// b.any`, the condition's other name) is kept after it.
fn shorten(text: &str) -> String {
    if let Some((insn, comment)) = text.split_once(" // ") {
        return format!("{}  // {}", shorten(insn.trim_end()), comment.trim());
    }
    let jumps = matches!(
        super::isa::flow(text),
        super::isa::Flow::Goto(_) | super::isa::Flow::Branch(_)
    );
    if jumps && text.ends_with('>') {
        if let (Some(open), Some(plus)) = (text.find(" <"), text.rfind("+0x")) {
            if plus > open {
                return format!("{} <{}", &text[..open], &text[plus..]);
            }
        }
    }
    text.to_string()
}

/// The objdumps named for the machine whose code they disassemble, by its ELF machine: the
/// cross packages' (`binutils-aarch64-linux-gnu`) and, on Debian and its derivatives, the
/// machine's own (`objdump` is a link to `x86_64-linux-gnu-objdump`). A plain `objdump`
/// disassembles only its own machine's code unless it is binutils-multiarch's.
const MACHINE_OBJDUMPS: [(object::elf::Machine, &str); 2] = [
    (object::elf::EM_AARCH64, "aarch64-linux-gnu-objdump"),
    (object::elf::EM_X86_64, "x86_64-linux-gnu-objdump"),
];

/// The objdump for `file`'s code: the one named, unless it is the default `objdump` and one
/// named for the file's machine is on the PATH (an aarch64 program read on x86-64, or by an
/// aarch64 `vernier` run through qemu-user, whose `objdump` is the host's).
pub(crate) fn objdump_for(objdump: &Path, file: &Path) -> PathBuf {
    let machine = super::elf::machine(file).ok();
    let named = MACHINE_OBJDUMPS
        .iter()
        .find(|(m, _)| Some(*m) == machine)
        .map(|(_, tool)| Path::new(tool))
        .filter(|tool| crate::runner::processes::find_on_path(tool).is_some());
    match named {
        Some(tool) if objdump == Path::new("objdump") => tool.to_path_buf(),
        _ => objdump.to_path_buf(),
    }
}

/// The instructions of the `size` bytes at `vaddr` in `file` (`objdump -d`, or the cross
/// objdump for another machine's code: [`objdump_for`]).
pub(crate) fn disassemble_range(
    objdump: &Path,
    file: &Path,
    vaddr: u64,
    size: u64,
) -> Result<Vec<Insn>> {
    let objdump = &objdump_for(objdump, file);
    let out = Command::new(objdump)
        .args(["-d", "-C", "-w", "--no-show-raw-insn"])
        .arg(format!("--start-address={vaddr:#x}"))
        .arg(format!("--stop-address={:#x}", vaddr + size))
        .arg(file)
        .output()
        .with_context(|| format!("cannot run {}", objdump.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("can't disassemble for architecture") {
        bail!(
            "{} cannot disassemble the code of {} (another machine's): install that \
             machine's binutils (binutils-aarch64-linux-gnu for aarch64 programs, \
             binutils-x86-64-linux-gnu for x86-64 ones) or binutils-multiarch, or name an \
             objdump with --objdump PATH",
            objdump.display(),
            file.display()
        );
    }
    if !out.status.success() {
        bail!(
            "{} failed on {}: {}",
            objdump.display(),
            file.display(),
            stderr.trim()
        );
    }
    Ok(parse_disassembly(&String::from_utf8_lossy(&out.stdout)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_parse() {
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
