//! Allocation counts in words and cells: per iteration, exact when they are whole numbers
//! (counts are deterministic, so a change of one allocation is a change, with no interval).

use crate::result::memory::MemoryJson;
use crate::result::BenchmarkResult;

/// A count of allocations: a whole number as such ("1", "0"), else three significant digits.
pub fn format_allocs(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        super::format_count(x)
    }
}

/// Bytes: "40 B" below a KiB, else "4.0 KiB", "1.5 MiB", "2.0 GiB" (powers of 1024).
pub fn format_bytes(x: f64) -> String {
    let a = x.abs();
    if a < 1024.0 {
        return if x.fract() == 0.0 {
            format!("{x:.0} B")
        } else {
            format!("{x:.1} B")
        };
    }
    let (v, unit) = if a < 1024.0 * 1024.0 {
        (x / 1024.0, "KiB")
    } else if a < 1024.0 * 1024.0 * 1024.0 {
        (x / (1024.0 * 1024.0), "MiB")
    } else {
        (x / (1024.0 * 1024.0 * 1024.0), "GiB")
    };
    format!("{v:.1} {unit}")
}

/// The `allocs` (or `bytes`) cell of a row: "—" when not counted.
pub fn cell(b: &BenchmarkResult, allocs: bool) -> String {
    match &b.memory {
        None => "—".into(),
        Some(m) if allocs => format_allocs(m.allocs_per_iter),
        Some(m) => format_bytes(m.bytes_per_iter),
    }
}

/// A signed change: "+1", "−2", "+4.0 KiB" (`text` is `d` formatted, its sign if any a '-').
pub fn signed(d: f64, text: String) -> String {
    if d < 0.0 {
        format!("−{}", text.trim_start_matches('-'))
    } else {
        format!("+{text}")
    }
}

/// What changed in memory from OLD to NEW, in words: "+1 allocation and +4.0 KiB per
/// iteration", "no change in allocations (1 per iteration, 4.0 KiB)"; `None` when either side
/// was not counted.
pub fn change_words(old: Option<&MemoryJson>, new: Option<&MemoryJson>) -> Option<String> {
    let (o, n) = (old?, new?);
    let da = n.allocs_per_iter - o.allocs_per_iter;
    let db = n.bytes_per_iter - o.bytes_per_iter;
    if da == 0.0 && db == 0.0 {
        return Some(format!(
            "no change in allocations ({} per iteration, {})",
            format_allocs(n.allocs_per_iter),
            format_bytes(n.bytes_per_iter)
        ));
    }
    let noun = if da.abs() == 1.0 {
        "allocation"
    } else {
        "allocations"
    };
    Some(format!(
        "{} {noun} and {} per iteration",
        signed(da, format_allocs(da)),
        signed(db, format_bytes(db))
    ))
}

/// A comparison's memory change in words, when both sides were counted.
pub fn comparison_words(c: &crate::analyze::pairs::Comparison) -> Option<String> {
    let m = c.memory?;
    let side = |allocs, bytes| per_iter(allocs, bytes);
    change_words(
        Some(&side(m.old_allocs_per_iter, m.old_bytes_per_iter)),
        Some(&side(m.new_allocs_per_iter, m.new_bytes_per_iter)),
    )
}

/// Only the two figures the words use.
fn per_iter(allocs_per_iter: f64, bytes_per_iter: f64) -> MemoryJson {
    MemoryJson {
        allocs_per_iter,
        bytes_per_iter,
        frees_per_iter: f64::NAN,
        net_bytes_per_iter: f64::NAN,
        iterations: 0,
        varies: None,
        cost_s: f64::NAN,
        cost_share: f64::NAN,
        alloc_free: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(allocs: f64, bytes: f64) -> MemoryJson {
        crate::result::memory::per_iteration(
            &[],
            &[(
                1,
                crate::memory::AllocCounts {
                    allocs: allocs as u64,
                    bytes: bytes as u64,
                    frees: 0,
                    freed_bytes: 0,
                },
            )],
            0.0,
            1.0,
        )
        .unwrap()
    }

    #[test]
    fn a_change_is_named_exactly() {
        assert_eq!(
            change_words(Some(&m(0.0, 0.0)), Some(&m(1.0, 4096.0))).unwrap(),
            "+1 allocation and +4.0 KiB per iteration"
        );
        assert_eq!(
            change_words(Some(&m(3.0, 120.0)), Some(&m(1.0, 40.0))).unwrap(),
            "−2 allocations and −80 B per iteration"
        );
        assert_eq!(
            change_words(Some(&m(1.0, 4000.0)), Some(&m(1.0, 4000.0))).unwrap(),
            "no change in allocations (1 per iteration, 3.9 KiB)"
        );
        assert!(change_words(None, Some(&m(1.0, 1.0))).is_none());
        assert_eq!(format_bytes(40.0), "40 B");
        assert_eq!(format_allocs(0.09375), super::super::format_count(0.09375));
    }
}
