//! The worker protocol for a Python script (`docs/protocol.md`): the Rust crate's serve loop,
//! parser and reply formats, with the Python worker (`vernier/_worker.py`) running the
//! measured loops it is asked for. What a command may say, and every error a bad line gets,
//! is the Rust crate's alone.

use pyo3::prelude::*;
use vernier::measure::Batch;
use vernier::memory::{AllocCounts, MemoryReply};
use vernier::protocol::{self, BenchRef, Command, Hello, RunRequest};
use vernier::result::complexity::Declared;
use vernier::samples::{CounterColumn, GC_COLLECTIONS};
use vernier::stats::complexity::Class;
use vernier::timer::{Timer, TimerInfo, TimerKind};
use vernier::units::Throughput;
use vernier::workload::routine::ExecutorKind;

/// What a Python worker's `run(which, iters, samples, memory)` returns: the samples' ns, the
/// garbage collections during each (None when not counted), the allocation counts of each
/// (allocs, bytes, frees, freed bytes) or why there are none, and notes for the reply.
type PyBatch = (
    Vec<u64>,
    Option<Vec<u64>>,
    Option<Vec<(u64, u64, u64, u64)>>,
    Option<String>,
    Vec<(String, String)>,
);

struct PyWorker {
    hello: Hello,
    names: Vec<String>,
    alloc_free: Vec<bool>,
    throughput: Vec<Option<Throughput>>,
    complexity: Vec<Option<Declared>>,
    executors: Vec<Option<ExecutorKind>>,
    run: Py<PyAny>,
    probe: Py<PyAny>,
}

/// A benchmark's complexity declaration as `vernier/__init__.py` gives it: a class in the
/// protocol's notation (`NlgN`), or its own function's value at its N and that function's name.
type PyDeclared = (Option<String>, Option<f64>, Option<String>);

fn declared((class, f, function): PyDeclared) -> PyResult<Declared> {
    let class = class
        .map(|c| {
            Class::parse_option(&c).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "vernier: no complexity class {c:?} (1, lgN, N, NlgN, N^2, N^3)"
                ))
            })
        })
        .transpose()?;
    Ok(Declared {
        class,
        f,
        function,
        ..Declared::default()
    })
}

/// A Python exception as one line: `Type: message`.
fn one_line(py: Python<'_>, e: &PyErr) -> String {
    let kind = e
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".to_string(), |n| n.to_string());
    format!("{kind}: {}", e.value(py)).replace('\n', " ")
}

impl protocol::Worker for PyWorker {
    fn hello(&self) -> Hello {
        self.hello.clone()
    }

    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn alloc_free(&self) -> Vec<bool> {
        self.alloc_free.clone()
    }

    fn throughput(&self) -> Vec<Option<Throughput>> {
        self.throughput.clone()
    }

    fn complexity(&self) -> Vec<Option<Declared>> {
        self.complexity.clone()
    }

    fn executors(&self) -> Vec<Option<ExecutorKind>> {
        self.executors.clone()
    }

    fn run(&mut self, req: &RunRequest, out: &mut Batch) -> Result<(), String> {
        let count = self.names.len();
        let (which, empty_future) = match req.bench {
            BenchRef::Empty => (None, false),
            BenchRef::Index(i) if i < count => (Some(i), false),
            BenchRef::Index(i) => return Err(format!("no benchmark {i} (there are {count})")),
            // The empty future on the event loop of an async benchmark.
            BenchRef::EmptyFuture(i) if self.executors.get(i).is_some_and(Option::is_some) => {
                (Some(i), true)
            }
            BenchRef::EmptyFuture(i) => return Err(format!("benchmark {i} announced no executor")),
        };
        let option = |key: &str| {
            req.extra
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        if option("cache") == Some("cold") {
            return Err(format!(
                "bad option 'cache=cold' in '{}' (the Python harness measures hot caches only)",
                Command::Run(req.clone()).to_line()
            ));
        }
        // `probe=<adds>`: the core-speed probe before the batch, with the monotonic clock the
        // worker announces.
        if let Some(adds) = option("probe").and_then(protocol::parse_probe_adds) {
            let timer = Timer::monotonic();
            out.probe_ns = Some(vernier::workload::kernels::speed_probe(&timer, adds));
            out.wide_ns = Some(vernier::workload::kernels::wide_probe(&timer, adds));
        }
        let memory = protocol::memory::requested(&req.extra);
        let (ns, gc, counts, unavailable, notes) = Python::with_gil(|py| {
            self.run
                .call1(py, (which, req.iters, req.samples, memory, empty_future))
                .and_then(|r| r.extract::<PyBatch>(py))
                .map_err(|e| {
                    let which = which.map_or_else(|| "empty".to_string(), |i| i.to_string());
                    format!("benchmark {which} failed: {}", one_line(py, &e))
                })
        })?;
        out.ns = ns;
        if let Some(gc) = gc {
            out.counters.push(CounterColumn {
                event: GC_COLLECTIONS.to_string(),
                values: gc.into_iter().map(Some).collect(),
                scaled: Vec::new(),
            });
        }
        out.memory = match (counts, unavailable) {
            (Some(c), _) => Some(MemoryReply::Counted(
                c.into_iter()
                    .map(|(allocs, bytes, frees, freed_bytes)| AllocCounts {
                        allocs,
                        bytes,
                        frees,
                        freed_bytes,
                    })
                    .collect(),
            )),
            (None, Some(why)) => Some(MemoryReply::Unavailable(why)),
            (None, None) => None,
        };
        out.notes = notes;
        Ok(())
    }

    fn probe(&self) -> String {
        Python::with_gil(|py| {
            self.probe
                .call0(py)
                .and_then(|r| r.extract::<String>(py))
                .unwrap_or_else(|e| format!("error probe failed: {}", one_line(py, &e)))
        })
    }
}

/// Serve the worker protocol on `fds` (`VERNIER_FDS`, "R,W") until the runner says `quit`.
/// The Python worker gives the facts of its `hello` (the clock's resolution and overhead in
/// ns, a debug build, the interpreter, the hash seed), its benchmarks' names, allocation-free
/// flags, declared work per iteration (`("bytes", n)`, `("items", n)` or None) and
/// complexity declarations (`(class, f, function)` or None), executors of async benchmarks
/// (`(name, on_calling_core)` or None),
/// `run(which, iters, samples, memory, empty_future)` (`which`: an index, or None for the empty
/// loop; `empty_future`: the empty future on benchmark `which`'s executor) and
/// `probe()`, the `probe` reply.
#[pyfunction]
#[pyo3(signature = (fds, *, hello, names, alloc_free, run, probe, throughput = Vec::new(), complexity = Vec::new(), executors = Vec::new()))]
#[allow(clippy::too_many_arguments)] // the keyword arguments of one Python call
pub fn serve(
    py: Python<'_>,
    fds: String,
    hello: (f64, f64, bool, String, String),
    names: Vec<String>,
    alloc_free: Vec<bool>,
    run: Py<PyAny>,
    probe: Py<PyAny>,
    throughput: Vec<Option<(String, u64)>>,
    complexity: Vec<Option<PyDeclared>>,
    executors: Vec<Option<(String, bool)>>,
) -> PyResult<()> {
    let throughput = throughput
        .into_iter()
        .map(|t| match t {
            None => Ok(None),
            Some((kind, n)) if kind == "bytes" => Ok(Some(Throughput::BytesPerIter(n))),
            Some((kind, n)) if kind == "items" => Ok(Some(Throughput::ItemsPerIter(n))),
            Some((kind, _)) => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "vernier: a throughput is bytes or items per iteration, not {kind:?}"
            ))),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let complexity = complexity
        .into_iter()
        .map(|d| d.map(declared).transpose())
        .collect::<PyResult<Vec<_>>>()?;
    let (resolution_ns, overhead_ns, debug_build, interp, hash_seed) = hello;
    let mut worker = PyWorker {
        hello: Hello {
            version: protocol::VERSION,
            implementation: format!("vernier-python/{}", env!("CARGO_PKG_VERSION")),
            timer: TimerInfo {
                kind: TimerKind::Monotonic,
                resolution_ns,
                overhead_ns,
                tsc_hz: None,
            },
            debug_build,
            pid: std::process::id(),
            interp: Some(interp),
            hash_seed: Some(hash_seed),
        },
        names,
        alloc_free,
        throughput,
        complexity,
        executors: executors
            .into_iter()
            .map(|e| {
                e.map(|(name, on_calling_core)| ExecutorKind {
                    name,
                    on_calling_core,
                })
            })
            .collect(),
        run,
        probe,
    };
    // The loop waits on the pipe between commands; the GIL is taken again for each callback.
    py.allow_threads(|| protocol::serve::serve_worker_fds(&mut worker, &fds))
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("vernier worker: {e}")))
}
