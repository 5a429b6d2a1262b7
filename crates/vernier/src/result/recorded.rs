//! When a result was measured: a file's `recorded_at`, the UTC time its measuring started, as
//! RFC 3339 to the second (`2026-11-23T00:19:38Z`). Formatted here by hand, so that the crate
//! users link takes no date library for one line of civil-calendar arithmetic; reading one
//! back (any RFC 3339 offset) is the CLI's, which has a date library for it.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` as RFC 3339 in UTC, to the second (`2026-11-23T00:19:38Z`); a time before 1970 is given
/// as 1970-01-01T00:00:00Z.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The present moment as [`rfc3339_utc`] writes it: a file's `recorded_at` when its measuring
/// starts.
pub fn now() -> String {
    rfc3339_utc(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339_utc_to_the_second() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day) 12:34:56.
        let t = UNIX_EPOCH + Duration::from_secs(951_827_696);
        assert_eq!(rfc3339_utc(t), "2000-02-29T12:34:56Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_393_178_999);
        assert_eq!(rfc3339_utc(t), "2026-11-23T00:19:38Z");
        // The last second of a year, and the first of the next.
        let t = UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(rfc3339_utc(t), "2026-12-31T23:59:59Z");
        assert_eq!(
            rfc3339_utc(t + Duration::from_secs(1)),
            "2027-01-01T00:00:00Z"
        );
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00Z"
        );
    }
}
