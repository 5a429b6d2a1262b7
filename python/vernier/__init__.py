"""Vernier for Python: precision micro-benchmarks, with how far to trust each figure.

A script registers its benchmarks and ends with :func:`main`::

    import vernier
    x = list(range(1000))
    vernier.bench("sum", sum, x)
    vernier.main()

``python bench.py`` measures them with the full analysis in worker processes (the script is
started again as each worker), as ``vernier run -- python bench.py`` does. ``python -m vernier
timeit STMT`` measures a statement; the pytest plugin gives a ``benchmark`` fixture. The
measuring, the statistics and the reports are the Rust engine's (``vernier._native``).
"""

import os
import sys

from . import _loops, _worker

__version__ = _worker.VERSION
__all__ = ["bench", "bench_statement", "main", "cli", "benchmarks"]

_benchmarks = []


def bench(name, fn, *args, setup=None, per="iteration", gc=False, allocation_free=False, **kwargs):
    """Register ``fn(*args, **kwargs)`` as the benchmark ``name``.

    ``setup``: a callable whose result is the arguments instead (a tuple: the positional
    arguments; anything else: the one argument), called outside the timed region once per
    iteration (``per="iteration"``, the default) or once per sample (``per="sample"``).
    ``gc=True`` keeps the garbage collector on during the samples (it is off by default, as in
    ``timeit``). ``allocation_free=True`` declares that an iteration allocates nothing: a run
    that counts allocations fails the benchmark, naming it, when it does. Returns ``fn`` (so it
    also works as a decorator's body).
    """
    _check_name(name)
    loop = _loops.call_loop(fn, args, kwargs, setup=setup, per=per, gc_on=gc)
    loop.alloc_free = bool(allocation_free)
    _benchmarks.append((name, loop))
    return fn


def bench_statement(name, stmt, setup="pass", globals=None, gc=False, allocation_free=False):
    """Register the statement ``stmt`` (source text) as the benchmark ``name``, compiled into
    the measured loop as ``timeit`` does; ``setup`` (source text) runs once per sample,
    untimed, in ``globals``."""
    _check_name(name)
    loop = _loops.statement_loop(stmt, setup, globals, gc_on=gc)
    loop.alloc_free = bool(allocation_free)
    _benchmarks.append((name, loop))


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise ValueError("vernier: a benchmark needs a non-empty name, got {!r}".format(name))
    if any(n == name for n, _ in _benchmarks):
        raise ValueError("vernier: two benchmarks are named {!r}; give each its own name".format(name))


def benchmarks():
    """The registered benchmarks' names, in order."""
    return [n for n, _ in _benchmarks]


def main(argv=None):
    """Run the registered benchmarks and end the process with the run's exit status.

    Started by the runner (``VERNIER_FDS`` set), this process is a worker and serves them.
    Otherwise it starts the runner on this same script: ``argv`` (default ``sys.argv[1:]``)
    are ``vernier run``'s options (``--json FILE``, ``--filter REGEX``, ``--quick``,
    ``--time S``, ``--processes N``, …; ``--help`` lists them).
    """
    if _worker.fds() is not None:
        sys.exit(_worker.serve(_benchmarks))
    if not _benchmarks:
        sys.exit("vernier: no benchmark registered: call vernier.bench(name, fn, *args) before vernier.main()")
    argv = list(sys.argv[1:] if argv is None else argv)
    sys.exit(cli(["run"] + argv + ["--"] + _this_command()))


def _this_command():
    """The command line that starts this script again (without the runner's options)."""
    orig = getattr(sys, "orig_argv", None)
    if orig:
        tail = len(sys.argv) - 1
        head = orig[: len(orig) - tail] if tail else list(orig)
        return [sys.executable] + head[1:]
    return [sys.executable] + sys.argv[:1]


def self_command():
    """The command that starts the ``vernier`` CLI of this package."""
    return [sys.executable, "-m", "vernier"]


def cli(args):
    """Run the ``vernier`` command line ``args`` (without the program name) in this process,
    through the native module; returns its exit status."""
    from . import _native

    args = [os.fspath(a) for a in args]
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.main(["vernier"] + args, self_command())
