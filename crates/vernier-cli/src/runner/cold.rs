//! `vernier run --cache cold`: the caches are evicted before every sample, outside the timed
//! region (the protocol's `cache=cold` run option; the worker walks a buffer of twice the
//! last-level cache), and each sample is one iteration, so every sample starts cold. The timer's
//! own cost is then part of every sample: it is stated after the table, with each benchmark's
//! median less that cost.

use crate::runner::worker::Control;
use vernier::plan::Plan;
use vernier::report::format_ns;
use vernier::result::ResultFile;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheMode {
    Hot,
    Cold,
}

impl CacheMode {
    /// The mode as the option spells it (`hot`, `cold`).
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Hot => "hot",
            CacheMode::Cold => "cold",
        }
    }
}

/// Set the plan and the workers' run options for `mode`.
pub fn apply(mode: CacheMode, plan: &mut Plan, ctl: &mut Control) {
    if mode == CacheMode::Cold {
        plan.fixed_iters = Some(1);
        ctl.run_options.push(("cache".into(), "cold".into()));
    }
}

/// What cold caches mean for the figures of `file`, after the table.
pub fn note(mode: CacheMode, file: &ResultFile) {
    if mode != CacheMode::Cold {
        return;
    }
    let (llc, source) = vernier::workload::cache::llc_bytes();
    let timer = file.timer.overhead_ns;
    let mut text = format!(
        "cache cold: before every sample the worker walked a {} MiB buffer ({}× the last-level \
         cache of {} MiB, from {source}), outside the timed region; one iteration per sample, so \
         each figure includes the timer's own cost, {} per sample (measured by the worker at \
         start-up); the linearity and optimized-away checks do not apply (only a sample's first \
         iteration is cold). Less that cost:",
        (llc * vernier::workload::cache::EVICT_FACTOR) >> 20,
        vernier::workload::cache::EVICT_FACTOR,
        llc >> 20,
        format_ns(timer)
    );
    for b in &file.benchmarks {
        let m = b.per_iter.median_ns;
        if m.is_finite() {
            text += &format!(" {} {};", b.name, format_ns((m - timer).max(0.0)));
        }
    }
    text.pop();
    println!("{text}");
}
