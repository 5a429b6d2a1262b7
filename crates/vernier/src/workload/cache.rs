//! Cold caches: before a sample, outside its timed region, a buffer larger than the
//! last-level cache is read and written line by line, so the data the benchmark touches is no
//! longer in any cache (nor its pages in the TLB). The protocol's `cache=cold` run option and
//! `Suite::bench_cold` use it; `docs/experiments.md` says what it costs and what it measures.

use crate::timer::Timer;
use crate::workload::routine::{Meter, Routine, ThreadTimes};

/// Where the last-level cache's size is read: one directory per cache of CPU 0.
pub const SYSFS_CACHE_DIR: &str = "/sys/devices/system/cpu/cpu0/cache";
/// Assumed last-level cache when sysfs does not say (a container hiding it, another OS): 32 MiB,
/// as large as the last-level caches of current server parts, so the eviction still works.
pub const FALLBACK_LLC_BYTES: u64 = 32 << 20;
/// The eviction buffer is this many times the last-level cache: caches do not replace lines
/// in strict LRU order (and a victim cache or an inclusive L2 may keep some), so a buffer the
/// size of the cache leaves a few of the benchmark's lines in place; twice the size does not.
pub const EVICT_FACTOR: u64 = 2;
/// A cache line on the x86-64 and AArch64 cores Vernier runs on.
pub const LINE_BYTES: usize = 64;

/// The last-level cache's size in bytes, and where the figure comes from (`sysfs` or
/// `fallback`).
pub fn llc_bytes() -> (u64, &'static str) {
    llc_bytes_in(std::path::Path::new(SYSFS_CACHE_DIR))
        .map(|b| (b, "sysfs"))
        .unwrap_or((FALLBACK_LLC_BYTES, "fallback"))
}

/// The largest cache of the highest level under `dir` (`index*/level`, `index*/size`).
pub fn llc_bytes_in(dir: &std::path::Path) -> Option<u64> {
    let mut best: Option<(u32, u64)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        if !e.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let read = |f: &str| std::fs::read_to_string(e.path().join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(size.trim())) else {
            continue;
        };
        if best.is_none_or(|(l, s)| (level, size) > (l, s)) {
            best = Some((level, size));
        }
    }
    best.map(|(_, s)| s)
}

/// A sysfs cache size: `48K`, `32768K`, `2M`, or bytes (surrounding blanks ignored).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

/// The eviction buffer, allocated on first use.
#[derive(Default)]
pub struct Evictor {
    buf: Vec<u64>,
    sum: u64,
}

impl Evictor {
    /// Size of the buffer in bytes: [`EVICT_FACTOR`] × the last-level cache.
    pub fn bytes() -> u64 {
        llc_bytes().0 * EVICT_FACTOR
    }

    /// Read and write every cache line of the buffer (outside every timed region).
    #[inline(never)]
    pub fn evict(&mut self) {
        if self.buf.is_empty() {
            self.buf = vec![1u64; (Self::bytes() as usize) / 8];
        }
        let step = LINE_BYTES / 8;
        let mut sum = self.sum;
        for i in (0..self.buf.len()).step_by(step) {
            let v = self.buf[i].wrapping_add(sum);
            self.buf[i] = v;
            sum = sum.wrapping_add(v);
        }
        self.sum = std::hint::black_box(sum);
    }
}

/// A routine sampled with cold caches: the buffer is walked before each sample, outside the
/// timed region; in-process, one iteration per sample.
pub struct Cold<'a> {
    pub inner: &'a mut dyn Routine,
    pub evictor: &'a mut Evictor,
}

impl Routine for Cold<'_> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.evictor.evict();
        self.inner.sample(timer, iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        self.evictor.evict();
        self.inner.sample_metered(meter, iters)
    }

    fn prepare(&mut self) {
        self.inner.prepare()
    }

    // A threaded routine keeps its threads' figures with cold caches too.
    fn thread_times(&self) -> Option<&ThreadTimes> {
        self.inner.thread_times()
    }

    fn threads(&self) -> Option<usize> {
        self.inner.threads()
    }

    fn cpus(&self) -> Option<u32> {
        self.inner.cpus()
    }
}

/// A routine registered with `Suite::bench_cold`: it owns its evictor.
pub(crate) struct OwnedCold<R> {
    pub(crate) inner: R,
    pub(crate) evictor: Evictor,
}

impl<R: Routine> OwnedCold<R> {
    fn cold(&mut self) -> Cold<'_> {
        Cold {
            inner: &mut self.inner,
            evictor: &mut self.evictor,
        }
    }
}

impl<R: Routine> Routine for OwnedCold<R> {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        self.cold().sample(timer, iters)
    }

    fn sample_metered(&mut self, meter: &mut Meter, iters: u64) -> u64 {
        self.cold().sample_metered(meter, iters)
    }

    fn prepare(&mut self) {
        self.inner.prepare()
    }

    fn fixed_iters(&self) -> Option<u64> {
        Some(1)
    }

    fn loop_addr(&self) -> usize {
        self.inner.loop_addr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size(" 48K\n"), Some(48 << 10));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn the_largest_highest_level_cache_is_the_llc() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache");
        for (i, level, size) in [(0, "1", "48K"), (1, "2", "1024K"), (2, "3", "32768K")] {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
        }
        assert_eq!(llc_bytes_in(&dir), Some(32 << 20));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(llc_bytes_in(&dir), None);
    }
}
