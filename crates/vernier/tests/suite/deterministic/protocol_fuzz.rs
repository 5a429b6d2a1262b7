//! Property tests of the protocol parsers (`vernier::protocol`), both sides: whatever a worker
//! or a runner sends — binary garbage, truncated lines, wrong types, huge, negative or NaN
//! numbers, columns of the wrong length — parsing ends in `Ok` or in an error naming what is
//! wrong, never in a panic. A fixed seed makes every run try the same cases; the number tried
//! is `CASES` per property.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use vernier::protocol::{decode_name, parse_samples, Command, Hello, RunRequest, MAX_SAMPLE_VALUE};

/// Cases per property: 9 properties × 2000 = 18 000 cases per run.
const CASES: u32 = 2000;

fn config() -> Config {
    Config {
        cases: CASES,
        rng_seed: RngSeed::Fixed(0x0B5E_55ED),
        failure_persistence: None,
        ..Config::default()
    }
}

/// A well-formed `samples` reply of `n` samples with one counter column and its scaled flags.
fn good_samples(ns: &[u64], ctr: &[Option<u64>], scaled: &[bool]) -> String {
    let join = |v: Vec<String>| v.join(",");
    format!(
        "samples {} ns={} ctr.cycles={} scaled.cycles={}",
        ns.len(),
        join(ns.iter().map(|x| x.to_string()).collect()),
        join(
            ctr.iter()
                .map(|x| x.map(|v| v.to_string()).unwrap_or_default())
                .collect()
        ),
        join(
            scaled
                .iter()
                .map(|&f| if f { "1" } else { "0" }.to_string())
                .collect()
        )
    )
}

fn good_hello() -> String {
    "hello 1 impl=vernier-cpp/0.1.0 timer=tsc resolution_ns=10.0 overhead_ns=20.5 \
     tsc_hz=2596000000 build=release pid=4242"
        .to_string()
}

/// Values of the wrong type or out of range for an integer field.
fn bad_integer() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("-1".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("1e400".to_string()),
        Just("0x10".to_string()),
        Just("+".to_string()),
        Just("18446744073709551616".to_string()),
        Just(u64::MAX.to_string()),
        Just((MAX_SAMPLE_VALUE + 1).to_string()),
        Just("½".to_string()),
        "[a-zA-Z]{1,8}",
        (-1_000_000i64..0).prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:e}")),
    ]
}

/// Values a finite non-negative number field must refuse.
fn bad_number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("NaN".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("1e400".to_string()),
        Just("abc".to_string()),
        (-1e12f64..-1e-9).prop_map(|v| v.to_string()),
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Binary garbage, read as the runner reads a line (lossy UTF-8), never panics any parser.
    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300), n in 0usize..8) {
        let line = String::from_utf8_lossy(&bytes);
        let _ = parse_samples(&line, n);
        let _ = Hello::parse(&line);
        let _ = Command::parse(&line);
        let _ = decode_name(&line);
    }

    /// Garbage after a valid prefix (so the parsers get past their first token), with any
    /// whitespace, including multi-byte Unicode spaces before `error`.
    #[test]
    fn garbage_after_a_keyword_never_panics(
        prefix in prop_oneof![
            Just("samples "), Just("samples 3 ns="), Just("error"), Just("\u{2003}\u{2003}error"),
            Just("hello 1 "), Just("run "), Just("run 0 iters="), Just("%"),
        ],
        tail in "\\PC{0,80}",
        n in 0usize..8,
    ) {
        let line = format!("{prefix}{tail}");
        let _ = parse_samples(&line, n);
        let _ = Hello::parse(&line);
        let _ = Command::parse(&line);
        let _ = decode_name(&line);
    }

    /// A valid reply parses back to what was sent.
    #[test]
    fn valid_samples_round_trip(
        cols in prop::collection::vec((0..MAX_SAMPLE_VALUE, prop::option::of(0..MAX_SAMPLE_VALUE), any::<bool>()), 1..40)
    ) {
        let ns: Vec<u64> = cols.iter().map(|c| c.0).collect();
        let ctr: Vec<Option<u64>> = cols.iter().map(|c| c.1).collect();
        let scaled: Vec<bool> = cols.iter().map(|c| c.2).collect();
        let b = parse_samples(&good_samples(&ns, &ctr, &scaled), ns.len()).unwrap();
        prop_assert_eq!(&b.ns, &ns);
        prop_assert_eq!(&b.counters[0].values, &ctr);
        prop_assert_eq!(&b.counters[0].scaled, &scaled);
    }

    /// A valid reply cut anywhere never panics. Most cuts are refused; the ones that pass cut
    /// whole optional tokens (counters) or the digits of the line's last number, which no
    /// parser can tell from a shorter number: the runner only parses lines ended by `\n`
    /// (`WorkerProcess::read_line`), so a worker dying mid-line is "closed the protocol",
    /// never a parsed reply. What passes has every column whole but that last number.
    #[test]
    fn truncated_samples_are_refused_or_whole(
        ns in prop::collection::vec(0..1_000_000u64, 2..20),
        cut in any::<prop::sample::Index>(),
    ) {
        let ctr: Vec<Option<u64>> = ns.iter().map(|&x| Some(x * 3)).collect();
        let scaled = vec![false; ns.len()];
        let line = good_samples(&ns, &ctr, &scaled);
        let at = cut.index(line.len());
        let short = &line[..at];
        match parse_samples(short, ns.len()) {
            Ok(b) => {
                prop_assert_eq!(b.ns.len(), ns.len());
                let last = ns.len() - 1;
                prop_assert_eq!(&b.ns[..last], &ns[..last]);
                prop_assert!(ns[last].to_string().starts_with(&b.ns[last].to_string()));
                for c in &b.counters {
                    prop_assert_eq!(c.values.len(), ns.len());
                }
            }
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }

    /// A wrong value in any integer field is refused, and the error names the field.
    #[test]
    fn a_bad_value_names_its_field(
        ns in prop::collection::vec(0..1_000_000u64, 1..10),
        which in 0usize..3,
        pos in any::<prop::sample::Index>(),
        bad in bad_integer(),
    ) {
        let n = ns.len();
        let mut cols: Vec<Vec<String>> = vec![
            ns.iter().map(|x| x.to_string()).collect(),
            ns.iter().map(|x| (x + 1).to_string()).collect(),
            vec!["0".to_string(); n],
        ];
        let i = pos.index(n);
        // An empty counter value means "not counted", which is valid.
        prop_assume!(!(which == 1 && bad.is_empty()));
        cols[which][i] = bad.clone();
        let line = format!(
            "samples {n} ns={} ctr.cycles={} scaled.cycles={}",
            cols[0].join(","), cols[1].join(","), cols[2].join(",")
        );
        let field = ["'ns'", "'ctr.cycles'", "'scaled.cycles'"][which];
        match parse_samples(&line, n) {
            Ok(_) => prop_assert!(false, "accepted {bad:?} in {field}: {line}"),
            Err(e) => prop_assert!(e.contains(field), "{e}"),
        }
    }

    /// Columns of the wrong length, or a count that disagrees, are refused with the field.
    #[test]
    fn columns_of_the_wrong_length_are_refused(
        n in 1usize..20,
        ns_len in 0usize..25,
        ctr_len in 1usize..25,
        asked in 1usize..25,
    ) {
        prop_assume!(ns_len != n || ctr_len != n || asked != n);
        let col = |k: usize| vec!["7"; k].join(",");
        let line = format!("samples {n} ns={} ctr.cycles={}", col(ns_len), col(ctr_len));
        match parse_samples(&line, asked) {
            Ok(_) => prop_assert!(false, "accepted {line} for {asked}"),
            Err(e) => prop_assert!(e.contains("'ns'") || e.contains("'ctr.cycles'"), "{e}"),
        }
    }

    /// A bad number in a `hello` field is refused, naming the field.
    #[test]
    fn a_bad_hello_field_is_named(which in 0usize..3, bad in bad_number()) {
        let field = ["resolution_ns", "overhead_ns", "tsc_hz"][which];
        let line = good_hello().replace(
            &format!("{field}={}", ["10.0", "20.5", "2596000000"][which]),
            &format!("{field}={bad}"),
        );
        match Hello::parse(&line) {
            Ok(h) => prop_assert!(false, "accepted {bad:?} as {field}: {h:?}"),
            Err(e) => prop_assert!(e.contains(field), "{e}"),
        }
    }

    /// The runner's commands, damaged, are refused by the worker side without a panic; the
    /// valid ones round-trip.
    #[test]
    fn run_commands_parse_or_are_refused(
        index in 0usize..1000,
        iters in prop_oneof![Just("0".to_string()), bad_integer(), (1u64..u64::MAX).prop_map(|v| v.to_string())],
        samples in prop_oneof![Just("0".to_string()), bad_integer(), (1usize..100000).prop_map(|v| v.to_string())],
    ) {
        let line = format!("run {index} iters={iters} samples={samples}");
        match Command::parse(&line) {
            Ok(Command::Run(RunRequest { iters: i, samples: s, .. })) => {
                prop_assert_eq!(i.to_string(), iters);
                prop_assert_eq!(s.to_string(), samples);
                prop_assert!(i >= 1 && s >= 1);
            }
            Ok(other) => prop_assert!(false, "{other:?}"),
            Err(e) => prop_assert!(e.contains("bad option"), "{e}"),
        }
    }

    /// Percent-encoded names: any name round-trips; a damaged escape is an error.
    #[test]
    fn names_round_trip_and_bad_escapes_are_refused(name in "\\PC{0,40}", junk in "[^0-9A-Fa-f]{1,2}") {
        let enc = vernier::protocol::encode_name(&name);
        prop_assert_eq!(decode_name(&enc).unwrap(), name);
        let damaged = format!("{enc}%{junk}");
        prop_assert!(decode_name(&damaged).is_err());
    }
}

#[test]
fn an_error_reply_after_unicode_spaces_keeps_its_message() {
    // Two em spaces (3 bytes each) before `error`: the message is what follows `error`.
    let e = parse_samples("\u{2003}\u{2003}error boom", 1).unwrap_err();
    assert_eq!(e, "boom");
}

#[test]
fn huge_values_are_named_not_wrapped() {
    let line = format!("samples 2 ns=5,{}", u64::MAX);
    let e = parse_samples(&line, 2).unwrap_err();
    assert!(e.contains("'ns'") && e.contains("2^53"), "{e}");
    let e = Hello::parse("hello 1 timer=tsc resolution_ns=NaN").unwrap_err();
    assert!(e.contains("'resolution_ns'"), "{e}");
    let e = Hello::parse("hello 1 pid=-3").unwrap_err();
    assert!(e.contains("'pid'"), "{e}");
}
