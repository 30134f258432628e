"""The one rule for "the best node", used by the loop's summary, `dgm status`, `dgm tree`,
the report and `dgm export`.

1. When the run's confirmation stage ran (dgm/loop/confirmation.py), the node it chose.
2. Otherwise the one shipping rule, `dgm.scoring.ship_choice`, over the eligible nodes:
   the best lower credible bound among those with at least `strategy.final.min_evals`
   evaluations (capped at the most any eligible node has); ties: more evaluations, then
   the older node. A node's posterior has `strategy.final.prior_strength` pseudo-results
   at its parent's posterior mean (dgm/scoring.py); a parent with a tampered evaluation
   lends none (the one difference from the strategies' search state, which knows no
   tampering). The strategies' final choice (dgm/strategies/final.py) calls the same
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

from dgm.scoring import parent_prior, posterior_mean, ship_choice
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
    parent: int | None = None
    """The parent's node id (its results are the node's prior); None: the root."""


@dataclass(frozen=True)
class BestRule:
    quantile: float = 0.1
    min_evals: int = 3
    confirmed: int | None = None
    """The confirmation stage's verdict, when it ran."""
    banned: frozenset[int] = frozenset()
    """Nodes a person banned (dgm/store/steering.py): never best, so never shipped."""
    prior_strength: float = 4.0
    """Pseudo-results at the parent's posterior mean (dgm/scoring.py; 0: flat)."""

    @classmethod
    def of(cls, run: Any, min_evals: int | None = None) -> BestRule:
        """The rule for a `Run`: its final-choice settings and its confirmation record."""
        final = run.config.strategy.final
        evals = final.min_evals if min_evals is None else min_evals
        banned = frozenset(marked_nodes(run.db, "ban"))
        return cls(final.quantile, evals, confirmed_node(run), banned, final.prior_strength)


def eligible(candidate: Candidate) -> bool:
    """May this node be called best at all (whatever its score)?"""
    return candidate.total > 0 and candidate.status != "rejected" and not candidate.tampered


def pick_best(candidates: Iterable[Candidate], rule: BestRule | None = None) -> int | None:
    rule = rule or BestRule()
    every = list(candidates)
    pool = [c for c in every if eligible(c) and c.node not in rule.banned]
    if not pool:
        return None
    if rule.confirmed is not None and any(c.node == rule.confirmed for c in pool):
        return rule.confirmed
    pool.sort(key=lambda c: c.node)  # ties go to the older node
    passed, totals = [c.passed for c in pool], [c.total for c in pool]
    prior = None
    if rule.prior_strength:
        # The parent's results, eligible or not (rejected, banned), unless tampered.
        known = {c.node: c for c in every if not c.tampered}
        lent = [known.get(c.parent) if c.parent is not None else None for c in pool]
        prior = parent_prior(  # position k holds pool[k]'s parent's counts
            [p.passed if p else 0 for p in lent],
            [p.total if p else 0 for p in lent],
            [k if p else -1 for k, p in enumerate(lent)],
            rule.prior_strength,
        )
    chosen = ship_choice(passed, totals, rule.quantile, rule.min_evals, prior)
    return None if chosen is None else pool[chosen].node


def best_node(run: Any, min_evals: int | None = None) -> int | None:
    """The best node of a `Run` by the rule above."""
    scores = run.scores()
    return pick_best(
        (
            Candidate(n.id, n.status, s.passed, s.total, s.tampered, n.parent_id)
            for n in run.nodes()
            if (s := scores.get(n.id)) is not None
        ),
        BestRule.of(run, min_evals),
    )
