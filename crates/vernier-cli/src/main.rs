//! `vernier`: the command line. Everything it does is in the library (`lib.rs`).

fn main() {
    vernier_cli::install_pipe_hook();
    std::process::exit(vernier_cli::main_with_args(std::env::args_os()));
}
