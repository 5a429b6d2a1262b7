"""Type stubs of ``vernier._native``, the package's Rust module (``python/src/lib.rs``)."""

from os import PathLike
from typing import Callable, List, Optional, Tuple, Union

__version__: str

def main(argv: List[str], self_command: List[str]) -> int:
    """Run the ``vernier`` command line ``argv`` (program name first); the exit status.
    ``self_command`` starts this CLI again (``[python, -m, vernier]``)."""

def serve(
    fds: str,
    *,
    hello: Tuple[float, float, bool, str, str],
    names: List[str],
    alloc_free: List[bool],
    run: Callable[
        [Optional[int], int, int, bool],
        Tuple[List[int], Optional[List[int]], Optional[List[Tuple[int, int, int, int]]],
              Optional[str], List[Tuple[str, str]]],
    ],
    probe: Callable[[], str],
    throughput: List[Optional[Tuple[str, int]]] = ...,
    complexity: List[Optional[Tuple[Optional[str], Optional[float], Optional[str]]]] = ...,
) -> None:
    """Serve the worker protocol on ``fds`` (``VERNIER_FDS``, ``R,W``) until the runner says
    ``quit``: the Rust crate's loop and parser, calling ``run(which, iters, samples, memory)``
    for each batch (``which``: an index, or None for the empty loop) and ``probe()`` for the
    ``probe`` reply. ``throughput``: each benchmark's declared work per iteration,
    ``("bytes", n)``, ``("items", n)`` or None."""

def measure(
    name: str,
    run: Callable[[int, Callable[[], int]], int],
    *,
    time: Optional[float] = None,
    quick: bool = False,
    rounds: int = 0,
    empty_iter_ns: Optional[float] = None,
    uncounted: Optional[str] = None,
) -> str:
    """Measure one benchmark in this process: ``run(iters, clock)`` runs ``iters``
    iterations between two calls of ``clock`` and returns the ticks between them. The result
    file (schema 2) as JSON text; a Python exception in ``run`` is raised again."""

def render(results: List[str]) -> str:
    """Result files' JSON texts (their benchmarks in order) as the table ``vernier run``
    prints."""

def merge_results(results: List[str]) -> str:
    """Result files' JSON texts as one (the first's header, every benchmark)."""

def write_result(path: Union[str, "PathLike[str]"], text: str) -> None:
    """Write a result file atomically."""

def save(results: List[str], *, db: Optional[str] = None, commit: Optional[str] = None,
         branch: Optional[str] = None) -> None:
    """Keep result files' JSON texts (merged) in the history store, as ``vernier run --save``."""

def interposer_path() -> str:
    """The allocation-counting interposer ``vernier run`` preloads into its counting process
    (embedded in the CLI), written to the cache directory on first use."""
