"""Scores of a node's own results (s solved, f failed), under the posterior Beta(1 + s, 1 + f).

A leaf module, home of the one shipping rule (`ship_order`, `ship_choice`): the store's
best node (dgm/store/best.py: `dgm status`, `dgm export`, the loop's summary), the
strategies' final choice (dgm/strategies/final.py: the simulator, the confirmation stage)
all call it, so they cannot drift apart.

The rule, over the candidates a caller allows (the store drops rejected and tampered nodes):
1. A node with no evaluation never ships. No evaluated candidate at all: nothing ships
   (None), everywhere; the simulator scores "nothing shipped" as the seed's rate.
2. A candidate needs `min_evals` evaluations, capped at the most any candidate has (a
   short run still ships its best-measured node, never an unmeasured one): with root
   3/3, A 0/4, B 4/4 and min_evals 10, the bar is 4 and B ships.
3. Among those, the best lower credible bound (the `quantile` of the node's posterior);
   ties: more evaluations, then the earlier candidate (the older node).

The posterior (issue 27 round six): Beta(1 + s + k m, 1 + f + k (1 - m)), a prior of
k = `prior_strength` pseudo-results at m, the posterior mean of the node's parent's own
results (`parent_prior`); the root, or a node whose parent is not a candidate, keeps
Beta(1 + s, 1 + f). Most children measure like their parent, so a 3/3 child of a 0.3
parent is not ranked as a 3/3 agent: that is what makes a small `min_evals` (3) safe
(dgm/simulate/README.md, round six). k = 0 is the flat rule of before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np


def posterior_mean(passed: int, total: int) -> float:
    """Mean of Beta(1 + passed, 1 + failed): a score that does not reward tiny samples."""
    return (1 + passed) / (2 + total)


@lru_cache(maxsize=65536)
def beta_quantile(a: float, b: float, q: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on the regularised incomplete beta."""
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if _betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def lower_bound(solved: int, failed: int, quantile: float) -> float:
    return beta_quantile(1.0 + solved, 1.0 + failed, quantile)


Prior = tuple[np.ndarray, np.ndarray]
"""(pseudo-successes, pseudo-failures) per candidate, added to Beta(1 + s, 1 + f)."""


def parent_prior(
    passed: Sequence[int] | np.ndarray,
    totals: Sequence[int] | np.ndarray,
    parents: Sequence[int] | np.ndarray,
    strength: float,
) -> Prior:
    """`strength` pseudo-results at the posterior mean of each candidate's parent's own
    results; `parents[i]`: the position of i's parent in the same arrays, -1 for none
    (the root, or a parent that is not a candidate): no prior."""
    s, n = np.asarray(passed, dtype=float), np.asarray(totals, dtype=float)
    p = np.asarray(parents, dtype=np.int64)
    has = p >= 0
    q = np.where(has, p, 0)
    mean = (1.0 + s[q]) / (2.0 + n[q]) if len(q) else np.zeros(0)
    ps = np.where(has, strength * mean, 0.0)
    return ps, np.where(has, strength - ps, 0.0)


def posterior_ab(
    passed: Sequence[int] | np.ndarray, totals: Sequence[int] | np.ndarray, prior: Prior | None
) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of each candidate's posterior Beta(a, b)."""
    s, n = np.asarray(passed, dtype=float), np.asarray(totals, dtype=float)
    a, b = 1.0 + s, 1.0 + n - s
    return (a, b) if prior is None else (a + prior[0], b + prior[1])


def _eligible(totals: np.ndarray, min_evals: int) -> np.ndarray:
    """Positions of candidates with enough evaluations (rule 2)."""
    evaluated = totals > 0
    if not evaluated.any():
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(totals >= min(min_evals, int(totals.max())))


def ship_order(
    passed: Sequence[int] | np.ndarray,
    totals: Sequence[int] | np.ndarray,
    quantile: float,
    min_evals: int,
    prior: Prior | None = None,
) -> list[int]:
    """Positions of the candidates that may ship, best first (the rule above)."""
    n = np.asarray(totals, dtype=np.int64)
    a, b = posterior_ab(passed, totals, prior)
    idx = _eligible(n, min_evals)
    bounds = np.array([beta_quantile(float(a[i]), float(b[i]), quantile) for i in idx])
    return [int(i) for i in idx[np.lexsort((idx, -n[idx], -bounds))]] if len(idx) else []


def ship_choice(
    passed: Sequence[int] | np.ndarray,
    totals: Sequence[int] | np.ndarray,
    quantile: float,
    min_evals: int,
    prior: Prior | None = None,
) -> int | None:
    """`ship_order(...)[0]`, or None: computes bounds only for candidates that could win
    (a bound never exceeds the posterior mean, so candidates are visited by mean, best
    first; a 10,000-node run computes a handful)."""
    n = np.asarray(totals, dtype=np.int64)
    idx = _eligible(n, min_evals)
    if len(idx) == 0:
        return None
    a, b = posterior_ab(passed, totals, prior)
    means = a[idx] / (a[idx] + b[idx])
    best: tuple[float, int, int] | None = None
    for k in np.argsort(-means, kind="stable"):
        if best is not None and means[k] < best[0]:
            break
        i = int(idx[k])
        key = (beta_quantile(float(a[i]), float(b[i]), quantile), int(n[i]), -i)
        best = key if best is None or key > best else best
    assert best is not None
    return -best[2]


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) (continued fraction, Numerical Recipes 6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
        + a * math.log(x) + b * math.log1p(-x)
    )  # fmt: skip
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h
