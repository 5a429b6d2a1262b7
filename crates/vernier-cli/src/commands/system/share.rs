//! How often a neighbour shared each core (`vernier system noise`): one thread pinned to the
//! CPU times both halves of the core-speed probe in alternation — one chain of dependent
//! additions (the clock) and the same additions over eight independent chains (the issue
//! width the thread had) — and the library's own rule (`analyze::speed::shared`) gives each
//! window's share of the core's best throughput, against the machine's known best ratio
//! (the ledger) or the best seen here. The CPUs are measured one after the other, so two of
//! ours on one physical core do not read each other as the neighbour.

use anyhow::{Context, Result};
use serde::Serialize;

use crate::host::affinity::pin_current_thread;
use vernier::analyze::speed::{shared, References, Sharing};
use vernier::samples::{Phase, Sample, Samples};

/// How long each CPU's windows last: half a second, two or more of a neighbour's stretches
/// (a quarter of a second to seconds on the cloud guests measured).
pub const SHARE_NS: u64 = 500_000_000;

/// A neighbour on one CPU's core.
#[derive(Debug, Clone, Serialize)]
pub struct CoreShare {
    pub cpu: usize,
    /// Windows of both probes timed.
    pub windows: usize,
    /// The best ratio of the probe's halves the shares are measured against, and whence
    /// (`known`: the machine's ledger; `probes`: the best seen here).
    pub best_ratio: f64,
    pub reference: &'static str,
    /// The median share of the core's best throughput over the windows (0–1).
    pub median_share: f64,
    /// The share of the windows taken with the core shared (below 1 / 1.1 of its best).
    pub shared_share: f64,
}

/// Time both probes in alternation on `cpu` for `duration_ns`.
pub fn measure(cpu: usize, duration_ns: u64, known: Option<f64>) -> Result<CoreShare> {
    pin_current_thread(cpu).with_context(|| format!("cannot pin a thread to CPU {cpu}"))?;
    let timer = vernier::timer::Timer::detect();
    let adds = vernier::plan::PROBE_ADDS;
    let mut s = Samples::default();
    let start = vernier::timer::monotonic_ns();
    let mut t = start;
    while t < start + duration_ns {
        let lat = vernier::workload::kernels::speed_probe(&timer, adds);
        let wide = vernier::workload::kernels::wide_probe(&timer, adds);
        t = vernier::timer::monotonic_ns();
        let sample = Sample {
            iters: 1,
            ns: lat,
            t_ns: t - start,
            process: 0,
            round: 0,
            phase: Phase::Measure,
        };
        s.push_batch(&[sample], &[]);
        s.set_probe(1, adds, Some(lat), Some(wide));
    }
    let ratios = shared::sample_ratios(&s, &timer.info());
    let refs = References {
        known_wide_ratio: known,
        ..References::default()
    };
    let own = shared::best_ratio(&ratios, &References::default());
    let best = shared::best_ratio(&ratios, &refs)
        .context("the core-speed probe could not be timed on this timer")?;
    let idx: Vec<usize> = (0..ratios.len()).collect();
    let sharing = Sharing::of(&idx, &ratios, best, own.map_or(best.0, |o| o.0));
    Ok(CoreShare {
        cpu,
        windows: ratios.len(),
        best_ratio: sharing.best_ratio,
        reference: sharing.reference.as_str(),
        median_share: sharing.core_share,
        shared_share: sharing.shared_share,
    })
}

/// The lines `vernier system noise` prints about it.
pub fn render(shares: &[CoreShare]) -> String {
    let mut out = String::from(
        "\ncore shared with a neighbour (the core-speed probe's throughput half against its clock half, one CPU at a time):\n",
    );
    for c in shares {
        out.push_str(&format!(
            "cpu {:>3}: shared in {:.0} % of {} windows, median throughput {:.0} % of the core's best (ratio {:.3}, {})\n",
            c.cpu,
            c.shared_share * 100.0,
            c.windows,
            c.median_share * 100.0,
            c.best_ratio,
            c.reference
        ));
    }
    if shares.iter().any(|c| c.shared_share >= 0.05) {
        out.push_str(
            "a neighbour takes a share of the core: throughput-bound code runs up to 1.7x slower while it does (`core-shared`); for figures to compare, use whole cores (a dedicated or bare-metal runner, a larger instance)\n",
        );
    }
    out
}
