//! The options of `history` given before its subcommand (`vernier history --db URL save FILE`)
//! taken as if given after it, for every subcommand, in this one place: `--db` names the same
//! store on either side of `save`, `check`, `bisect` or `migrate`, and so does every other
//! option `history` shares with a subcommand. An option given on both sides with two values,
//! or before a subcommand that does not take it, is an error naming it: nothing given is
//! silently dropped.

use super::{HistoryAction, HistoryArgs, QueryArgs};
use anyhow::{bail, Result};

impl HistoryArgs {
    /// The subcommand with the options given before it filled in; `None` for `history`
    /// itself (its options are its own).
    pub(super) fn merged(&self) -> Result<Option<HistoryAction>> {
        let outer = &self.query;
        let Some(action) = &self.action else {
            return Ok(None);
        };
        let mut action = action.clone();
        let sub = action.name();
        let allowed: &[&str] = match &mut action {
            HistoryAction::Check(q) => {
                fill_query(q, outer, sub)?;
                &ALL
            }
            HistoryAction::Save(s) => {
                fill(&mut s.db, &outer.db, "--db", sub)?;
                fill(&mut s.commit, &outer.commit, "--commit", sub)?;
                fill(&mut s.machine, &outer.machine, "--machine", sub)?;
                &["--db", "--commit", "--machine"]
            }
            HistoryAction::Bisect(b) => {
                fill(&mut b.db, &outer.db, "--db", sub)?;
                fill(&mut b.filter, &outer.filter, "--filter", sub)?;
                &["--db", "--filter"]
            }
            HistoryAction::Migrate(m) => {
                fill(&mut m.db, &outer.db, "--db", sub)?;
                &["--db"]
            }
            HistoryAction::Publish(p) => {
                fill(&mut p.db, &outer.db, "--db", sub)?;
                &["--db"]
            }
            HistoryAction::Serve(_) => &[],
        };
        if let Some(flag) = given(outer).into_iter().find(|f| !allowed.contains(f)) {
            bail!(
                "{flag} before `{sub}`: `history {sub}` takes no {flag} ({flag} is an option of \
                 the listing, `vernier history {flag} …`, and of `history check`)"
            );
        }
        Ok(Some(action))
    }
}

impl HistoryAction {
    /// The subcommand's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            HistoryAction::Check(_) => "check",
            HistoryAction::Save(_) => "save",
            HistoryAction::Bisect(_) => "bisect",
            HistoryAction::Migrate(_) => "migrate",
            HistoryAction::Publish(_) => "publish",
            HistoryAction::Serve(_) => "serve",
        }
    }
}

/// Every option of the listing, as [`given`] names them.
const ALL: [&str; 10] = [
    "--db",
    "--filter",
    "--machine",
    "--machines",
    "--reference",
    "--fleet",
    "--commit",
    "--json",
    "--html",
    "--markdown",
];

/// The listing's options given in `q`, by flag.
fn given(q: &QueryArgs) -> Vec<&'static str> {
    let set = [
        q.db.is_some(),
        q.filter.is_some(),
        q.machine.is_some(),
        q.machines.is_some(),
        q.reference.is_some(),
        q.fleet,
        q.commit.is_some(),
        q.json,
        q.html.is_some(),
        q.md.markdown.is_some(),
    ];
    ALL.into_iter()
        .zip(set)
        .filter_map(|(f, s)| s.then_some(f))
        .collect()
}

/// `check`'s options filled in from those given before it.
fn fill_query(q: &mut QueryArgs, outer: &QueryArgs, sub: &str) -> Result<()> {
    fill(&mut q.db, &outer.db, "--db", sub)?;
    fill(&mut q.filter, &outer.filter, "--filter", sub)?;
    fill(&mut q.machine, &outer.machine, "--machine", sub)?;
    fill(&mut q.machines, &outer.machines, "--machines", sub)?;
    fill(&mut q.reference, &outer.reference, "--reference", sub)?;
    fill(&mut q.commit, &outer.commit, "--commit", sub)?;
    fill(&mut q.html, &outer.html, "--html", sub)?;
    fill(&mut q.md.markdown, &outer.md.markdown, "--markdown", sub)?;
    q.md.no_summary |= outer.md.no_summary;
    q.fleet |= outer.fleet;
    q.json |= outer.json;
    Ok(())
}

/// `inner` (given after the subcommand) filled in from `outer` (given before it); the same
/// value on both sides is one value, two are an error.
fn fill<T: Clone + PartialEq + std::fmt::Debug>(
    inner: &mut Option<T>,
    outer: &Option<T>,
    flag: &str,
    sub: &str,
) -> Result<()> {
    match (inner.as_ref(), outer) {
        (_, None) => {}
        (None, Some(o)) => *inner = Some(o.clone()),
        (Some(i), Some(o)) if i == o => {}
        (Some(i), Some(o)) => bail!(
            "{flag} is given twice with two values, {o:?} before `{sub}` and {i:?} after it: \
             give it once"
        ),
    }
    Ok(())
}
