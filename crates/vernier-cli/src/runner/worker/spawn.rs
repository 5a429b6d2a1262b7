//! Starting a worker: the program spawned with the protocol's pipes on file descriptors 3 and
//! 4, in its own process group, under the requested controls (CPU affinity, SCHED_FIFO, no
//! address-space randomisation, environment padding), its output's last lines kept.

use super::child::{pipe, state_file};
use super::*;

/// Keeps the last lines of `r` in `tail`; `closed` counts the streams read to their end.
fn collect_tail(
    mut r: impl Read + Send + 'static,
    tail: Arc<Mutex<VecDeque<String>>>,
    closed: Arc<std::sync::atomic::AtomicUsize>,
    tag: &'static str,
    said: Option<Arc<Mutex<Said>>>,
) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut line = Vec::new();
        let keep = |line: &[u8]| {
            let text = String::from_utf8_lossy(line).into_owned();
            if let Some(said) = &said {
                said.lock().unwrap().push(&text);
            }
            let mut t = tail.lock().unwrap();
            t.push_back(format!("{tag}{text}"));
            if t.len() > TAIL_LINES {
                t.pop_front();
            }
        };
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            for &b in &buf[..n] {
                if b == b'\n' {
                    keep(&line);
                    line.clear();
                } else if line.len() < 500 {
                    line.push(b);
                }
            }
        }
        if !line.is_empty() {
            keep(&line);
        }
        closed.fetch_add(1, std::sync::atomic::Ordering::Release);
    });
}

impl WorkerProcess {
    /// Start `program` as a worker and do the handshake (`hello`, `list`).
    pub fn spawn(
        program: &Path,
        args: &[OsString],
        ctl: &Control,
    ) -> Result<WorkerProcess, String> {
        let mut cmd = Command::new(program);
        cmd.args(args);
        WorkerProcess::spawn_command(cmd, program, ctl)
    }

    /// `spawn`, with extra environment variables for the worker.
    pub fn spawn_with_env(
        program: &Path,
        args: &[OsString],
        env: &[(OsString, OsString)],
        ctl: &Control,
    ) -> Result<WorkerProcess, String> {
        let mut ctl = ctl.clone();
        ctl.env.extend(env.iter().cloned());
        WorkerProcess::spawn(program, args, &ctl)
    }

    /// Start `cmd` (which runs `program`, possibly under another tool such as valgrind) as a
    /// worker and do the handshake.
    pub fn spawn_command(
        mut cmd: Command,
        program: &Path,
        ctl: &Control,
    ) -> Result<WorkerProcess, String> {
        let (cmd_r, cmd_w) = pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
        let (rep_r, rep_w) = pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
        cmd.envs(ctl.env.iter().map(|(k, v)| (k, v)))
            .env(protocol::FDS_ENV, "3,4")
            .env("VERNIER_ENV_PAD", "x".repeat(ctl.env_pad as usize))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let state_fd = state_file();
        if state_fd.is_some() {
            cmd.env(protocol::STATE_FD_ENV, protocol::STATE_FD.to_string());
        }
        let (in_fd, out_fd) = (cmd_r.as_raw_fd(), rep_w.as_raw_fd());
        let ctl2 = ctl.clone();
        // SAFETY: only async-signal-safe calls between fork and exec (fcntl, dup2, close,
        // setpgid, sched_setaffinity, sched_setscheduler, personality); no allocation.
        unsafe {
            cmd.pre_exec(move || {
                // Move the ends and the state file out of the way first: any may already be
                // 3, 4 or 5, and dup2 onto itself would leave its close-on-exec flag set.
                let hi_in = libc::fcntl(in_fd, libc::F_DUPFD, 10);
                let hi_out = libc::fcntl(out_fd, libc::F_DUPFD, 10);
                let hi_state = state_fd.map_or(-1, |fd| libc::fcntl(fd, libc::F_DUPFD, 10));
                if hi_in < 0
                    || hi_out < 0
                    || (state_fd.is_some() && hi_state < 0)
                    || libc::dup2(hi_in, 3) < 0
                    || libc::dup2(hi_out, 4) < 0
                    || (hi_state >= 0 && libc::dup2(hi_state, protocol::STATE_FD) < 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                for fd in [hi_in, hi_out, hi_state] {
                    if fd >= 0 {
                        libc::close(fd);
                    }
                }
                libc::setpgid(0, 0);
                apply_in_child(&ctl2)
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            if ctl.fifo.is_some() && e.raw_os_error() == Some(libc::EPERM) {
                "--fifo: SCHED_FIFO was refused (permission denied): it needs root or the \
                 CAP_SYS_NICE capability, or a real-time limit (`ulimit -r 99`). Run without \
                 --fifo, or as root."
                    .to_string()
            } else if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{}: no such program (give the path of a benchmark executable)",
                    program.display()
                )
            } else if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!(
                    "{}: permission denied (is it executable? chmod +x)",
                    program.display()
                )
            } else {
                format!("cannot start {}: {e}", program.display())
            }
        })?;
        drop(cmd_r);
        drop(rep_w);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail_closed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let said = Arc::new(Mutex::new(Said::default()));
        collect_tail(
            child.stdout.take().unwrap(),
            tail.clone(),
            tail_closed.clone(),
            "stdout: ",
            None,
        );
        collect_tail(
            child.stderr.take().unwrap(),
            tail.clone(),
            tail_closed.clone(),
            "",
            Some(said.clone()),
        );
        let mut w = WorkerProcess {
            child,
            to: std::fs::File::from(cmd_w),
            from: rep_r,
            buf: Vec::new(),
            tail,
            tail_closed,
            said,
            program: program.to_path_buf(),
            timeout: ctl.timeout,
            run_options: ctl.run_options.clone(),
            pinned: !ctl.cpus.is_empty(),
            hello: Hello::parse("hello 0").unwrap_or_else(|_| unreachable!()),
            names: Vec::new(),
            alloc_free: Vec::new(),
            throughput: Vec::new(),
            complexity: Vec::new(),
            executors: Vec::new(),
            peak_rss_bytes: None,
        };
        w.handshake()?;
        Ok(w)
    }
}
