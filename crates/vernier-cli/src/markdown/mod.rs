//! GitHub-flavoured Markdown: the one writer of the summary a pull request's comment shows
//! (`--markdown FILE` on `compare`, `exec` and `history check`), and the escaping every table
//! in Markdown uses (hyperfine's `--export-markdown` too).
//!
//! A summary is a [`Summary`]: a headline counting each verdict and naming what was compared,
//! the table of what changed (`slower`, `inconclusive`, `faster`, worst first), the changes
//! measured below the threshold and the unchanged rows each folded in a `<details>`, and the
//! caveats one line each. [`render`] fits it to a character budget (GitHub's comment holds
//! 65,536): it leaves whole rows out, least telling first, and says how many.
//!
//! Anything a user or CI named (benchmarks, programs, commits, machines) is written as a code
//! span ([`code`]): GitHub shows it as text, never as markup, a link or a mention.

mod fit;

pub use fit::render;

use anyhow::{Context as _, Result};
use std::io::Write as _;
use std::path::Path;

/// The most characters a summary holds: GitHub's limit on a comment is 65,536.
pub const MAX_CHARS: usize = 65_000;

/// The environment variable GitHub Actions names its job summary file in.
pub const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// `text` as a code span: shown as it is, whatever it holds (markup, `|`, backticks). Line
/// breaks become spaces (a table row is one line); `|` is escaped, as a table cell needs even
/// inside code; the fence is one backtick longer than the longest run of them in `text`.
pub fn code(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick, or is blank, is padded so the fence holds.
    let pad = flat.starts_with('`') || flat.ends_with('`') || flat.trim().is_empty();
    if pad {
        format!("{fence} {flat} {fence}")
    } else {
        format!("{fence}{flat}{fence}")
    }
}

/// The characters that can start inline markup, an entity, a link or a tag (or end a table
/// cell) where [`text`] puts its words: after other text on a line.
const MARKUP: &[char] = &[
    '\\', '`', '*', '_', '[', ']', '<', '>', '&', '|', '~', '!', '#',
];

/// `text` as plain text: each character that could start markup backslash-escaped (so none
/// starts emphasis, an entity, a link or a tag), line breaks as spaces.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        if MARKUP.contains(&c) {
            out.push('\\');
            out.push(c);
        } else if c.is_control() {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Words of Vernier's own with code spans in them (`--time 3`): the spans kept as code, the
/// rest as [`text`]. Words with an unpaired backtick are all text.
pub fn prose(words: &str) -> String {
    let parts: Vec<&str> = words.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return text(words);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| if i % 2 == 1 { code(p) } else { text(p) })
        .collect()
}

/// A row of a Markdown table: `| a | b |`.
pub fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// What a row of the summary says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    Slower,
    Inconclusive,
    Faster,
    /// `no-change`, with a change measured below the threshold.
    Below,
    Unchanged,
}

impl Mark {
    pub fn word(self) -> &'static str {
        match self {
            Mark::Slower => "slower",
            Mark::Inconclusive => "inconclusive",
            Mark::Faster => "faster",
            Mark::Below => "no-change*",
            Mark::Unchanged => "unchanged",
        }
    }
}

/// One benchmark in the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub name: String,
    pub mark: Mark,
    /// NEW/OLD, in `unit`.
    pub ratio: f64,
    pub ci95: [f64; 2],
    /// The unit judged in: `cycles`, `ns`, `instructions`, `wall time`.
    pub unit: String,
    /// Counts that changed (allocations, instructions), in words; empty when none.
    pub counts: String,
}

/// A line under the table: about one benchmark (`name`) or the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct Caveat {
    pub name: Option<String>,
    pub words: String,
}

/// The summary of one comparison, before it is fitted and written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// What is compared, e.g. `programs`, `result files`, `commits`.
    pub compared: String,
    pub old: String,
    pub new: String,
    /// The threshold below which a change counts as none (0.005 = ±0.5 %), when there is one.
    pub threshold: Option<f64>,
    pub rows: Vec<Row>,
    /// Benchmarks that could not be compared: (name, why).
    pub failed: Vec<(String, String)>,
    pub caveats: Vec<Caveat>,
}

impl Summary {
    /// How many rows carry `mark`.
    pub fn count(&self, mark: Mark) -> usize {
        self.rows.iter().filter(|r| r.mark == mark).count()
    }

    /// The rows of `marks`, worst first: by mark in that order, then the largest ratio first.
    fn rows_of(&self, marks: &[Mark]) -> Vec<&Row> {
        let mut rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| marks.contains(&r.mark))
            .collect();
        rows.sort_by(|a, b| {
            a.mark
                .cmp(&b.mark)
                .then(b.ratio.total_cmp(&a.ratio))
                .then(a.name.cmp(&b.name))
        });
        rows
    }
}

/// A relative change in percent with its sign: `+1.23 %`.
fn pct(r: f64) -> String {
    if r.is_finite() {
        format!("{:+.2}", (r - 1.0) * 100.0)
    } else {
        "—".into()
    }
}

/// A row's cells: name, ratio, change [interval], unit, verdict, counts.
fn cells(r: &Row) -> Vec<String> {
    let verdict = match r.mark {
        Mark::Slower | Mark::Faster => format!("**{}**", r.mark.word()),
        m => m.word().replace('*', "\\*"),
    };
    vec![
        code(&r.name),
        if r.ratio.is_finite() {
            format!("{:.4}", r.ratio)
        } else {
            "—".into()
        },
        format!(
            "{} % [{}, {}]",
            pct(r.ratio),
            pct(r.ci95[0]),
            pct(r.ci95[1])
        ),
        text(&r.unit),
        verdict,
        text(&r.counts),
    ]
}

/// The table's header and its alignment row.
fn table_head() -> String {
    let head = [
        "benchmark",
        "ratio",
        "change [95 % CI]",
        "unit",
        "verdict",
        "counts",
    ];
    let mut s = row(&head.map(String::from));
    s.push_str("|:---|---:|---:|:---|:---|:---|\n");
    s
}

/// Write `md` to `path` (replaced whole, atomically) and, unless `no_summary`, append it to
/// the job summary GitHub Actions names in `GITHUB_STEP_SUMMARY` when it is set.
pub fn write(path: &Path, md: &str, no_summary: bool) -> Result<()> {
    vernier::result::write_atomic(path, md.as_bytes())
        .with_context(|| format!("cannot write --markdown {}", path.display()))?;
    if no_summary {
        return Ok(());
    }
    if let Some(summary) = std::env::var_os(STEP_SUMMARY_ENV).filter(|v| !v.is_empty()) {
        let summary = Path::new(&summary);
        let appended = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(summary)
            .and_then(|mut f| writeln!(f, "{md}"));
        if let Err(e) = appended {
            // The comment's file is written; the job summary is a copy.
            eprintln!(
                "vernier: warning: cannot append the summary to {STEP_SUMMARY_ENV} ({}): {e}; \
                 --no-summary leaves it alone",
                summary.display()
            );
        }
    }
    Ok(())
}

/// A comparison file's summary: its rows, failures and caveats, the machine's state given by
/// the caller (`untuned`: the line saying the machine was not tuned, if it was not).
pub fn of_comparison(
    file: &vernier::result::comparison::ComparisonFile,
    compared: &str,
    untuned: Option<String>,
) -> Summary {
    use vernier::stats::compare::Verdict;
    let unit_of = |c: &vernier::analyze::pairs::Comparison| {
        if c.instructions_per_iter.is_some() && c.pairs == 0 {
            "instructions".to_string()
        } else if let Some(e) = &file.exec {
            e.judged.as_str().to_string()
        } else {
            c.unit.unwrap_or_default().as_str().to_string()
        }
    };
    let rows = file
        .comparisons
        .iter()
        .map(|c| Row {
            name: c.name.clone(),
            mark: match c.verdict {
                Verdict::Slower => Mark::Slower,
                Verdict::Faster => Mark::Faster,
                Verdict::Inconclusive => Mark::Inconclusive,
                Verdict::NoChange if c.measured_below_threshold() => Mark::Below,
                Verdict::NoChange => Mark::Unchanged,
            },
            ratio: c.ratio,
            ci95: c.ci95,
            unit: unit_of(c),
            counts: counts(c),
        })
        .collect();
    let mut caveats: Vec<Caveat> = vernier::report::compare::caveats(file)
        .into_iter()
        .map(|(name, words)| Caveat {
            name: Some(name),
            words,
        })
        .collect();
    if !file.only_old.is_empty() || !file.only_new.is_empty() {
        caveats.push(Caveat {
            name: None,
            words: format!(
                "not compared: {} only in OLD, {} only in NEW",
                file.only_old.len(),
                file.only_new.len()
            ),
        });
    }
    if let Some(words) = untuned {
        caveats.push(Caveat { name: None, words });
    }
    Summary {
        compared: compared.to_string(),
        old: file.old.clone(),
        new: file.new.clone(),
        threshold: Some(file.threshold),
        rows,
        failed: file
            .failed
            .iter()
            .map(|f| (f.name.clone(), f.error.clone()))
            .collect(),
        caveats,
    }
}

/// The counts of a comparison that changed: allocations per iteration, instructions.
fn counts(c: &vernier::analyze::pairs::Comparison) -> String {
    let mut parts = Vec::new();
    if let Some(words) = vernier::report::memory::comparison_words(c) {
        parts.push(words);
    }
    if let Some([old, new]) = c.instructions_per_iter {
        if (new - old).abs() >= 0.5 {
            parts.push(format!("instructions/iter {old:.0} → {new:.0}"));
        }
    }
    parts.join("; ")
}

/// The line for a machine that was not tuned for benchmarking, from a result file's `system`
/// summary (`tuned`, `failing`); `None` when it was tuned or the file does not say.
pub fn untuned_line(which: &str, system: &serde_json::Value) -> Option<String> {
    if system.get("tuned")?.as_bool()? {
        return None;
    }
    let failing: Vec<&str> = system
        .get("failing")
        .and_then(|f| f.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    Some(format!(
        "{which} not tuned for benchmarking ({}): `vernier system show` says what to change",
        if failing.is_empty() {
            "checks failed".to_string()
        } else {
            failing.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests;
