//! Vernier: precision micro-benchmarking.
//!
//! This crate is what benchmarks link: the timer, the measuring engine, the statistics, the
//! analysis and a plain-text report. It stays light (no CLI parser, no plotting). The `vernier`
//! command (crate `vernier-cli`) drives benchmark executables, compares builds and audits the
//! machine with the same engine.
//!
//! The pipeline, one module per stage: target (`suite`) → plan (`plan`) → measure (`measure`,
//! `timer`) → raw samples (`samples`) → analyze (`steady`, `stats`, `analyze`) → result
//! (`result`) → report (`report`).

pub mod counters;
pub mod diagnostic;
pub mod measure;
pub mod plan;
pub mod samples;
pub mod stats;
pub mod steady;
pub mod timer;

pub use std::hint::black_box;
