//! One benchmark measured: its policy (main batches at N alternating with the linearity
//! ladder, stopped by the median's interval on the steady part) and [`measure`], which runs
//! the state machine on it.

use super::*;

/// The policy of one benchmark: main batches at N alternate with the linearity ladder; the
/// rule is the median's interval on the steady part of the main series.
pub(super) struct Single<'p> {
    plan: &'p Plan,
    samples: Samples,
    /// Indices of the main series' samples.
    main_idx: Vec<usize>,
    main_batch: usize,
    turn: usize,
    /// The batch of the current round is a main one, at this count.
    main: Option<u64>,
}

impl Policy for Single<'_> {
    fn order(&mut self) -> Vec<usize> {
        vec![0]
    }

    fn collect(&mut self, _: &[usize], at: &Round) -> Vec<Ask> {
        let n = at.iters;
        let remaining = at.budget_ns.saturating_sub(at.elapsed_ns) as f64;
        let cap_by_time =
            (at.budget_ns as f64 * MAX_BATCH_FRACTION / at.est_sample_ns).max(1.0) as usize;
        let fits = (remaining / at.est_sample_ns).ceil().max(1.0) as usize;
        let is_main = self.turn.is_multiple_of(2);
        let (iters, count) = if is_main {
            (n, self.main_batch.min(cap_by_time).min(fits).max(1))
        } else {
            let (num, den) = LADDER[(self.turn / 2) % LADDER.len()];
            ((n * num / den).max(1), LADDER_SAMPLES)
        };
        self.turn += 1;
        self.main = is_main.then_some(n);
        vec![Ask {
            side: 0,
            iters,
            count,
            phase: Phase::Warmup,
            probe_adds: 0,
        }]
    }

    fn record(&mut self, ask: &Ask, batch: &Batch, end_ns: u64) -> Result<(), String> {
        // Each sample ends where the next begins, the last at the batch's end.
        let mut t = end_ns;
        let mut new: Vec<Sample> = batch
            .ns
            .iter()
            .rev()
            .map(|&ns| {
                let s = Sample {
                    iters: ask.iters,
                    ns,
                    t_ns: t,
                    process: 0,
                    round: 0,
                    phase: ask.phase,
                };
                t = t.saturating_sub(ns);
                s
            })
            .collect();
        new.reverse();
        let first = self.samples.len();
        self.samples.push_batch(&new, &batch.counters);
        self.samples
            .set_probe(new.len(), batch.probe_adds, batch.probe_ns, batch.wide_ns);
        let cols = [
            &batch.thread_ns[..],
            &batch.thread_cpu_ns[..],
            &batch.thread_wait_ns[..],
        ];
        self.samples.push_threads(new.len(), cols, batch.cpus);
        if ask.phase != Phase::Calibration && self.main.is_some() {
            self.main_idx.extend(first..self.samples.len());
        }
        Ok(())
    }

    fn end_round(&mut self, end_ns: u64) -> Look {
        let Some(n) = self.main.take() else {
            return Look::default();
        };
        let plan = self.plan;
        self.main_batch = (self.main_idx.len() / 4).max(MIN_MAIN_BATCH);
        let series = self.main_series();
        let mut look = Look {
            est_sample_ns: Some(
                stats::median(&series[series.len().saturating_sub(64)..]) * n as f64,
            ),
            ..Look::default()
        };
        if let Some(st) = steady::detect(&series) {
            if st.class != WarmupClass::NoSteadyState
                && series.len() - st.first >= plan.min_steady_samples
            {
                let ci = stats::median_interval(&series[st.first..]);
                look.rel_ci = Some(ci.rel_half_width());
                let span = plan.min_time_ns.max(plan.min_span_ns);
                look.precise = end_ns >= span && ci.rel_half_width() <= plan.target_rel_ci;
            }
        }
        look
    }
}

impl<'p> Single<'p> {
    pub(super) fn new(plan: &'p Plan) -> Self {
        Single {
            plan,
            samples: Samples::default(),
            main_idx: Vec::new(),
            main_batch: MIN_MAIN_BATCH,
            turn: 0,
            main: None,
        }
    }

    fn main_series(&self) -> Vec<f64> {
        self.main_idx
            .iter()
            .map(|&i| self.samples.samples[i].per_iter_ns())
            .collect()
    }
}

/// Run the state machine on one target.
pub fn measure(
    target: &mut dyn Target,
    clock: &dyn WallClock,
    plan: &Plan,
    timer: &TimerInfo,
    on_progress: &mut dyn FnMut(&Progress),
) -> Measurement {
    let prepared = target.prepare();
    let start = clock.now_ns();
    let policy = Single::new(plan);
    let calibration = Calibration::new(
        plan.min_sample_ns(timer),
        plan.max_iters,
        plan.fixed_iters,
        plan.time_budget_ns,
    )
    .starting_at(plan.start_iters);
    let limits = Limits {
        budget_ns: plan.time_budget_ns,
        calibration_samples: plan.calibration_samples,
        probe_adds: plan.probe_adds,
    };
    let mut sampler = Sampler::new(policy, clock, start, calibration, limits);
    let started = match prepared {
        Ok(()) => true,
        Err(e) => {
            sampler.fail(0, e);
            false
        }
    };
    let stop = sampler.run(&mut [target], on_progress);
    let wall_ns = sampler.elapsed_ns();
    // Short of a calibrated count, the count calibration had reached.
    let calibration = sampler
        .calibrated()
        .map_or(CalibrationEnd::NotEnded, |c| c.end);
    let iters_per_sample = match sampler.calibrated() {
        Some(c) => c.iters,
        None if started => sampler.calibration().iters,
        None => 1,
    };
    let error = sampler.take_error().map(|(_, e)| e);
    let policy = sampler.into_policy();

    // Final steady-state decision on the main series, and the phases that follow from it.
    let series = policy.main_series();
    let Single {
        mut samples,
        main_idx,
        ..
    } = policy;
    let steady = steady::detect(&series);
    let first_steady = match steady {
        Some(st) if st.first < main_idx.len() => main_idx[st.first],
        Some(_) => samples.len(),
        None => main_idx.first().copied().unwrap_or(samples.len()),
    };
    samples.set_warmup_cut(first_steady);
    Measurement {
        samples,
        iters_per_sample,
        wall_ns,
        stop,
        steady,
        error,
        calibration,
    }
}
