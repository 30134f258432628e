"""What the live page shows, as JSON-able dicts built from a read-only run.

Every string here may have been written by an agent (origins, diffs, trajectories, test
output): the page puts them in the DOM as text only, never as HTML.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from dgm.report.data import tamper_lines
from dgm.report.logs import EvalLogs, load_trajectory, read_text
from dgm.report.progress import run_progress
from dgm.report.trajectory import find_evaluation
from dgm.store import Run
from dgm.store.best import BestRule, Candidate, pick_best
from dgm.store.live import events_after, llm_calls, nodes_flagged
from dgm.store.steering import marked_nodes, requests

DIFF_LIMIT = 400_000
"""Characters of a diff sent to the page; the rest is cut with a note."""
TEXT_LIMIT = 200_000
RUNNING = ("running",)


def tree(run: Run) -> dict[str, Any]:
    """The lineage as columns (compact for 10,000 nodes): one entry per node, id order.
    Four aggregate queries, no per-node decoding: rebuilt on every change of a live run."""
    scores, costs = run.scores(), run.aggregates.node_costs()
    improved = nodes_flagged(run.db, "improve_changed")
    rule = BestRule.of(run)
    pinned, banned = marked_nodes(run.db, "pin"), set(rule.banned)
    cols: dict[str, list[Any]] = {k: [] for k in (
        "id", "parent", "passed", "total", "tampered", "improve", "status", "created", "cost",
        "origin", "mark")}  # fmt: skip
    candidates = []
    for node, parent, _depth, status, origin, created_at in run.aggregates.node_summaries():
        score = scores.get(node)
        passed, total, tampered = (
            (score.passed, score.total, score.tampered) if score else (0, 0, 0)
        )
        candidates.append(Candidate(node, status, passed, total, tampered, parent))
        cols["id"].append(node)
        cols["parent"].append(parent)
        cols["passed"].append(passed)
        cols["total"].append(total)
        cols["tampered"].append(tampered)
        cols["improve"].append(int(node in improved))
        cols["status"].append(status)
        cols["created"].append(round(created_at, 2))
        cols["cost"].append(round(costs.get(node, 0.0), 4))
        cols["origin"].append(origin[:80])
        cols["mark"].append("banned" if node in banned else "pinned" if node in pinned else "")
    return {"best": pick_best(candidates, rule), **cols}


def node_page(run: Run, node_id: int, against: int | None = None) -> dict[str, Any]:
    """One node: origin, diff (against its parent or `against`), per-task results with the
    judge's evidence, its LLM calls and spend."""
    node = run.node(node_id)
    if against is None:
        diff = run.diff(node.id)
        base = node.parent_id
    else:
        diff = run.diff(run.node(against).id, node.id)
        base = against
    if len(diff) > DIFF_LIMIT:
        diff = diff[:DIFF_LIMIT] + f"\n[... diff cut at {DIFF_LIMIT} characters ...]"
    results = []
    for e in run.evaluations(node.id):
        logs = EvalLogs.of(run.path, e.log_dir)
        results.append({
            "task": e.task_id, "benchmark": e.benchmark, "stage": e.stage,
            "resolved": e.resolved, "tampered": e.tampered, "empty": e.empty_patch,
            "tests": [e.tests_passed, e.tests_total], "agent_s": e.agent_seconds,
            "judge_s": e.judge_seconds, "cost": round(e.cost_usd, 4), "error": e.error or "",
            "evidence": e.details.get("tamper_evidence") or "",
            "tests_detail": e.details.get("tests") or {},
            "trajectory": bool(logs and (logs.trajectory or logs.llm)),
        })  # fmt: skip
    warned = [(e.task_id, e.details.get("tamper_warnings") or []) for e in run.evaluations(node.id)]
    calls = llm_calls(run.db, node.id)
    spend: dict[str, float] = {}
    for call in calls:
        role = str(call["role"] or "unknown")
        spend[role] = round(spend.get(role, 0.0) + (call["cost_usd"] or 0.0), 6)
    mark = ("banned" if node.id in marked_nodes(run.db, "ban")
            else "pinned" if node.id in marked_nodes(run.db, "pin") else "")  # fmt: skip
    return {
        "id": node.id, "parent": node.parent_id, "depth": node.depth, "status": node.status,
        "created": node.created_at, "commit": node.commit, "origin": node.origin,
        "meta": {k: str(v)[:500] for k, v in node.meta.items() if k != "tamper_warnings"},
        "warnings": tamper_lines(node.meta, [w for w in warned if w[1]]),
        "children": [c.id for c in run.children(node.id)], "mark": mark,
        "diff": diff, "diffBase": base, "results": results, "calls": calls, "spend": spend,
    }  # fmt: skip


def trajectory_page(run: Run, node_id: int, task: str) -> dict[str, Any]:
    """One task's trajectory, step by step, with the judge's test output."""
    evaluation = find_evaluation(run, node_id, task)
    logs = EvalLogs.of(run.path, evaluation.log_dir)
    traj = load_trajectory(logs) if logs else None
    return {
        "node": node_id,
        "task": evaluation.task_id,
        "trajectory": dataclasses.asdict(traj) if traj else None,
        "testOutput": read_text(logs.test_output, TEXT_LIMIT) if logs else None,
        "patch": read_text(logs.patch, TEXT_LIMIT) if logs else None,
    }


CURVE_POINTS = 2000
"""Points per progress curve sent to the page (a 10,000-node run has 250,000 evaluations)."""


def curves(run: Run) -> dict[str, Any]:
    """Best-so-far and archive mean against evaluations, dollars and seconds, thinned to
    CURVE_POINTS (the last point always kept), and dollars by role."""
    progress = run_progress(run).as_dict()
    n = len(progress["evals"])
    step = max(1, -(-n // CURVE_POINTS))
    keep = list(range(0, n, step)) + ([n - 1] if n and (n - 1) % step else [])
    return {
        "progress": {k: [v[i] for i in keep] for k, v in progress.items()},
        "spendByRole": {
            str(r or "unknown"): round(u["cost_usd"] or 0.0, 4)
            for r, u in run.usage_by("role").items()
        },  # fmt: skip
    }


def progress_page(run: Run, events_since: int = 0, curves_now: dict | None = None) -> dict:
    """Curves (given, or built now), jobs running now, steering requests, the events."""
    now = time.time()
    placed = {e.get("job"): e for e in run.events_of("job_placed")} if _placing(run) else {}
    running = []
    for job in run.jobs(RUNNING):
        where = placed.get(job.id, {})
        running.append({
            "id": job.id[:12], "kind": job.kind, "node": job.inputs.get("node",
            job.inputs.get("parent")), "task": job.inputs.get("task") or job.inputs.get("task_id"),
            "for_s": round(now - (job.started_at or now), 1),
            "where": where.get("node") or ("ray cluster" if placed else "this machine"),
        })  # fmt: skip
    limits = run.config.limits
    return {
        "name": run.config.name,
        "strategy": run.config.strategy.name,
        "limits": {
            "budget_usd": limits.budget_usd,
            "max_evals": limits.max_evals,
            "workers": run.config.workers,
        },  # fmt: skip
        "spend": round(run.spend_usd(), 4),
        **(curves_now or curves(run)),
        "running": running,
        "steering": [r.as_dict() for r in requests(run.db)],
        "events": events_after(run.db, events_since),
    }


def _placing(run: Run) -> bool:
    return run.config.executor.kind == "ray"
