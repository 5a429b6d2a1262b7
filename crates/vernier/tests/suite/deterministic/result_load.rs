//! The result loader against committed files of every layout this build reads, and against
//! generated damage: truncations, flipped bytes, wrong types, huge, negative and non-finite
//! numbers, short columns, garbage. Every outcome is a loaded file the analysis can redo, or an
//! error naming the field; never a panic.

use proptest::prelude::*;
use serde_json::Value;
use vernier::analyze;
use vernier::result::{self, BenchmarkResult, LoadError, ResultFile};

const DEMO_V010: &str = include_str!("../../fixtures/results/demo-v0.1.0.json");
const RUN_CPP_V010: &str = include_str!("../../fixtures/results/run-cpp-v0.1.0.json");

/// Load, then redo every benchmark's analysis: what `vernier analyze` does.
fn load_and_reanalyze(bytes: &[u8]) -> Result<Vec<BenchmarkResult>, LoadError> {
    let f = result::parse(bytes, "generated.json")?;
    let ctx = f.analysis_context();
    Ok(f.benchmarks
        .iter()
        .filter(|b| !b.samples.ns.is_empty())
        .map(|b| {
            let m = b.measurement();
            let a = analyze::analyze(&m, &ctx);
            BenchmarkResult::new(&b.name, &m, &a, &|_| 0)
        })
        .collect())
}

#[test]
fn files_of_vernier_0_1_0_load_and_redo_their_figures() {
    for text in [DEMO_V010, RUN_CPP_V010] {
        // Schema 1, read as today's schema (2 adds `throughput` and `complexity`, absent here).
        assert!(text.starts_with("{\"schema\":1,"), "{}", &text[..40]);
        let f = result::parse(text.as_bytes(), "fixture").unwrap();
        assert_eq!(f.schema, result::SCHEMA);
        assert!(f.benchmarks.iter().all(|b| b.throughput.is_none()));
        // Files of 0.1.0 carry no `analysis` block: the upgrade gives the defaults of the time.
        assert!(!f.analysis.keep_interrupted);
        assert_eq!(
            f.analysis.target_rel_ci,
            vernier::plan::DEFAULT_TARGET_REL_CI
        );
        let derived = load_and_reanalyze(text.as_bytes()).unwrap();
        assert_eq!(derived.len(), f.benchmarks.len());
        for (d, b) in derived.iter().zip(&f.benchmarks) {
            // The raw samples go through unchanged.
            assert_eq!(d.samples.ns, b.samples.ns);
            assert_eq!(d.samples.phase, b.samples.phase);
            assert_eq!(d.samples.t_s, b.samples.t_s);
        }
    }
}

#[test]
fn a_debug_build_is_recovered_from_the_diagnostic_of_an_old_file() {
    let mut v: Value = serde_json::from_str(RUN_CPP_V010).unwrap();
    v["benchmarks"][0]["diagnostics"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"code": "debug-build", "message": "…"}));
    let f = result::parse(v.to_string().as_bytes(), "old").unwrap();
    assert!(f.analysis.debug_build);
}

fn error_of(v: &Value) -> String {
    result::parse(v.to_string().as_bytes(), "damaged.json")
        .map(|_| String::from("(loaded)"))
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn damaged_fields_are_named_with_their_benchmark() {
    let base: Value = serde_json::from_str(RUN_CPP_V010).unwrap();
    let name = base["benchmarks"][0]["name"].as_str().unwrap().to_string();
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit); 12] = [
        ("samples.phase", |v| {
            v["benchmarks"][0]["samples"]["phase"]
                .as_array_mut()
                .unwrap()
                .pop();
        }),
        ("samples.ns[2]", |v| {
            v["benchmarks"][0]["samples"]["ns"][2] = "7".into()
        }),
        ("samples.ns[2]", |v| {
            v["benchmarks"][0]["samples"]["ns"][2] = (-7).into()
        }),
        ("samples.ns[2]", |v| {
            v["benchmarks"][0]["samples"]["ns"][2] = u64::MAX.into()
        }),
        ("samples.iters[0]", |v| {
            v["benchmarks"][0]["samples"]["iters"][0] = 0.into()
        }),
        ("samples.t_s[1]", |v| {
            v["benchmarks"][0]["samples"]["t_s"][1] = 1e300.into()
        }),
        ("samples.phase[0]", |v| {
            v["benchmarks"][0]["samples"]["phase"][0] = "hot".into()
        }),
        ("per_iter.median_ns", |v| {
            v["benchmarks"][0]["per_iter"]["median_ns"] = (-1.5).into()
        }),
        ("per_iter.ci95_ns", |v| {
            v["benchmarks"][0]["per_iter"]["ci95_ns"] = serde_json::json!([3.0, 1.0])
        }),
        ("iters_per_sample", |v| {
            v["benchmarks"][0]["iters_per_sample"] = (1u64 << 50).into()
        }),
        ("samples.counters.task-clock", |v| {
            v["benchmarks"][0]["samples"]["counters"]["task-clock"]
                .as_array_mut()
                .unwrap()
                .truncate(3);
        }),
        ("samples.process[4]", |v| {
            v["benchmarks"][0]["samples"]["process"][4] = 70000.into()
        }),
    ];
    for (field, edit) in cases {
        let mut v = base.clone();
        edit(&mut v);
        let e = error_of(&v);
        assert!(e.contains("is damaged"), "{field}: {e}");
        assert!(e.contains(&format!("benchmark {name:?}")), "{field}: {e}");
        assert!(e.contains(&format!("`{field}`")), "{field}: {e}");
    }
    let mut v = base.clone();
    v["timer"]["overhead_ns"] = (-3.0).into();
    assert!(error_of(&v).contains("`timer.overhead_ns`"));
    let mut v = base.clone();
    v.as_object_mut().unwrap().remove("schema");
    assert!(
        error_of(&v).contains("no `schema` field"),
        "{}",
        error_of(&v)
    );
    let mut v = base.clone();
    v["schema"] = 3.into();
    assert!(error_of(&v).contains("upgrade vernier"));
    let mut v = base.clone();
    v["schema"] = 0.into();
    assert!(error_of(&v).contains("reads schemas 1 to 2"));
    let cmp = serde_json::json!({"schema": 1, "mode": "paired", "comparisons": []});
    assert!(error_of(&cmp).contains("comparison file"));
    let e = result::parse(&RUN_CPP_V010.as_bytes()[..2000], "cut.json").unwrap_err();
    assert!(e.to_string().contains("truncated"), "{e}");
    let e = result::parse(b"{\"schema\": 1, \"x\": NaN}", "nan.json").unwrap_err();
    assert!(e.to_string().contains("invalid JSON"), "{e}");
}

/// Every leaf (number, string, bool, null) of a JSON value, by path.
fn leaves(v: &Value, path: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(PathStep::Key(k.clone()));
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            out.push(path.clone());
            for (i, x) in a.iter().enumerate() {
                path.push(PathStep::Index(i));
                leaves(x, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

/// Values a damaged file might hold in place of a good one.
fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1e308),
            Just(-1e308),
            Just(5e-324),
            any::<f64>().prop_filter("finite", |x| x.is_finite())
        ]
        .prop_map(Value::from),
        "[a-z-]{0,12}".prop_map(Value::from),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([1, 2, 3])),
    ]
}

fn fixture(pick: bool) -> &'static str {
    if pick {
        DEMO_V010
    } else {
        RUN_CPP_V010
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// One leaf (or one whole array) of a real file replaced by a value of another type or
    /// range: loaded and analysable, or refused; never a panic.
    #[test]
    fn a_replaced_field_never_panics(pick: bool, which in any::<prop::sample::Index>(), by in replacement()) {
        let mut v: Value = serde_json::from_str(fixture(pick)).unwrap();
        let mut all = Vec::new();
        leaves(&v, &mut Vec::new(), &mut all);
        let path = which.get(&all).clone();
        *at(&mut v, &path) = by;
        let _ = load_and_reanalyze(v.to_string().as_bytes());
    }

    /// Elements removed from, or appended to, one array: columns of the wrong length.
    #[test]
    fn a_column_of_the_wrong_length_never_panics(pick: bool, which in any::<prop::sample::Index>(), cut in 0usize..5, grow: bool) {
        let mut v: Value = serde_json::from_str(fixture(pick)).unwrap();
        let mut all = Vec::new();
        leaves(&v, &mut Vec::new(), &mut all);
        let arrays: Vec<_> = all.into_iter().filter(|p| at(&mut v, p).is_array()).collect();
        let path = which.get(&arrays).clone();
        if let Value::Array(a) = at(&mut v, &path) {
            if grow {
                let last = a.last().cloned().unwrap_or(Value::Null);
                a.extend(std::iter::repeat_n(last, cut + 1));
            } else {
                let n = a.len().saturating_sub(cut + 1);
                a.truncate(n);
            }
        }
        let _ = load_and_reanalyze(v.to_string().as_bytes());
    }

    /// The bytes of a real file cut short, or with bytes overwritten.
    #[test]
    fn truncated_or_corrupted_bytes_never_panic(pick: bool, cut in any::<prop::sample::Index>(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8)) {
        let mut bytes = fixture(pick).as_bytes().to_vec();
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let n = cut.index(bytes.len() + 1);
        bytes.truncate(n);
        let _ = load_and_reanalyze(&bytes);
    }

    /// Arbitrary bytes.
    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(load_and_reanalyze(&bytes).is_err());
    }
}

#[test]
fn a_loaded_file_round_trips_through_the_writer() {
    let f = result::parse(RUN_CPP_V010.as_bytes(), "fixture").unwrap();
    let again = result::parse(&serde_json::to_vec(&f).unwrap(), "again").unwrap();
    assert_eq!(f, again);
    let _: &ResultFile = &again;
}
