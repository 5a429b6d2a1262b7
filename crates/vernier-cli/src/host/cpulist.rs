//! CPU sets in the two spellings the kernel uses: lists (`0-3,8`, as in `isolcpus=` and
//! `/sys/devices/system/cpu/isolated`) and hexadecimal masks (`ff,ffffffff`, as in
//! `/proc/irq/*/smp_affinity`).

use std::collections::BTreeSet;
use std::fmt;

/// A set of CPU numbers, kept sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSet(pub BTreeSet<usize>);

impl CpuSet {
    pub fn new() -> CpuSet {
        CpuSet(BTreeSet::new())
    }

    /// Parse a CPU list such as `0-3,8,10-11`. Empty input (and the kernel's `(null)`) is
    /// the empty set.
    pub fn parse_list(s: &str) -> Result<CpuSet, String> {
        let s = s.trim();
        let mut set = BTreeSet::new();
        if s.is_empty() || s == "(null)" {
            return Ok(CpuSet(set));
        }
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            // `isolcpus=` also takes flags such as `domain,managed_irq,2-3`: skip words.
            if part.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
                continue;
            }
            let bad = || format!("not a CPU list: {s:?}");
            // The range form `a-b:step/group` exists; take `a-b` and ignore the rest.
            let range = part.split(':').next().unwrap_or(part);
            if let Some((a, b)) = range.split_once('-') {
                let a: usize = a.trim().parse().map_err(|_| bad())?;
                let b: usize = b.trim().parse().map_err(|_| bad())?;
                if b < a {
                    return Err(bad());
                }
                set.extend(a..=b);
            } else {
                set.insert(range.parse().map_err(|_| bad())?);
            }
        }
        Ok(CpuSet(set))
    }

    /// Parse a hexadecimal affinity mask such as `f` or `00000000,0000000f`.
    pub fn parse_mask(s: &str) -> Result<CpuSet, String> {
        let hex: String = s.trim().chars().filter(|c| *c != ',').collect();
        let mut set = BTreeSet::new();
        for (i, c) in hex.chars().rev().enumerate() {
            let d = c
                .to_digit(16)
                .ok_or_else(|| format!("not a CPU mask: {s:?}"))?;
            for bit in 0..4 {
                if d & (1 << bit) != 0 {
                    set.insert(i * 4 + bit);
                }
            }
        }
        Ok(CpuSet(set))
    }

    /// The mask spelling, in 32-bit comma-separated groups like the kernel prints, padded
    /// to `width_cpus` CPUs (so `0,1` over 2 CPUs is `3`, over 40 CPUs `00,00000003`).
    pub fn to_mask(&self, width_cpus: usize) -> String {
        let max = self.0.iter().next_back().map_or(0, |m| m + 1);
        let bits = width_cpus.max(max).max(1);
        let digits = bits.div_ceil(4);
        let mut out = String::new();
        for d in (0..digits).rev() {
            let mut v = 0u32;
            for bit in 0..4 {
                if self.0.contains(&(d * 4 + bit)) {
                    v |= 1 << bit;
                }
            }
            out.push(std::char::from_digit(v, 16).unwrap());
            if d % 8 == 0 && d != 0 {
                out.push(',');
            }
        }
        out
    }

    pub fn contains(&self, cpu: usize) -> bool {
        self.0.contains(&cpu)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }
    pub fn is_superset(&self, other: &CpuSet) -> bool {
        self.0.is_superset(&other.0)
    }
    pub fn intersects(&self, other: &CpuSet) -> bool {
        !self.0.is_disjoint(&other.0)
    }
    pub fn difference(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.difference(&other.0).copied().collect())
    }
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&other.0).copied().collect())
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        CpuSet(iter.into_iter().collect())
    }
}

/// The list spelling with ranges (`0-3,8`); the empty set prints as nothing.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v: Vec<usize> = self.0.iter().copied().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < v.len() {
            let mut j = i;
            while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
                j += 1;
            }
            parts.push(if j == i {
                v[i].to_string()
            } else {
                format!("{}-{}", v[i], v[j])
            });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

impl std::str::FromStr for CpuSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuSet::parse_list(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        let s = CpuSet::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(s.len(), 7);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert!(CpuSet::parse_list("(null)\n").unwrap().is_empty());
        assert_eq!(
            CpuSet::parse_list("domain,managed_irq,2-3")
                .unwrap()
                .to_string(),
            "2-3"
        );
        assert!(CpuSet::parse_list("3-1").is_err());
        assert!(CpuSet::parse_list("x1").is_err());
    }

    #[test]
    fn masks() {
        assert_eq!(CpuSet::parse_mask("3").unwrap().to_string(), "0-1");
        assert_eq!(
            CpuSet::parse_mask("ff,00000001").unwrap().to_string(),
            "0,32-39"
        );
        let s = CpuSet::parse_list("0-1").unwrap();
        assert_eq!(s.to_mask(2), "3");
        assert_eq!(s.to_mask(8), "03");
        assert_eq!(s.to_mask(40), "00,00000003");
        assert_eq!(CpuSet::new().to_mask(4), "0");
        let round = CpuSet::parse_mask("00,00000003").unwrap();
        assert_eq!(round, s);
    }
}
