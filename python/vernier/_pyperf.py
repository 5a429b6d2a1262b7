"""``python -m vernier pyperf SCRIPT [ARGS]``: a pyperf script, unchanged, measured by Vernier.

This module is what the script's ``import pyperf`` gets (it is put in ``sys.modules`` before
the script runs, so it wins over an installed pyperf in that process): ``Runner`` with
``bench_func``, ``bench_time_func``, ``bench_async_func``, ``timeit``, ``bench_command``,
``metadata``, ``argparser``, ``parse_args`` and ``args``; ``perf_counter``,
``python_implementation``, ``python_has_jit``.

A pyperf script registers its benchmarks by calling them, one after the other, at its top
level, and a Vernier worker must list them all before it runs any. Here each ``bench_*`` call
records the benchmark (its name exactly as the script gives it, the measured loop built from
its function) and returns None at once. A worker (``VERNIER_FDS`` set: started by ``vernier
run``) first runs the script in a forked child that only reports the names it registered;
then it runs the script itself, and the registration that completes those names serves the
benchmarks to the runner before it returns, so what the script does after its last
``bench_*`` call (a ``finally`` that removes the benchmark's files) comes after the
measurements, as in a pyperf worker. Standalone, the script runs once to check it and read
its options, then the runner is started on the same command line, pyperf's run options
(``-o``, ``--fast``, ``--rigorous``, ``-p``, ``-v``, …) translated into ``vernier run``'s. A
registration that uses what an earlier ``bench_*`` call returned (rare) gets None.
docs/pyperf.md says what is supported and what is not.
"""

import argparse
import os
import sys
import time
import traceback

from . import Items, _loops, _worker

perf_counter = time.perf_counter

# The pyperf release whose API this stands in for.
VERSION = (2, 11, 0)
__version__ = ".".join(map(str, VERSION))

__all__ = ["Runner", "perf_counter", "python_implementation", "python_has_jit"]

PROG = "python -m vernier pyperf"
# A directory holding ``pyperf.py``, which is this module (``_pyperf_shim/pyperf.py``).
_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyperf_shim")

# The benchmarks the script registered, in order: (name, Loop).
_registered = []
# Each benchmark's own metadata (``bench_func(..., metadata={...})``), by name.
_bench_metadata = {}
# What this process says once on stderr (standalone), in order, without repeats.
_notes = []
# pyperf's settings the script or its command line gave that mean nothing here, said in one line.
_ignored = []
# The Runner the script made (the last one).
_runner = None
# In a worker: the names the listing pass registered, in order; the registration that
# completes them serves the benchmarks (the script's code after it runs once they are served).
_expected = None
# In a worker: serve's exit status, once served.
_served = None


def _note(text):
    if text not in _notes:
        _notes.append(text)


def _ignore(what):
    if what not in _ignored:
        _ignored.append(what)


class PyperfError(Exception):
    """A bad use of the stand-in, said as one line naming the fix."""


def python_implementation():
    """The implementation's name in lower case (``cpython``, ``pypy``), as pyperf's."""
    return sys.implementation.name.lower()


def python_has_jit():
    """Whether the interpreter runs a JIT (PyPy's, GraalPy's, CPython's experimental one)."""
    name = python_implementation()
    if name == "pypy":
        return bool(sys.pypy_translation_info["translation.jit"])  # type: ignore[attr-defined]
    if name in ("graalpython", "graalpy"):
        return True
    jit = getattr(sys, "_jit", None)
    return bool(jit is not None and getattr(jit, "is_enabled", lambda: False)())


def _strictly_positive(value):
    value = int(value)
    if value <= 0:
        raise ValueError("value must be > 0")
    return value


def _positive_or_nul(value):
    if "^" in value:
        x, _, y = value.partition("^")
        value = int(x) ** int(y)
    else:
        value = int(value)
    if value < 0:
        raise ValueError("value must be >= 0")
    return value


def _comma_separated(value):
    return [v.strip() for v in value.split(",") if v.strip()]


class _Given(argparse.Action):
    """Stores the value and remembers that the command line gave the option."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        given = getattr(namespace, "_vernier_given", None) or set()
        given.add(self.dest)
        setattr(namespace, "_vernier_given", given)


# pyperf's options that Vernier cannot honour: what to do instead.
_UNSUPPORTED = {
    "append": "--append is not supported: write each run with -o FILE (Vernier's result file) "
              "and keep runs in the history store with `vernier run --save`",
    "compare_to": "--compare-to is not supported: compare two interpreters with `vernier "
                  "compare OLD_PYTHON NEW_PYTHON` (docs/compare.md) or `python -m vernier timeit "
                  "--compare-to PYTHON`",
    "python_names": "--python-names is not supported (it goes with --compare-to)",
    "profile": "--profile is not supported: profile the script with `python -m cProfile SCRIPT`",
    "hook": "--hook is not supported: Vernier has no pyperf hooks",
    "worker": "--worker is pyperf's own worker mode: Vernier's workers are started by "
              "`vernier run`; run the script without it",
    "pipe": "--pipe is pyperf's own worker protocol: run the script without it",
    "worker_task": "--worker-task is pyperf's own worker protocol: run the script without it "
                   "(`vernier run --filter REGEX` selects benchmarks)",
    "calibrate_loops": "--calibrate-loops is pyperf's own worker protocol: run the script without it",
    "recalibrate_loops": "--recalibrate-loops is pyperf's own worker protocol: run the script without it",
    "calibrate_warmups": "--calibrate-warmups is pyperf's own worker protocol: run the script without it",
    "recalibrate_warmups": "--recalibrate-warmups is pyperf's own worker protocol: run the script without it",
}

# pyperf's options that have no meaning in Vernier: accepted, said once.
_IGNORED = {
    "values": "-n/--values",
    "loops": "-l/--loops",
    "warmups": "-w/--warmups",
    "min_time": "--min-time",
}
_IGNORED_WHY = ("no meaning in Vernier, ignored: its sampler chooses the iterations of each "
                "sample and the number of samples, and finds the warm-up in the data (`vernier "
                "run --time S -- python -m vernier pyperf SCRIPT` sets the budget)")
_DISPLAY = {
    "dump": "-d/--dump", "metadata": "-m/--metadata", "hist": "-g/--hist", "stats": "-t/--stats",
}


def _add_options(parser, values, processes, loops, warmups, min_time):
    """pyperf's Runner options, with pyperf's names and defaults (docs/pyperf.md says what each
    means here)."""
    add = parser.add_argument
    add("--rigorous", action="store_true",
        help="a longer run: `vernier run --time 2` (twice the default budget)")
    add("--fast", action="store_true", help="a short run: `vernier run --quick`")
    add("--debug-single-value", action="store_true", help="a short run: `vernier run --quick`")
    add("-p", "--processes", type=_strictly_positive, default=processes, action=_Given,
        help="worker processes per benchmark: `vernier run --processes N` "
             "(default: Vernier's, 6 for Python)")
    add("-n", "--values", dest="values", type=_strictly_positive, default=values or 3,
        action=_Given, help="accepted, no meaning here (Vernier's sampler chooses the samples)")
    add("-w", "--warmups", type=_positive_or_nul, default=warmups, action=_Given,
        help="accepted, no meaning here (the warm-up is found in the data)")
    add("-l", "--loops", type=_positive_or_nul, default=loops, action=_Given,
        help="accepted, no meaning here (the sampler chooses the iterations)")
    add("-v", "--verbose", action="store_true", help="Vernier's verbose report")
    add("-q", "--quiet", action="store_true", help="accepted (Vernier prints its table)")
    add("--pipe", type=int, metavar="FD", help=argparse.SUPPRESS)
    add("-o", "--output", metavar="FILENAME",
        help="write the samples to FILENAME in pyperf's JSON format (pyperf's tools read it; "
             "`vernier run --json` gives Vernier's own result); an existing file is an error, "
             "as in pyperf")
    add("--append", metavar="FILENAME", help="not supported")
    add("--min-time", type=float, default=min_time, action=_Given,
        help="accepted, no meaning here")
    add("--timeout", type=_strictly_positive,
        help="longest wait for a worker's reply, in seconds: `vernier run --timeout`")
    add("--worker", action="store_true", help=argparse.SUPPRESS)
    add("--in-process", action="store_true", dest="in_process",
        help="accepted: Vernier measures in worker processes")
    add("--worker-task", type=_positive_or_nul, metavar="TASK_ID", help=argparse.SUPPRESS)
    for o in ("--calibrate-loops", "--recalibrate-loops", "--calibrate-warmups", "--recalibrate-warmups"):
        add(o, action="store_true", help=argparse.SUPPRESS)
    add("-d", "--dump", action="store_true", help="accepted (`vernier report -v FILE` shows more)")
    add("--metadata", "-m", action="store_true", help="accepted (`vernier report -v FILE` shows more)")
    add("--hist", "-g", action="store_true", help="accepted (`vernier run --html FILE` plots)")
    add("--stats", "-t", action="store_true", help="accepted (`vernier report -v FILE` shows more)")
    add("--affinity", metavar="CPU_LIST", help="pin the workers to these CPUs: `vernier run --cpu`")
    add("--inherit-environ", metavar="VARS", type=_comma_separated,
        help="accepted: Vernier's workers inherit the whole environment")
    add("--copy-env", dest="copy_env", action="store_true", default=False,
        help="accepted: Vernier's workers inherit the whole environment")
    add("--no-locale", dest="locale", action="store_false", default=True,
        help="accepted: Vernier's workers inherit the whole environment")
    add("--python", default=None, help="not supported (this interpreter runs the script)")
    add("--compare-to", metavar="REF_PYTHON", help="not supported: `vernier compare`")
    add("--python-names", metavar="REF_NAME:CHANGED_NAMED", help="not supported")
    add("--profile", type=str, help="not supported")
    add("--hook", action="append", help="not supported")
    memory = parser.add_mutually_exclusive_group()
    memory.add_argument("--tracemalloc", action="store_true",
                        help="accepted: Vernier counts allocations by default (docs/memory.md)")
    memory.add_argument("--track-memory", action="store_true",
                        help="accepted: Vernier counts allocations by default (docs/memory.md)")


class Runner:
    """pyperf's ``Runner``: each ``bench_*`` call registers a benchmark (named as the script
    names it) and returns None; Vernier measures them after the script has run."""

    def __init__(self, values=None, processes=None, loops=0, min_time=0.1, metadata=None,
                 show_name=True, program_args=None, add_cmdline_args=None, _argparser=None,
                 warmups=1, hooks=None):
        global _runner
        for key, given, default in (("values", values, None), ("loops", loops, 0),
                                    ("min_time", min_time, 0.1), ("warmups", warmups, 1)):
            if given != default:
                _ignore("Runner({}={!r})".format(key, given))
        if not show_name:
            _note("Runner(show_name=False) has no meaning in Vernier: its table names each benchmark")
        if program_args:
            _note("Runner(program_args=...) is not used: Vernier starts each worker with this "
                  "process's own command line")
        if hooks:
            _note("Runner(hooks=...) is not used: Vernier has no pyperf hooks")
        if hooks is not None and not isinstance(hooks, (list, tuple)):
            raise RuntimeError("hooks parameter should be list, tuple or None")
        self.metadata = metadata if metadata is not None else {}
        self.args = None
        self._add_cmdline_args = add_cmdline_args
        self._program_args = program_args
        self._show_name = show_name
        self._processes = processes
        parser = _argparser if _argparser is not None else argparse.ArgumentParser()
        parser.description = "Benchmark"
        parser.epilog = ("Run by Vernier ({} SCRIPT [ARGS]): docs/pyperf.md says what each "
                         "option means here.".format(PROG))
        _add_options(parser, values, processes, loops, warmups, min_time)
        self.argparser = parser
        _runner = self

    def parse_args(self, args=None):
        """Parse the script's command line (``sys.argv[1:]``, or ``args``) with pyperf's options
        and the script's own; the result is also ``runner.args``."""
        if self.args is not None and args is None:
            return self.args
        ns = self.argparser.parse_args(args)
        if not hasattr(ns, "_vernier_given"):
            ns._vernier_given = set()
        for dest, why in _UNSUPPORTED.items():
            if getattr(ns, dest, None):
                self.argparser.exit(2, "{}: error: {}\n".format(self.argparser.prog, why))
        if ns.python is not None and os.path.realpath(ns.python) != os.path.realpath(sys.executable):
            self.argparser.exit(2, "{}: error: --python is not supported: run `{} {} SCRIPT` "
                                "with that interpreter (it needs the vernier package)\n".format(
                                    self.argparser.prog, ns.python, PROG.split(" ", 1)[1]))
        for dest, flag in _IGNORED.items():
            if dest in ns._vernier_given:
                _ignore(flag)
        for dest, flag in _DISPLAY.items():
            if getattr(ns, dest):
                _note("{} is accepted and has no effect: `vernier report -v FILE` shows a "
                      "result in full, `vernier run --html FILE` plots it".format(flag))
        if ns.tracemalloc or ns.track_memory:
            _note("--tracemalloc/--track-memory: Vernier counts each benchmark's allocations in a "
                  "process of its own by default (docs/memory.md)")
        if ns.in_process:
            _note("--in-process is accepted and has no effect: Vernier measures in worker processes")
        if ns.quiet:
            _note("-q/--quiet is accepted: Vernier prints its table and its flags")
        self.args = ns
        return ns

    def is_worker(self):
        """Whether this process measures (a Vernier worker) rather than drives the run."""
        return _worker.fds() is not None

    def _register(self, name, loop, metadata):
        self.parse_args()
        if not isinstance(name, str) or not name:
            raise ValueError("a benchmark needs a non-empty name (a str), got {!r}".format(name))
        if "\n" in name or "\r" in name:
            raise ValueError("benchmark name {!r}: a name is one line".format(name))
        if any(n == name for n, _ in _registered):
            raise ValueError("duplicated benchmark name: %r" % name)
        if metadata is not None and not isinstance(metadata, dict):
            raise TypeError("metadata must be a dict, got {!r}".format(metadata))
        _registered.append((name, loop))
        if metadata:
            _bench_metadata[name] = dict(metadata)
        if _expected is not None and _served is None and [n for n, _ in _registered] == _expected:
            _serve_now()

    @staticmethod
    def _no_keyword_argument(kwargs):
        if kwargs:
            raise TypeError("unexpected keyword argument %s" % ", ".join(map(repr, sorted(kwargs))))

    @staticmethod
    def _throughput(loop, inner_loops):
        if inner_loops is not None:
            if not isinstance(inner_loops, int) or inner_loops < 1:
                raise ValueError("inner_loops must be an int >= 1, got {!r}".format(inner_loops))
            loop.throughput = ("items", inner_loops)
        return loop

    def bench_func(self, name, func, *args, **kwargs):
        """Benchmark ``func(*args)``: Vernier's figure is the time of one call."""
        inner_loops = kwargs.pop("inner_loops", None)
        metadata = kwargs.pop("metadata", None)
        self._no_keyword_argument(kwargs)
        # pyperf leaves the garbage collector as it is: so does this loop.
        loop = _loops.call_loop(func, args, gc_on=True)
        self._register(name, self._throughput(loop, inner_loops), metadata)

    def bench_time_func(self, name, time_func, *args, **kwargs):
        """Benchmark ``time_func(loops, *args)``, which returns the seconds of ``loops``
        iterations: Vernier's custom-timed loop (``vernier.bench_custom``)."""
        inner_loops = kwargs.pop("inner_loops", None)
        metadata = kwargs.pop("metadata", None)
        self._no_keyword_argument(kwargs)
        loop = _loops.custom_loop(time_func, args, gc_on=True, name=name)
        self._register(name, self._throughput(loop, inner_loops), metadata)

    def bench_async_func(self, name, func, *args, **kwargs):
        """Benchmark ``await func(*args)``, each sample in an event loop of its own."""
        inner_loops = kwargs.pop("inner_loops", None)
        metadata = kwargs.pop("metadata", None)
        loop_factory = kwargs.pop("loop_factory", None)
        self._no_keyword_argument(kwargs)
        loop = _loops.async_loop(func, args, loop_factory=loop_factory, gc_on=True, name=name)
        self._register(name, self._throughput(loop, inner_loops), metadata)

    def timeit(self, name, stmt=None, setup="pass", teardown="pass", inner_loops=None,
               duplicate=None, metadata=None, globals=None):
        """Benchmark the statement ``stmt`` (source text, or a list of lines; ``name`` when
        None) compiled into the loop, ``setup`` and ``teardown`` once per sample outside the
        clock. The garbage collector stays on: pyperf's ``timeit`` leaves it on, unlike the
        ``timeit`` module."""
        if stmt is None:
            stmt = name
        stmt, setup, teardown = (_source(stmt, "stmt"), _source(setup, "setup"),
                                 _source(teardown, "teardown"))
        if duplicate is not None:
            if not isinstance(duplicate, int) or duplicate < 1:
                raise ValueError("duplicate must be an int >= 1, got {!r}".format(duplicate))
            stmt = "\n".join([stmt] * duplicate)
            inner_loops = (inner_loops or 1) * duplicate
        try:
            loop = _loops.statement_loop(stmt, setup, globals, gc_on=True, teardown=teardown)
        except ValueError as e:
            raise ValueError("timeit {!r}: {}".format(name, e)) from None
        self._register(name, self._throughput(loop, inner_loops), metadata)

    def bench_command(self, name, command):
        """Benchmark running ``command`` (a list of arguments) to its end: the wall time from
        the start of the process to its exit, its output thrown away, as pyperf measures it."""
        if isinstance(command, str) or not command:
            raise TypeError("the command is a non-empty list of arguments, got {!r}".format(command))
        command = [os.fspath(c) for c in command]
        env = {k: v for k, v in os.environ.items() if k not in ("VERNIER_FDS",)}

        def time_func(loops):
            import subprocess

            total = 0.0
            for _ in range(loops):
                t0 = time.perf_counter()
                code = subprocess.call(command, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                total += time.perf_counter() - t0
                if code != 0:
                    raise RuntimeError("the command {} exited with status {}: run it by hand to "
                                       "see why".format(" ".join(command), code))
            return total

        self._register(name, _loops.custom_loop(time_func, (), gc_on=True, name=name), None)


def _source(code, what):
    if callable(code):
        raise TypeError("timeit: a callable {} is not supported: give source text, or use "
                        "runner.bench_func".format(what))
    if isinstance(code, (list, tuple)):
        code = "\n".join(line.rstrip() for line in code if line.strip())
    if not isinstance(code, str):
        raise TypeError("timeit: {} must be source text, got {!r}".format(what, code))
    return code


def _run_options(args):
    """``vernier run``'s options for the script's parsed pyperf options."""
    out = []
    if args.rigorous:
        out += ["--time", "2"]
    elif args.fast or args.debug_single_value:
        out.append("--quick")
    if args.processes is not None:
        out += ["--processes", str(args.processes)]
    if args.verbose:
        out.append("--verbose")
    if args.timeout:
        out += ["--timeout", str(args.timeout)]
    if args.affinity:
        out += ["--cpu", args.affinity]
    return out


def _usage():
    return ("usage: {0} SCRIPT [ARGS]\n"
            "Run the pyperf script SCRIPT, unchanged, with Vernier: its `import pyperf` gets "
            "Vernier's stand-in, each benchmark it registers is measured in worker processes "
            "and named as the script names it.\n"
            "ARGS are the script's: its own options and pyperf's (-o FILE, --fast, --rigorous, "
            "-p N, -v, ...; `{0} SCRIPT --help`).\n"
            "For every option of `vernier run` (--time S, --filter REGEX, --html FILE, ...): "
            "vernier run [OPTIONS] -- python -m vernier pyperf SCRIPT [ARGS]\n"
            "docs/pyperf.md says what is supported.\n".format(PROG))


def _fail(text):
    sys.stdout.flush()
    sys.stderr.write("vernier pyperf: {}\n".format(text))
    return 1


def _serve_now():
    """Serve the registered benchmarks to the runner, from inside the script's last ``bench_*``
    call: what the script does after it (a ``finally`` that removes the benchmark's files)
    waits until the runner has what it asked for, as in a pyperf worker."""
    global _served
    sys.stdout.flush()
    try:
        _served = _worker.serve(_registered)
    except SystemExit as e:
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write("{}\n".format(e.code))
        _served = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def _listing_pass(path, args):
    """Run the script once in a forked child to learn the names it registers, its side effects
    (files made and removed, handlers added to a logger) kept out of this process: ``(None,
    names)``, or ``(status, None)`` when the script failed there (saying why on stderr)."""
    import json

    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run, send the names, end without this process's clean-up
        os.close(r)
        code = 1
        try:
            status = _run_script(path, args)
            names = [n for n, _ in _registered] if status is None else None
            data = json.dumps({"status": status, "names": names}).encode()
            while data:
                data = data[os.write(w, data):]
            code = 0
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, wait = os.waitpid(pid, 0)
    try:
        reply = json.loads(b"".join(chunks).decode())
    except ValueError:
        _fail("{} ended its listing run without a word (wait status {}): run it with `{} {}` "
              "to see why".format(path, wait, PROG, path))
        return 1, None
    return reply["status"], reply["names"]


def _exec_main(path):
    """Run the script as ``python SCRIPT`` does: in a module named ``__main__`` that stays
    ``sys.modules["__main__"]`` (its functions pickle by name, for multiprocessing)."""
    import types

    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None
    main.__loader__ = None
    main.__package__ = None
    main.__spec__ = None
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _run_script(path, args):
    """Run the script in this process with the stand-in as ``pyperf``: returns None when it ran
    to its end (or exited with status 0), else the exit status to end with."""
    sys.modules["pyperf"] = sys.modules[__name__]
    sys.argv = [path] + list(args)
    # As `python SCRIPT` does: the script's directory first on the path (its sibling modules).
    # Then the stand-in's directory, before an installed pyperf: a multiprocessing child
    # (spawn, forkserver) gets this path and imports the script again.
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    if _SHIM not in sys.path:
        sys.path.insert(1, _SHIM)
    try:
        _exec_main(path)
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            if any(a in ("-h", "--help") for a in args) and not _registered:
                return 0
            return None
        if not isinstance(code, int):
            sys.stderr.write("{}\n".format(code))
            code = 1
        _fail("{} exited with status {} while registering its benchmarks (above)".format(path, code))
        return code
    except KeyboardInterrupt:
        return 130
    except BaseException as e:  # noqa: B036 - the script's error, reported with its traceback
        traceback.print_exc()
        when = ("after its benchmarks were measured" if _served is not None
                else "while registering its benchmarks")
        return _fail("{} raised {}: {} {} (the traceback is above); fix the script: it must "
                     "run to its end under pyperf too".format(path, type(e).__name__, e, when))
    return None


def _nothing_registered(script):
    return _fail("{} registered no benchmark: a pyperf script makes a pyperf.Runner() and "
                 "calls runner.bench_func(name, func), bench_time_func, bench_async_func, "
                 "timeit or bench_command (under `if __name__ == \"__main__\":` is fine: it "
                 "runs as __main__); check that it was given the arguments it needs".format(script))


def main(argv):
    """``python -m vernier pyperf SCRIPT [ARGS]``; returns the exit status."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(_usage())
        return 0 if argv else 1
    script, args = argv[0], argv[1:]
    if script.startswith("-"):
        return _fail("the first argument is the script, got the option {!r}: {} SCRIPT [ARGS] "
                     "(the script's options come after it)".format(script, PROG))
    if not os.path.isfile(script):
        why = "is a directory" if os.path.isdir(script) else "does not exist"
        return _fail("the script {} {}: give the path of a pyperf script (a .py file that "
                     "imports pyperf and calls runner.bench_func(...))".format(script, why))
    global _expected
    worker = _worker.fds() is not None
    if worker and hasattr(os, "fork"):
        status, names = _listing_pass(script, args)
        if status is not None:
            return status
        if not names:
            return _nothing_registered(script)
        _expected = names
    status = _run_script(script, args)
    if _served is not None:
        return _served
    if status is not None:
        return status
    if not _registered:
        return _nothing_registered(script)
    if worker:  # the script registered other names than in its listing run: serve them now
        return _worker.serve(_registered)
    ns = _runner.args if _runner is not None else None
    if ns is not None and ns.output and os.path.exists(ns.output):
        return _fail("the JSON file {} already exists: remove it or give -o another name (as "
                     "pyperf, this command does not overwrite a result)".format(ns.output))
    if _ignored:
        _note("{}: {}".format(", ".join(_ignored), _IGNORED_WHY))
    for text in _notes:
        sys.stderr.write("vernier pyperf: {}\n".format(text))
    run = _run_options(ns) if ns is not None else []
    from . import cli

    command = [sys.executable, "-m", "vernier", "pyperf", os.path.abspath(script)] + args
    if ns is None or not ns.output:
        return cli(["run"] + run + ["--"] + command)
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="vernier-pyperf-")
    try:
        result = os.path.join(tmp, "result.json")
        status = cli(["run"] + run + ["--json", result, "--"] + command)
        if not os.path.exists(result):
            return status
        # pyperf's JSON, by Vernier's own exporter (docs/report.md), then the script's facts.
        export = cli(["export", result, "--format", "pyperf", "-o", ns.output])
        if export != 0:
            return export
        inner = {n: l.throughput[1] for n, l in _registered if getattr(l, "throughput", None)}
        try:
            add_script_facts(ns.output, _runner.metadata, _bench_metadata, inner)
        except (OSError, ValueError) as e:
            return _fail("cannot complete {}: {}".format(ns.output, e))
        return status
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _metadata_value(v):
    """A metadata value as pyperf keeps one: a number, or a one-line string."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        v = str(v)
    return v.strip() if isinstance(v, str) else v


def add_script_facts(path, metadata=None, bench_metadata=None, inner_loops=None):
    """Complete ``vernier export --format pyperf``'s file at ``path`` with what only the script
    knows: ``runner.metadata`` (the suite's), each benchmark's ``metadata=``, and its
    ``inner_loops`` (the values divided by it, as pyperf's are)."""
    import json

    with open(path, encoding="utf-8") as f:
        suite = json.load(f)
    suite.setdefault("metadata", {}).update(
        {k: _metadata_value(v) for k, v in (metadata or {}).items()})
    for bench in suite.get("benchmarks", []):
        meta = bench.setdefault("metadata", {})
        name = meta.get("name")
        meta.update({k: _metadata_value(v) for k, v in ((bench_metadata or {}).get(name) or {}).items()})
        inner = (inner_loops or {}).get(name)
        if inner and inner != 1:
            meta["inner_loops"] = inner
            for run in bench.get("runs", []):
                if "values" in run:
                    run["values"] = [v / inner for v in run["values"]]
                if "warmups" in run:
                    run["warmups"] = [[loops, v / inner] for loops, v in run["warmups"]]
    # A new file beside it, of unpredictable name and created exclusively, then renamed.
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".vernier-")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(suite, f)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
