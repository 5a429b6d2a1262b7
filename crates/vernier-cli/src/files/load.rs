//! The files a report is made from, read and told apart: result, comparison, sweep and history
//! files.

use super::history::HistoryFile as History;
use super::sweep::SweepFile as Sweep;
use anyhow::{bail, Context as _, Result};
use serde_json::Value;
use std::path::Path;
use vernier::result::comparison::ComparisonFile;
use vernier::result::ResultFile;

/// What one input file is.
pub enum Doc {
    Result {
        file: Box<ResultFile>,
        /// The demo's variant pairs (`comparison` member of its result file).
        comparison: Option<Box<ComparisonFile>>,
    },
    Comparison(Box<ComparisonFile>),
    History(History),
    Sweep(Sweep),
    Profile(Box<super::profile::ProfileFile>),
}

const KINDS: &str = "give a result file (`vernier run --json`, `vernier demo --json`), a \
                     comparison file (`vernier compare --json`), a sweep file (`vernier sweep \
                     --json`), a history file (`vernier history --json`) or a profile (`vernier profile --json`)";

/// Read a file and tell its kind from its top-level fields: `comparisons` (a comparison
/// file), `series` (a history), `benchmarks` (a result file, checked by the same loader as
/// `vernier analyze`).
pub fn load(path: &Path) -> Result<Doc> {
    let shown = path.display();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{shown} is not JSON (line {}, column {}: {e}); {KINDS}",
            e.line(),
            e.column()
        )
    })?;
    let Some(obj) = v.as_object() else {
        bail!("{shown}: its top level is not a JSON object; {KINDS}");
    };
    let kind = super::kind(&v);
    if kind == super::Kind::Comparison {
        let c: ComparisonFile = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged comparison file: {e}"))?;
        return Ok(Doc::Comparison(Box::new(c)));
    }
    if kind == super::Kind::History {
        let h: History = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged history file: {e}"))?;
        h.check()
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged history file: {e}"))?;
        return Ok(Doc::History(h));
    }
    if kind == super::Kind::Profile {
        let p: super::profile::ProfileFile = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged profile file: {e}"))?;
        return Ok(Doc::Profile(Box::new(p)));
    }
    if kind == super::Kind::Sweep {
        let s: Sweep = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{shown} is a damaged sweep file: {e}"))?;
        return Ok(Doc::Sweep(s));
    }
    if kind == super::Kind::Result {
        let comparison = match obj.get("comparison") {
            Some(c) => Some(Box::new(
                serde_json::from_value::<ComparisonFile>(c.clone()).map_err(|e| {
                    anyhow::anyhow!("{shown}: its `comparison` member is damaged: {e}")
                })?,
            )),
            None => None,
        };
        let file = vernier::result::parse(&bytes, &shown.to_string())?;
        return Ok(Doc::Result {
            file: Box::new(file),
            comparison,
        });
    }
    if kind == super::Kind::GoogleBenchmark {
        bail!(
            "{shown} is Google Benchmark's JSON: a report is made from vernier's files (compare \
             it with a vernier result file: vernier compare {shown} NEW.json --json cmp.json, \
             then report cmp.json); {KINDS}"
        );
    }
    bail!("{shown} is none of the files a report is made from (no `benchmarks`, `comparisons`, `points` or `series` field); {KINDS}")
}
