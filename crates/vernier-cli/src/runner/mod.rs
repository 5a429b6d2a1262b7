//! Driving benchmark programs: worker processes and the protocol link to them, process pairs
//! for comparisons (and whether their code is the same), the deterministic mode under callgrind, cold caches, the machine's known
//! core speed, Google Benchmark files read as results, and result files derived again with this
//! build's rules.

pub mod callgraph;
pub mod cold;
pub mod counted;
pub mod disasm;
pub mod exec;
pub mod harness;
pub mod same_code;
pub mod sampled;
// `argv_launcher` and `run_to_completion` serve programs outside the protocol (tests use them).
pub mod compare;
#[allow(dead_code)]
pub mod instructions;
pub mod link;
pub mod memory;
pub mod processes;
pub mod profile;
pub mod rederive;
pub mod worker;
