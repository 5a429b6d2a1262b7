//! The README's Rust snippets, compiled and run as doctests.
#![doc = include_str!("../../../README.md")]
