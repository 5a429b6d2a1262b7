#!/usr/bin/env python3
"""A history store of synthetic runs with steps at known commits, for `vernier history publish`.

    scripts/synthetic-store.py --series 1000 --commits 300 --db /tmp/store.sqlite \
        [--vernier target/release/vernier] [--publish DIR]

Makes SERIES series (benchmarks `bench/NNNN` on two machines, `m-a` and `m-b`) over COMMITS
commits `c0000`, `c0001`, ...: each run's median is 100 ns times a level, with a seeded noise of
±0.3 % and an interval of ±0.5 %; every tenth series steps up 10 % (every twentieth down 9 %) at
a commit of its own, listed in DB.steps.json. Each commit's runs are one result file per
machine, stored with `vernier history save --as-recorded` (figures kept as written, so the store
holds exactly what is planted). With --publish DIR, publishes the site and prints the time it
took, the index page's size, and whether the change points page holds every planted step at
its commit and nothing else (exit 1 when not).
"""

import argparse
import html
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "crates/vernier/tests/fixtures/results/run-cpp-v0.1.0.json")
MACHINES = ["m-a", "m-b"]


def steps_of(series):
    """The planted steps: (series index, commit index, factor)."""
    out = []
    for k in range(series):
        if k % 10 == 0:
            factor = 1.10 if k % 20 == 0 else 0.91
            out.append((k, 20 + (k * 37) % 250, factor))
    return out


def names(series):
    """Series k: benchmark bench/NNNN on machine m-a (even k) or m-b (odd k)."""
    return [(f"bench/{k // 2:04d}", MACHINES[k % 2]) for k in range(series)]


def result_file(template, benches, commit_index, steps_at, rng):
    doc = dict(template)
    doc["benchmarks"] = []
    base = {k: v for k, v in template["benchmarks"][0].items()
            if k not in ("counters", "interrupted")}
    # A few raw samples keep the file whole; --as-recorded stores the figures as written.
    base["samples"] = {k: (v[:5] if isinstance(v, list) else {c: x[:5] for c, x in v.items()})
                       for k, v in base["samples"].items()}
    base["warmup"] = dict(base["warmup"], samples=0)
    base["steady_samples"] = 5
    for k, name in benches:
        level = 1.0
        for (s, c, f) in steps_at.get(k, []):
            if commit_index >= c:
                level *= f
        median = 100.0 * (1 + k % 7) * level * (1 + rng.uniform(-0.003, 0.003))
        b = json.loads(json.dumps(base))
        b["name"] = name
        b["diagnostics"] = []
        b["processes"] = []
        b["per_iter"]["median_ns"] = median
        b["per_iter"]["min_ns"] = median * 0.99
        b["per_iter"]["mean_ns"] = median
        b["per_iter"]["ci95_ns"] = [median * 0.995, median * 1.005]
        doc["benchmarks"].append(b)
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--db", required=True)
    ap.add_argument("--vernier", default=os.path.join(ROOT, "target/release/vernier"))
    ap.add_argument("--publish", metavar="DIR")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    if os.path.exists(a.db):
        sys.exit(f"{a.db} exists: give a new path (the script adds every run again)")
    template = json.load(open(TEMPLATE))
    rng = random.Random(a.seed)
    steps = [s for s in steps_of(a.series) if s[1] < a.commits]
    steps_at = {}
    for s in steps:
        steps_at.setdefault(s[0], []).append(s)
    all_names = names(a.series)
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for c in range(a.commits):
            commit = f"c{c:04d}"
            for m in MACHINES:
                benches = [(k, n) for k, (n, mm) in enumerate(all_names) if mm == m]
                doc = result_file(template, benches, c, steps_at, rng)
                path = os.path.join(tmp, f"{m}.json")
                with open(path, "w") as f:
                    json.dump(doc, f)
                subprocess.run([a.vernier, "history", "save", path, "--as-recorded", "--commit", commit,
                                "--branch", "main", "--machine", m, "--run-id", f"{commit}-{m}",
                                "--db", a.db], check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    planted = [{"name": all_names[k][0], "machine": all_names[k][1], "commit": f"c{c:04d}", "factor": f}
               for (k, c, f) in steps]
    with open(a.db + ".steps.json", "w") as f:
        json.dump({"series": a.series, "commits": a.commits, "steps": planted}, f, indent=1)
    print(f"store {a.db}: {a.series} series x {a.commits} commits, {len(planted)} steps "
          f"({a.db}.steps.json), made in {time.time() - started:.1f} s")
    if a.publish:
        t0 = time.time()
        subprocess.run([a.vernier, "history", "publish", "--db", a.db, a.publish], check=True)
        took = time.time() - t0
        size = os.path.getsize(os.path.join(a.publish, "index.html"))
        print(f"published in {took:.1f} s; index.html {size / 1e6:.2f} MB")
        check_steps(a.publish, planted)


def check_steps(site, planted):
    """Every planted step on the change points page at its commit, and no other change point."""
    index = open(os.path.join(site, "index.html")).read()
    rows = re.findall(r'<tr data-name="([^"]*)" data-machine="([^"]*)".*?href="s/([0-9a-f]+)\.html"', index)
    slug = {s: (html.unescape(n), m) for n, m, s in rows}
    found = set()
    page = open(os.path.join(site, "regressions.html")).read()
    for sec in page.split('<section class="cp" data-commit="')[1:]:
        commit = sec[:sec.index('"')]
        for s in re.findall(r'<tr data-series="([0-9a-f]+)"', sec):
            found.add(slug[s] + (commit,))
    want = {(p["name"], p["machine"], p["commit"]) for p in planted}
    missing, extra = want - found, found - want
    print(f"change points page: {len(want) - len(missing)} of {len(want)} planted steps at their "
          f"commits; {len(missing)} missing, {len(extra)} change points not planted")
    if missing or extra:
        sys.exit(f"missing {sorted(missing)[:5]}, not planted {sorted(extra)[:5]}")


if __name__ == "__main__":
    main()
