//! Checkpoints around whole-program phases (`docs/experiments.md`): `checkpoint("name")`
//! closes the phase that began at the previous checkpoint and names it; `checkpoint_summary()`
//! prints each phase's time (the timer of the harness: the TSC where it is invariant) and share
//! of the total, with the kernel's software counters of the process over the phase (from
//! `getrusage`: CPU time, page faults, context switches — no perf permission needed; hardware
//! counters are not read). With `VERNIER_CHECKPOINTS_JSON=FILE` in the environment it also
//! writes the same as JSON. The first checkpoint marks the start and closes no phase.
//!
//! The C++ header has the same two functions (`vernier::checkpoint`,
//! `vernier::checkpoint_summary`) and writes the same JSON.

use crate::timer::Timer;
use std::sync::{Mutex, OnceLock};

/// The environment variable naming the JSON file `checkpoint_summary` writes.
pub const JSON_ENV: &str = "VERNIER_CHECKPOINTS_JSON";

/// The kernel's per-process counters at one instant (`getrusage(RUSAGE_SELF)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// User plus system CPU time, ns.
    pub cpu_ns: u64,
    /// Minor and major page faults.
    pub page_faults: u64,
    /// Voluntary and involuntary context switches.
    pub context_switches: u64,
}

impl Usage {
    pub fn now() -> Usage {
        let u = crate::os::usage::process();
        Usage {
            cpu_ns: u.cpu_ns,
            page_faults: u.page_faults,
            // Where the system counts none (Windows), the table's footer says so.
            context_switches: u.context_switches.unwrap_or(0),
        }
    }

    fn since(self, earlier: Usage) -> Usage {
        Usage {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            page_faults: self.page_faults.saturating_sub(earlier.page_faults),
            context_switches: self
                .context_switches
                .saturating_sub(earlier.context_switches),
        }
    }
}

/// One phase: from the previous checkpoint to the one that names it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Phase {
    pub name: String,
    pub ns: u64,
    /// Share of the total time of all phases (0–1).
    pub share: f64,
    pub counters: Usage,
}

/// What `VERNIER_CHECKPOINTS_JSON` receives.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub schema: u32,
    /// `tsc` or `monotonic`.
    pub timer: String,
    pub total_ns: u64,
    pub phases: Vec<Phase>,
}

struct State {
    timer: &'static Timer,
    last: Option<(u64, Usage)>,
    phases: Vec<(String, u64, Usage)>,
}

fn state() -> &'static Mutex<State> {
    static TIMER: OnceLock<Timer> = OnceLock::new();
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE.get_or_init(|| {
        Mutex::new(State {
            timer: TIMER.get_or_init(Timer::detect),
            last: None,
            phases: Vec::new(),
        })
    })
}

/// Close the phase since the previous checkpoint and call it `name` (the first call only
/// marks the start). Cheap: one clock read, one `getrusage`, one push.
pub fn checkpoint(name: &str) {
    let mut s = state().lock().unwrap_or_else(|e| e.into_inner());
    let t = s.timer.stop();
    let u = Usage::now();
    if let Some((t0, u0)) = s.last {
        let ns = s.timer.ticks_to_ns(t.wrapping_sub(t0));
        s.phases.push((name.to_string(), ns, u.since(u0)));
    }
    // The start of the next phase is read last, so this call's own work is not in it.
    let t = s.timer.start();
    s.last = Some((t, u));
}

/// The phases so far.
pub fn summary() -> Summary {
    let s = state().lock().unwrap_or_else(|e| e.into_inner());
    let total: u64 = s.phases.iter().map(|p| p.1).sum();
    Summary {
        schema: 1,
        timer: s.timer.kind().as_str().to_string(),
        total_ns: total,
        phases: s
            .phases
            .iter()
            .map(|(name, ns, u)| Phase {
                name: name.clone(),
                ns: *ns,
                share: if total > 0 {
                    *ns as f64 / total as f64
                } else {
                    0.0
                },
                counters: *u,
            })
            .collect(),
    }
}

/// The summary as a table: phase, time, share of the total, CPU time, page faults, context
/// switches.
pub fn table(s: &Summary) -> String {
    use crate::report::{format_ns, pad, text_width};
    let width = s
        .phases
        .iter()
        .map(|p| text_width(&p.name))
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!(
        "{:<width$}  {:>10}  {:>6}  {:>10}  {:>11}  {:>8}\n",
        "phase", "time", "share", "cpu", "page-faults", "ctx-sw"
    );
    for p in &s.phases {
        out += &format!(
            "{}  {:>10}  {:>5.1}%  {:>10}  {:>11}  {:>8}\n",
            pad(&p.name, width, false),
            format_ns(p.ns as f64),
            p.share * 100.0,
            format_ns(p.counters.cpu_ns as f64),
            p.counters.page_faults,
            p.counters.context_switches
        );
    }
    out += &format!(
        "{:<width$}  {:>10}  {:>5.1}%   (timer: {}; counters: {})\n",
        "total",
        format_ns(s.total_ns as f64),
        if s.phases.is_empty() { 0.0 } else { 100.0 },
        s.timer,
        crate::os::usage::SOURCE
    );
    out
}

/// Print the table of the phases on standard output and, with `VERNIER_CHECKPOINTS_JSON=FILE`,
/// write them to FILE as JSON. The error names the file that could not be written.
pub fn checkpoint_summary() -> Result<Summary, String> {
    let s = summary();
    print!("{}", table(&s));
    if let Some(path) = std::env::var_os(JSON_ENV) {
        let path = std::path::PathBuf::from(path);
        let json = serde_json::to_vec_pretty(&s).map_err(|e| e.to_string())?;
        crate::result::write_atomic(&path, &json).map_err(|e| {
            format!(
                "{JSON_ENV}={}: cannot write the checkpoints: {e}",
                path.display()
            )
        })?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_follow_the_work_they_enclose() {
        // Deterministic structure: a phase that faults in 8 MiB has more page faults than an
        // empty one, and takes a larger share. The memory is a fresh mapping in small pages,
        // so that each of its 2048 pages faults once when touched: an allocation could reuse
        // pages the allocator already holds, and the counters are the process's, which the
        // other tests' threads also fault in (a few, not thousands, between two checkpoints).
        const LEN: usize = 8 << 20;
        checkpoint("start");
        checkpoint("empty");
        let fresh = crate::os::pages::Fresh::new(LEN).expect("8 MiB of fresh memory");
        for i in (0..LEN).step_by(4096) {
            // SAFETY: inside the mapping, which lives until the end of the test.
            unsafe { std::ptr::write_volatile(fresh.as_ptr().add(i), 1) };
        }
        checkpoint("touch 8 MiB");
        drop(fresh);
        let s = summary();
        let empty = s.phases.iter().find(|p| p.name == "empty").unwrap();
        let touch = s.phases.iter().find(|p| p.name == "touch 8 MiB").unwrap();
        match crate::os::host::wine_version() {
            // Wine leaves GetProcessMemoryInfo's page-fault count at zero.
            Some(wine) => eprintln!("page faults not compared: Wine {wine} counts none"),
            None => assert!(touch.counters.page_faults > empty.counters.page_faults),
        }
        assert!(touch.ns > empty.ns);
        assert!(touch.share > empty.share);
        let t = table(&s);
        assert!(
            t.contains("touch 8 MiB") && t.contains("page-faults"),
            "{t}"
        );
    }
}
