//! One sample's counter values (absent when not counted, never zero), whether the sample was
//! interrupted, and the columns the engine keeps for a batch.

use super::Event;
use crate::samples::CounterColumn;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// The counter deltas of one sample. An event that was not opened, or whose group did not run
/// at all during the sample, has no value (`None`), never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CounterSample {
    values: [Option<u64>; Event::COUNT],
    /// Bit `e as usize` set: the value of `e` was scaled for multiplexing (an estimate).
    scaled: u16,
}

impl CounterSample {
    /// The delta of `event` in this sample, if it was counted.
    pub fn get(&self, event: Event) -> Option<u64> {
        self.values[event.index()]
    }

    /// Set (or clear) the value of `event`.
    pub fn set(&mut self, event: Event, value: Option<u64>, scaled: bool) {
        self.values[event.index()] = value;
        let bit = 1u16 << event.index();
        if scaled && value.is_some() {
            self.scaled |= bit;
        } else {
            self.scaled &= !bit;
        }
    }

    /// Whether the value of `event` was scaled (the PMU multiplexed its group).
    pub fn is_scaled(&self, event: Event) -> bool {
        self.scaled & (1 << event.index()) != 0
    }

    /// Whether any value of this sample was scaled.
    pub fn any_scaled(&self) -> bool {
        self.scaled != 0
    }

    /// The events that have a value, in [`Event::ALL`] order.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        Event::ALL
            .iter()
            .copied()
            .filter(move |e| self.values[e.index()].is_some())
    }

    /// This sample minus a baseline (e.g. the counters' own read cost), per event, saturating
    /// at 0. Events absent from either stay absent.
    pub fn saturating_sub(&self, baseline: &CounterSample) -> CounterSample {
        let mut out = *self;
        for e in Event::ALL {
            out.values[e.index()] = match (self.get(e), baseline.get(e)) {
                (Some(v), Some(b)) => Some(v.saturating_sub(b)),
                _ => None,
            };
        }
        out
    }
}

/// Serialized as a map from event name to value, counted events only (in [`Event::ALL`]
/// order); the scaled flags are not part of it.
impl Serialize for CounterSample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for e in self.events() {
            map.serialize_entry(e.name(), &self.get(e))?;
        }
        map.end()
    }
}

/// Whether the thread was switched out or migrated during the sample:
/// `context-switches > 0 || cpu-migrations > 0`. `None` when neither event was counted, since
/// an unknown is not a "no".
pub fn is_interrupted(sample: &CounterSample) -> Option<bool> {
    interrupted_by(
        sample.get(Event::ContextSwitches).map(|v| v as f64),
        sample.get(Event::CpuMigrations).map(|v| v as f64),
    )
}

/// The rule of [`is_interrupted`] on the two counts (less any baseline), as the analysis
/// applies it to a stored sample: `None` when neither was counted.
pub fn interrupted_by(context_switches: Option<f64>, migrations: Option<f64>) -> Option<bool> {
    match (context_switches, migrations) {
        (None, None) => None,
        (cs, mig) => Some(cs.unwrap_or(0.0) > 0.0 || mig.unwrap_or(0.0) > 0.0),
    }
}

/// A batch of samples' counters as the engine's columns (`Batch::counters`): one column per
/// event of `events` counted in at least one sample, in the order given; a sample in which the
/// event was not counted has no value (`None`, never 0); scaled values are flagged.
pub fn to_columns(events: &[Event], samples: &[CounterSample]) -> Vec<CounterColumn> {
    let mut out = Vec::new();
    if samples.is_empty() {
        return out;
    }
    for &e in events {
        if samples.iter().all(|s| s.get(e).is_none()) {
            continue;
        }
        let scaled = if samples.iter().any(|s| s.is_scaled(e)) {
            samples.iter().map(|s| s.is_scaled(e)).collect()
        } else {
            Vec::new()
        };
        out.push(CounterColumn {
            event: e.name().to_string(),
            values: samples.iter().map(|s| s.get(e)).collect(),
            scaled,
        });
    }
    out
}
