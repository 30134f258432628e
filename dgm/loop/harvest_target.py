"""Which runtime tools a parent could keep: the host side of the harvest expansion.

The eval job keeps the tools an agent wrote during a task (`<eval log>/out/tools/<name>/
{tool.json,tool.py}`, dgm/jobs/agent_run.py). A parent is offered a `harvest` expansion
(dgm/jobs/expand/harvest.py) when its SUCCESSFUL evaluations (resolved, not tampered) left tools
that its codebase lacks (same content hash, or a tool of that name already there), that
no earlier harvest of this parent tried, its agent.toml declares `[tools] dir`, and the
judge never caught it tampering (then the tampering is what its next step must hear).
These files are the agent's: read with dgm/safefs.py (no link followed, no FIFO opened,
sizes capped), and only ever run in a sandbox.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from dgm import safefs
from dgm.jobs.agent_run import MAX_KEPT_TOOLS, TOOL_FILES, TOOL_NAME
from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand.harvest import content_hash, tools_dir_of
from dgm.store import Evaluation, Run

log = logging.getLogger(__name__)

MAX_HARVEST = 8
"""Tools one harvest adds at most (the first found, in evaluation order)."""


def read_tools(root: Path, prefix: str = "") -> list[dict[str, Any]]:
    """The well-formed tools under `root/prefix` (`<name>/tool.json` + `tool.py`), at most
    MAX_KEPT_TOOLS; links, special files, oversized or malformed tools are skipped."""
    try:
        rels = list(safefs.walk_files(root, max_files=10_000))
    except safefs.UnsafeFile:
        return []
    names = sorted({r.split("/")[-2] for r in rels if r.startswith(prefix) and
                    len(r[len(prefix):].split("/")) == 2})  # fmt: skip
    found = []
    for name in names:
        if not TOOL_NAME.match(name):
            continue
        try:
            files = {f: safefs.read_text(root, f"{prefix}{name}/{f}", limit)
                     for f, limit in TOOL_FILES.items()}  # fmt: skip
            meta = json.loads(files["tool.json"])
        except (safefs.UnsafeFile, ValueError):
            continue
        if not isinstance(meta, dict) or meta.get("name") != name:
            continue
        found.append({"name": name, "sha256": content_hash(files["tool.json"], files["tool.py"]),
                      "tool_json": files["tool.json"], "tool_py": files["tool.py"]})  # fmt: skip
        if len(found) >= MAX_KEPT_TOOLS:
            break
    return found


def solved_tools(evaluations: list[Evaluation], logs_root: Path) -> list[dict[str, Any]]:
    """Tools from the successful evaluations, deduplicated by content hash (the tasks
    each came from listed); of two different tools with one name, the first is kept."""
    by_hash: dict[str, dict[str, Any]] = {}
    names: set[str] = set()
    for evaluation in evaluations:
        if not evaluation.resolved or evaluation.tampered or not evaluation.log_dir:
            continue
        for tool in read_tools(logs_root / evaluation.log_dir, "out/tools/"):
            if tool["sha256"] in by_hash:
                by_hash[tool["sha256"]]["tasks"].append(evaluation.task_id)
            elif tool["name"] not in names:
                names.add(tool["name"])
                by_hash[tool["sha256"]] = {**tool, "tasks": [evaluation.task_id]}
    return list(by_hash.values())


def tried_before(run: Run, parent: int) -> set[str]:
    """Content hashes of the tools earlier harvests of `parent` carried (done or not)."""
    hashes = set()
    for job in run.expand_jobs_of(parent):
        target = job.inputs.get("target")
        if isinstance(target, dict) and target.get("kind") == "harvest":
            hashes |= {str(t.get("sha256")) for t in target.get("tools") or []}
    return hashes


def harvest_target(run: Run, parent: int, code: Path) -> ImprovementTarget | None:
    """A `harvest` target for `parent` (code checked out at `code`), or None. A parent the
    judge caught tampering hears about that first (the usual target), never a harvest."""
    evaluations = run.evaluations(parent)
    found = solved_tools(evaluations, run.path)
    if not found:
        return None
    if any(e.tampered for e in evaluations):
        log.info("node %s: not harvested: the judge caught it tampering", parent)
        return None
    folder = tools_dir_of(code)
    if folder is None:
        log.info("node %s: %d runtime tool(s) from solved tasks are not harvested: its "
                 "agent.toml declares no [tools] dir", parent, len(found))  # fmt: skip
        return None
    kept = read_tools(code, folder + "/")
    have = {t["sha256"] for t in kept} | tried_before(run, parent)
    have_names = {t["name"] for t in kept}
    new = [t for t in found if t["sha256"] not in have and t["name"] not in have_names]
    if not new:
        log.debug("node %s: its runtime tools are in its codebase or were harvested", parent)
        return None
    return ImprovementTarget("harvest", tools=new[:MAX_HARVEST])
