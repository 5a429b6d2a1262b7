"""The worker side of Vernier's line protocol (``docs/protocol.md``), in pure Python.

A script launched by the runner (``vernier run -- python bench.py``, or ``python bench.py``,
which starts the runner on itself) finds ``VERNIER_FDS=R,W`` in its environment and serves
its benchmarks: commands on descriptor R, one reply per command on W. The runner takes every
decision; this module only runs the loops it asks for and sends the raw nanoseconds back.

The clock is ``time.perf_counter_ns`` (announced as ``timer=monotonic``). The core-speed
probe (``probe=<adds>``) is a chain of one-cycle additions that Python cannot run: it comes
from the native module when it is importable; without it the worker sends no ``probe_ns``
token, as the protocol allows, and the runner analyses without the core's speed.
"""

import os
import sys
import time

from . import _loops, _memory

# The package's version, the protocol's and its probe limit are the Rust crate's
# (crates/vernier/tests/shared_constants.rs checks them).
VERSION = "0.1.0"
PROTOCOL = 1
HASHSEED_ENV = "PYTHONHASHSEED"
MAX_PROBE_ADDS = 1 << 20

_SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./:+,")

try:
    from . import _native
except ImportError:  # the pure-Python package (a source tree without the built module)
    _native = None


def encode_name(name):
    """A benchmark name as the protocol sends it: bytes outside ``A-Za-z0-9-_./:+,`` as %XX."""
    return "".join(chr(b) if b in _SAFE else "%{:02X}".format(b) for b in name.encode("utf-8"))


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


class BadOption(Exception):
    pass


def parse_run(line, toks):
    """``run <index|empty> iters=N samples=S [key=value…]`` → (which, iters, samples, extra)."""
    if not toks:
        raise BadOption("bad option '' in '{}'".format(line))
    which = toks[0]
    if which != "empty":
        if not which.isdigit():
            raise BadOption("bad option '{}' in '{}'".format(which, line))
        which = int(which)
    iters = samples = None
    extra = {}
    for t in toks[1:]:
        if "=" not in t:
            raise BadOption("bad option '{}' in '{}'".format(t, line))
        k, v = t.split("=", 1)
        if k in ("iters", "samples"):
            n = int(v) if v.isdigit() else 0
            if n < 1:
                raise BadOption("bad option '{}' in '{}'".format(t, line))
            if k == "iters":
                iters = n
            else:
                samples = n
        elif k == "probe" and not (v.isdigit() and 1 <= int(v) <= MAX_PROBE_ADDS):
            raise BadOption("bad option '{}' in '{}'".format(t, line))
        elif k == "cache" and v not in ("hot", "cold"):
            raise BadOption("bad option '{}' in '{}'".format(t, line))
        else:
            extra[k] = v
    if iters is None:
        raise BadOption("bad option 'iters' in '{}'".format(line))
    if samples is None:
        raise BadOption("bad option 'samples' in '{}'".format(line))
    return which, iters, samples, extra


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
        return (
            "hello {proto} impl=vernier-python/{ver} timer=monotonic resolution_ns={res:g} "
            "overhead_ns={ovh:.3f} tsc_hz=0 build={build} pid={pid} interp={py} hashseed={seed}"
        ).format(
            proto=PROTOCOL,
            ver=VERSION,
            res=self.resolution_ns,
            ovh=self.overhead_ns,
            build="debug" if debug_build() else "release",
            pid=os.getpid(),
            py=encode_name(interpreter()),
            seed=os.environ.get(HASHSEED_ENV, "random"),
        )

    def run(self, line, toks):
        which, iters, samples, extra = parse_run(line, toks)
        n = len(self.benches)
        if which == "empty":
            loop = self.empty
        elif which < n:
            loop = self.benches[which][1]
        else:
            return "error no benchmark {} (there are {})".format(which, n)
        if extra.get("cache") == "cold":
            return "error bad option 'cache=cold' in '{}' (the Python harness measures hot caches only)".format(line)
        probe = ""
        adds = int(extra.get("probe", 0))
        if adds and _native is not None:
            probe_ns, wide_ns = _native.probe(adds)
            probe = " probe_ns={} wide_ns={}".format(probe_ns, wide_ns)
        ns, gcs, mem = [], [], ""
        try:
            if extra.get("memory") == "1":
                ns, mem = self._counted(loop, iters, samples)
            else:
                for _ in range(samples):
                    ns.append(loop.time(iters))
                    gcs.append(loop.collections)
        except Exception as e:  # the benchmark's own failure, reported and served on
            return "error benchmark {} failed: {}".format(which, _one_line(e))
        gc = " gc.collections={}".format(",".join(map(str, gcs))) if gcs else ""
        return "samples {} ns={}{}{}{}".format(samples, ",".join(map(str, ns)), probe, gc, mem)

    def _counted(self, loop, iters, samples):
        """``memory=1``: the allocation counts of each sample (``_memory``)."""
        if self.counter is None:
            self.counter = _memory.Counter(self.empty)
        why = self.counter.unavailable()
        if why is None:
            return self.counter.batch_tokens(loop, iters, samples)
        ns, traced = _memory.traced(loop, self.empty, iters, samples)
        return ns, " mem.unavailable={}{}".format(encode_name(why), traced)

    def reply(self, line):
        """The reply to one command line (``None`` after ``quit``'s ``bye``)."""
        toks = line.split()
        cmd = toks[0] if toks else ""
        if cmd == "hello":
            v = toks[1] if len(toks) > 1 else ""
            if not v.isdigit():
                return "error bad option '{}' in '{}'".format(v, line)
            if int(v) != PROTOCOL:
                return "error unsupported protocol version {} (this worker speaks {})".format(v, PROTOCOL)
            return self.hello()
        if cmd == "list":
            rows = [
                "bench {} {}{}".format(i, encode_name(n), " alloc_free=1" if getattr(l, "alloc_free", False) else "")
                for i, (n, l) in enumerate(self.benches)
            ]
            return "\n".join(rows + ["end {}".format(len(rows))])
        if cmd == "run":
            try:
                return self.run(line, toks[1:])
            except BadOption as e:
                return "error {}".format(e)
        if cmd == "probe":
            return probe_line()
        if cmd == "quit":
            return None
        return "error unknown command '{}'".format(cmd)

    def serve(self, r, w):
        with os.fdopen(r, "rb") as inp, os.fdopen(w, "wb", buffering=0) as out:
            for raw in inp:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                reply = self.reply(line)
                if reply is None:
                    out.write(b"bye\n")
                    return
                out.write(reply.encode("utf-8") + b"\n")


def _one_line(e):
    return "{}: {}".format(type(e).__name__, e).replace("\n", " ")


def fds():
    """``(R, W)`` from ``VERNIER_FDS``, or None when this process was not started as a worker."""
    v = os.environ.get("VERNIER_FDS")
    if v is None:
        return None
    try:
        r, w = v.split(",")
        return int(r), int(w)
    except ValueError:
        raise SystemExit("vernier worker: VERNIER_FDS='{}' is not 'R,W'".format(v))


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
    r, w = fds()
    count_every_object()
    Worker(benches).serve(r, w)
    return 0

