"""``python -m vernier timeit [-s SETUP] STMT…``: a statement measured as ``timeit`` measures
it (compiled into the loop, setup untimed, garbage collection off), by the runner in worker
processes, with a figure, its interval and the diagnostics.

The statement's worker is this module started again with ``--worker`` (the runner launches
it); every option of ``vernier run`` that takes a value is listed below, the flags too, so
the statement's words are never mistaken for options.
"""

import argparse
import os
import sys

from . import _loops, _worker, cli

# `vernier run`'s options passed through (with a value, then flags).
_RUN_VALUE_OPTIONS = [
    "--json", "--html", "--time", "--processes", "--cpu", "--counters", "--timeout",
    "--db", "--commit", "--branch", "--machine", "--run-id", "--env-pad",
]
_RUN_FLAGS = ["--quick", "--verbose", "--fifo", "--no-aslr", "--save", "--keep-interrupted", "--no-memory"]
_COMPARE_VALUE_OPTIONS = ["--json", "--html", "--time", "--processes", "--cpu", "--threshold"]
_COMPARE_FLAGS = ["--quick", "--fifo", "--no-aslr", "--fail-on-regression"]


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m vernier timeit",
        description="Measure a Python statement with Vernier's engine: worker processes, "
        "warm-up found in the data, a median with its interval, diagnostics.",
    )
    p.add_argument("stmt", nargs="*", help="the statement (several: one line each, as timeit)")
    p.add_argument("-s", "--setup", action="append", default=[],
                   help="run once per sample before the clock starts (repeatable)")
    p.add_argument("-g", "--keep-gc", action="store_true",
                   help="keep the garbage collector on during the samples (off by default, as timeit)")
    p.add_argument("--compare-to", metavar="PYTHON",
                   help="compare this interpreter (NEW) with PYTHON (OLD), in paired processes")
    p.add_argument("-v", "--verbose", action="store_true", help="the verbose report")
    for o in _RUN_VALUE_OPTIONS + ["--threshold"]:
        p.add_argument(o, metavar=o.strip("-").upper().replace("-", "_"), help=argparse.SUPPRESS)
    for o in _RUN_FLAGS + ["--fail-on-regression"]:
        if o != "--verbose":
            p.add_argument(o, action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.epilog = ("Options of `vernier run` also accepted: " + ", ".join(_RUN_VALUE_OPTIONS + _RUN_FLAGS)
                + "; with --compare-to, those of `vernier compare`: --threshold, --fail-on-regression.")
    return p


def _passed(ns, values, flags):
    out = []
    for o in values:
        v = getattr(ns, o.strip("-").replace("-", "_"), None)
        if v is not None:
            out += [o, v]
    for o in flags:
        if getattr(ns, o.strip("-").replace("-", "_"), False):
            out.append(o)
    return out


def _statement(ns):
    return "\n".join(ns.stmt) or "pass", "\n".join(ns.setup) or "pass"


def _worker_args(ns):
    args = ["-m", "vernier.timeit", "--worker"]
    for s in ns.setup:
        args += ["--setup=" + s]
    if ns.keep_gc:
        args.append("--keep-gc")
    return args + ["--"] + list(ns.stmt)


def main(argv):
    ns = _parser().parse_args(argv)
    stmt, setup = _statement(ns)
    if ns.worker:
        loop = _loops.statement_loop(stmt, setup, {"__name__": "__main__"}, gc_on=ns.keep_gc)
        return _worker.serve([(stmt.replace("\n", "; "), loop)])
    try:  # a bad statement is named here, not by a worker that dies
        _loops.statement_loop(stmt, setup)
    except ValueError as e:
        sys.stderr.write("vernier timeit: {}\n".format(e))
        return 1
    if ns.compare_to:
        return _compare(ns)
    run = _passed(ns, _RUN_VALUE_OPTIONS, _RUN_FLAGS)
    return cli(["run"] + run + ["--", sys.executable] + _worker_args(ns))


def _compare(ns):
    """``vernier compare`` of PYTHON (OLD) and this interpreter (NEW), the same statement's
    worker on each. The other interpreter imports this package, its native module (stable
    ABI, CPython 3.8 or later) included."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = os.environ.get("PYTHONPATH")
    path = package_parent + (os.pathsep + env if env else "")
    args = ["compare", ns.compare_to, sys.executable, "--old-env=PYTHONPATH=" + path]
    for a in _worker_args(ns):
        args += ["--old-arg=" + a, "--new-arg=" + a]
    return cli(args + _passed(ns, _COMPARE_VALUE_OPTIONS, _COMPARE_FLAGS))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
