"""Resume: the search state rebuilt from recorded history, and jobs that were in flight
when the last process died submitted again under their own ids."""

from __future__ import annotations

from typing import Any

from dgm.store import Run
from dgm.strategies import Evaluate, Expand, SearchState, TaskPlan


def rebuild_state(run: Run, plan: TaskPlan) -> SearchState:
    """The search state from recorded history: active nodes, evaluations on planned
    tasks, and failed expansions (rejected children and jobs that made no child)."""
    nodes = [(str(n.id), None if n.parent_id is None else str(n.parent_id))
             for n in run.nodes() if n.status == "active"]  # fmt: skip
    rejected = {n.id: n.parent_id for n in run.nodes() if n.status != "active"}
    failed: list[str] = [str(parent) for parent in rejected.values()]
    for job in run.jobs(["done"]):
        if job.kind == "expand" and job.result and "node_id" not in job.result:
            failed.append(str(job.inputs["parent"]))
    planned = set(plan.stage1) | set(plan.stage2)
    active = {node for node, _ in nodes}
    evaluations = [(str(e.node_id), e.task_id, e.resolved) for e in run.evaluations()
                   if e.task_id in planned and str(e.node_id) in active]  # fmt: skip
    return SearchState.replay(plan, nodes, _stage_order(evaluations, plan), failed)


def _stage_order(evaluations: list[tuple[str, str, bool]], plan: TaskPlan) -> list:
    """Stage-1 results before stage-2 ones, so replay opens stage 2 as the run did."""
    stage1 = set(plan.stage1)
    return [e for e in evaluations if e[1] in stage1] + [
        e for e in evaluations if e[1] not in stage1
    ]


def in_flight_actions(run: Run, state: SearchState) -> list[tuple[Expand | Evaluate, str]]:
    """(action, job id) for every job left queued or running; jobs made obsolete by what
    was recorded since are cancelled instead."""
    actions: list[tuple[Any, str]] = []
    for job in run.jobs(["queued", "running"]):
        if job.kind == "eval":
            action: Expand | Evaluate = Evaluate(job.inputs["node"], job.inputs["task"])
            if action.node not in state.node_ids or action.task in state.results(action.node):
                run.fail_job(job.id, "obsolete after resume", state="cancelled")
                continue
        else:
            action = Expand(job.inputs["parent"])
        run.event("job_resumed", job=job.id)
        actions.append((action, job.id))
    return actions
