"""The pytest plugin (registered by the ``pytest11`` entry point): a ``benchmark`` fixture of
pytest-benchmark's shape, measured in this process by Vernier's engine.

``benchmark(fn, *args, **kwargs)`` measures ``fn(*args, **kwargs)`` and returns its result
(``await fn(*args)`` for an ``async def`` function, each sample's awaits in one run of an
event loop of its own, as ``vernier.bench_async``); an ``async def`` test that takes the
``benchmark`` fixture is measured whole, through the same path, its fixtures as arguments;
``benchmark.pedantic(fn, args=(), kwargs=None, setup=None, rounds=…, iterations=…)`` takes
``setup`` (called untimed before each iteration; its result, when not None, is ``(args,
kwargs)``). The engine decides iterations, warm-up and when to stop, so ``rounds``,
``iterations`` and ``warmup_rounds`` are accepted and not used. The session ends with the
table ``vernier run`` prints; ``--vernier-json FILE`` writes the result file.

Under pytest-xdist the benchmarks are not measured: several workers measuring at once on
shared cores would disturb each other's figures. Each runs its function once, as a test, and
the session says so (``-n 0`` measures them).
"""

import asyncio
import inspect
import json

import pytest

from . import _loops

# The session's results (one result file's JSON text per measured benchmark).
_RESULTS = pytest.StashKey()


def pytest_addoption(parser):
    g = parser.getgroup("vernier", "Vernier benchmarks (the benchmark fixture)")
    g.addoption("--vernier-json", metavar="FILE", help="write the benchmarks' result file (docs/result-schema.md) to FILE")
    g.addoption("--vernier-quick", action="store_true", help="a short run: about 0.2 s per benchmark")
    g.addoption("--vernier-time", metavar="SECONDS", type=float,
                help="measurement budget per benchmark (default 1 s)")
    g.addoption("--vernier-disable", action="store_true",
                help="run each benchmark's function once, as a test, without measuring")
    g.addoption("--vernier-save", action="store_true",
                help="keep the session's results in the history store (as `vernier run --save`)")
    g.addoption("--vernier-compare", metavar="COMMIT|BRANCH",
                help="compare the session's results with the run stored at COMMIT or BRANCH "
                "(as `vernier compare --baseline`: unpaired), before saving")
    g.addoption("--vernier-db", metavar="URL",
                help="the history store: sqlite:PATH, a file path or postgres://… (as --db; default "
                "$VERNIER_DB, else the user's store)")
    g.addoption("--vernier-commit", metavar="COMMIT", help="the commit to save under (default: git's)")
    g.addoption("--vernier-branch", metavar="BRANCH", help="the branch to save under (default: git's)")


def pytest_configure(config):
    pm = config.pluginmanager
    if pm.hasplugin("benchmark") and pm.hasplugin("vernier"):
        raise pytest.UsageError(
            "both pytest-benchmark and vernier provide the `benchmark` fixture: choose one with "
            "`-p no:benchmark` (Vernier measures) or `-p no:vernier` (pytest-benchmark measures)"
        )
    config.stash[_RESULTS] = []


def _under_xdist(config):
    return hasattr(config, "workerinput") or (getattr(config.option, "numprocesses", None) or 0) > 0


def _measuring(config):
    return not (config.getoption("vernier_disable") or _under_xdist(config))


class BenchmarkFixture:
    """What a test receives as ``benchmark``."""

    def __init__(self, name, config):
        self.name = name
        self._config = config
        self.extra_info = {}
        self.group = None
        self.result = None  # the benchmark's entry of the result file, once measured
        self._used = False
        # An async def test measured whole (`pytest_pyfunc_call`): the fixture is not called.
        self._whole = False

    def __call__(self, fn, *args, **kwargs):
        if self._whole:
            raise pytest.UsageError(
                "{} is an async def test: it is measured whole, so it does not call the benchmark "
                "fixture (make it a plain def test that calls benchmark(coroutine_function, "
                "*args) to measure one coroutine)".format(self.name)
            )
        if inspect.iscoroutinefunction(fn) and not kwargs:
            return self.asyncio(fn, *args)
        return self._measure(fn, _loops.call_loop(fn, args, kwargs), lambda: fn(*args, **kwargs))

    def asyncio(self, coroutine_function, *args, loop_factory=None):
        """Measure ``await coroutine_function(*args)`` (as ``vernier.bench_async``: each
        sample's awaits in one run of an event loop of its own, ``loop_factory()`` when
        given); returns the coroutine's result."""
        loop = _loops.async_loop(coroutine_function, args, loop_factory=loop_factory, name=self.name)
        return self._measure(coroutine_function, loop,
                             lambda: _await_once(coroutine_function, args, loop_factory))

    def pedantic(self, target, args=(), kwargs=None, setup=None, rounds=1, warmup_rounds=0,
                 iterations=1):
        kwargs = dict(kwargs or {})
        if setup is None:
            return self(target, *args, **kwargs)

        def made():
            r = setup()
            return (tuple(args), kwargs) if r is None else (tuple(r[0]), dict(r[1]))

        def call_made():
            a, k = made()
            return target(*a, **k)

        loop = _loops.Loop(
            _loops._compile("_fn(*_i[0], **_i[1])", params=", _fn=_fn", namespace={"_fn": target}),
            prepare=lambda iters: [made() for _ in range(iters)],
        )
        return self._measure(target, loop, call_made)

    def _measure(self, fn, loop, once):
        if self._used:
            raise pytest.UsageError(
                "benchmark fixture used twice in {}: one benchmark per test (split the test, or "
                "parametrize it)".format(self.name)
            )
        self._used = True
        result = once()  # the function's result (and a first, untimed call)
        if not _measuring(self._config):
            return result
        from . import _native

        c = self._config
        text = _native.measure(
            self.name,
            lambda iters, clock: loop.time(iters, clock),
            time=c.getoption("vernier_time"),
            quick=c.getoption("vernier_quick"),
            empty_iter_ns=_empty_iter_ns(c, isinstance(loop, _loops.AsyncLoop)),
            uncounted=UNCOUNTED,
        )
        self.result = json.loads(text)["benchmarks"][0]
        c.stash[_RESULTS].append(text)
        return result


def _await_once(fn, args, loop_factory):
    """``await fn(*args)`` once, untimed, in an event loop of its own: the result the test gets."""
    ev = asyncio.new_event_loop() if loop_factory is None else loop_factory()
    try:
        return ev.run_until_complete(fn(*args))
    finally:
        _loops._close(ev)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """An ``async def`` test that takes the ``benchmark`` fixture: measured whole, as
    ``vernier.bench_async`` measures a coroutine function, its fixtures as its arguments
    (pytest itself runs no ``async def`` test)."""
    fn = pyfuncitem.obj
    bench = pyfuncitem.funcargs.get("benchmark")
    if not (inspect.iscoroutinefunction(fn) and isinstance(bench, BenchmarkFixture)):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {n: pyfuncitem.funcargs[n] for n in names}
    bench._whole = True

    async def test():
        return await fn(**kwargs)

    loop = _loops.async_loop(test, (), name=bench.name)
    bench._measure(fn, loop, lambda: _await_once(test, (), None))
    return True


# Why the fixture's benchmarks have no allocation counts, said in the session's table (a
# `memory-unavailable` note) when the engine found no counter in this process.
UNCOUNTED = (
    "the benchmark fixture measures in the pytest process, which has no allocation counter: "
    "the runner preloads its interposer only into a counting process of its own, and Python's "
    "small-object allocator hides most objects from malloc there. Register the function with "
    "vernier.bench in a script (python bench.py, or vernier run -- python bench.py) to count "
    "its allocations per iteration"
)

# The Python loop's own cost per iteration, and the async loop's around an empty coroutine,
# each measured once per session.
_EMPTY = pytest.StashKey()
_EMPTY_ASYNC = pytest.StashKey()
# Budget of that measurement, in seconds (as the runner's measurement of a worker's empty loop).
EMPTY_LOOP_SECONDS = 0.04


async def _nothing():
    pass


def _empty_iter_ns(config, is_async=False):
    """The loop around an empty statement (around ``await`` of an empty coroutine for an async
    benchmark), per iteration (None when it could not be measured): a benchmark whose body is
    not measurably more is flagged `optimized-away`."""
    key = _EMPTY_ASYNC if is_async else _EMPTY
    if key not in config.stash:
        from . import _native

        empty = _loops.async_loop(_nothing) if is_async else _loops.empty_loop()
        b = json.loads(_native.measure("empty loop", lambda iters, clock: empty.time(iters, clock),
                                       time=EMPTY_LOOP_SECONDS))["benchmarks"][0]
        config.stash[key] = b["per_iter"]["median_ns"] if b["status"] == "ok" else None
    return config.stash[key]


@pytest.fixture
def benchmark(request):
    """Measure ``fn(*args, **kwargs)`` with Vernier's engine; returns its result."""
    return BenchmarkFixture(request.node.nodeid.split("::", 1)[-1], request.config)


def pytest_terminal_summary(terminalreporter, config):
    results = config.stash.get(_RESULTS, [])
    if _under_xdist(config) and not hasattr(config, "workerinput"):
        terminalreporter.write_sep("-", "vernier")
        terminalreporter.write_line(
            "benchmarks not measured under pytest-xdist (workers measuring at once on shared cores "
            "would disturb each other's figures): each ran its function once, as a test; run "
            "`pytest -n 0` to measure them"
        )
        return
    if not results:
        return
    from . import _native

    terminalreporter.write_sep("-", "vernier: {} benchmark(s)".format(len(results)))
    terminalreporter.write(_native.render(results))
    merged = _native.merge_results(results)
    _say_uncounted(terminalreporter, merged)
    path = config.getoption("vernier_json")
    if path:
        _native.write_result(path, merged)
        terminalreporter.write_line("vernier: result written to {}".format(path))
    _history(terminalreporter, config, merged, path)


def _say_uncounted(terminalreporter, merged):
    """The reason the table has no allocation counts (its benchmarks' `memory-unavailable`
    diagnostic), said once under it."""
    reasons = []
    for b in json.loads(merged)["benchmarks"]:
        for d in b.get("diagnostics", []):
            r = (d.get("data") or {}).get("reason")
            if d["code"] == "memory-unavailable" and r and r not in reasons:
                reasons.append(r)
    for r in reasons:
        terminalreporter.write_line("allocations per iteration: not counted: {}.".format(r))


def _history(terminalreporter, config, merged, path):
    """``--vernier-compare`` (against the stored run, through ``vernier compare --baseline``) and
    ``--vernier-save``; a failure of either is printed, the session's outcome stays the tests'."""
    from . import _native, cli

    db = config.getoption("vernier_db")
    reference = config.getoption("vernier_compare")
    if reference:
        import os
        import tempfile

        terminalreporter.write_sep("-", "vernier: against {}".format(reference))
        with tempfile.TemporaryDirectory() as d:
            new = path or os.path.join(d, "pytest.json")
            if not path:
                _native.write_result(new, merged)
            # Printed by the CLI itself, on this process's standard output (flushed first).
            code = cli(["compare", "--baseline", reference, new] + (["--db", db] if db else []))
        if code == 1:
            terminalreporter.write_line("vernier: the comparison with {} failed (above)".format(reference))
    if config.getoption("vernier_save"):
        try:
            _native.save([merged], db=db, commit=config.getoption("vernier_commit"),
                         branch=config.getoption("vernier_branch"))
        except RuntimeError as e:
            terminalreporter.write_line("vernier: not saved: {}".format(e))
