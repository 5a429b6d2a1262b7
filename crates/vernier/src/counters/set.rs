//! The counters of the calling thread as the engine uses them: opened as (at most) one
//! hardware and one software group, read around each sample, and the cost of those reads.

use super::notes::does_not_fit;
use super::read::Group;
use super::sys::read_group;
use super::{
    group_delta, unavailable_note, CounterSample, Environment, Event, EventKind, Unavailable,
};
use serde::Serialize;

/// The cost of reading the counters, measured with nothing between the reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ReadCost {
    /// Wall time of one `read_start` + `read_stop` pair, median over batches, in ns.
    pub ns: f64,
    /// Each event's median delta over an empty region: what the reads themselves add to every
    /// sample (subtract it like the timer's overhead).
    pub baseline: CounterSample,
    /// Reads per side of the region (one per group).
    pub reads_per_side: usize,
}

/// Pairs of reads used to measure the read cost.
pub const READ_COST_PROBES: usize = 2_000;
/// Pairs timed together, so the clock's own cost is spread over many pairs.
const READ_COST_PAIRS_PER_BATCH: usize = 16;

/// The counters of the calling thread, opened as (at most) one hardware and one software group.
///
/// Not `Send`: counters count the thread that opened them.
#[derive(Debug)]
pub struct CounterSet {
    software: Option<Group>,
    hardware: Option<Group>,
    events: Vec<Event>,
    unavailable: Vec<Unavailable>,
    /// Cleared when a read fails: the sample then has no values.
    ok: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl CounterSet {
    /// Open `events` for the calling thread. Never fails as a whole: what cannot be opened is
    /// listed by [`CounterSet::unavailable`] (and explained by [`CounterSet::note`]).
    pub fn open(events: &[Event]) -> CounterSet {
        CounterSet::open_in(events, &Environment::detect())
    }

    /// [`CounterSet::open`] with a given environment (for the failure explanations).
    pub fn open_in(events: &[Event], env: &Environment) -> CounterSet {
        let mut unique: Vec<Event> = Vec::new();
        for &e in events {
            if !unique.contains(&e) {
                unique.push(e);
            }
        }
        let mut unavailable = Vec::new();
        let sw: Vec<Event> = unique
            .iter()
            .copied()
            .filter(|e| e.kind() == EventKind::Software)
            .collect();
        let mut hw: Vec<Event> = unique
            .iter()
            .copied()
            .filter(|e| e.kind() == EventKind::Hardware)
            .collect();
        let software = Group::open(&sw, env, &mut unavailable);
        let mut hardware = None;
        while !hw.is_empty() {
            let mut failed = Vec::new();
            let Some(mut g) = Group::open(&hw, env, &mut failed) else {
                unavailable.extend(failed);
                break;
            };
            if g.runs() {
                unavailable.extend(failed);
                hardware = Some(g);
                break;
            }
            // Too many events for the PMU: drop the last one that opened and try again.
            let dropped = *g.events.last().expect("a group has a leader");
            drop(g);
            hw.retain(|&e| e != dropped);
            unavailable.push(does_not_fit(dropped, "the group never ran"));
        }
        unavailable.sort_by_key(|u| u.event);
        let mut opened: Vec<Event> = Vec::new();
        for g in [&software, &hardware].into_iter().flatten() {
            opened.extend(&g.events);
        }
        opened.sort();
        CounterSet {
            software,
            hardware,
            events: opened,
            unavailable,
            ok: true,
            _not_send: std::marker::PhantomData,
        }
    }

    /// The events that are being read, in [`Event::ALL`] order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// What could not be opened, and why.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.unavailable
    }

    /// The note for the user about unavailable events (see [`unavailable_note`]).
    pub fn note(&self) -> Option<String> {
        unavailable_note(&self.unavailable)
    }

    /// Whether nothing at all is being read.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// `read(2)` calls on each side of the region (one per open group).
    pub fn reads_per_side(&self) -> usize {
        self.software.is_some() as usize + self.hardware.is_some() as usize
    }

    /// Read every group just before the timer starts (software first, hardware closest to
    /// the timer).
    #[inline(always)]
    pub fn read_start(&mut self) {
        let mut ok = true;
        if let Some(g) = &mut self.software {
            ok &= read_group(g.fds[0], &mut g.start);
        }
        if let Some(g) = &mut self.hardware {
            ok &= read_group(g.fds[0], &mut g.start);
        }
        self.ok = ok;
    }

    /// Read every group just after the timer stops (hardware first).
    #[inline(always)]
    pub fn read_stop(&mut self) {
        let mut ok = self.ok;
        if let Some(g) = &mut self.hardware {
            ok &= read_group(g.fds[0], &mut g.stop);
        }
        if let Some(g) = &mut self.software {
            ok &= read_group(g.fds[0], &mut g.stop);
        }
        self.ok = ok;
    }

    /// The deltas between the last `read_start` and `read_stop`. Events whose reads failed or
    /// whose group never ran during the region have no value.
    pub fn sample(&self) -> CounterSample {
        let mut s = CounterSample::default();
        if !self.ok {
            return s;
        }
        for g in [&self.software, &self.hardware].into_iter().flatten() {
            if group_delta(&g.events, &g.start, &g.stop, g.ids.as_deref(), &mut s).is_err() {
                for &e in &g.events {
                    s.set(e, None, false);
                }
            }
        }
        s
    }

    /// Measure the cost of the reads: [`READ_COST_PROBES`] start/stop pairs with nothing
    /// between them.
    pub fn read_cost(&mut self) -> ReadCost {
        self.read_cost_with(READ_COST_PROBES, || {})
    }

    /// Measure the cost of the reads with `inner` between them (e.g. the timer's start and
    /// stop, to get the counts an empty timed region carries), over `probes` pairs.
    pub fn read_cost_with(&mut self, probes: usize, mut inner: impl FnMut()) -> ReadCost {
        let probes = probes.max(READ_COST_PAIRS_PER_BATCH);
        // Warm the path (page in the buffers, the syscall entry).
        for _ in 0..READ_COST_PAIRS_PER_BATCH {
            self.read_start();
            inner();
            self.read_stop();
        }
        let batches = probes / READ_COST_PAIRS_PER_BATCH;
        let mut per_pair = Vec::with_capacity(batches);
        for _ in 0..batches {
            let t0 = crate::timer::monotonic_ns();
            for _ in 0..READ_COST_PAIRS_PER_BATCH {
                self.read_start();
                inner();
                self.read_stop();
            }
            let t1 = crate::timer::monotonic_ns();
            per_pair.push((t1 - t0) as f64 / READ_COST_PAIRS_PER_BATCH as f64);
        }
        let mut columns: Vec<Vec<u64>> = (0..Event::COUNT)
            .map(|_| Vec::with_capacity(probes))
            .collect();
        for _ in 0..probes {
            self.read_start();
            inner();
            self.read_stop();
            let s = self.sample();
            for e in s.events() {
                columns[e.index()].push(s.get(e).unwrap_or(0));
            }
        }
        let mut baseline = CounterSample::default();
        for e in self.events.clone() {
            let col = &mut columns[e.index()];
            if col.len() * 2 > probes {
                col.sort_unstable();
                baseline.set(e, Some(col[col.len() / 2]), false);
            }
        }
        per_pair.sort_by(|a, b| a.total_cmp(b));
        ReadCost {
            ns: per_pair.get(per_pair.len() / 2).copied().unwrap_or(0.0),
            baseline,
            reads_per_side: self.reads_per_side(),
        }
    }
}
