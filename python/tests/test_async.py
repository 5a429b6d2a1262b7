"""Coroutines: `vernier.bench_async` in a script under `vernier run` and `vernier compare`, the
pytest plugin's `async def` tests, and the bad input each named with its fix."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from vernier import _loops

SCRIPT = textwrap.dedent("""
    import asyncio
    import os
    import vernier

    N = int(os.environ.get("WORK", "2000"))

    async def work(n):
        s = 0
        for i in range(n):
            s += i * i
        await asyncio.sleep(0)
        return s

    vernier.bench_async("work", work, N)
    vernier.bench_async("work on a factory's loop", work, N, loop_factory=asyncio.new_event_loop)
    vernier.main()
""")


def env(tmp_path, **more):
    return dict(os.environ, NO_COLOR="1", VERNIER_LEDGER=str(tmp_path / "ledger.json"),
                **more)


def test_a_script_measures_coroutines_under_vernier_run(tmp_path):
    script = tmp_path / "bench_async.py"
    script.write_text(SCRIPT)
    o = subprocess.run([sys.executable, str(script), "--quick", "--processes", "1", "--json",
                        "r.json"], capture_output=True, text=True, cwd=tmp_path, env=env(tmp_path))
    assert o.returncode == 0, o.stdout + o.stderr
    f = json.loads((tmp_path / "r.json").read_text())
    got = {b["name"]: b for b in f["benchmarks"]}
    assert sorted(got) == ["work", "work on a factory's loop"]
    for b in got.values():
        assert b["status"] == "ok" and b["per_iter"]["median_ns"] > 0, b
    # Each benchmark's executor, and the empty future's cost on it, measured by the runner
    # through the worker (`run empty_future:N`).
    names = {n: b["executor"]["name"] for n, b in got.items()}
    assert names == {"work": "asyncio", "work on a factory's loop": "asyncio.events.new_event_loop"}, names
    for b in got.values():
        assert b["executor"]["empty_future_ns"] > 0, b["executor"]


def test_a_coroutine_doing_ten_percent_more_work_compares_slower(tmp_path):
    script = tmp_path / "bench_async.py"
    script.write_text(SCRIPT)
    o = subprocess.run([sys.executable, "-m", "vernier", "compare", sys.executable, sys.executable,
                        "--old-arg", str(script), "--new-arg", str(script),
                        "--old-env=WORK=2000", "--new-env=WORK=2200", "--filter", "^work$",
                        "--json", "c.json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env(tmp_path))
    assert o.returncode == 0, o.stdout + o.stderr
    c = json.loads((tmp_path / "c.json").read_text())["comparisons"]
    assert [x["name"] for x in c] == ["work"]
    # What an honest comparison guarantees in any machine state: never the wrong direction,
    # and an interval that holds the slowdown; "slower" whenever the run could detect a change
    # half this size (a run that had that power and missed a 10 % change is wrong). On a
    # loaded machine the process pairs can spread so far that it could not: inconclusive, said.
    x = c[0]
    assert x["verdict"] in ("slower", "inconclusive"), o.stdout
    assert x["ci95"][1] > 1.0, o.stdout
    if x["smallest_detectable"] <= 0.05:
        assert x["verdict"] == "slower", o.stdout
    else:
        assert x["verdict"] == "slower" or "the run could detect a change of" in o.stdout, o.stdout


async def _sum(n):
    return sum(range(n))


def test_every_await_of_a_sample_runs_in_one_loop_of_its_own():
    loops = []

    def factory():
        import asyncio

        ev = asyncio.new_event_loop()
        loops.append(ev)
        return ev

    async def body():
        import asyncio

        seen.add(id(asyncio.get_running_loop()))

    seen = set()
    loop = _loops.async_loop(body, (), loop_factory=factory)
    loop.time(50)
    loop.time(50)
    assert len(loops) == 2 and len(seen) == 2
    assert all(ev.is_closed() for ev in loops)


def test_bad_input_is_named_with_the_fix():
    def plain():
        return 3

    with pytest.raises(TypeError, match=r"returned 3, not a coroutine: give bench_async an `async def`"):
        _loops.async_loop(plain, (), name="plain").time(5)
    coro = _sum(3)
    with pytest.raises(TypeError, match=r"a coroutine, not a coroutine function: pass the function"):
        _loops.async_loop(coro, (), name="called")
    with pytest.raises(TypeError, match=r"loop_factory of 'nope' returned 1, not an event loop"):
        _loops.async_loop(_sum, (3,), loop_factory=lambda: 1, name="nope").time(5)

    async def closes():
        import asyncio

        asyncio.get_running_loop().close()

    with pytest.raises(RuntimeError, match=r"stopped or closed the event loop it runs on .*leave its loop alone"):
        _loops.async_loop(closes, (), name="closer").time(5)

    async def stops():
        import asyncio

        asyncio.get_running_loop().stop()
        await asyncio.sleep(0)

    with pytest.raises(RuntimeError, match=r"stopped or closed the event loop"):
        _loops.async_loop(stops, (), name="stopper").time(5)


def test_a_bad_coroutine_fails_alone_and_the_others_are_kept(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(textwrap.dedent("""
        import asyncio
        import vernier

        async def fine():
            await asyncio.sleep(0)

        async def closes():
            asyncio.get_running_loop().close()

        vernier.bench_async("fine", fine)
        vernier.bench_async("closes", closes)
        vernier.main()
    """))
    o = subprocess.run([sys.executable, str(script), "--quick", "--processes", "1", "--json",
                        "r.json"], capture_output=True, text=True, cwd=tmp_path, env=env(tmp_path))
    assert o.returncode != 0
    f = json.loads((tmp_path / "r.json").read_text())
    got = {b["name"]: b for b in f["benchmarks"]}
    assert got["fine"]["status"] == "ok"
    assert got["closes"]["status"] == "failed"
    assert "leave its loop alone" in got["closes"]["error"], got["closes"]["error"]


def test_pytest_measures_an_async_def_test_through_the_same_path(pytester):
    pytester.makepyfile(test_async_bench="""
        import asyncio
        import pytest

        @pytest.fixture
        def n():
            return 500

        async def test_whole(benchmark, n):
            s = sum(i * i for i in range(n))
            await asyncio.sleep(0)
            assert s > 0

        async def square(n):
            return n * n

        def test_one_coroutine(benchmark):
            assert benchmark(square, 7) == 49
    """)
    pytester._monkeypatch.setenv("VERNIER_LEDGER", str(pytester.path / "ledger.json"))
    r = pytester.runpytest_subprocess("-p", "no:benchmark", "-p", "no:cacheprovider",
                                      "--vernier-quick", "--vernier-json", "a.json")
    r.assert_outcomes(passed=2)
    f = json.loads((pytester.path / "a.json").read_text())
    got = {b["name"]: b for b in f["benchmarks"]}
    assert sorted(got) == ["test_one_coroutine", "test_whole"]
    assert all(b["status"] == "ok" for b in got.values())
