//! What `vernier run` and `vernier compare` need from a worker, as a trait: the seam between
//! their drivers (`crate::runner::processes::measure_in_processes`, `crate::runner::compare`) and real processes, so that both
//! are tested on scripted workers and a mock clock, without real timing.
//!
//! A [`WorkerLink`] lists benchmarks, runs a batch of samples of one of them, and quits. A
//! [`PairLauncher`] starts the two sides of one OLD/NEW process pair with the pair's set-up (its
//! CPU, its environment padding, which side starts first). The real implementations drive
//! worker processes ([`crate::runner::worker::WorkerProcess`]); the mock ones (tests) are scripted
//! sides on a mock clock, whose speed can depend on the CPU they are pinned to or on the
//! process, so the driver's behaviour on a machine whose cores differ is tested exactly.

use crate::runner::worker::{Control, WorkerProcess};
use std::ffi::OsString;
use std::path::PathBuf;
use vernier::measure::compare::Side;
use vernier::measure::{Batch, Target};
use vernier::protocol::BenchRef;
use vernier::timer::TimerInfo;

/// One side of a process pair, as the comparison sees it.
pub trait WorkerLink {
    /// The benchmarks the worker serves, in its order.
    fn names(&self) -> &[String];
    /// The work one iteration of benchmark `index` does, as the worker declared it.
    fn throughput(&self, _index: usize) -> Option<vernier::units::Throughput> {
        None
    }
    fn timer(&self) -> TimerInfo;
    fn debug_build(&self) -> bool;
    /// The harness's empty loop per iteration in ns, measured in this worker (the bar a body
    /// is told from no work by); `None` when it gave no figure.
    fn empty_loop_ns(&mut self, _plan: &vernier::plan::Plan) -> Option<f64> {
        None
    }
    /// `samples` samples of `iters` iterations of benchmark `index`, appended to `out.ns`.
    fn run(
        &mut self,
        index: usize,
        iters: u64,
        samples: usize,
        out: &mut Batch,
    ) -> Result<(), String>;
    /// Ask the worker to quit (kill it if it does not); its peak resident memory in bytes
    /// when known.
    fn quit(self: Box<Self>) -> Option<u64>;
    /// Quit, and give what the worker wrote on standard error (a harness's notes).
    fn quit_and_tell(self: Box<Self>) -> crate::runner::worker::Said {
        self.quit();
        crate::runner::worker::Said::default()
    }
}

/// How one process pair is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct PairSetup {
    pub index: usize,
    /// The CPU both sides are pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Environment padding both sides share.
    pub env_pad: u64,
    /// OLD is started first (and NEW second), or the reverse.
    pub old_first: bool,
}

/// Both sides of a pair, or why one could not be started.
pub type LaunchedPair = (
    Result<Box<dyn WorkerLink>, String>,
    Result<Box<dyn WorkerLink>, String>,
);

/// Starts the two sides of a process pair.
pub trait PairLauncher {
    fn launch(&mut self, setup: &PairSetup) -> LaunchedPair;
}

/// One benchmark of a link, as a target for the comparison engine.
pub struct LinkTarget<'a> {
    pub link: &'a mut dyn WorkerLink,
    pub index: usize,
}

impl Target for LinkTarget<'_> {
    fn measure(&mut self, iters: u64, count: usize, out: &mut Batch) -> Result<(), String> {
        self.link.run(self.index, iters, count, out)
    }
}

impl WorkerLink for WorkerProcess {
    fn names(&self) -> &[String] {
        &self.names
    }
    fn throughput(&self, index: usize) -> Option<vernier::units::Throughput> {
        self.throughput.get(index).copied().flatten()
    }
    fn timer(&self) -> TimerInfo {
        self.hello.timer
    }
    fn debug_build(&self) -> bool {
        self.hello.debug_build
    }
    fn empty_loop_ns(&mut self, plan: &vernier::plan::Plan) -> Option<f64> {
        crate::runner::harness::empty_loop(self, plan).map(|e| e.0)
    }
    fn run(
        &mut self,
        index: usize,
        iters: u64,
        samples: usize,
        out: &mut Batch,
    ) -> Result<(), String> {
        WorkerProcess::run(self, BenchRef::Index(index), iters, samples, out)
    }
    fn quit(self: Box<Self>) -> Option<u64> {
        WorkerProcess::quit(*self)
    }
    fn quit_and_tell(self: Box<Self>) -> crate::runner::worker::Said {
        WorkerProcess::quit_and_tell(*self)
    }
}

/// How to launch one side as a process.
#[derive(Clone, Debug)]
pub struct Launch {
    pub which: Side,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
}

/// Real worker processes: each pair's two sides pinned to the pair's CPU with its padding,
/// started concurrently (a program with a long start-up pays it once per pair, not twice in
/// a row), the first side's fork first.
pub struct ProcessLauncher {
    pub old: Launch,
    pub new: Launch,
    /// The user's process controls (`--fifo`, `--no-aslr`, `--timeout`); CPU and padding are
    /// set per pair.
    pub ctl: Control,
}

impl ProcessLauncher {
    fn spawn(l: &Launch, ctl: &Control) -> Result<WorkerProcess, String> {
        WorkerProcess::spawn_with_env(&l.program, &l.args, &l.env, ctl)
            .map_err(|e| format!("{}: {e}", l.which.as_str()))
    }
}

impl PairLauncher for ProcessLauncher {
    fn launch(&mut self, setup: &PairSetup) -> LaunchedPair {
        let mut ctl = self.ctl.clone();
        ctl.cpus = setup.cpu.into_iter().collect();
        ctl.env_pad = setup.env_pad;
        let (first, second) = if setup.old_first {
            (&self.old, &self.new)
        } else {
            (&self.new, &self.old)
        };
        let (a, b) = std::thread::scope(|s| {
            let ctl = &ctl;
            let h = s.spawn(move || ProcessLauncher::spawn(first, ctl));
            // The second side is forked once the first is starting up.
            std::thread::sleep(std::time::Duration::from_millis(1));
            let b = ProcessLauncher::spawn(second, ctl);
            let a = h
                .join()
                .unwrap_or_else(|_| Err("the launching thread panicked".into()));
            (a, b)
        });
        let boxed =
            |r: Result<WorkerProcess, String>| r.map(|w| Box::new(w) as Box<dyn WorkerLink>);
        if setup.old_first {
            (boxed(a), boxed(b))
        } else {
            (boxed(b), boxed(a))
        }
    }
}

#[cfg(test)]
pub mod mock {
    //! Scripted sides on a shared mock clock.

    use super::*;
    use vernier::measure::WallClock;
    use vernier::timer::TimerKind;
    use vernier::Rng;

    /// A clock advanced by the mock sides.
    #[derive(Clone, Default)]
    pub struct Clock(pub std::rc::Rc<std::cell::Cell<u64>>);

    impl WallClock for Clock {
        fn now_ns(&self) -> u64 {
            self.0.get()
        }
    }

    /// What a scripted side costs.
    #[derive(Clone, Default)]
    pub struct Script {
        /// The work one iteration of each benchmark declares (none when shorter).
        pub throughput: Vec<Option<vernier::units::Throughput>>,
        /// The harness's empty loop per iteration, ns (`None`: not measured).
        pub empty_ns: Option<f64>,
        pub names: Vec<String>,
        /// Per-iteration ns of each benchmark on a CPU of speed 1.
        pub base_ns: Vec<f64>,
        /// Slowdown factor of each CPU (index = CPU number).
        pub cpu_speed: Vec<f64>,
        /// Relative spread of a process's own offset (its memory layout): each process draws
        /// a factor 1 + offset·u, u uniform in [−1, 1].
        pub process_offset: f64,
        /// Relative noise of a sample (uniform ±).
        pub noise: f64,
    }

    pub struct MockLink {
        script: Script,
        clock: Clock,
        speed: f64,
        rng: Rng,
    }

    impl MockLink {
        /// A scripted worker running `speed` times slower than the script's base.
        pub fn new(script: Script, clock: Clock, speed: f64, seed: u64) -> MockLink {
            MockLink {
                script,
                clock,
                speed,
                rng: Rng::new(seed),
            }
        }
    }

    impl WorkerLink for MockLink {
        fn names(&self) -> &[String] {
            &self.script.names
        }
        fn timer(&self) -> TimerInfo {
            TimerInfo {
                kind: TimerKind::Tsc,
                resolution_ns: 1.0,
                overhead_ns: 10.0,
                tsc_hz: Some(3e9),
            }
        }
        fn debug_build(&self) -> bool {
            false
        }
        fn throughput(&self, index: usize) -> Option<vernier::units::Throughput> {
            self.script.throughput.get(index).copied().flatten()
        }
        fn empty_loop_ns(&mut self, _plan: &vernier::plan::Plan) -> Option<f64> {
            self.script.empty_ns
        }
        fn run(
            &mut self,
            index: usize,
            iters: u64,
            samples: usize,
            out: &mut Batch,
        ) -> Result<(), String> {
            let base = *self
                .script
                .base_ns
                .get(index)
                .ok_or_else(|| format!("no benchmark {index}"))?;
            // A protocol round trip.
            self.clock.0.set(self.clock.0.get() + 20_000);
            for _ in 0..samples {
                let noise = 1.0 + (self.rng.next_f64() * 2.0 - 1.0) * self.script.noise;
                let ns = (base * self.speed * noise * iters as f64).round().max(1.0) as u64;
                self.clock.0.set(self.clock.0.get() + ns + 50);
                out.ns.push(ns);
            }
            Ok(())
        }
        fn quit(self: Box<Self>) -> Option<u64> {
            None
        }
    }

    /// Launches scripted sides; records each pair's set-up.
    pub struct MockLauncher {
        pub old: Script,
        pub new: Script,
        pub clock: Clock,
        pub rng: Rng,
        pub setups: Vec<PairSetup>,
        /// Mock start-up time of a side (advances the clock).
        pub startup_ns: u64,
        /// Layout states of NEW's processes: the k-th NEW process started runs
        /// `new_states[k % len]` times slower (empty: no states), as code whose speed depends
        /// on where it sits in memory.
        pub new_states: Vec<f64>,
    }

    impl MockLauncher {
        fn side(&mut self, script: &Script, cpu: Option<usize>, state: f64) -> Box<dyn WorkerLink> {
            let cpu_speed = cpu
                .and_then(|c| script.cpu_speed.get(c).copied())
                .unwrap_or(1.0);
            let offset = 1.0 + (self.rng.next_f64() * 2.0 - 1.0) * script.process_offset;
            Box::new(MockLink {
                script: script.clone(),
                clock: self.clock.clone(),
                speed: cpu_speed * offset * state,
                rng: Rng::new(self.rng.next_u64()),
            })
        }
    }

    impl PairLauncher for MockLauncher {
        fn launch(&mut self, setup: &PairSetup) -> LaunchedPair {
            self.setups.push(setup.clone());
            self.clock.0.set(self.clock.0.get() + self.startup_ns);
            let (old, new) = (self.old.clone(), self.new.clone());
            let state = match self.new_states.len() {
                0 => 1.0,
                k => self.new_states[(self.setups.len() - 1) % k],
            };
            let o = self.side(&old, setup.cpu, 1.0);
            let n = self.side(&new, setup.cpu, state);
            (Ok(o), Ok(n))
        }
    }
}
