//! A chain of n dependent one-cycle additions, n read at run time (`CHAIN_N`, default 100):
//! a kernel of known cost for comparisons. Standalone, or a worker under `vernier run`.
//! Written in the smallest form of the harness: `Suite::from_args` … `finish`.

fn main() {
    let n: u64 = std::env::var("CHAIN_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut suite = vernier::Suite::from_args();
    let mut x = 0u64;
    suite.bench("chain", move || {
        x = vernier::workload::kernels::add_chain(x, vernier::black_box(n));
        x
    });
    suite.finish();
}
