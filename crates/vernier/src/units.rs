//! Units for people: durations with a unit that keeps four significant digits. Beneath the
//! stages: the diagnostics' words (`diagnostic::words`, which the result's messages use) and
//! the report both write durations, and neither reaches into the other.

/// A duration in ns with a unit that keeps four significant digits.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "—".into();
    }
    let (v, unit) = if ns.abs() >= 1e9 {
        (ns / 1e9, "s")
    } else if ns.abs() >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns.abs() >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let digits = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 10.0 {
        2
    } else if v.abs() >= 1.0 {
        3
    } else {
        4
    };
    format!("{v:.digits$} {unit}")
}

/// A count with four significant digits (0 as "0").
pub fn format_count(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_significant_digits_and_a_unit() {
        assert_eq!(format_ns(1.6711), "1.671 ns");
        assert_eq!(format_ns(0.25), "0.2500 ns");
        assert_eq!(format_ns(35_880.0), "35.88 µs");
        assert_eq!(format_ns(2.5e9), "2.500 s");
        assert_eq!(format_ns(f64::NAN), "—");
    }
}
