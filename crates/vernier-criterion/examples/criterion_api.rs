//! Every form of Criterion's API this crate takes, written as a Criterion bench is: the
//! measuring tests list it, run it as a worker and standalone, and check each name.

use criterion::measurement::WallTime;
use criterion::{
    black_box, criterion_group, criterion_main, AxisScale, BatchSize, BenchmarkGroup, BenchmarkId,
    Criterion, PlotConfiguration, SamplingMode, Throughput,
};
use std::time::{Duration, Instant};
use vernier_criterion as criterion;

fn fib(n: u64) -> u64 {
    (0..n)
        .fold((0u64, 1u64), |(a, b), _| (b, a.wrapping_add(b)))
        .0
}

/// `c.bench_function`, `c.bench_with_input`: named `function`, `function/parameter`.
fn plain(c: &mut Criterion) {
    c.bench_function("fib 20", |b| b.iter(|| fib(black_box(20))));
    let n = 30u64;
    c.bench_with_input(BenchmarkId::new("fib", n), &n, |b, &n| {
        b.iter(|| fib(black_box(n)))
    });
}

/// A group: ids from strings and `BenchmarkId`s, a throughput, the sampling and plot settings
/// (ignored), a local the closures borrow.
fn grouped(c: &mut Criterion) {
    let data: Vec<u64> = (0..1024).collect();
    let mut group = c.benchmark_group("sum");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(100))
        .sampling_mode(SamplingMode::Flat)
        .plot_config(PlotConfiguration::default().summary_scale(AxisScale::Logarithmic));
    group.throughput(Throughput::Elements(data.len() as u64));
    group.bench_function("iter", |b| b.iter(|| data.iter().sum::<u64>()));
    for len in [64usize, 256] {
        group.throughput(Throughput::Bytes(8 * len as u64));
        group.bench_with_input(BenchmarkId::from_parameter(len), &len, |b, &len| {
            b.iter(|| data[..len].iter().sum::<u64>())
        });
        group.bench_with_input(BenchmarkId::new("rev", len), &len, |b, &len| {
            b.iter(|| data[..len].iter().rev().fold(0u64, |a, x| a ^ x))
        });
    }
    group.finish();
}

/// The other `Bencher` methods.
fn batched(c: &mut Criterion) {
    let mut group = c.benchmark_group("sort");
    for (name, size) in [
        ("small", BatchSize::SmallInput),
        ("large", BatchSize::LargeInput),
        ("each", BatchSize::PerIteration),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || (0..64u32).rev().collect::<Vec<_>>(),
                |mut v| {
                    v.sort_unstable();
                    v
                },
                size,
            )
        });
    }
    group.bench_function("ref", |b| {
        b.iter_batched_ref(
            || (0..64u32).rev().collect::<Vec<_>>(),
            |v| v.sort_unstable(),
            BatchSize::NumIterations(16),
        )
    });
    group.bench_function("setup", |b| {
        b.iter_with_setup(
            || vec![3u32; 64],
            |mut v| {
                v.sort();
                v
            },
        )
    });
    group.bench_function("large drop", |b| b.iter_with_large_drop(|| vec![0u8; 4096]));
    group.bench_function("custom", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for i in 0..iters {
                black_box(fib(black_box(i % 32)));
            }
            t.elapsed()
        })
    });
    group.finish();
}

/// A helper over a group, as benches write them.
fn over_group(group: &mut BenchmarkGroup<WallTime>, k: u64) {
    group.bench_function(format!("times {k}"), |b| b.iter(|| black_box(k) * 3));
}

fn helpers(c: &mut Criterion) {
    let mut group = c.benchmark_group("helper");
    group.throughput(Throughput::BytesDecimal(1000));
    over_group(&mut group, 2);
    over_group(&mut group, 5);
    group.finish();
    // With CRITERION_API_FAIL set: a body that panics on its 1000th call, and a closure that
    // calls no `iter` method.
    if std::env::var_os("CRITERION_API_FAIL").is_some() {
        let mut calls = 0u32;
        c.bench_function("fails/panics", |b| {
            b.iter(|| {
                calls += 1;
                assert!(calls < 1000, "deliberate failure");
            })
        });
        c.bench_function("fails/no iter", |_b| {});
    }
}

criterion_group!(benches, plain, grouped);
criterion_group! {
    name = configured;
    config = Criterion::default()
        .sample_size(10)
        .noise_threshold(0.05)
        .significance_level(0.01)
        .confidence_level(0.9)
        .nresamples(1000)
        .without_plots();
    targets = batched, helpers
}
criterion_main!(benches, configured);
