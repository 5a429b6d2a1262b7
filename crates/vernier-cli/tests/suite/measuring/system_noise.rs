//! `vernier system noise` and `vernier load`, run for real with short durations. Only
//! ratios measured in the same run are asserted, never absolute times.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The tests in this file load the CPUs; run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn vernier() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vernier"));
    c.env_remove("VERNIER_SYSROOT");
    c
}

/// `vernier` in a session of its own. With autogroup scheduling (the default on desktop
/// and many server kernels) each session is one scheduling group, and a group's weight is
/// spread over CPUs by how many of its threads run on each: a probe sharing a group with
/// twenty load threads on CPU 1 would get almost no weight on CPU 0. Separate sessions
/// keep the probe's weight even across CPUs.
fn vernier_own_session() -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = vernier();
    // SAFETY: setsid is async-signal-safe; it runs in the child between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    c
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn allowed_cpus() -> Vec<usize> {
    // SAFETY: zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (0..libc::CPU_SETSIZE as usize)
            .filter(|c| libc::CPU_ISSET(*c, &set))
            .collect()
    }
}

/// Start `vernier load` and wait until it says it started (its first line on stderr).
fn start_load(args: &[&str]) -> (Child, BufReader<std::process::ChildStderr>) {
    wait_started(spawn_load(args))
}

fn spawn_load(args: &[&str]) -> Child {
    vernier_own_session()
        .arg("load")
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_started(mut child: Child) -> (Child, BufReader<std::process::ChildStderr>) {
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.starts_with("load:"), "{line}");
    (child, err)
}

fn finish_load(mut child: Child, mut err: BufReader<std::process::ChildStderr>) -> String {
    // Liveness only: a generous bound so a broken stop path fails instead of hanging.
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "load did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(status.success(), "load failed: {status:?} {rest}");
    rest
}

fn noise_json(args: &[&str]) -> Value {
    let o = vernier_own_session()
        .args(["system", "noise", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn noise_reports_every_figure_per_cpu() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cpu = allowed_cpus()[0].to_string();
    let v = noise_json(&["--cpu", &cpu, "--duration", "0.3"]);
    assert_eq!(v["schema"], 1);
    let c = &v["cpus"][0];
    assert_eq!(c["cpu"].to_string(), cpu);
    for k in [
        "interruptions_per_s",
        "duration_p50_ns",
        "duration_p90_ns",
        "duration_p99_ns",
        "duration_max_ns",
        "lost_share",
        "longest_stall_ns",
        "threshold_ns",
        "reads",
    ] {
        assert!(c[k].is_number(), "{k} missing: {c}");
    }
    // Order of the percentiles, and the floor of the automatic threshold.
    let p = |k: &str| c[k].as_u64().unwrap();
    assert!(p("duration_p50_ns") <= p("duration_p90_ns"));
    assert!(p("duration_p90_ns") <= p("duration_p99_ns"));
    assert!(p("duration_p99_ns") <= p("duration_max_ns"));
    assert_eq!(p("longest_stall_ns"), p("duration_max_ns"));
    assert!(p("threshold_ns") >= 1000);
    let lost = c["lost_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&lost));
    assert_eq!(v["quietest_cpu"].to_string(), cpu);

    // The table form names the quietest CPU.
    let o = vernier()
        .args(["system", "noise", "--cpu", &cpu, "--duration", "0.2"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("quietest: CPU"));
}

#[test]
fn a_cpu_kept_busy_by_load_is_noisier_than_an_idle_one() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = allowed_cpus();
    assert!(
        cpus.len() >= 2,
        "this test needs two CPUs allowed to it, and has {cpus:?}"
    );
    let (idle, busy) = (cpus[0], cpus[1]);
    // Sixteen single-thread load processes pinned to the busy CPU, each in a session of
    // its own (its own scheduling group under autogroup). On a shared machine foreign work
    // of total weight F is balanced over to the idle CPU, so with groups of weight 1 the
    // probe (weight ½ per CPU) runs ½/(½+F) of the time there and ½/(½+16) on the busy
    // CPU: the ratio stays above 1.5 while F < 10.
    // The loads are stopped with SIGINT as soon as the probe is done; their duration is
    // only a backstop, long enough to cover a slow start on a busy machine.
    let pin = busy.to_string();
    let loads: Vec<_> = (0..16)
        .map(|_| spawn_load(&["--threads", "1", "--pin", &pin, "--duration", "10"]))
        .collect();
    let loads: Vec<_> = loads.into_iter().map(wait_started).collect();
    let v = noise_json(&["--cpu", &format!("{idle},{busy}"), "--duration", "0.5"]);
    for (load, err) in loads {
        // SAFETY: kill with the pid of our own child and a valid signal.
        unsafe {
            libc::kill(load.id() as i32, libc::SIGINT);
        }
        let rest = finish_load(load, err);
        assert!(rest.contains("interrupted"), "{rest}");
    }

    let get = |cpu: usize| {
        v["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["cpu"].as_u64() == Some(cpu as u64))
            .unwrap()
            .clone()
    };
    let (i, b) = (get(idle), get(busy));
    let ran = |c: &Value| 1.0 - c["lost_share"].as_f64().unwrap();
    eprintln!(
        "idle CPU {idle}: ran {:.3}, {:.0} interruptions/s; busy CPU {busy}: ran {:.3}, {:.0} interruptions/s",
        ran(&i),
        i["interruptions_per_s"].as_f64().unwrap(),
        ran(&b),
        b["interruptions_per_s"].as_f64().unwrap()
    );
    // The probe ran clearly more of the time on the idle CPU.
    assert!(
        ran(&i) > 1.5 * ran(&b),
        "idle CPU ran {:.3} of the time, busy CPU {:.3}\n{v:#}",
        ran(&i),
        ran(&b)
    );
    assert!(b["lost_share"].as_f64() > i["lost_share"].as_f64());
    assert_eq!(v["quietest_cpu"].as_u64(), Some(idle as u64));
}

#[test]
fn load_stops_on_ctrl_c() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (load, err) = start_load(&["--threads", "1", "--duration", "600"]);
    // SAFETY: kill with a valid pid of our own child and a valid signal.
    unsafe {
        libc::kill(load.id() as i32, libc::SIGINT);
    }
    let rest = finish_load(load, err);
    assert!(rest.contains("interrupted"), "{rest}");
}

#[test]
fn load_stops_by_itself_for_every_kind() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The ARM fixture's 1 MiB cache keeps the thrasher's buffer small (2 MiB).
    let arm = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/arm");
    for kind in ["cpu", "cache", "memory"] {
        let o = vernier()
            .args([
                "load",
                "--threads",
                "2",
                "--kind",
                kind,
                "--duration",
                "0.2",
            ])
            .arg("--root")
            .arg(&arm)
            .output()
            .unwrap();
        assert!(o.status.success(), "{kind}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("duration reached"), "{kind}: {err}");
        if kind == "cache" {
            assert!(err.contains("over 2 MiB"), "{err}");
        }
    }
}

#[test]
fn bad_arguments_are_errors() {
    let o = vernier().args(["load", "--duration=-1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let o = vernier()
        .args(["system", "noise", "--duration", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}
