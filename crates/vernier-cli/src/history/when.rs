//! The time a run is stored at: when it was measured (its file's `recorded_at`), so that
//! results uploaded later, or a backfill of older files, land at the time they were measured;
//! the time of saving only for a file written before `recorded_at` was kept, and said.

use anyhow::{bail, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use vernier::result::recorded::rfc3339_utc;
use vernier::result::ResultFile;

/// A recorded time this far from the time of saving is said when the run is stored: a save
/// right after its run (`--save`, a CI job saving the file it just wrote) stays silent.
pub const SAID_BEYOND: Duration = Duration::from_secs(5 * 60);

/// When a run is stored.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredAt {
    /// The file's own `recorded_at`, in UTC to the second, and how long before `now` it was
    /// (negative: after, a clock ahead of this one's).
    Recorded { time: String, ago_s: i64 },
    /// The time of saving: the file carries no `recorded_at` (written before it was kept).
    Saving(String),
}

impl StoredAt {
    /// The time stored (RFC 3339, UTC, to the second, as every stored time is).
    pub fn time(&self) -> &str {
        match self {
            StoredAt::Recorded { time, .. } | StoredAt::Saving(time) => time,
        }
    }

    /// What to tell the user, if anything: a recorded time more than [`SAID_BEYOND`] away from
    /// now, or none recorded.
    pub fn note(&self) -> Option<String> {
        match self {
            StoredAt::Recorded { time, ago_s } if ago_s.unsigned_abs() > SAID_BEYOND.as_secs() => {
                let shown = time.replacen('T', " ", 1);
                let shown = shown.get(..16).unwrap_or(&shown);
                Some(format!(
                    "recorded {shown} UTC, {}: stored at that time",
                    ago(*ago_s)
                ))
            }
            StoredAt::Recorded { .. } => None,
            StoredAt::Saving(_) => Some(
                "a result file without recorded_at (written by a vernier that did not keep it) \
                 is stored at the time of saving"
                    .into(),
            ),
        }
    }
}

/// When `file` is stored, saved at `now`: its `recorded_at`, or `now` when it has none. A
/// `recorded_at` that is not an RFC 3339 time is an error naming it.
pub fn stored_at(file: &ResultFile, now: SystemTime) -> Result<StoredAt> {
    let Some(text) = file.recorded_at.as_deref() else {
        return Ok(StoredAt::Saving(rfc3339_utc(now)));
    };
    let at: jiff::Timestamp = match text.trim().parse() {
        Ok(t) => t,
        Err(e) => bail!(
            "its recorded_at '{text}' is not an RFC 3339 time ({e}): write it as \
             2026-11-29T10:12:00Z, or remove the field to store the run at the time of saving"
        ),
    };
    let secs = at.as_second();
    if secs < 0 {
        bail!("its recorded_at '{text}' is before 1970: write the time the run was measured");
    }
    let t = UNIX_EPOCH + Duration::from_secs(secs as u64);
    let ago_s = match now.duration_since(t) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    Ok(StoredAt::Recorded {
        time: rfc3339_utc(t),
        ago_s,
    })
}

/// Whether the note on files without `recorded_at` was given already: it is said once per
/// command, however many files it saves.
static SAID_UNRECORDED: AtomicBool = AtomicBool::new(false);

/// Print `at`'s note on standard error (the one on files without `recorded_at` once).
pub fn say(at: &StoredAt) {
    let Some(note) = at.note() else { return };
    if matches!(at, StoredAt::Saving(_)) && SAID_UNRECORDED.swap(true, Ordering::Relaxed) {
        return;
    }
    eprintln!("vernier: note: {note}");
}

/// `s` seconds ago in words: `3 minutes ago`, `5 hours ago`, `7 days ago` (`in 2 hours` for a
/// time ahead).
fn ago(s: i64) -> String {
    let n = s.unsigned_abs();
    let (k, unit) = match n {
        0..=5_399 => (n.div_ceil(60).max(1), "minute"),
        5_400..=172_799 => ((n + 1800) / 3600, "hour"),
        _ => ((n + 43_200) / 86_400, "day"),
    };
    let words = format!("{k} {unit}{}", if k == 1 { "" } else { "s" });
    if s < 0 {
        format!("in {words} (a clock ahead of this machine's)")
    } else {
        format!("{words} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(recorded_at: Option<&str>) -> ResultFile {
        let mut f = crate::history::tests::empty_result();
        f.recorded_at = recorded_at.map(str::to_string);
        f
    }

    #[test]
    fn a_file_is_stored_at_its_recorded_time_and_a_distant_one_is_said() {
        // 2026-12-06T04:40:00Z.
        let now = UNIX_EPOCH + Duration::from_secs(1_796_532_000);
        let week = stored_at(&file(Some("2026-11-29T04:40:00Z")), now).unwrap();
        assert_eq!(
            week,
            StoredAt::Recorded {
                time: "2026-11-29T04:40:00Z".into(),
                ago_s: 7 * 86_400
            }
        );
        assert_eq!(
            week.note().unwrap(),
            "recorded 2026-11-29 04:40 UTC, 7 days ago: stored at that time"
        );
        // Another offset and fractions of a second: the same instant, stored in UTC.
        let offset = stored_at(&file(Some("2026-11-29T06:40:00.25+02:00")), now).unwrap();
        assert_eq!(offset.time(), "2026-11-29T04:40:00Z");
        // Two minutes before saving: stored at that time, silently.
        let fresh = stored_at(&file(Some("2026-12-06T04:38:00Z")), now).unwrap();
        assert_eq!((fresh.time(), fresh.note()), ("2026-12-06T04:38:00Z", None));
        let hours = stored_at(&file(Some("2026-12-06T01:40:00Z")), now).unwrap();
        assert!(
            hours.note().unwrap().contains(", 3 hours ago:"),
            "{hours:?}"
        );
        let ahead = stored_at(&file(Some("2026-12-06T05:40:00Z")), now).unwrap();
        assert!(ahead.note().unwrap().contains("in 60 minutes"), "{ahead:?}");
        // None recorded: the time of saving, said.
        let old = stored_at(&file(None), now).unwrap();
        assert_eq!(old, StoredAt::Saving("2026-12-06T04:40:00Z".into()));
        assert!(old.note().unwrap().contains("without recorded_at"));
        // A time that is not one is named with the fix.
        let e = stored_at(&file(Some("last Tuesday")), now).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("'last Tuesday' is not an RFC 3339 time") && e.contains("remove the field"),
            "{e}"
        );
    }
}
