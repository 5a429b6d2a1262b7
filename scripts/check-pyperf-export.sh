#!/usr/bin/env bash
# Load `vernier export --format pyperf` with pyperf itself (from PyPI) and check that each
# benchmark's median equals the result file's to 1e-6 relative.
#
#   scripts/check-pyperf-export.sh RESULT.json [VERNIER]
#
# pyperf is installed into a virtual environment under target/pyperf-venv on first use. Exits
# 0 when every median agrees, 1 when one does not, 77 (skipped) when python3 or PyPI is not
# available, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
result=${1:?usage: $0 RESULT.json [VERNIER]}
vernier=${2:-target/release/vernier}
venv=${VERNIER_PYPERF_VENV:-target/pyperf-venv}

if ! command -v python3 >/dev/null; then
    echo "skipped: python3 is not installed" >&2
    exit 77
fi
if ! "$venv/bin/python" -c 'import pyperf' 2>/dev/null; then
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        echo "skipped: python3 cannot create a virtual environment (apt-get install python3-venv)" >&2
        exit 77
    fi
    if ! "$venv/bin/pip" install --quiet pyperf >/dev/null 2>&1; then
        echo "skipped: pyperf could not be installed from PyPI (offline?)" >&2
        exit 77
    fi
fi

out=$(mktemp --suffix=.json)
trap 'rm -f "$out"' EXIT
"$vernier" export "$result" --format pyperf -o "$out"
"$venv/bin/python" - "$result" "$out" <<'PY'
import json, sys
import pyperf

result = json.load(open(sys.argv[1]))
suite = pyperf.BenchmarkSuite.load(sys.argv[2])
want = {b["name"]: b["per_iter"]["median_ns"] for b in result["benchmarks"]
        if b["per_iter"]["median_ns"] is not None}
got = {b.get_name(): b.median() * 1e9 for b in suite.get_benchmarks()}
bad = 0
for name, median in want.items():
    if name not in got:
        print(f"{name}: missing from the pyperf file"); bad += 1; continue
    rel = abs(got[name] - median) / median
    status = "ok" if rel <= 1e-6 else "DIFFERS"
    if rel > 1e-6:
        bad += 1
    print(f"{name}: result {median!r} ns, pyperf median {got[name]!r} ns, rel {rel:.2e} {status}")
sys.exit(1 if bad else 0)
PY
