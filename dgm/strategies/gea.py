"""Group-evolving agents (GEA): a group of parents improves together, sharing experience.

A round: choose a group of `group_size` parents from the archive by performance plus
novelty, then expand each member with `Expand(member, group=the others)`; the expand job
shows each member's improvement step the group's pooled experience (what every member
changed and which tasks that fixed or broke, `group_experience` below), so an
improvement found in one branch can spread to the others.

- Performance: the posterior mean (1 + s) / (2 + s + f) of the node's own results.
- Candidates: the archive's (at most `CANDIDATE_POOL` best by performance).
- Novelty: cosine distance between per-task success vectors (+1 solved, -1 failed, 0 not
  evaluated), so two agents that solve the same tasks are close even if one has more
  results. The first member is the best by performance + w * (mean distance to the
  archive); each next one maximises performance + w * (mean distance to the members
  chosen so far), which keeps the group diverse.
- Evaluation: like DGM, each child is evaluated on its whole open stage before it may
  join the archive (oldest child first). No generation barrier: a new group is chosen
  when the last one's members have all been expanded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dgm.strategies.actions import Action, Expand
from dgm.strategies.base import Strategy, archive_mask, first_unevaluated, wait_or_stop
from dgm.strategies.state import NodeId, SearchState


def success_vectors(state: SearchState, nodes: Sequence[int]) -> np.ndarray:
    """Rows of +1 (solved), -1 (failed), 0 (not evaluated) over the plan's tasks."""
    tasks = state.plan.stage1 + state.plan.stage2
    column = {t: j for j, t in enumerate(tasks)}
    out = np.zeros((len(nodes), len(tasks)))
    for row, i in enumerate(nodes):
        for task, solved in state.results(state.node_id(i)).items():
            out[row, column[task]] = 1.0 if solved else -1.0
    return out


def cosine_distances(vectors: np.ndarray) -> np.ndarray:
    """1 - cosine similarity between every pair of rows (1 for an all-zero row)."""
    norms = np.linalg.norm(vectors, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    unit = vectors / safe[:, None]
    distance = 1.0 - unit @ unit.T
    distance[norms == 0, :] = 1.0
    distance[:, norms == 0] = 1.0
    np.fill_diagonal(distance, 0.0)
    return distance


CANDIDATE_POOL = 200
"""Groups are chosen among at most this many best-performing archive nodes."""


@dataclass(frozen=True)
class GroupChoice:
    members: tuple[NodeId, ...]
    performance: tuple[float, ...]
    novelty: tuple[float, ...]
    """Each member's mean cosine distance to the archive when it was chosen."""


def choose_group(state: SearchState, size: int, novelty_weight: float) -> GroupChoice | None:
    idx = np.flatnonzero(archive_mask(state) & state.expandable_column())
    if len(idx) == 0:
        return None
    solved, failed = state.own_record()
    s, f = solved[idx], failed[idx]
    performance = (1.0 + s) / (2.0 + s + f)
    if len(idx) > CANDIDATE_POOL:  # novelty is quadratic: only the best performers compete
        keep = np.sort(np.argsort(-performance, kind="stable")[:CANDIDATE_POOL])
        idx, performance = idx[keep], performance[keep]
    distance = cosine_distances(success_vectors(state, idx))
    novelty = distance.sum(axis=1) / max(1, len(idx) - 1)
    chosen = [int(np.argmax(performance + novelty_weight * novelty))]
    while len(chosen) < min(size, len(idx)):
        spread = distance[:, chosen].mean(axis=1)
        score = performance + novelty_weight * spread
        score[chosen] = -np.inf
        chosen.append(int(np.argmax(score)))
    return GroupChoice(
        tuple(state.node_id(int(idx[c])) for c in chosen),
        tuple(float(performance[c]) for c in chosen),
        tuple(float(novelty[c]) for c in chosen),
    )


class GEAStrategy(Strategy):
    name = "gea"

    def __init__(
        self, rng: np.random.Generator, group_size: int = 3, novelty_weight: float = 0.5
    ) -> None:
        super().__init__(rng)
        self.group_size = group_size
        self.novelty_weight = novelty_weight
        self._queue: list[Expand] = []
        self.groups: list[GroupChoice] = []

    def next_action(self, state: SearchState) -> Action:
        evaluation = first_unevaluated(state)
        if evaluation is not None:
            return evaluation
        if not self._queue:
            group = choose_group(state, self.group_size, self.novelty_weight)
            if group is None:
                return wait_or_stop(state, "no evaluated node to expand")
            self.groups.append(group)
            self._queue = [
                Expand(m, tuple(o for o in group.members if o != m)) for m in group.members
            ]
        return self._queue.pop(0)


@dataclass(frozen=True)
class MemberRecord:
    """What one group member did, for the others' improvement steps."""

    node: NodeId
    change: str
    """The improvement that made it (its problem statement), shortened."""
    fixed: tuple[str, ...]
    """Tasks it solves that its parent failed."""
    broke: tuple[str, ...]
    """Tasks its parent solved that it fails."""
    tampered: tuple[str, ...] = ()
    """Tasks where the judge caught it tampering with the tests: its change is no lesson."""


def member_record(
    node: NodeId,
    change: str,
    own: dict[str, bool],
    parent: dict[str, bool],
    tampered: Sequence[str] = (),
) -> MemberRecord:
    common = sorted(set(own) & set(parent))
    return MemberRecord(
        node,
        change,
        tuple(t for t in common if own[t] and not parent[t]),
        tuple(t for t in common if parent[t] and not own[t]),
        tuple(sorted(tampered)),
    )


def group_experience(records: Sequence[MemberRecord], limit: int = 6_000) -> str:
    """The pooled experience as text for the diagnosis: one paragraph per member."""
    parts = []
    for r in records:
        change = " ".join(r.change.split())[:1_200] or "(the seed agent: no change)"
        parts.append(
            f"- agent {r.node}: {change}\n"
            f"  fixed (solved where its parent failed): {', '.join(r.fixed) or 'none'}\n"
            f"  broke (failed where its parent solved): {', '.join(r.broke) or 'none'}"
        )
        if r.tampered:  # never a change to reuse: the judge caught it, it earned nothing
            parts[-1] += (
                f"\n  CAUGHT TAMPERING with the tests (never rewarded; do not reuse this "
                f"change) on: {', '.join(r.tampered)}"
            )
    return "\n".join(parts)[:limit]
