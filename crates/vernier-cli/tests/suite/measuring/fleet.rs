//! A simulated fleet through the real binary and a real PostgreSQL server: 4 machines (named
//! by `--machine`) × 2 shards, all 8 jobs at once saving one commit, then one job again with
//! the same run id (a retry). The store holds every benchmark once per machine; the shards are
//! disjoint and complete (and the C++ harness's own `--list --shard` agrees with the rule);
//! `history --fleet` is complete, and exits 2 naming a machine that never ran;
//! `history --machines` shows one row per benchmark and one column per machine. Nothing here
//! depends on timing.

use crate::common::{cli, cpp, pgserver};

use cli::{text, vernier};
use cpp::{compile, repo_root};
use pgserver::Postgres;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use vernier::shard::Shard;

const MACHINES: [&str; 4] = ["m1", "m2", "m3", "m4"];
const COMMIT: &str = "f1ee7c0ffee";

fn names(json: &Path) -> BTreeSet<String> {
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

/// One CI job: `vernier run` of one shard on one machine, saved under the run id `gh-1`.
fn job(exe: &Path, db: &str, machine: &str, shard: u64, json: &Path) -> Child {
    vernier()
        .args(["run", "--quick", "--processes", "1", "--counters", "none"])
        .args(["--shard", &format!("{shard}/2")])
        .args(["--save", "--db", db, "--commit", COMMIT, "--branch", "main"])
        .args(["--machine", machine, "--run-id", "gh-1", "--json"])
        .arg(json)
        .arg("--")
        .arg(exe)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The store as the runners reach it: a new store on `admin`'s server, migrated by two
/// administrators at once (the advisory lock makes one wait), who grant the role `ci` what
/// saving needs; the URL as `ci`, a role that may add runs, not change or erase them.
fn runners_store(admin: &Postgres) -> String {
    let o = admin.psql("CREATE ROLE ci LOGIN");
    assert!(o.status.success(), "{}", text(&o));
    let migrating: Vec<Child> = (0..2)
        .map(|_| {
            vernier()
                .args(["history", "migrate", "--db", &admin.url, "--writer", "ci"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for m in migrating {
        let o = m.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    admin.url.replace("vernier@", "ci@")
}

fn wait_ok(c: Child) {
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("saved run"),
        "{}",
        text(&o)
    );
}

fn history(db: &str, args: &[&str]) -> std::process::Output {
    vernier()
        .args(["history", "--db", db])
        .args(args)
        .output()
        .unwrap()
}

/// `./exe --list --shard K/2` lists the benchmarks of `all` the rule puts in shard K.
fn cpp_shards_follow_the_rule(exe: &Path, all: &BTreeSet<String>) {
    for k in 1..=2u64 {
        let o = Command::new(exe)
            .args(["--list", "--shard", &format!("{k}/2")])
            .env_remove("VERNIER_BIN")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let listed: BTreeSet<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect();
        let rule: BTreeSet<String> = all
            .iter()
            .filter(|n| Shard::of(n, 2) == k)
            .cloned()
            .collect();
        assert_eq!(listed, rule, "shard {k}/2");
        assert!(!listed.is_empty(), "shard {k}/2 of {all:?} is empty");
    }
}

#[test]
fn a_fleet_of_four_machines_in_two_shards_saves_one_commit_once() {
    let exe = compile(
        "fleet",
        &[repo_root().join("crates/vernier-cli/tests/fixtures/fleet.cpp")],
        &["-O2"],
    );
    let all: BTreeSet<String> = ["add", "mul", "shift", "xor", "neg", "mask"]
        .map(String::from)
        .into();

    // The C++ harness's own `--list --shard` follows the rule, and its shards split the suite.
    cpp_shards_follow_the_rule(&exe, &all);

    let admin = Postgres::start();
    let runners = runners_store(&admin);
    let dir = tempfile::tempdir().unwrap();
    let json = |m: &str, k: u64| dir.path().join(format!("{m}-{k}.json"));
    // All eight jobs at once.
    let jobs: Vec<Child> = MACHINES
        .iter()
        .flat_map(|m| (1..=2).map(move |k| (*m, k)))
        .map(|(m, k)| job(&exe, &runners, m, k, &json(m, k)))
        .collect();
    for j in jobs {
        wait_ok(j);
    }
    // A retry of one job, with the same run id.
    wait_ok(job(&exe, &runners, "m1", 1, &json("m1", 1)));

    // Each machine's shards: disjoint, and together the whole suite.
    for m in MACHINES {
        let (a, b) = (names(&json(m, 1)), names(&json(m, 2)));
        assert!(a.is_disjoint(&b), "{m}: {a:?} {b:?}");
        assert_eq!(a.union(&b).cloned().collect::<BTreeSet<_>>(), all, "{m}");
    }

    // One point per benchmark per machine for the commit: the retry superseded its first save
    // (the runners' role cannot delete it; it is kept, marked).
    let o = history(&runners, &["--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut points: BTreeMap<(String, String), usize> = BTreeMap::new();
    for s in h["series"].as_array().unwrap() {
        let n = s["points"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["commit"] == COMMIT && p.get("superseded").is_none())
            .count();
        let key = (
            s["name"].as_str().unwrap().to_string(),
            s["machine"].as_str().unwrap().to_string(),
        );
        *points.entry(key).or_default() += n;
    }
    let expected: BTreeMap<(String, String), usize> = all
        .iter()
        .flat_map(|n| MACHINES.map(|m| ((n.clone(), m.to_string()), 1)))
        .collect();
    assert_eq!(points, expected);

    // The fleet is complete for the commit; a fifth machine that never ran is named.
    let o = history(&runners, &["--fleet", "--commit", COMMIT]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = history(
        &runners,
        &[
            "--fleet",
            "--commit",
            COMMIT,
            "--machines",
            "m1,m2,m3,m4,m5",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("m5: MISSING"), "{out}");
    assert!(!out.contains("m1: MISSING"), "{out}");

    // Side by side: one row per benchmark, one column per machine.
    let o = history(&runners, &["--machines"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let header = out
        .lines()
        .find(|l| l.starts_with("benchmark"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        header.split_whitespace().skip(1).collect::<Vec<_>>(),
        MACHINES,
        "{out}"
    );
    for n in &all {
        let rows: Vec<&str> = out
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(n))
            .collect();
        assert_eq!(rows.len(), 1, "{n}: {out}");
        // The reference's cell and three others, each a figure.
        assert_eq!(rows[0].matches(" ns").count(), 4, "{out}");
    }

    // A different attempt of the same run id is kept apart and marked: m2 saves shard 2
    // again as attempt 2 (GitHub Actions' re-run; --run-id keeps the key, the attempt is the
    // CI's); its earlier points stay, marked superseded.
    let o = vernier()
        .env("GITHUB_RUN_ID", "1")
        .env("GITHUB_RUN_ATTEMPT", "2")
        .args(["run", "--quick", "--processes", "1", "--counters", "none"])
        .args([
            "--shard", "2/2", "--save", "--db", &runners, "--commit", COMMIT,
        ])
        .args([
            "--branch",
            "main",
            "--machine",
            "m2",
            "--run-id",
            "gh-1",
            "--json",
        ])
        .arg(json("m2", 2))
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let h: Value = serde_json::from_slice(&history(&runners, &["--json"]).stdout).unwrap();
    let second = names(&json("m2", 2));
    for s in h["series"].as_array().unwrap() {
        let (name, machine) = (s["name"].as_str().unwrap(), s["machine"].as_str().unwrap());
        let pts = s["points"].as_array().unwrap();
        let retried = machine == "m1" && names(&json("m1", 1)).contains(name);
        if (machine == "m2" && second.contains(name)) || retried {
            assert_eq!(pts.len(), 2, "{s}");
            assert_eq!(pts[0]["attempt"], 1);
            assert_eq!(pts[0]["superseded"], true);
            assert_eq!(pts[1]["attempt"], if retried { 1 } else { 2 });
            assert!(pts[1].get("superseded").is_none(), "{s}");
        } else {
            assert_eq!(pts.len(), 1, "{s}");
        }
    }
    let o = history(&runners, &["--fleet", "--commit", COMMIT]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // `history check`: one line per machine, one exit status (one commit: no regression).
    let o = history(&runners, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for m in MACHINES {
        assert!(
            out.contains(&format!("machine {m}: no regression (6 series)")),
            "{out}"
        );
    }

    // A fifth machine that saved one shard of two: its missing shard is named.
    wait_ok(job(&exe, &runners, "m5", 1, &json("m5", 1)));
    let o = history(&runners, &["--fleet", "--commit", COMMIT]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("m5: MISSING shard 2/2"), "{out}");
}

/// `sslmode=require`: a save goes through to a server that offers TLS, and the server sees the
/// connection encrypted; a server without TLS is refused with what to change, the `--json`
/// result still written.
#[test]
fn sslmode_require_encrypts_or_refuses() {
    let exe = compile(
        "fleet",
        &[repo_root().join("crates/vernier-cli/tests/fixtures/fleet.cpp")],
        &["-O2"],
    );
    let dir = tempfile::tempdir().unwrap();
    let save = |db: &str, json: &Path| {
        vernier()
            .args(["run", "--quick", "--processes", "1", "--counters", "none"])
            .args([
                "--filter", "^add$", "--save", "--db", db, "--commit", COMMIT,
            ])
            .arg("--json")
            .arg(json)
            .arg("--")
            .arg(&exe)
            .output()
            .unwrap()
    };
    let tls = Postgres::start_with(true);
    pgserver::migrate(&tls.url, &[]);
    let url = format!("{}?sslmode=require", tls.url);
    let o = save(&url, &dir.path().join("a.json"));
    assert!(o.status.success(), "{}", text(&o));
    let o = tls
        .cmd("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            tls.url
                .rsplit(':')
                .next()
                .unwrap()
                .split('/')
                .next()
                .unwrap(),
        ])
        .args([
            "-U",
            "vernier",
            "-At",
            "-c",
            "SELECT count(*) FROM runs",
            "postgres",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "1",
        "{}",
        text(&o)
    );
    drop(tls);

    let plain = Postgres::start();
    let url = format!("{}?sslmode=require", plain.url);
    let json = dir.path().join("b.json");
    let o = save(&url, &json);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does not offer TLS, and sslmode=require requires it"),
        "{err}"
    );
    assert!(
        json.exists(),
        "the --json result is written before the save"
    );
}
