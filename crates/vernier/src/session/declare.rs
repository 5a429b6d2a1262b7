//! What a suite's benchmarks declare of themselves, for the benchmarks the previous
//! registering call added: the work of one iteration (a rate) and how their family is fitted
//! for complexity.

use super::suite::Suite;
use crate::result::complexity::Declared;
use crate::stats::complexity::Class as Complexity;
use crate::units::Throughput;

impl Suite {
    /// The work one iteration does, for the benchmarks the previous call registered (all of
    /// them for [`Suite::bench_args`] and [`Suite::bench_threads`]): the table, the result
    /// file, the exports and `compare` then give its rate too (bytes per second in binary
    /// units, items per second).
    ///
    /// ```no_run
    /// use vernier::{Suite, Throughput};
    /// let mut s = Suite::from_args();
    /// let src = vec![0u8; 4096];
    /// s.bench("copy 4 KiB", move || src.clone())
    ///     .throughput(Throughput::BytesPerIter(4096));
    /// s.finish();
    /// ```
    pub fn throughput(&mut self, t: Throughput) -> &mut Self {
        let from = self.last_call.min(self.entries.len());
        for e in &mut self.entries[from..] {
            e.throughput = Some(t);
        }
        self
    }

    /// Fit the complexity of the benchmarks the previous call registered (a family `NAME/N`,
    /// as [`Suite::bench_args`] names them) in `class` rather than in the usual class that fits
    /// best: Google Benchmark's `Complexity(benchmark::oNLogN)`. The line under the table still
    /// names the best usual class when another fits better.
    ///
    /// ```no_run
    /// use vernier::Complexity;
    /// let mut s = vernier::Suite::from_args();
    /// s.bench_args("sort", vernier::range(256, 65536, 4), |&n| vec![7u32; n as usize],
    ///     |v| { let mut w = v.clone(); w.sort_unstable(); w })
    ///     .complexity(Complexity::NLogN);
    /// s.finish();
    /// ```
    pub fn complexity(&mut self, class: Complexity) -> &mut Self {
        if class == Complexity::Custom {
            eprintln!(
                "vernier: complexity(Complexity::Custom) has no function: give it with \
                 complexity_fn(name, f); the best usual class is fitted"
            );
            return self;
        }
        self.declare(|_| {
            Some(Declared {
                class: Some(class),
                ..Declared::default()
            })
        })
    }

    /// Fit the complexity of the benchmarks the previous call registered (a family `NAME/N`)
    /// as `c · f(N)` with the benchmark's own function `f`, named `name` for a reader (Google
    /// Benchmark's `Complexity(lambda)`). `f` is called here, once per benchmark, with the N its
    /// name ends in; a benchmark whose name has no N, or where `f` is not finite and positive
    /// or zero, is left out of the fit, said on standard error.
    ///
    /// ```no_run
    /// let mut s = vernier::Suite::from_args();
    /// s.bench_args("walk", vernier::range(256, 65536, 4), |&n| vec![1u32; n as usize],
    ///     |v| v.iter().sum::<u32>())
    ///     .complexity_fn("N^1.5", |n| n.powf(1.5));
    /// s.finish();
    /// ```
    pub fn complexity_fn(&mut self, name: &str, f: impl Fn(f64) -> f64) -> &mut Self {
        let function = name.to_string();
        self.declare(|bench| {
            let Some((_, n)) = crate::result::complexity::family_of(bench) else {
                eprintln!(
                    "vernier: complexity_fn(\"{function}\"): {bench} has no size in its name \
                     (NAME/N); it is left out of the fit"
                );
                return None;
            };
            let v = f(n as f64);
            if !(v.is_finite() && v >= 0.0) {
                eprintln!(
                    "vernier: complexity_fn(\"{function}\") gives {v} at N = {n} ({bench}); it \
                     is left out of the fit"
                );
                return None;
            }
            Some(Declared {
                f: Some(v),
                function: Some(function.clone()),
                ..Declared::default()
            })
        })
    }

    /// Set the complexity declaration of each benchmark the previous call registered.
    fn declare(&mut self, mut d: impl FnMut(&str) -> Option<Declared>) -> &mut Self {
        let from = self.last_call.min(self.entries.len());
        for e in &mut self.entries[from..] {
            e.complexity = d(&e.name);
        }
        self
    }
}
