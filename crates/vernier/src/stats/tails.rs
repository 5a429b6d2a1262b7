//! Tail probabilities computed to full relative accuracy: the binomial(n, ½) law of the
//! median's order statistics (Loader's saddle-point expansion) and the standard normal's
//! upper tail (p-values far below 1e-16 stay comparable).

/// P(B ≤ k) for B ~ binomial(n, ½), accurate to a few ulps in relative terms for every n
/// (the point probabilities use Loader's saddle-point expansion, the tail is summed downwards
/// until its terms vanish; the larger tail is obtained by symmetry).
pub fn binom_half_cdf(k: usize, n: usize) -> f64 {
    if k >= n {
        return 1.0;
    }
    if 2 * k >= n {
        // P(B ≤ k) = 1 − P(B ≥ k + 1) = 1 − P(B ≤ n − k − 1) by symmetry.
        return 1.0 - binom_half_cdf(n - k - 1, n);
    }
    let mut term = binom_half_pmf(k, n);
    let mut sum = term;
    let mut i = k;
    while i > 0 && term > sum * 1e-18 {
        term *= i as f64 / (n - i + 1) as f64;
        sum += term;
        i -= 1;
    }
    sum
}

/// P(B = k) for B ~ binomial(n, ½) (Loader, "Fast and accurate computation of binomial
/// probabilities", 2000: no cancellation even for very large n).
pub fn binom_half_pmf(k: usize, n: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let nf = n as f64;
    if k == 0 || k == n {
        return (-nf * std::f64::consts::LN_2).exp();
    }
    let kf = k as f64;
    let half = nf / 2.0;
    let lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(kf, half) - bd0(nf - kf, half);
    let lf = (2.0 * std::f64::consts::PI).ln() + kf.ln() + (1.0 - kf / nf).ln();
    (lc - 0.5 * lf).exp()
}

/// ln(n!) − ((n + ½)·ln n − n + ln √(2π)): the error of Stirling's formula.
fn stirlerr(n: usize) -> f64 {
    const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    let x = n as f64;
    if n <= 15 {
        // n! is exact in f64 up to 18!, so ln(n!) is correctly rounded here.
        let fact: f64 = (1..=n).map(|i| i as f64).product();
        return fact.ln() - (x + 0.5) * x.ln() + x - LN_SQRT_2PI;
    }
    let xx = x * x;
    if n > 500 {
        (S0 - S1 / xx) / x
    } else if n > 80 {
        (S0 - (S1 - S2 / xx) / xx) / x
    } else if n > 35 {
        (S0 - (S1 - (S2 - S3 / xx) / xx) / xx) / x
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / xx) / xx) / xx) / xx) / x
    }
}

/// x·ln(x/m) + m − x, computed without cancellation when x ≈ m.
fn bd0(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let mut v = (x - m) / (x + m);
        let mut s = (x - m) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / (2 * j + 1) as f64;
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    x * (x / m).ln() + m - x
}

/// Upper tail of the standard normal law, P(Z > z), with full relative accuracy in the tail
/// (p-values of 1e-50 are still meaningful to compare).
pub fn normal_sf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    if z < 0.0 {
        return 1.0 - normal_sf(-z);
    }
    0.5 * erfc_pos(z / std::f64::consts::SQRT_2, 0.5 * z * z)
}

/// Complementary error function for x ≥ 0; `x2` is x² (passed in so the caller can compute it
/// from a more accurate source).
fn erfc_pos(x: f64, x2: f64) -> f64 {
    const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
    if x < 3.0 {
        // erf(x) = 2/√π · e^{−x²} · Σ 2ⁿ x^{2n+1} / (1·3·…·(2n+1)): positive terms, no
        // cancellation; 1 − erf(x) keeps ≥ 11 significant digits for x < 3.
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        return 1.0 - 2.0 * FRAC_1_SQRT_PI * (-x2).exp() * sum;
    }
    // Continued fraction e^{−x²}/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …)))), Lentz's method;
    // converges in a few dozen terms for x ≥ 3.
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for n in 1..5000 {
        let a = n as f64 / 2.0;
        d = x + a * d;
        if d.abs() < tiny {
            d = tiny;
        }
        d = 1.0 / d;
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    FRAC_1_SQRT_PI * (-x2).exp() / f
}
