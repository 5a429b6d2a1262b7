"""The measured loops: what runs inside the timed region, counted (no timing asserted)."""
import gc

import pytest

from vernier import _loops


def ticks():
    """A fake clock: 0, 1, 2, … (the loop reads it twice)."""
    t = iter(range(100))
    return lambda: next(t)


def test_a_statement_runs_once_per_iteration_after_its_setup_once_per_sample():
    ns = {"log": []}
    loop = _loops.statement_loop("log.append('s')", setup="log.append('setup')", globals=ns)
    assert loop.time(7, ticks()) == 1
    assert ns["log"] == ["setup"] + ["s"] * 7


def test_a_callable_gets_its_arguments_and_keywords():
    seen = []
    loop = _loops.call_loop(lambda a, b, c=0: seen.append((a, b, c)), (1, 2), {"c": 3})
    loop.time(3, ticks())
    assert seen == [(1, 2, 3)] * 3
    seen.clear()
    _loops.call_loop(lambda *a: seen.append(a), (1, 2, 3, 4)).time(2, ticks())
    assert seen == [(1, 2, 3, 4)] * 2


@pytest.mark.parametrize("per,setups", [("iteration", 5), ("sample", 1)])
def test_setup_is_called_per_iteration_or_per_sample_before_the_clock(per, setups):
    calls, order = [], []
    clock = ticks()

    def timer():
        order.append("clock")
        return clock()

    def setup():
        calls.append(1)
        order.append("setup")
        return [3, 1, 2]

    loop = _loops.call_loop(lambda x: order.append(sorted(x)), setup=setup, per=per)
    loop.time(5, timer)
    assert len(calls) == setups
    assert order[:setups] == ["setup"] * setups and order[setups] == "clock"


def test_garbage_collection_is_off_during_the_loop_unless_kept_on():
    states = []
    off = _loops.call_loop(lambda: states.append(gc.isenabled()))
    on = _loops.call_loop(lambda: states.append(gc.isenabled()), gc_on=True)
    assert gc.isenabled()
    off.time(2, ticks())
    assert states == [False, False] and gc.isenabled()
    on.time(1, ticks())
    assert states[-1] is True


def test_a_bad_statement_is_named():
    with pytest.raises(ValueError, match="the statement is not valid Python"):
        _loops.statement_loop("sum(")
    with pytest.raises(ValueError, match="the setup is not valid Python"):
        _loops.statement_loop("pass", setup="x = = 1")
    with pytest.raises(TypeError, match="must be callable"):
        _loops.call_loop(42)
