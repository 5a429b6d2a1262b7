//! `vernier system show` against the fake trees in `tests/fixtures/sysfs`.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name)
}

fn vernier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args(args)
        .env_remove("VERNIER_SYSROOT")
        .output()
        .expect("run vernier")
}

fn show_json(name: &str, extra: &[&str]) -> (i32, Value) {
    let root = fixture(name);
    let mut args = vec!["system", "show", "--json", "--root", root.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = vernier(&args);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), v)
}

fn check<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

const IDS: [&str; 19] = [
    "cpu",
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "irq-default-affinity",
    "irq-affinity",
    "irqbalance",
    "governor",
    "frequency",
    "boost",
    "smt",
    "aslr",
    "perf-event-paranoid",
    "perf-sampling",
    "nmi-watchdog",
    "thp",
    "swap",
    "load",
    "virtualization",
];

#[test]
fn every_fixture_has_every_check_and_exit_code_follows_tuned() {
    for (name, tuned) in [
        ("intel", false),
        ("intel-tuned", true),
        ("amd", false),
        ("arm", false),
        ("arm-biglittle", false),
        ("vm", false),
    ] {
        let (code, v) = show_json(name, &[]);
        for id in IDS {
            check(&v, id);
        }
        assert_eq!(v["tuned"], tuned, "{name}");
        assert_eq!(code, if tuned { 0 } else { 2 }, "{name}");
        assert_eq!(v["summary"]["tuned"], tuned);
        let failing = v["failing"].as_array().unwrap();
        assert_eq!(failing.is_empty(), tuned, "{name}: {failing:?}");
        for c in v["checks"].as_array().unwrap() {
            let status = c["status"].as_str().unwrap();
            assert!(["good", "bad", "info", "unavailable"].contains(&status));
            if status == "bad" {
                assert!(c["fix"].is_string(), "{name}: {} has no fix", c["id"]);
            }
        }
    }
}

#[test]
fn vendors_are_told_apart_and_boost_lives_in_the_right_file() {
    let (_, intel) = show_json("intel", &[]);
    assert_eq!(intel["summary"]["cpu_vendor"], "Intel");
    let b = check(&intel, "boost");
    assert_eq!(b["status"], "bad");
    assert!(b["fix"].as_str().unwrap().contains("intel_pstate/no_turbo"));

    let (_, amd) = show_json("amd", &[]);
    assert_eq!(amd["summary"]["cpu_vendor"], "AMD");
    let b = check(&amd, "boost");
    assert_eq!(b["status"], "bad");
    assert!(b["fix"].as_str().unwrap().contains("cpufreq/boost"));

    let (_, arm) = show_json("arm", &[]);
    assert_eq!(arm["summary"]["cpu_vendor"], "ARM");
    assert_eq!(arm["summary"]["cpu_model"], "Cortex-A72");
    assert_eq!(check(&arm, "boost")["status"], "unavailable");
    assert_eq!(check(&arm, "nmi-watchdog")["status"], "unavailable");
    assert_eq!(check(&arm, "nohz_full")["status"], "unavailable");
}

#[test]
fn big_and_little_cores_are_named_and_a_benchmark_set_that_mixes_them_is_bad() {
    // Four Cortex-A55 (capacity 414) and four Cortex-A76 (1024): the last online CPU, the
    // default benchmark CPU, is a big one.
    let (_, v) = show_json("arm-biglittle", &[]);
    let cpu = check(&v, "cpu");
    let state = cpu["state"].as_str().unwrap();
    assert_eq!(cpu["status"], "info", "{state}");
    assert!(
        state.contains("Cortex-A76 ×4 (CPUs 4-7, capacity 1024)")
            && state.contains("Cortex-A55 ×4 (CPUs 0-3, capacity 414)")
            && state.contains("the benchmark CPUs 7 are Cortex-A76"),
        "{state}"
    );
    let (_, mixed) = show_json("arm-biglittle", &["--cpus", "3-4"]);
    let cpu = check(&mixed, "cpu");
    assert_eq!(cpu["status"], "bad");
    assert!(cpu["state"].as_str().unwrap().contains("mix kinds"));
    assert!(cpu["fix"].as_str().unwrap().contains("4-7 (Cortex-A76"));
    // Alike cores say nothing of kinds.
    let (_, pi) = show_json("arm", &[]);
    assert!(!check(&pi, "cpu")["state"]
        .as_str()
        .unwrap()
        .contains("big and little"));
}

#[test]
fn the_virtual_machine_is_recognised_and_its_missing_cpufreq_is_not_an_error() {
    let (code, v) = show_json("vm", &[]);
    assert_eq!(code, 2);
    assert_eq!(v["summary"]["virtualization"], "KVM");
    assert_eq!(v["summary"]["hardware_counters"], false);
    let virt = check(&v, "virtualization")["state"].as_str().unwrap();
    assert!(virt.contains("counters"), "{virt}");
    for id in ["governor", "frequency", "boost"] {
        let c = check(&v, id);
        assert_eq!(c["status"], "unavailable", "{id}");
        assert!(c["state"].as_str().unwrap().contains("not available here"));
    }
    assert_eq!(check(&v, "smt")["status"], "good");
}

#[test]
fn isolation_checks_and_the_kernel_command_line_to_add() {
    let (_, v) = show_json("intel", &[]);
    // The last CPU and its SMT sibling.
    assert_eq!(v["benchmark_cpus"], "7");
    assert_eq!(
        v["boot_parameters"],
        "isolcpus=3,7 nohz_full=3,7 rcu_nocbs=3,7"
    );
    assert_eq!(check(&v, "smt")["status"], "bad");
    assert_eq!(check(&v, "irqbalance")["status"], "bad");

    let (_, v) = show_json("amd", &[]);
    assert_eq!(v["benchmark_cpus"], "7,15");
    assert_eq!(check(&v, "isolcpus")["status"], "good");
    assert_eq!(check(&v, "nohz_full")["status"], "good");
    // rcu_nocbs is implied by nohz_full.
    assert_eq!(check(&v, "rcu_nocbs")["status"], "good");
    assert_eq!(check(&v, "irq-default-affinity")["status"], "bad");
    assert_eq!(check(&v, "swap")["status"], "bad");
    let irq = check(&v, "irq-affinity");
    assert_eq!(irq["status"], "bad");
    // Only the IRQs whose mask includes CPU 7 or 15 are listed.
    let detail = irq["detail"].as_array().unwrap();
    assert_eq!(detail.len(), 5, "{detail:?}");

    // Choosing other CPUs changes the verdicts about them.
    let (_, v) = show_json("amd", &["--cpus", "2"]);
    assert_eq!(v["benchmark_cpus"], "2");
    assert_eq!(check(&v, "isolcpus")["status"], "bad");
}

#[test]
fn a_tree_without_any_file_reports_not_available_and_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = vernier(&[
        "system",
        "show",
        "--json",
        "--root",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in v["checks"].as_array().unwrap() {
        assert_ne!(c["status"], "bad", "{c}");
    }
    assert!(check(&v, "governor")["state"]
        .as_str()
        .unwrap()
        .contains("not available here"));
}

#[test]
fn the_table_and_the_environment_variable_root() {
    let out = Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args(["system", "show"])
        .env("VERNIER_SYSROOT", fixture("intel"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Intel(R) Core(TM) i7-8650U"), "{text}");
    assert!(text.contains("fix: echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"));
    assert!(text.contains("isolcpus=3,7 nohz_full=3,7 rcu_nocbs=3,7"));
    assert!(text.contains("not tuned for benchmarking"));

    let out = vernier(&[
        "system",
        "show",
        "--root",
        fixture("intel-tuned").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("tuned for benchmarking"));
}
