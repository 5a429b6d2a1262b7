//! The complexity fits of families of benchmarks: membership, settled sizes, declarations.

use super::*;
use crate::stats::complexity::best_fit;

#[test]
fn a_family_is_the_name_before_a_whole_number() {
    assert_eq!(family_of("sort/1024"), Some(("sort", 1024)));
    assert_eq!(family_of("copy/a/8"), Some(("copy/a", 8)));
    assert_eq!(family_of("counter/threads:2"), None);
    assert_eq!(family_of("sort/0"), None);
    assert_eq!(family_of("/8"), None);
    assert_eq!(family_of("sqrt"), None);
}

fn result(name: &str, median_ns: f64, d: Option<Declared>) -> BenchmarkResult {
    let mut r = BenchmarkResult::failed(name, String::new());
    r.status = Status::Ok;
    r.error = None;
    r.per_iter.median_ns = median_ns;
    r.complexity = d;
    r
}

const SIZES: [u64; 4] = [256, 2048, 16384, 65536];

#[test]
fn a_size_whose_median_is_not_settled_is_left_out_while_three_settled_sizes_remain() {
    // N·log₂N at five sizes, the largest read twice too slow: by least squares through the
    // origin that one median makes the family O(N^2).
    let sizes = [256u64, 1024, 4096, 16384, 65536];
    let nlogn = |n: u64| 1.5 * n as f64 * (n as f64).log2();
    let family = |flag: Option<Code>| -> Vec<BenchmarkResult> {
        sizes
            .iter()
            .map(|&n| {
                let slow = if n == 65536 { 2.0 } else { 1.0 };
                let mut r = result(&format!("sort/{n}"), slow * nlogn(n), None);
                if let (Some(code), 65536) = (flag, n) {
                    r.diagnostics
                        .push(crate::diagnostic::Diagnostic::new(code, ""));
                }
                r
            })
            .collect()
    };
    let fit = &families(&family(None))[0];
    assert_eq!(
        (fit.class, fit.sizes.len()),
        (Class::Quadratic, 5),
        "{fit:?}"
    );
    assert!(fit.left_out.is_empty());
    for code in [Code::Unstable, Code::NoSteadyState] {
        let fit = &families(&family(Some(code)))[0];
        assert_eq!(fit.class, Class::NLogN, "{fit:?}");
        assert_eq!(
            (&fit.sizes[..], &fit.left_out[..]),
            (&sizes[..4], &[65536][..])
        );
        assert!((fit.coefficient_ns / 1.5 - 1.0).abs() < 1e-9, "{fit:?}");
        assert!(
            fit.line().ends_with(
                "; fitted through N = 256, 1024, 4096, 16384, N = 65536 left out: not settled)"
            ),
            "{}",
            fit.line()
        );
    }
    // With no three settled sizes, the precise ones carry the fit, unstable or not: here every
    // median is (no interval says otherwise), so all five are fitted, as flagged on their rows.
    let mut few = family(Some(Code::Unstable));
    for r in &mut few[..3] {
        r.diagnostics
            .push(crate::diagnostic::Diagnostic::new(Code::Unstable, ""));
    }
    let fit = &families(&few)[0];
    assert_eq!((fit.sizes.len(), fit.left_out.len()), (5, 0), "{fit:?}");
}

/// Sizes of `t = 3 · N·log₂N` with a 95 % interval of ±`rel` each: `(N, median, interval)`.
fn sort_family(sizes: &[u64], rel: f64) -> Vec<BenchmarkResult> {
    sizes
        .iter()
        .map(|&n| {
            let t = 3.0 * n as f64 * (n as f64).log2();
            let mut r = result(&format!("BM_sort/{n}"), t, None);
            r.per_iter.ci95_ns = [t * (1.0 - rel), t * (1.0 + rel)];
            r
        })
        .collect()
}

#[test]
fn a_largest_size_read_wildly_high_is_left_out_by_its_interval_flagged_or_not() {
    // A sort measured under load: the largest size read 2.3 times its cost, its interval
    // −56.7 % / +1.89 % (what a busy machine gave BM_sort/65536); the others settled at ±1 %.
    let sizes = [256u64, 1024, 4096, 16384, 65536];
    let mut b = sort_family(&sizes, 0.01);
    let last = b.last_mut().unwrap();
    let t = 2.3 * last.per_iter.median_ns;
    last.per_iter.median_ns = t;
    last.per_iter.ci95_ns = [t * (1.0 - 0.567), t * 1.0189];
    // Believed, that one median makes a sort O(N^2).
    let all: Vec<(f64, f64)> = b
        .iter()
        .map(|r| (member_of(r).unwrap().1 as f64, r.per_iter.median_ns))
        .collect();
    assert_eq!(best_fit(&all).unwrap().class, Class::Quadratic);
    for flagged in [false, true] {
        let mut b = b.clone();
        if flagged {
            let d = crate::diagnostic::Diagnostic::new(Code::Unstable, "");
            b.last_mut().unwrap().diagnostics.push(d);
        }
        let (told, untold) = fits(&b);
        assert!(untold.is_empty(), "{untold:?}");
        let fit = &told[0];
        assert_eq!(fit.class, Class::NLogN, "flagged {flagged}: {fit:?}");
        assert_eq!(
            (&fit.sizes[..], &fit.left_out[..]),
            (&sizes[..4], &[65536][..])
        );
        assert!((fit.coefficient_ns / 3.0 - 1.0).abs() < 1e-9, "{fit:?}");
    }
    // The same suite, every size settled: fitted as before, over all five, nothing left out.
    let clean = sort_family(&sizes, 0.01);
    let (told, untold) = fits(&clean);
    assert!(untold.is_empty());
    assert_eq!((told[0].class, told[0].sizes.len()), (Class::NLogN, 5));
    assert!(told[0].left_out.is_empty() && !told[0].line().contains("left out"));
    // Every size unstable at ±5 %: no three settled, so the precise ones carry the fit.
    let mut unstable = sort_family(&sizes, 0.05);
    for r in &mut unstable {
        r.diagnostics
            .push(crate::diagnostic::Diagnostic::new(Code::Unstable, ""));
    }
    unstable[4] = b[4].clone();
    let fit = &families(&unstable)[0];
    assert_eq!(fit.class, Class::NLogN, "{fit:?}");
    assert_eq!(
        (&fit.sizes[..], &fit.left_out[..]),
        (&sizes[..4], &[65536][..])
    );
    // Three sizes past ±20 %: the class cannot be told, and what every size would read is
    // given beside the two precise ones.
    let mut wide = b.clone();
    for r in &mut wide[..2] {
        let t = r.per_iter.median_ns;
        r.per_iter.ci95_ns = [t * 0.7, t * 1.01];
    }
    let (told, untold) = fits(&wide);
    assert!(told.is_empty(), "{told:?}");
    let u = &untold[0];
    assert_eq!(
        (&u.sizes[..], &u.precise[..], u.all_sizes_read),
        (&sizes[..], &[4096, 16384][..], Some(Class::Quadratic))
    );
    let line = u.line();
    assert!(
        line.starts_with("BM_sort: the class cannot be told: of 5 sizes, only 2 precise enough (N = 4096, 16384), 3 needed")
            && line.contains("it would read O(N^2), which they decide"),
        "{line}"
    );
    let (told, untold) = fits(&sort_family(&sizes, 0.3));
    assert!(
        told.is_empty() && untold[0].precise.is_empty(),
        "{untold:?}"
    );
    assert!(
        untold[0].line().contains("of 5 sizes, none precise enough"),
        "{}",
        untold[0].line()
    );
}

#[test]
fn a_declared_function_is_fitted_through_its_values_beside_the_best_usual_class() {
    let f = |n: u64| (n as f64).powf(1.5);
    let given = |n| Declared {
        f: Some(f(n)),
        function: Some("N^1.5".into()),
        ..Declared::default()
    };
    let mut b: Vec<BenchmarkResult> = SIZES
        .iter()
        .map(|&n| result(&format!("walk/{n}"), 0.5 * f(n), Some(given(n))))
        .collect();
    // One size without the function's value is left out of a function's family.
    b.push(result("walk/100000", 9.0, None));
    let fits = families(&b);
    assert_eq!(fits.len(), 1, "{fits:?}");
    let fit = &fits[0];
    assert_eq!((fit.class, fit.declared), (Class::Custom, true));
    assert!(
        (fit.coefficient_ns - 0.5).abs() < 1e-9 && fit.rms < 1e-9,
        "{fit:?}"
    );
    assert_eq!(fit.sizes, SIZES.to_vec());
    assert_eq!(fit.f.len(), 4);
    let best = fit.best.unwrap();
    assert!(best.class != Class::Custom && best.rms > 0.05, "{best:?}");
    let line = fit.line();
    assert!(line.starts_with("walk: f(N) = N^1.5 as declared, 0.5000 ns·f(N) (RMS 0.0 %, 4 sizes 256–65536; the best usual class is "), "{line}");
    let fitted = fit.fitted_at_sizes();
    assert!((fitted[1].1 - 0.5 * f(2048)).abs() < 1e-6, "{fitted:?}");
    // The file keeps the declaration and the fit: both read back the same.
    let json = serde_json::to_string(&fits).unwrap();
    assert!(
        json.contains(r#""class":"f(N)""#) && json.contains(r#""function":"N^1.5""#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Vec<FamilyFit>>(&json).unwrap(), fits);
}

#[test]
fn a_declared_class_is_kept_even_where_another_fits_better_and_says_so() {
    let b: Vec<BenchmarkResult> = SIZES
        .iter()
        .map(|&n| {
            let d = Declared {
                class: Some(Class::Quadratic),
                ..Declared::default()
            };
            result(&format!("scan/{n}"), 0.3 * n as f64, Some(d))
        })
        .collect();
    let fit = &families(&b)[0];
    assert_eq!((fit.class, fit.declared), (Class::Quadratic, true));
    assert!(fit.rms > 0.1);
    assert_eq!(fit.best.unwrap().class, Class::Linear);
    let line = fit.line();
    assert!(
        line.contains("O(N^2) as declared") && line.contains("ns·N²"),
        "{line}"
    );
    assert!(
        line.contains("e-"),
        "a tiny coefficient in scientific notation: {line}"
    );
    assert!(
        line.ends_with("the best usual class is O(N), RMS 0.0 %)"),
        "{line}"
    );
    // Undeclared, the same medians read O(N), and no comparison is added.
    let plain: Vec<BenchmarkResult> = b
        .iter()
        .map(|r| result(&r.name, r.per_iter.median_ns, None))
        .collect();
    let fit = &families(&plain)[0];
    assert_eq!(
        (fit.class, fit.declared, fit.best),
        (Class::Linear, false, None)
    );
    assert!(!fit.line().contains("declared"));
}

#[test]
fn a_declared_family_and_n_group_benchmarks_their_names_do_not() {
    // Google Benchmark's `Args({n, 2})` with `SetComplexityN(range(0))`: the N is not the
    // name's last argument, and the family is the name without its arguments.
    let b: Vec<BenchmarkResult> = SIZES
        .iter()
        .map(|&n| {
            let d = Declared {
                family: Some("BM_x".into()),
                n: Some(n),
                ..Declared::default()
            };
            result(&format!("BM_x/{n}/2"), 2.0 * n as f64, Some(d))
        })
        .collect();
    let fits = families(&b);
    assert_eq!(fits.len(), 1, "{fits:?}");
    assert_eq!(
        (fits[0].family.as_str(), fits[0].class),
        ("BM_x", Class::Linear)
    );
    assert_eq!(member_of(&b[1]), Some(("BM_x", 2048)));
    // An N without a family: the name's own family, or the whole name when it has none.
    let d = Declared {
        n: Some(5),
        ..Declared::default()
    };
    assert_eq!(
        member_of(&result("BM_y", 1.0, Some(d.clone()))),
        Some(("BM_y", 5))
    );
    assert_eq!(
        member_of(&result("BM_y/8", 1.0, Some(d))),
        Some(("BM_y", 5))
    );
}

#[test]
fn a_declaration_round_trips_through_its_list_options_and_bad_ones_are_named() {
    let d = Declared {
        family: Some("BM x".into()),
        n: Some(4096),
        class: None,
        f: Some(1.0 / 3.0),
        function: Some("N log N / 3".into()),
    };
    let line = d.options();
    assert!(
        line.contains(" family=BM%20x ") && line.contains(" n=4096"),
        "{line}"
    );
    let parsed = Declared::parse_options(line.split(' ').filter(|o| !o.is_empty()));
    assert_eq!(parsed, Ok(Some(d)));
    assert_eq!(Declared::parse_options(["bytes=8", "threads=2"]), Ok(None));
    let class = Declared::parse_options(["complexity=NlgN"])
        .unwrap()
        .unwrap();
    assert_eq!(class.class, Some(Class::NLogN));
    for (bad, needle) in [
        (vec!["complexity=N^4"], "the classes are"),
        (vec!["complexity=N", "f=2"], "not both"),
        (vec!["function=x"], "without f="),
        (vec!["f=-1"], "not negative"),
        (vec!["f=inf"], "not negative"),
        (vec!["f=x"], "not a number"),
        (vec!["n=-3"], "whole number"),
    ] {
        let e = Declared::parse_options(bad.iter().copied()).unwrap_err();
        assert!(e.contains(needle), "{bad:?}: {e}");
    }
}
