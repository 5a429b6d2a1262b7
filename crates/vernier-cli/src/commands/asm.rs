//! `vernier asm [--filter REGEX] -- PROGRAM [ARGS]`: the disassembly of each benchmark's
//! measured loop, its loop body marked (the reading is `runner::disasm`'s; docs/asm.md).

use crate::runner::disasm::{check_objdump, locate, render};
use anyhow::Result;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Args, Clone, Debug)]
pub struct AsmArgs {
    /// Only benchmarks whose name matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// The objdump to run (default: `objdump` on the PATH).
    #[arg(long, value_name = "PATH", default_value = "objdump")]
    pub objdump: PathBuf,
    /// The benchmark executable and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]")]
    pub program: Vec<OsString>,
}

pub fn asm_command(a: &AsmArgs) -> Result<i32> {
    let filter = crate::args::Selection::new(crate::args::parse_filter(a.filter.as_deref())?, None);
    let (program, args) = crate::runner::processes::split_program(&a.program);
    check_objdump(&a.objdump)?;
    let located = locate(&program, &args)?;
    let names: Vec<String> = located.iter().map(|(n, _)| n.clone()).collect();
    for i in crate::args::select(&program, &names, filter.as_ref())? {
        let (name, found) = &located[i];
        match found {
            Ok(f) => print!("{}", render(name, f, &a.objdump, false)?),
            Err(e) => println!("── {name}\n   {e}\n"),
        }
    }
    Ok(0)
}
