//! The `vernier` command.

mod load;
mod system;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "vernier", version, about = "Precision micro-benchmarking")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Audit, tune, undo, measure the machine's noise floor
    System(system::SystemArgs),
    /// A bounded background load generator
    Load(load::LoadArgs),
}

fn main() {
    let cli = Cli::parse();
    let res = match cli.command {
        Command::System(a) => system::system_command(a),
        Command::Load(a) => load::load_command(a),
    };
    match res {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("vernier: error: {e:#}");
            std::process::exit(1);
        }
    }
}
