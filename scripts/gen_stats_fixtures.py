#!/usr/bin/env python3
"""Golden values for Vernier's statistics, computed with numpy/scipy/statsmodels.

Run by hand once (``pip install numpy scipy statsmodels``) and commit the output:

    python3 scripts/gen_stats_fixtures.py

It writes JSON files under ``crates/vernier/tests/fixtures/stats/``; the Rust test
``crates/vernier/tests/suite/deterministic/stats_golden.rs`` reads them, so the test suite itself needs no
Python. Every dataset is generated from a fixed seed and stored in the fixture with its
expected values, so the Rust side never regenerates data.

Conventions the Rust code follows (and this script reproduces):
  * quantiles: numpy's default linear interpolation ("type 7");
  * std: ddof = 1; robust sigma: IQR / 1.349; MAD: raw (scale = 1);
  * median CI: 0-based rank j = the largest j with binom.cdf(j, n, 1/2) <= 0.025, interval
    [x_(j), x_(n-1-j)]; n < 6 has no such j and the interval is the whole range;
  * Wilcoxon signed-rank: zeros dropped ("wilcox"), no continuity correction, exact null
    distribution when 1 <= n <= 50 with no ties and no zeros, normal approximation with the
    tie correction otherwise;
  * Mann-Whitney U: two-sided with continuity correction (scipy's default), exact when there
    are no ties and n1 * n2 <= 2500, normal approximation with tie correction otherwise;
  * Hodges-Lehmann: median of the Walsh averages (paired) or of all pairwise differences
    new_j - old_i (unpaired); 95 % CI by order statistics of the same, ranks from the exact
    null distribution under the same size conditions (ties ignored), else the normal
    approximation with continuity correction.
"""

import json
import math
import os

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "vernier", "tests", "fixtures", "stats")
Z975 = stats.norm.ppf(0.975)


def f(x):
    return float(x)


def median_ci_rank(n):
    """Largest 0-based j with P(B <= j) <= 0.025, B ~ binomial(n, 1/2); None when n < 6."""
    if stats.binom.cdf(0, n, 0.5) > 0.025:
        return None
    k = int(stats.binom.ppf(0.025, n, 0.5))
    j = k if stats.binom.cdf(k, n, 0.5) <= 0.025 else k - 1
    assert stats.binom.cdf(j, n, 0.5) <= 0.025 < stats.binom.cdf(j + 1, n, 0.5)
    return j


def descriptive(name, xs):
    xs = np.asarray(xs, dtype=float)
    s = np.sort(xs)
    n = len(xs)
    q1, q3 = np.quantile(xs, [0.25, 0.75])
    iqr = q3 - q1
    j = median_ci_rank(n)
    ci = [f(s[0]), f(s[-1])] if j is None else [f(s[j]), f(s[n - 1 - j])]
    return {
        "name": name,
        "data": [f(x) for x in xs],
        "median": f(np.median(xs)),
        "q25": f(q1),
        "q75": f(q3),
        "mean": f(np.mean(xs)),
        "std": f(np.std(xs, ddof=1)) if n > 1 else 0.0,
        "iqr_sigma": f(iqr / 1.349),
        "mad": f(stats.median_abs_deviation(xs, scale=1.0)),
        "median_ci_rank": j,
        "median_ci": ci,
        "tukey_1_5": [f(q1 - 1.5 * iqr), f(q3 + 1.5 * iqr)],
        "tukey_3": [f(q1 - 3 * iqr), f(q3 + 3 * iqr)],
    }


def gen_descriptive(rng):
    cases = []
    cases.append(descriptive("normal_n200", rng.normal(100.0, 5.0, 200)))
    cases.append(descriptive("lognormal_n500", rng.lognormal(3.0, 0.3, 500)))
    x = rng.normal(50.0, 1.0, 300)
    x[rng.choice(300, 12, replace=False)] = rng.uniform(80.0, 120.0, 12)
    x[rng.choice(300, 3, replace=False)] = rng.uniform(20.0, 30.0, 3)
    cases.append(descriptive("outliers_n300", x))
    cases.append(descriptive("ties_n100", rng.integers(10, 20, 100).astype(float)))
    for n in (5, 6, 7, 10, 20):
        cases.append(descriptive(f"small_n{n}", rng.normal(10.0, 2.0, n)))
    cases.append(descriptive("lognormal_n1001", rng.lognormal(1.0, 0.5, 1001)))
    cases.append(descriptive("normal_n2500", rng.normal(0.0, 1.0, 2500)))
    cases.append(descriptive("constant_n8", [7.25] * 8))
    return cases


def gen_ranks():
    ns = list(range(1, 101)) + [101, 150, 200, 333, 500, 999, 1000, 1001, 1002, 1500, 2000,
                                 4096, 5000, 10000, 65537, 100000, 1000000, 10000000]
    return [{"n": n, "j": median_ci_rank(n)} for n in ns]


def gen_regression(rng):
    cases = []

    def add(name, x, y):
        r = stats.linregress(x, y)
        cases.append({"name": name, "x": [f(v) for v in x], "y": [f(v) for v in y],
                      "slope": f(r.slope), "intercept": f(r.intercept),
                      "r2": f(r.rvalue ** 2), "slope_se": f(r.stderr)})

    iters = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512], dtype=float)
    add("iters_noisy", iters, 12.0 + 3.5 * iters + rng.normal(0, 2.0, len(iters)))
    x = rng.uniform(0, 100, 50)
    add("uniform_x_n50", x, -4.0 + 0.25 * x + rng.normal(0, 5.0, 50))
    add("three_points", np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.5, 5.5]))
    x = np.repeat(np.array([100.0, 200.0, 400.0, 800.0]), 25)
    add("repeated_x_heavy_noise", x, 1000.0 + 2.0 * x + rng.lognormal(3.0, 1.0, len(x)))
    return cases


# ---- Wilcoxon signed-rank / Mann-Whitney null distributions (exact, integers) ----

def signed_rank_counts(n):
    """counts[t] = number of sign vectors with T+ = t, t = 0..n(n+1)/2."""
    counts = [1]
    for k in range(1, n + 1):
        new = counts + [0] * k
        for t, c in enumerate(counts):
            new[t + k] += c
        counts = new
    return counts


def signed_rank_ci_rank(n):
    """Largest c with P(T+ <= c) <= 0.025 (None if none); exact for n <= 50."""
    if n <= 50:
        counts = signed_rank_counts(n)
        total = 2 ** n
        acc = 0
        c = None
        for t, k in enumerate(counts):
            acc += k
            if acc * 40 <= total:  # acc / total <= 0.025 exactly
                c = t
            else:
                break
        return c
    mean = n * (n + 1) / 4
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return max(int(math.floor(mean - 0.5 - Z975 * sd)), 0)


def mw_counts(m, n):
    """counts[u] = number of arrangements with U = u (Gaussian binomial coefficients)."""
    # c[i][j] as lists, recursion c(i,j,u) = c(i-1,j,u-j) + c(i,j-1,u)
    prev = [[1] for _ in range(n + 1)]  # i = 0: U = 0 only
    for i in range(1, m + 1):
        cur = [[1]]  # j = 0
        for j in range(1, n + 1):
            size = i * j + 1
            row = [0] * size
            for u, c in enumerate(prev[j]):
                row[u + j] += c
            for u, c in enumerate(cur[j - 1]):
                row[u] += c
            cur.append(row)
        prev = cur
    return prev[n]


def mw_ci_rank(m, n):
    if m * n <= 2500:
        counts = mw_counts(m, n)
        total = math.comb(m + n, m)
        acc = 0
        c = None
        for u, k in enumerate(counts):
            acc += k
            if acc * 40 <= total:
                c = u
            else:
                break
        return c
    mean = m * n / 2
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    return max(int(math.floor(mean - 0.5 - Z975 * sd)), 0)


def has_ties(v):
    return len(np.unique(v)) != len(v)


def paired_case(name, d):
    d = np.asarray(d, dtype=float)
    nz = d[d != 0]
    n = len(nz)
    exact = 1 <= n <= 50 and not has_ties(np.abs(nz)) and n == len(d)
    p = f(stats.wilcoxon(d, zero_method="wilcox", correction=False,
                         method="exact" if exact else "asymptotic").pvalue)
    if exact:
        # cross-check the integer null distribution against scipy
        counts = signed_rank_counts(n)
        ranks = stats.rankdata(np.abs(nz))
        tp = int(round(ranks[nz > 0].sum()))
        lo = sum(counts[: tp + 1]) / 2 ** n
        hi = sum(counts[tp:]) / 2 ** n
        assert abs(min(1.0, 2 * min(lo, hi)) - p) <= 1e-12 * max(p, 1e-300), (name, p)
    m = len(d)
    walsh = np.sort(np.array([(d[i] + d[j]) / 2 for i in range(m) for j in range(i, m)]))
    c = signed_rank_ci_rank(m)
    ci = [f(walsh[0]), f(walsh[-1])] if c is None else [f(walsh[c]), f(walsh[len(walsh) - 1 - c])]
    k = int((d > 0).sum())
    sign_p = f(stats.binomtest(k, n, 0.5).pvalue) if n > 0 else 1.0
    return {"name": name, "d": [f(v) for v in d], "wilcoxon_exact": exact, "wilcoxon_p": p,
            "sign_p": sign_p, "hl": f(np.median(walsh)), "ci_rank": c, "ci": ci}


def gen_paired(rng):
    cases = []
    cases.append(paired_case("n8_exact", rng.normal(0.05, 0.1, 8)))
    cases.append(paired_case("n20_exact_shift", rng.normal(0.02, 0.01, 20)))
    cases.append(paired_case("n50_exact_null", rng.normal(0.0, 0.02, 50)))
    cases.append(paired_case("n51_asymptotic", rng.normal(0.003, 0.02, 51)))
    cases.append(paired_case("n200_lognormal_ratio",
                             np.log(rng.lognormal(0.0, 0.05, 200) * 1.01 / rng.lognormal(0.0, 0.05, 200))))
    cases.append(paired_case("n30_ties_zeros", np.round(rng.normal(0.0, 1.5, 30)) / 100.0))
    cases.append(paired_case("n5_tiny", rng.normal(0.1, 0.05, 5)))
    cases.append(paired_case("n300_strong_shift", rng.normal(0.2, 0.01, 300)))
    return cases


def unpaired_case(name, x, y):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    m, n = len(x), len(y)
    exact = (not has_ties(np.concatenate([x, y]))) and m * n <= 2500
    p = f(stats.mannwhitneyu(x, y, use_continuity=True,
                             method="exact" if exact else "asymptotic").pvalue)
    diffs = np.sort((y[None, :] - x[:, None]).ravel())
    c = mw_ci_rank(m, n)
    ci = [f(diffs[0]), f(diffs[-1])] if c is None else [f(diffs[c]), f(diffs[len(diffs) - 1 - c])]
    return {"name": name, "x": [f(v) for v in x], "y": [f(v) for v in y], "mw_exact": exact,
            "mw_p": p, "hl": f(np.median(diffs)), "ci_rank": c, "ci": ci}


def gen_unpaired(rng):
    cases = []
    cases.append(unpaired_case("n6_n7_exact", rng.normal(0, 1, 6), rng.normal(1, 1, 7)))
    cases.append(unpaired_case("n40_n50_exact", rng.normal(3.0, 0.1, 40), rng.normal(3.02, 0.1, 50)))
    cases.append(unpaired_case("n100_n120_asymptotic", np.log(rng.lognormal(4.0, 0.1, 100)),
                               np.log(rng.lognormal(4.0, 0.1, 120))))
    cases.append(unpaired_case("n60_n60_ties", np.round(rng.normal(10, 2, 60)),
                               np.round(rng.normal(11, 2, 60))))
    cases.append(unpaired_case("n3_n4_tiny", rng.normal(0, 1, 3), rng.normal(0, 1, 4)))
    cases.append(unpaired_case("n500_n400_shift", rng.normal(0.0, 0.05, 500), rng.normal(0.02, 0.05, 400)))
    return cases


def gen_multiple(rng):
    sets = [
        [0.01, 0.04, 0.03, 0.005],
        [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216],
        [0.5],
        [0.02, 0.02, 0.9, 0.0001],
        [float(v) for v in rng.uniform(0, 0.2, 25)],
    ]
    out = []
    for p in sets:
        out.append({"p": p,
                    "holm": [f(v) for v in multipletests(p, method="holm")[1]],
                    "bh": [f(v) for v in multipletests(p, method="fdr_bh")[1]]})
    return out


def gen_sign():
    pairs = [(0, 5), (1, 10), (5, 10), (3, 20), (17, 20), (40, 100), (480, 1000),
             (4900, 10000), (49500, 100000), (0, 60), (12, 30), (7, 7)]
    return [{"k": k, "n": n, "p": f(stats.binomtest(k, n, 0.5).pvalue)} for k, n in pairs]


def gen_normal_sf():
    zs = [-8.0, -3.0, -1.0, -0.1, 0.0, 0.3, 0.5, 1.0, 1.5, 1.959963984540054, 2.0, 2.5, 3.0,
          4.0, 5.0, 6.5, 8.0, 10.0, 15.0, 20.0, 26.0, 37.0]
    return [{"z": z, "sf": f(stats.norm.sf(z))} for z in zs]


def gen_geomean(rng):
    cases = []
    for k in (1, 3, 10):
        ratios = rng.lognormal(0.0, 0.05, k)
        half = rng.uniform(0.002, 0.02, k)
        lo = ratios * np.exp(-half * rng.uniform(0.8, 1.2, k))
        hi = ratios * np.exp(half * rng.uniform(0.8, 1.2, k))
        logs = np.log(ratios)
        se = (np.log(hi) - np.log(lo)) / (2 * Z975)
        mean = logs.mean()
        se_mean = math.sqrt((se ** 2).sum()) / k
        cases.append({"ratios": [f(v) for v in ratios], "lo": [f(v) for v in lo],
                      "hi": [f(v) for v in hi], "geomean": f(math.exp(mean)),
                      "ci": [f(math.exp(mean - Z975 * se_mean)), f(math.exp(mean + Z975 * se_mean))]})
    return cases


def write(name, obj):
    path = os.path.join(OUT, name)
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=1)
        fh.write("\n")
    print("wrote", os.path.normpath(path))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240917)
    write("descriptive.json", gen_descriptive(rng))
    write("median_ci_ranks.json", gen_ranks())
    write("regression.json", gen_regression(rng))
    write("paired.json", gen_paired(rng))
    write("unpaired.json", gen_unpaired(rng))
    write("multiple_testing.json", gen_multiple(rng))
    write("sign_test.json", gen_sign())
    write("normal_sf.json", gen_normal_sf())
    write("geomean.json", gen_geomean(rng))


if __name__ == "__main__":
    main()
