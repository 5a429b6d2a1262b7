#!/usr/bin/env bash
# A regression found where it happened: seven runs of the `chain` kernel of
# examples/cpp/kernels.cpp saved at commits c1–c4 (100 dependent adds) and c5–c7 (110 adds:
# +10 %), then `vernier history` and `vernier history check`.
#
#   scripts/history-demo.sh [STORE]
#
# STORE: sqlite:PATH, a path, or postgres://USER@HOST:PORT/DB (default: a new SQLite file in a
# temporary directory). A PostgreSQL store should be an empty database: the check over c1–c4
# alone assumes no other run of `chain` on this machine.
# It checks: `history check` exits 0 over c1–c4, then 2 over c1–c7; the one change point sits
# at c5 with a ratio of 1.10 ± 0.03; and it prints what saving one run cost.
# Environment: VERNIER (the vernier binary; default: built in release mode), CXX.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${VERNIER:-}" ]]; then
    cargo build -q --release -p vernier-cli --bin vernier
    VERNIER=target/release/vernier
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DB=${1:-sqlite:$TMP/history.sqlite}
CXX=${CXX:-g++}
build() { "$CXX" -std=c++17 -O2 -Iinclude "$@" examples/cpp/kernels.cpp; }
build -o "$TMP/k100"
build -DKERNELS_CHAIN_N=110 -o "$TMP/k110"

save() { # COMMIT EXE
    "$VERNIER" run --quick --filter '^chain$' --counters none --save --db "$DB" \
        --commit "$1" --branch main -- "$2" >/dev/null 2>"$TMP/save.err" || {
        cat "$TMP/save.err" >&2
        exit 1
    }
    grep 'saved run' "$TMP/save.err" | sed 's/^vernier: /  /'
}

fail=0
# A PostgreSQL store is made by the administrator's step (a SQLite one as it is opened).
"$VERNIER" history migrate --db "$DB" >/dev/null
for c in c1 c2 c3 c4; do save "$c" "$TMP/k100"; done
set +e
"$VERNIER" history check --db "$DB" --filter '^chain$' >/dev/null
code=$?
set -e
echo "history check over c1–c4: exit $code (expected 0)"
[[ $code == 0 ]] || fail=1
for c in c5 c6 c7; do save "$c" "$TMP/k110"; done
"$VERNIER" history --db "$DB" --filter '^chain$'
set +e
"$VERNIER" history check --db "$DB" --filter '^chain$'
code=$?
set -e
echo "history check over c1–c7: exit $code (expected 2)"
[[ $code == 2 ]] || fail=1
"$VERNIER" history --db "$DB" --filter '^chain$' --json >"$TMP/history.json"
python3 - "$TMP/history.json" <<'PY' || fail=1
import json, sys
h = json.load(open(sys.argv[1]))
s = [x for x in h["series"] if x["name"] == "chain"]
assert len(s) == 1, f"expected one series of chain (one machine), got {len(s)}"
cps = s[0]["change_points"]
print("change points:", ", ".join(
    f'{c["commit"]}: ratio {c["ratio"]:.4f} [{c["ci95"][0]:.4f}, {c["ci95"][1]:.4f}], '
    f'confidence {c["confidence"]:.6f}' for c in cps) or "none")
ok = len(cps) == 1 and cps[0]["commit"] == "c5" and abs(cps[0]["ratio"] - 1.10) <= 0.03 \
    and (cps[0]["ci95"][1] - cps[0]["ci95"][0]) / 2 <= 0.03
print("target (one change point, at c5, ratio 1.10 ± 0.03, its 95 % interval at most ± 0.03):",
      "met" if ok else "NOT met")
sys.exit(0 if ok else 1)
PY
exit $fail
