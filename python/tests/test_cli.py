"""`python -m vernier` is the Rust CLI; `python -m vernier timeit` measures a statement."""
import json
import os
import subprocess
import sys


def vernier(*args, tmp_path, **kw):
    env = dict(os.environ, NO_COLOR="1", VERNIER_SPEED_FILE=str(tmp_path / "core-speed.json"))
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
