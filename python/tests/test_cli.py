"""`python -m vernier` is the Rust CLI; `python -m vernier timeit` measures a statement."""
import json
import os
import subprocess
import sys


def vernier(*args, tmp_path, **kw):
    env = dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json"))
    return subprocess.run([sys.executable, "-m", "vernier", *args], capture_output=True,
                          text=True, env=env, cwd=tmp_path, **kw)


def test_python_m_vernier_is_the_cli(tmp_path):
    o = vernier("--version", tmp_path=tmp_path)
    assert o.returncode == 0 and o.stdout.startswith("vernier "), o
    o = vernier("--help", tmp_path=tmp_path)
    for command in ("run", "compare", "report", "history", "export"):
        assert "\n  " + command in o.stdout, o.stdout


def test_a_bad_command_line_is_an_error_with_status_1(tmp_path):
    o = vernier("frobnicate", tmp_path=tmp_path)
    assert o.returncode == 1 and "frobnicate" in o.stderr, o


def test_the_console_command_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "vernier")
    o = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert o.returncode == 0 and o.stdout.startswith("vernier "), o


def test_timeit_measures_a_statement_in_workers(tmp_path):
    o = vernier("timeit", "--quick", "--json", "r.json", "-s", "x = list(range(1000))", "sum(x)",
                tmp_path=tmp_path)
    assert o.returncode == 0, o
    assert "sum(x)" in o.stdout, o.stdout
    r = json.loads((tmp_path / "r.json").read_text())
    (b,) = r["benchmarks"]
    assert b["name"] == "sum(x)" and b["status"] == "ok", b
    assert r["machine"]["worker_impl"].startswith("vernier-python/")
    assert len({p["index"] for p in b["processes"]}) >= 2, "measured in several worker processes"


def test_timeit_names_a_bad_statement(tmp_path):
    o = vernier("timeit", "sum(", tmp_path=tmp_path)
    assert o.returncode == 1 and "the statement is not valid Python" in o.stderr, o


def test_the_demo_worker_command_answers_through_python(tmp_path):
    # `demo --instructions` starts `python -m vernier __demo-worker` (the CLI's self command);
    # by hand, without the runner's pipes, it says who starts it.
    o = vernier("__demo-worker", tmp_path=tmp_path)
    assert o.returncode == 1 and "started by `vernier demo --instructions`" in o.stderr, o


def test_timeit_compare_to_another_interpreter_pairs_processes(tmp_path):
    o = vernier("timeit", "--quick", "--compare-to", sys.executable, "--json", "c.json",
                "-s", "x = list(range(1000))", "sum(x)", tmp_path=tmp_path)
    assert o.returncode == 0, o
    (c,) = json.loads((tmp_path / "c.json").read_text())["comparisons"]
    assert c["name"] == "sum(x)" and c["verdict"] in ("faster", "slower", "no-change", "inconclusive")
    assert c["ci95"][0] <= c["ratio"] <= c["ci95"][1]


def _headline(b):
    """A benchmark's median and next-run interval in the unit it was judged in, and the unit."""
    sp = b.get("speed") or {}
    if b.get("headline_unit") == "cycles" and sp.get("cycles_per_iter") and sp.get("cycles_ci95"):
        return sp["cycles_per_iter"], sp["cycles_ci95"], "cycles"
    return b["per_iter"]["median_ns"], b["per_iter"]["ci95_ns"], "ns"


def test_ten_timeit_runs_name_each_run_that_lands_beyond_the_others(tmp_path):
    # Ten invocations at default options, one ledger (as a user's). What holds in any state
    # of the machine, for each run weighed against its earlier runs in its unit: its interval
    # for the next run covers the medians of the runs before it and its own, and a run whose
    # median lies beyond the earlier runs' range by more than its own interval and 1 % carries
    # a flag that names the shift (`shifted`, or `core-slowed` for a core the machine slowed).
    # (A run cannot know the runs after it: when the machine's level moves later, an earlier
    # run's interval may miss the median of all ten, unflagged and rightly so.)
    runs = []
    for i in range(10):
        o = vernier("timeit", "--json", f"r{i}.json", "-s", "x = list(range(1000))", "sum(x)",
                    tmp_path=tmp_path)
        assert o.returncode == 0, o
        (b,) = json.loads((tmp_path / f"r{i}.json").read_text())["benchmarks"]
        runs.append(b)

    weighed = 0
    for i, b in enumerate(runs):
        value, ci, unit = _headline(b)
        earlier = b.get("earlier_runs") or {}
        key = "median_ns" if unit == "ns" else "median_cycles"
        judged = earlier.get("runs", 0) >= 2 and not earlier.get("earlier_build") and earlier.get(key)
        if not judged:
            continue
        weighed += 1
        lo, hi = earlier[key]
        if not earlier.get("beyond_clock"):
            assert ci[0] <= min(lo, value) and max(hi, value) <= ci[1], (i, unit, value, ci, lo, hi)
        own = b["per_iter"]["run_ci95_ns"] if unit == "ns" else b["speed"]["cycles_run_ci95"]
        margin_above = max(value - own[0], 0.01 * value)
        margin_below = max(own[1] - value, 0.01 * value)
        beyond = value - hi > margin_above or lo - value > margin_below
        codes = {d["code"] for d in b["diagnostics"]}
        if beyond:
            assert codes & {"shifted", "core-slowed"}, (i, unit, value, own, lo, hi, codes)
        elif "shifted" in codes:
            raise AssertionError(("shifted within the earlier runs' reach", i, unit, value, own, lo, hi))
    assert weighed >= 5, [r.get("earlier_runs") for r in runs]
