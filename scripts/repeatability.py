#!/usr/bin/env python3
"""Compare two vernier result files benchmark by benchmark: do the medians agree within their
95 % intervals? Prints each disagreement in units of the combined half-widths, and the largest.

    vernier demo --json a.json && vernier demo --json b.json && scripts/repeatability.py a.json b.json
"""
import json
import sys


def load(path):
    with open(path) as f:
        d = json.load(f)
    return {b["name"]: b for b in d["benchmarks"] if b["status"] == "ok"}


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    worst = (0.0, None)
    agree = total = 0
    print(f"{'benchmark':<34} {'run 1':>12} {'run 2':>12} {'diff %':>8} {'overlap':>8} {'×(hw1+hw2)':>11}")
    for name in a:
        if name not in b:
            continue
        p, q = a[name]["per_iter"], b[name]["per_iter"]
        flagged = any(d["code"] == "optimized-away" for d in a[name]["diagnostics"])
        m1, m2 = p["median_ns"], q["median_ns"]
        hw = (p["ci95_ns"][1] - p["ci95_ns"][0]) / 2 + (q["ci95_ns"][1] - q["ci95_ns"][0]) / 2
        overlap = p["ci95_ns"][0] <= q["ci95_ns"][1] and q["ci95_ns"][0] <= p["ci95_ns"][1]
        k = abs(m1 - m2) / hw if hw > 0 else float("inf")
        total += 1
        agree += overlap
        if not flagged and k > worst[0]:
            worst = (k, name)
        print(f"{name:<34} {m1:>12.4f} {m2:>12.4f} {100*(m2/m1-1):>8.2f} {str(overlap):>8} {k:>11.2f}"
              + ("  (optimized-away)" if flagged else ""))
    print(f"\nintervals overlap for {agree} of {total}; largest disagreement: {worst[0]:.2f}× the summed half-widths ({worst[1]})")


if __name__ == "__main__":
    main()
