//! Parsing callgrind's output and the differencing, on fixed text.

use vernier_cli::instructions::*;

const OUT_1000: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 6865
cmd:  ./b 1000
part: 1

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
summary: 6007 1 1 1 0 0 1 0 0 1001 10

fl=(1) b.c
fn=(1) vernier_measured_loop
5 6007 1 1 1 0 0 1 0 0 1001 10
totals: 6007 1 1 1 0 0 1 0 0 1001 10
";

const OUT_2000: &str = "\
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
summary: 12007 1 1 1 0 0 1 0 0 2001 10
totals: 12007 1 1 1 0 0 1 0 0 2001 10
";

#[test]
fn totals_are_read_with_trailing_zeros_restored() {
    let c = parse_callgrind_output(OUT_1000).unwrap();
    assert_eq!(c.names.len(), 13);
    assert_eq!(c.values.len(), 13);
    assert_eq!(c.get("Ir"), Some(6007));
    assert_eq!(c.get("Bc"), Some(1001));
    assert_eq!(c.get("Bcm"), Some(10));
    assert_eq!(c.get("Bi"), Some(0));
    assert_eq!(c.get("Bim"), Some(0));
    assert_eq!(c.get("nope"), None);
}

#[test]
fn summary_is_used_when_there_is_no_totals_line() {
    let c = parse_callgrind_output("events: Ir\nsummary: 42\n").unwrap();
    assert_eq!(c.get("Ir"), Some(42));
}

#[test]
fn malformed_output_is_an_error() {
    assert!(parse_callgrind_output("totals: 1\n").is_err());
    assert!(parse_callgrind_output("events: Ir\n").is_err());
    assert!(parse_callgrind_output("events: Ir\ntotals: 1 2\n").is_err());
    assert!(parse_callgrind_output("events: Ir\ntotals: x\n").is_err());
}

#[test]
fn differencing_cancels_the_fixed_cost() {
    let a = parse_callgrind_output(OUT_1000).unwrap();
    let b = parse_callgrind_output(OUT_2000).unwrap();
    let d = difference(1000, &a, 2000, &b).unwrap();
    let names: Vec<&str> = d.iter().map(|(n, _)| n.as_str()).collect();
    // The reported events first, in their order, then the others.
    assert_eq!(
        names,
        [
            "Ir", "D1mr", "D1mw", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim", "Dr", "Dw", "I1mr",
            "ILmr"
        ]
    );
    assert_eq!(d[0].1, 6.0);
    assert_eq!(d[5].1, 1.0);
    assert_eq!(d[6].1, 0.0);
    assert!(difference(2000, &b, 1000, &a).is_err());
    assert!(difference(1000, &a, 1000, &a).is_err());
}

#[test]
fn events_missing_from_a_run_are_not_reported() {
    let a = parse_callgrind_output("events: Ir\ntotals: 100\n").unwrap();
    let b = parse_callgrind_output(OUT_2000).unwrap();
    let d = difference(10, &a, 20, &b).unwrap();
    assert_eq!(d, vec![("Ir".to_string(), (12007.0 - 100.0) / 10.0)]);
}
