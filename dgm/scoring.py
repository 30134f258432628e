"""Scores of a node's own results (s solved, f failed), under the posterior Beta(1 + s, 1 + f).

A leaf module: the final-choice rule (dgm/strategies/final.py) and the store's one best-node
rule (dgm/store/best.py) both rank with these, so they cannot drift apart.
"""

from __future__ import annotations

import math
from functools import lru_cache


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
