use super::*;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

fn row_of(name: &str, mark: Mark, ratio: f64) -> Row {
    Row {
        name: name.into(),
        mark,
        ratio,
        ci95: [ratio * 0.99, ratio * 1.01],
        unit: "cycles".into(),
        counts: String::new(),
    }
}

/// 2 slower, 1 faster, 1 inconclusive, `unchanged` unchanged.
fn summary(unchanged: usize) -> Summary {
    let mut rows = vec![
        row_of("slow_a", Mark::Slower, 1.10),
        row_of("fast_c", Mark::Faster, 0.80),
        row_of("slow_b", Mark::Slower, 1.30),
        row_of("unsure_d", Mark::Inconclusive, 1.004),
    ];
    rows[2].counts = "allocs/iter 3 → 5".into();
    for i in 0..unchanged {
        rows.push(row_of(&format!("same_{i:04}"), Mark::Unchanged, 1.0));
    }
    Summary {
        compared: "programs".into(),
        old: "old-build".into(),
        new: "new-build".into(),
        threshold: Some(0.005),
        rows,
        failed: vec![],
        caveats: vec![Caveat {
            name: Some("unsure_d".into()),
            words:
                "inconclusive: about 12 process pairs would resolve it: `--time 3 --processes 12`"
                    .into(),
        }],
    }
}

/// Every table of the document as rendered by a CommonMark + GFM-tables parser: rows of cell
/// texts (header row first), and the raw HTML the document holds.
fn tables(md: &str) -> (Vec<Vec<Vec<String>>>, Vec<String>) {
    let mut out = Vec::new();
    let mut html = Vec::new();
    let (mut table, mut row, mut cell): (Vec<Vec<String>>, Vec<String>, Option<String>) =
        (vec![], vec![], None);
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Table(_)) => table.clear(),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::TableCell) => row.push(cell.take().unwrap_or_default()),
            Event::End(TagEnd::TableHead) | Event::End(TagEnd::TableRow) => {
                table.push(std::mem::take(&mut row))
            }
            Event::End(TagEnd::Table) => out.push(std::mem::take(&mut table)),
            Event::Html(h) | Event::InlineHtml(h) => html.push(h.to_string()),
            _ => {}
        }
    }
    (out, html)
}

#[test]
fn the_table_names_what_changed_worst_first_and_folds_the_rest() {
    let md = render(&summary(200), MAX_CHARS);
    let (tables, html) = tables(&md);
    assert!(md.starts_with("### Vernier: 2 slower, 1 faster, 1 inconclusive, 200 unchanged"));
    assert!(md.contains("`old-build` → `new-build`"), "{md}");
    // The first table holds the four that changed, worst first, each cell as written.
    let first = &tables[0];
    assert_eq!(first[0][0], "benchmark");
    let names: Vec<&str> = first[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["slow_b", "slow_a", "unsure_d", "fast_c"]);
    assert_eq!(first[1][1], "1.3000");
    assert_eq!(first[1][2], "+30.00 % [+28.70, +31.30]");
    assert_eq!(first[1][3], "cycles");
    assert_eq!(first[1][4], "slower");
    assert_eq!(first[1][5], "allocs/iter 3 → 5");
    assert_eq!(first[3][4], "inconclusive");
    // The 200 unchanged are the second table, inside a <details> of their own.
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[1].len(), 201);
    assert!(
        html.concat().contains("<summary>200 unchanged</summary>"),
        "{html:?}"
    );
    let details = md.find("<details>").unwrap();
    assert!(md.find("same_0000").unwrap() > details);
    // The caveat keeps its options as code.
    assert!(md.contains("- `unsure_d`: inconclusive: about 12 process pairs"));
    assert!(md.contains("`--time 3 --processes 12`"), "{md}");
}

#[test]
fn five_thousand_rows_fit_and_say_how_many_were_left_out() {
    let md = render(&summary(5_000), MAX_CHARS);
    assert!(md.chars().count() <= MAX_CHARS, "{}", md.chars().count());
    let (tables, _) = tables(&md);
    let shown = tables[1].len() - 1;
    let left = 5_000 - shown;
    assert!(left > 0 && shown > 100, "{shown} shown");
    assert!(
        md.contains(&format!(
            "*{left} more unchanged rows left out to fit 65000 characters.*"
        )),
        "{}",
        &md[md.len() - 400..]
    );
    // What changed is all there, and every row is whole (no table row cut).
    assert_eq!(tables[0].len(), 5);
    assert!(tables[1][1..].iter().all(|r| r.len() == 6));
    // A smaller budget folds the caveats' and changed rows only after the unchanged ones.
    let tiny = render(&summary(50), 2_000);
    assert!(tiny.len() <= 2_000);
    assert!(tiny.contains("slow_b") && tiny.contains("fast_c"));
    assert!(tiny.contains("more unchanged rows left out"));
}

#[test]
fn hostile_names_are_text() {
    let mut s = summary(1);
    let long = "n".repeat(10_000);
    let names = [
        "<img src=x onerror=alert(1)>",
        "</script><script>alert(1)</script>",
        "a|b`c``d\nnew line @team [x](http://e.com)",
        long.as_str(),
    ];
    for (i, n) in names.iter().enumerate() {
        s.rows[i].name = n.to_string();
    }
    s.old = "<b>old</b>".into();
    s.failed
        .push(("<i>f</i>".into(), "<script>x</script> **bold**".into()));
    let md = render(&s, MAX_CHARS);
    let (tables, html) = tables(&md);
    // The only raw HTML is the writer's own folding tags.
    for h in &html {
        assert!(
            h.starts_with("<details>") || h.starts_with("</details>") || h.contains("<summary>"),
            "raw HTML {h:?} in\n{md}"
        );
    }
    let shown: Vec<&str> = tables[0][1..].iter().map(|r| r[0].as_str()).collect();
    for n in &names {
        let flat = n.replace('\n', " ");
        assert!(shown.contains(&flat.as_str()), "{flat:?} not in {shown:?}");
    }
    // Rendered to HTML, no tag of theirs survives.
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, Parser::new_ext(&md, Options::ENABLE_TABLES));
    for bad in ["<img", "<script", "<b>", "<i>", "<a "] {
        assert!(!out.contains(bad), "{bad} in the HTML");
    }
}

#[test]
fn code_spans_hold_any_text() {
    assert_eq!(code("sqrt"), "`sqrt`");
    assert_eq!(code("a|b"), "`a\\|b`");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x"), "`` `x ``");
    assert_eq!(code("a\nb"), "`a b`");
    assert_eq!(text("<b>*x*</b>"), "\\<b\\>\\*x\\*\\</b\\>");
    assert_eq!(prose("run `--time 3` now"), "run `--time 3` now");
    assert_eq!(prose("odd ` tick"), "odd \\` tick");
}

#[test]
fn nothing_changed_says_so() {
    let mut s = summary(3);
    s.rows.retain(|r| r.mark == Mark::Unchanged);
    s.caveats.clear();
    let md = render(&s, MAX_CHARS);
    assert!(md.starts_with("### Vernier: 3 unchanged"));
    assert!(md.contains("No benchmark changed beyond ±0.50 %."));
    assert_eq!(tables(&md).0.len(), 1);
}

#[test]
fn the_machine_line_says_what_failed() {
    let sys = serde_json::json!({"tuned": false, "failing": ["governor", "boost"]});
    let line = untuned_line("the machine was", &sys).unwrap();
    assert!(line.contains("governor, boost"), "{line}");
    assert!(untuned_line("x", &serde_json::json!({"tuned": true})).is_none());
    assert!(untuned_line("x", &serde_json::json!({})).is_none());
}

/// The comparison file's own path: 2 slower, 1 faster, 1 inconclusive and 200 unchanged
/// comparisons become a table of exactly those four, the 200 folded.
#[test]
fn a_comparison_file_summarises_its_four_changes() {
    use vernier::analyze::pairs::Comparison;
    use vernier::result::comparison::ComparisonFile;
    use vernier::stats::compare::{Mode, Verdict};
    let mut f = ComparisonFile::new(Mode::Paired, 0.005);
    f.old = "old/bench".into();
    f.new = "new/bench".into();
    let mut push = |name: String, ratio: f64, verdict: Verdict| {
        f.comparisons.push(Comparison {
            name,
            ratio,
            ci95: [ratio - 0.002, ratio + 0.002],
            verdict,
            seconds: 1.0,
            ..Comparison::default()
        })
    };
    push("s1".into(), 1.05, Verdict::Slower);
    push("s2".into(), 1.20, Verdict::Slower);
    push("f1".into(), 0.90, Verdict::Faster);
    push("i1".into(), 1.004, Verdict::Inconclusive);
    for i in 0..200 {
        push(format!("u{i}"), 1.0, Verdict::NoChange);
    }
    let md = render(&of_comparison(&f, "programs", None), MAX_CHARS);
    let (tables, _) = tables(&md);
    let names: Vec<&str> = tables[0][1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["s2", "s1", "i1", "f1"]);
    assert!(md.starts_with("### Vernier: 2 slower, 1 faster, 1 inconclusive, 200 unchanged"));
    assert!(md.contains("programs `old/bench` → `new/bench`"));
    assert!(md.contains("<details><summary>200 unchanged</summary>"));
    assert_eq!(tables[1].len(), 201);
    // The inconclusive one says why, with a budget.
    assert!(md.contains("- `i1`: inconclusive:"), "{md}");
}
