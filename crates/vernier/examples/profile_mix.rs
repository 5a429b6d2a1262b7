//! A loop that calls two functions, `heavy` with `HEAVY_N` steps (300 unless the environment
//! says otherwise) and `light` with 100: the profiles' Rust worker
//! (`vernier profile`, `compare --profile --old-env HEAVY_N=300 --new-env HEAVY_N=390`).

use vernier::{black_box, Suite};

#[inline(never)]
fn light(x: u64) -> u64 {
    let mut acc = x;
    for _ in 0..100 {
        acc = black_box(acc + 1);
    }
    acc
}

#[inline(never)]
fn heavy(x: u64, n: u64) -> u64 {
    let mut acc = x;
    for _ in 0..n {
        acc = black_box(acc + 1);
    }
    acc
}

fn mix(s: &mut Suite) {
    let n: u64 = std::env::var("HEAVY_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    s.bench("mix", move || heavy(black_box(1), n) + light(black_box(1)));
}

vernier::main!(mix);
