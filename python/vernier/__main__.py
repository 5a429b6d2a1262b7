"""``python -m vernier …`` and the ``vernier`` console command: the same CLI as the Rust
binary (``run``, ``compare``, ``report``, ``history``, …), plus ``timeit`` and ``pyperf``
(a pyperf script, unchanged: docs/pyperf.md)."""

import sys


def console(argv=None):
    """Entry point of the ``vernier`` command; returns the exit status."""
    from . import cli

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "timeit":
        from . import timeit

        return timeit.main(argv[1:])
    if argv and argv[0] == "pyperf":
        from . import _pyperf

        return _pyperf.main(argv[1:])
    return cli(argv)


if __name__ == "__main__":
    sys.exit(console())
