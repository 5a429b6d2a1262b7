#!/usr/bin/env python3
"""Do the next-run intervals cover where the next invocations land?

Runs a program several times in a row with `vernier run` (the ledger in use, as on a user's
machine), or re-derives recorded result files in order with `vernier analyze --runs-of` (each
weighed against the re-derived runs before it, as `vernier run` weighs a run against the
ledger), then checks, benchmark by benchmark, that from the third run on every unflagged run's
interval for the next run, in the unit the run was judged in (`headline_unit`: cycles or ns),
covers the median of all the runs. Prints the coverage and the median half-widths of the
intervals: the run's own, the interval for the next run, and (with --before BIN) the interval
for the next run that another build's `vernier analyze` derives from the same files.

    scripts/next-run-coverage.py live [--runs 10] [--dir DIR] [--source examples/cpp/kernels.cpp]
    scripts/next-run-coverage.py replay FILE... [--dir DIR]
    scripts/next-run-coverage.py check FILE...

`VERNIER` names the vernier binary (default: target/release/vernier, else `vernier` on the
PATH). `live` compiles the source with `g++ -O2 -std=c++17 -Iinclude` into DIR; `replay`
uses a ledger of its own in DIR (`VERNIER_LEDGER`), so earlier replays do not count.
Exit status 1 when an interval misses.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Codes about the machine, not the row: a row carrying only these is unflagged.
NOT_ABOUT_THE_ROW = {"counters-unavailable"}
# From this run on (1-based), an unflagged interval must cover the median of all runs.
FROM_RUN = 3


def vernier_bin():
    if os.environ.get("VERNIER"):
        return os.environ["VERNIER"]
    built = os.path.join(ROOT, "target", "release", "vernier")
    return built if os.path.exists(built) else shutil.which("vernier") or "vernier"


def run(cmd, env=None):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 2):
        sys.exit(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def live(args, vernier):
    exe = os.path.join(args.dir, "kernels")
    run(["g++", "-O2", "-std=c++17", "-I" + os.path.join(ROOT, "include"), args.source, "-o", exe])
    files = []
    for i in range(1, args.runs + 1):
        out = os.path.join(args.dir, f"run{i}.json")
        run([vernier, "run", "--json", out, "--", exe])
        print(f"run {i} of {args.runs}: {out}", file=sys.stderr)
        files.append(out)
    return files


def replay(args, vernier):
    env = dict(os.environ, VERNIER_LEDGER=os.path.join(args.dir, "ledger.json"))
    files = []
    for i, f in enumerate(args.files, 1):
        out = os.path.join(args.dir, f"again{i}.json")
        run([vernier, "analyze", f, "--runs-of", "replay", "--json", out], env=env)
        files.append(out)
    return files


def rederive(files, other, directory):
    """The same files re-derived by another build's `vernier analyze` (its rules, the earlier
    runs each file keeps)."""
    env = dict(os.environ, VERNIER_LEDGER="none")
    out = []
    for i, f in enumerate(files, 1):
        o = os.path.join(directory, f"before{i}.json")
        run([other, "analyze", f, "--json", o], env=env)
        out.append(o)
    return out


def judged(b):
    """(unit, median, own interval, next-run interval) in the benchmark's headline unit."""
    s = b.get("speed") or {}
    if b.get("headline_unit") == "cycles" and s.get("cycles_per_iter"):
        return "cycles", s["cycles_per_iter"], s.get("cycles_run_ci95") or s["cycles_ci95"], s["cycles_ci95"]
    p = b["per_iter"]
    return "ns", p["median_ns"], p.get("run_ci95_ns", p["ci95_ns"]), p["ci95_ns"]


def flags(b):
    return [d["code"] for d in b["diagnostics"] if d["code"] not in NOT_ABOUT_THE_ROW]


def load(files):
    runs = []
    for f in files:
        with open(f) as fh:
            d = json.load(fh)
        runs.append({b["name"]: b for b in d["benchmarks"] if b["status"] == "ok"})
    return runs


def half_width(m, ci):
    return max(m - ci[0], ci[1] - m) / m * 100


def report(files, before=None):
    runs = load(files)
    earlier = load(before) if before else None
    names = [n for n in runs[0] if all(n in r for r in runs)]
    missed = covered = 0
    own_w, next_w, before_w = [], [], []
    print(f"{'benchmark':<10} {'run':>3} {'unit':>6} {'median':>12} {'next run':>28} {'±own %':>7}"
          f" {'±next %':>8}{'  ±before %' if before else ''}  verdict")
    for name in names:
        by_unit = {}
        for r in runs:
            unit, m, _, _ = judged(r[name])
            by_unit.setdefault(unit, []).append(m)
        for i, r in enumerate(runs, 1):
            b = r[name]
            unit, m, own, nxt = judged(b)
            centre = statistics.median(by_unit[unit])
            f = flags(b)
            bw = ""
            if i >= FROM_RUN:
                own_w.append(half_width(m, own))
                next_w.append(half_width(m, nxt))
                if earlier:
                    ob = earlier[i - 1][name]
                    ou, om, _, onxt = judged(ob)
                    if ou == unit:
                        before_w.append(half_width(om, onxt))
                        bw = f"  {half_width(om, onxt):>9.3f}"
            if i < FROM_RUN:
                verdict = "(first runs)"
            elif f:
                verdict = "flagged " + " ".join(f)
            elif nxt[0] <= centre <= nxt[1]:
                verdict = "covers"
                covered += 1
            else:
                verdict = f"MISSES {centre:.4f}"
                missed += 1
            print(f"{name:<10} {i:>3} {unit:>6} {m:>12.4f} [{nxt[0]:>12.4f}, {nxt[1]:>12.4f}]"
                  f" {half_width(m, own):>7.3f} {half_width(m, nxt):>8.3f}{bw}  {verdict}")
        print(f"{'':<10} median of the {len(runs)} in {unit}: {statistics.median(by_unit[unit]):.4f}"
              if len(by_unit) == 1 else
              f"{'':<10} medians by unit: " + ", ".join(f"{u} {statistics.median(v):.4f}" for u, v in by_unit.items()))
    print(f"\nfrom run {FROM_RUN} on: {covered} unflagged intervals cover the median of the runs, {missed} miss")
    if own_w:
        print(f"median half-width from run {FROM_RUN} on, as % of the median: the run's own {statistics.median(own_w):.3f}, "
              f"for the next run {statistics.median(next_w):.3f}"
              + (f", for the next run before (--before) {statistics.median(before_w):.3f}" if before_w else ""))
    return missed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["live", "replay", "check"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--dir")
    ap.add_argument("--source", default=os.path.join(ROOT, "examples", "cpp", "kernels.cpp"))
    ap.add_argument("--before", metavar="BIN", help="another build's vernier, whose analyze gives the 'before' widths")
    args = ap.parse_args()
    args.dir = args.dir or tempfile.mkdtemp(prefix="next-run-")
    os.makedirs(args.dir, exist_ok=True)
    vernier = vernier_bin()
    if args.mode == "live":
        files = live(args, vernier)
    elif args.mode == "replay":
        files = replay(args, vernier)
    else:
        files = args.files
    if len(files) < FROM_RUN:
        sys.exit(f"need at least {FROM_RUN} runs, got {len(files)}")
    before = rederive(files, args.before, args.dir) if args.before else None
    sys.exit(1 if report(files, before) else 0)


if __name__ == "__main__":
    main()
