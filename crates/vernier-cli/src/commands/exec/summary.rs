//! `vernier exec --markdown FILE` (two or more commands): the comparison's summary for a pull
//! request's comment, written by `crate::markdown`.

use super::ExecArgs;
use anyhow::Result;
use vernier::result::comparison::ComparisonFile;
use vernier::result::ResultFile;

/// `--markdown`: the comparison's summary for a pull request; refused for one command.
pub(super) fn write_markdown(
    a: &ExecArgs,
    file: &ResultFile,
    comparison: Option<&ComparisonFile>,
) -> Result<()> {
    let Some(path) = &a.md.markdown else {
        return Ok(());
    };
    let Some(cf) = comparison else {
        eprintln!(
            "vernier: note: --markdown summarises a comparison: give two or more commands (not \
             written)"
        );
        return Ok(());
    };
    let untuned = crate::markdown::untuned_line("the machine was", &file.system);
    let summary = crate::markdown::of_comparison(cf, "commands", untuned);
    let md = crate::markdown::render(&summary, crate::markdown::MAX_CHARS);
    crate::markdown::write(path, &md, a.md.no_summary)?;
    if !a.style.silent() {
        println!("summary (Markdown) written to {}", path.display());
    }
    Ok(())
}
