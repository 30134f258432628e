"""GEA's pooled group experience, read from a run's store for an expand job's input."""

from __future__ import annotations

from collections.abc import Sequence

from dgm.store import Run
from dgm.strategies import NodeId
from dgm.strategies.gea import group_experience, member_record


def group_experience_from_run(run: Run, members: Sequence[NodeId]) -> str:
    """For each member: the change that made it (its origin), the tasks it fixed or broke
    against its parent (on the tasks both were evaluated on), and where the judge caught
    it tampering with the tests."""
    records = []
    for member in members:
        node = run.node(member)
        evaluations = run.evaluations(node.id)
        own = {e.task_id: e.resolved for e in evaluations}
        tampered = {e.task_id for e in evaluations if e.tampered}
        parent = (
            {e.task_id: e.resolved for e in run.evaluations(node.parent_id)}
            if node.parent_id is not None
            else {}
        )
        records.append(member_record(member, node.origin or "", own, parent, tampered))
    return group_experience(records)
