#!/usr/bin/env bash
# A memory-bound comparison judged averaged over layouts: `vernier compare` on the pointer chase
# of examples/cpp/kernels.cpp (a random ring over 64 MiB), 100 against 101 dependent loads
# (+1 %), with the budget compare itself names for it, and the chase against itself.
#
#   scripts/compare-layouts.sh [TRIALS] [AA_TRIALS]
#
# 1. one comparison of k100 against k101 at the default options; when it is inconclusive and
#    its pairs show layout states, the `--time` and `--processes` its plan names (the pairs
#    that would resolve a change of the threshold's size, from the spread seen) are the
#    budget of step 2; otherwise the default options are;
# 2. TRIALS (default 5) comparisons of k100 against k101 with that budget;
# 3. AA_TRIALS (default 10) comparisons of k100 against itself at the default options.
# For each it prints the verdict, ratio, 95 % interval, the states' range when the pairs show
# layout states, the pairs and the wall time, then the counts of each verdict per series.
# Environment: VERNIER (the vernier binary; default: built in release mode), CXX.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS=${1:-5}
AA_TRIALS=${2:-10}
if [[ -z "${VERNIER:-}" ]]; then
    cargo build -q --release -p vernier-cli --bin vernier
    VERNIER=target/release/vernier
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CXX=${CXX:-g++}
build() { "$CXX" -std=c++17 -O2 -Iinclude "$@" examples/cpp/kernels.cpp; }
build -o "$TMP/k100"
build -DKERNELS_MEM_STEPS=101 -o "$TMP/k101"

# one LABEL OLD NEW [options…]: one comparison of the chase; prints a line, keeps the file.
one() {
    local label=$1 old=$2 new=$3 t0 t1
    shift 3
    t0=$(date +%s.%N)
    "$VERNIER" compare "$TMP/$old" "$TMP/$new" --filter '^chase$' --json "$TMP/$label.json" \
        "$@" >"$TMP/$label.txt" 2>&1 || true
    t1=$(date +%s.%N)
    python3 - "$TMP/$label.json" "$label" "$t0" "$t1" <<'PY'
import json, sys
path, label, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    c = json.load(open(path))["comparisons"][0]
except Exception as e:
    print(f"{label:<10} failed ({e})")
    sys.exit(0)
st = c.get("layout_states")
states = (f"states {st['lo']:.4f}-{st['hi']:.4f} {'averaged' if st.get('averaged') else 'spanned'}"
          if st else "no states")
print(f"{label:<10} {c['verdict']:<12} ratio {c['ratio']:.4f} [{c['ci95'][0]:.4f}, "
      f"{c['ci95'][1]:.4f}]  {states}  {len(c['process_pairs'])} pairs  "
      f"{c['seconds']:.1f} s measuring  wall {t1 - t0:.1f} s")
PY
}

# budget FILE: the options the plan of an inconclusive comparison names, or nothing.
budget() {
    python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["comparisons"][0]
plan = (c.get("layout_states") or {}).get("plan") or {}
if c["verdict"] == "inconclusive" and plan.get("pairs"):
    t = plan["seconds"]
    t = f"{t:.0f}" if t >= 10 else f"{-(-t * 10 // 1) / 10:.1f}"
    print(f"--time {t} --processes {plan['pairs']}")
PY
}

# tally LABEL…: how often each verdict came out.
tally() {
    python3 - "$TMP" "$@" <<'PY'
import json, sys, os, collections
d, labels = sys.argv[1], sys.argv[2:]
v = collections.Counter()
for l in labels:
    try:
        v[json.load(open(os.path.join(d, l + ".json")))["comparisons"][0]["verdict"]] += 1
    except Exception:
        v["failed"] += 1
print("  " + ", ".join(f"{k} {n}" for k, n in sorted(v.items())) + f" of {len(labels)}")
PY
}

echo "== chase 100 against 101 loads at the default options"
one first k100 k101
grep -E "^ *chase: (inconclusive|layout)" "$TMP/first.txt" || true
read -r -a OPTS <<<"$(budget "$TMP/first.json")"
echo "== chase 100 against 101 loads, $TRIALS trials with ${OPTS[*]:-the default options}"
labels=()
for ((i = 0; i < TRIALS; i++)); do
    one "ab$i" k100 k101 "${OPTS[@]}"
    labels+=("ab$i")
done
tally "${labels[@]}"
echo "== chase 100 against itself, $AA_TRIALS trials at the default options"
labels=()
for ((i = 0; i < AA_TRIALS; i++)); do
    one "aa$i" k100 k100
    labels+=("aa$i")
done
tally "${labels[@]}"
