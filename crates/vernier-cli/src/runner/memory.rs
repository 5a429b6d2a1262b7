//! The counting pass: each benchmark's allocations per iteration, counted in a worker process
//! of their own, apart from the timed ones (docs/memory.md).
//!
//! The interposer (`interposer/alloc_counts.rs`, built by this crate's build script and
//! embedded here) is written to the cache directory and preloaded (`LD_PRELOAD`) into that one
//! process only: the timed processes never carry it, so the times are those of the program
//! alone. In it, each benchmark runs the counting pass of `vernier::session::memory` (samples
//! of one iteration and of many, within a tenth of the benchmark's measuring time). When
//! allocations cannot be counted the reason is given (`memory-unavailable`): a static binary, an allocator that bypasses malloc,
//! an interposer that is not built or not writable, a harness that does not count.

use crate::runner::link::Launch;
use crate::runner::worker::{Control, WorkerProcess};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;
use vernier::diagnostic::{Diagnostic, Finding};
use vernier::measure::Batch;
use vernier::memory::MemoryChange;
use vernier::protocol::BenchRef;
use vernier::result::comparison::ComparisonFile;
use vernier::result::memory::MemoryJson;
use vernier::result::{BenchmarkResult, Status};
use vernier::session::memory::{counted, counting_pass};

/// The interposer as built for this command (empty where it could not be built).
static INTERPOSER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libvernier_alloc_counts.so"));

/// The interposer's file in this user's cache directory ([`user_cache_dir`]), written there on
/// first use (its name carries a hash of its bytes, so a new build never loads an old copy).
pub fn interposer_path() -> Result<PathBuf, String> {
    interposer_in(&user_cache_dir()?)
}

/// `$XDG_CACHE_HOME/vernier`, else `~/.cache/vernier`: made with mode 0700 when missing, and
/// checked to be a directory (not a symbolic link) of this user's that no other user can
/// write to, since what is preloaded from it runs inside the benchmark.
fn user_cache_dir() -> Result<PathBuf, String> {
    let dir = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("vernier"))
        .ok_or(
            "no cache directory for the allocation-counting interposer: neither \
             XDG_CACHE_HOME nor HOME is set; set XDG_CACHE_HOME to a directory of your own",
        )?;
    checked_own_dir(dir)
}

/// `dir`, made with mode 0700 when missing; refused unless it is a directory (not a link) of
/// this user's that no other user can write to.
fn checked_own_dir(dir: PathBuf) -> Result<PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let shown = dir.display();
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    let m = std::fs::symlink_metadata(&dir).map_err(|e| {
        format!("the cache directory {shown} cannot be made ({e}): set XDG_CACHE_HOME to a directory of your own")
    })?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let problem = if m.file_type().is_symlink() {
        Some("is a symbolic link".to_string())
    } else if !m.is_dir() {
        Some("is not a directory".to_string())
    } else if m.uid() != me {
        Some(format!("belongs to user {}, not to you ({me})", m.uid()))
    } else if m.mode() & 0o022 != 0 {
        Some(format!(
            "can be written by other users (mode {:o}; chmod go-w it)",
            m.mode() & 0o777
        ))
    } else {
        None
    };
    match problem {
        Some(p) => Err(format!(
            "the cache directory {shown} {p}: the allocation-counting interposer is not \
             loaded from there; set XDG_CACHE_HOME to a directory of your own"
        )),
        None => Ok(dir),
    }
}

/// The interposer's file in `dir`, written there when missing or different (a new file under
/// an unpredictable name, then renamed into place).
fn interposer_in(dir: &Path) -> Result<PathBuf, String> {
    use std::io::Write;
    if INTERPOSER.is_empty() {
        return Err(
            "the allocation-counting interposer was not built into this vernier (it \
                    needs Linux; see the build's warnings)"
                .into(),
        );
    }
    let name = format!(
        "libvernier_alloc_counts-{:016x}.so",
        vernier::ledger::fnv1a(INTERPOSER)
    );
    let path = dir.join(&name);
    let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    if regular && std::fs::read(&path).is_ok_and(|b| b == INTERPOSER) {
        return Ok(path);
    }
    let write = || -> std::io::Result<()> {
        let mut f = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .tempfile_in(dir)?;
        f.write_all(INTERPOSER)?;
        f.persist(&path).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| {
        format!(
            "the allocation-counting interposer could not be written to {} ({e}): set \
             XDG_CACHE_HOME to a writable directory",
            dir.display()
        )
    })?;
    Ok(path)
}

/// Allocators that a program can link in place of malloc: its allocations would never reach
/// the interposer. Matched as symbol names in the executable.
const OWN_ALLOCATORS: [(&str, &str); 5] = [
    ("_rjem_malloc", "jemalloc (tikv-jemallocator)"),
    ("je_malloc", "jemalloc"),
    ("mi_malloc", "mimalloc"),
    ("tc_malloc", "tcmalloc"),
    ("snmalloc", "snmalloc"),
];

/// Why allocations of `program` cannot be counted by preloading, known from its file alone:
/// a static executable (no interpreter: `LD_PRELOAD` is never read) or one that carries its
/// own allocator. `None` when preloading can work.
pub fn cannot_preload(program: &Path) -> Option<String> {
    let bytes = std::fs::read(program).ok()?;
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return None; // not a 64-bit little-endian ELF file: let the worker say
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let u64_at = |o: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[o..o + 8]);
        u64::from_le_bytes(b) as usize
    };
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    let has_interp = (0..phnum).any(|i| {
        let o = phoff + i * phentsize;
        o + 4 <= bytes.len()
            && u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) == 3
    });
    if !has_interp {
        return Some(format!(
            "{} is statically linked: the dynamic loader never runs, so the counting \
             interposer cannot be preloaded (link it dynamically: drop -static)",
            program.display()
        ));
    }
    OWN_ALLOCATORS
        .iter()
        .find(|(sym, _)| contains(&bytes, sym.as_bytes()))
        .map(|(_, name)| {
            format!(
                "{} carries its own allocator ({name}), whose allocations bypass malloc and \
                 the counting interposer (count with the system allocator, or in Rust with \
                 vernier::CountingAlloc)",
                program.display()
            )
        })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The counting worker of a run: started on first use with the interposer preloaded, and kept
/// for the next benchmarks.
pub struct CountingPass {
    program: PathBuf,
    args: Vec<OsString>,
    ctl: Control,
    worker: Option<WorkerProcess>,
    /// Why nothing can be counted in this run (the same for every benchmark).
    unavailable: Option<String>,
    /// Per benchmark: declared allocation-free.
    alloc_free: Vec<bool>,
}

/// What the pass gives one benchmark.
pub enum Counted {
    Memory(MemoryJson),
    /// Allocations could not be counted, and why.
    Unavailable(String),
}

impl CountingPass {
    pub fn new(program: &Path, args: &[OsString], ctl: &Control) -> CountingPass {
        let mut ctl = ctl.clone();
        ctl.run_options = vec![("memory".into(), "1".into())];
        let unavailable = match (cannot_preload(program), interposer_path()) {
            (Some(why), _) | (None, Err(why)) => Some(why),
            (None, Ok(path)) => {
                let mut preload = path.into_os_string();
                if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
                    preload.push(":");
                    preload.push(old);
                }
                ctl.env.push(("LD_PRELOAD".into(), preload));
                // A Python worker's objects reach malloc, and the interposer, only without
                // its small-object allocator; set here, the worker needs no restart of its own
                // to set it (another program ignores the variable).
                ctl.env.push(("PYTHONMALLOC".into(), "malloc".into()));
                None
            }
        };
        CountingPass {
            program: program.to_path_buf(),
            args: args.to_vec(),
            ctl,
            worker: None,
            unavailable,
            alloc_free: Vec::new(),
        }
    }

    /// The pass for `first`'s program (its benchmarks' declarations kept), unless `off`.
    pub fn unless(
        off: bool,
        program: &Path,
        args: &[OsString],
        ctl: &Control,
        first: &WorkerProcess,
    ) -> Option<CountingPass> {
        (!off).then(|| CountingPass {
            alloc_free: first.alloc_free.clone(),
            ..CountingPass::new(program, args, ctl)
        })
    }

    /// Count the benchmark named `name` (its index is the counting worker's own).
    pub fn count_named(&mut self, name: &str, per_iter_ns: f64, measured_s: f64) -> Counted {
        if self.unavailable.is_none() && self.worker.is_none() {
            match WorkerProcess::spawn(&self.program, &self.args, &self.ctl) {
                Ok(w) => self.worker = Some(w),
                Err(e) => {
                    return Counted::Unavailable(format!(
                        "the counting process could not start: {e}"
                    ))
                }
            }
        }
        let index = self
            .worker
            .as_ref()
            .and_then(|w| w.names.iter().position(|n| n == name));
        match index {
            Some(i) => self.count(i, per_iter_ns, measured_s),
            None => Counted::Unavailable(self.unavailable.clone().unwrap_or_else(|| {
                format!("{name} is not among the counting worker's benchmarks")
            })),
        }
    }

    /// Whether anything can be counted in this run (known before the first benchmark).
    pub fn can_count(&self) -> bool {
        self.unavailable.is_none()
    }

    /// Count benchmark `index`, whose iteration takes about `per_iter_ns` and which was
    /// measured for `measured_s`.
    pub fn count(&mut self, index: usize, per_iter_ns: f64, measured_s: f64) -> Counted {
        if let Some(why) = &self.unavailable {
            return Counted::Unavailable(why.clone());
        }
        match self.samples(index, per_iter_ns, measured_s) {
            Ok(m) => Counted::Memory(m),
            Err(why) => {
                // A worker that failed is not reused.
                if let Some(w) = self.worker.take() {
                    w.quit();
                }
                Counted::Unavailable(why)
            }
        }
    }

    fn samples(
        &mut self,
        index: usize,
        per_iter_ns: f64,
        measured_s: f64,
    ) -> Result<MemoryJson, String> {
        let started = Instant::now();
        if self.worker.is_none() {
            self.worker = Some(
                WorkerProcess::spawn(&self.program, &self.args, &self.ctl)
                    .map_err(|e| format!("the counting process could not start: {e}"))?,
            );
        }
        let w = self.worker.as_mut().expect("started above");
        let mut run = |iters: u64, samples: usize| {
            let mut b = Batch::default();
            w.run(BenchRef::Index(index), iters, samples, &mut b)?;
            counted(b.memory)
        };
        counting_pass(per_iter_ns, measured_s, started, &mut run)
    }
}

impl CountingPass {
    /// Count benchmark `index` after its timed processes and put the outcome in `r`: its
    /// `memory`, or a `memory-unavailable` diagnostic. A benchmark declared allocation-free
    /// (`alloc_free`) that allocates fails, named, with its counts.
    pub fn attach(&mut self, index: usize, alloc_free: bool, r: &mut BenchmarkResult) {
        if r.status == Status::Failed {
            return;
        }
        let measured_s = r.total_s;
        match self.count(index, r.per_iter.median_ns, measured_s) {
            Counted::Memory(m) => {
                r.memory = Some(m);
                vernier::session::memory::check_alloc_free(alloc_free, r);
            }
            Counted::Unavailable(reason) => {
                let finding = Finding::MemoryUnavailable { reason };
                r.diagnostics.push(Diagnostic::from(&finding));
                if alloc_free {
                    r.status = Status::Failed;
                    r.error = Some(format!(
                        "{} is declared allocation-free, and its allocations could not be \
                         counted",
                        r.name
                    ));
                }
            }
        }
    }
}

/// What `vernier run` adds to a benchmark's result after its timed processes: each process's
/// peak resident memory, and the counting pass's outcome (when counting is on).
pub fn after_timed(
    pass: Option<&mut CountingPass>,
    index: usize,
    peaks: &[Option<u64>],
    r: &mut BenchmarkResult,
) {
    set_peaks(r, peaks);
    if let Some(pass) = pass {
        let mut progress = crate::term::ProgressLine::new();
        progress.status(&format!("{}: counting allocations", r.name));
        let alloc_free = pass.alloc_free.get(index).copied().unwrap_or(false);
        pass.attach(index, alloc_free, r);
        progress.clear();
    }
}

/// Both sides' allocations per iteration, when both were counted.
pub fn change(old: Option<&MemoryJson>, new: Option<&MemoryJson>) -> Option<MemoryChange> {
    let (o, n) = (old?, new?);
    Some(MemoryChange {
        old_allocs_per_iter: o.allocs_per_iter,
        new_allocs_per_iter: n.allocs_per_iter,
        old_bytes_per_iter: o.bytes_per_iter,
        new_bytes_per_iter: n.bytes_per_iter,
    })
}

/// A live comparison's counting passes, after its timed pairs: one counting process per side,
/// each benchmark counted by name; `memory` of each comparison when both sides counted.
pub fn count_comparisons(file: &mut ComparisonFile, sides: [&Launch; 2], ctl: &Control) {
    let mut passes = sides.map(|l| {
        let mut c = ctl.clone();
        c.env.extend(l.env.iter().cloned());
        CountingPass::new(&l.program, &l.args, &c)
    });
    for c in &mut file.comparisons {
        let measured_s = c.seconds / 2.0;
        let medians = [c.old_median_ns, c.new_median_ns];
        let counted: Vec<Option<MemoryJson>> = passes
            .iter_mut()
            .zip(medians)
            .map(|(p, ns)| match p.count_named(&c.name, ns, measured_s) {
                Counted::Memory(m) => Some(m),
                Counted::Unavailable(_) => None,
            })
            .collect();
        c.memory = change(counted[0].as_ref(), counted[1].as_ref());
    }
}

/// Each timed process's peak resident memory, by process index.
pub fn set_peaks(r: &mut BenchmarkResult, peaks: &[Option<u64>]) {
    for p in &mut r.processes {
        p.peak_rss_bytes = peaks.get(p.index as usize).copied().flatten();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interposer_is_embedded_and_written_once() {
        assert!(!INTERPOSER.is_empty(), "the build script did not build it");
        let dir = tempfile::tempdir().unwrap();
        let p = interposer_in(dir.path()).unwrap();
        assert!(p.starts_with(dir.path()));
        assert_eq!(std::fs::read(&p).unwrap(), INTERPOSER);
        assert_eq!(interposer_in(dir.path()).unwrap(), p);
        // A file of other bytes under its name is replaced.
        std::fs::write(&p, vec![0u8; INTERPOSER.len()]).unwrap();
        assert_eq!(interposer_in(dir.path()).unwrap(), p);
        assert_eq!(std::fs::read(&p).unwrap(), INTERPOSER);
    }

    #[test]
    fn the_cache_directory_must_be_the_users_own() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        // Missing: made, with mode 0700.
        let made = checked_own_dir(root.path().join("a/vernier")).unwrap();
        let mode = std::fs::metadata(&made).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // A link to a directory, even the user's own, is refused.
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&made, &link).unwrap();
        let e = checked_own_dir(link).unwrap_err();
        assert!(e.contains("is a symbolic link"), "{e}");
        // Writable by others.
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = checked_own_dir(open).unwrap_err();
        assert!(e.contains("can be written by other users (mode 777"), "{e}");
        // Another user's: one given away by root, or, run as another user, root's `/`.
        // SAFETY: geteuid has no preconditions and cannot fail.
        let (theirs, owner) = if unsafe { libc::geteuid() } == 0 {
            let d = root.path().join("theirs");
            std::fs::create_dir(&d).unwrap();
            std::os::unix::fs::chown(&d, Some(12345), None).unwrap();
            (d, 12345)
        } else {
            (PathBuf::from("/"), 0)
        };
        let e = checked_own_dir(theirs).unwrap_err();
        assert!(e.contains(&format!("belongs to user {owner},")), "{e}");
    }
}
