//! The machine's known speed: the core speeds that earlier runs on this machine measured in
//! their fast state (the core-speed probe, [`crate::analyze::speed`]), kept in a small file so a run
//! spent wholly in a slow state — which its own probes cannot reveal — is measured against what
//! the machine does when it is not held back (`core-slowed`, reference `known`).
//!
//! The file is `$VERNIER_SPEED_FILE`, else `$XDG_CACHE_HOME/vernier/core-speed.json`, else
//! `~/.cache/vernier/core-speed.json`; `VERNIER_SPEED_FILE=none` turns it off. It holds, per
//! machine (hostname and CPU model), the last [`KEEP`] fast-state speeds (GHz-equivalent), one
//! per benchmark. The known speed is their [`KNOWN_QUANTILE`] quantile once there are
//! [`MIN_RUNS`] of them: a high quantile, not the maximum, so that one lucky burst of turbo does
//! not make every later run look slow. A file that cannot be read or written is ignored (the
//! run goes on, measured against its own probes and its start-up speed only).
//!
//! The same file keeps, per machine, program and benchmark, the medians of the last
//! [`EARLIER_KEEP`] runs ([`crate::result::recent_runs`]): what the same code read here lately,
//! which the next run's interval is joined to.
//!
//! `vernier run`, `vernier demo` and a Rust suite run standalone (`cargo bench`,
//! [`crate::Suite::try_finish`]) read and add to it; a standalone run of an executable and
//! `vernier run -- EXECUTABLE` (no arguments, hot caches) are the same program.

mod identity;

pub use identity::{
    env_not_counted, fnv1a, program_identity, program_identity_in, ENV_NOT_COUNTED,
};

use crate::machine::Machine;
use crate::result::ResultFile;
use identity::family;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Speeds kept per machine.
pub const KEEP: usize = 200;
/// The known speed is this quantile of the kept speeds.
pub const KNOWN_QUANTILE: f64 = 0.9;
/// Fewest kept speeds before the known speed is used.
pub const MIN_RUNS: usize = 5;
/// Fewest kept speeds before their range widens intervals. One is kept per benchmark: more
/// than one demo's worth, so that a single run's benchmarks, all measured in one state, do not
/// stand for the machine's range.
pub const MIN_CLOCK_RUNS: usize = 20;
/// Environment variable naming the file (`none`: no file).
pub const ENV: &str = "VERNIER_SPEED_FILE";

/// Medians kept per benchmark of a program (`crate::result::recent_runs`).
pub const EARLIER_KEEP: usize = 10;
/// Benchmarks of programs kept in the file; the least recently run go first.
pub const EARLIER_ENTRIES: usize = 2000;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    /// machine key → fast-state speeds, GHz-equivalent, oldest first.
    machines: BTreeMap<String, Vec<f64>>,
    /// machine, program and benchmark → the medians of its recent runs.
    #[serde(default)]
    earlier: BTreeMap<String, Earlier>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Earlier {
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

/// The known speed of this machine, and where to record this run's.
pub struct KnownSpeed {
    path: Option<PathBuf>,
    key: String,
    ghz: Vec<f64>,
    earlier: BTreeMap<String, Earlier>,
}

fn default_path() -> Option<PathBuf> {
    match std::env::var_os(ENV) {
        Some(v) if v == "none" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(base.join("vernier").join("core-speed.json"))
        }
    }
}

fn read(path: &Option<PathBuf>) -> Store {
    path.as_ref()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

impl KnownSpeed {
    /// This machine's entry of the default file.
    pub fn load(machine: &Machine) -> KnownSpeed {
        KnownSpeed::load_from(default_path(), machine)
    }

    fn load_from(path: Option<PathBuf>, machine: &Machine) -> KnownSpeed {
        let key = format!("{}/{}", machine.hostname, machine.cpu_model);
        let mut store = read(&path);
        let ghz = store.machines.remove(&key).unwrap_or_default();
        KnownSpeed {
            path,
            key,
            ghz,
            earlier: store.earlier,
        }
    }

    fn earlier_key(&self, program: &str, benchmark: &str) -> String {
        format!("{}\u{1f}{program}\u{1f}{benchmark}", self.key)
    }

    /// An [`KnownSpeed::earlier_key`] of this machine taken apart: (program, benchmark).
    fn parse_key<'k>(&self, key: &'k str) -> Option<(&'k str, &'k str)> {
        let mut parts = key.splitn(3, '\u{1f}');
        let (machine, program, name) = (parts.next()?, parts.next()?, parts.next()?);
        (machine == self.key).then_some((program, name))
    }

    /// The medians of `benchmark` in the recent runs of `program` (a [`program_identity`]) on
    /// this machine, once there are enough of them; until then, those of the most recently
    /// run earlier build of the same executable, marked as such (only their spread applies:
    /// `crate::result::recent_runs`).
    pub fn earlier_runs(
        &self,
        program: &str,
        benchmark: &str,
    ) -> Option<crate::result::recent_runs::EarlierRuns> {
        self.earlier
            .get(&self.earlier_key(program, benchmark))
            .and_then(|e| {
                crate::result::recent_runs::EarlierRuns::from_medians(&e.medians)
                    .map(|r| r.with_cycles(&e.cycles))
            })
            .or_else(|| self.earlier_build_runs(program, benchmark))
    }

    /// The runs of `benchmark` in the most recently run other build of `program`'s
    /// executable that has enough of them.
    fn earlier_build_runs(
        &self,
        program: &str,
        benchmark: &str,
    ) -> Option<crate::result::recent_runs::EarlierRuns> {
        let fam = family(program)?;
        self.earlier
            .iter()
            .filter_map(|(k, e)| {
                let (other, name) = self.parse_key(k)?;
                let same = name == benchmark && other != program && family(other) == Some(fam);
                same.then_some(e)
            })
            .filter_map(|e| {
                let runs = crate::result::recent_runs::EarlierRuns::of_earlier_build(&e.medians)?;
                Some((e.last_s, runs))
            })
            .max_by_key(|(last_s, _)| *last_s)
            .map(|(_, runs)| runs)
    }

    /// [`KnownSpeed::earlier_runs`] of every benchmark of `program` (or of an earlier build
    /// of it) that has them, by benchmark name.
    pub fn earlier_runs_of(
        &self,
        program: &str,
    ) -> BTreeMap<String, crate::result::recent_runs::EarlierRuns> {
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

    /// Add the medians of `file`'s benchmarks that are worth keeping (`crate::result::recent_runs`)
    /// under `program`, and write the file back (`vernier analyze --runs-of`: a recorded run's
    /// medians, its speeds being the recording's). Errors are ignored: the file is a cache.
    pub fn record_medians(&self, program: &str, file: &ResultFile) {
        self.update(|store| self.add_medians(store, program, file));
    }

    /// Both records of a run in one read and one write of the file: its fast-state speeds and,
    /// under `program`, its medians worth keeping (`crate::result::recent_runs`).
    pub fn record_run(&self, file: &ResultFile, program: Option<&str>) {
        self.update(|store| {
            let speeds = self.add_speeds(store, file);
            let medians = program.is_some_and(|p| self.add_medians(store, p, file));
            speeds || medians
        });
    }

    /// Read the file again (another run may have written since this one started), apply
    /// `change`, and write it back when it changed anything. Errors are ignored: the file is
    /// a cache.
    fn update(&self, change: impl FnOnce(&mut Store) -> bool) {
        let Some(path) = &self.path else {
            return;
        };
        let mut store = read(&self.path);
        if change(&mut store) {
            write(path, &store);
        }
    }

    /// Add `file`'s medians worth keeping under `program`; whether there was any.
    fn add_medians(&self, store: &mut Store, program: &str, file: &ResultFile) -> bool {
        let new: Vec<(String, f64, Option<f64>)> = file
            .benchmarks
            .iter()
            .filter(|b| b.status == crate::result::Status::Ok)
            .filter(|b| {
                crate::result::recent_runs::figure_worth_keeping(
                    b.per_iter.median_ns,
                    &b.diagnostics,
                )
            })
            .map(|b| {
                let key = self.earlier_key(program, &b.name);
                (
                    key,
                    b.per_iter.median_ns,
                    crate::result::recent_runs::headline_cycles(b),
                )
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

    /// Whether there is a file to read and record runs in (not `VERNIER_SPEED_FILE=none`, and
    /// a place for it).
    pub fn in_use(&self) -> bool {
        self.path.is_some()
    }

    /// The known speed as a cycle time (ns per addition), once enough runs were recorded.
    /// Whether the file holds a run of this machine already (the legend and the machine's
    /// lines are given in full on its first run).
    pub fn seen_before(&self) -> bool {
        !self.sorted_ghz().is_empty()
    }

    pub fn known_cycle_ns(&self) -> Option<f64> {
        let v = self.sorted_ghz();
        (v.len() >= MIN_RUNS).then(|| 1.0 / crate::stats::quantile_sorted(&v, KNOWN_QUANTILE))
    }

    /// The kept speeds that are speeds (finite, positive), sorted.
    fn sorted_ghz(&self) -> Vec<f64> {
        let v: Vec<f64> = self
            .ghz
            .iter()
            .copied()
            .filter(|g| g.is_finite() && *g > 0.0)
            .collect();
        crate::stats::sorted(&v)
    }

    /// The range of the core's clock over the recorded runs, GHz-equivalent, once there are
    /// [`MIN_CLOCK_RUNS`] of them: from the slowest speed that is not itself a slow state to
    /// the fastest. A run spent wholly in a slow state records its slow speed as its fast
    /// state; such a speed, [`crate::analyze::speed::KNOWN_SLOW_RATIO`] or more behind the
    /// known speed, is `core-slowed` and flagged as such, so it is left out of the range. The
    /// other ends are the extremes themselves, not percentiles, because the next run may find
    /// the core as fast or as slow as any recent one did: ten invocations here went from 3.90
    /// to 4.06 GHz, above the 90th percentile of the 200 speeds before them (4.02), and ten
    /// others from 3.82 to 4.01 GHz, below their 10th percentile (3.87); the intervals that
    /// stopped short of those speeds missed the median of the ten.
    pub fn clock_ghz(&self) -> Option<[f64; 2]> {
        let v = self.sorted_ghz();
        if v.len() < MIN_CLOCK_RUNS {
            return None;
        }
        let known = crate::stats::quantile_sorted(&v, KNOWN_QUANTILE);
        let floor = known / crate::analyze::speed::KNOWN_SLOW_RATIO;
        let slowest = v.iter().copied().find(|g| *g >= floor).unwrap_or(known);
        Some([slowest, v[v.len() - 1]])
    }

    /// Add the fast-state speeds of `file`'s benchmarks (those with a figure in the fast
    /// state) and write the file back. Errors are ignored: the file is a cache.
    #[cfg(test)]
    pub fn record(&self, file: &ResultFile) {
        self.update(|store| self.add_speeds(store, file));
    }

    /// Add the fast-state speeds of `file`'s benchmarks; whether there was any.
    fn add_speeds(&self, store: &mut Store, file: &ResultFile) -> bool {
        let new: Vec<f64> = file
            .benchmarks
            .iter()
            .filter_map(|b| b.speed.as_ref())
            .filter(|s| s.fast.samples >= crate::analyze::speed::MIN_STATE_SAMPLES)
            .map(|s| s.fast.ghz)
            .filter(|g| g.is_finite() && *g > 0.0)
            .collect();
        if new.is_empty() {
            return false;
        }
        let v = store.machines.entry(self.key.clone()).or_default();
        v.extend(new);
        let excess = v.len().saturating_sub(KEEP);
        v.drain(..excess);
        true
    }
}

fn write(path: &std::path::Path, store: &Store) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(bytes) = serde_json::to_vec(store) {
        let _ = crate::result::write_atomic(path, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        let mut m = Machine::detect();
        m.hostname = "h".into();
        m.cpu_model = "cpu".into();
        m
    }

    fn file_with(ghz: &[f64]) -> ResultFile {
        let mut f: ResultFile = serde_json::from_value(serde_json::json!({
            "schema": 1, "tool": {"name": "vernier", "version": "0"},
            "machine": machine(),
            "timer": {"kind": "tsc", "resolution_ns": 1.0, "overhead_ns": 10.0, "tsc_hz": 3e9},
            "benchmarks": []
        }))
        .unwrap();
        for &g in ghz {
            let mut b = crate::result::BenchmarkResult::failed("b", String::new());
            b.speed = Some(crate::result::SpeedJson {
                fastest_ghz: g,
                reference: "probes".into(),
                fastest_throughput: None,
                fast: crate::result::SpeedStateJson {
                    samples: 100,
                    share: 1.0,
                    ghz: g,
                    median_ns: 1.0,
                    throughput: None,
                },
                slow: None,
                split: false,
                probed_batches: 100,
                probe_share: 0.001,
                behind_known_ghz: None,
                cycles_per_iter: None,
                cycles_ci95: None,
                cycles_run_ci95: None,
            });
            f.benchmarks.push(b);
        }
        f
    }

    #[test]
    fn the_known_speed_is_a_high_quantile_of_the_recorded_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("speed.json");
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_cycle_ns(), None);
        // Four runs are not enough.
        k.record(&file_with(&[3.0, 3.9, 4.0, 3.95]));
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_cycle_ns(), None);
        // Eleven: 3.0 ... and a lucky 5.0 does not set the bar.
        k.record(&file_with(&[4.0, 3.9, 4.0, 4.0, 3.95, 4.0, 5.0]));
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        let ghz = 1.0 / k.known_cycle_ns().unwrap();
        assert!((ghz - 4.0).abs() < 1e-9, "{ghz}");
        // Another machine's entry is its own.
        let mut other = machine();
        other.cpu_model = "other".into();
        assert_eq!(
            KnownSpeed::load_from(Some(path.clone()), &other).known_cycle_ns(),
            None
        );
        // A damaged file is ignored, and rewritten by the next record.
        std::fs::write(&path, b"{not json").unwrap();
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_cycle_ns(), None);
        k.record(&file_with(&[4.0]));
        assert!(serde_json::from_slice::<Store>(&std::fs::read(&path).unwrap()).is_ok());
    }

    #[test]
    fn the_clock_range_needs_many_runs_and_spans_the_slowest_fast_state_to_the_fastest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("speed.json");
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        // One demo's worth, all in one state, does not stand for the machine.
        k.record(&file_with(&[3.8; MIN_CLOCK_RUNS - 1]));
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        assert_eq!(k.clock_ghz(), None);
        // 3.6, 3.61, ..., 3.99 (and the 3.8s): the slowest and the fastest.
        let spread: Vec<f64> = (0..40).map(|i| 3.6 + 0.01 * i as f64).collect();
        k.record(&file_with(&spread));
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        let [lo, hi] = k.clock_ghz().unwrap();
        assert!((lo - 3.6).abs() < 1e-9, "{lo}");
        assert!((hi - 3.99).abs() < 1e-9, "{hi}");
        // Runs wholly in a slow state (1.85x) are core-slowed, not the clock's range.
        k.record(&file_with(&[2.1, 2.05]));
        let k = KnownSpeed::load_from(Some(path), &machine());
        let [lo, _] = k.clock_ghz().unwrap();
        assert!((lo - 3.6).abs() < 1e-9, "{lo}");
    }

    #[test]
    fn a_program_s_earlier_medians_are_its_own_and_the_last_ten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("speed.json");
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
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        k.record_medians("p", &with_medians(&[("a", 10.0), ("b", 20.0)]));
        k.record_medians("p2", &with_medians(&[("a", 99.0), ("b", 99.0)]));
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        // One run each: not enough.
        assert!(k.earlier_runs_of("p").is_empty());
        for i in 0..12 {
            k.record_medians("p", &with_medians(&[("a", 11.0 + i as f64), ("b", 21.0)]));
        }
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
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
        let path = dir.path().join("speed.json");
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
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        for m in [146.0, 163.0, 155.0] {
            k.record_medians(&old, &with_median(m));
        }
        k.record_medians(&other_args, &with_median(500.0));
        k.record_medians(&other_args, &with_median(900.0));
        // A rebuild: another size, so another program of the same family.
        std::fs::write(&exe, b"build two, longer").unwrap();
        let new = id(&exe);
        assert_ne!(new, old);
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        let e = k.earlier_runs(&new, "chase").unwrap();
        assert!(e.earlier_build);
        assert_eq!((e.runs, e.median_ns), (3, [146.0, 163.0]));
        assert_eq!(k.earlier_runs_of(&new).get("chase"), Some(&e));
        // Other arguments are another program, rebuilt or not.
        assert!(k.earlier_runs("elsewhere", "chase").is_none());
        // Two runs of its own: those, not the old build's.
        k.record_medians(&new, &with_median(100.0));
        k.record_medians(&new, &with_median(101.0));
        let k = KnownSpeed::load_from(Some(path), &machine());
        let e = k.earlier_runs(&new, "chase").unwrap();
        assert!(!e.earlier_build);
        assert_eq!(e.median_ns, [100.0, 101.0]);
    }

    #[test]
    fn only_so_many_speeds_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("speed.json");
        let k = KnownSpeed::load_from(Some(path.clone()), &machine());
        k.record(&file_with(&vec![3.0; KEEP + 50]));
        let k = KnownSpeed::load_from(Some(path), &machine());
        assert_eq!(k.ghz.len(), KEEP);
    }
}
