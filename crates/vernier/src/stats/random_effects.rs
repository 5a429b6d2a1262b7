//! The random-effects interval over process pairs: one log-ratio per OLD/NEW pair, combined
//! with weights that include the spread between pairs, so the interval covers what differs
//! from one pair of processes to the next (layout, CPU, the machine's state).

use crate::stats::student::{student_t_quantile, student_t_sf};

/// Power the "smallest detectable change" is defined for: a change this large is found in 80 %
/// of runs like this one.
pub const DETECTION_POWER: f64 = 0.8;

/// A random-effects estimate of the ratio NEW/OLD over several process pairs.
///
/// Model, on the log scale: pair j's estimate is θⱼ = μ + uⱼ + eⱼ, where uⱼ ~ (0, τ²) is what
/// this pair's processes add (their memory layouts, the CPU they ran on, the machine's state
/// while they ran) and eⱼ ~ (0, sⱼ²) the noise within the pair, sⱼ its own standard error. The
/// estimate is the inverse-variance weighted mean with weights 1/(sⱼ² + τ̂²), τ̂² the
/// DerSimonian–Laird moment estimate of the spread between pairs; its variance is the
/// Hartung–Knapp–Sidik–Jonkman one, max(1, q)/Σw with q = Σwⱼ(θⱼ − μ̂)²/(k − 1) — the observed
/// dispersion of the pairs around the mean, never less than the model's — and the interval and
/// the p-value use Student's t with k − 1 degrees of freedom. With equal sⱼ this is the plain
/// t-interval over the θⱼ whenever their spread exceeds sⱼ (the usual case); with unequal sⱼ
/// (a pair that shared its CPU with a busy neighbour) the quiet pairs count for more, and the
/// interval still includes the spread between pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomEffects {
    /// exp of the weighted mean log-ratio over pairs.
    pub ratio: f64,
    pub ci95: (f64, f64),
    /// Two-sided p-value that the mean log-ratio is 0 (t with k − 1 degrees of freedom).
    pub p_value: f64,
    /// Pairs the estimate rests on; degrees of freedom k − 1.
    pub pairs: usize,
    /// Standard error of the mean log-ratio (Hartung–Knapp–Sidik–Jonkman).
    pub se: f64,
    /// DerSimonian–Laird estimate of the variance between pairs, τ̂².
    pub tau2: f64,
    /// Standard deviation of the pairs' log-ratios (their observed spread).
    pub spread_sd: f64,
    /// Root mean square of the within-pair standard errors sⱼ.
    pub within_se: f64,
    /// Share of the variance of θⱼ that the noise within pairs explains (mean sⱼ² / var θ,
    /// at most 1); the rest, `between_share`, comes from the pairs themselves.
    pub within_share: f64,
    pub between_share: f64,
    /// Smallest relative change (e.g. 0.004 = 0.4 %) this run would detect with
    /// [`DETECTION_POWER`] at α = 5 %: exp((t₀.₉₇₅ + t₀.₈) · se) − 1, k − 1 degrees of freedom.
    pub smallest_detectable: f64,
}

/// Smallest within-pair standard error (log scale) a weight uses: a pair whose rounds all
/// agree still carries a timer step of uncertainty, and no pair may take all the weight.
pub const MIN_WITHIN_SE: f64 = 1e-5;

/// The random-effects mean of `theta` given within-pair standard errors `within_se`:
/// (mean, se, τ̂²), as described on [`RandomEffects`]. `None` with fewer than two values.
pub fn random_effects_mean(theta: &[f64], within_se: &[f64]) -> Option<(f64, f64, f64)> {
    let k = theta.len();
    if k < 2 || within_se.len() != k {
        return None;
    }
    let v: Vec<f64> = within_se
        .iter()
        .map(|s| s.max(MIN_WITHIN_SE).powi(2))
        .collect();
    let weighted = |w: &[f64]| {
        let sw: f64 = w.iter().sum();
        let mean = w.iter().zip(theta).map(|(w, t)| w * t).sum::<f64>() / sw;
        let q: f64 = w
            .iter()
            .zip(theta)
            .map(|(w, t)| w * (t - mean).powi(2))
            .sum();
        (sw, mean, q)
    };
    let w0: Vec<f64> = v.iter().map(|v| 1.0 / v).collect();
    let (sw0, _, q0) = weighted(&w0);
    let c = sw0 - w0.iter().map(|w| w * w).sum::<f64>() / sw0;
    let df = (k - 1) as f64;
    let tau2 = if c > 0.0 {
        ((q0 - df) / c).max(0.0)
    } else {
        0.0
    };
    let w: Vec<f64> = v.iter().map(|v| 1.0 / (v + tau2)).collect();
    let (sw, mean, q) = weighted(&w);
    let se = ((q / df).max(1.0) / sw).sqrt();
    Some((mean, se, tau2))
}

/// The random-effects interval of the mean log-ratio at two-sided level `conf` (e.g. 0.95):
/// (mean, lo, hi). `None` with fewer than two pairs.
pub fn random_effects_interval(
    theta: &[f64],
    within_se: &[f64],
    conf: f64,
) -> Option<(f64, f64, f64)> {
    let (mean, se, _) = random_effects_mean(theta, within_se)?;
    let t = student_t_quantile(0.5 + conf / 2.0, (theta.len() - 1) as f64);
    Some((mean, mean - t * se, mean + t * se))
}

/// Why a random-effects interval cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RandomEffectsError {
    #[error("{0} process pair(s): the spread between pairs needs at least 2")]
    TooFewPairs(usize),
    #[error("pair {0}: its estimate is not a finite log-ratio")]
    NotFinite(usize),
}

/// Combine per-pair log-ratio estimates `theta` (ln NEW/OLD) and their within-pair standard
/// errors `within_se` (same length) into a random-effects estimate.
pub fn random_effects(
    theta: &[f64],
    within_se: &[f64],
) -> Result<RandomEffects, RandomEffectsError> {
    let k = theta.len();
    if k < 2 || within_se.len() != k {
        return Err(RandomEffectsError::TooFewPairs(k.min(within_se.len())));
    }
    if let Some(i) = theta
        .iter()
        .zip(within_se)
        .position(|(t, s)| !t.is_finite() || !s.is_finite())
    {
        return Err(RandomEffectsError::NotFinite(i));
    }
    let (mean, se, tau2) =
        random_effects_mean(theta, within_se).ok_or(RandomEffectsError::TooFewPairs(k))?;
    let df = (k - 1) as f64;
    let t975 = student_t_quantile(0.975, df);
    let (lo, hi) = (mean - t975 * se, mean + t975 * se);
    let sd = crate::stats::std_dev(theta);
    let p_value = if se > 0.0 {
        (2.0 * student_t_sf((mean / se).abs(), df)).min(1.0)
    } else if mean == 0.0 {
        1.0
    } else {
        0.0
    };
    let within_var = within_se.iter().map(|s| s * s).sum::<f64>() / k as f64;
    let total_var = sd * sd;
    let within_share = if total_var > 0.0 {
        (within_var / total_var).min(1.0)
    } else {
        1.0
    };
    let reach = (t975 + student_t_quantile(DETECTION_POWER, df)) * se;
    Ok(RandomEffects {
        ratio: mean.exp(),
        ci95: (lo.exp(), hi.exp()),
        p_value,
        pairs: k,
        se,
        tau2,
        spread_sd: sd,
        within_se: within_var.sqrt(),
        within_share,
        between_share: 1.0 - within_share,
        smallest_detectable: reach.exp() - 1.0,
    })
}
