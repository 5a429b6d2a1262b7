//! A worker whose benchmark names and failures come from the environment, for testing runners:
//! `WORKER_NAMES` (comma-separated, default `chain,crash`) names benchmarks that each run a
//! chain of 100 dependent additions; the one named by `CRASH_IN` aborts (SIGABRT) after a few
//! thousand iterations, the one named by `HANG_IN` stops answering.

fn main() -> std::process::ExitCode {
    let names = std::env::var("WORKER_NAMES").unwrap_or_else(|_| "chain,crash".into());
    let crash = std::env::var("CRASH_IN").ok();
    let hang = std::env::var("HANG_IN").ok();
    vernier::Suite::run_main(|suite| {
        for name in names.split(',').filter(|n| !n.is_empty()) {
            let mut x = 0u64;
            let mut calls = 0u64;
            let crashes = crash.as_deref() == Some(name);
            let hangs = hang.as_deref() == Some(name);
            suite.bench(name, move || {
                calls += 1;
                if crashes && calls > 5_000 {
                    eprintln!("fault_worker: aborting on purpose");
                    std::process::abort();
                }
                if hangs && calls > 5_000 {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
                x = vernier::workload::kernels::add_chain(x, vernier::black_box(100));
                x
            });
        }
    })
}
