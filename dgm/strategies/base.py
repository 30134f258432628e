"""The strategy interface, and helpers several strategies share."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dgm.strategies.actions import WAIT, Action, Evaluate, Stop
from dgm.strategies.final import FinalRule
from dgm.strategies.state import NodeId, SearchState


class Strategy(ABC):
    """Answers, from the recorded state, what to do next.

    `next_action` is called once per free worker; the scheduler reports every started and
    finished job to the state before asking again, so a strategy may keep no memory of its
    own beyond what it wants to plan (e.g. DGM's current generation). All randomness comes
    from the `rng` given at construction, so a run is reproducible from its seed.
    """

    name: str = "strategy"

    def __init__(self, rng: np.random.Generator, final: FinalRule | None = None) -> None:
        self.rng = rng
        self.final = final or FinalRule()

    @abstractmethod
    def next_action(self, state: SearchState) -> Action:
        """Expand(parent), Evaluate(node, task), Wait or Stop."""

    def final_choice(self, state: SearchState) -> NodeId | None:
        """The id of the agent this strategy would ship if the run ended now, by the one
        shipping rule (final.py); None while no node has an evaluation."""
        return self.final.choose(state)


def first_unevaluated(state: SearchState) -> Evaluate | None:
    """Evaluate the oldest node that still has open tasks, on its first one in plan order.

    DGM, greedy and random evaluate every child on its whole stage before it may become a
    parent; oldest-first finishes the node that started first.
    """
    candidates = np.flatnonzero(state.awaiting_evaluation_column())
    if len(candidates) == 0:
        return None
    node = state.node_id(int(candidates[0]))
    return Evaluate(node, state.unevaluated_tasks(node)[0])


def archive_mask(state: SearchState) -> np.ndarray:
    """Nodes eligible as parents for score-based strategies: fully evaluated on their open
    stage (DGM adds a child to the archive only after its evaluation), with results."""
    column = state.settled_column() & (state.evals_column() > 0)
    if state.parents.pinned:  # a person pinned it: always a candidate
        known = set(state.node_ids)
        column[[state.index(n) for n in state.parents.pinned if n in known]] = True
    return column


def own_scores(state: SearchState) -> np.ndarray:
    """Each node's own solve rate on the tasks it was evaluated on (0 where none)."""
    solved, failed = state.own_record()
    evals = solved + failed
    return np.divide(solved, evals, out=np.zeros(state.size, dtype=float), where=evals > 0)


def best_by_score(state: SearchState, mask: np.ndarray | None = None) -> NodeId:
    """The archive node (or node of `mask`) with the highest own score; ties go to the node
    with more evaluations (more evidence), then to the older node. The root if none."""
    mask = archive_mask(state) if mask is None else mask
    if not mask.any():
        return state.node_id(0)
    idx = np.flatnonzero(mask)
    scores = own_scores(state)[idx]
    evals = state.evals_column()[idx]
    # lexsort sorts by the last key first; negate to get max score, max evals, min index.
    order = np.lexsort((idx, -evals, -scores))
    return state.node_id(int(idx[order[0]]))


def wait_or_stop(state: SearchState, reason: str) -> Action:
    """Wait while jobs are running (their results may unlock work), otherwise stop."""
    return WAIT if state.in_flight else Stop(reason)
