//! The probe's chains where Vernier has no assembly for the architecture: the same arithmetic
//! through the optimisation barrier, which keeps each addition but adds its own moves.

#[inline(always)]
pub(super) fn add_chain(start: u64, n: u64) -> u64 {
    let mut x = start;
    for _ in 0..n {
        x = std::hint::black_box(x + 1);
    }
    x
}

#[inline(always)]
pub(super) fn wide_add_chain(start: u64, n: u64) -> u64 {
    let mut v = [start; 8];
    for k in 0..n / 8 {
        for x in &mut v {
            *x = std::hint::black_box(*x + 1);
        }
        std::hint::black_box(k);
    }
    v[0] += n % 8;
    v.iter().fold(0u64, |s, x| s.wrapping_add(*x))
}
