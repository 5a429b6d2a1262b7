//! The experiments of `docs/experiments.md` with the Rust harness: a square root's throughput
//! and latency, and a pointer chase through 8 KiB, hot and with cold caches. Standalone, or a
//! worker under `vernier run` (`--cache cold` evicts the caches before every sample) and
//! `vernier asm`.

use vernier::black_box;

/// 16 dependent loads in 8 KiB (128 lines of 64 bytes).
const LINES: usize = 128;
const HOPS: usize = 16;

fn main() -> std::process::ExitCode {
    // Checkpoints around the program's phases, when asked for (`VERNIER_CHECKPOINTS_JSON=FILE`),
    // standalone: this program then times its phases and measures no benchmark.
    if std::env::var_os(vernier::session::checkpoint::JSON_ENV).is_some()
        && std::env::var_os(vernier::protocol::FDS_ENV).is_none()
    {
        vernier::checkpoint("start");
        let v: Vec<Vec<u8>> = (0..1 << 14).map(|_| vec![1u8; 1024]).collect();
        vernier::checkpoint("allocate 16 MiB");
        black_box(v.iter().map(|x| x[0] as u64).sum::<u64>());
        vernier::checkpoint("read them");
        return match vernier::checkpoint_summary() {
            Ok(_) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    vernier::Suite::run_main(|suite| {
        suite.bench("sqrt", || black_box(4.2f64).sqrt());
        suite.bench_latency("sqrt latency", 4.2f64, |x| (x + 1.5).sqrt());
        let (buf, start) = vernier::workload::kernels::chase_cycle(LINES, HOPS, 42);
        let hot = buf.clone();
        suite.bench_latency("chase 16 loads in 8 KiB", start, move |p| {
            vernier::workload::kernels::chase(&hot, p, HOPS)
        });
        suite.bench_cold("chase 16 loads in 8 KiB, cold", move || {
            vernier::workload::kernels::chase(&buf, black_box(start), HOPS)
        });
    })
}
