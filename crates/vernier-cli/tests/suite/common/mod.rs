pub mod bench_crate;
pub mod cli;
pub mod conformance;
pub mod cpp;
pub mod history;
pub mod pgserver;
pub mod rust_examples;
