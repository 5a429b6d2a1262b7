#!/usr/bin/env python3
"""Golden values for the process-pair statistics of `vernier compare` (numpy/scipy).

Run by hand once (``pip install numpy scipy``) and commit the output:

    python3 scripts/gen_random_effects_fixtures.py

It writes ``crates/vernier/tests/fixtures/stats/random_effects.json``, read by
``crates/vernier/tests/suite/deterministic/compare_stats_golden.rs``. Conventions (as the Rust code):
  * Student's t: ``scipy.stats.t.sf`` and ``scipy.stats.t.ppf``;
  * random effects over pairs: theta_j = ln(NEW/OLD) of pair j, within-pair standard errors s_j
    (floored at 1e-5); DerSimonian-Laird tau^2, weights 1/(s_j^2 + tau^2), weighted mean, and the
    Hartung-Knapp-Sidik-Jonkman standard error sqrt(max(1, q) / sum w), q the weighted dispersion
    over k - 1; 95 % interval exp(mean +- t.ppf(0.975, k-1) * se); p-value 2 * t.sf(|mean/se|, k-1);
    within share min(1, mean(s^2)/var(theta, ddof=1));
    smallest detectable change exp((t.ppf(0.975, k-1) + t.ppf(0.8, k-1)) * se) - 1;
  * offline comparison from two intervals: se = (ln hi - ln lo) / (2 * 1.959963984540054) each,
    combined in quadrature, normal interval and two-sided p-value.
"""

import json
import math
import os

import numpy as np
from scipy import stats

Z95 = 1.959963984540054
rng = np.random.default_rng(20261122)
out = {"t": [], "random_effects": [], "from_intervals": []}

for df in [1, 2, 3, 4, 5, 7, 9, 15, 30, 100, 1000]:
    for t in [-3.5, -0.7, 0.0, 0.3, 1.0, 2.0, 4.5, 12.0]:
        out["t"].append({"df": df, "t": t, "sf": float(stats.t.sf(t, df))})
    for p in [0.8, 0.9, 0.975, 0.995, 0.9995]:
        out["t"].append({"df": df, "p": p, "ppf": float(stats.t.ppf(p, df))})

def hksj(theta, s):
    """DerSimonian-Laird tau^2, inverse-variance weights 1/(s^2 + tau^2), Hartung-Knapp-Sidik-
    Jonkman variance max(1, q)/sum(w) (q the weighted dispersion over k - 1)."""
    k = len(theta)
    v = np.maximum(s, 1e-5) ** 2
    w0 = 1 / v
    m0 = np.sum(w0 * theta) / np.sum(w0)
    q0 = np.sum(w0 * (theta - m0) ** 2)
    c = np.sum(w0) - np.sum(w0 ** 2) / np.sum(w0)
    tau2 = max(0.0, (q0 - (k - 1)) / c) if c > 0 else 0.0
    w = 1 / (v + tau2)
    mean = np.sum(w * theta) / np.sum(w)
    q = np.sum(w * (theta - mean) ** 2) / (k - 1)
    return mean, math.sqrt(max(q, 1.0) / np.sum(w))


for k, between, within, shift, uneven in [(4, 0.002, 0.0005, 0.0, False), (6, 0.01, 0.001, 0.01, False),
                                          (10, 0.0, 0.001, -0.02, False), (10, 0.02, 0.0002, 0.005, False),
                                          (25, 0.003, 0.003, 0.001, False), (8, 0.0005, 0.002, 0.003, True),
                                          (5, 0.0, 0.004, 0.0, True)]:
    s = np.abs(rng.normal(within, within / 4, k)) + 1e-6
    if uneven:  # some pairs shared their CPU with a busy neighbour
        s[::2] *= 8
    theta = shift + rng.normal(0, between, k) + rng.normal(0, 1, k) * s
    mean, se = hksj(theta, s)
    sd = theta.std(ddof=1)
    tq = stats.t.ppf(0.975, k - 1)
    out["random_effects"].append({
        "theta": theta.tolist(), "within_se": s.tolist(),
        "ratio": math.exp(mean),
        "ci95": [math.exp(mean - tq * se), math.exp(mean + tq * se)],
        "p_value": float(2 * stats.t.sf(abs(mean / se), k - 1)),
        "within_share": float(min(1.0, np.mean(s ** 2) / sd ** 2)),
        "smallest_detectable": math.exp((tq + stats.t.ppf(0.8, k - 1)) * se) - 1.0,
    })

for o, olo, ohi, n, nlo, nhi in [(10.0, 9.9, 10.2, 10.3, 10.25, 10.4), (5.0, 4.0, 6.0, 5.0, 4.9, 5.1)]:
    se = lambda lo, hi: (math.log(hi) - math.log(lo)) / (2 * Z95)
    d = math.log(n / o)
    s = math.hypot(se(olo, ohi), se(nlo, nhi))
    out["from_intervals"].append({
        "old": [o, olo, ohi], "new": [n, nlo, nhi], "ratio": n / o,
        "ci95": [math.exp(d - Z95 * s), math.exp(d + Z95 * s)],
        "p_value": float(2 * stats.norm.sf(abs(d) / s)),
    })

path = os.path.join(os.path.dirname(__file__), "..", "crates", "vernier", "tests", "fixtures",
                    "stats", "random_effects.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print("wrote", os.path.normpath(path))
