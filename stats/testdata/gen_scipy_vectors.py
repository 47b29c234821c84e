#!/usr/bin/python3
"""Generate stats/testdata/scipy_vectors.json, the reference vectors for
compare/stats_test.go.

Run from the repository root with Debian 12's interpreter and SciPy
(python3-scipy 1.10.1, python3-numpy 1.24.2):

    /usr/bin/python3 stats/testdata/gen_scipy_vectors.py

The output is deterministic: every random input is drawn from a seeded
numpy Generator, and the SciPy bootstrap is seeded too.

What each section holds:

* mcnemar    -- exact McNemar p = min(1, 2*binom.cdf(min(b,c), b+c, 0.5)),
                plus scipy.stats.binomtest(min(b,c), b+c, 0.5).pvalue for
                reference (identical for p = 0.5 because the null
                distribution is symmetric).
* wilcoxon   -- scipy.stats.wilcoxon(d) with every default. The method SciPy
                1.10.1 picks ('exact' or 'approx', reported as "normal") is
                not exposed on the result object, so it is re-derived here
                from the rule in scipy/stats/_morestats.py and checked by
                re-running wilcoxon with that method explicitly.
* bootstrap  -- scipy.stats.bootstrap(method='percentile',
                n_resamples=10000); the paired cases pass (a, b) with
                paired=True (SciPy resamples one index vector for both) and
                statistic mean(b - a).
* percentile -- numpy.percentile (default 'linear') on small arrays, to pin
                the interpolation rule the bootstrap CI uses.
* holm       -- Holm step-down adjusted p-values from the hand-written
                reference holm() below (statsmodels' multipletests(method=
                'holm') algorithm; statsmodels is not installed here).
* wilson     -- Wilson score interval (no continuity correction) from the
                formula in wilson() below.
"""

import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "scipy_vectors.json")


# ---------------------------------------------------------------- McNemar

MCNEMAR_PAIRS = [
    (0, 0), (0, 1), (1, 0), (0, 5), (5, 0), (1, 1), (3, 3), (2, 5),
    (1, 20), (20, 1), (4, 9), (7, 7), (10, 11), (12, 30), (0, 30),
    (0, 60), (1, 60), (15, 35), (40, 60), (60, 40), (33, 50), (100, 130),
    (200, 150), (250, 251), (500, 530), (530, 500), (480, 560),
    (1000, 1100), (5000, 5200), (2, 2000), (0, 1000),
]


def mcnemar_cases():
    out = []
    for b, c in MCNEMAR_PAIRS:
        n = b + c
        k = min(b, c)
        if n == 0:
            p = 1.0
            bt = None
        else:
            p = min(1.0, 2.0 * stats.binom.cdf(k, n, 0.5))
            bt = float(stats.binomtest(k, n, 0.5).pvalue)
        out.append({"b": b, "c": c, "pvalue": float(p),
                    "binomtest_pvalue": bt})
    return out


# --------------------------------------------------------------- Wilcoxon

def scipy_110_method(d):
    """The choice rule of scipy 1.10.1 wilcoxon(method='auto'), copied from
    scipy/stats/_morestats.py: exact when len(d) <= 50 (len counts zeros),
    switched to the normal approximation when any difference is zero. Ties
    among the non-zero |d| do NOT switch it off in 1.10.1."""
    d = np.asarray(d, dtype=float)
    if len(d) == 0 or np.all(d == 0):
        return None
    mode = "exact" if len(d) <= 50 else "approx"
    if mode == "exact" and np.any(d == 0):
        mode = "approx"
    return mode


def wilcoxon_vectors():
    rng = np.random.default_rng(20240611)
    v = []

    def add(name, d):
        v.append((name, [float(x) for x in d]))

    # Small exact cases, all distinct and non-zero.
    add("single_positive", [3.0])
    add("single_negative", [-0.5])
    add("two_mixed", [1.5, -2.5])
    add("three_all_positive", [1.0, 2.0, 3.0])
    add("five_mixed", [0.3, -1.2, 2.2, 0.9, -0.1])
    add("center_of_distribution", [1, -2, -3, 4, 5, -6, 7, -8])
    add("corn_wilcoxon_1945",
        [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75])
    add("all_negative_12", [-float(i) * 0.7 for i in range(1, 13)])
    add("random_normal_20", rng.normal(0.3, 1.0, 20))
    # Ties but no zeros, n <= 50: scipy 1.10.1 still takes the exact path
    # and truncates the half-integer rank sum with int().
    add("ties_no_zeros_exact", [1, 1, -1, 2, 2, -2, 3, 3, 3, -4])
    add("ties_half_rank_sum", [0.5, -0.5, 1.0, 1.0, 1.0, -2.0, 3.0])
    # Zeros, n <= 50: normal approximation on the non-zero part.
    add("zeros_small", [0, 0, 1.5, -0.5, 2.0, 3.0, -1.0, 4.0, 0, 2.5])
    add("zeros_and_ties", [0, 1, 1, 1, -1, 2, 0, 2, -2, 3, 3, 0])
    add("single_nonzero_after_zeros", [0, 0, 0, 2.0])
    # n = 26..60 around the 50 threshold.
    add("random_26_exact", rng.normal(0.2, 1.0, 26))
    add("random_40_exact", rng.normal(-0.1, 1.0, 40))
    add("random_50_exact", rng.normal(0.25, 1.0, 50))
    add("random_51_normal", rng.normal(0.25, 1.0, 51))
    add("random_60_normal", rng.normal(0.1, 1.0, 60))
    add("random_55_with_zero",
        np.concatenate([rng.normal(0.3, 1.0, 54), [0.0]]))
    # 0/1-ish per-item score differences with many ties.
    add("pm1_only_30_exact_ties",
        rng.choice([-1.0, 1.0], size=30, p=[0.35, 0.65]))
    add("pm1_zero_40", rng.choice([-1.0, 0.0, 1.0], size=40,
                                  p=[0.15, 0.6, 0.25]))
    add("pm1_zero_200", rng.choice([-1.0, 0.0, 1.0], size=200,
                                   p=[0.12, 0.7, 0.18]))
    add("pm1_only_80_normal",
        rng.choice([-1.0, 1.0], size=80, p=[0.4, 0.6]))
    add("graded_scores_120",
        rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=120,
                   p=[0.1, 0.15, 0.4, 0.2, 0.15]))
    # Degenerate: everything zero; scipy 1.10.1 raises ValueError.
    add("all_zero", [0.0, 0.0, 0.0, 0.0])
    return v


def wilcoxon_cases():
    out = []
    for name, d in wilcoxon_vectors():
        mode = scipy_110_method(d)
        rec = {"name": name, "diffs": d}
        if mode is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = stats.wilcoxon(d)
                scipy_out = "pvalue=%r" % float(res.pvalue)
            except ValueError as e:
                scipy_out = "ValueError: %s" % e
            rec.update({"scipy_pvalue": None, "scipy_method": None,
                        "scipy_result": scipy_out,
                        "pvalue": 1.0, "method": "none"})
            out.append(rec)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            auto = stats.wilcoxon(d)
            forced = stats.wilcoxon(d, method=mode)
        p = float(auto.pvalue)
        # The re-derived rule must reproduce what 'auto' did.
        assert p == float(forced.pvalue), (name, p, forced.pvalue)
        method = "exact" if mode == "exact" else "normal"
        rec.update({"scipy_pvalue": p, "scipy_method": mode,
                    "scipy_statistic": float(auto.statistic),
                    "pvalue": p, "method": method})
        out.append(rec)
    return out


# -------------------------------------------------------------- bootstrap

def bootstrap_cases():
    rng = np.random.default_rng(7)
    out = []

    def paired(name, a, b, level, seed):
        res = stats.bootstrap(
            (a, b), lambda x, y, axis: np.mean(y - x, axis=axis),
            paired=True, vectorized=True, n_resamples=10000,
            confidence_level=level, method="percentile",
            random_state=np.random.default_rng(seed))
        out.append({"name": name, "kind": "paired",
                    "a": [float(x) for x in a], "b": [float(x) for x in b],
                    "level": level, "resamples": 10000, "scipy_seed": seed,
                    "lo": float(res.confidence_interval.low),
                    "hi": float(res.confidence_interval.high)})

    def single(name, x, level, seed):
        res = stats.bootstrap(
            (x,), np.mean, n_resamples=10000, confidence_level=level,
            method="percentile", random_state=np.random.default_rng(seed))
        out.append({"name": name, "kind": "single",
                    "a": [float(v) for v in x], "b": None,
                    "level": level, "resamples": 10000, "scipy_seed": seed,
                    "lo": float(res.confidence_interval.low),
                    "hi": float(res.confidence_interval.high)})

    a = rng.binomial(1, 0.70, 200).astype(float)
    b = np.where(rng.random(200) < 0.15, 1.0 - a, a)
    paired("paired_binary_200_95", a, b, 0.95, 1)

    a = np.clip(rng.normal(0.6, 0.2, 60), 0, 1)
    b = np.clip(a + rng.normal(0.05, 0.1, 60), 0, 1)
    paired("paired_scores_60_95", a, b, 0.95, 2)

    a = rng.random(100)
    b = np.clip(a + rng.normal(-0.02, 0.15, 100), 0, 1)
    paired("paired_scores_100_90", a, b, 0.90, 3)

    single("single_binary_150_95", rng.binomial(1, 0.4, 150).astype(float),
           0.95, 4)
    single("single_scores_80_99", rng.beta(4, 3, 80), 0.99, 5)
    return out


def percentile_cases():
    rng = np.random.default_rng(11)
    out = []
    arrays = [
        [1.0],
        [3.0, 1.0],
        [1.0, 2.0, 3.0, 4.0],
        list(rng.normal(0, 1, 7)),
        list(rng.normal(0, 1, 1001)),
        list(rng.integers(0, 5, 37).astype(float)),
    ]
    qs = [0.0, 2.5, 5.0, 25.0, 50.0, 95.0, 97.5, 99.5, 100.0]
    for x in arrays:
        out.append({"x": [float(v) for v in x], "q": qs,
                    "value": [float(np.percentile(x, q)) for q in qs]})
    return out


# ------------------------------------------------------------------- Holm

def holm(p):
    """Hand-written Holm step-down: sort ascending, multiply the i-th
    smallest (0-based) by m - i, running maximum, cap at 1, unsort. This
    is the algorithm of statsmodels multipletests(method='holm')."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adj = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        v = (m - rank) * p[i]
        running = max(running, v)
        adj[i] = min(1.0, running)
    return adj


HOLM_INPUTS = [
    [],
    [0.03],
    [0.01, 0.04, 0.03, 0.005],
    [0.2, 0.01, 0.5, 0.04, 0.03],
    [0.04, 0.04, 0.04],
    [0.001, 0.0, 1.0, 0.02],
    [0.5, 0.6, 0.7, 0.8],
    [0.01, 0.011, 0.012, 0.013, 0.3, 0.9],
    [0.049, 0.001, 0.025, 0.0125, 0.01, 0.04, 0.2, 0.6, 0.0004, 0.03],
    [0.3, 0.02, 0.02, 0.01, 0.4],
]


def holm_cases():
    return [{"p": list(p), "adjusted": holm(p)} for p in HOLM_INPUTS]


# ----------------------------------------------------------------- Wilson

def wilson(x, n, level):
    """Wilson score interval without continuity correction, clamped to
    [0, 1] against rounding."""
    z = float(stats.norm.ppf(1.0 - (1.0 - level) / 2.0))
    nf = float(n)
    phat = x / nf
    z2 = z * z
    denom = 1.0 + z2 / nf
    center = phat + z2 / (2.0 * nf)
    half = z * math.sqrt(phat * (1.0 - phat) / nf + z2 / (4.0 * nf * nf))
    lo = (center - half) / denom
    hi = (center + half) / denom
    return max(0.0, lo), min(1.0, hi)


WILSON_INPUTS = [
    (0, 10, 0.95), (10, 10, 0.95), (5, 10, 0.95), (1, 1, 0.95),
    (0, 1, 0.95), (37, 50, 0.95), (37, 50, 0.90), (37, 50, 0.99),
    (3, 200, 0.95), (199, 200, 0.95), (812, 1000, 0.95), (1, 3, 0.8),
]


def wilson_cases():
    out = []
    for x, n, level in WILSON_INPUTS:
        lo, hi = wilson(x, n, level)
        out.append({"successes": x, "n": n, "level": level,
                    "lo": lo, "hi": hi})
    out.append({"successes": 0, "n": 0, "level": 0.95,
                "lo": None, "hi": None})
    return out


def main():
    doc = {
        "generated_by": {
            "command": "/usr/bin/python3 stats/testdata/gen_scipy_vectors.py",
            "python": sys.version.split()[0],
            "scipy": scipy.__version__,
            "numpy": np.__version__,
        },
        "mcnemar": mcnemar_cases(),
        "wilcoxon": wilcoxon_cases(),
        "bootstrap": bootstrap_cases(),
        "percentile": percentile_cases(),
        "holm": holm_cases(),
        "wilson": wilson_cases(),
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
