//! The ledger: the machine's record of what earlier runs on it read, in one small file. It
//! holds, per machine (hostname and CPU model), two things:
//!
//! - the core's known speed ([`speed`]): the fast-state speeds that earlier runs measured
//!   (the core-speed probe, [`crate::analyze::speed`]), so a run spent wholly in a slow state —
//!   which its own probes cannot reveal — is measured against what the machine does when it is
//!   not held back (`core-slowed`, reference `known`), and their range is the clock's;
//! - the core's known best throughput ([`speed`]): the best ratio of the core-speed probe's
//!   two halves runs measured, so a run spent wholly with the core shared by a neighbour is
//!   measured against the whole core (`core-shared`);
//! - the earlier runs ([`earlier`]): per program ([`program_identity`]) and benchmark, the
//!   medians of its recent runs, what the same code read here lately, which the next run's
//!   interval is joined to (the result file's `earlier_runs`, [`crate::result::earlier_runs`]).
//!
//! The file is `$VERNIER_LEDGER`, else `$XDG_CACHE_HOME/vernier/ledger.json`, else
//! `~/.cache/vernier/ledger.json`; `VERNIER_LEDGER=none` turns it off. It was called the speed
//! file before: when `VERNIER_LEDGER` is not set, `VERNIER_SPEED_FILE` is read as it was
//! ([`FORMER_ENV`]), and where `ledger.json` does not exist yet, the `core-speed.json` beside
//! it is read ([`FORMER_NAME`]); the next write goes to `ledger.json`. A file that cannot be
//! read or written is ignored (the run goes on, measured against its own probes and its
//! start-up speed only, its interval its own).
//!
//! `vernier run`, `vernier demo` and a Rust suite run standalone (`cargo bench`,
//! [`crate::Suite::try_finish`]) read and add to it; a standalone run of an executable and
//! `vernier run -- EXECUTABLE` (no arguments, hot caches) are the same program.

pub mod earlier;
mod identity;
pub mod speed;

pub use identity::{
    env_not_counted, fnv1a, program_identity, program_identity_in, ENV_NOT_COUNTED,
};

use crate::machine::Machine;
use crate::result::ResultFile;
use earlier::Earlier;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable naming the file (`none`: no file).
pub const ENV: &str = "VERNIER_LEDGER";
/// The variable that named the file before [`ENV`], read when [`ENV`] is not set.
pub const FORMER_ENV: &str = "VERNIER_SPEED_FILE";
/// The file's name in the cache home.
pub const NAME: &str = "ledger.json";
/// The file's name in the cache home before [`NAME`], read while there is no [`NAME`].
pub const FORMER_NAME: &str = "core-speed.json";

/// The file as stored.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    /// machine key → fast-state speeds, GHz-equivalent, oldest first.
    machines: BTreeMap<String, Vec<f64>>,
    /// machine, program and benchmark → the medians of its recent runs.
    #[serde(default)]
    earlier: BTreeMap<String, Earlier>,
    /// machine key → the best ratios of the core-speed probe's two halves that runs on it
    /// measured, one per run, oldest first ([`speed`]).
    #[serde(default)]
    wide_ratios: BTreeMap<String, Vec<f64>>,
}

/// Where the ledger is: the file written, and the file of the former name read while the
/// first does not exist.
#[derive(Clone, Debug, PartialEq)]
struct Place {
    path: PathBuf,
    former: Option<PathBuf>,
}

impl Place {
    fn at(path: PathBuf) -> Place {
        Place { path, former: None }
    }

    /// The file to read: [`Place::path`], else the former file while it alone exists.
    fn to_read(&self) -> &Path {
        match &self.former {
            Some(f) if !self.path.exists() && f.exists() => f,
            _ => &self.path,
        }
    }
}

/// Where the ledger is, from the variables [`ENV`] and [`FORMER_ENV`] and the cache home
/// (`None`: turned off, or no home to keep it in).
fn place(
    ledger: Option<OsString>,
    former: Option<OsString>,
    cache_home: Option<PathBuf>,
) -> Option<Place> {
    match ledger.or(former) {
        Some(v) if v == "none" => None,
        Some(v) => Some(Place::at(PathBuf::from(v))),
        None => {
            let dir = cache_home?.join("vernier");
            Some(Place {
                path: dir.join(NAME),
                former: Some(dir.join(FORMER_NAME)),
            })
        }
    }
}

/// [`place`] from this process's environment.
fn default_place() -> Option<Place> {
    let cache_home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
    place(
        std::env::var_os(ENV),
        std::env::var_os(FORMER_ENV),
        cache_home,
    )
}

fn read(place: Option<&Place>) -> Store {
    place
        .and_then(|p| std::fs::read(p.to_read()).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write(path: &Path, store: &Store) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(bytes) = serde_json::to_vec(store) {
        let _ = crate::result::write_atomic(path, &bytes);
    }
}

/// The ledger as loaded for this machine: its known speed and earlier runs, and where to
/// record this run's.
pub struct Ledger {
    place: Option<Place>,
    key: String,
    ghz: Vec<f64>,
    wide_ratios: Vec<f64>,
    earlier: BTreeMap<String, Earlier>,
}

impl Ledger {
    /// This machine's entries of the default file.
    pub fn load(machine: &Machine) -> Ledger {
        Ledger::load_at(default_place(), machine)
    }

    fn load_at(place: Option<Place>, machine: &Machine) -> Ledger {
        let key = format!("{}/{}", machine.hostname, machine.cpu_model);
        let mut store = read(place.as_ref());
        let ghz = store.machines.remove(&key).unwrap_or_default();
        let wide_ratios = store.wide_ratios.remove(&key).unwrap_or_default();
        Ledger {
            place,
            key,
            ghz,
            wide_ratios,
            earlier: store.earlier,
        }
    }

    /// This machine's entries of the file at `path`.
    #[cfg(test)]
    fn load_from(path: Option<PathBuf>, machine: &Machine) -> Ledger {
        Ledger::load_at(path.map(Place::at), machine)
    }

    /// Whether there is a file to read and record runs in (not `VERNIER_LEDGER=none`, and a
    /// place for it).
    pub fn in_use(&self) -> bool {
        self.place.is_some()
    }

    /// Both records of a run in one read and one write of the file: its fast-state speeds and,
    /// under `program`, its medians worth keeping (`crate::result::earlier_runs`).
    pub fn record_run(&self, file: &ResultFile, program: Option<&str>) {
        self.update(|store| {
            let speeds = self.add_speeds(store, file) | self.add_wide_ratio(store, file);
            let medians = program.is_some_and(|p| self.add_medians(store, p, file));
            speeds || medians
        });
    }

    /// Read the file again (another run may have written since this one started), apply
    /// `change`, and write it back when it changed anything. Errors are ignored: the file is
    /// a cache.
    fn update(&self, change: impl FnOnce(&mut Store) -> bool) {
        let Some(place) = &self.place else {
            return;
        };
        let mut store = read(Some(place));
        if change(&mut store) {
            write(&place.path, &store);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn machine() -> Machine {
        let mut m = Machine::detect();
        m.hostname = "h".into();
        m.cpu_model = "cpu".into();
        m
    }

    pub(super) fn file_with(ghz: &[f64]) -> ResultFile {
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
                core_share: None,
                shared_share: None,
                wide_ratio_best: None,
                wide_ratio_reference: None,
                wide_ratio: None,
            });
            f.benchmarks.push(b);
        }
        f
    }

    #[test]
    fn the_ledger_variable_wins_then_the_former_one_then_the_cache_home() {
        let os = |s: &str| Some(OsString::from(s));
        let home = Some(PathBuf::from("/c"));
        assert_eq!(
            place(os("/l.json"), os("/s.json"), home.clone()),
            Some(Place::at("/l.json".into()))
        );
        assert_eq!(place(os("none"), os("/s.json"), home.clone()), None);
        // Scripts that name the file the former way keep their file, or keep it off.
        assert_eq!(
            place(None, os("/s.json"), home.clone()),
            Some(Place::at("/s.json".into()))
        );
        assert_eq!(place(None, os("none"), home.clone()), None);
        assert_eq!(
            place(None, None, home),
            Some(Place {
                path: "/c/vernier/ledger.json".into(),
                former: Some("/c/vernier/core-speed.json".into()),
            })
        );
        assert_eq!(place(None, None, None), None);
    }

    #[test]
    fn a_cache_home_with_only_the_former_file_reads_it_and_writes_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let at = place(None, None, Some(dir.path().to_path_buf())).unwrap();
        let former = dir.path().join("vernier").join(FORMER_NAME);
        Ledger::load_from(Some(former.clone()), &machine()).record(&file_with(&[4.0; 5]));
        let before = std::fs::read(&former).unwrap();
        let l = Ledger::load_at(Some(at.clone()), &machine());
        assert_eq!(l.ghz, [4.0; 5], "the former file is read");
        l.record(&file_with(&[3.0]));
        assert_eq!(
            std::fs::read(&former).unwrap(),
            before,
            "and left as it was"
        );
        // The next write went to the ledger, with what the former file held; from then on
        // the ledger is read.
        let l = Ledger::load_at(Some(at), &machine());
        assert_eq!(l.ghz, [4.0, 4.0, 4.0, 4.0, 4.0, 3.0]);
        assert!(dir.path().join("vernier").join(NAME).exists());
    }
}
