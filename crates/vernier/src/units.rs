//! Units for people: durations with a unit that keeps four significant digits, and the work an
//! iteration does ([`Throughput`]) turned into a rate. Beneath the stages: the diagnostics'
//! words (`diagnostic::words`, which the result's messages use) and the report both write
//! durations, and neither reaches into the other; a benchmark's throughput is declared where
//! it is registered (`workload`), listed by a worker (`protocol`), kept in the result and
//! shown by the report.

use serde::{Deserialize, Serialize};

/// The work one iteration does, which turns a time per iteration into a rate: bytes
/// (Google Benchmark's `SetBytesProcessed`, Criterion's `Throughput::Bytes`) or items
/// (`SetItemsProcessed`, `Throughput::Elements`). In the result file:
/// `"throughput": {"bytes_per_iter": 4096}` or `{"items_per_iter": 64}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Throughput {
    BytesPerIter(u64),
    ItemsPerIter(u64),
}

impl Throughput {
    /// The `list` line's option (`bytes=N`, `items=N`; docs/protocol.md).
    pub fn option(self) -> String {
        match self {
            Throughput::BytesPerIter(n) => format!("bytes={n}"),
            Throughput::ItemsPerIter(n) => format!("items={n}"),
        }
    }

    /// The throughput a `list` line's option declares (`None`: another option).
    pub fn parse_option(o: &str) -> Option<Result<Throughput, String>> {
        let (make, v): (fn(u64) -> Throughput, &str) = if let Some(v) = o.strip_prefix("bytes=") {
            (Throughput::BytesPerIter, v)
        } else if let Some(v) = o.strip_prefix("items=") {
            (Throughput::ItemsPerIter, v)
        } else {
            return None;
        };
        Some(
            v.parse::<u64>().map(make).map_err(|_| {
                format!("'{o}' is not a whole number of bytes or items per iteration")
            }),
        )
    }

    /// The rate at `ns_per_iter`: bytes in binary units (`1.50 GiB/s`, as Criterion and Google
    /// Benchmark print them), items in decimal ones (`2.40 M/s`).
    pub fn rate(self, ns_per_iter: f64) -> String {
        if !(ns_per_iter.is_finite() && ns_per_iter > 0.0) {
            return "—".into();
        }
        let (per_s, units, base, unit): (f64, [&str; 5], f64, &str) = match self {
            Throughput::BytesPerIter(b) => (
                b as f64 * 1e9 / ns_per_iter,
                ["B", "KiB", "MiB", "GiB", "TiB"],
                1024.0,
                "/s",
            ),
            Throughput::ItemsPerIter(n) => (
                n as f64 * 1e9 / ns_per_iter,
                ["", " k", " M", " G", " T"],
                1000.0,
                " items/s",
            ),
        };
        let mut v = per_s;
        let mut k = 0;
        while v >= base && k < units.len() - 1 {
            v /= base;
            k += 1;
        }
        let digits = if v >= 100.0 { 1 } else { 2 };
        let sep = if matches!(self, Throughput::BytesPerIter(_)) {
            " "
        } else {
            ""
        };
        format!("{v:.digits$}{sep}{}{unit}", units[k])
    }

    /// Bytes or items per second at `ns_per_iter` (Google Benchmark's `bytes_per_second`,
    /// `items_per_second`).
    pub fn per_second(self, ns_per_iter: f64) -> f64 {
        let n = match self {
            Throughput::BytesPerIter(n) | Throughput::ItemsPerIter(n) => n,
        };
        n as f64 * 1e9 / ns_per_iter
    }
}

/// A duration in ns with a unit that keeps four significant digits; none is exactly `0 ns`
/// (a process's system time the kernel never charged, say), not `0.0000 ns`.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "—".into();
    }
    if ns == 0.0 {
        return "0 ns".into();
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

/// A counter's rate: GHz with three decimals from 1 GHz (a TSC), MHz with one below (an Arm
/// generic timer's 24 MHz, 25 MHz, 121.5 MHz).
pub fn format_hz(hz: f64) -> String {
    if hz >= 1e9 {
        format!("{:.3} GHz", hz / 1e9)
    } else {
        format!("{:.1} MHz", hz / 1e6)
    }
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
    #[test]
    fn rates_keep_their_scale() {
        assert_eq!(super::format_hz(2.793437e9), "2.793 GHz");
        assert_eq!(super::format_hz(25e6), "25.0 MHz");
        assert_eq!(super::format_hz(121.5e6), "121.5 MHz");
    }

    use super::*;

    #[test]
    fn four_significant_digits_and_a_unit() {
        assert_eq!(format_ns(1.6711), "1.671 ns");
        assert_eq!(format_ns(0.25), "0.2500 ns");
        assert_eq!(format_ns(0.0), "0 ns");
        assert_eq!(format_ns(-0.0), "0 ns");
        assert_eq!(format_ns(35_880.0), "35.88 µs");
        assert_eq!(format_ns(2.5e9), "2.500 s");
        assert_eq!(format_ns(f64::NAN), "—");
    }

    #[test]
    fn a_throughput_is_a_rate_in_binary_bytes_or_decimal_items() {
        // 4 KiB in 1 µs: 4096 × 10⁶ B/s = 3.81 GiB/s.
        assert_eq!(Throughput::BytesPerIter(4096).rate(1000.0), "3.81 GiB/s");
        assert_eq!(Throughput::BytesPerIter(100).rate(1e9), "100.0 B/s");
        // 64 items in 20 ns: 3.2 × 10⁹ items/s.
        assert_eq!(Throughput::ItemsPerIter(64).rate(20.0), "3.20 G items/s");
        assert_eq!(Throughput::ItemsPerIter(1).rate(f64::NAN), "—");
        for t in [Throughput::BytesPerIter(7), Throughput::ItemsPerIter(0)] {
            assert_eq!(Throughput::parse_option(&t.option()), Some(Ok(t)));
        }
        assert_eq!(Throughput::parse_option("threads=2"), None);
        assert!(Throughput::parse_option("bytes=-1").unwrap().is_err());
        let json = serde_json::to_string(&Throughput::BytesPerIter(4096)).unwrap();
        assert_eq!(json, r#"{"bytes_per_iter":4096}"#);
    }
}
