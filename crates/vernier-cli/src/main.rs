//! `vernier`: the command line. Everything it does is in the library (`lib.rs`).

/// Allocations counted in the command's own process (`vernier demo` measures in it): one
/// relaxed load per allocation while nothing is counted.
#[global_allocator]
static ALLOC: vernier::CountingAlloc = vernier::CountingAlloc;

fn main() {
    vernier_cli::install_pipe_hook();
    std::process::exit(vernier_cli::main_with_args(std::env::args_os()));
}
