//! Temporary files (docs/files.md). Names another user could have computed and planted in
//! `$TMPDIR` before a run (the names earlier versions chose: the Google Benchmark layer's
//! throughput cache and its `.<pid>` file, the callgrind directories, `compare --baseline`'s
//! result) are neither written through, as links, nor read, as directories; and after
//! `run` of a Google Benchmark program, `run --instructions`, `compare --baseline` and a demo,
//! and after Ctrl-C, nothing is left in `$TMPDIR`.
//!
//! The planted names are those the old code would have chosen for the very process under test:
//! each command is started stopped (a shell that stops itself, then execs `vernier` under the
//! same pid), the names are planted with its pid, and it is continued. The layer's `.<pid>`
//! file was named by the worker's pid, which is not known in advance: it is planted for each of
//! the next [`WORKER_PIDS`] pids, and the program logs its workers' pids so that the test
//! checks they were among them.

use crate::common::{cli, cpp};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A Google Benchmark program: a copy of 4096 bytes per iteration that declares them after its
/// loop (the layer learns it at start-up), and a benchmark slow under valgrind. Each process
/// appends its pid to `$TMPFILES_PID_LOG` when set.
const PROGRAM: &str = r#"
#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

static const bool logged = [] {
    if (const char* p = std::getenv("TMPFILES_PID_LOG")) {
        if (std::FILE* f = std::fopen(p, "a")) {
            std::fprintf(f, "%d\n", static_cast<int>(getpid()));
            std::fclose(f);
        }
    }
    return true;
}();

static void BM_copy4096(benchmark::State& state) {
    std::vector<char> a(4096, 1), b(4096);
    for (auto _ : state) {
        std::memcpy(b.data(), a.data(), a.size());
        benchmark::DoNotOptimize(b.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * 4096);
}
BENCHMARK(BM_copy4096);

static void BM_slow(benchmark::State& state) {
    for (auto _ : state) {
        unsigned x = 0;
        for (unsigned i = 0; i < 100000; ++i) {
            x += i;
            benchmark::DoNotOptimize(x);
        }
    }
}
BENCHMARK(BM_slow);

BENCHMARK_MAIN();
"#;

/// Pids planted for the layer's `.<pid>` file after the command's own.
const WORKER_PIDS: i32 = 5000;

/// The `n` pids the kernel gives after `pid`, in its order: up to `pid_max` - 1, then from 300
/// on (the kernel's `RESERVED_PIDS`: a pid that wraps starts over there).
fn next_pids(pid: i32, n: i32) -> Vec<i32> {
    let pid_max: i32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(32768);
    let mut next = Vec::with_capacity(n as usize);
    let mut w = pid;
    while next.len() < n as usize {
        w = if w + 1 >= pid_max { 300 } else { w + 1 };
        next.push(w);
    }
    next
}

fn program() -> PathBuf {
    static SRC: OnceLock<PathBuf> = OnceLock::new();
    let src = SRC.get_or_init(|| {
        let p = cpp::out_dir().join("tmpfiles_gbench.cpp");
        std::fs::write(&p, PROGRAM).unwrap();
        p
    });
    let gbench = format!("-I{}", cpp::repo_root().join("include/gbench").display());
    cpp::compile(
        "tmpfiles-gbench",
        std::slice::from_ref(src),
        &["-O2", "-DNDEBUG", &gbench, "-pthread"],
    )
}

/// A fresh directory of the test's own (never `/tmp` itself).
fn fresh(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(tag)
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The name the layer used for `exe`'s throughputs: a hash of its path, size and modification
/// time, which anyone who can `stat` it computes.
fn old_layer_cache(exe: &Path) -> String {
    let exe = std::fs::canonicalize(exe).unwrap();
    let m = std::fs::metadata(&exe).unwrap();
    let key = format!(
        "{}|{}|{}.{}",
        exe.display(),
        m.size(),
        m.mtime(),
        m.mtime_nsec()
    );
    let mut h: u64 = 0xcbf29ce484222325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    format!("vernier-gbench-{uid}-{h:016x}.throughput")
}

/// `vernier ARGS` with `$TMPDIR` = `tmp`, started and stopped before it runs (in a process
/// group of its own): the child, whose pid is the command's.
fn start_stopped(args: &[&std::ffi::OsStr], tmp: &Path, pid_log: &Path) -> Child {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "kill -STOP $$; exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_vernier"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmp)
        .env("TMPFILES_PID_LOG", pid_log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cli::isolate(&mut cmd);
    let child = cmd.spawn().unwrap();
    let mut status = 0;
    // SAFETY: waits for our own child to stop; `status` outlives the call.
    let r = unsafe { libc::waitpid(child.id() as i32, &mut status, libc::WUNTRACED) };
    assert!(r > 0 && libc::WIFSTOPPED(status), "the shell did not stop");
    child
}

/// Continue a child started by [`start_stopped`] and wait for it.
fn finish(child: Child) -> Output {
    // SAFETY: signals our own stopped child.
    unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
    child.wait_with_output().unwrap()
}

/// How to plant a name.
#[derive(Clone, Copy, Debug)]
enum Plant {
    /// A symbolic link to a file or directory of the victim's.
    Link,
    /// A directory holding one file.
    Directory,
}

/// What was planted, and what must not change.
struct Planted {
    victim: tempfile::TempDir,
    dirs: Vec<PathBuf>,
}

const PRECIOUS: &str = "precious\n";
/// The throughputs the old layer would have read: 7 bytes per iteration.
const FALSE_CACHE: &str = "BM_copy4096\t7 0 0\n";

impl Planted {
    fn new() -> Planted {
        let victim = fresh("tmpfiles-victim-");
        std::fs::write(victim.path().join("file"), PRECIOUS).unwrap();
        std::fs::write(victim.path().join("cache"), FALSE_CACHE).unwrap();
        std::fs::create_dir(victim.path().join("dir")).unwrap();
        Planted {
            victim,
            dirs: Vec::new(),
        }
    }

    /// `name` in `tmp`, planted as `how`; a link points to the victim's `target`.
    fn plant(&mut self, tmp: &Path, name: &str, how: Plant, target: &str) {
        let p = tmp.join(name);
        match how {
            Plant::Link => std::os::unix::fs::symlink(self.victim.path().join(target), &p).unwrap(),
            Plant::Directory => {
                std::fs::create_dir(&p).unwrap();
                std::fs::write(p.join("callgrind.out"), FALSE_CACHE).unwrap();
                self.dirs.push(p);
            }
        }
    }

    /// The names the old code would have chosen for the command of pid `pid` on `exe`.
    fn plant_all(&mut self, tmp: &Path, pid: i32, exe: &Path, how: Plant) {
        let cache = old_layer_cache(exe);
        self.plant(tmp, &cache, how, "cache");
        for w in next_pids(pid, WORKER_PIDS) {
            self.plant(tmp, &format!("{cache}.{w}"), how, "file");
        }
        for n in 0..4 {
            self.plant(tmp, &format!("vernier-callgrind-{pid}-s{n}"), how, "dir");
        }
        for n in 0..16 {
            self.plant(tmp, &format!("vernier-callgrind-{pid}-{n}"), how, "dir");
        }
        self.plant(tmp, &format!("vernier-baseline-{pid}.json"), how, "file");
    }

    /// Nothing was written through a link, and nothing into a planted directory.
    fn check_untouched(&self, what: &str) {
        let v = self.victim.path();
        assert_eq!(
            std::fs::read_to_string(v.join("file")).unwrap(),
            PRECIOUS,
            "{what}"
        );
        assert_eq!(
            std::fs::read_to_string(v.join("cache")).unwrap(),
            FALSE_CACHE,
            "{what}"
        );
        assert_eq!(
            std::fs::read_dir(v.join("dir")).unwrap().count(),
            0,
            "{what}"
        );
        for d in &self.dirs {
            let names: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["callgrind.out"], "{what}: {}", d.display());
            assert_eq!(
                std::fs::read_to_string(d.join("callgrind.out")).unwrap(),
                FALSE_CACHE,
                "{what}"
            );
        }
    }
}

/// The pids the program logged.
fn logged_pids(log: &Path) -> Vec<i32> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// `vernier ARGS` run with names planted as `how` for its own pid in a fresh `$TMPDIR`: its
/// output, once the plants are found untouched and every worker's pid among those planted.
fn planted_run(args: &[&std::ffi::OsStr], exe: &Path, how: Plant) -> Output {
    let tmp = fresh("tmpfiles-tmpdir-");
    let log = tmp.path().with_extension("pids");
    let _ = std::fs::remove_file(&log);
    let child = start_stopped(args, tmp.path(), &log);
    let pid = child.id() as i32;
    let mut planted = Planted::new();
    planted.plant_all(tmp.path(), pid, exe, how);
    let o = finish(child);
    let what = format!("{args:?} with {how:?}s planted:\n{}", cli::text(&o));
    assert!(o.status.success(), "{what}");
    planted.check_untouched(&what);
    let pids = logged_pids(&log);
    assert!(!pids.is_empty(), "{what}");
    let planted_pids = next_pids(pid, WORKER_PIDS);
    for w in pids {
        assert!(planted_pids.contains(&w), "worker {w} of {pid}: {what}");
    }
    let _ = std::fs::remove_file(&log);
    o
}

fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(|a| a.into()).collect()
}

/// `HEAD… --json JSON -- EXE`.
fn line(head: &[&str], json: &Path, exe: &Path) -> Vec<std::ffi::OsString> {
    let mut a = os(head);
    a.extend([
        "--json".into(),
        json.into(),
        "--".into(),
        exe.as_os_str().to_owned(),
    ]);
    a
}

/// `run --instructions` of the copy alone.
const COUNT_COPY: [&str; 4] = ["run", "--instructions", "--filter", "^BM_copy4096$"];

fn refs(v: &[std::ffi::OsString]) -> Vec<&std::ffi::OsStr> {
    v.iter().map(|a| a.as_os_str()).collect()
}

fn load(json: &Path) -> vernier::result::ResultFile {
    vernier::result::ResultFile::load(json).unwrap()
}

/// The instructions per iteration `run --instructions` counted for the copy.
fn instructions(json: &Path) -> f64 {
    let f = load(json);
    let b = cli::only(&f);
    b.counters
        .as_ref()
        .and_then(|c| c.get("instructions_per_iter"))
        .copied()
        .unwrap_or_else(|| panic!("no instructions counted: {:?}", b.counters))
}

#[test]
fn planted_links_and_directories_are_neither_written_through_nor_read() {
    let exe = program();
    let out = fresh("tmpfiles-out-");
    let db = format!("sqlite:{}", out.path().join("h.sqlite").display());
    let quick_copy = [
        "run",
        "--quick",
        "--filter",
        "^BM_copy4096$",
        "--counters",
        "none",
    ];
    // The reference count, with nothing planted: callgrind's counts repeat run to run.
    let clean = out.path().join("clean.json");
    let tmp = fresh("tmpfiles-tmpdir-");
    let save = [
        "--save", "--db", &db, "--commit", "base", "--branch", "main",
    ];
    // Then the stored run `compare --baseline` compares against.
    for a in [
        line(&COUNT_COPY, &clean, &exe),
        line(
            &[&quick_copy[..], &save[..]].concat(),
            &out.path().join("base.json"),
            &exe,
        ),
    ] {
        let o = cli::vernier()
            .args(&a)
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{a:?}: {}", cli::text(&o));
    }
    let counted = instructions(&clean);

    for how in [Plant::Link, Plant::Directory] {
        // run: the throughput learned by the program, not the planted cache's 7 bytes.
        let json = out.path().join(format!("run-{how:?}.json"));
        planted_run(&refs(&line(&quick_copy, &json, &exe)), &exe, how);
        let f = load(&json);
        assert_eq!(
            cli::only(&f).throughput,
            Some(vernier::units::Throughput::BytesPerIter(4096)),
            "{how:?}"
        );

        // run --instructions: the same count as with nothing planted.
        let json = out.path().join(format!("instr-{how:?}.json"));
        planted_run(&refs(&line(&COUNT_COPY, &json, &exe)), &exe, how);
        assert_eq!(instructions(&json), counted, "{how:?}");

        // compare --baseline: NEW measured and compared.
        let json = out.path().join(format!("cmp-{how:?}.json"));
        let mut a = os(&["compare", "--baseline", "base", "--quick"]);
        a.extend(os(&["--filter", "^BM_copy4096$", "--db", &db, "--json"]));
        a.push(json.clone().into());
        a.push(exe.clone().into());
        let o = planted_run(&refs(&a), &exe, how);
        let c: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(
            c["comparisons"][0]["name"],
            "BM_copy4096",
            "{}",
            cli::text(&o)
        );
    }
}

/// The entries of `dir`.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Until `pgid`'s processes are all gone (at most a minute).
fn wait_for_group(pgid: i32) {
    let t0 = Instant::now();
    // SAFETY: signal 0 only checks whether the group still has a process.
    while unsafe { libc::kill(-pgid, 0) } == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "group {pgid} still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `vernier ARGS` with `$TMPDIR` = `tmp`, in a process group of its own.
fn spawn_in(tmp: &Path, args: &[std::ffi::OsString]) -> Child {
    cli::vernier()
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// Until an entry of `tmp` starts with `prefix` (at most a minute).
fn wait_for_entry(tmp: &Path, prefix: &str, child: &mut Child) {
    let t0 = Instant::now();
    while !entries(tmp).iter().any(|e| e.starts_with(prefix)) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "it ended before making its {prefix}… directory"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no {prefix}… in time"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn nothing_is_left_in_tmpdir_after_the_commands_that_use_it() {
    let exe = program();
    let out = fresh("tmpfiles-out-");
    let tmp = fresh("tmpfiles-tmpdir-");
    let db = format!("sqlite:{}", out.path().join("h.sqlite").display());
    let exe_os = exe.clone().into_os_string();
    let save = [
        "run",
        "--quick",
        "--filter",
        "^BM_copy4096$",
        "--save",
        "--db",
        &db,
        "--commit",
        "base",
        "--branch",
        "main",
    ];
    let mut compare = os(&["compare", "--baseline", "base", "--quick"]);
    compare.extend(os(&["--filter", "^BM_copy4096$", "--db", &db]));
    compare.push(exe_os.clone());
    let runs = [
        line(&save, &out.path().join("run.json"), &exe),
        line(&COUNT_COPY, &out.path().join("instr.json"), &exe),
        compare,
        os(&["demo", "--quick", "--filter", "add", "--counters", "none"]),
    ];
    assert!(entries(tmp.path()).is_empty());
    for a in &runs {
        let o = cli::vernier()
            .args(a)
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{a:?}: {}", cli::text(&o));
        assert_eq!(entries(tmp.path()), Vec::<String>::new(), "{a:?}");
    }
    // Ctrl-C to `compare --baseline` while its `vernier run` measures NEW: the first signal
    // ends it (it has no stop handler), and its directory is removed first.
    let mut a = os(&[
        "compare",
        "--baseline",
        "base",
        "--filter",
        "^BM_copy4096$",
        "--db",
        &db,
    ]);
    a.push(exe_os.clone());
    let mut child = spawn_in(tmp.path(), &a);
    wait_for_entry(tmp.path(), "vernier-baseline-", &mut child);
    // SAFETY: signals our own child's process group (it and the `vernier run` it started).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    wait_for_group(child.id() as i32);
    assert_eq!(entries(tmp.path()), Vec::<String>::new(), "after Ctrl-C");
    // Two Ctrl-C to `run --instructions` while callgrind counts: the second, a second later,
    // ends the process at once (status 130), and its callgrind directory is removed first.
    let a = line(
        &["run", "--instructions", "--filter", "^BM_slow$"],
        &out.path().join("slow.json"),
        &exe,
    );
    let mut child = spawn_in(tmp.path(), &a);
    wait_for_entry(tmp.path(), "vernier-callgrind-", &mut child);
    // Its valgrind worker, which outlives it until its batch ends: ended by the test.
    let workers = children(child.id());
    assert!(!workers.is_empty());
    for _ in 0..2 {
        // SAFETY: signals our own child (its valgrind worker is in a group of its own).
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_secs(1));
    }
    let o = child.wait_with_output().unwrap();
    for w in workers {
        // SAFETY: ends a worker this test's child started.
        unsafe { libc::kill(w, libc::SIGKILL) };
    }
    assert_eq!(o.status.code(), Some(130), "{}", cli::text(&o));
    assert_eq!(
        entries(tmp.path()),
        Vec::<String>::new(),
        "after two Ctrl-C"
    );
}

/// The child processes of `pid` (of any of its threads).
fn children(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let list = std::fs::read_to_string(t.unwrap().path().join("children")).unwrap_or_default();
        out.extend(list.split_whitespace().map(|c| c.parse::<i32>().unwrap()));
    }
    out
}
