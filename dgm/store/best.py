"""The one rule for "the best node", used by the loop's summary, `dgm status`, `dgm tree`,
the report and `dgm export`.

A node is eligible when it is not rejected and has at least `min_evals` evaluations; the
best eligible node has the highest posterior mean of its own pass rate (ties: more
evaluations, then the older node). To exclude more nodes (e.g. ones with a forged
evaluation), extend `eligible` and the `Candidate` it reads: every caller follows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Candidate:
    node: int
    status: str
    passed: int
    total: int


def posterior_mean(passed: int, total: int) -> float:
    """Mean of Beta(1 + passed, 1 + failed): a score that does not reward tiny samples."""
    return (1 + passed) / (2 + total)


def eligible(candidate: Candidate, min_evals: int = 1) -> bool:
    return candidate.total >= min_evals and candidate.status != "rejected"


def pick_best(candidates: Iterable[Candidate], min_evals: int = 1) -> int | None:
    ranked = [
        (posterior_mean(c.passed, c.total), c.total, -c.node)
        for c in candidates
        if eligible(c, min_evals)
    ]
    return -max(ranked)[2] if ranked else None


def best_node(run: Any, min_evals: int = 1) -> int | None:
    """The best node of a `Run` by the rule above."""
    scores = run.scores()
    return pick_best(
        (
            Candidate(n.id, n.status, scores[n.id].passed, scores[n.id].total)
            for n in run.nodes()
            if n.id in scores
        ),
        min_evals,
    )
