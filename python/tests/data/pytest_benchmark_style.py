"""A test file written for pytest-benchmark's `benchmark` fixture, unchanged."""
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_fib(benchmark):
    result = benchmark(fib, 10)
    assert result == 55


def test_sorted_kwargs(benchmark):
    data = list(range(200, 0, -1))
    result = benchmark(sorted, data, reverse=True)
    assert result[0] == 200


def test_pedantic_setup(benchmark):
    def setup():
        return (list(range(100, 0, -1)),), {}

    result = benchmark.pedantic(sorted, setup=setup, rounds=10, iterations=1)
    assert result[0] == 1


def test_pedantic_args(benchmark):
    benchmark.extra_info["what"] = "join"
    result = benchmark.pedantic("-".join, args=(["a", "b"],), rounds=5, iterations=10)
    assert result == "a-b"


def test_not_a_benchmark():
    assert time.perf_counter() > 0
