//! The table's cells and fitting: names cut in the middle, durations, intervals, the words for
//! a body that runs in the loop's own cycles, wrapping.

use super::*;
use crate::analyze::InstructionsCheck;

#[test]
fn names_are_cut_in_the_middle() {
    assert_eq!(
        cut_middle("event copy, 256Ki events (cold)", 15),
        "event c… (cold)"
    );
    assert_eq!(
        text_width(&cut_middle("event copy, 256Ki events (cold)", 15)),
        15
    );
    assert_eq!(cut_middle("add", 15), "add");
}

#[test]
fn short_durations_keep_three_digits() {
    assert_eq!(short_ns(8.123e6), "8.12 ms");
    assert_eq!(short_ns(812.3e3), "812 µs");
    assert_eq!(short_ns(0.2682), "0.2682 ns");
    assert_eq!(short_ns(1.2e9), "1.20 s");
}

#[test]
fn an_interval_shows_both_sides_when_they_differ() {
    // A sort read 27.78 µs with an interval of [27.69, 29.03]: −0.3 % / +4.5 %, which a
    // half-width ("±2.40 %") hides.
    assert_eq!(interval_pct(27.78, [27.69, 29.03]), "−0.32/+4.50%");
    assert_eq!(interval_pct(100.0, [99.0, 101.2]), "±1.10%");
    assert_eq!(interval_pct(100.0, [99.9, 100.2]), "−0.10/+0.20%");
    assert_eq!(interval_pct(100.0, [100.0, 116.0]), "−0/+16.0%");
    assert_eq!(interval_pct(100.0, [99.999, 100.001]), "<±0.01%");
    assert_eq!(interval_pct(f64::NAN, [1.0, 2.0]), "—");
}

#[test]
fn a_body_that_runs_inside_the_loop_s_cycle_is_explained() {
    let c = InstructionsCheck {
        instructions_per_iter: 6.0,
        empty_instructions_per_iter: 2.0,
        moves_per_iter: Some(2.0),
    };
    assert!(!c.removed());
    let w = instructions_words(&c, false);
    assert!(
        w.contains("6.000 instructions per iteration (2.000 of them register moves"),
        "{w}"
    );
    assert!(w.contains("empty loop's 2.000"), "{w}");
    let w = instructions_words(&c, true);
    assert!(w.contains("empty future's on its executor 2.000"), "{w}");
}

#[test]
fn wrapping_respects_the_width() {
    let text = "a ".repeat(100) + &"word ".repeat(40);
    for l in wrap(&text, Some(50), 4, 6) {
        assert!(text_width(&l) + 4 <= 50, "{l}");
    }
    assert_eq!(wrap("x y", None, 0, 0), vec!["x y".to_string()]);
}
