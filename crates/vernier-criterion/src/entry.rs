//! The program's `main` (`criterion_main!`): lists the benchmarks (`session`), then hands
//! them to the driver of the mode it was started in (`drive`).

use crate::args::{self, Mode};
use crate::drive;
use crate::session::{list, say_notes};
use std::process::ExitCode;

/// The program's `main` (`criterion_main!`): a worker under `vernier run`, otherwise
/// Criterion's modes: measure (`cargo bench`), test (`cargo test --benches`) or list.
pub fn main(groups: &[fn()]) -> ExitCode {
    let groups: Vec<fn()> = groups.to_vec();
    let fds = std::env::var(vernier::protocol::FDS_ENV).ok();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&argv) {
        Ok(a) => a,
        Err(e) if e.starts_with("usage") => {
            println!("{e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("vernier-criterion: {e}");
            return ExitCode::FAILURE;
        }
    };
    let notes = fds.is_none() && args.mode != Mode::List;
    if notes {
        for i in &args.ignored {
            eprintln!(
                "vernier-criterion: {i} ignored (a Criterion option with no meaning in Vernier)"
            );
        }
    }
    let listing = match list(&groups) {
        Ok(l) => {
            if notes {
                say_notes();
            }
            l
        }
        Err(errors) => {
            for e in errors {
                eprintln!("vernier-criterion: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    if let Some(fds) = fds {
        return drive::worker(&groups, &listing, &fds);
    }
    let selected: Vec<usize> = (0..listing.listed.len())
        .filter(|&i| args.options.selects(&listing.listed[i].name))
        .collect();
    match args.mode {
        Mode::List => {
            for &i in &selected {
                println!("{}: benchmark", listing.listed[i].name);
            }
            ExitCode::SUCCESS
        }
        Mode::Test => drive::test(&groups, &listing, selected),
        Mode::Bench => drive::standalone(&groups, &listing, args.options),
    }
}
