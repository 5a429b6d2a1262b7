//! A [`Summary`] written out within a character budget: the headline and the frame of each
//! section first, then whole rows in the order they matter (what changed, the caveats, the
//! changes below the threshold, the unchanged), each section cut at its first row that no
//! longer fits, and a line saying how many it left out. Nothing is cut mid-row or mid-tag.

use super::{cells, code, prose, row, table_head, text, Mark, Summary};

/// The longest label (OLD, NEW) shown in the headline: a label is a path or a command line.
const MAX_LABEL_CHARS: usize = 300;

/// The most a note on rows left out takes (its words and a count).
const NOTE_RESERVE: usize = 200;

/// One part of the summary: what opens it, its rows, what closes it, and what a row is called
/// in the note on those left out.
struct Section {
    open: String,
    items: Vec<String>,
    close: String,
    what: &'static str,
}

impl Section {
    fn table(open: String, rows: Vec<String>, close: &str, what: &'static str) -> Section {
        Section {
            open: format!("{open}{}", table_head()),
            items: rows,
            close: close.to_string(),
            what,
        }
    }
}

/// A label for the headline, cut in the middle when it is very long.
fn label(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_LABEL_CHARS {
        return code(s);
    }
    let half = MAX_LABEL_CHARS / 2;
    let head: String = s.chars().take(half).collect();
    let tail: String = s.chars().skip(n - half).collect();
    code(&format!("{head}…{tail}"))
}

fn headline(s: &Summary) -> String {
    let mut counts: Vec<String> = [
        Mark::Slower,
        Mark::Faster,
        Mark::Inconclusive,
        Mark::Below,
        Mark::Unchanged,
    ]
    .iter()
    .filter(|&&m| s.count(m) > 0)
    .map(|&m| format!("{} {}", s.count(m), m.word()))
    .collect();
    if !s.failed.is_empty() {
        counts.push(format!("{} failed", s.failed.len()));
    }
    if counts.is_empty() {
        counts.push("nothing compared".into());
    }
    let within = s
        .threshold
        .map(|t| format!("; a change within ±{:.2} % counts as none", t * 100.0))
        .unwrap_or_default();
    format!(
        "### Vernier: {}\n\n{} {} → {} (ratio NEW/OLD with its 95 % interval{within})\n\n",
        counts.join(", ").replace('*', "\\*"),
        text(&s.compared),
        label(&s.old),
        label(&s.new),
    )
}

/// The sections, in the order they are given room.
fn sections(s: &Summary) -> Vec<Section> {
    let rows = |marks: &[Mark]| -> Vec<String> {
        s.rows_of(marks)
            .into_iter()
            .map(|r| row(&cells(r)))
            .collect()
    };
    let changed = rows(&[Mark::Slower, Mark::Inconclusive, Mark::Faster]);
    let mut caveats: Vec<String> = s
        .failed
        .iter()
        .map(|(name, why)| format!("- {}: failed: {}\n", code(name), text(why)))
        .collect();
    caveats.extend(s.caveats.iter().map(|c| match &c.name {
        Some(n) => format!("- {}: {}\n", code(n), prose(&c.words)),
        None => format!("- {}\n", prose(&c.words)),
    }));
    let below = rows(&[Mark::Below]);
    let unchanged = rows(&[Mark::Unchanged]);
    let folded = |n: usize, what: &str| format!("<details><summary>{n} {what}</summary>\n\n");
    vec![
        Section::table(String::new(), changed, "\n", "changed rows"),
        Section {
            open: "**Caveats**\n\n".into(),
            items: caveats,
            close: "\n".into(),
            what: "caveats",
        },
        Section::table(
            folded(
                below.len(),
                "changed by less than the threshold (no-change*: measured, too small to count)",
            ),
            below,
            "\n</details>\n\n",
            "no-change* rows",
        ),
        Section::table(
            folded(unchanged.len(), "unchanged"),
            unchanged,
            "\n</details>\n\n",
            "unchanged rows",
        ),
    ]
}

/// The summary in Markdown, at most `limit` bytes (so at most as many characters).
pub fn render(s: &Summary, limit: usize) -> String {
    let head = headline(s);
    let sections: Vec<Section> = sections(s)
        .into_iter()
        .filter(|sec| !sec.items.is_empty())
        .collect();
    let frame: usize = head.len()
        + sections
            .iter()
            .map(|sec| sec.open.len() + sec.close.len() + NOTE_RESERVE)
            .sum::<usize>()
        + NOTE_RESERVE;
    let mut room = limit.saturating_sub(frame);
    let mut kept = Vec::with_capacity(sections.len());
    for sec in &sections {
        let mut n = 0;
        for item in &sec.items {
            if item.len() > room {
                break;
            }
            room -= item.len();
            n += 1;
        }
        kept.push(n);
    }
    let mut out = head;
    if !s.rows.iter().any(|r| r.mark < Mark::Below) {
        out.push_str(&match s.threshold {
            Some(t) => format!("No benchmark changed beyond ±{:.2} %.\n\n", t * 100.0),
            None => "No benchmark changed.\n\n".to_string(),
        });
    }
    let mut left_out = 0;
    for (sec, &n) in sections.iter().zip(&kept) {
        out.push_str(&sec.open);
        for item in &sec.items[..n] {
            out.push_str(item);
        }
        let rest = sec.items.len() - n;
        if rest > 0 {
            left_out += rest;
            out.push_str(&format!(
                "\n*{rest} more {} left out to fit {limit} characters.*\n",
                sec.what
            ));
        }
        out.push_str(&sec.close);
    }
    if left_out > 0 {
        out.push_str(&format!(
            "*{left_out} rows in all left out of this summary: the full comparison is in the \
             JSON (`--json`).*\n"
        ));
    }
    out
}
