//! The ledger's earlier runs: per machine, program and benchmark, the medians of the last
//! [`EARLIER_KEEP`] runs worth keeping ([`figure_worth_keeping`]), what the same code read here
//! lately. The next run's interval is joined to them (the result file's `earlier_runs`,
//! [`crate::result::earlier_runs`]).
//!
//! Runs are only the same benchmark when their inputs are: the identity
//! ([`super::program_identity`]) holds the environment too, less the variables that do not
//! reach what is measured ([`super::ENV_NOT_COUNTED`]). Inputs the identity cannot see (a file
//! the program reads, a rebuild that changed the code) show as medians far apart, which the
//! result file's figure weighs ([`EarlierRuns::far_beyond_clock`]). A rebuilt program, until
//! it has runs of its own, borrows the spread of its last build's ([`EarlierRuns::earlier_build`]).

use super::identity::family;
use super::{Ledger, Store};
use crate::result::earlier_runs::{figure_worth_keeping, headline_cycles, EarlierRuns};
use crate::result::ResultFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Medians kept per benchmark of a program.
pub const EARLIER_KEEP: usize = 10;
/// Benchmarks of programs kept in the file; the least recently run go first.
pub const EARLIER_ENTRIES: usize = 2000;

/// One benchmark's earlier runs as stored.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Earlier {
    /// When it last ran, seconds since the epoch (which entries go first).
    last_s: u64,
    /// Medians, ns per iteration, oldest first.
    medians: Vec<f64>,
    /// The same runs' medians in cycles of the core, for those judged in cycles (`None`
    /// otherwise, and for runs recorded before cycles were kept): the last ones line up with
    /// the last `medians`.
    #[serde(default)]
    cycles: Vec<Option<f64>>,
}

impl Ledger {
    fn earlier_key(&self, program: &str, benchmark: &str) -> String {
        format!("{}\u{1f}{program}\u{1f}{benchmark}", self.key)
    }

    /// An [`Ledger::earlier_key`] of this machine taken apart: (program, benchmark).
    fn parse_key<'k>(&self, key: &'k str) -> Option<(&'k str, &'k str)> {
        let mut parts = key.splitn(3, '\u{1f}');
        let (machine, program, name) = (parts.next()?, parts.next()?, parts.next()?);
        (machine == self.key).then_some((program, name))
    }

    /// The medians of `benchmark` in the recent runs of `program` (a
    /// [`super::program_identity`]) on this machine, once there are enough of them; until then,
    /// those of the most recently run earlier build of the same executable, marked as such
    /// (only their spread applies: `crate::result::earlier_runs`).
    pub fn earlier_runs(&self, program: &str, benchmark: &str) -> Option<EarlierRuns> {
        self.earlier
            .get(&self.earlier_key(program, benchmark))
            .and_then(|e| EarlierRuns::from_medians(&e.medians).map(|r| r.with_cycles(&e.cycles)))
            .or_else(|| self.earlier_build_runs(program, benchmark))
    }

    /// The runs of `benchmark` in the most recently run other build of `program`'s
    /// executable that has enough of them.
    fn earlier_build_runs(&self, program: &str, benchmark: &str) -> Option<EarlierRuns> {
        let fam = family(program)?;
        self.earlier
            .iter()
            .filter_map(|(k, e)| {
                let (other, name) = self.parse_key(k)?;
                let same = name == benchmark && other != program && family(other) == Some(fam);
                same.then_some(e)
            })
            .filter_map(|e| {
                let runs = EarlierRuns::of_earlier_build(&e.medians)?;
                Some((e.last_s, runs))
            })
            .max_by_key(|(last_s, _)| *last_s)
            .map(|(_, runs)| runs)
    }

    /// [`Ledger::earlier_runs`] of every benchmark of `program` (or of an earlier build of
    /// it) that has them, by benchmark name.
    pub fn earlier_runs_of(&self, program: &str) -> BTreeMap<String, EarlierRuns> {
        let fam = family(program);
        let names: std::collections::BTreeSet<&str> = self
            .earlier
            .keys()
            .filter_map(|k| {
                let (other, name) = self.parse_key(k)?;
                let ours = other == program || (fam.is_some() && family(other) == fam);
                ours.then_some(name)
            })
            .collect();
        names
            .into_iter()
            .filter_map(|n| Some((n.to_string(), self.earlier_runs(program, n)?)))
            .collect()
    }

    /// Add the medians of `file`'s benchmarks that are worth keeping ([`figure_worth_keeping`])
    /// under `program`, and write the file back (`vernier analyze --runs-of`: a recorded run's
    /// medians, its speeds being the recording's). Errors are ignored: the file is a cache.
    pub fn record_medians(&self, program: &str, file: &ResultFile) {
        self.update(|store| self.add_medians(store, program, file));
    }

    /// Add `file`'s medians worth keeping under `program`; whether there was any.
    pub(super) fn add_medians(&self, store: &mut Store, program: &str, file: &ResultFile) -> bool {
        let new: Vec<(String, f64, Option<f64>)> = file
            .benchmarks
            .iter()
            .filter(|b| b.status == crate::result::Status::Ok)
            .filter(|b| figure_worth_keeping(b.per_iter.median_ns, &b.diagnostics))
            .map(|b| {
                let key = self.earlier_key(program, &b.name);
                (key, b.per_iter.median_ns, headline_cycles(b))
            })
            .collect();
        if new.is_empty() {
            return false;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        for (key, median, cycles) in new {
            let e = store.earlier.entry(key).or_default();
            e.last_s = now;
            // Runs recorded before cycles were kept have none.
            let missing = e.medians.len().saturating_sub(e.cycles.len());
            e.cycles.splice(0..0, std::iter::repeat_n(None, missing));
            e.medians.push(median);
            e.cycles.push(cycles);
            let excess = e.medians.len().saturating_sub(EARLIER_KEEP);
            e.medians.drain(..excess);
            let excess = e.cycles.len().saturating_sub(EARLIER_KEEP);
            e.cycles.drain(..excess);
        }
        if store.earlier.len() > EARLIER_ENTRIES {
            let mut by_age: Vec<(u64, String)> = store
                .earlier
                .iter()
                .map(|(k, e)| (e.last_s, k.clone()))
                .collect();
            by_age.sort();
            for (_, k) in by_age.iter().take(store.earlier.len() - EARLIER_ENTRIES) {
                store.earlier.remove(k);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::program_identity;
    use super::super::tests::file_with;
    use super::super::tests::machine;
    use super::*;
    #[test]
    fn a_program_s_earlier_medians_are_its_own_and_the_last_ten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        let with_medians = |m: &[(&str, f64)]| {
            let mut f = file_with(&[]);
            for &(name, median) in m {
                let mut b = crate::result::BenchmarkResult::failed(name, String::new());
                b.status = crate::result::Status::Ok;
                b.per_iter.median_ns = median;
                f.benchmarks.push(b);
            }
            f
        };
        let k = Ledger::load_from(Some(path.clone()), &machine());
        k.record_medians("p", &with_medians(&[("a", 10.0), ("b", 20.0)]));
        k.record_medians("p2", &with_medians(&[("a", 99.0), ("b", 99.0)]));
        let k = Ledger::load_from(Some(path.clone()), &machine());
        // One run each: not enough.
        assert!(k.earlier_runs_of("p").is_empty());
        for i in 0..12 {
            k.record_medians("p", &with_medians(&[("a", 11.0 + i as f64), ("b", 21.0)]));
        }
        let k = Ledger::load_from(Some(path.clone()), &machine());
        let e = k.earlier_runs_of("p");
        assert_eq!(e.len(), 2);
        // The last ten of thirteen: 10.0, 11.0 and 12.0 are gone; "p2"'s 99 is not "p"'s.
        assert_eq!((e["a"].runs, e["a"].median_ns), (10, [13.0, 22.0]));
        assert_eq!(e["b"].median_ns, [21.0, 21.0]);
        assert_eq!(k.earlier_runs("p", "a"), Some(e["a"]));
    }

    #[test]
    fn a_rebuilt_program_borrows_the_spread_of_its_last_build_until_it_has_runs_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        let exe = dir.path().join("bench");
        std::fs::write(&exe, b"build one").unwrap();
        let id = |exe: &std::path::Path| program_identity(exe, &[], "hot").unwrap();
        let old = id(&exe);
        let other_args = program_identity(&exe, &["--x".into()], "hot").unwrap();
        let with_median = |m: f64| {
            let mut f = file_with(&[]);
            let mut b = crate::result::BenchmarkResult::failed("chase", String::new());
            b.status = crate::result::Status::Ok;
            b.per_iter.median_ns = m;
            f.benchmarks.push(b);
            f
        };
        let k = Ledger::load_from(Some(path.clone()), &machine());
        for m in [146.0, 163.0, 155.0] {
            k.record_medians(&old, &with_median(m));
        }
        k.record_medians(&other_args, &with_median(500.0));
        k.record_medians(&other_args, &with_median(900.0));
        // A rebuild: another size, so another program of the same family.
        std::fs::write(&exe, b"build two, longer").unwrap();
        let new = id(&exe);
        assert_ne!(new, old);
        let k = Ledger::load_from(Some(path.clone()), &machine());
        let e = k.earlier_runs(&new, "chase").unwrap();
        assert!(e.earlier_build);
        assert_eq!((e.runs, e.median_ns), (3, [146.0, 163.0]));
        assert_eq!(k.earlier_runs_of(&new).get("chase"), Some(&e));
        // Other arguments are another program, rebuilt or not.
        assert!(k.earlier_runs("elsewhere", "chase").is_none());
        // Two runs of its own: those, not the old build's.
        k.record_medians(&new, &with_median(100.0));
        k.record_medians(&new, &with_median(101.0));
        let k = Ledger::load_from(Some(path), &machine());
        let e = k.earlier_runs(&new, "chase").unwrap();
        assert!(!e.earlier_build);
        assert_eq!(e.median_ns, [100.0, 101.0]);
    }
}
