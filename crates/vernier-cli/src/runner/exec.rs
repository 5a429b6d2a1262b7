//! One run of a whole command, as `vernier exec` times it: the program started directly (no
//! shell unless the command line names one), its wall time read from the runner's clock around
//! the start and the end, and its resource use and exit status from `wait4`. A run that outlives
//! its time limit is killed by a watchdog thread; a run that fails keeps the last lines of its
//! standard error for the message.

use crate::runner::worker::{apply_in_child, Control};
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use vernier::result::exec::Run;

/// Lines of a failed run's standard error quoted in its message.
pub const TAIL_LINES: usize = 10;

/// A command line split into its program and arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The line as the user wrote it (for names and messages).
    pub line: String,
}

impl Invocation {
    /// `line` split as a POSIX shell splits words (quotes and backslashes; no expansion, no
    /// pipes or redirections): `None` when its quotes are unbalanced or it holds no word.
    pub fn split(line: &str) -> Option<Invocation> {
        let words = shlex::split(line)?;
        let (program, args) = words.split_first()?;
        Some(Invocation {
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            line: line.to_string(),
        })
    }

    /// `line` run by `shell -c line`.
    pub fn through_shell(shell: &str, line: &str) -> Invocation {
        Invocation {
            program: shell.into(),
            args: vec!["-c".into(), line.into()],
            line: line.to_string(),
        }
    }
}

/// Where a run's standard output goes (hyperfine's `--output`).
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Discarded (`/dev/null`), the default.
    Null,
    /// Read by the runner through a pipe and discarded.
    Pipe,
    /// The runner's own standard output (`inherit`, `--show-output`).
    Inherit,
    /// Written to this file (created once, each run appending).
    File(PathBuf),
}

impl Output {
    /// `null`, `pipe`, `inherit`, or a file's path.
    pub fn parse(s: &str) -> Output {
        match s {
            "null" => Output::Null,
            "pipe" => Output::Pipe,
            "inherit" => Output::Inherit,
            path => Output::File(path.into()),
        }
    }
}

/// How a run ended, beyond what [`Run`] keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub run: Run,
    /// Killed by the watchdog after the time limit.
    pub timed_out: bool,
}

/// What the watchdog shares with the runner: the process it watches and until when.
#[derive(Default)]
struct Watch {
    pid: Option<i32>,
    deadline: Option<Instant>,
    fired: bool,
    quit: bool,
}

/// A thread that kills the watched process with SIGKILL once its deadline passes. The process
/// is unwatched only after it has ended and before it is reaped, so the pid it kills is never
/// another process's.
struct Watchdog {
    shared: Arc<(Mutex<Watch>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn start() -> Watchdog {
        let shared = Arc::new((Mutex::new(Watch::default()), Condvar::new()));
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            let (lock, cv) = &*s;
            let mut w = lock.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if w.quit {
                    return;
                }
                match (w.pid, w.deadline) {
                    (Some(pid), Some(deadline)) => {
                        let now = Instant::now();
                        if now >= deadline {
                            // SAFETY: kill only sends a signal; `pid` is a child not yet reaped
                            // (the runner unwatches it under this lock before reaping it).
                            unsafe { libc::kill(pid, libc::SIGKILL) };
                            w.fired = true;
                            w.pid = None;
                        } else {
                            w = cv
                                .wait_timeout(w, deadline - now)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                    }
                    _ => w = cv.wait(w).unwrap_or_else(|e| e.into_inner()),
                }
            }
        });
        Watchdog {
            shared,
            thread: Some(thread),
        }
    }

    fn watch(&self, pid: i32, limit: Duration) {
        let (lock, cv) = &*self.shared;
        let mut w = lock.lock().unwrap_or_else(|e| e.into_inner());
        w.pid = Some(pid);
        w.deadline = Some(Instant::now() + limit);
        w.fired = false;
        cv.notify_one();
    }

    /// Stop watching; whether the process was killed.
    fn unwatch(&self) -> bool {
        let (lock, _) = &*self.shared;
        let mut w = lock.lock().unwrap_or_else(|e| e.into_inner());
        w.pid = None;
        w.deadline = None;
        w.fired
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        {
            let (lock, cv) = &*self.shared;
            lock.lock().unwrap_or_else(|e| e.into_inner()).quit = true;
            cv.notify_one();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What launches the runs of `vernier exec`: the real [`Runner`], or a script in tests. One
/// run at a time; the core-speed probe is taken beside the runs, in the launcher's own thread.
pub trait Launch {
    /// Run `inv` once and wait for it (see [`Runner::run`]).
    fn run(&mut self, inv: &Invocation) -> Result<Ended, String>;
    /// The last lines the last run wrote on standard error (see [`Runner::stderr_tail`]).
    fn stderr_tail(&mut self) -> Vec<String>;
    /// The core-speed probe over `adds` additions, between runs: the dependent chain's and the
    /// eight independent chains' times, in ns (`vernier::workload::kernels::speed_probe`,
    /// `wide_probe`); `None` when the launcher takes none.
    fn probe(&mut self, adds: u64) -> Option<(u64, u64)>;
}

/// Runs commands one at a time under the same controls, input, output and time limit.
pub struct Runner {
    ctl: Control,
    limit: Duration,
    input: Option<PathBuf>,
    output: Output,
    output_file: Option<File>,
    /// Each run's standard error (emptied before each run), for a failure's last lines;
    /// `None` when it is shown (`--show-output`).
    stderr: Option<File>,
    watchdog: Watchdog,
    /// The clock of the core-speed probe (the runs' own clock).
    timer: vernier::timer::Timer,
}

impl Launch for Runner {
    fn run(&mut self, inv: &Invocation) -> Result<Ended, String> {
        Runner::run(self, inv)
    }

    fn stderr_tail(&mut self) -> Vec<String> {
        Runner::stderr_tail(self)
    }

    fn probe(&mut self, adds: u64) -> Option<(u64, u64)> {
        use vernier::workload::kernels::{speed_probe, wide_probe};
        Some((
            speed_probe(&self.timer, adds),
            wide_probe(&self.timer, adds),
        ))
    }
}

impl Runner {
    /// A runner: `input` is the standard input of every run (`None`: `/dev/null`); standard
    /// error is kept for messages unless `output` is `Inherit`.
    pub fn new(
        ctl: Control,
        limit: Duration,
        input: Option<PathBuf>,
        output: Output,
    ) -> Result<Runner, String> {
        if let Some(p) = &input {
            File::open(p).map_err(|e| format!("--input {}: {e}", p.display()))?;
        }
        let output_file = match &output {
            Output::File(p) => Some(
                File::create(p)
                    .map_err(|e| format!("--output {}: cannot create it: {e}", p.display()))?,
            ),
            _ => None,
        };
        let stderr = match output {
            Output::Inherit => None,
            _ => Some(
                tempfile::tempfile()
                    .map_err(|e| format!("cannot make a file for the runs' standard error: {e}"))?,
            ),
        };
        Ok(Runner {
            ctl,
            limit,
            input,
            output,
            output_file,
            stderr,
            watchdog: Watchdog::start(),
            timer: vernier::timer::Timer::monotonic(),
        })
    }

    fn stdio(&mut self) -> Result<(Stdio, Stdio, Stdio), String> {
        let io = |e: std::io::Error| format!("cannot set up the run's input and output: {e}");
        let stdin = match &self.input {
            Some(p) => Stdio::from(File::open(p).map_err(io)?),
            None => Stdio::null(),
        };
        let stdout = match (&self.output, &self.output_file) {
            (Output::Null, _) => Stdio::null(),
            (Output::Pipe, _) => Stdio::piped(),
            (Output::Inherit, _) => Stdio::inherit(),
            (Output::File(_), Some(f)) => Stdio::from(f.try_clone().map_err(io)?),
            (Output::File(_), None) => Stdio::null(),
        };
        let stderr = match &mut self.stderr {
            Some(f) => {
                f.set_len(0).map_err(io)?;
                f.seek(SeekFrom::Start(0)).map_err(io)?;
                Stdio::from(f.try_clone().map_err(io)?)
            }
            None => Stdio::inherit(),
        };
        Ok((stdin, stdout, stderr))
    }

    /// Run `inv` once and wait for it. An error only when it could not be started (the message
    /// names the program and why); a run that fails, is killed or times out is an [`Ended`].
    pub fn run(&mut self, inv: &Invocation) -> Result<Ended, String> {
        let (stdin, stdout, stderr) = self.stdio()?;
        let mut cmd = Command::new(&inv.program);
        cmd.args(&inv.args)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(stderr);
        let ctl = self.ctl.clone();
        // SAFETY: apply_in_child makes only async-signal-safe calls and allocates nothing.
        unsafe {
            cmd.pre_exec(move || apply_in_child(&ctl));
        }
        let t0 = vernier::timer::monotonic_ns();
        let mut child = cmd.spawn().map_err(|e| start_error(inv, &e))?;
        let pid = child.id() as i32;
        self.watchdog.watch(pid, self.limit);
        let drain = child.stdout.take().map(|mut out| {
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut out, &mut std::io::sink());
            })
        });
        let ended = wait_unreaped(pid);
        let t1 = vernier::timer::monotonic_ns();
        let timed_out = self.watchdog.unwatch();
        let (status, usage) =
            reap(pid).map_err(|e| format!("{}: cannot wait for it: {e}", inv.line))?;
        ended.map_err(|e| format!("{}: cannot wait for it: {e}", inv.line))?;
        if let Some(d) = drain {
            let _ = d.join();
        }
        // The child was reaped by wait4; std's handle must not wait for it again.
        std::mem::forget(child);
        Ok(Ended {
            run: run_of(t1.saturating_sub(t0), status, &usage),
            timed_out,
        })
    }

    /// The last [`TAIL_LINES`] lines the last run wrote on standard error (empty when it was
    /// shown rather than kept).
    pub fn stderr_tail(&mut self) -> Vec<String> {
        let Some(f) = &mut self.stderr else {
            return Vec::new();
        };
        let mut text = String::new();
        if f.seek(SeekFrom::Start(0)).is_err() {
            return Vec::new();
        }
        let mut bytes = Vec::new();
        if f.read_to_end(&mut bytes).is_err() {
            return Vec::new();
        }
        text.push_str(&String::from_utf8_lossy(&bytes));
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec()
    }
}

/// Why `inv` could not be started, with the fix.
fn start_error(inv: &Invocation, e: &std::io::Error) -> String {
    let program = inv.program.to_string_lossy();
    match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "{program}: command not found (give a program on PATH or its path; a shell's \
             builtin or a line with pipes or redirections needs --shell sh)"
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!("{program}: permission denied (is it executable? chmod +x)")
        }
        _ => format!("{program}: cannot start it: {e}"),
    }
}

/// Wait until process `pid` has ended, leaving it unreaped (so its pid stays its own).
fn wait_unreaped(pid: i32) -> std::io::Result<()> {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid writes it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with a valid out-parameter.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reap process `pid`: its wait status and resource use.
fn reap(pid: i32) -> std::io::Result<(i32, libc::rusage)> {
    loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid out-parameter; wait4 writes it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child with valid out-parameters.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn tv_ns(t: libc::timeval) -> u64 {
    (t.tv_sec.max(0) as u64) * 1_000_000_000 + (t.tv_usec.max(0) as u64) * 1000
}

/// A run's record from its wall time, wait status and resource use.
fn run_of(wall_ns: u64, status: i32, u: &libc::rusage) -> Run {
    let exited = libc::WIFEXITED(status);
    Run {
        wall_ns,
        user_ns: tv_ns(u.ru_utime),
        system_ns: tv_ns(u.ru_stime),
        // Linux gives ru_maxrss in KiB.
        max_rss_bytes: (u.ru_maxrss.max(0) as u64) * 1024,
        minor_faults: u.ru_minflt.max(0) as u64,
        major_faults: u.ru_majflt.max(0) as u64,
        voluntary_switches: u.ru_nvcsw.max(0) as u64,
        involuntary_switches: u.ru_nivcsw.max(0) as u64,
        exit_code: exited.then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        warmup: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner() -> Runner {
        Runner::new(
            Control::default(),
            Duration::from_secs(5),
            None,
            Output::Null,
        )
        .unwrap()
    }

    #[test]
    fn a_line_is_split_as_a_shell_splits_words() {
        let i = Invocation::split("sh -c 'exit 3'").unwrap();
        assert_eq!(i.program, "sh");
        assert_eq!(i.args, vec![OsString::from("-c"), OsString::from("exit 3")]);
        assert!(Invocation::split("echo 'unbalanced").is_none());
        assert!(Invocation::split("   ").is_none());
    }

    #[test]
    fn the_exit_status_and_the_last_lines_of_standard_error_are_kept() {
        let mut r = runner();
        let e = r
            .run(&Invocation::split("sh -c 'echo one >&2; echo two >&2; exit 3'").unwrap())
            .unwrap();
        assert_eq!(e.run.exit_code, Some(3));
        assert_eq!(e.run.signal, None);
        assert!(!e.timed_out);
        assert_eq!(r.stderr_tail(), vec!["one".to_string(), "two".to_string()]);
        let ok = r.run(&Invocation::split("true").unwrap()).unwrap();
        assert!(ok.run.succeeded() && ok.run.wall_ns > 0);
        // Each run's standard error is its own.
        assert!(r.stderr_tail().is_empty());
    }

    #[test]
    fn a_run_past_its_limit_is_killed_and_said_so() {
        let mut r = Runner::new(
            Control::default(),
            Duration::from_millis(100),
            None,
            Output::Null,
        )
        .unwrap();
        let e = r.run(&Invocation::split("sleep 10").unwrap()).unwrap();
        assert!(e.timed_out);
        assert_eq!(e.run.signal, Some(libc::SIGKILL));
        assert_eq!(e.run.exit_code, None);
    }

    #[test]
    fn a_missing_program_is_named_with_the_fix() {
        let e = runner()
            .run(&Invocation::split("no-such-program-here --x").unwrap())
            .unwrap_err();
        assert!(e.contains("no-such-program-here: command not found"), "{e}");
        assert!(e.contains("--shell"), "{e}");
    }

    #[test]
    fn resource_use_is_the_commands_own() {
        // Even the smallest program maps pages: its peak resident size and faults are read.
        let mut r = runner();
        let e = r
            .run(&Invocation::split("sh -c 'exit 0'").unwrap())
            .unwrap();
        assert!(e.run.max_rss_bytes > 0);
        assert!(e.run.minor_faults > 0);
    }
}
