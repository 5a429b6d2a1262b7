//! `vernier system tune` and `reset` on copies of the fake trees: every file comes back byte
//! for byte, a failure half-way rolls back, and the real machine needs root.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A private copy of a fixture.
fn tree(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(name), dir.path());
    dir
}

/// Every file under `root` (symlinks followed) and its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn vernier(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vernier"))
        .arg("system")
        .args(args)
        .arg("--root")
        .arg(root)
        .env_remove("VERNIER_SYSROOT")
        .output()
        .expect("run vernier")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn statuses(root: &Path) -> BTreeMap<String, String> {
    let o = vernier(root, &["show", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn tune_then_reset_restores_every_file_byte_for_byte() {
    for name in ["intel", "amd", "arm", "vm", "intel-tuned"] {
        let dir = tree(name);
        let root = dir.path();
        let before = snapshot(root);

        let o = vernier(root, &["tune"]);
        assert!(o.status.success(), "{name}: {}", text(&o));
        let state = root.join("var/lib/vernier/tune-state.json");
        let tuned = snapshot(root);
        if name == "intel-tuned" {
            assert_eq!(tuned, before, "nothing to change on a tuned machine");
            assert!(!state.exists());
        } else {
            assert!(state.exists(), "{name}: no state file");
            assert_ne!(tuned, before, "{name}: tune changed nothing");
            let st: Value = serde_json::from_str(&fs::read_to_string(&state).unwrap()).unwrap();
            assert_eq!(st["schema"], 1);
        }

        // Everything that can change at run time is now good.
        let after = statuses(root);
        for id in [
            "irq-default-affinity",
            "irq-affinity",
            "governor",
            "frequency",
            "boost",
            "perf-sampling",
            "nmi-watchdog",
            "thp",
            "perf-event-paranoid",
            "aslr",
        ] {
            assert_ne!(after[id], "bad", "{name}: {id} still bad after tune");
        }

        let o = vernier(root, &["reset"]);
        assert!(o.status.success(), "{name}: {}", text(&o));
        assert!(!state.exists(), "{name}: state file left behind");
        assert_eq!(
            snapshot(root),
            before,
            "{name}: reset did not restore every byte"
        );
    }
}

#[test]
fn tune_changes_the_expected_files() {
    let dir = tree("intel");
    let root = dir.path();
    let o = vernier(root, &["tune", "--cpus", "3,7"]);
    assert!(o.status.success(), "{}", text(&o));
    let read = |p: &str| fs::read_to_string(root.join(p)).unwrap();
    assert_eq!(
        read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "performance"
    );
    assert_eq!(read("sys/devices/system/cpu/intel_pstate/no_turbo"), "1");
    assert_eq!(
        read("sys/devices/system/cpu/cpu3/cpufreq/scaling_min_freq"),
        "4200000"
    );
    // CPUs other than 3 and 7 keep their floor.
    assert_eq!(
        read("sys/devices/system/cpu/cpu2/cpufreq/scaling_min_freq"),
        "400000\n"
    );
    assert_eq!(read("proc/irq/default_smp_affinity"), "77");
    assert_eq!(read("proc/irq/120/smp_affinity"), "77");
    // An IRQ only on CPU 0 is left alone.
    assert_eq!(read("proc/irq/121/smp_affinity"), "01\n");
    assert_eq!(read("proc/sys/kernel/perf_cpu_time_max_percent"), "1");
    assert_eq!(read("proc/sys/kernel/perf_event_max_sample_rate"), "1");
    assert_eq!(read("proc/sys/kernel/nmi_watchdog"), "0");
    assert_eq!(read("proc/sys/kernel/perf_event_paranoid"), "2");
    assert_eq!(
        read("sys/kernel/mm/transparent_hugepage/enabled"),
        "always [madvise] never\n"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    // Boot-time settings are explained, never edited.
    assert!(
        out.contains("isolcpus=3,7 nohz_full=3,7 rcu_nocbs=3,7"),
        "{out}"
    );
    assert!(out.contains("irqbalance"), "{out}");
    assert!(!read("proc/cmdline").contains("isolcpus"));

    // Tuning twice would lose the original settings: refused.
    let again = vernier(root, &["tune"]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(String::from_utf8_lossy(&again.stderr).contains("reset"));
}

#[test]
fn dry_run_changes_nothing() {
    let dir = tree("amd");
    let before = snapshot(dir.path());
    let o = vernier(dir.path(), &["tune", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("cpufreq/boost"));
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_state_file_elsewhere() {
    let dir = tree("arm");
    let state_dir = tempfile::tempdir().unwrap();
    let state = state_dir.path().join("s.json");
    let before = snapshot(dir.path());
    let st = state.to_str().unwrap();
    let o = vernier(dir.path(), &["tune", "--state", st]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(state.exists());
    let o = vernier(dir.path(), &["reset", "--state", st]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(dir.path()), before);
    assert!(!state.exists());
    // Nothing left to reset.
    let o = vernier(dir.path(), &["reset", "--state", st]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to reset"));
}

#[test]
fn a_state_file_that_cannot_be_written_stops_before_any_change() {
    let dir = tree("intel");
    let before = snapshot(dir.path());
    // A path under a file: cannot be created, even by root.
    let state = dir.path().join("proc/cmdline/state.json");
    let o = vernier(dir.path(), &["tune", "--state", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing was changed"));
    assert_eq!(snapshot(dir.path()), before);
}

/// A kernel file that reads fine but refuses writes, even from root: a read-only sysfs
/// attribute of the running kernel.
fn unwritable_number() -> Option<&'static str> {
    let p = "/sys/devices/system/cpu/kernel_max";
    let readable = fs::read_to_string(p).ok()?.trim().parse::<i64>().is_ok();
    let writable = fs::OpenOptions::new().write(true).open(p).is_ok();
    (readable && !writable).then_some(p)
}

#[test]
fn a_write_failure_half_way_rolls_back_what_was_done() {
    let target = unwritable_number()
        .expect("no read-only kernel attribute (/sys/devices/system/cpu/kernel_max) to stand for a failing file");
    let dir = tree("intel");
    let root = dir.path();
    // The NMI watchdog comes late in the order: governor, boost, frequency, IRQs and perf
    // sampling are already changed when it fails.
    let nmi = root.join("proc/sys/kernel/nmi_watchdog");
    fs::remove_file(&nmi).unwrap();
    std::os::unix::fs::symlink(target, &nmi).unwrap();
    let before = snapshot(root);

    let o = vernier(root, &["tune"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rolled back"), "{err}");
    assert!(err.contains("nmi_watchdog"), "{err}");
    assert_eq!(
        snapshot(root),
        before,
        "rollback did not restore every byte"
    );
    assert!(!root.join("var/lib/vernier/tune-state.json").exists());
}

#[test]
fn a_directory_in_place_of_a_kernel_file_is_not_available_not_a_crash() {
    let dir = tree("vm");
    let root = dir.path();
    let p = root.join("proc/sys/kernel/perf_event_max_sample_rate");
    fs::remove_file(&p).unwrap();
    fs::create_dir(&p).unwrap();
    let before = snapshot(root);
    let o = vernier(root, &["tune"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(statuses(root)["perf-sampling"], "unavailable");
    let o = vernier(root, &["reset"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(root), before);
}

#[test]
fn the_real_machine_needs_root() {
    use std::os::unix::process::CommandExt;
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        // Already unprivileged: run directly.
        let o = Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args(["system", "tune", "--root", "/"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains("needs root"));
        return;
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vernier"));
    cmd.args(["system", "tune", "--root", "/"])
        .env_remove("VERNIER_SYSROOT");
    // SAFETY: only async-signal-safe calls (setgid, setuid) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot drop privileges to nobody ({e})"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("needs root privileges"), "{err}");
}
