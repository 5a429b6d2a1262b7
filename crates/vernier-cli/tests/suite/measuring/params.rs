//! Parameters, throughput and complexity through the runner (`examples/cpp/params.cpp`):
//! benchmarks named `NAME/ARG` as Google Benchmark names them, a declared throughput kept in
//! the result and shown as a rate, and each family's complexity fit written with the result
//! and shown under the table. Names, declarations and structure only: the fitted class is a
//! measured figure (docs/parameters.md has what it read here).

use crate::common::{cli, cpp};
use vernier::units::Throughput;

#[test]
fn arguments_throughput_and_complexity_reach_the_table_and_the_result() {
    let exe = cpp::example("params");
    let json = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("params.json");
    let options = ["--quick", "--processes", "1", "--counters", "none"];
    let (stdout, file) = cli::run_ok(&options, &json, &exe);
    let sizes = [256u64, 512, 4096, 32768, 65536];
    let names: Vec<&str> = file.benchmarks.iter().map(|b| b.name.as_str()).collect();
    let mut expected: Vec<String> = Vec::new();
    for family in ["sort", "scan"] {
        expected.extend(sizes.iter().map(|n| format!("{family}/{n}")));
    }
    expected.push("copy 64 KiB".into());
    assert_eq!(names, expected);
    for b in &file.benchmarks {
        let want = match b.name.split_once('/') {
            Some(("scan", n)) => Some(Throughput::ItemsPerIter(n.parse().unwrap())),
            None => Some(Throughput::BytesPerIter(64 << 10)),
            _ => None,
        };
        assert_eq!(b.throughput, want, "{}", b.name);
    }
    // The table has a rate for the benchmarks that declared one, and the complexity of each
    // family under it.
    assert!(stdout.contains("rate"), "{stdout}");
    assert!(
        stdout.contains("GiB/s") && stdout.contains("items/s"),
        "{stdout}"
    );
    assert!(stdout.contains("complexity of sort: O("), "{stdout}");
    assert!(stdout.contains("complexity of scan: O("), "{stdout}");
    // The file holds both fits over the five sizes, derived from its medians.
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let fits = raw["complexity"].as_array().expect("a complexity array");
    let families: Vec<&str> = fits.iter().map(|f| f["family"].as_str().unwrap()).collect();
    assert_eq!(families, ["sort", "scan"]);
    for f in fits {
        assert_eq!(cli::fit_sizes(f), sizes);
        assert!(f["class"].as_str().unwrap().starts_with("O("), "{f}");
        assert!(f["coefficient_ns"].as_f64().unwrap() > 0.0, "{f}");
    }
    // Derived again from the file's medians, the same classes.
    let again = vernier::result::complexity::families(&file.benchmarks);
    let classes: Vec<serde_json::Value> = again
        .iter()
        .map(|f| serde_json::to_value(f.class).unwrap())
        .collect();
    let written: Vec<serde_json::Value> = fits.iter().map(|f| f["class"].clone()).collect();
    assert_eq!(classes, written);
    // The report: a rate column, and each family's medians against N with the fit drawn.
    let html = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("params.html");
    let o = cli::vernier()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(report.contains("<th>rate</th>") && report.contains("GiB/s"));
    assert_eq!(report.matches("data-plot=\"complexity\"").count(), 2);
    assert!(report.contains("sort: O(") && report.contains("scan: O("));
    // `compare` gives each side's rate, live (the worker's declaration) and from files.
    let o = cli::vernier()
        .args(["compare", "--quick", "--filter", "^copy|^scan/256$"])
        .arg(&exe)
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("copy 64 KiB: rate ") && out.contains("GiB/s → "),
        "{out}"
    );
    assert!(
        out.contains("scan/256: rate ") && out.contains("items/s → "),
        "{out}"
    );
    let o = cli::vernier()
        .args(["compare", "--filter", "^copy"])
        .arg(&json)
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("copy 64 KiB: rate "));
    // Google Benchmark's JSON: the rates, and each family's `_BigO` and `_RMS` aggregates
    // after its last size, as its `->Complexity()` writes them.
    let gb = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("params.gb.json");
    let o = cli::vernier()
        .args(["export", "--format", "gbench"])
        .arg(&json)
        .arg("-o")
        .arg(&gb)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", cli::text(&o));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&gb).unwrap()).unwrap();
    let runs = v["benchmarks"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|b| b["name"].as_str().unwrap()).collect();
    let at = names.iter().position(|n| *n == "sort/65536").unwrap();
    assert_eq!(
        names[at + 1..at + 3],
        ["sort_BigO", "sort_RMS"],
        "{names:?}"
    );
    assert!(["(1)", "lgN", "N", "NlgN", "N^2", "N^3"]
        .contains(&runs[at + 1]["big_o"].as_str().unwrap()));
    assert_eq!(runs[at + 2]["aggregate_name"], "RMS");
    assert!(runs
        .iter()
        .any(|b| b["bytes_per_second"].as_f64().is_some()));
}

/// The header's `complexity` and `complexity_fn` (`tests/fixtures/cpp/complexity_declared.cpp`):
/// each family is fitted as declared, the function's values are the ones it gives, and the
/// table, the file, the report and `analyze` say so. Declarations only: the coefficients are
/// measured figures.
#[test]
fn a_declared_class_and_function_are_fitted_as_declared_everywhere() {
    let src =
        cpp::repo_root().join("crates/vernier-cli/tests/fixtures/cpp/complexity_declared.cpp");
    let exe = cpp::compile("complexity_declared", &[src], cpp::STRICT_FLAGS);
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let json = tmp.join("complexity_declared.json");
    let o = cli::succeeds([
        "run".as_ref(),
        "--quick".as_ref(),
        "--processes".as_ref(),
        "1".as_ref(),
        "--counters".as_ref(),
        "none".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    // The harness's note reaches the user once, through the runner.
    let note = "complexity_fn(\"N\"): loose has no size in its name";
    assert_eq!(stderr.matches(note).count(), 1, "{stderr}");
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let fits = raw["complexity"].as_array().expect("a complexity array");
    assert_eq!(fits.len(), 2, "{fits:?}");
    let (scan, pairs) = (&fits[0], &fits[1]);
    assert_eq!(
        (&scan["family"], &scan["class"], &scan["declared"]),
        (&"scan".into(), &"O(N log N)".into(), &true.into())
    );
    assert_eq!(cli::fit_sizes(scan), [256, 1024, 4096]);
    assert!(
        scan["best"]["class"].as_str().unwrap().starts_with("O("),
        "{scan}"
    );
    assert_eq!(
        (&pairs["family"], &pairs["class"], &pairs["function"]),
        (&"pairs".into(), &"f(N)".into(), &"N(N-1)/2".into())
    );
    assert_eq!(pairs["f"], serde_json::json!([496.0, 2016.0, 4560.0]));
    assert!(
        stdout.contains("complexity of scan: O(N log N) as declared, "),
        "{stdout}"
    );
    assert!(
        stdout.contains("complexity of pairs: f(N) = N(N-1)/2 as declared, ")
            && stdout.contains("ns·f(N) (RMS "),
        "{stdout}"
    );
    // The report plots the function through its own values, titled with its name.
    let report = cli::report_page(&json, &tmp.join("complexity_declared.html"));
    assert_eq!(report.matches("data-plot=\"complexity\"").count(), 2);
    assert!(
        report.contains("pairs: f(N) = N(N-1)/2"),
        "no titled plot of the function"
    );
    // `analyze` derives the same fits again from the file.
    let again = tmp.join("complexity_declared.again.json");
    cli::succeeds([
        "analyze".as_ref(),
        json.as_os_str(),
        "--json".as_ref(),
        again.as_os_str(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&again).unwrap()).unwrap();
    assert_eq!(v["complexity"], raw["complexity"]);
}
