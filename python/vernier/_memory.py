"""Allocation counts for ``run … memory=1`` (``docs/protocol.md``), in the worker's counting pass.

The runner starts the counting process with its interposer preloaded (``LD_PRELOAD``); the
interposer counts every ``malloc``/``free`` of the process and exports
``vernier_alloc_counts_read``, found here through ``ctypes.CDLL(None)``. Python's small-object
allocator (pymalloc) serves most objects from arenas malloc never sees, so a worker that finds
the interposer at start-up starts itself again with ``PYTHONMALLOC=malloc`` (in that counting
process only, never in a timed one): every object's allocation then reaches malloc and is
counted, and ``[0] * 1000`` reads one allocation of 8000 bytes (its item array; the list
object comes from the list free list).

The counters are read by the loop's own clock reads, right around the ``for``: the inputs a
``setup`` made and the garbage collector's switch are outside. What the reads themselves
allocate (a constant) is measured once on the empty loop and taken off.

Without the interposer the reply carries ``mem.unavailable=<reason>`` and, from
``tracemalloc``, the Python objects' bytes each sample left allocated
(``tracemalloc.net_bytes=``) and its peak above the start (``tracemalloc.peak_bytes=``):
tracemalloc sees Python's allocations only, and gives no count of calls.
"""

import os
import time

# The interposer's C ABI: `memory::READ_SYMBOL`
# (crates/vernier/tests/suite/deterministic/shared_constants.rs).
READ_SYMBOL = "vernier_alloc_counts_read"
FIELDS = ("allocs", "bytes", "frees", "freed_bytes")
# How often the empty loop's own counts are read to find their constant (the smallest).
_BASELINE_TRIES = 5


def _reader():
    """``(read, a, b)``: ``read(x)`` fills the counts struct ``x``; None without the interposer."""
    if not os.environ.get("LD_PRELOAD"):
        return None
    import ctypes

    try:
        fn = getattr(ctypes.CDLL(None), READ_SYMBOL)
    except (AttributeError, OSError):
        return None

    class Counts(ctypes.Structure):
        _fields_ = [(f, ctypes.c_uint64) for f in FIELDS]

    fn.argtypes = [ctypes.POINTER(Counts)]
    fn.restype = None
    a, b = Counts(), Counts()
    return fn, ctypes.pointer(a), ctypes.pointer(b)


def interposer_present():
    """The interposer is preloaded in this process."""
    return _reader() is not None


def needs_malloc_env():
    """This process counts allocations and Python's own allocator would hide objects from it."""
    return os.environ.get("PYTHONMALLOC") != "malloc" and interposer_present()


class Counter:
    """Counts one batch's samples; ``sample(loop, iters)`` returns (ns, per-field deltas)."""

    def __init__(self, empty):
        self._read = _reader()
        self._empty = empty
        self._base = None

    def unavailable(self):
        if self._read is not None:
            return None
        if os.environ.get("LD_PRELOAD"):
            return "LD_PRELOAD is set but does not export {}".format(READ_SYMBOL)
        return "the allocation interposer is not preloaded in this process (LD_PRELOAD)"

    def _bracket(self, loop, iters):
        fn, pa, pb = self._read
        clock = time.perf_counter_ns
        reads = []

        def timer():
            if not reads:
                reads.append(clock())
                fn(pa)
                return 0
            fn(pb)
            reads.append(clock())
            return 0

        loop.time(iters, timer)
        a, b = pa.contents, pb.contents
        return reads[1] - reads[0], [getattr(b, f) - getattr(a, f) for f in FIELDS]

    def sample(self, loop, iters):
        if self._base is None:
            tries = [self._bracket(self._empty, 1)[1] for _ in range(_BASELINE_TRIES)]
            self._base = [min(t[i] for t in tries) for i in range(len(FIELDS))]
        ns, d = self._bracket(loop, iters)
        return ns, [max(x - b, 0) for x, b in zip(d, self._base)]

    def batch(self, loop, iters, samples):
        """``samples`` counted samples: (ns list, one tuple of the FIELDS per sample)."""
        ns, counts = [], []
        for _ in range(samples):
            t, d = self.sample(loop, iters)
            ns.append(t)
            counts.append(tuple(d))
        return ns, counts


def _traced_sample(tracemalloc, loop, iters):
    clock = time.perf_counter_ns
    marks = []

    def timer():
        if not marks and hasattr(tracemalloc, "reset_peak"):
            tracemalloc.reset_peak()
        marks.append((clock(), tracemalloc.get_traced_memory()))
        return 0

    loop.time(iters, timer)
    (t0, (c0, _)), (t1, (c1, p1)) = marks
    return t1 - t0, c1 - c0, p1 - c0


def traced(loop, empty, iters, samples):
    """Without the interposer: ``(ns, net bytes, peak bytes)`` per sample from tracemalloc,
    Python objects only (what the reads themselves leave, measured on the empty loop, taken
    off)."""
    import tracemalloc

    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    ns, net, peak = [], [], []
    try:
        tries = [_traced_sample(tracemalloc, empty, 1) for _ in range(_BASELINE_TRIES)]
        base_net = min(t[1] for t in tries)
        base_peak = min(t[2] for t in tries)
        for _ in range(samples):
            t, n, p = _traced_sample(tracemalloc, loop, iters)
            ns.append(t)
            net.append(max(n - base_net, 0))
            peak.append(max(p - base_peak, 0))
    finally:
        if started:
            tracemalloc.stop()
    return ns, net, peak
