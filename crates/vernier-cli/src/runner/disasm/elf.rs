//! Reading the worker's executable: where an address of the running worker lies in its file
//! (`/proc/PID/maps`), the ELF virtual address objdump uses for it (the PT_LOAD program
//! headers), and the bytes a file holds at an address.

use std::path::{Path, PathBuf};

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
    use object::elf::PT_LOAD;
    use object::read::elf::{FileHeader as _, ProgramHeader as _};
    with_header(file, |header, endian, data| {
        let headers = header
            .program_headers(endian, data)
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
    })
}

/// The ELF machine of a file (`e_machine`: `EM_X86_64`, `EM_AARCH64`, …).
pub(crate) fn machine(file: &Path) -> Result<object::elf::Machine, String> {
    use object::read::elf::FileHeader as _;
    with_header(file, |header, endian, _| Ok(header.e_machine(endian)))
}

type Header = object::elf::FileHeader64<object::Endianness>;

/// `f` of the ELF header of `file`, its byte order and the file, read only as far as `f` asks:
/// the file may be tens of MB.
fn with_header<T>(
    file: &Path,
    f: impl FnOnce(&Header, object::Endianness, &object::ReadCache<std::fs::File>) -> Result<T, String>,
) -> Result<T, String> {
    use object::read::elf::FileHeader as _;
    let opened =
        std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let data = object::ReadCache::new(opened);
    let not_elf = |e: object::Error| format!("{} is not a 64-bit ELF file ({e})", file.display());
    let header = Header::parse(&data).map_err(not_elf)?;
    let endian = header.endian().map_err(not_elf)?;
    f(header, endian, &data)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_parse() {
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
    }
}
