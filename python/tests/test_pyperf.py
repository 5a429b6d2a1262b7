"""`python -m vernier pyperf SCRIPT`: pyperf scripts that nobody here wrote, unchanged.

The scripts come from PyPI at test time: pyperformance's benchmarks (its wheel ships
`data-files/benchmarks/bm_*/run_benchmark.py`) and pyperf's own examples (its sdist's
`doc/examples/`). A failed download fails the tests that need them, saying so."""
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile

import pytest

from vernier import _loops

PYPERFORMANCE = "pyperformance==1.14.0"
PYPERF = "pyperf==2.11.0"


def _download(spec, dest, *extra):
    o = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                        "--disable-pip-version-check", "-d", str(dest), *extra, spec],
                       capture_output=True, text=True)
    files = sorted(dest.iterdir()) if dest.is_dir() else []
    if o.returncode != 0 or not files:
        pytest.fail("could not download {} from PyPI (`pip download` exited with status {}): these "
                    "tests run its pyperf scripts, fetched at test time; check the network or "
                    "PIP_INDEX_URL.\n{}".format(spec, o.returncode, o.stderr[-2000:]), pytrace=False)
    return files[0]


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory):
    """pyperformance's benchmark directory (bm_*/run_benchmark.py)."""
    root = tmp_path_factory.mktemp("pyperformance")
    wheel = _download(PYPERFORMANCE, root / "dl")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(root / "x")
    return root / "x" / "pyperformance" / "data-files" / "benchmarks"


@pytest.fixture(scope="module")
def pyperf_sdist(tmp_path_factory):
    """pyperf's source: its package (the real pyperf) and doc/examples/."""
    root = tmp_path_factory.mktemp("pyperf")
    sdist = _download(PYPERF, root / "dl", "--no-binary", ":all:")
    with tarfile.open(sdist) as t:
        t.extractall(root / "x", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (top,) = (root / "x").iterdir()
    return top


def vernier(*args, cwd, env=None):
    e = dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(cwd / "ledger.json"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "vernier", *args], capture_output=True, text=True,
                          env=e, cwd=cwd)


def pyperf_cmd(script, *args):
    return [sys.executable, "-m", "vernier", "pyperf", str(script), *args]


def check_result(path, names, o):
    r = json.loads(path.read_text())
    got = [b["name"] for b in r["benchmarks"]]
    assert got == names, (got, o.stdout, o.stderr)
    for b in r["benchmarks"]:
        assert b["status"] == "ok", b
        assert b["per_iter"]["median_ns"] > 0, b
    assert r["machine"]["worker_impl"].startswith("vernier-python/")
    return r


# (benchmark directory, the script's arguments, the benchmarks it registers, in order)
PYPERFORMANCE_SCRIPTS = [
    # bench_time_func, three benchmarks, runner.metadata
    ("bm_deepcopy", [], ["deepcopy", "deepcopy_reduce", "deepcopy_memo"]),
    # bench_time_func(inner_loops=10), a positional argument of the script's own
    ("bm_logging", [], ["logging_format", "logging_silent", "logging_simple"]),
    ("bm_logging", ["silent"], ["logging_silent"]),
    # bench_func, add_cmdline_args, an option of the script's own (--cases)
    ("bm_json_dumps", ["--cases", "EMPTY,SIMPLE"], ["json_dumps"]),
    # bench_time_func with inner_loops=400
    ("bm_unpack_sequence", [], ["unpack_sequence"]),
    # bench_command, Runner(values=10)
    ("bm_python_startup", [], ["python_startup"]),
    # its files removed in a `finally` after bench_time_func: measured before that runs
    ("bm_pathlib", [], ["pathlib"]),
    # multiprocessing: the pool pickles the script's function by its name in __main__
    ("bm_concurrent_imap", [], ["bench_mp_pool", "bench_thread_pool"]),
]


@pytest.mark.parametrize("bench,args,names", PYPERFORMANCE_SCRIPTS,
                         ids=["{}{}".format(b, "-" + "-".join(a) if a else "") for b, a, _ in PYPERFORMANCE_SCRIPTS])
def test_pyperformance_scripts_run_unchanged_under_vernier_run(benchmarks, tmp_path, bench, args, names):
    script = benchmarks / bench / "run_benchmark.py"
    assert script.is_file(), "pyperformance no longer ships " + str(script)
    memory = [] if bench == "bm_deepcopy" else ["--no-memory"]  # one counted, custom-timed
    o = vernier("run", "--time", "0.2", *memory, "--json", "r.json", "--",
                *pyperf_cmd(script, *args), cwd=tmp_path)
    assert o.returncode == 0, (o.stdout, o.stderr)
    r = check_result(tmp_path / "r.json", names, o)
    for n in names:
        assert "\n" + n + " " in o.stdout, o.stdout
    if bench == "bm_logging":  # inner_loops: the work of one call, a rate in items/s
        for b in r["benchmarks"]:
            assert b["throughput"] == {"items_per_iter": 10}, b["throughput"]
    if bench == "bm_deepcopy":
        for b in r["benchmarks"]:
            assert b["memory"]["allocs_per_iter"] > 0, b.get("memory")


# pyperf's own examples: (file, the benchmark it registers)
PYPERF_EXAMPLES = [
    ("bench_func.py", "sleep"),
    ("bench_time_func.py", "dict[str]"),
    ("bench_timeit.py", "sorted(list(range(1000)), key=lambda x: x)"),
    ("bench_async_func.py", "async_sleep"),
    ("bench_command.py", "python_startup"),
]


def test_pyperf_examples_run_unchanged_and_the_stand_in_wins_over_real_pyperf(pyperf_sdist, tmp_path):
    # The real pyperf is importable (its source on PYTHONPATH): the script's `import pyperf`
    # still gets Vernier's, or the worker would not speak the protocol.
    env = {"PYTHONPATH": str(pyperf_sdist)}
    o = subprocess.run([sys.executable, "-c", "import pyperf; print(pyperf.__file__)"],
                       capture_output=True, text=True, env=dict(os.environ, **env))
    assert str(pyperf_sdist) in o.stdout, o
    for example, name in PYPERF_EXAMPLES:
        script = pyperf_sdist / "doc" / "examples" / example
        out = tmp_path / (example + ".json")
        o = vernier("run", "--time", "0.2", "--no-memory", "--json", str(out), "--",
                    *pyperf_cmd(script), cwd=tmp_path, env=env)
        assert o.returncode == 0, (example, o.stdout, o.stderr)
        check_result(out, [name], o)


READ_WITH_PYPERF = """
import json, sys, pyperf
suite = pyperf.BenchmarkSuite.load(sys.argv[1])
print(json.dumps([[b.get_name(), b.get_nrun(), b.get_loops(), b.get_inner_loops(), b.median(),
                   suite.get_metadata().get("description"), b.get_metadata()["vernier_median_ns"]]
                  for b in suite]))
"""


def test_standalone_translates_pyperf_options_and_writes_pyperf_json(benchmarks, pyperf_sdist, tmp_path):
    script = benchmarks / "bm_logging" / "run_benchmark.py"
    o = vernier("pyperf", str(script), "--fast", "-p", "2", "-n", "5", "--inherit-environ", "PATH",
                "-o", "out.json", cwd=tmp_path)
    assert o.returncode == 0, (o.stdout, o.stderr)
    names = ["logging_format", "logging_silent", "logging_simple"]
    for n in names:
        assert "\n" + n + " " in o.stdout, o.stdout
    assert "-n/--values: no meaning in Vernier" in o.stderr, o.stderr
    # -o: pyperf's own JSON, read by the real pyperf: a run per worker process, the script's
    # inner_loops and runner.metadata kept.
    r = subprocess.run([sys.executable, "-c", READ_WITH_PYPERF, "out.json"], capture_output=True,
                       text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(pyperf_sdist)))
    assert r.returncode == 0, r
    got = json.loads(r.stdout)
    assert [g[0] for g in got] == names, got
    for name, nrun, loops, inner, median, description, vernier_ns in got:
        # -p 2: two processes; a process without steady samples has no pyperf run.
        assert nrun in (1, 2) and loops >= 1 and inner == 10 and median > 0, got
        assert description == "Test the performance of logging.", got
        # pyperf's values are per inner loop (a tenth of a call); Vernier's median per call.
        # The same samples: within a factor 3, where a missed division would be off by 10.
        assert 1 / 3 < median * 10 / (vernier_ns / 1e9) < 3, got
    o = vernier("pyperf", str(script), "--fast", "-o", "out.json", cwd=tmp_path)
    assert o.returncode == 1 and "out.json already exists" in o.stderr, o


def test_pyperf_options_map_to_vernier_run_options():
    from vernier import _pyperf

    runner = _pyperf.Runner()
    args = runner.parse_args(["--rigorous", "-p", "4", "-v", "-o", "x.json", "--affinity", "0",
                              "--timeout", "5", "-l", "100"])
    assert _pyperf._run_options(args) == ["--time", "2", "--processes", "4", "--verbose",
                                          "--timeout", "5", "--cpu", "0"]
    assert "-l/--loops" in _pyperf._ignored
    runner.args = None
    assert _pyperf._run_options(runner.parse_args(["--fast"])) == ["--quick"]
    runner.args = None
    assert _pyperf._run_options(runner.parse_args([])) == []


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


BAD_SCRIPTS = {
    "raises.py": ("import pyperf\nrunner = pyperf.Runner()\nraise ValueError('boom')\n",
                  "raises.py raised ValueError: boom while registering its benchmarks"),
    "nothing.py": ("import pyperf\nrunner = pyperf.Runner()\n",
                   "nothing.py registered no benchmark: a pyperf script makes a pyperf.Runner()"),
    "twice.py": ("import pyperf\nrunner = pyperf.Runner()\nrunner.bench_func('a', len, 'x')\n"
                 "runner.bench_func('a', len, 'y')\n", "duplicated benchmark name: 'a'"),
    "bad_time.py": ("import pyperf\nrunner = pyperf.Runner()\n"
                    "runner.bench_time_func('t', lambda loops: 'soon')\n",
                    "the timed function of 't' returned 'soon': it must return the seconds"),
}


def test_bad_input_is_named_with_its_fix_standalone_and_under_vernier_run(tmp_path):
    o = vernier("pyperf", "missing.py", cwd=tmp_path)
    assert o.returncode == 1 and "the script missing.py does not exist" in o.stderr, o
    o = vernier("pyperf", cwd=tmp_path)
    assert o.returncode == 1 and "usage: python -m vernier pyperf SCRIPT" in o.stdout, o
    o = vernier("run", "--quick", "--", *pyperf_cmd("missing.py"), cwd=tmp_path)
    assert o.returncode != 0 and "the script missing.py does not exist" in o.stderr, o
    for name, (text, said) in BAD_SCRIPTS.items():
        script = write(tmp_path, name, text)
        for how in (["pyperf", name], ["run", "--quick", "--no-memory", "--json", "r.json", "--",
                                        *pyperf_cmd(script)]):
            o = vernier(*how, cwd=tmp_path)
            assert o.returncode != 0, (name, how, o)
            if name == "bad_time.py" and how[0] == "run":
                # Registered fine; the benchmark fails when measured, named in the result.
                (b,) = json.loads((tmp_path / "r.json").read_text())["benchmarks"]
                assert b["status"] != "ok" and said in (b["error"] or ""), b
            elif name != "bad_time.py":
                assert said in o.stderr, (name, how, o.stderr)
    script = write(tmp_path, "ok.py", "import pyperf\npyperf.Runner().bench_func('a', len, 'x')\n")
    o = vernier("pyperf", str(script), "--compare-to", sys.executable, cwd=tmp_path)
    assert o.returncode == 2 and "--compare-to is not supported: compare two interpreters with `vernier compare" in o.stderr, o


def test_a_script_with_its_own_options_registers_what_they_say(tmp_path):
    script = write(tmp_path, "own.py", """
        import pyperf

        runner = pyperf.Runner(values=5)
        runner.argparser.add_argument("--size", type=int, default=10)
        runner.metadata["description"] = "sums"
        args = runner.parse_args()
        assert runner.args is args and runner.is_worker()
        t0 = pyperf.perf_counter()
        runner.bench_func("sum/%d" % args.size, sum, list(range(args.size)))
        runner.timeit("join", "'-'.join(w)", setup="w = ['ab'] * 10", teardown="del w", duplicate=2)
    """)
    o = vernier("run", "--quick", "--no-memory", "--json", "r.json", "--",
                *pyperf_cmd(script, "--size", "100"), cwd=tmp_path)
    assert o.returncode == 0, (o.stdout, o.stderr)
    r = check_result(tmp_path / "r.json", ["sum/100", "join"], o)
    assert r["benchmarks"][1]["throughput"] == {"items_per_iter": 2}, r["benchmarks"][1]


def test_bench_custom_measures_the_seconds_the_body_returns(tmp_path):
    # The body sleeps outside its own clock: the figure is the timed part's only.
    script = write(tmp_path, "custom.py", """
        import time, vernier

        def timed(iters, n):
            total = 0.0
            for _ in range(iters):
                time.sleep(0.001)
                t0 = time.perf_counter()
                sum(range(n))
                total += time.perf_counter() - t0
            return total

        vernier.bench_custom("sum_range", timed, 100)
        vernier.bench("sleep", time.sleep, 0.001)
        vernier.main()
    """)
    o = subprocess.run([sys.executable, str(script), "--quick", "--no-memory", "--json", "r.json"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json")))
    assert o.returncode == 0, (o.stdout, o.stderr)
    r = check_result(tmp_path / "r.json", ["sum_range", "sleep"], o)
    custom, sleep = (b["per_iter"]["median_ns"] for b in r["benchmarks"])
    assert custom * 5 < sleep, (custom, sleep)


def test_what_follows_the_last_registration_runs_after_the_measurements(tmp_path):
    script = write(tmp_path, "cleanup.py", """
        import os
        import pyperf

        state = {"open": True}

        def f():
            if not state["open"]:
                raise RuntimeError("measured after the clean-up")

        runner = pyperf.Runner()
        try:
            runner.bench_func("a", f)
            runner.bench_func("b", f)
        finally:
            state["open"] = False
            if runner.is_worker():
                open("cleaned-%d" % os.getpid(), "w").close()
    """)
    o = vernier("run", "--quick", "--no-memory", "--json", "r.json", "--", *pyperf_cmd(script),
                cwd=tmp_path)
    assert o.returncode == 0, (o.stdout, o.stderr)
    check_result(tmp_path / "r.json", ["a", "b"], o)
    assert list(tmp_path.glob("cleaned-*")), "the script's finally ran in its workers"


def test_a_spawned_multiprocessing_child_imports_the_stand_in_too(pyperf_sdist, tmp_path):
    # A `spawn` child imports the script again (as __mp_main__); with the real pyperf
    # importable as well, it must get the stand-in, as its parent did.
    script = write(tmp_path, "spawned.py", """
        import multiprocessing
        import pyperf

        def f(x):
            return x

        def bench():
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                assert sum(pool.imap(f, range(10))) == 45

        if __name__ == "__main__":
            pyperf.Runner().bench_func("spawn_pool", bench)
    """)
    o = vernier("run", "--quick", "--no-memory", "--processes", "2", "--json", "r.json", "--",
                *pyperf_cmd(script), cwd=tmp_path, env={"PYTHONPATH": str(pyperf_sdist)})
    assert o.returncode == 0, (o.stdout, o.stderr)
    check_result(tmp_path / "r.json", ["spawn_pool"], o)


def test_a_custom_timed_loop_sends_the_seconds_its_body_returned():
    loop = _loops.custom_loop(lambda n, per: n * per, (0.001,))
    assert loop.time(5) == 5_000_000
    reads = iter([100, 175])
    assert loop.time(5, lambda: next(reads)) == 75  # another timer: its own bracket
    for bad in (-1.0, float("nan"), None, True):
        with pytest.raises(ValueError, match="must return the seconds"):
            _loops.custom_loop(lambda n, b=bad: b, name="x").time(1)
