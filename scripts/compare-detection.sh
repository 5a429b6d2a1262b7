#!/usr/bin/env bash
# Detection rates of `vernier compare` on the add chain, a kernel of known cost.
#
#   scripts/compare-detection.sh [RUNS] [OLD_N] [NEW_N] [-- extra vernier compare options]
#
# Runs `vernier compare` RUNS times (default 20) for chain n=OLD_N vs n=NEW_N (default 100 vs
# 101, a 1 % slowdown) and RUNS times for n=OLD_N vs n=OLD_N (no change), each with a budget of
# one second per comparison, and prints how often each verdict came out, with the median
# ratio and the median time to the verdict. Extra options go to every `vernier compare` (e.g.
# `-- --threshold 0.25` or `-- --cpu 1`). For a loaded machine, start a load first, e.g.
#   timeout 120 sh -c 'while :; do :; done' &
# Environment: VERNIER (path of the vernier binary), CHAIN (path of the chain example); by
# default both are built in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
OLD_N=${2:-100}
NEW_N=${3:-101}
shift $(( $# < 3 ? $# : 3 ))
[[ "${1:-}" == "--" ]] && shift
EXTRA=("$@")
if [[ -z "${VERNIER:-}" || -z "${CHAIN:-}" ]]; then
    cargo build -q --release -p vernier-cli --bin vernier
    cargo build -q --release -p vernier --example chain
    VERNIER=${VERNIER:-target/release/vernier}
    CHAIN=${CHAIN:-target/release/examples/chain}
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# One series: prints "faster slower no-change failed median_ratio median_seconds".
series() {
    local old=$1 new=$2 i
    for ((i = 0; i < RUNS; i++)); do
        "$VERNIER" compare "$CHAIN" "$CHAIN" --old-env "CHAIN_N=$old" --new-env "CHAIN_N=$new" \
            --time 1 --json "$TMP/$i.json" "${EXTRA[@]}" >/dev/null 2>&1 || true
    done
    python3 - "$TMP" "$RUNS" <<'PY'
import json, sys, statistics, os
d, runs = sys.argv[1], int(sys.argv[2])
count = {"faster": 0, "slower": 0, "no-change": 0, "failed": 0}
ratios, secs = [], []
for i in range(runs):
    p = os.path.join(d, f"{i}.json")
    try:
        c = json.load(open(p))["comparisons"][0]
    except Exception:
        count["failed"] += 1
        continue
    count[c["verdict"]] += 1
    ratios.append(c["ratio"]); secs.append(c["seconds"])
    os.remove(p)
med = lambda v: statistics.median(v) if v else float("nan")
print(count["faster"], count["slower"], count["no-change"], count["failed"],
      f"{med(ratios):.5f}", f"{med(secs):.3f}")
PY
}

report() {
    local label=$1 old=$2 new=$3
    read -r f s n x r t < <(series "$old" "$new")
    printf '%-26s slower %2d/%d  faster %2d/%d  no-change %2d/%d  failed %d  median ratio %s  median %ss\n' \
        "$label" "$s" "$RUNS" "$f" "$RUNS" "$n" "$RUNS" "$x" "$r" "$t"
}

echo "vernier compare, chain n=$OLD_N vs n=$NEW_N and n=$OLD_N vs n=$OLD_N, $RUNS runs each, --time 1 ${EXTRA[*]:-}"
report "n=$OLD_N vs n=$NEW_N (detect)" "$OLD_N" "$NEW_N"
report "n=$OLD_N vs n=$OLD_N (false alarms)" "$OLD_N" "$OLD_N"
