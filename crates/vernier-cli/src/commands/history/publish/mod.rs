//! `vernier history publish DIR`: the store as a static site (an index of every series, the
//! change points newest first, a page per series), and `vernier history serve DIR`, which
//! serves it on 127.0.0.1 for a look.
//!
//! The site is files only: every page, script and style is in DIR (no request leaves it), so
//! it opens from a disk (`file://`) and from any static host. Publishing is incremental: a
//! page is written only when its text differs from the file already there, and the count of
//! pages written is said. What users and CI named (benchmarks, machines, commits, branches)
//! is escaped everywhere it is shown; the store's location is never written, nor hostnames
//! unless asked for.

mod assets;
mod pages;
mod serve;
mod view;

pub use serve::{serve_command, ServeArgs};

use crate::history::series;
use crate::history::store::Location;
use anyhow::{Context as _, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Clone, Debug)]
pub struct PublishArgs {
    /// The directory to write the site into (created if missing; pages already there are
    /// rewritten only when they change).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The history store: sqlite:PATH, a file path, or postgres://USER@HOST:PORT/DATABASE
    /// (default: $VERNIER_DB, else ~/.local/share/vernier/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// A commit's page, `{commit}` standing for its hash, e.g.
    /// https://github.com/OWNER/REPO/commit/{commit}: commits on the site link there.
    #[arg(long, value_name = "TEMPLATE")]
    pub commit_url: Option<String>,
    /// Where a run's raw files are, with `{commit}`, `{machine}` and `{run}` (the run's id in
    /// the store) standing for the run's: each run on a series page links there.
    #[arg(long, value_name = "TEMPLATE")]
    pub artifacts_url: Option<String>,
    /// Show the machines' hostnames (left out by default: a public site need not name hosts).
    #[arg(long)]
    pub with_hostnames: bool,
    /// The commit the index's "since baseline" column compares to (default: each series'
    /// first run).
    #[arg(long, value_name = "COMMIT")]
    pub baseline: Option<String>,
}

/// The options every page is written with.
pub struct Site {
    pub commit_url: Option<String>,
    pub artifacts_url: Option<String>,
    pub with_hostnames: bool,
}

impl Site {
    /// `template` with each `{key}` replaced by its value, percent-encoded (a value cannot
    /// end the attribute, add a path segment or start a scheme).
    fn fill(template: &str, values: &[(&str, &str)]) -> String {
        let mut out = template.to_string();
        for (k, v) in values {
            out = out.replace(&format!("{{{k}}}"), &percent(v));
        }
        out
    }

    /// A commit's link, or its short name alone.
    pub fn commit(&self, commit: Option<&str>) -> String {
        let Some(c) = commit else {
            return "no commit".into();
        };
        let short = crate::html::esc(crate::history::short(c));
        match &self.commit_url {
            Some(t) => format!(
                "<a href=\"{}\" title=\"{}\">{short}</a>",
                crate::html::esc(&Self::fill(t, &[("commit", c)])),
                crate::html::esc(c)
            ),
            None => format!("<span title=\"{}\">{short}</span>", crate::html::esc(c)),
        }
    }
}

/// Every byte but the unreserved ones of RFC 3986 as `%XX`.
fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Write `text` to `path` unless the file there holds it already; whether it was written.
fn write_if_changed(path: &Path, text: &str) -> Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(false);
    }
    vernier::result::write_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

pub fn publish_command(a: &PublishArgs) -> Result<i32> {
    let loc = Location::resolve(a.db.as_deref())?;
    let mut st = super::open_existing(&loc)?;
    let rows = st.points()?;
    let machines = st.machines()?;
    let all = series::build(rows, None, None);
    if all.is_empty() {
        anyhow::bail!(
            "the store holds no run yet: nothing to publish (save runs with `vernier run --save` \
             or `vernier history save`)"
        );
    }
    let site = Site {
        commit_url: a.commit_url.clone(),
        artifacts_url: a.artifacts_url.clone(),
        with_hostnames: a.with_hostnames,
    };
    let views: Vec<view::SeriesView> = all
        .iter()
        .map(|s| view::SeriesView::of(s, a.baseline.as_deref()))
        .collect();
    std::fs::create_dir_all(a.dir.join("s"))
        .with_context(|| format!("cannot create {}", a.dir.display()))?;
    let mut written = 0;
    let mut pages = 0;
    let mut put = |rel: &str, text: String| -> Result<()> {
        pages += 1;
        written += usize::from(write_if_changed(&a.dir.join(rel), &text)?);
        Ok(())
    };
    put("site.css", assets::css())?;
    put("site.js", assets::JS.to_string())?;
    put("index.html", pages::index(&views, &site))?;
    put("regressions.html", pages::regressions(&views, &site))?;
    for (s, v) in all.iter().zip(&views) {
        let m = machines
            .iter()
            .find(|m| s.points.iter().any(|p| p.machine_id == m.id));
        put(&format!("s/{}.html", v.slug), pages::series(s, v, m, &site))?;
    }
    println!(
        "site of {} series written to {}: {written} of {pages} files written, the others \
         unchanged; open {}",
        views.len(),
        a.dir.display(),
        a.dir.join("index.html").display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_take_values_percent_encoded() {
        let t = "https://example.org/c/{commit}";
        assert_eq!(
            Site::fill(t, &[("commit", "abc123")]),
            "https://example.org/c/abc123"
        );
        assert_eq!(
            Site::fill(t, &[("commit", "\"><script>/x")]),
            "https://example.org/c/%22%3E%3Cscript%3E%2Fx"
        );
    }
}
