//! The diagnostics in words, from their figures alone: every form of every code is worded as
//! the committed fixture says (`tests/fixtures/diagnostics/worded.json`: the messages the
//! analysis wrote inline before their wording moved to `diagnostic::words`, checked equal when
//! it moved), its data gives the finding back, and a diagnostic without figures keeps the
//! message its file stored.

use std::path::Path;
use vernier::diagnostic::{words, Code, Diagnostic, Finding};

fn fixture() -> Vec<Diagnostic> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diagnostics/worded.json");
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_finding_is_worded_as_the_fixture_says() {
    for d in fixture() {
        let f = match d.finding() {
            Some(f) => f,
            // The one diagnostic without figures.
            None if d.code == Code::DebugBuild && d.data.is_empty() => Finding::DebugBuild,
            None => panic!("{d:?}: its data does not give a finding back"),
        };
        assert_eq!(f.code(), d.code);
        assert_eq!(words::message(&f), d.message);
        assert_eq!(d.text(), d.message);
        // Worded and put back as data, the finding is the fixture's diagnostic again: its data
        // has exactly the finding's figures.
        assert_eq!(
            serde_json::to_value(Diagnostic::from(&f)).unwrap(),
            serde_json::to_value(&d).unwrap()
        );
    }
}

#[test]
fn every_code_has_a_worded_form_in_the_fixture() {
    let codes: Vec<Code> = fixture().iter().map(|d| d.code).collect();
    for c in Code::ALL {
        assert!(codes.contains(&c), "{c} has no case in worded.json");
    }
}

#[test]
fn a_diagnostic_without_its_figures_keeps_its_stored_message() {
    // A file written before diagnostics carried their figures.
    let d: Diagnostic =
        serde_json::from_str(r#"{"code":"nonlinear","message":"as an older build worded it"}"#)
            .unwrap();
    assert!(d.finding().is_none());
    assert_eq!(d.text(), "as an older build worded it");
    // `counters-unavailable` with only its events (what files carried before the other
    // figures): the message stands, the events are read.
    let d: Diagnostic = serde_json::from_str(
        r#"{"code":"counters-unavailable","message":"not read: cycles. no PMU","data":{"events":["cycles"]}}"#,
    )
    .unwrap();
    assert!(d.finding().is_none());
    assert_eq!(d.text(), "not read: cycles. no PMU");
    assert_eq!(d.unread_events(), Some(vec!["cycles".to_string()]));
}

#[test]
fn figures_are_worded_whatever_message_the_file_stored() {
    let mut d = fixture()
        .into_iter()
        .find(|d| d.code == Code::Outliers)
        .unwrap();
    let worded = d.message.clone();
    d.message = "edited by hand".into();
    assert_eq!(d.text(), worded);
}

/// A slow state of shared units (the probe's throughput half slowed, its clock half not) is
/// worded as such, round-trips through the file's data, and one of the clock keeps the
/// fixture's words whatever its throughput half says.
#[test]
fn a_core_shared_at_the_same_clock_is_worded_as_shared() {
    use vernier::diagnostic::Slowed;
    let two = |throughput_slowdown| {
        Finding::CoreSlowed(Slowed::TwoStates {
            fast_cycle_ns: 0.27,
            fast_share: 0.7,
            fast_median_ns: 2.8,
            slow_cycle_ns: 0.272,
            slow_share: 0.3,
            slow_median_ns: 4.9,
            fastest_cycle_ns: 0.27,
            throughput_slowdown,
        })
    };
    let shared = words::message(&two(Some(1.33)));
    assert!(
        shared.contains("1.33× less throughput") && shared.contains("sibling thread"),
        "{shared}"
    );
    let d = Diagnostic::from(&two(Some(1.33)));
    assert_eq!(d.finding(), Some(two(Some(1.33))));
    // The clock's own slowdown (1.01) is not beaten by a throughput half within 5 % of it.
    let clock = words::message(&two(Some(1.03)));
    assert_eq!(clock, words::message(&two(None)));
    assert!(clock.contains("1.01× slower"), "{clock}");
}
