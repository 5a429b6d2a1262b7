//! Inputs: a small seeded generator and pools of inputs drawn from it (a pool larger than a
//! branch predictor's memory makes data-dependent branches behave as on fresh data: a predictor
//! learns a small random input over a few trials, `docs/experiments.md`).

/// A small, seeded generator (SplitMix64) for input pools: reproducible, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Default pool size: 64 Ki inputs, beyond what branch predictors learn (they memorise a few
/// thousand outcomes of a repeated pattern), yet small enough to stay in L2 for scalar inputs.
pub const DEFAULT_POOL: usize = 1 << 16;

/// Build a pool of `size` inputs from a seeded generator.
pub fn pool<I>(size: usize, seed: u64, mut make: impl FnMut(&mut Rng) -> I) -> Vec<I> {
    let mut rng = Rng::new(seed);
    (0..size).map(|_| make(&mut rng)).collect()
}
