"""Everything the HTML report shows, gathered from a run into one JSON-able dict.

The page is a pure function of this dict (embedded once as JSON), so what the report
knows can be read and tested here, without a browser. Sizes are kept in check for
1,000-node runs: evaluations are packed as short arrays, diffs are capped.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from dgm.report import lineage, logs
from dgm.report.costs import report_costs
from dgm.report.layout import tidy_layout
from dgm.report.progress import run_progress
from dgm.safefs import is_regular
from dgm.store import Run
from dgm.store.usage import spend_by_job

DIFF_LIMIT = 60_000  # characters of diff kept per node
# Verdict letters of the heatmap and the per-task table.
PASS, FAIL, EMPTY, ERROR, NONE, TAMPERED = "P", "F", "E", "X", ".", "T"
# Log files linked from the page, in the order of the bitmask bits in `evals` rows.
LINKED_FILES = (logs.TRAJECTORY, logs.TEST_OUTPUT, logs.PATCH, logs.LLM_LOG)


def report_data(run: Run, out_dir: Path) -> dict[str, Any]:
    """The report's data; log links are relative to `out_dir`, where the page is written."""
    graph = lineage.build_lineage(run)
    best = lineage.best_node(graph)
    best_path = set(lineage.ancestry(graph, best)) if best is not None else set()
    pos = tidy_layout(graph)
    nodes = {n.id: n for n in run.nodes()}
    evaluations = run.evaluations()
    tasks = sorted({e.task_id for e in evaluations})
    task_index = {t: i for i, t in enumerate(tasks)}

    heat: dict[int, list[str]] = {}
    per_node: dict[int, list[list[Any]]] = {}
    log_dirs: list[str] = []
    log_index: dict[str, int] = {}
    warned: dict[int, list[tuple[str, list]]] = {}
    forged: dict[int, list[str]] = {}  # node -> "task: the judge's evidence"
    rejudged: dict[int, list[str]] = {}
    for e in evaluations:
        if e.tampered:
            forged.setdefault(e.node_id, []).append(f"{e.task_id}: {e.tamper_evidence}"[:300])
        if e.details.get(WARNINGS):
            warned.setdefault(e.node_id, []).append((e.task_id, e.details[WARNINGS]))
        rejudged.setdefault(e.node_id, []).extend(rejudge_lines([e]))
        verdict = _verdict(e)
        row = heat.setdefault(e.node_id, [NONE] * len(tasks))
        i = task_index[e.task_id]
        # Several evaluations of one task (stages, reruns): a pass anywhere counts, and
        # tampering anywhere outranks even a pass.
        if row[i] != TAMPERED and (row[i] != PASS or verdict == TAMPERED):
            row[i] = verdict
        mask, log = _log_files(run.path, e.log_dir, log_dirs, log_index)
        per_node.setdefault(e.node_id, []).append(
            [
                i,
                verdict,
                e.tests_passed,
                e.tests_total,
                None if e.agent_seconds is None else round(e.agent_seconds, 1),
                round(e.cost_usd, 4),
                log,
                mask,
                e.stage,
                (e.error or "")[:300],
            ]
        )

    diffs = _diffs(run, [n for n in nodes.values() if n.parent_id is not None])
    usage = run.aggregates.usage_by_node_and_role()
    by_job = spend_by_job(run)
    out: list[dict[str, Any]] = []
    for node_id, attrs in graph.nodes(data=True):
        node = nodes[node_id]
        x, depth = pos[node_id]
        out.append(
            {
                "id": node_id,
                "parent": attrs["parent"],
                "x": x,
                "depth": depth,
                "status": attrs["status"],
                "origin": attrs["origin"],
                "passed": attrs["passed"],
                "total": attrs["total"],
                "cost": round(attrs["cost_usd"], 4),
                "created": node.created_at,
                "commit": node.commit,
                "children": graph.out_degree(node_id),
                "best": node_id == best,
                "onPath": node_id in best_path,
                "marks": attrs.get("marks", []),
                "meta": {k: str(v)[:200] for k, v in node.meta.items() if k != WARNINGS},
                "warnings": tamper_lines(node.meta, warned.get(node_id, []))
                + rejudged.get(node_id, [])[:30],
                "tampered": forged.get(node_id, [])[:30],
                "heat": "".join(heat.get(node_id, [])),
                "evals": per_node.get(node_id, []),
                "diff": diffs.get(node_id, ""),
                "usage": usage.get(node_id, {}),
                "made": by_job[node.job_id][1].as_dict() if node.job_id in by_job else None,
            }
        )

    started = min((n.created_at for n in nodes.values()), default=0.0)
    rel = os.path.relpath(run.path.resolve(), Path(out_dir).resolve())
    return {
        "run": {
            "name": run.config.name,
            "path": str(run.path),
            "strategy": run.config.strategy.name,
            "started": started,
            "generated": time.time(),
            "nodes": len(out),
            "evaluations": len(evaluations),
            "spend": round(run.spend_usd(), 4),
            "best": best,
            "tampered": {str(n): len(v) for n, v in sorted(forged.items())},
        },
        "runHref": "" if rel == "." else rel.replace(os.sep, "/") + "/",
        "linkedFiles": list(LINKED_FILES),
        "logDirs": log_dirs,
        "tasks": tasks,
        "nodes": out,
        "progress": run_progress(run).as_dict(),
        "costs": report_costs(run, best),
        "spendByRole": {
            str(role or "unknown"): round(u["cost_usd"] or 0.0, 4)
            for role, u in run.usage_by("role").items()
        },
    }


WARNINGS = "tamper_warnings"


def tamper_lines(meta: dict[str, Any], by_task: list[tuple[str, list]]) -> list[str]:
    """The static tamper scan's warnings of a node's diff and of its eval patches, one
    line each (at most 30): shown in the report, never counted as a verdict."""
    lines = [f"diff: {w['kind']}: {w['file']}: {w['why']}: {w['line']}"
             for w in meta.get(WARNINGS) or []]  # fmt: skip
    for task, warnings in by_task:
        lines += [f"{task}: {w['kind']}: {w['file']}: {w['why']}: {w['line']}" for w in warnings]
    return [line[:300] for line in lines[:30]]


def rejudge_lines(evaluations: list[Any]) -> list[str]:
    """Each re-judge a warning caused (extra mutated copies before a pass counts)."""
    lines = []
    for e in evaluations:
        again = e.details.get("rejudge")
        if isinstance(again, dict):
            why = ", ".join(map(str, again.get("why") or []))
            lines.append(f"{e.task_id}: re-judged ({why}): {again.get('outcome')}")
    return [line[:300] for line in lines[:30]]


def _verdict(e: Any) -> str:
    if e.tampered:
        return TAMPERED
    if e.resolved:
        return PASS
    if e.empty_patch:
        return EMPTY
    return ERROR if e.error else FAIL


def _log_files(
    run_dir: Path, log_dir: str | None, log_dirs: list[str], index: dict[str, int]
) -> tuple[int, int | None]:
    """(bitmask of LINKED_FILES present, index into log_dirs) for one evaluation."""
    if not log_dir:
        return 0, None
    folder = run_dir / log_dir
    mask = sum(1 << i for i, name in enumerate(LINKED_FILES) if is_regular(folder / name))
    if log_dir not in index:
        index[log_dir] = len(log_dirs)
        log_dirs.append(log_dir)
    return mask, index[log_dir]


def _diffs(run: Run, nodes: list[Any]) -> dict[int, str]:
    """Each node's diff against its parent, from one `git log` process (fast for 1,000)."""
    if not nodes:
        return {}
    marker = "\x00dgm-commit "
    proc = subprocess.run(
        [
            "git",
            "--git-dir",
            str(run.archive.path),
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "-p",
            "--no-color",
            "--no-ext-diff",
            "--format=%x00dgm-commit %H",
        ],
        input="".join(f"{n.commit}\n" for n in nodes),
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    )
    by_commit: dict[str, str] = {}
    for chunk in proc.stdout.split(marker)[1:]:
        sha, _, body = chunk.partition("\n")
        body = body.strip("\n")
        if len(body) > DIFF_LIMIT:
            body = body[:DIFF_LIMIT] + f"\n[... diff cut at {DIFF_LIMIT} characters ...]"
        by_commit[sha.strip()] = body
    return {n.id: by_commit.get(n.commit, "") for n in nodes}
