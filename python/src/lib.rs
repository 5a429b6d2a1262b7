//! `vernier._native`: the Rust side of the Python package. Python contributes only measured
//! loops; everything that decides (the sampler, the analysis, the reports, the CLI, the worker
//! protocol) is the Rust engine's, reached through these functions among others:
//!
//! - `main`: the `vernier` command line, the same CLI as the Rust binary (`vernier_cli`);
//! - `measure`: one benchmark measured in this process by the engine, which calls a Python
//!   loop for each sample (the pytest fixture's way in);
//! - `render`: a result file as the terminal table `vernier run` prints;
//! - `serve`: the worker protocol (`worker.rs`), served by the Rust crate's loop and parser,
//!   which calls the Python worker for each batch.

mod worker;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::cell::RefCell;
use std::ffi::OsString;
use std::path::PathBuf;
use std::rc::Rc;
use vernier::timer::Timer;
use vernier::workload::routine::Routine;

/// Run the `vernier` command line `argv` (program name first) and return its exit status.
/// `self_command` starts this CLI again (`[python, -m, vernier]`), for the commands that
/// start themselves.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>, self_command: Vec<String>) -> i32 {
    let self_command: Vec<OsString> = self_command.into_iter().map(OsString::from).collect();
    // The CLI waits on its workers for seconds; other Python threads run meanwhile.
    py.allow_threads(|| vernier_cli::main_with_self_command(argv, self_command))
}

/// The engine's clock as a Python callable: the measured loop reads it at its start and its
/// end (`_loops.Loop.time`), so the region holds the loop alone, in the engine's ticks.
#[pyclass(frozen)]
struct Clock {
    timer: Timer,
}

#[pymethods]
impl Clock {
    fn __call__(&self) -> u64 {
        self.timer.start()
    }
}

/// A Python loop as the engine's routine: `run(iters, clock)` runs `iters` iterations of the
/// body between two reads of `clock` and returns the ticks between them (setting up its
/// inputs and switching the garbage collector off before the first read). A Python exception
/// is kept in `error` for the caller to raise, and ends the benchmark.
struct PyLoop {
    run: Py<PyAny>,
    clock: Option<Py<Clock>>,
    error: Rc<RefCell<Option<PyErr>>>,
}

impl Routine for PyLoop {
    fn sample(&mut self, timer: &Timer, iters: u64) -> u64 {
        Python::with_gil(|py| {
            let r = (|| -> PyResult<u64> {
                let clock = match &self.clock {
                    Some(c) => c.clone_ref(py),
                    None => {
                        let c = Py::new(py, Clock { timer: *timer })?;
                        self.clock = Some(c.clone_ref(py));
                        c
                    }
                };
                self.run.call1(py, (iters, clock))?.extract::<u64>(py)
            })();
            match r {
                Ok(ticks) => ticks,
                Err(e) => {
                    let what = e.to_string();
                    *self.error.borrow_mut() = Some(e);
                    // The engine turns a panic into the benchmark's error and stops it.
                    std::panic::panic_any(what)
                }
            }
        })
    }
}

/// Measure one benchmark in this process: `run(iters, clock)` is its loop (see `PyLoop`). Returns the result file
/// (schema 2) as JSON text. `time` is the budget in seconds (None: the default, or `quick`'s).
#[pyfunction]
///
/// `empty_iter_ns`: the cost of an iteration of the same loop around an empty body (measured
/// by this function on that loop); the benchmark is then analysed against it (`optimized-away`
/// when its body is not measurably more) instead of against the Rust harness's empty loop.
///
/// `uncounted`: why allocations are not counted when this process has no allocation counter
/// (the engine counts them in this process only when one is loaded): kept as the benchmark's
/// `memory-unavailable` diagnostic, so its table says so.
#[pyo3(signature = (name, run, *, time=None, quick=false, rounds=0, empty_iter_ns=None, uncounted=None))]
fn measure(
    name: String,
    run: Py<PyAny>,
    time: Option<f64>,
    quick: bool,
    rounds: usize,
    empty_iter_ns: Option<f64>,
    uncounted: Option<String>,
) -> PyResult<String> {
    let plan = match (time, quick) {
        (Some(t), _) if t > 0.0 && t.is_finite() => {
            vernier::plan::Plan::with_budget((t * 1e9) as u64)
        }
        (Some(t), _) => {
            return Err(PyValueError::new_err(format!(
                "time={t}: expected a positive number of seconds"
            )))
        }
        (None, true) => vernier::plan::Plan::quick(),
        (None, false) => vernier::plan::Plan::default(),
    };
    let machine = vernier::machine::Machine::detect();
    let ledger = vernier::ledger::Ledger::load(&machine);
    let mut options = vernier::Options {
        plan,
        quick,
        rounds,
        counters: vernier::counters::CounterSelection::parse("none")
            .map_err(PyValueError::new_err)?,
        ..vernier::Options::default()
    };
    options.fill_from_ledger(&ledger, None);
    let mut suite = vernier::Suite::new(options);
    // Panics here are the Python loop's exceptions, kept in `PyLoop::error`: silence the
    // default hook's message while the engine runs.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let error = Rc::new(RefCell::new(None));
    suite.add(
        name,
        Box::new(PyLoop {
            run,
            clock: None,
            error: error.clone(),
        }),
    );
    let mut file = suite.run_in_process(&mut |_| {});
    std::panic::set_hook(hook);
    if let Some(e) = error.borrow_mut().take() {
        return Err(e);
    }
    if let Some(empty) = empty_iter_ns.filter(|e| e.is_finite() && *e > 0.0) {
        against_empty_loop(&mut file, empty);
    }
    if let Some(reason) = uncounted {
        for b in &mut file.benchmarks {
            if b.memory.is_none() && b.status == vernier::result::Status::Ok {
                let finding = vernier::diagnostic::Finding::MemoryUnavailable {
                    reason: reason.clone(),
                };
                b.diagnostics
                    .push(vernier::diagnostic::Diagnostic::from(&finding));
            }
        }
    }
    ledger.record_run(&file, None);
    serde_json::to_string(&file).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The run's benchmarks analysed again from their samples, with `empty` as the loop's own
/// cost per iteration (the Python loop's, not the Rust harness's).
fn against_empty_loop(file: &mut vernier::result::ResultFile, empty: f64) {
    file.harness.empty_iter_ns = empty;
    let ctx = file.analysis_context();
    let all = file.benchmarks.clone();
    for b in &mut file.benchmarks {
        if let Some(r) = vernier::pipeline::again(b, &ctx, b.earlier_runs, &all) {
            *b = r;
        }
    }
}

/// A result file (JSON text, or several merged: their benchmarks in order) as the terminal
/// table `vernier run` prints, with its notes and legend.
#[pyfunction]
fn render(results: Vec<String>) -> PyResult<String> {
    let file = merge(&results)?;
    let render = vernier::report::Render::for_stdout(false);
    Ok(vernier::report::render_file(&file, render))
}

/// Several result files' JSON texts as one (the first's header, every benchmark), as JSON.
#[pyfunction]
fn merge_results(results: Vec<String>) -> PyResult<String> {
    let file = merge(&results)?;
    serde_json::to_string(&file).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

fn merge(results: &[String]) -> PyResult<vernier::result::ResultFile> {
    let mut files = results.iter().map(|t| {
        serde_json::from_str::<vernier::result::ResultFile>(t)
            .map_err(|e| PyValueError::new_err(format!("not a vernier result: {e}")))
    });
    let mut first = files
        .next()
        .ok_or_else(|| PyValueError::new_err("no result to render"))??;
    for f in files {
        first.benchmarks.extend(f?.benchmarks);
    }
    Ok(first)
}

/// Write a result file atomically (temp file and rename), as the engine does.
#[pyfunction]
fn write_result(path: PathBuf, text: String) -> PyResult<()> {
    vernier::result::write_atomic(&path, text.as_bytes())
        .map_err(|e| PyRuntimeError::new_err(format!("cannot write {}: {e}", path.display())))
}

/// Keep a result file (JSON text, or several merged) in the history store, as `vernier run
/// --save` does: `db` as `--db` (None: `VERNIER_DB`, else the default store), `commit` and
/// `branch` (None: git's view of the current directory).
#[pyfunction]
#[pyo3(signature = (results, *, db=None, commit=None, branch=None))]
fn save(
    results: Vec<String>,
    db: Option<String>,
    commit: Option<String>,
    branch: Option<String>,
) -> PyResult<()> {
    let file = merge(&results)?;
    vernier_cli::save_result(&file, db, commit, branch, "pytest").map_err(PyRuntimeError::new_err)
}

/// The path of the allocation-counting interposer `vernier run` preloads into its counting
/// process (built with the CLI and embedded in it), written to the cache directory on first
/// use.
#[pyfunction]
fn interposer_path() -> PyResult<PathBuf> {
    vernier_cli::allocation_interposer().map_err(PyRuntimeError::new_err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(worker::serve, m)?)?;
    m.add_function(wrap_pyfunction!(measure, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(merge_results, m)?)?;
    m.add_function(wrap_pyfunction!(write_result, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(interposer_path, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
