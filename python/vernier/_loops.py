"""The measured loops: the only part of Vernier written in Python.

A loop runs ``iters`` iterations of a body and nothing else; who reads the clock around it
is the caller's choice (the worker reads ``time.perf_counter_ns`` inside the loop function,
the engine reads its own clock around the call). The body is compiled into the loop's source
as ``timeit`` does: a statement verbatim, a callable called with its arguments, so an
iteration costs the body and one step of a ``for`` over ``itertools.repeat``.
"""

import asyncio
import gc
import inspect
import itertools
import time

__all__ = ["Loop", "statement_loop", "call_loop", "custom_loop", "async_loop", "empty_loop"]

_TEMPLATE = """
def _vernier_loop(_it, _timer{params}):
{setup}
    _t0 = _timer()
    for _i in _it:
{body}
    _t1 = _timer()
{teardown}
    return _t1 - _t0
"""


def _indent(code, spaces):
    pad = " " * spaces
    return "\n".join(pad + line for line in code.splitlines()) or pad + "pass"


def _compile(body, setup="pass", params="", namespace=None, teardown="pass"):
    src = _TEMPLATE.format(params=params, setup=_indent(setup, 4), body=_indent(body, 8),
                           teardown=_indent(teardown, 4))
    ns = dict(namespace or {})
    code = compile(src, "<vernier loop>", "exec")
    exec(code, ns)
    return ns["_vernier_loop"]


def _check_statement(what, code):
    try:
        compile(code, "<vernier " + what + ">", "exec")
    except SyntaxError as e:
        raise ValueError("{} is not valid Python: {} ({!r})".format(what, e.msg, code)) from None


class Loop:
    """One benchmark's measured loop.

    ``time(iters, timer)`` runs ``iters`` iterations and returns what ``timer`` advanced by
    around the loop alone (nanoseconds of ``time.perf_counter_ns`` in a worker; the engine's
    own clock in this process), the inputs made before the first read. Garbage collection is off during both unless ``gc=True``,
    as ``timeit`` does; ``collections`` counts the collections that ran during the last call.
    """

    def __init__(self, fn, prepare=None, gc_on=False):
        self._fn = fn
        self._prepare = prepare
        self.gc_on = gc_on
        self.collections = 0
        # Declared allocation-free by its author (``list`` sends ``alloc_free=1``): a run that
        # counts allocations fails it when it allocates.
        self.alloc_free = False

    def _args(self, iters):
        return self._prepare(iters) if self._prepare is not None else itertools.repeat(None, iters)

    def time(self, iters, timer=time.perf_counter_ns):
        it = self._args(iters)
        was = gc.isenabled()
        if not self.gc_on:
            gc.disable()
        # Counted with the collector in the state of the samples: reading the statistics
        # allocates, and could otherwise set off a collection of its own.
        before = _collections()
        try:
            return self._fn(it, timer)
        finally:
            self.collections = _collections() - before
            if was:
                gc.enable()


def _collections():
    return sum(s.get("collections", 0) for s in gc.get_stats())


def statement_loop(stmt, setup="pass", globals=None, gc_on=False, teardown="pass"):
    """``stmt`` (source text) as the body, ``setup`` (source text) run once per sample before
    the clock starts, in ``globals`` (a fresh namespace when None), as ``timeit.Timer``;
    ``teardown`` (source text) once per sample after the clock stops."""
    _check_statement("the statement", stmt)
    _check_statement("the setup", setup)
    _check_statement("the teardown", teardown)
    return Loop(_compile(stmt, setup, namespace=globals, teardown=teardown), gc_on=gc_on)


class CustomLoop(Loop):
    """A body that times itself: ``fn(iters, *args)`` runs ``iters`` iterations and returns the
    seconds they took (a ``time.perf_counter`` difference), as criterion's ``iter_custom`` or
    pyperf's ``bench_time_func``. In a worker (``timer`` is ``time.perf_counter_ns``) the
    sample is those seconds, in nanoseconds; with any other timer (the engine's clock in this
    process, the counters read around a counted sample) the sample is what ``timer`` advanced
    by around the whole call, what ``fn`` does outside its own clock included."""

    def __init__(self, fn, args=(), gc_on=False, name=None):
        super().__init__(None, gc_on=gc_on)
        self._custom, self._custom_args, self._name = fn, tuple(args), name

    def time(self, iters, timer=time.perf_counter_ns):
        was = gc.isenabled()
        if not self.gc_on:
            gc.disable()
        before = _collections()
        try:
            t0 = timer()
            s = self._custom(iters, *self._custom_args)
            t1 = timer()
        finally:
            self.collections = _collections() - before
            if was:
                gc.enable()
        if timer is not time.perf_counter_ns:
            return t1 - t0
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not s >= 0 or s == float("inf"):
            raise ValueError(
                "vernier: the timed function of {} returned {!r}: it must return the seconds its "
                "`loops` iterations took, a number >= 0 (e.g. time.perf_counter() - t0)".format(
                    repr(self._name) if self._name else "a custom benchmark", s))
        return int(round(s * 1e9))


def custom_loop(fn, args=(), gc_on=False, name=None):
    """``fn(iters, *args)`` times its own ``iters`` iterations and returns their seconds."""
    if not callable(fn):
        raise TypeError("vernier: the timed function must be callable, got {!r}".format(fn))
    return CustomLoop(fn, args, gc_on=gc_on, name=name)


async def _vernier_async_loop(it, timer, fn, args):
    """The measured loop of a coroutine function: every await of a sample in one run of the
    event loop, the clock read inside it, around the awaits alone."""
    t0 = timer()
    for _i in it:
        await fn(*args)
    t1 = timer()
    return t1 - t0


class AsyncLoop(Loop):
    """``await fn(*args)`` per iteration, all the iterations of a sample inside one
    ``run_until_complete`` of an event loop of the sample's own (``loop_factory()``, e.g.
    ``uvloop.new_event_loop``; ``asyncio.new_event_loop`` by default), made before the clock
    starts and closed after it stops, as pyperf's ``bench_async_func`` does."""

    def __init__(self, fn, args=(), loop_factory=None, gc_on=False, name=None):
        super().__init__(None, gc_on=gc_on)
        self._coro_fn, self._coro_args = fn, tuple(args)
        self._factory, self._name = loop_factory, name
        self._checked = False
        # The executor, as the ``list`` line announces it (``executor=``, ``on_calling_core=``):
        # the event loop's maker, which runs every await on the calling thread.
        self.executor = (executor_name(loop_factory), True)

    def empty_future(self):
        """The same loop around an empty coroutine (``async def f(): pass``) on the same event
        loop: what an await costs on this executor, the async benchmark's bar for
        ``optimized-away`` (``run empty_future:N``, docs/protocol.md)."""
        return AsyncLoop(_empty_coroutine, (), loop_factory=self._factory, gc_on=self.gc_on,
                         name="the empty future")

    def _what(self):
        return repr(self._name) if self._name else "an async benchmark"

    def _check_awaitable(self):
        """The function gives something to await (checked once, on a call left unawaited)."""
        c = self._coro_fn(*self._coro_args)
        if inspect.iscoroutine(c):
            c.close()
        elif not inspect.isawaitable(c):
            raise TypeError(
                "vernier: the function of {} returned {!r}, not a coroutine: give bench_async an "
                "`async def` function (the function itself, not its call)".format(self._what(), c))
        self._checked = True

    def _new_loop(self):
        ev = asyncio.new_event_loop() if self._factory is None else self._factory()
        if not isinstance(ev, asyncio.AbstractEventLoop):
            raise TypeError("vernier: loop_factory of {} returned {!r}, not an event loop: give a "
                            "function that makes one (uvloop.new_event_loop, "
                            "asyncio.new_event_loop)".format(self._what(), ev))
        return ev

    def time(self, iters, timer=time.perf_counter_ns):
        if not self._checked:
            self._check_awaitable()
        ev = self._new_loop()
        asyncio.set_event_loop(ev)
        was = gc.isenabled()
        if not self.gc_on:
            gc.disable()
        before = _collections()
        try:
            return ev.run_until_complete(
                _vernier_async_loop(itertools.repeat(None, iters), timer, self._coro_fn,
                                    self._coro_args))
        except RuntimeError as e:
            said = str(e)
            if ev.is_closed() or "stopped before" in said or "close a running event loop" in said:
                raise RuntimeError(
                    "vernier: the body of {} stopped or closed the event loop it runs on ({}): a "
                    "body must leave its loop alone (each sample gets a loop of its own, closed "
                    "after it); await the work instead of stopping the loop".format(
                        self._what(), e)) from None
            raise
        finally:
            self.collections = _collections() - before
            if was:
                gc.enable()
            asyncio.set_event_loop(None)
            _close(ev)


async def _empty_coroutine():
    pass


def executor_name(loop_factory):
    """The executor's name: ``asyncio`` for the default event loop, else the maker's module and
    name (``uvloop.new_event_loop``)."""
    if loop_factory is None:
        return "asyncio"
    module = getattr(loop_factory, "__module__", None)
    name = getattr(loop_factory, "__qualname__", None) or getattr(loop_factory, "__name__", None)
    if name is None:
        return repr(loop_factory)
    return "{}.{}".format(module, name) if module else name


def _close(ev):
    """Close ``ev`` as ``asyncio.run`` does: the tasks a sample left behind cancelled, the
    asynchronous generators finalised."""
    if ev.is_closed():
        return
    try:
        tasks = [t for t in asyncio.all_tasks(ev) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            ev.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        ev.run_until_complete(ev.shutdown_asyncgens())
    finally:
        ev.close()


def async_loop(fn, args=(), loop_factory=None, gc_on=False, name=None):
    """``await fn(*args)`` as the body, each sample in an event loop of its own."""
    if inspect.iscoroutine(fn):
        fn.close()
        raise TypeError("vernier: {} was given a coroutine, not a coroutine function: pass the "
                        "function and its arguments (bench_async(name, fetch, url), not "
                        "fetch(url))".format(repr(name) if name else "bench_async"))
    if not callable(fn):
        raise TypeError("vernier: the benchmark must be an async function, got {!r}".format(fn))
    if loop_factory is not None and not callable(loop_factory):
        raise TypeError("vernier: loop_factory must be callable (uvloop.new_event_loop), got "
                        "{!r}".format(loop_factory))
    return AsyncLoop(fn, args, loop_factory=loop_factory, gc_on=gc_on, name=name)


def call_loop(fn, args=(), kwargs=None, setup=None, per="iteration", gc_on=False):
    """``fn(*args, **kwargs)`` as the body.

    With ``setup``, the arguments come from ``setup()`` instead, untimed: a tuple is the
    positional arguments, anything else the one argument. ``per="iteration"`` (the default)
    calls it once per iteration, all of a sample's calls made before its clock starts;
    ``per="sample"`` once per sample, every iteration of the sample taking the same input.
    """
    if not callable(fn):
        raise TypeError("vernier: the benchmark must be callable, got {!r}".format(fn))
    if setup is None:
        if kwargs:
            body, params = "_fn(*_args, **_kwargs)", ", _fn=_fn, _args=_args, _kwargs=_kwargs"
            ns = {"_fn": fn, "_args": tuple(args), "_kwargs": dict(kwargs)}
        else:
            names = ["_a{}".format(i) for i in range(len(args))]
            body = "_fn({})".format(", ".join(names))
            params = ", _fn=_fn" + "".join(", {0}={0}".format(n) for n in names)
            ns = dict(zip(names, args))
            ns["_fn"] = fn
        return Loop(_compile(body, params=params, namespace=ns), gc_on=gc_on)
    if per not in ("iteration", "sample"):
        raise ValueError("vernier: per={!r}: expected 'iteration' or 'sample'".format(per))
    if not callable(setup):
        raise TypeError("vernier: setup must be callable, got {!r}".format(setup))
    kwargs = dict(kwargs or {})

    def one():
        x = setup()
        return x if isinstance(x, tuple) else (x,)

    if per == "iteration":

        def prepare(iters):
            return [one() for _ in range(iters)]

    else:

        def prepare(iters):
            return itertools.repeat(one(), iters)

    body = "_fn(*_i, **_kwargs)" if kwargs else "_fn(*_i)"
    loop = _compile(body, params=", _fn=_fn, _kwargs=_kwargs", namespace={"_fn": fn, "_kwargs": kwargs})
    return Loop(loop, prepare=prepare, gc_on=gc_on)


def empty_loop(gc_on=False):
    """The loop's own cost: the same loop around an empty statement."""
    return Loop(_compile("pass"), gc_on=gc_on)
