//! The ledger's known speed: the last [`KEEP`] fast-state speeds (GHz-equivalent) that runs on
//! this machine measured, one per benchmark. The known speed is their [`KNOWN_QUANTILE`]
//! quantile once there are [`MIN_RUNS`] of them: a high quantile, not the maximum, so that one
//! lucky burst of turbo does not make every later run look slow. Once there are
//! [`MIN_CLOCK_RUNS`], their range is the clock's ([`Ledger::clock_ghz`]).

use super::{Ledger, Store};
use crate::result::ResultFile;

/// Speeds kept per machine.
pub const KEEP: usize = 200;
/// The known speed is this quantile of the kept speeds.
pub const KNOWN_QUANTILE: f64 = 0.9;
/// Fewest kept speeds before the known speed is used.
pub const MIN_RUNS: usize = 5;
/// The known best ratio of the probe's halves is this quantile of the runs' best ratios (the
/// order statistic below it): with fewer than 21 runs, the lowest; with the 200 kept, the
/// tenth lowest.
pub const RATIO_QUANTILE: f64 = 0.05;
/// Fewest kept speeds before their range widens intervals. One is kept per benchmark: more
/// than one demo's worth, so that a single run's benchmarks, all measured in one state, do not
/// stand for the machine's range.
pub const MIN_CLOCK_RUNS: usize = 20;

impl Ledger {
    /// Whether the ledger holds a run of this machine already (the legend and the machine's
    /// lines are given in full on its first run).
    pub fn seen_before(&self) -> bool {
        !self.sorted_ghz().is_empty()
    }

    /// The known speed as a cycle time (ns per addition), once enough runs were recorded.
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

    /// The machine's known best ratio of the core-speed probe's two halves (time per addition
    /// of eight independent chains over one dependent chain's): a low quantile
    /// ([`RATIO_QUANTILE`]) of the runs' best ratios, from the first run on. Each run's is
    /// itself robust (the ratio of two fastest times at start-up, or a running median of five
    /// probed batches), and only a neighbour raises it, so the lowest is the whole core; the
    /// quantile keeps one wrong reading from setting the bar.
    pub fn known_wide_ratio(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .wide_ratios
            .iter()
            .copied()
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        // An order statistic, not an interpolation: a reading runs measured.
        let v = crate::stats::sorted(&v);
        let at = ((v.len().max(1) - 1) as f64 * RATIO_QUANTILE) as usize;
        v.get(at).copied()
    }

    /// Add the best ratio of the probe's halves `file` measured (its start-up calibration's and
    /// its benchmarks' own, the lowest); whether there was one.
    pub(super) fn add_wide_ratio(&self, store: &mut Store, file: &ResultFile) -> bool {
        let best = file
            .benchmarks
            .iter()
            .filter_map(|b| b.speed.as_ref()?.wide_ratio)
            .chain(file.harness.wide_ratio)
            .filter(|r| r.is_finite() && *r > 0.0)
            .fold(f64::INFINITY, f64::min);
        if !best.is_finite() {
            return false;
        }
        keep_last(
            store.wide_ratios.entry(self.key.clone()).or_default(),
            [best],
        );
        true
    }

    /// Add the fast-state speeds of `file`'s benchmarks (those with a figure in the fast
    /// state) and write the file back. Errors are ignored: the file is a cache.
    #[cfg(test)]
    pub(super) fn record(&self, file: &ResultFile) {
        self.update(|store| self.add_speeds(store, file));
    }

    /// Add the fast-state speeds of `file`'s benchmarks; whether there was any.
    pub(super) fn add_speeds(&self, store: &mut Store, file: &ResultFile) -> bool {
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
        keep_last(store.machines.entry(self.key.clone()).or_default(), new);
        true
    }
}

/// Append `new` to `v` and keep its last [`KEEP`].
fn keep_last(v: &mut Vec<f64>, new: impl IntoIterator<Item = f64>) {
    v.extend(new);
    let excess = v.len().saturating_sub(KEEP);
    v.drain(..excess);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{file_with, machine};
    use super::*;

    #[test]
    fn the_known_speed_is_a_high_quantile_of_the_recorded_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("ledger.json");
        let k = Ledger::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_cycle_ns(), None);
        // Four runs are not enough.
        k.record(&file_with(&[3.0, 3.9, 4.0, 3.95]));
        let k = Ledger::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_cycle_ns(), None);
        // Eleven: 3.0 ... and a lucky 5.0 does not set the bar.
        k.record(&file_with(&[4.0, 3.9, 4.0, 4.0, 3.95, 4.0, 5.0]));
        let k = Ledger::load_from(Some(path.clone()), &machine());
        let ghz = 1.0 / k.known_cycle_ns().unwrap();
        assert!((ghz - 4.0).abs() < 1e-9, "{ghz}");
        // Another machine's entry is its own.
        let mut other = machine();
        other.cpu_model = "other".into();
        assert_eq!(
            Ledger::load_from(Some(path.clone()), &other).known_cycle_ns(),
            None
        );
        // A damaged file is ignored, and rewritten by the next record.
        std::fs::write(&path, b"{not json").unwrap();
        let k = Ledger::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_cycle_ns(), None);
        k.record(&file_with(&[4.0]));
        assert!(serde_json::from_slice::<Store>(&std::fs::read(&path).unwrap()).is_ok());
    }

    #[test]
    fn the_clock_range_needs_many_runs_and_spans_the_slowest_fast_state_to_the_fastest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        let k = Ledger::load_from(Some(path.clone()), &machine());
        // One demo's worth, all in one state, does not stand for the machine.
        k.record(&file_with(&[3.8; MIN_CLOCK_RUNS - 1]));
        let k = Ledger::load_from(Some(path.clone()), &machine());
        assert_eq!(k.clock_ghz(), None);
        // 3.6, 3.61, ..., 3.99 (and the 3.8s): the slowest and the fastest.
        let spread: Vec<f64> = (0..40).map(|i| 3.6 + 0.01 * i as f64).collect();
        k.record(&file_with(&spread));
        let k = Ledger::load_from(Some(path.clone()), &machine());
        let [lo, hi] = k.clock_ghz().unwrap();
        assert!((lo - 3.6).abs() < 1e-9, "{lo}");
        assert!((hi - 3.99).abs() < 1e-9, "{hi}");
        // Runs wholly in a slow state (1.85x) are core-slowed, not the clock's range.
        k.record(&file_with(&[2.1, 2.05]));
        let k = Ledger::load_from(Some(path), &machine());
        let [lo, _] = k.clock_ghz().unwrap();
        assert!((lo - 3.6).abs() < 1e-9, "{lo}");
    }

    #[test]
    fn the_known_best_ratio_is_the_lowest_runs_measured_from_the_first_run_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        let k = Ledger::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_wide_ratio(), None);
        // A run whose start-up was shared (0.41) but whose benchmark saw the whole core once.
        let mut f = file_with(&[3.0]);
        f.harness.wide_ratio = Some(0.41);
        f.benchmarks[0].speed.as_mut().unwrap().wide_ratio = Some(0.26);
        k.record_run(&f, None);
        let k = Ledger::load_from(Some(path.clone()), &machine());
        assert_eq!(k.known_wide_ratio(), Some(0.26));
        // Runs wholly shared later do not raise it.
        for _ in 0..10 {
            let mut f = file_with(&[]);
            f.harness.wide_ratio = Some(0.44);
            k.record_run(&f, None);
        }
        let k = Ledger::load_from(Some(path), &machine());
        assert_eq!(k.known_wide_ratio(), Some(0.26));
        assert_eq!(k.wide_ratios.len(), 11);
    }

    #[test]
    fn only_so_many_speeds_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        let k = Ledger::load_from(Some(path.clone()), &machine());
        k.record(&file_with(&vec![3.0; KEEP + 50]));
        let k = Ledger::load_from(Some(path), &machine());
        assert_eq!(k.ghz.len(), KEEP);
    }
}
