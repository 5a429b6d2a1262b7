//! One file per command: each reads its options, drives the pipeline's stages (the library's
//! plan, measure, analyze, result and report; the runner's processes) and prints or writes.

pub mod analyze;
pub mod asm;
pub mod compare;
pub mod demo;
pub mod exec;
pub mod export;
pub mod history;
pub mod load;
pub mod profile;
pub mod report;
pub mod run;
pub mod sweep;
pub mod system;
