"""Statistics for the strategy tables: medians with never-reached seeds, paired
differences, and bootstrap CIs on ratios of medians (seeds resampled in pairs)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

BOOTSTRAP = 2000


def reached_array(values: Sequence[float | None]) -> np.ndarray:
    """Per seed; a seed that never reached counts as infinitely many evaluations."""
    return np.array([math.inf if v is None else v for v in values], dtype=float)


def median(values: Sequence[float | None]) -> float:
    return float(np.median(reached_array(values))) if values else math.inf


def paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """(mean of a - b, 95% CI low, high), normal approximation over paired seeds."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    half = 1.96 * d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.nan
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def ratio_of_medians(
    numerator: Sequence[float | None], denominator: Sequence[float | None], seed: int = 0
) -> tuple[float, float, float]:
    """(median(numerator) / median(denominator), bootstrap 95% CI low, high). Seeds are
    the same worlds in both, so they are resampled together; inf / inf is nan."""
    x, y = reached_array(numerator), reached_array(denominator)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(x), size=(BOOTSTRAP, len(x)))
    with np.errstate(invalid="ignore", divide="ignore"):
        point = float(np.median(x) / np.median(y))
        ratios = np.median(x[picks], axis=1) / np.median(y[picks], axis=1)
    ratios = np.where(np.isnan(ratios), 0.0, ratios)  # both never: no evidence either way
    low, high = np.percentile(ratios, [2.5, 97.5], method="nearest")  # inf stays inf
    return point, float(low), float(high)


def lag(make: Sequence[float | None], ship: Sequence[float | None]) -> float:
    """Median evaluations from making a target agent to shipping one, over the seeds
    that did both (nan when none did)."""
    gaps = [s - m for m, s in zip(make, ship, strict=True) if m is not None and s is not None]
    return float(np.median(gaps)) if gaps else math.nan
