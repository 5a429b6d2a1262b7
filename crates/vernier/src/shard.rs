//! Shards: `--shard K/N` picks a stable part of a suite, so N machines (or CI jobs) can share
//! it. A benchmark belongs to shard `1 + (FNV-1a-64(its UTF-8 name) mod N)`: adding or
//! removing a benchmark moves no other, the N shards are disjoint, and together they are the
//! whole suite. The C++ header (`include/vernier.hpp`) uses the same rule.

use std::fmt;

/// One shard of N: `index` in `1..=count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// `K/N` with `1 ≤ K ≤ N`; an error naming the expected form otherwise.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard '{s}': expected K/N with 1 ≤ K ≤ N (e.g. --shard 2/4: the second of \
                 four shards)"
            )
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The shard (`1..=count`) the benchmark `name` belongs to among `count`.
    pub fn of(name: &str, count: u64) -> u64 {
        1 + crate::ledger::fnv1a(name.as_bytes()) % count.max(1)
    }

    /// Whether the benchmark `name` belongs to this shard.
    pub fn contains(&self, name: &str) -> bool {
        Shard::of(name, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        Shard::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_is_fnv1a_of_the_name() {
        // FNV-1a-64 of "" is the offset basis; of "a" the published test vector.
        assert_eq!(crate::ledger::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        let h = crate::ledger::fnv1a(b"a");
        assert_eq!(h, 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Shard::of("a", 2), 1 + h % 2);
        assert_eq!(Shard::of("a", 7), 1 + h % 7);
    }

    #[test]
    fn shards_are_disjoint_and_cover_the_suite() {
        let names: Vec<String> = (0..200).map(|i| format!("bench_{i}")).collect();
        for n in 1..=5u64 {
            let shards: Vec<Shard> = (1..=n).map(|k| Shard { index: k, count: n }).collect();
            for name in &names {
                assert_eq!(
                    shards.iter().filter(|s| s.contains(name)).count(),
                    1,
                    "{name}"
                );
            }
        }
        // Adding a benchmark moves no other.
        let before: Vec<u64> = names.iter().map(|n| Shard::of(n, 4)).collect();
        let mut more = names.clone();
        more.push("new".into());
        let after: Vec<u64> = more.iter().take(200).map(|n| Shard::of(n, 4)).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn bad_shards_are_refused_with_the_form() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        assert_eq!(Shard::parse("2/4").unwrap().to_string(), "2/4");
        for bad in ["0/4", "5/4", "1/0", "x/2", "2", "", "1/2/3", "-1/2"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains("expected K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_rust_harness_selects_its_shard() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = crate::session::options::Options::parse(&args(&["--shard", "2/3"])).unwrap();
        assert_eq!(o.shard, Some(Shard { index: 2, count: 3 }));
        for name in ["add", "mul", "shift", "xor", "neg", "mask"] {
            assert_eq!(o.selects(name), Shard::of(name, 3) == 2, "{name}");
        }
        let e = crate::session::options::Options::parse(&args(&["--shard", "4/3"])).unwrap_err();
        assert!(e.contains("expected K/N"), "{e}");
    }
}
