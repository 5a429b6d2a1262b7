"""The worker side of Vernier's line protocol (``docs/protocol.md``) for a Python script.

A script launched by the runner (``vernier run -- python bench.py``, or ``python bench.py``,
which starts the runner on itself) finds ``VERNIER_FDS=R,W`` in its environment and serves
its benchmarks: commands on descriptor R, one reply per command on W. The runner takes every
decision; this module only runs the loops it asks for and gives the raw nanoseconds back.

The protocol itself (the serve loop, the parsing of every command and its errors, the reply
formats, the core-speed probe) is the Rust crate's, in the native module
(``_native.serve``, ``python/src/worker.rs``): it calls :meth:`Worker.run` for each batch.
The clock is ``time.perf_counter_ns`` (announced as ``timer=monotonic``).
"""

import os
import sys
import time

from . import _loops, _memory, _native

# The package's version is the Rust crate's
# (crates/vernier/tests/suite/deterministic/shared_constants.rs checks it).
VERSION = "0.1.0"
HASHSEED_ENV = "PYTHONHASHSEED"


def interpreter():
    """The interpreter: implementation, version and build flags, as ``hello``'s ``interp=``
    sends it (``cpython 3.12.1 release pgo lto``; ``debug`` for a ``--with-pydebug`` build,
    ``free-threading`` without the GIL, ``jit`` with the experimental JIT on)."""
    impl = sys.implementation.name
    v = sys.implementation.version
    words = [impl, "{}.{}.{}".format(v.major, v.minor, v.micro)]
    if v.releaselevel != "final":
        words[-1] += "{}{}".format(v.releaselevel[0] if v.releaselevel != "candidate" else "rc", v.serial)
    words.append("debug" if debug_build() else "release")
    import sysconfig

    config = sysconfig.get_config_var("CONFIG_ARGS") or ""
    for flag, word in (("--enable-optimizations", "pgo"), ("--with-lto", "lto"),
                       ("--with-assertions", "assertions")):
        if flag in config:
            words.append(word)
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        words.append("free-threading")
    jit = getattr(sys, "_jit", None)
    if jit is not None and getattr(jit, "is_enabled", lambda: False)():
        words.append("jit")
    return " ".join(words)


def debug_build():
    """A debug build of the interpreter (``--with-pydebug``): its figures are not a release's."""
    return hasattr(sys, "gettotalrefcount")


def _clock_overhead_ns():
    """What one read of the clock costs, from a run of back-to-back reads (the fastest of 5)."""
    clock = time.perf_counter_ns
    best = None
    for _ in range(5):
        t0 = clock()
        for _ in range(1000):
            clock()
        t1 = clock()
        per = (t1 - t0) / 1001
        best = per if best is None else min(best, per)
    return max(best, 1e-3)


def probe_line():
    """Facts about this process for the runner's tests: CPU, environment size, an address on
    the (interpreter's) stack, whether address-space randomisation is on."""
    cpu = 0
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        cpu = int(stat[stat.rindex(b")") + 2 :].split()[36])
    except (OSError, ValueError, IndexError):
        pass
    aslr = 1
    try:
        with open("/proc/self/personality") as f:
            aslr = 0 if int(f.read().strip(), 16) & 0x0040000 else 1
    except (OSError, ValueError):
        pass
    env_bytes = sum(len(k) + len(v) + 2 for k, v in os.environb.items())
    return "probe pid={} cpu={} env_bytes={} stack={:#x} aslr={}".format(
        os.getpid(), cpu, env_bytes, id(sys._getframe()), aslr
    )


class Worker:
    """Serves a list of ``(name, Loop)`` to the runner."""

    def __init__(self, benches, empty=None):
        self.benches = list(benches)
        self.empty = empty or _loops.empty_loop()
        self.overhead_ns = _clock_overhead_ns()
        res = time.get_clock_info("perf_counter").resolution
        self.resolution_ns = max(res * 1e9, 1e-3)
        self.counter = None

    def hello(self):
        """The facts of the ``hello`` reply: the clock's resolution and overhead (ns), a debug
        build, the interpreter, the hash seed."""
        return (self.resolution_ns, self.overhead_ns, debug_build(), interpreter(),
                os.environ.get(HASHSEED_ENV, "random"))

    def run(self, which, iters, samples, memory, empty_future=False):
        """One batch of benchmark ``which`` (None: the empty loop; with ``empty_future``, the
        empty future on async benchmark ``which``'s executor), the runner's request already
        checked: ``(ns, gc collections, allocation counts, why not counted, notes)``. The
        benchmark's exception is raised: the reply says it, and the worker serves on."""
        loop = self.empty if which is None else self.benches[which][1]
        if empty_future:
            loop = loop.empty_future()
        if memory:
            return self._counted(loop, iters, samples)
        ns, gcs = [], []
        for _ in range(samples):
            ns.append(loop.time(iters))
            gcs.append(loop.collections)
        return ns, gcs, None, None, []

    def _counted(self, loop, iters, samples):
        """``memory=1``: the allocation counts of each sample (``_memory``), or why there are
        none and tracemalloc's figures."""
        if self.counter is None:
            self.counter = _memory.Counter(self.empty)
        why = self.counter.unavailable()
        if why is None:
            ns, counts = self.counter.batch(loop, iters, samples)
            return ns, None, counts, None, []
        ns, net, peak = _memory.traced(loop, self.empty, iters, samples)
        notes = [("tracemalloc.net_bytes", ",".join(map(str, net))),
                 ("tracemalloc.peak_bytes", ",".join(map(str, peak)))]
        return ns, None, None, why, notes

    def serve(self, fds):
        _native.serve(
            fds,
            hello=self.hello(),
            names=[n for n, _ in self.benches],
            alloc_free=[bool(getattr(l, "alloc_free", False)) for _, l in self.benches],
            throughput=[getattr(l, "throughput", None) for _, l in self.benches],
            complexity=[getattr(l, "complexity", None) for _, l in self.benches],
            executors=[getattr(l, "executor", None) for _, l in self.benches],
            run=self.run,
            probe=probe_line,
        )


def fds():
    """``VERNIER_FDS`` (``R,W``), or None when this process was not started as a worker."""
    return os.environ.get("VERNIER_FDS")


def count_every_object():
    """In the runner's allocation-counting process (its interposer preloaded), make sure
    ``PYTHONMALLOC=malloc`` is in force, so the interposer sees every object (``_memory``):
    the runner sets it in that process's environment; a worker started without it (an older
    runner, a user's own ``PYTHONMALLOC``) starts itself again with it.

    The hash seed needs no restart: ``vernier run`` draws each measuring process's
    ``PYTHONHASHSEED`` and keeps it in the result, per process; a worker started without one
    (the runner's first, which only answers the handshake, or a side of ``vernier compare``)
    has the interpreter's own random seed, different in each process, and sends
    ``hashseed=random``."""
    if not hasattr(sys, "orig_argv") or not _memory.needs_malloc_env():
        return
    os.environ["PYTHONMALLOC"] = "malloc"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable] + sys.orig_argv[1:])


def serve(benches):
    """Serve ``benches`` (``(name, Loop)`` pairs) on ``VERNIER_FDS``; returns the exit status."""
    count_every_object()
    try:
        Worker(benches).serve(fds())
    except RuntimeError as e:
        raise SystemExit(str(e))
    return 0

