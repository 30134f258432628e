"""What a run decided and found, in one comparable value (replay tests compare two runs)."""

from __future__ import annotations

from typing import Any

from dgm.store import Run


def run_decisions(run: Run) -> dict[str, Any]:
    """Job order, lineage with diffs, per-task results and scores."""
    order = run.events(limit=None, kinds=["job_started", "job_finished"])
    return {
        "order": [(e["kind"], e["job"]) for e in order],
        "lineage": [
            (n.id, n.parent_id, n.status, n.parent_id is not None and run.diff(n.id))
            for n in run.nodes()
        ],  # fmt: skip
        "results": sorted(
            (e.node_id, e.task_id, e.resolved, e.tests_passed, e.tests_total, e.empty_patch)
            for e in run.evaluations()
        ),  # fmt: skip
        "scores": {n: (s.passed, s.total) for n, s in run.scores().items()},
    }
