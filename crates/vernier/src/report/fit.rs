//! Fitting a table to a terminal's width, shared by the result table and the comparison table:
//! a name column that is cut in the middle before it is narrowed further, figure columns of
//! fixed widths dropped in a table's own order, cells padded to their column, text wrapped.
//! Widths are display columns (`unicode-width`): a CJK character takes two, a combining mark
//! none.

use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

/// The narrowest width a table is fitted to; below it, lines are allowed to overflow.
pub const MIN_WIDTH: usize = 40;
/// A name column is cut (in the middle, with '…') down to this many columns before the
/// columns a table keeps longest are dropped.
pub const NAME_MIN: usize = 18;
/// The fewest columns of a name ever shown, whatever the width.
pub const NAME_FLOOR: usize = 8;

/// Display width of a string in terminal columns.
pub fn text_width(s: &str) -> usize {
    s.width()
}

/// The first characters of `chars` that fill at most `w` columns.
fn take_width(chars: impl Iterator<Item = char>, w: usize) -> String {
    let mut used = 0;
    chars
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= w
        })
        .collect()
}

/// `name` cut to `w` columns, in the middle, with '…' (both ends of a benchmark name tell
/// benchmarks apart: "event copy, … (cold)"). A wide character that would straddle the cut is
/// left out, so the result may be a column narrower.
pub fn cut_middle(name: &str, w: usize) -> String {
    if text_width(name) <= w || w == 0 {
        return name.to_string();
    }
    if w == 1 {
        return "…".into();
    }
    let keep = w - 1;
    let head = keep.div_ceil(2);
    let mut s = take_width(name.chars(), head);
    s.push('…');
    let tail: Vec<char> = take_width(name.chars().rev(), keep - head)
        .chars()
        .collect();
    s.extend(tail.iter().rev());
    s
}

/// `line` cut to `w` columns at its end, with '…' (a line that is not wrapped).
pub fn cut_end(line: &str, w: usize) -> String {
    if text_width(line) <= w {
        return line.to_string();
    }
    let mut s = take_width(line.chars(), w.saturating_sub(1));
    s.push('…');
    s
}

/// `s` padded with spaces to `w` columns, left- or right-aligned.
pub fn pad(s: &str, w: usize, right: bool) -> String {
    let fill = " ".repeat(w.saturating_sub(text_width(s)));
    if right {
        format!("{fill}{s}")
    } else {
        format!("{s}{fill}")
    }
}

/// One step of making a table narrower, taken only while it does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step<C> {
    /// Allow names to be cut (in the middle) down to [`NAME_MIN`] characters.
    CutNames,
    /// Drop a column.
    Drop(C),
}

/// The name column's width and the columns kept so that a row fits `width` (`None`: all of
/// them, names whole). A row is the name, then each column after two spaces (`col_width` of
/// it), then `extra` fixed columns. The name gets all the room it needs up to `longest`; while
/// that is less than it may be cut to, `steps` are taken in order; when none is left, the name
/// takes what remains, [`NAME_FLOOR`] characters at least.
pub(super) fn fit<C: Copy + PartialEq>(
    longest: usize,
    width: Option<usize>,
    mut cols: Vec<C>,
    col_width: impl Fn(C) -> usize,
    extra: usize,
    steps: &[Step<C>],
) -> (usize, Vec<C>) {
    let Some(width) = width else {
        return (longest, cols);
    };
    let width = width.max(MIN_WIDTH);
    let room = |cols: &[C]| {
        let used = cols.iter().map(|&c| col_width(c) + 2).sum::<usize>() + extra;
        width.saturating_sub(used)
    };
    // The narrowest the name may be cut to before the next step is taken.
    let mut cut_to = longest;
    for &step in steps {
        if room(&cols) >= cut_to {
            return (longest.min(room(&cols)), cols);
        }
        match step {
            Step::CutNames => cut_to = cut_to.min(NAME_MIN),
            Step::Drop(d) => cols.retain(|&c| c != d),
        }
    }
    let left = room(&cols);
    if left >= cut_to {
        (longest.min(left), cols)
    } else {
        (longest.min(left.max(NAME_FLOOR)), cols)
    }
}

/// `text` cut into lines at spaces so that each, printed after `lead` columns, fits in `width`
/// (`None`: one line); continuation lines start with `hang` spaces (included here).
pub fn wrap(text: &str, width: Option<usize>, lead: usize, hang: usize) -> Vec<String> {
    let Some(w) = width else {
        return vec![text.to_string()];
    };
    let w = w.max(MIN_WIDTH);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let n = text_width(word);
        if !cur.trim_start().is_empty() && lead + text_width(&cur) + 1 + n > w {
            lines.push(std::mem::take(&mut cur));
            cur.push_str(&" ".repeat(hang));
        }
        if !cur.trim_start().is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.trim().is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum C {
        A,
        B,
    }
    const STEPS: [Step<C>; 3] = [Step::CutNames, Step::Drop(C::B), Step::Drop(C::A)];

    fn fitted(longest: usize, width: usize) -> (usize, Vec<C>) {
        fit(longest, Some(width), vec![C::A, C::B], |_| 10, 0, &STEPS)
    }

    #[test]
    fn names_are_cut_before_columns_go_and_take_the_room_a_drop_frees() {
        // Everything fits: whole names, both columns.
        assert_eq!(fitted(30, 54), (30, vec![C::A, C::B]));
        // Names cut, down to NAME_MIN, before a column goes.
        assert_eq!(fitted(30, 50), (26, vec![C::A, C::B]));
        assert_eq!(fitted(30, 42), (18, vec![C::A, C::B]));
        // Then a column goes, and the name gets the room it frees (not only NAME_MIN).
        assert_eq!(fitted(30, 41), (29, vec![C::A]));
        // A short name is never cut to make room: the columns go first.
        assert_eq!(
            fit(12, Some(40), vec![C::A, C::B], |_| 14, 0, &STEPS),
            (12, vec![C::A])
        );
        // No width: nothing is cut or dropped.
        assert_eq!(
            fit(99, None, vec![C::A], |_| 10, 0, &STEPS),
            (99, vec![C::A])
        );
    }

    #[test]
    fn with_nothing_left_to_drop_the_name_keeps_its_floor() {
        let (w, cols) = fit(30, Some(40), vec![C::A], |_| 36, 0, &[Step::CutNames]);
        assert_eq!((w, cols), (NAME_FLOOR, vec![C::A]));
        let (w, _) = fit(30, Some(40), vec![C::A], |_| 20, 0, &[Step::CutNames]);
        assert_eq!(w, 18);
    }

    #[test]
    fn cutting_keeps_both_ends() {
        assert_eq!(
            cut_middle("event copy, 256 Ki events (cold)", 15),
            "event c… (cold)"
        );
        assert_eq!(cut_middle("short", 15), "short");
        assert_eq!(pad("ab", 4, true), "  ab");
        assert_eq!(pad("ab", 4, false), "ab  ");
        assert_eq!(cut_end("0123456789", 5), "0123…");
        assert_eq!(cut_end("short", 5), "short");
    }

    #[test]
    fn widths_are_display_columns() {
        // Two columns a CJK character, none a combining mark, one the report's own signs.
        assert_eq!(text_width("整数の並べ替え"), 14);
        assert_eq!(text_width("cafe\u{301}"), 4);
        assert_eq!(text_width("±—…×→µ·"), 7);
        assert_eq!(pad("整数", 6, false), "整数  ");
        assert_eq!(pad("整数", 6, true), "  整数");
        // Cut to 9 columns: 4 before '…', 4 after; never more than asked.
        let cut = cut_middle("整数の並べ替え (冷)", 9);
        assert_eq!(cut, "整数…(冷)");
        assert!(text_width(&cut) <= 9, "{cut}");
        for w in 1..20 {
            assert!(text_width(&cut_middle("整数の並べ替え (冷)", w)) <= w.max(1));
            assert!(text_width(&cut_end("整数の並べ替え (冷)", w)) <= w);
        }
        assert_eq!(cut_end("整数の並べ替え", 6), "整数…");
    }
}
