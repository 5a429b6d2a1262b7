#!/usr/bin/env bash
# vernier exec beside hyperfine, on the same commands and the same machine (docs/exec.md has the
# figures this printed). The commands are the tests' own program of known work
# (crates/vernier-cli/tests/fixtures/cpp/exec_chain.cpp: N steps of a dependent chain), built
# here with g++ -O2:
#
#   spread     5 invocations of each tool on one command: how far apart their medians land
#              ((max − min) / median of the five medians), in wall time (hyperfine's median,
#              Vernier's median) and in CPU time (hyperfine's mean user + system, the median
#              of Vernier's runs' user + system);
#   2 %        K invocations of each tool on N against N + 2 %: how often each finds the
#              difference (hyperfine: its two `mean ± σ` intervals do not overlap; Vernier: the
#              verdict `slower`), and the seconds each invocation took;
#   same       K invocations on N against N: a difference found there is a false one.
#
# Usage: scripts/exec-vs-hyperfine.sh [K]   (K = 5 by default; N with CHAIN_N, default 7000000)
# hyperfine is taken from PATH, or installed with `cargo install hyperfine --locked` into a
# temporary root removed at the end. Both tools run at their defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-5}
N=${CHAIN_N:-7000000}
N2=$((N + N / 50))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if command -v hyperfine >/dev/null; then
    HF=$(command -v hyperfine)
else
    echo "installing hyperfine (cargo install hyperfine --locked) into $work/hf" >&2
    cargo install -q hyperfine --locked --root "$work/hf" >&2
    HF="$work/hf/bin/hyperfine"
fi
cargo build -q -p vernier-cli
VERNIER=${VERNIER:-target/debug/vernier}
g++ -O2 -o "$work/chain" crates/vernier-cli/tests/fixtures/cpp/exec_chain.cpp
A="$work/chain $N"
B="$work/chain $N2"
echo "hyperfine: $("$HF" --version) · vernier: $("$VERNIER" --version) · load: $(cut -d' ' -f1-3 /proc/loadavg) · CPUs: $(nproc)"

now() { date +%s.%N; }
# Seconds since $1.
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }

# The median (s) of a hyperfine export or a vernier result file.
hf_median() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['median'])" "$1"; }
vn_median() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['benchmarks'][0]['per_iter']['median_ns'] / 1e9)" "$1"; }
# CPU time (user + system, s): hyperfine's means; the median of Vernier's measured runs.
hf_cpu() { python3 -c "import json,sys; r = json.load(open(sys.argv[1]))['results'][0]; print(r['user'] + r['system'])" "$1"; }
vn_cpu() {
    python3 -c "
import json, statistics, sys
runs = json.load(open(sys.argv[1]))['benchmarks'][0]['runs']
print(statistics.median(r['user_ns'] + r['system_ns'] for r in runs if not r.get('warmup')) / 1e9)" "$1"
}
# 1 when hyperfine's two `mean ± σ` intervals do not overlap.
hf_apart() {
    python3 -c "
import json, sys
a, b = json.load(open(sys.argv[1]))['results'][:2]
print(int(a['mean'] + a['stddev'] < b['mean'] - b['stddev'] or b['mean'] + b['stddev'] < a['mean'] - a['stddev']))" "$1"
}
vn_verdict() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['comparisons'][0]['verdict'])" "$1"; }
spread() { python3 -c "
import sys, statistics
v = [float(x) for x in sys.argv[1:]]
print(f'{(max(v) - min(v)) / statistics.median(v) * 100:.2f} %  (medians {min(v) * 1e3:.3f}–{max(v) * 1e3:.3f} ms)')" "$@"; }

echo
echo "== spread of the median over 5 invocations: $A"
hf=() vn=() hfc=() vnc=()
for i in 1 2 3 4 5; do
    "$HF" -N --style none --export-json "$work/h.json" "$A" >/dev/null 2>&1
    hf+=("$(hf_median "$work/h.json")")
    hfc+=("$(hf_cpu "$work/h.json")")
    "$VERNIER" exec "$A" --json "$work/v.json" >/dev/null 2>&1
    vn+=("$(vn_median "$work/v.json")")
    vnc+=("$(vn_cpu "$work/v.json")")
done
echo "hyperfine: wall $(spread "${hf[@]}") · CPU $(spread "${hfc[@]}")"
echo "vernier:   wall $(spread "${vn[@]}") · CPU $(spread "${vnc[@]}")"

# $1: label, $2 $3: the commands. K invocations of each tool.
pairs() {
    local found_h=0 found_v=0 secs_h=() secs_v=() verdicts=()
    for i in $(seq "$K"); do
        t=$(now)
        "$HF" -N --style none --export-json "$work/h.json" "$2" "$3" >/dev/null 2>&1
        secs_h+=("$(since "$t")")
        found_h=$((found_h + $(hf_apart "$work/h.json")))
        t=$(now)
        "$VERNIER" exec "$2" "$3" --json "$work/v.json" >/dev/null 2>&1 || true
        secs_v+=("$(since "$t")")
        v=$(vn_verdict "$work/v.json")
        verdicts+=("$v")
        case $v in slower | faster) found_v=$((found_v + 1)) ;; esac
    done
    echo "== $1: $K invocations each"
    echo "hyperfine: intervals apart in $found_h of $K · seconds: ${secs_h[*]}"
    echo "vernier:   a verdict in $found_v of $K (${verdicts[*]}) · seconds: ${secs_v[*]}"
}
echo
pairs "N against N + 2 % (a real difference)" "$A" "$B"
echo
pairs "N against N (no difference)" "$A" "$A"
