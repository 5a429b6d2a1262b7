//! A benchmark's allocation counts per iteration (`memory` in the result file), from the
//! runner's counting pass: samples of one iteration (exact integers, so the spread between
//! iterations shows) and samples of many (the mean over every iteration, so an allocation made
//! once in a while counts for its share). Pure functions of the counts; no I/O.

use crate::memory::AllocCounts;
use serde::{Deserialize, Serialize};

/// `[minimum, median, maximum]` over the one-iteration samples.
pub type Spread = [f64; 3];

/// The counts per iteration, as the result file holds them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryJson {
    /// Allocation calls per iteration (`realloc` of a live block counts as one allocation and
    /// one free).
    pub allocs_per_iter: f64,
    /// Bytes requested per iteration.
    pub bytes_per_iter: f64,
    /// Free calls per iteration.
    pub frees_per_iter: f64,
    /// Bytes allocated less bytes freed (as requested) per iteration: what each iteration
    /// keeps (a leak, or a structure that grows).
    pub net_bytes_per_iter: f64,
    /// Iterations the figures above are the mean over.
    pub iterations: u64,
    /// When the one-iteration samples differ: `[min, median, max]` of each count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub varies: Option<Varies>,
    /// Wall time of the counting pass for this benchmark (its own process, apart from the
    /// timed ones), and that time over the benchmark's measuring time.
    pub cost_s: f64,
    pub cost_share: f64,
    /// Declared allocation-free in code (`bench_alloc_free`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alloc_free: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Varies {
    pub allocs: Spread,
    pub bytes: Spread,
    pub net_bytes: Spread,
}

/// The counting pass's samples: `singles` of one iteration each, `bulk` as (iterations,
/// counts).
pub fn per_iteration(
    singles: &[AllocCounts],
    bulk: &[(u64, AllocCounts)],
    cost_s: f64,
    measured_s: f64,
) -> Option<MemoryJson> {
    let mut all: Vec<(u64, AllocCounts)> = bulk.to_vec();
    if all.is_empty() {
        all = singles.iter().map(|c| (1, *c)).collect();
    }
    let iterations: u64 = all.iter().map(|(n, _)| n).sum();
    if iterations == 0 {
        return None;
    }
    let mean =
        |f: fn(&AllocCounts) -> f64| all.iter().map(|(_, c)| f(c)).sum::<f64>() / iterations as f64;
    let spread = |f: fn(&AllocCounts) -> f64| -> Spread {
        let mut v: Vec<f64> = singles.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        [v[0], crate::stats::median(&v), v[v.len() - 1]]
    };
    let net = |c: &AllocCounts| c.net_bytes() as f64;
    let varies =
        (!singles.is_empty() && singles.iter().any(|c| c != &singles[0])).then(|| Varies {
            allocs: spread(|c| c.allocs as f64),
            bytes: spread(|c| c.bytes as f64),
            net_bytes: spread(net),
        });
    Some(MemoryJson {
        allocs_per_iter: mean(|c| c.allocs as f64),
        bytes_per_iter: mean(|c| c.bytes as f64),
        frees_per_iter: mean(|c| c.frees as f64),
        net_bytes_per_iter: mean(net),
        iterations,
        varies,
        cost_s,
        cost_share: if measured_s > 0.0 {
            cost_s / measured_s
        } else {
            f64::NAN
        },
        alloc_free: false,
    })
}

impl MemoryJson {
    /// Whether some iteration allocated (the mean, or any one-iteration sample).
    pub fn allocates(&self) -> bool {
        self.allocs_per_iter > 0.0 || self.varies.as_ref().is_some_and(|v| v.allocs[2] > 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(allocs: u64, bytes: u64, frees: u64, freed_bytes: u64) -> AllocCounts {
        AllocCounts {
            allocs,
            bytes,
            frees,
            freed_bytes,
        }
    }

    #[test]
    fn exact_counts_and_the_spread_when_iterations_differ() {
        let one = c(1, 4000, 1, 4000);
        let m = per_iteration(
            &[one; 8],
            &[(100, c(100, 400_000, 100, 400_000))],
            0.01,
            1.0,
        )
        .unwrap();
        assert_eq!(
            (m.allocs_per_iter, m.bytes_per_iter, m.net_bytes_per_iter),
            (1.0, 4000.0, 0.0)
        );
        assert_eq!(m.iterations, 100);
        assert!(m.varies.is_none() && m.allocates());
        // A leak of 4 bytes per iteration.
        let m = per_iteration(&[c(1, 4, 0, 0); 4], &[(10, c(10, 40, 0, 0))], 0.0, 1.0).unwrap();
        assert_eq!(m.net_bytes_per_iter, 4.0);
        // A vector that doubles now and then: most iterations allocate nothing.
        let singles = [c(0, 0, 0, 0), c(1, 64, 1, 32), c(0, 0, 0, 0)];
        let m = per_iteration(&singles, &[(64, c(6, 4096, 6, 2048))], 0.0, 1.0).unwrap();
        let v = m.varies.unwrap();
        assert_eq!(v.allocs, [0.0, 0.0, 1.0]);
        assert_eq!(v.net_bytes, [0.0, 0.0, 32.0]);
        assert_eq!(m.allocs_per_iter, 6.0 / 64.0);
        assert!(per_iteration(&[], &[], 0.0, 1.0).is_none());
    }
}
