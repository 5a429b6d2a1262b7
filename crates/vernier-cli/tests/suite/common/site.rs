//! A history store of synthetic runs with steps at known commits (what
//! `scripts/synthetic-store.py` makes at scale), saved through `vernier history save
//! --as-recorded` so the store holds exactly the figures planted; for the published site's
//! tests and the `history check --markdown` test.

use super::cli::{text, vernier};
use super::cpp::repo_root;
use serde_json::Value;
use std::path::Path;

/// The hostname the runs are recorded on: the site must not show it unless asked.
pub const HOST: &str = "secret-host-4711";

/// One series: its benchmark's name, its machine, and a step (first commit index, factor).
pub struct Planted {
    pub name: String,
    pub machine: &'static str,
    pub step: Option<(usize, f64)>,
}

/// The commit of index `i`.
pub fn commit(i: usize) -> String {
    format!("c{i:03}")
}

/// A result file of `series` at commit index `c`: each median 100 ns (× its series' number,
/// × its step once reached) with a fixed pseudo-random noise of ±0.3 % and an interval of
/// ±0.5 %.
fn result_file(template: &Value, series: &[&Planted], c: usize, seed: &mut u64) -> Value {
    let mut doc = template.clone();
    doc["machine"]["hostname"] = HOST.into();
    let mut base = template["benchmarks"][0].clone();
    let obj = base.as_object_mut().unwrap();
    obj.remove("counters");
    obj.remove("interrupted");
    obj.insert("diagnostics".into(), Value::Array(vec![]));
    obj.insert("processes".into(), Value::Array(vec![]));
    obj.insert("steady_samples".into(), 5.into());
    base["warmup"]["samples"] = 0.into();
    let samples = base["samples"].as_object_mut().unwrap();
    for v in samples.values_mut() {
        match v {
            Value::Array(a) => a.truncate(5),
            Value::Object(o) => o.values_mut().for_each(|x| {
                if let Value::Array(a) = x {
                    a.truncate(5)
                }
            }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, s) in series.iter().enumerate() {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let noise = ((*seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.006;
        let level = match s.step {
            Some((at, f)) if c >= at => f,
            _ => 1.0,
        };
        let m = 100.0 * (1 + k % 5) as f64 * level * (1.0 + noise);
        let mut b = base.clone();
        b["name"] = s.name.clone().into();
        b["per_iter"]["median_ns"] = m.into();
        b["per_iter"]["min_ns"] = (m * 0.99).into();
        b["per_iter"]["mean_ns"] = m.into();
        b["per_iter"]["ci95_ns"] = serde_json::json!([m * 0.995, m * 1.005]);
        out.push(b);
    }
    doc["benchmarks"] = Value::Array(out);
    doc
}

/// Save `commits` commits of `series` (one run per machine and commit) into `db`.
pub fn plant(dir: &Path, db: &str, series: &[Planted], commits: std::ops::Range<usize>) {
    let fixture = repo_root().join("crates/vernier/tests/fixtures/results/run-cpp-v0.1.0.json");
    let template: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let mut machines: Vec<&str> = series.iter().map(|s| s.machine).collect();
    machines.sort_unstable();
    machines.dedup();
    let mut seed = 42u64;
    for c in commits {
        for m in &machines {
            let of: Vec<&Planted> = series.iter().filter(|s| s.machine == *m).collect();
            let path = dir.join(format!("{m}.json"));
            let doc = result_file(&template, &of, c, &mut seed);
            std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
            let o = vernier()
                .args(["history", "save"])
                .arg(&path)
                .args(["--as-recorded", "--commit", &commit(c), "--branch", "main"])
                .args(["--machine", m, "--run-id", &format!("{}-{m}", commit(c))])
                .args(["--db", db])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
        }
    }
}

/// The hostile names every site and summary test carries.
pub fn hostile_names() -> Vec<String> {
    vec![
        "<img src=x onerror=alert(1)>".into(),
        "</script><script>document.title='pwned'</script>".into(),
        "n".repeat(10_000),
    ]
}

/// Six series on two machines, two with steps (c008 up 10 %, c012 down 9 %), three of them
/// named to attack the page.
pub fn planted() -> Vec<Planted> {
    let hostile = hostile_names();
    vec![
        Planted {
            name: "sort/1000".into(),
            machine: "m-a",
            step: Some((8, 1.10)),
        },
        Planted {
            name: hostile[0].clone(),
            machine: "m-a",
            step: None,
        },
        Planted {
            name: hostile[1].clone(),
            machine: "m-a",
            step: Some((12, 0.91)),
        },
        Planted {
            name: "sort/1000".into(),
            machine: "m-b",
            step: None,
        },
        Planted {
            name: hostile[2].clone(),
            machine: "m-b",
            step: None,
        },
        Planted {
            name: "hash/64".into(),
            machine: "m-b",
            step: None,
        },
    ]
}
