"""The script harness: the protocol with the native module's core-speed probe, and `python
bench.py` starting the runner on itself."""
import fcntl
import json
import os
import subprocess
import sys
import textwrap
import urllib.parse

SCRIPT = textwrap.dedent("""
    import vernier
    x = list(range(1000))
    vernier.bench("sum", sum, x)
    vernier.bench("sorted per sample", sorted, setup=lambda: list(range(50, 0, -1)), per="sample")
    vernier.main()
""")


class Worker:
    def __init__(self, script, env=None):
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        # Above fd 10 first, so that dup2 onto 3 and 4 cannot clobber one with the other.
        a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        b = fcntl.fcntl(rep_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def fds():
            os.dup2(a, 3)
            os.dup2(b, 4)

        env = dict(os.environ, VERNIER_FDS="3,4", **(env or {}))
        self.p = subprocess.Popen([sys.executable, str(script)], env=env, close_fds=False,
                                  preexec_fn=fds)
        for fd in (cmd_r, rep_w, a, b):
            os.close(fd)
        self.w = os.fdopen(cmd_w, "wb", buffering=0)
        self.r = os.fdopen(rep_r, "rb")

    def ask(self, line):
        self.w.write(line.encode() + b"\n")
        return self.r.readline().decode().rstrip("\n")

    def listed(self):
        """The handshake and the ``list`` reply's lines; the worker is then told to quit."""
        self.ask("hello 1")
        self.w.write(b"list\n")
        lines = []
        while not lines or not lines[-1].startswith("end "):
            lines.append(self.r.readline().decode().rstrip("\n"))
        assert self.ask("quit") == "bye"
        assert self.p.wait(30) == 0
        return lines


def tokens(line):
    return dict(t.split("=", 1) for t in line.split() if "=" in t)


def test_the_worker_runs_the_core_speed_probe_with_the_native_module(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    w = Worker(script)
    hello = tokens(w.ask("hello 1"))
    assert hello["impl"].startswith("vernier-python/") and hello["timer"] == "monotonic"
    assert hello["pid"] == str(w.p.pid)
    interp = urllib.parse.unquote(hello["interp"]).split()
    v = sys.version_info
    assert interp[:2] == [sys.implementation.name, "{}.{}.{}".format(v.major, v.minor, v.micro)], interp
    assert interp[2] == ("debug" if hasattr(sys, "gettotalrefcount") else "release"), interp
    # Started without a seed, the interpreter draws its own (not restarted to learn it).
    assert hello["hashseed"] == "random"
    short = tokens(w.ask("run 0 iters=1 samples=2 probe=1024"))
    long = tokens(w.ask("run 0 iters=1 samples=2 probe=65536"))
    assert int(long["probe_ns"]) > int(short["probe_ns"]) > 0
    assert int(long["wide_ns"]) > int(short["wide_ns"]) > 0
    assert "probe_ns" not in w.ask("run 1 iters=3 samples=2")
    assert w.ask("quit") == "bye"
    assert w.p.wait(30) == 0


def test_python_bench_py_runs_in_worker_processes(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json"))
    o = subprocess.run([sys.executable, str(script), "--quick", "--json", "r.json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert o.returncode == 0, o
    r = json.loads((tmp_path / "r.json").read_text())
    assert [b["name"] for b in r["benchmarks"]] == ["sum", "sorted per sample"]
    assert all(b["status"] == "ok" for b in r["benchmarks"]), r["benchmarks"]
    o = subprocess.run([sys.executable, str(script), "--filter", "sorted", "--quick"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert o.returncode == 0 and "sorted per sample" in o.stdout and "\nsum " not in o.stdout, o


def test_a_declared_complexity_is_listed_and_fitted_as_declared(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(textwrap.dedent("""
        import vernier
        vernier.bench_args("scan", sum, vernier.range(64, 4096, 8),
                           setup=lambda n: list(range(n)), complexity="O(N log N)")
        def triangle(n):
            return n * (n - 1) / 2
        vernier.bench_args("pairs", lambda n: [a ^ b for a in range(n) for b in range(a)],
                           [8, 16, 32], complexity=triangle)
        vernier.bench_args("cube", lambda n: n, [2, 4, 8], complexity=("N^3 + 1", lambda n: n ** 3 + 1))
        vernier.bench("plain", len, "ab", complexity=lambda n: n)
        vernier.main()
    """))
    lines = Worker(script).listed()
    assert lines == [
        "bench 0 scan/64 complexity=NlgN", "bench 1 scan/512 complexity=NlgN",
        "bench 2 scan/4096 complexity=NlgN",
        "bench 3 pairs/8 f=2.8e1 function=triangle", "bench 4 pairs/16 f=1.2e2 function=triangle",
        "bench 5 pairs/32 f=4.96e2 function=triangle",
        "bench 6 cube/2 f=9e0 function=N%5E3%20+%201", "bench 7 cube/4 f=6.5e1 function=N%5E3%20+%201",
        "bench 8 cube/8 f=5.13e2 function=N%5E3%20+%201",
        "bench 9 plain", "end 10",
    ], lines
    # The fit follows the declarations whatever the timings: the class given, or the function.
    env = dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json"))
    o = subprocess.run([sys.executable, str(script), "--quick", "--processes", "1", "--json", "r.json",
                        "--filter", "scan|pairs"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert o.returncode == 0, o
    assert "plain: the name has no size N" in o.stderr, o.stderr
    fits = {f["family"]: f for f in json.loads((tmp_path / "r.json").read_text())["complexity"]}
    assert fits["scan"]["class"] == "O(N log N)" and fits["scan"]["declared"], fits
    assert fits["pairs"]["class"] == "f(N)" and fits["pairs"]["function"] == "triangle", fits
    assert fits["pairs"]["f"] == [28.0, 120.0, 496.0], fits
    assert "complexity of pairs: f(N) = triangle as declared" in o.stdout, o.stdout
    for bad, needle in (("'O(N**2)'", "complexity is one of 'O(1)'"),
                        ("3", "complexity is a class such as"),
                        ("lambda n: 'n'", "x/1: the complexity function returned 'n' at N = 1")):
        s = tmp_path / "bad.py"
        s.write_text("import vernier\nvernier.bench_args('x', len, [1, 2], complexity={})\n".format(bad))
        o = subprocess.run([sys.executable, str(s)], capture_output=True, text=True)
        assert o.returncode == 1 and needle in o.stderr, o


def test_arguments_and_throughput_are_listed_and_reach_the_result(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(textwrap.dedent("""
        import vernier
        vernier.bench_args("sum", lambda n: sum(range(n)), [10, 100])
        vernier.bench_args("scan", lambda v: sum(v), vernier.range(64, 4096, 8),
                           setup=lambda n: list(range(n)), throughput=vernier.Items)
        vernier.bench("join", b"".join, [b"x" * 64] * 16, throughput=vernier.Bytes(1024))
        vernier.main()
    """))
    lines = Worker(script).listed()
    assert lines == [
        "bench 0 sum/10", "bench 1 sum/100",
        "bench 2 scan/64 items=64", "bench 3 scan/512 items=512", "bench 4 scan/4096 items=4096",
        "bench 5 join bytes=1024", "end 6",
    ], lines
    env = dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json"))
    o = subprocess.run([sys.executable, str(script), "--quick", "--processes", "1", "--json", "r.json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert o.returncode == 0, o
    r = json.loads((tmp_path / "r.json").read_text())
    got = {b["name"]: b.get("throughput") for b in r["benchmarks"]}
    assert got["scan/512"] == {"items_per_iter": 512} and got["join"] == {"bytes_per_iter": 1024}, got
    assert got["sum/10"] is None
    assert [f["family"] for f in r["complexity"]] == ["scan"], r.get("complexity")
    assert "items/s" in o.stdout and "complexity of scan" in o.stdout, o.stdout
    for bad in ("vernier.Bytes(-1)", "('bytes', 8)"):
        s = tmp_path / "bad.py"
        s.write_text("import vernier\nvernier.bench('x', len, 'ab', throughput={})\n".format(bad))
        o = subprocess.run([sys.executable, str(s)], capture_output=True, text=True)
        assert o.returncode == 1 and "vernier.Bytes(n) or vernier.Items(n)" in o.stderr, o


def test_a_script_without_benchmarks_says_so(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text("import vernier\nvernier.main()\n")
    o = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert o.returncode == 1 and "no benchmark registered" in o.stderr, o


GC_SCRIPT = textwrap.dedent("""
    import os
    import sys
    import vernier
    if os.environ.get("FAKE_PYDEBUG"):
        sys.gettotalrefcount = lambda: 0   # what a --with-pydebug interpreter has
    def cycles():
        for _ in range(50):
            a = []
            a.append(a)
    vernier.bench("cycles, collector on", cycles, gc=True)
    vernier.bench("cycles, collector off", cycles)
    vernier.main()
""")


def run_script(tmp_path, script, *args, **env):
    env = dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json"), **env)
    o = subprocess.run([sys.executable, str(script)] + list(args), capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert o.returncode == 0, o
    return o


def test_collections_hash_seeds_and_the_interpreter_are_kept_in_the_result(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(GC_SCRIPT)
    o = run_script(tmp_path, script, "--quick", "--processes", "2", "--json", "r.json")
    r = json.loads((tmp_path / "r.json").read_text())
    on, off = r["benchmarks"]
    assert [on["name"], off["name"]] == ["cycles, collector on", "cycles, collector off"]
    # Garbage collections per sample, stored with the samples, shown when there were some.
    assert sum(on["samples"]["counters"]["gc.collections"]) > 0, on["samples"]["counters"]
    assert set(off["samples"]["counters"]["gc.collections"]) == {0}
    gc_lines = [l for l in o.stdout.splitlines() if "garbage collections:" in l]
    assert len(gc_lines) == 1, o.stdout
    # Each process's own hash seed.
    seeds = [p["hash_seed"] for p in on["processes"]]
    assert len(seeds) == 2 and all(s.isdigit() for s in seeds) and seeds[0] != seeds[1], on["processes"]
    assert r["machine"]["worker_interp"].startswith(sys.implementation.name + " "), r["machine"]
    assert r["machine"]["worker_interp"] in o.stdout
    assert not any(d["code"] == "debug-build" for d in on["diagnostics"])


def test_a_debug_interpreter_is_flagged_as_a_debug_build(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(GC_SCRIPT)
    o = run_script(tmp_path, script, "--quick", "--filter", "off", "--json", "r.json", FAKE_PYDEBUG="1")
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["machine"]["worker_interp"].split()[2] == "debug", r["machine"]
    assert [d["code"] for d in r["benchmarks"][0]["diagnostics"]].count("debug-build") == 1
    assert "debug-build" in o.stdout
