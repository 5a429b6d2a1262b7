"""The pytest plugin: a file written for pytest-benchmark's fixture runs unchanged."""
import json
import os
import shutil

HERE = os.path.dirname(__file__)


def run(pytester, *args):
    shutil.copy(os.path.join(HERE, "data", "pytest_benchmark_style.py"),
                pytester.path / "test_pytest_benchmark_style.py")
    pytester._monkeypatch.setenv("VERNIER_LEDGER", str(pytester.path / "ledger.json"))
    pytester._monkeypatch.setenv("NO_COLOR", "1")
    # `-p no:benchmark`: pytest-benchmark, when installed too, stays out of the way.
    return pytester.runpytest_subprocess("-p", "no:benchmark", "-p", "no:cacheprovider", *args)


def test_a_pytest_benchmark_file_runs_unchanged(pytester):
    r = run(pytester, "--vernier-quick", "--vernier-json", "out.json")
    r.assert_outcomes(passed=5)
    out = r.stdout.str()
    assert "vernier: 4 benchmark(s)" in out, out
    f = json.loads((pytester.path / "out.json").read_text())
    names = [b["name"] for b in f["benchmarks"]]
    assert names == ["test_fib", "test_sorted_kwargs", "test_pedantic_setup", "test_pedantic_args"]
    assert all(b["status"] == "ok" for b in f["benchmarks"]), f["benchmarks"]
    for name in names:
        assert "\n" + name in out, out
    # Allocations are not counted in the pytest process: each benchmark says so, and the
    # session's table says why, once.
    for b in f["benchmarks"]:
        assert "memory" not in b, b["memory"]
        assert "memory-unavailable" in [d["code"] for d in b["diagnostics"]], b["diagnostics"]
    assert out.count("allocations per iteration: not counted: the benchmark fixture measures in "
                     "the pytest process") == 1, out


def test_disabled_runs_each_function_once_without_measuring(pytester):
    r = run(pytester, "--vernier-disable")
    r.assert_outcomes(passed=5)
    assert "vernier:" not in r.stdout.str()


def test_an_exception_in_the_benchmark_fails_the_test(pytester):
    pytester.makepyfile(test_fail="""
        def test_raises(benchmark):
            calls = []
            def f():
                calls.append(1)
                if len(calls) > 3:
                    raise KeyError("boom")
            benchmark(f)
    """)
    r = pytester.runpytest_subprocess("-p", "no:benchmark", "--vernier-quick")
    r.assert_outcomes(failed=1)
    assert "KeyError" in r.stdout.str()


def test_benchmarks_are_analysed_against_the_python_loops_own_cost(pytester):
    # The loop around an empty statement is measured once per session and is the result's
    # empty loop: a few ns per iteration of a `for`, not the Rust harness's fraction of a ns.
    pytester.makepyfile(test_empty="""
        def test_nothing(benchmark):
            benchmark.pedantic(int)
    """)
    pytester._monkeypatch.setenv("VERNIER_LEDGER", str(pytester.path / "ledger.json"))
    r = pytester.runpytest_subprocess("-p", "no:benchmark", "--vernier-quick", "--vernier-json", "e.json")
    r.assert_outcomes(passed=1)
    f = json.loads((pytester.path / "e.json").read_text())
    empty = f["harness"]["empty_iter_ns"]
    assert empty > 1.0, "the Python loop's cost, not the Rust harness's (well under 1 ns): {}".format(empty)


def test_results_are_saved_and_compared_through_the_history_store(pytester):
    db = "sqlite:" + str(pytester.path / "history.sqlite")
    r = run(pytester, "--vernier-quick", "--vernier-save", "--vernier-db", db,
            "--vernier-commit", "c0ffee", "--vernier-branch", "main", "-k", "fib or kwargs")
    r.assert_outcomes(passed=2, deselected=3)
    assert "saved run" in r.stderr.str() and "c0ffee" in r.stderr.str(), r.stderr.str()
    # The next session against that run: every benchmark compared, unpaired, by name.
    r = run(pytester, "--vernier-quick", "--vernier-compare", "c0ffee", "--vernier-db", db,
            "-k", "fib or kwargs")
    r.assert_outcomes(passed=2, deselected=3)
    out = r.stdout.str()
    assert "Against baseline c0ffee (commit c0ffee on main" in out, out
    rows = [l for l in out.splitlines() if l.startswith(("test_fib ", "test_sorted_kwargs "))]
    verdicts = ("faster", "slower", "no-change", "inconclusive")
    assert len([l for l in rows if any(v in l for v in verdicts)]) == 2, out
    # A reference the store does not have is named, and the tests' outcome stands.
    r = run(pytester, "--vernier-quick", "--vernier-compare", "nosuch", "--vernier-db", db, "-k", "fib")
    r.assert_outcomes(passed=1, deselected=4)
    assert "no stored run at commit or branch 'nosuch'" in r.stderr.str(), r.stderr.str()


def test_under_xdist_benchmarks_run_as_tests_and_the_session_says_they_were_not_measured(pytester):
    try:
        import xdist  # noqa: F401
    except ImportError:
        raise AssertionError("pytest-xdist is needed for this test: pip install pytest-xdist")
    r = run(pytester, "-n", "2", "--vernier-json", "out.json")
    r.assert_outcomes(passed=5)
    out = r.stdout.str()
    assert "benchmarks not measured under pytest-xdist" in out and "pytest -n 0" in out, out
    assert not (pytester.path / "out.json").exists()
    # `-n 0` (xdist installed, not distributing) measures them.
    r = run(pytester, "-n", "0", "--vernier-quick", "-k", "fib")
    r.assert_outcomes(passed=1, deselected=4)
    assert "vernier: 1 benchmark(s)" in r.stdout.str()
