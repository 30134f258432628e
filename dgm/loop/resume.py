"""Resume: the search state rebuilt from recorded history, and jobs that were in flight
when the last process died submitted again under their own ids."""

from __future__ import annotations

from typing import Any

from dgm.store import Run
from dgm.store.selection import held_out_tasks
from dgm.strategies import Evaluate, Expand, NodeId, SearchState, TaskPlan
from dgm.strategies.state import DEFAULT_BARREN_AFTER


def rebuild_state(
    run: Run, plan: TaskPlan, barren_after: int = DEFAULT_BARREN_AFTER
) -> SearchState:
    """The search state from recorded history: active nodes (with their code ids),
    evaluations on planned tasks, failed expansions (rejected children and jobs that made
    no child), and each code's barren streak, replayed in the order things happened."""
    all_nodes = run.nodes()
    nodes = [(n.id, n.parent_id) for n in all_nodes if n.status == "active"]
    history: list[tuple[float, str, NodeId, str]] = []  # (when, what, node or parent, task)
    for n in all_nodes:
        if n.parent_id is None:
            continue
        if n.status == "active":
            history.append((n.created_at, "child", n.id, ""))
        else:  # a rejected child: a failed expansion of its parent
            history.append((n.created_at, "failed", n.parent_id, ""))
    for job in run.jobs(["done"]):
        if job.kind == "expand" and job.result and "node_id" not in job.result:
            history.append((job.finished_at or 0.0, "failed", int(job.inputs["parent"]), ""))
    planned = set(plan.stage1) | set(plan.stage2)
    active = {node for node, _ in nodes}
    evaluations = [e for e in run.evaluations() if e.task_id in planned and e.node_id in active]
    history += [(e.created_at, "failed_task", e.node_id, e.task_id)
                for e in evaluations if not e.resolved]  # fmt: skip
    failed = [who for _, what, who, _ in history if what == "failed"]
    codes = run.code_ids()
    results = [(e.node_id, e.task_id, e.resolved) for e in evaluations]
    ordered = _stage_order(results, plan)
    state = SearchState.replay(plan, nodes, ordered, failed, codes=codes, barren_after=barren_after)
    parents = {node: parent for node, parent in nodes}
    for node, count in _barren_streaks(sorted(history), parents, codes).items():
        state.set_barren_streak(node, count)
    return state


def _barren_streaks(
    history: list[tuple[float, str, NodeId, str]],
    parents: dict[NodeId, NodeId | None],
    codes: dict[NodeId, str],
) -> dict[NodeId, int]:
    """Each code's expansions without news since it last failed a new task, keyed by a
    node with that code (SearchState's rule, replayed in time order). A node without a
    code id keys itself."""
    root = next(node for node, parent in parents.items() if parent is None)
    seen = {codes.get(root, root)}
    streak: dict[NodeId | str, int] = {}
    holder: dict[NodeId | str, NodeId] = {codes.get(root, root): root}
    failed_tasks: set[tuple[NodeId | str, str]] = set()
    for _, what, who, task in history:
        if what == "failed_task":
            key = codes.get(who, who)
            holder.setdefault(key, who)
            if (key, task) not in failed_tasks:
                failed_tasks.add((key, task))
                streak[key] = 0
            continue
        parent = who if what == "failed" else parents[who]
        if parent is None or parent not in parents:
            continue
        key = codes.get(parent, parent)
        holder.setdefault(key, parent)
        if what == "child":
            code = codes.get(who, who)
            holder.setdefault(code, who)
            novel = code not in seen
            seen.add(code)
            streak[key] = 0 if novel else streak.get(key, 0) + 1
        else:
            streak[key] = streak.get(key, 0) + 1
    return {holder[key]: count for key, count in streak.items() if key in holder}


def _stage_order(evaluations: list[tuple[NodeId, str, bool]], plan: TaskPlan) -> list:
    """Stage-1 results before stage-2 ones, so replay opens stage 2 as the run did."""
    stage1 = set(plan.stage1)
    return [e for e in evaluations if e[1] in stage1] + [
        e for e in evaluations if e[1] not in stage1
    ]


def in_flight_actions(run: Run, state: SearchState) -> list[tuple[Expand | Evaluate, str]]:
    """(action, job id) for every search job left queued or running (a GEA expansion with
    its group); jobs made obsolete by what was recorded since are cancelled instead, and
    confirmation jobs (held-out tasks) are left to the confirmation stage. Node ids in the
    inputs of rows written before ids were ints are strings: read as ints."""
    actions: list[tuple[Any, str]] = []
    held_out = set(held_out_tasks(run))
    for job in run.jobs(["queued", "running"]):
        if job.kind == "eval":
            action: Expand | Evaluate = Evaluate(int(job.inputs["node"]), job.inputs["task"])
            if action.task in held_out:
                continue  # a confirmation job: the confirmation stage runs it again
            if action.node not in state.node_ids or action.task in state.results(action.node):
                run.fail_job(job.id, "obsolete after resume", state="cancelled")
                continue
        else:
            group = tuple(int(g) for g in job.inputs.get("group", ()))
            action = Expand(int(job.inputs["parent"]), group)
        run.event("job_resumed", job=job.id)
        actions.append((action, job.id))
    return actions
