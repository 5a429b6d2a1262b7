"""`run … memory=1` on the Python worker: the interposer's counts read through ctypes (the
interposer `vernier run` preloads, embedded in the CLI, preloaded here by hand), or
`mem.unavailable` and tracemalloc's bytes without it; `allocation_free=True` on the `list`
line."""
import textwrap

import pytest

from test_worker import Worker, tokens
from vernier import _native

SCRIPT = textwrap.dedent("""
    import vernier
    vernier.bench_statement("literal times 1000", "[0] * 1000")
    vernier.bench_statement("one list of 1000", "x * 1000", setup="x = [0]")
    vernier.bench_statement("small int add", "y = x + 1", setup="x = 5", allocation_free=True)
    vernier.bench("str of an int", str, 12345, allocation_free=True)
    vernier.bench("sorted per iteration", sorted, setup=lambda: list(range(50)))
    vernier.main()
""")


@pytest.fixture(scope="module")
def interposer():
    return _native.interposer_path()


def per_iter(reply, iters):
    """Per iteration, of the samples after the batch's first (the first may carry what an
    iteration allocates once: the specialising interpreter's caches, a first-time object)."""
    t = tokens(reply)
    return {k[4:]: [int(v) / iters for v in t[k].split(",")][1:] for k in t if k.startswith("mem.")}


def test_the_interposer_counts_each_object(tmp_path, interposer):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    w = Worker(script, env={"LD_PRELOAD": str(interposer)})
    w.ask("hello 1")
    n = 100
    # The result's item array: one allocation of 1000 pointers (the list object itself comes
    # from the list free list), freed at the next iteration.
    one = per_iter(w.ask("run 1 iters={} samples=3 memory=1".format(n)), n)
    assert one == {"allocs": [1.0] * 2, "bytes": [8000.0] * 2, "frees": [1.0] * 2,
                   "freed_bytes": one["freed_bytes"]}, one
    assert all(8000 <= b <= 8100 for b in one["freed_bytes"]), one
    # `[0] * 1000` builds the one-element list `[0]` first: its 8-byte item array too, seen
    # because the counting process runs with PYTHONMALLOC=malloc.
    lit = per_iter(w.ask("run 0 iters={} samples=3 memory=1".format(n)), n)
    assert lit["allocs"] == [2.0] * 2 and lit["bytes"] == [8008.0] * 2, lit
    nothing = per_iter(w.ask("run 2 iters={} samples=3 memory=1".format(n)), n)
    assert nothing["allocs"] == [0.0] * 2 and nothing["bytes"] == [0.0] * 2, nothing
    # A new str per call: objects pymalloc would have hidden from malloc.
    s = per_iter(w.ask("run 3 iters={} samples=3 memory=1".format(n)), n)
    assert all(a >= 1 for a in s["allocs"]) and s["allocs"] == s["frees"], s
    # The inputs a setup made before the loop are not counted; sorting 50 ints allocates the
    # new list's item array (and the sort's own work space): the inputs' 50 lists are outside.
    srt = per_iter(w.ask("run 4 iters={} samples=3 memory=1".format(n)), n)
    assert 1 <= srt["allocs"][0] <= 3, srt
    # Timed batches carry no memory token.
    assert "mem." not in w.ask("run 1 iters=10 samples=2")
    assert w.ask("quit") == "bye"


def test_without_the_interposer_the_worker_says_why_and_reports_tracemalloc(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT + "\n")
    w = Worker(script)
    w.ask("hello 1")
    t = tokens(w.ask("run 1 iters=50 samples=2 memory=1"))
    assert not any(k.startswith("mem.") and k != "mem.unavailable" for k in t), t
    assert "LD_PRELOAD" in t["mem.unavailable"], t
    # Each iteration's list is freed before the next is made: nothing left per sample, and
    # about 8 KB (the items and the list object, less the reads' own bytes) at the peak.
    assert t["tracemalloc.net_bytes"] == "0,0", t
    assert all(7900 <= int(x) <= 8300 for x in t["tracemalloc.peak_bytes"].split(",")), t
    assert w.ask("quit") == "bye"


def test_allocation_free_benchmarks_say_so_on_the_list_line(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    w = Worker(script)
    lines = [w.ask("list")]
    while not lines[-1].startswith("end "):
        lines.append(w.r.readline().decode().rstrip("\n"))
    assert lines[:5] == [
        "bench 0 literal%20times%201000",
        "bench 1 one%20list%20of%201000",
        "bench 2 small%20int%20add alloc_free=1",
        "bench 3 str%20of%20an%20int alloc_free=1",
        "bench 4 sorted%20per%20iteration",
    ], lines
    assert w.ask("quit") == "bye"
