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

import builtins
import os
import sys

from . import _loops, _worker

__version__ = _worker.VERSION
__all__ = ["bench", "bench_args", "bench_async", "bench_custom", "bench_statement", "main", "cli", "benchmarks", "Bytes", "Items"]

_benchmarks = []


class Bytes(int):
    """The bytes one iteration processes (``throughput=vernier.Bytes(4096)``): a rate in the
    table (GiB/s), the result file and the exports."""


class Items(int):
    """The items one iteration processes (``throughput=vernier.Items(64)``): items per second."""


def _throughput(t):
    """A declared throughput as the native worker takes it: ``("bytes", n)``, ``("items", n)``
    or None."""
    if t is None:
        return None
    if isinstance(t, (Bytes, Items)) and int(t) >= 0:
        return ("bytes" if isinstance(t, Bytes) else "items", int(t))
    raise ValueError(
        "vernier: throughput is vernier.Bytes(n) or vernier.Items(n) with n >= 0, got {!r}".format(t))


# The complexity classes by the names the result file gives them, and the protocol's notation.
_CLASSES = {"O(1)": "1", "O(log N)": "lgN", "O(N)": "N", "O(N log N)": "NlgN", "O(N^2)": "N^2",
            "O(N^3)": "N^3"}


def _size(name):
    """The N a benchmark named ``FAMILY/N`` ends in (a whole number of at least 1), or None."""
    family, _, last = name.rpartition("/")
    if family and last.isdigit() and int(last) >= 1:
        return int(last)
    return None


def _note(text):
    """Say ``text`` on standard error from the process that measures: a worker (the runner
    shows its notes once); the script that starts the runner leaves it to its workers."""
    if _worker.fds() is not None:
        print("vernier: " + text, file=sys.stderr)


def _complexity(c, name):
    """A complexity declaration as the native worker takes it, ``(class, f, function)``, or
    None: ``c`` is a class (``"O(N log N)"``), a function of N, or ``(name, function)``. A
    function is called here with the N the benchmark's name ends in."""
    if c is None:
        return None
    if isinstance(c, str):
        token = _CLASSES.get(c, c if c in _CLASSES.values() else None)
        if token is None:
            raise ValueError(
                "vernier: complexity is one of {}, or a function of N, got {!r}".format(
                    ", ".join(repr(k) for k in _CLASSES), c))
        return (token, None, None)
    if isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str) and callable(c[1]):
        label, fn = c
    elif callable(c):
        label, fn = getattr(c, "__name__", None), c
        if label == "<lambda>":
            label = None
    else:
        raise ValueError(
            "vernier: complexity is a class such as 'O(N log N)', a function of N, or "
            "(name, function), got {!r}".format(c))
    n = _size(name)
    if n is None:
        _note("{}: the name has no size N (NAME/N); its complexity function is not "
              "used".format(name))
        return None
    r = fn(n)
    try:
        v = float(r)
    except (TypeError, ValueError):
        raise ValueError("vernier: {}: the complexity function returned {!r} at N = {}, not a "
                         "number".format(name, r, n)) from None
    if not (v >= 0.0 and v != float("inf")):
        _note("{}: the complexity function gives {} at N = {}; it is left out of the "
              "fit".format(name, v, n))
        return None
    return (None, v, label)


def range(lo, hi, mult=8):  # noqa: A001 - the name Google Benchmark, Rust and C++ use
    """Google Benchmark's ``Range(lo, hi)`` with ``RangeMultiplier(mult)``: ``lo``, the powers
    of ``mult`` strictly between ``lo`` and ``hi``, and ``hi``."""
    mult = max(int(mult), 2)
    out, i = [lo], 1
    while i < hi:
        if i > lo:
            out.append(i)
        i *= mult
    if hi != lo:
        out.append(hi)
    return out


def dense_range(lo, hi, step=1):
    """Google Benchmark's ``DenseRange(lo, hi, step)``: ``lo``, ``lo + step``, … up to ``hi``."""
    return list(builtins.range(lo, hi + 1, max(int(step), 1)))


def bench_args(name, fn, args, *, setup=None, throughput=None, complexity=None, gc=False):
    """Register ``fn(arg)`` once per argument, each benchmark named ``NAME/ARG`` as Google
    Benchmark names them (``sort/1024``). ``setup(arg)``, when given, is called once per
    argument before its first sample, outside the timed region, and ``fn`` then gets its result
    instead of the argument. ``throughput``: a ``vernier.Bytes``/``vernier.Items`` for every
    argument, or a callable ``arg -> Bytes/Items``. Numeric arguments give the complexity fit
    under the table (docs/parameters.md): the best usual class, or with ``complexity`` the class
    given (``"O(N log N)"``) or your own function of N (``lambda n: n ** 1.5``, or
    ``("N^1.5", fn)`` to name it)."""
    for arg in args:
        label = "{}/{}".format(name, arg)
        work = throughput(arg) if callable(throughput) else throughput
        if setup is None:
            bench(label, fn, arg, gc=gc, throughput=work, complexity=complexity)
        else:
            state = _Lazy(setup, arg)
            bench(label, fn, setup=state, per="sample", gc=gc, throughput=work,
                  complexity=complexity)


class _Lazy:
    """``setup(arg)``, built on the first call and kept: the state of one argument."""

    def __init__(self, setup, arg):
        self.setup, self.arg, self.built = setup, arg, False

    def __call__(self):
        if not self.built:
            self.value, self.built = self.setup(self.arg), True
        return self.value


def bench(name, fn, *args, setup=None, per="iteration", gc=False, allocation_free=False,
          throughput=None, complexity=None, **kwargs):
    """Register ``fn(*args, **kwargs)`` as the benchmark ``name``.

    ``setup``: a callable whose result is the arguments instead (a tuple: the positional
    arguments; anything else: the one argument), called outside the timed region once per
    iteration (``per="iteration"``, the default) or once per sample (``per="sample"``).
    ``gc=True`` keeps the garbage collector on during the samples (it is off by default, as in
    ``timeit``). ``allocation_free=True`` declares that an iteration allocates nothing: a run
    that counts allocations fails the benchmark, naming it, when it does. ``throughput``: the
    work one iteration does, ``vernier.Bytes(n)`` or ``vernier.Items(n)`` (a ``rate`` column).
    ``complexity``: for a benchmark named ``FAMILY/N``, how its family is fitted (as in
    :func:`bench_args`). Returns ``fn`` (so it also works as a decorator's body).
    """
    _check_name(name)
    work = _throughput(throughput)
    fit = _complexity(complexity, name)
    loop = _loops.call_loop(fn, args, kwargs, setup=setup, per=per, gc_on=gc)
    loop.alloc_free = bool(allocation_free)
    loop.throughput = work
    loop.complexity = fit
    _benchmarks.append((name, loop))
    return fn


def bench_async(name, coroutine_function, *args, loop_factory=None, gc=False,
                allocation_free=False, throughput=None):
    """Register ``await coroutine_function(*args)`` as the benchmark ``name``: all the awaits of
    a sample run inside one run of an event loop of the sample's own, made before the clock
    starts and closed after it stops (``loop_factory()`` when given, e.g.
    ``uvloop.new_event_loop``; ``asyncio.new_event_loop`` otherwise). ``coroutine_function`` is
    the ``async def`` function itself, not its call. The other options are :func:`bench`'s.
    Returns ``coroutine_function``."""
    _check_name(name)
    work = _throughput(throughput)
    loop = _loops.async_loop(coroutine_function, args, loop_factory=loop_factory, gc_on=gc,
                             name=name)
    loop.alloc_free = bool(allocation_free)
    loop.throughput = work
    _benchmarks.append((name, loop))
    return coroutine_function


def bench_custom(name, fn, *args, gc=False, allocation_free=False, throughput=None):
    """Register a body that times itself: ``fn(iters, *args)`` runs ``iters`` iterations and
    returns the seconds they took (``time.perf_counter() - t0``), as criterion's
    ``iter_custom`` or pyperf's ``bench_time_func``: for a body whose set-up or clean-up lies
    inside each iteration and must stay out of the figure. The runner still chooses ``iters``
    and reads the samples; the worker sends the seconds ``fn`` returned, in nanoseconds. Not
    in the pytest fixture (measured in this process, the engine's clock is read around the
    whole call). Returns ``fn``."""
    _check_name(name)
    work = _throughput(throughput)
    loop = _loops.custom_loop(fn, args, gc_on=gc, name=name)
    loop.alloc_free = bool(allocation_free)
    loop.throughput = work
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
