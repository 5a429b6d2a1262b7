//! A worker that misbehaves on purpose, for the runner's robustness tests: one benchmark is
//! fine, one crashes with SIGSEGV part-way, one hangs, one panics, one prints to stdout.

use std::sync::atomic::{AtomicU64, Ordering};

static CALLS: AtomicU64 = AtomicU64::new(0);

fn main() -> std::process::ExitCode {
    vernier::Suite::run_main(|suite| {
        suite.bench("ok", || vernier::black_box(3u64) * 7);
        suite.bench("segfault", || {
            // Crash after a few thousand iterations: part-way through measuring.
            if CALLS.fetch_add(1, Ordering::Relaxed) == 200_000 {
                // SAFETY: not safe at all, on purpose: a write through a null pointer, to test
                // that the runner survives a worker killed by SIGSEGV.
                unsafe {
                    std::ptr::null_mut::<u8>().write_volatile(1);
                }
            }
        });
        suite.bench("hang", || {
            if CALLS.fetch_add(1, Ordering::Relaxed) > 1000 {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        });
        suite.bench("panics", || {
            if CALLS.fetch_add(1, Ordering::Relaxed) > 1000 {
                panic!("deliberate failure");
            }
        });
        suite.bench("chatty", || {
            println!("benchmark output on stdout must not disturb the protocol");
        });
    })
}
