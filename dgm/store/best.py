"""The one rule for "the best node", used by the loop's summary, `dgm status`, `dgm tree`,
the report and `dgm export`.

1. When the run's confirmation stage ran (dgm/loop/confirmation.py), the node it chose.
2. Otherwise the one shipping rule, `dgm.scoring.ship_choice`, over the eligible nodes:
   the best lower credible bound among those with at least `strategy.final.min_evals`
   evaluations (capped at the most any eligible node has); ties: more evaluations, then
   the older node. The strategies' final choice (dgm/strategies/final.py) calls the same
   function. No eligible node: None (nothing ships).

A node is eligible when it is not rejected, has been evaluated, and no evaluation of it
was found tampered with (the judge's canaries caught its patch interfering with the test
run): a perfect score with one tampered evaluation is still never best, never exported,
never confirmed. Every caller reads `eligible`, the confirmed node included.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dgm.scoring import posterior_mean, ship_choice
from dgm.store.selection import confirmed_node
from dgm.store.steering import marked_nodes

__all__ = ["BestRule", "Candidate", "best_node", "eligible", "pick_best", "posterior_mean"]


@dataclass(frozen=True)
class Candidate:
    node: int
    status: str
    passed: int
    total: int
    tampered: int = 0
    """Evaluations of this node the judge found tampered with."""


@dataclass(frozen=True)
class BestRule:
    quantile: float = 0.1
    min_evals: int = 10
    confirmed: int | None = None
    """The confirmation stage's verdict, when it ran."""
    banned: frozenset[int] = frozenset()
    """Nodes a person banned (dgm/store/steering.py): never best, so never shipped."""

    @classmethod
    def of(cls, run: Any, min_evals: int | None = None) -> BestRule:
        """The rule for a `Run`: its final-choice settings and its confirmation record."""
        final = run.config.strategy.final
        evals = final.min_evals if min_evals is None else min_evals
        return cls(
            final.quantile, evals, confirmed_node(run), frozenset(marked_nodes(run.db, "ban"))
        )


def eligible(candidate: Candidate) -> bool:
    """May this node be called best at all (whatever its score)?"""
    return candidate.total > 0 and candidate.status != "rejected" and not candidate.tampered


def pick_best(candidates: Iterable[Candidate], rule: BestRule | None = None) -> int | None:
    rule = rule or BestRule()
    pool = [c for c in candidates if eligible(c) and c.node not in rule.banned]
    if not pool:
        return None
    if rule.confirmed is not None and any(c.node == rule.confirmed for c in pool):
        return rule.confirmed
    pool.sort(key=lambda c: c.node)  # ties go to the older node
    chosen = ship_choice([c.passed for c in pool], [c.total for c in pool], rule.quantile,
                         rule.min_evals)  # fmt: skip
    return None if chosen is None else pool[chosen].node


def best_node(run: Any, min_evals: int | None = None) -> int | None:
    """The best node of a `Run` by the rule above."""
    scores = run.scores()
    return pick_best(
        (
            Candidate(n.id, n.status, s.passed, s.total, s.tampered)
            for n in run.nodes()
            if (s := scores.get(n.id)) is not None
        ),
        BestRule.of(run, min_evals),
    )
