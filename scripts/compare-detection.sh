#!/usr/bin/env bash
# Error and detection rates of `vernier compare` at its DEFAULT options (no --cpu, no --time),
# on the three kernels of examples/cpp/kernels.cpp (chain: compute, sqrt: latency, chase: a
# pointer chase over 64 MiB, memory-bound), idle and again with `vernier load --threads 1` (one busy thread: the other core of a 2-CPU machine).
#
#   scripts/compare-detection.sh [TRIALS] [-- extra vernier compare options]
#
# Builds of the kernels program, each compared TRIALS times (default 20):
#   same     k100 against k100            A/A on every kernel (false alarms)
#   1%/5%    k100 against k101_105        chain 100 → 101 adds (+1 %), chase 100 → 105 steps (+5 %)
#   0.5%     k200 against k201            chain 200 → 201 adds (+0.5 %)
# and once: k100 against itself with a start-up of 1.5 s (STARTUP_MS=1500), for the wall time.
# For each series and kernel it prints how often each verdict came out, the median ratio, the
# median measurement time per benchmark and the median wall time of a run.
# Environment: VERNIER (the vernier binary; default: built in release mode), CXX.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS=${1:-20}
shift $(( $# < 1 ? $# : 1 ))
[[ "${1:-}" == "--" ]] && shift
EXTRA=("$@")
if [[ -z "${VERNIER:-}" ]]; then
    cargo build -q --release -p vernier-cli --bin vernier
    VERNIER=target/release/vernier
fi
TMP=$(mktemp -d)
LOAD_PID=
cleanup() {
    [[ -n "$LOAD_PID" ]] && kill "$LOAD_PID" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
CXX=${CXX:-g++}
build() { "$CXX" -std=c++17 -O2 -Iinclude "$@" examples/cpp/kernels.cpp; }
build -o "$TMP/k100"
build -DKERNELS_CHAIN_N=101 -DKERNELS_MEM_STEPS=105 -o "$TMP/k101_105"
build -DKERNELS_CHAIN_N=200 -o "$TMP/k200"
build -DKERNELS_CHAIN_N=201 -o "$TMP/k201"

# series LABEL OLD NEW [vernier options…]: TRIALS comparisons, then one line per benchmark.
series() {
    local label=$1 old=$2 new=$3 i
    shift 3
    mkdir -p "$TMP/$label"
    for ((i = 0; i < TRIALS; i++)); do
        local t0 t1
        t0=$(date +%s.%N)
        "$VERNIER" compare "$TMP/$old" "$TMP/$new" --json "$TMP/$label/$i.json" "$@" \
            "${EXTRA[@]}" >/dev/null 2>&1 || true
        t1=$(date +%s.%N)
        echo "$t0 $t1" | awk '{print $2 - $1}' >"$TMP/$label/$i.wall"
    done
    python3 - "$TMP/$label" "$TRIALS" "$label" <<'PY'
import json, sys, statistics, os
d, trials, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows, walls = {}, []
for i in range(trials):
    try:
        walls.append(float(open(os.path.join(d, f"{i}.wall")).read()))
        f = json.load(open(os.path.join(d, f"{i}.json")))
    except Exception:
        continue
    for c in f["comparisons"]:
        r = rows.setdefault(c["name"], {"v": {}, "ratio": [], "s": [], "pairs": []})
        r["v"][c["verdict"]] = r["v"].get(c["verdict"], 0) + 1
        r["ratio"].append(c["ratio"]); r["s"].append(c["seconds"])
        r["pairs"].append((c.get("spread") or {}).get("process_pairs", 0))
    for x in f.get("failed", []):
        r = rows.setdefault(x["name"], {"v": {}, "ratio": [], "s": [], "pairs": []})
        r["v"]["failed"] = r["v"].get("failed", 0) + 1
med = lambda v: statistics.median(v) if v else float("nan")
for name, r in rows.items():
    v = r["v"]
    print(f"{label:<12} {name:<6} slower {v.get('slower',0):2d}  faster {v.get('faster',0):2d}  "
          f"no-change {v.get('no-change',0):2d}  inconclusive {v.get('inconclusive',0):2d}  "
          f"failed {v.get('failed',0)}  of {trials}   median ratio {med(r['ratio']):.4f}  "
          f"median {med(r['s']):.2f} s/benchmark  median {med(r['pairs']):.0f} pairs  "
          f"wall {med(walls):.1f} s")
PY
}

run_all() {
    echo "== $1: vernier compare at default options ${EXTRA[*]:-}, $TRIALS trials per series"
    series same k100 k100
    series 1%/5% k100 k101_105
    series 0.5% k200 k201 --filter chain
}

run_all idle
"$VERNIER" load --help >/dev/null 2>&1 && {
    "$VERNIER" load --threads 1 --duration 3600 >/dev/null 2>&1 &
    LOAD_PID=$!
    sleep 1
    run_all "with vernier load"
    kill "$LOAD_PID" 2>/dev/null || true
    LOAD_PID=
}
echo "== start-up of 1.5 s (STARTUP_MS=1500), k100 against itself, all three kernels"
t0=$(date +%s.%N)
"$VERNIER" compare "$TMP/k100" "$TMP/k100" --old-env STARTUP_MS=1500 --new-env STARTUP_MS=1500 \
    "${EXTRA[@]}" | grep -E "process pair|^(chain|sqrt|chase) "
t1=$(date +%s.%N)
echo "$t0 $t1" | awk '{printf "wall time %.1f s\n", $2 - $1}'
