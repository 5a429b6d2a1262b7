#!/usr/bin/env python3
"""`sum(x)` over 1000 and 1050 ints, measured by timeit, pyperf (default and --fast),
pytest-benchmark and Vernier, N invocations each, interleaved; prints side by side the spread
of each tool's headline between invocations (RSD), the ratio 1050/1000 of the medians of the
headlines, how often a 1050 invocation reads slower than a 1000 one (over every pairing), and
the wall time per benchmark.

With ``--compare N``, instead: ``vernier compare`` of a script with itself and with a variant
doing 5 % more work (``sum`` over 1050 ints instead of 1000), N times each, and the verdicts.

Run it in a virtual environment with the tools installed:

    python3 -m venv target/tools-venv
    target/tools-venv/bin/pip install ./python pyperf pytest pytest-benchmark
    target/tools-venv/bin/python scripts/python-tools.py [--invocations 10] [--tools timeit,vernier]
    target/tools-venv/bin/python scripts/python-tools.py --compare 10

A documented measurement, not a test: its figures depend on the machine and its load.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SIZES = (1000, 1050)
PY = sys.executable


def setup(n):
    return "x = list(range({}))".format(n)


def run(cmd, cwd):
    t0 = time.perf_counter()
    o = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    if o.returncode != 0:
        raise SystemExit("{} failed ({}):\n{}\n{}".format(" ".join(cmd), o.returncode, o.stdout, o.stderr))
    return o.stdout, wall


def timeit_tool(n, tmp):
    out, wall = run([PY, "-m", "timeit", "-s", setup(n), "sum(x)"], tmp)
    m = re.search(r"best of \d+: ([\d.]+) (nsec|usec|msec|sec) per loop", out)
    scale = {"nsec": 1, "usec": 1e3, "msec": 1e6, "sec": 1e9}[m.group(2)]
    return float(m.group(1)) * scale, wall, None


def pyperf_tool(fast):
    def tool(n, tmp):
        path = os.path.join(tmp, "pyperf.json")
        if os.path.exists(path):
            os.remove(path)
        cmd = [PY, "-m", "pyperf", "timeit", "-q", "-o", path, "-s", setup(n), "sum(x)"]
        if fast:
            cmd.insert(4, "--fast")
        _, wall = run(cmd, tmp)
        import pyperf

        return pyperf.Benchmark.load(path).mean() * 1e9, wall, None

    return tool


PYTEST_FILE = """
x = list(range({n}))

def test_sum(benchmark):
    benchmark(sum, x)
"""


def pytest_benchmark_tool(n, tmp):
    test = os.path.join(tmp, "test_sum_{}.py".format(n))
    with open(test, "w") as f:
        f.write(PYTEST_FILE.format(n=n))
    path = os.path.join(tmp, "pb.json")
    _, wall = run([PY, "-m", "pytest", "-q", "-p", "no:vernier", "-p", "no:cacheprovider",
                   "--benchmark-json", path, test], tmp)
    with open(path) as f:
        stats = json.load(f)["benchmarks"][0]["stats"]
    return stats["median"] * 1e9, wall, None


def vernier_tool(n, tmp):
    path = os.path.join(tmp, "vernier.json")
    _, wall = run([PY, "-m", "vernier", "timeit", "--json", path, "-s", setup(n), "sum(x)"], tmp)
    with open(path) as f:
        b = json.load(f)["benchmarks"][0]
    flags = [d["code"] for d in b.get("diagnostics", [])]
    return b["per_iter"]["median_ns"], wall, flags


TOOLS = {
    "timeit": timeit_tool,
    "pyperf": pyperf_tool(False),
    "pyperf --fast": pyperf_tool(True),
    "pytest-benchmark": pytest_benchmark_tool,
    "vernier": vernier_tool,
}


COMPARE_SCRIPT = """
import os
import vernier
x = list(range(int(os.environ.get("SUM_N", "1000"))))
vernier.bench("sum", sum, x)
vernier.main()
"""


def compare_tries(tries):
    """`vernier compare` of the script with itself, and with SUM_N=1050 on the NEW side."""
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "bench_sum.py")
        with open(script, "w") as f:
            f.write(COMPARE_SCRIPT)
        path = os.path.join(tmp, "cmp.json")
        for i in range(tries):
            for label, env in (("same script", []), ("5 % slower", ["--new-env=SUM_N=1050"])):
                cmd = [PY, "-m", "vernier", "compare", PY, PY, "--old-arg=" + script,
                       "--new-arg=" + script, "--json", path] + env
                t0 = time.perf_counter()
                o = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
                wall = time.perf_counter() - t0
                if o.returncode not in (0, 2):
                    raise SystemExit("{} failed:\n{}\n{}".format(" ".join(cmd), o.stdout, o.stderr))
                with open(path) as f:
                    c = json.load(f)["comparisons"][0]
                counts.setdefault(label, []).append((c["verdict"], c["ratio"], wall))
                print("{} {}: {} ratio {:.4f} in {:.1f} s, load {}".format(
                    label, i + 1, c["verdict"], c["ratio"], wall, _load(os.getloadavg())), file=sys.stderr)
    print("load average (1, 5, 15 min) at the end: {}".format(_load(os.getloadavg())))
    for label, rows in counts.items():
        verdicts = {}
        for v, _, _ in rows:
            verdicts[v] = verdicts.get(v, 0) + 1
        print("{:<12} {}  ratios {:.4f}-{:.4f}  {:.1f} s per compare".format(
            label, ", ".join("{} {}".format(v, n) for v, n in sorted(verdicts.items())),
            min(r for _, r, _ in rows), max(r for _, r, _ in rows),
            statistics.mean(w for _, _, w in rows)))


def rsd(v):
    return statistics.stdev(v) / statistics.mean(v) * 100 if len(v) > 1 else float("nan")


def main():
    with tempfile.TemporaryDirectory(prefix="vernier-tools-") as ledger:
        os.environ.setdefault("VERNIER_LEDGER", os.path.join(ledger, "ledger.json"))
        return measure()


def measure():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--invocations", type=int, default=10)
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: " + ", ".join(TOOLS))
    p.add_argument("--compare", type=int, metavar="N", help="N tries of vernier compare instead")
    a = p.parse_args()
    if a.compare:
        return compare_tries(a.compare)
    tools = [t.strip() for t in a.tools.split(",")]
    for t in tools:
        if t not in TOOLS:
            raise SystemExit("unknown tool {!r} (expected {})".format(t, ", ".join(TOOLS)))
    env_ledger = os.environ["VERNIER_LEDGER"]
    res = {(t, n): [] for t in tools for n in SIZES}
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.invocations):
            for t in tools:
                for n in (SIZES if i % 2 == 0 else SIZES[::-1]):
                    res[(t, n)].append(TOOLS[t](n, tmp) + (os.getloadavg()[0],))
            print("invocation {}/{} done: {}".format(i + 1, a.invocations, json.dumps(
                {"{} {}".format(t, n): v[-1][:3] for (t, n), v in res.items()})), file=sys.stderr)
    print("sum(x) over 1000 and 1050 ints, {} invocations per tool and size, interleaved "
          "(Python {}, ledger {})".format(a.invocations, sys.version.split()[0], env_ledger))
    print("load average (1, 5, 15 min): {} at the start, {} at the end".format(
        _load(load_start), _load(os.getloadavg())))
    head = "{:<17} {:>10} {:>10} {:>8} {:>9} {:>8} {:>5}  {}".format(
        "tool", "RSD 1000", "RSD 1050", "ratio", "1050 >", "wall/bm", "load", "flagged (vernier)")
    print(head)
    for t in tools:
        a0 = [r[0] for r in res[(t, 1000)]]
        a1 = [r[0] for r in res[(t, 1050)]]
        walls = [r[1] for n in SIZES for r in res[(t, n)]]
        ratio = statistics.median(a1) / statistics.median(a0)
        slower = sum(1 for y in a1 for x in a0 if y > x) / (len(a0) * len(a1)) * 100
        # counters-unavailable is the machine (no PMU), not the benchmark.
        flags = [",".join(c for c in (r[2] or []) if c != "counters-unavailable")
                 for n in SIZES for r in res[(t, n)]]
        loads = [r[3] for n in SIZES for r in res[(t, n)]]
        note = ""
        if t == "vernier":
            clean = [[r[0] for r in res[(t, n)] if not _flagged(r[2])] for n in SIZES]
            note = "{} of {} flagged{}; unflagged RSD {:.2f}% / {:.2f}%".format(
                len([f for f in flags if f]), len(flags),
                ": " + "; ".join(f for f in flags if f) if any(flags) else "", rsd(clean[0]), rsd(clean[1]))
        print("{:<17} {:>9.2f}% {:>9.2f}% {:>8.3f} {:>8.0f}% {:>7.2f}s {:>5.2f}  {}".format(
            t, rsd(a0), rsd(a1), ratio, slower, statistics.mean(walls), statistics.mean(loads), note))
    print("RSD: stdev/mean of the tool's headline over the invocations (timeit: best of 5; pyperf: "
          "mean; pytest-benchmark: median; vernier: median). ratio: median 1050 headline / median "
          "1000 headline. 1050 >: share of (1000, 1050) invocation pairs where 1050 reads slower. "
          "load: mean 1-minute load average after the tool's invocations.")


def _flagged(codes):
    return any(c != "counters-unavailable" for c in (codes or []))


def _load(avg):
    return "/".join("{:.2f}".format(x) for x in avg)


if __name__ == "__main__":
    main()
