//! The arguments of a benchmark executable (`cargo bench --bench NAME -- …`): what cargo adds
//! (`--bench`) is accepted, a bad budget is refused naming the option.

use vernier::Options;

fn parse(args: &[&str]) -> Result<Options, String> {
    Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn cargo_bench_forms_are_accepted() {
    let o = parse(&["--bench", "sqrt", "--quick"]).unwrap();
    assert_eq!(o.filter.as_deref(), Some("sqrt"));
    assert!(o.quick);
    let o = parse(&["sqrt", "--time", "0.5", "--json", "f.json"]).unwrap();
    assert_eq!(o.plan.time_budget_ns, 500_000_000);
    assert_eq!(o.json.as_deref(), Some(std::path::Path::new("f.json")));
}

#[test]
fn a_bad_time_is_refused_naming_the_option() {
    for bad in ["-1", "0", "NaN", "inf", "abc", ""] {
        let e = parse(&["--time", bad]).unwrap_err();
        assert!(e.starts_with(&format!("--time {bad}:")), "{bad}: {e}");
    }
    assert!(parse(&["--time"]).unwrap_err().contains("--time needs"));
    assert!(parse(&["--quick", "--bogus"])
        .unwrap_err()
        .contains("'--bogus'"));
}
