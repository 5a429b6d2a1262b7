#!/usr/bin/env bash
# What the history costs: the time `--save` adds to a run, and how long `vernier history`
# (terminal, --json) and `vernier history check` take over 1000 runs of 50 benchmarks in SQLite.
#
#   scripts/history-bench.sh [SAVES]
#
# 1. SAVES runs (default 10) of the `chain` kernel of examples/cpp/kernels.cpp, each with
#    --save into a new SQLite store; the cost of each save is the figure vernier prints
#    ("saved run N … in X ms": git, the rows, opening the store, the transaction).
# 2. A store of 1000 runs × 50 benchmarks, made from the first saved run: its result (raw
#    samples included) is copied into every run, and each benchmark gets a series of medians
#    (1 % noise between runs; five benchmarks step up 10 % at run 700), so that the change point
#    search has real work. Then each query is timed 5 times, the median printed.
# Environment: VERNIER (the vernier binary; default: built in release mode), CXX.
set -euo pipefail
cd "$(dirname "$0")/.."
SAVES=${1:-10}
if [[ -z "${VERNIER:-}" ]]; then
    cargo build -q --release -p vernier-cli --bin vernier
    VERNIER=target/release/vernier
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"${CXX:-g++}" -std=c++17 -O2 -Iinclude examples/cpp/kernels.cpp -o "$TMP/k100"

for ((i = 0; i < SAVES; i++)); do
    "$VERNIER" run --quick --filter '^chain$' --counters none --save --db "$TMP/save.sqlite" \
        -- "$TMP/k100" 2>&1 >/dev/null | sed -n 's/.*saved run .* in \([0-9.]*\) ms$/\1/p' \
        >>"$TMP/save.ms"
done
python3 - "$TMP/save.ms" <<'PY'
import statistics, sys
ms = [float(x) for x in open(sys.argv[1])]
print(f"save: {len(ms)} runs, median {statistics.median(ms):.1f} ms, "
      f"min {min(ms):.1f} ms, max {max(ms):.1f} ms (first save creates the store)")
PY

python3 - "$TMP/save.sqlite" "$TMP/big.sqlite" "$VERNIER" <<'PY'
import math, random, shutil, sqlite3, statistics, subprocess, sys, time
src, big, vernier = sys.argv[1:4]
shutil.copy(src, big)
db = sqlite3.connect(big)
result, machine = db.execute("SELECT result, machine_id FROM runs ORDER BY id LIMIT 1").fetchone()
db.execute("DELETE FROM benchmarks")
db.execute("DELETE FROM runs")
rng = random.Random(1)
RUNS, BENCHES = 1000, 50
base = [10.0 * 1.1 ** k for k in range(BENCHES)]
for r in range(RUNS):
    cur = db.execute(
        "INSERT INTO runs (time, commit_id, branch, machine_id, command, result) "
        "VALUES (?, ?, 'main', ?, 'run', ?)",
        (f"2026-01-01T{r // 3600 % 24:02d}:{r // 60 % 60:02d}:{r % 60:02d}Z",
         f"{r:040x}", machine, result))
    run_id = cur.lastrowid
    rows = []
    for b in range(BENCHES):
        m = base[b] * math.exp(rng.gauss(0, 0.01)) * (1.10 if b < 5 and r >= 700 else 1.0)
        rows.append((run_id, f"bench_{b:02d}", "ok", m, m * 0.997, m * 1.003, ""))
    db.executemany("INSERT INTO benchmarks VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
db.commit()
db.execute("VACUUM")
db.close()
print(f"store: {RUNS} runs × {BENCHES} benchmarks, each run's result {len(result) / 1e3:.0f} kB")

def timed(args):
    walls, code = [], None
    for _ in range(5):
        t0 = time.perf_counter()
        p = subprocess.run([vernier] + args + ["--db", big], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        walls.append(time.perf_counter() - t0)
        code = p.returncode
        out = p.stdout
    return statistics.median(walls), code, out

for args in (["history"], ["history", "--json"], ["history", "check"]):
    wall, code, out = timed(args)
    print(f"vernier {' '.join(args)}: {wall * 1e3:.0f} ms (median of 5), exit {code}")
    if args == ["history", "--json"]:
        import json
        h = json.loads(out)
        found = sorted(
            (s["name"], c["index"]) for s in h["series"] for c in s["change_points"])
        print(f"  change points found: {found} (made: bench_00..bench_04 at index 700)")
PY
