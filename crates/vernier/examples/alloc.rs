//! Allocations per iteration, counted: the counting global allocator installed in one line,
//! and benchmarks whose counts are known exactly (a `Vec` of 1000 `i32`: one allocation of 4000
//! bytes, freed; a boxed 4096-byte array: one of 4096; a chain of additions: none; a leaked
//! `Box<i32>`: 4 bytes kept per iteration). Standalone (`cargo run --example alloc -- --json
//! FILE`), or a worker under `vernier run`.

#[global_allocator]
static ALLOC: vernier::CountingAlloc = vernier::CountingAlloc;

fn main() {
    let mut suite = vernier::Suite::from_args();
    suite.bench("vec1000", || vec![0i32; vernier::black_box(1000)]);
    suite.bench("box4096", || Box::new([vernier::black_box(1u8); 4096]));
    let mut x = 0u64;
    suite.bench_alloc_free("add", move || {
        x = vernier::workload::kernels::add_chain(x, vernier::black_box(10));
        x
    });
    suite.bench("leak", || {
        Box::leak(Box::new(vernier::black_box(3i32))) as *mut i32 as usize
    });
    // Declared allocation-free, but it allocates: the run fails, naming it.
    if std::env::var_os("ALLOC_LIAR").is_some() {
        suite.bench_alloc_free("liar", || vec![1u8; vernier::black_box(10)]);
    }
    suite.finish();
}
