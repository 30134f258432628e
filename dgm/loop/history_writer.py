"""A parent's structured history, written on the host before its expand job starts.

    write_history(run, node, ordinal, log_dir / "history", hidden_sources=..., budget=...)

The format (`dgm-history/1`) is defined and read in dgm/jobs/history_format.py. Everything is
taken from the store (nodes, evaluations, expand jobs) and the eval log folders, and
redacted the way `choose_target` redacts the diagnosis's evidence, only stricter, since
an agent's own improve procedure reads it:

- test output: the judge's per-test verdicts and the output with every line carrying
  hidden test source removed (hidden_redaction.py), or withheld when the hidden source
  cannot be read; trajectories redacted against the same source;
- the judge's canary names and its tamper evidence: no line naming them passes, in any
  file (a tampered result says `"tampered": true` and nothing of how the judge knew);
- API keys: scrubbed from every text (key_redaction.py);
- the log folders are agent-influenced: read from the run directory down with
  dgm/safefs.py (no link followed, no special file opened), every read capped.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dgm import key_redaction, safefs
from dgm.jobs import history_format as fmt
from dgm.jobs.diagnose import TRAJECTORY_LIMIT, trajectory_text
from dgm.jobs.hidden_redaction import HiddenSource, redact, results_for_diagnosis
from dgm.store import Evaluation, Node, Run

MAX_LISTED = 20
"""Children and siblings listed (the latest ones)."""
MAX_FAILED_TASKS = 12
DIFF_LIMIT = 12_000
TEST_OUTPUT_LIMIT = 8_000
RAW_OUTPUT_LIMIT = 400_000
TRAJECTORY_JSON_LIMIT = 16 * 1024 * 1024
TEXT_LIMIT = 600
"""An error message, a failed expansion's reason, a task statement: cut to this."""
STATEMENT_LIMIT = 4_000
REMOVED = "[line removed: it names a judge canary or its evidence]"


class Scrubber:
    """Removes the judge's secrets (canary names, tamper evidence) line by line, and keys."""

    def __init__(self, evaluations: Iterable[Evaluation]) -> None:
        found: set[str] = set()
        for e in evaluations:
            found.update(_secrets_of(e))
        self.secrets = sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        present = [s for s in self.secrets if s in text]  # usually none: one pass each
        if present:
            lines = text.splitlines()
            text = "\n".join(REMOVED if any(s in ln for s in present) else ln for ln in lines)
        return key_redaction.scrub(text)


def _secrets_of(e: Evaluation) -> list[str]:
    canaries = [str(c) for c in e.details.get("canaries") or [] if str(c)]
    evidence = str(e.details.get("tamper_evidence") or "")
    lines = [line.strip() for line in evidence.splitlines()]
    return canaries + [line for line in lines if len(line) >= 8]


def budget_left(run: Run, elapsed_s: float | None = None) -> dict[str, float | int | None]:
    """What is left of the run's `[limits]` (None: unlimited). `elapsed_s` is the run's
    wall-clock time so far; without it, that of its earlier sessions."""
    limits = run.config.limits
    if elapsed_s is None:
        stops = run.events(limit=None, kinds=["run_stopped"])
        elapsed_s = sum(float(e.get("elapsed_s", 0.0)) for e in stops)
    evals = sum(s.total for s in run.scores().values())
    left: dict[str, float | int | None] = {
        "evals_left": None, "expansions_left": None, "dollars_left": None, "seconds_left": None,
    }  # fmt: skip
    if limits.max_evals is not None:
        left["evals_left"] = max(int(limits.max_evals - evals), 0)
    if limits.max_expansions is not None:
        left["expansions_left"] = max(int(limits.max_expansions) - run.expansion_attempts(), 0)
    if limits.budget_usd is not None:
        left["dollars_left"] = round(max(limits.budget_usd - run.spend_usd(), 0.0), 4)
    if limits.max_hours is not None:
        left["seconds_left"] = round(max(limits.max_hours * 3600 - elapsed_s, 0.0))
    return left


def write_history(
    run: Run,
    node: int | str,
    ordinal: int,
    dest: Path,
    *,
    task_statement: Callable[[str], str | None] | None = None,
    hidden_sources: Callable[[str], list[str] | None] | None = None,
    budget: dict[str, Any] | None = None,
) -> Path:
    """Write node `node`'s history (for its expansion number `ordinal`) into `dest`,
    replacing what a crashed attempt left there; returns `dest`."""
    this = run.node(node)
    lineage = [this]
    while lineage[0].parent_id is not None:
        lineage.insert(0, run.node(lineage[0].parent_id))
    children = _listed(run.children(this.id))
    siblings = [] if this.parent_id is None else run.children(this.parent_id)
    siblings = _listed(s for s in siblings if s.id != this.id)
    shown = {n.id for n in (*lineage, *children, *siblings)}
    by_node: dict[int, list[Evaluation]] = {}
    for e in run.evaluations():
        if e.node_id in shown:
            by_node.setdefault(e.node_id, []).append(e)
    scrub = Scrubber(e for es in by_node.values() for e in es)
    if dest.exists():
        shutil.rmtree(dest)
    (dest / fmt.DIFFS_DIR).mkdir(parents=True)
    writer = _Writer(run, dest, by_node, scrub)
    data = {
        "format": fmt.FORMAT,
        "node": this.id,
        "expansion": {"ordinal": int(ordinal)},
        "lineage": [writer.record(n) for n in lineage],
        "children": [writer.record(n) for n in children],
        "siblings": [writer.record(n) for n in siblings],
        "failed_expansions": _failed_expansions(run, this.id, scrub),
        "budget": budget if budget is not None else budget_left(run),
        "failed_tasks": writer.failed_tasks(this.id, task_statement, hidden_sources),
    }
    (dest / fmt.HISTORY_FILE).write_text(json.dumps(data, indent=2))
    return dest


def _listed(nodes: Iterable[Node]) -> list[Node]:
    """Nodes in the archive (a rejected child is a failed expansion), the latest few."""
    return [n for n in nodes if n.status == "active"][-MAX_LISTED:]


def _failed_expansions(run: Run, node: int, scrub: Scrubber) -> list[dict[str, Any]]:
    failed = []
    for job in run.expand_jobs_of(node):
        result = job.result or {}
        if job.state == "done" and result.get("status"):
            status, reason = str(result["status"]), str(result.get("reason") or "")
        elif job.state == "failed":
            status, reason = "crashed", str(job.error or "")
        else:  # made a child, or still in flight (this very expansion among them)
            continue
        reason = fmt.shorten(scrub(reason), TEXT_LIMIT)
        failed.append({"ordinal": job.inputs.get("ordinal"), "status": status, "reason": reason})
    return failed


class _Writer:
    def __init__(
        self, run: Run, dest: Path, by_node: dict[int, list[Evaluation]], scrub: Scrubber
    ) -> None:
        self.run = run
        self.dest = dest
        self.by_node = by_node
        self.scrub = scrub

    def record(self, node: Node) -> dict[str, Any]:
        evaluations = self.by_node.get(node.id, [])
        return {
            "id": node.id,
            "parent": node.parent_id,
            "depth": node.depth,
            "score": {
                "resolved": sum(not e.tampered and e.resolved for e in evaluations),
                "total": len(evaluations),
            },
            "results": [self._result(e) for e in evaluations],
            "diff": self._diff(node),
            "improve_changed": bool(node.meta.get("improve_changed", False)),
            "harvested_tools": [str(t) for t in node.meta.get("harvested_tools") or []],
        }

    def _result(self, e: Evaluation) -> dict[str, Any]:
        error = fmt.shorten(self.scrub(e.error), TEXT_LIMIT) if e.error else None
        return {
            "task_id": e.task_id,
            "resolved": e.resolved and not e.tampered,
            "empty_patch": e.empty_patch,
            "tests_passed": e.tests_passed,
            "tests_total": e.tests_total,
            "error": error,
            "tampered": e.tampered,
        }

    def _diff(self, node: Node) -> str | None:
        if node.parent_id is None:
            return None
        rel = f"{fmt.DIFFS_DIR}/{node.id}.patch"
        (self.dest / rel).write_text(fmt.shorten(self.scrub(self.run.diff(node.id)), DIFF_LIMIT))
        return rel

    def failed_tasks(
        self,
        node: int,
        task_statement: Callable[[str], str | None] | None,
        hidden_sources: Callable[[str], list[str] | None] | None,
    ) -> list[dict[str, Any]]:
        tasks: list[dict[str, Any]] = []
        seen: set[str] = set()
        for e in self.by_node.get(node, []):
            if (e.resolved and not e.tampered) or e.task_id in seen:
                continue
            seen.add(e.task_id)
            if len(tasks) == MAX_FAILED_TASKS:
                break
            folder = f"{fmt.FAILED_DIR}/{node}/{fmt.safe_name(e.task_id)}"
            while (self.dest / folder).exists():  # two ids that read alike as folder names
                folder += "_"
            (self.dest / folder).mkdir(parents=True)
            trajectory, test_output = self._evidence(e, hidden_sources)
            statement = task_statement(e.task_id) if task_statement else None
            tasks.append({
                "node": node,
                "task_id": e.task_id,
                "statement": fmt.shorten(self.scrub(statement), STATEMENT_LIMIT)
                if statement else None,
                "trajectory": self._write(f"{folder}/{fmt.TRAJECTORY_FILE}", trajectory),
                "test_output": self._write(f"{folder}/{fmt.TEST_OUTPUT_FILE}", test_output),
                "tampered": e.tampered,
            })  # fmt: skip
        return tasks

    def _write(self, rel: str, text: str | None) -> str | None:
        if not text:
            return None
        (self.dest / rel).write_text(text)
        return rel

    def _evidence(
        self, e: Evaluation, hidden_sources: Callable[[str], list[str] | None] | None
    ) -> tuple[str | None, str | None]:
        """The trajectory and test output of a failed evaluation, redacted (as the
        diagnosis's evidence is: choose_target in dgm/jobs/diagnose.py)."""
        secrets = _secrets_of(e)
        texts = hidden_sources(e.task_id) if hidden_sources else None
        hidden = HiddenSource([*(texts or []), *secrets])
        root = self.run.path
        raw = _read_head(root, e.log_dir, "test_output.txt", RAW_OUTPUT_LIMIT)
        tests = {name: status for name, status in (e.details.get("tests") or {}).items()
                 if not any(s in name for s in secrets)}  # fmt: skip
        # Without the hidden source the output is withheld: test names and verdicts only.
        output = results_for_diagnosis(tests, raw, hidden if texts is not None else None)
        output = fmt.shorten(self.scrub(output), TEST_OUTPUT_LIMIT)
        text = _read_text(root, e.log_dir, "trajectory.json", TRAJECTORY_JSON_LIMIT)
        trajectory = trajectory_text(text)
        if trajectory:
            trajectory = redact(trajectory, hidden, line_limit=2_000, scan=5_000)
            trajectory = fmt.shorten(self.scrub(trajectory), TRAJECTORY_LIMIT)
        return trajectory, output


def _read_text(root: Path, log_dir: str | None, name: str, limit: int) -> str | None:
    """A file of a log folder under the run directory, no link followed on the way, or
    None (missing, a link, a special file, too big)."""
    if not log_dir:
        return None
    try:
        return safefs.read_text(root, f"{log_dir}/{name}", limit)
    except safefs.UnsafeFile:
        return None


def _read_head(root: Path, log_dir: str | None, name: str, limit: int) -> str | None:
    """Up to `limit` characters of a possibly huge file of a log folder, or None."""
    if not log_dir:
        return None
    try:
        fd = safefs.open_under(root, f"{log_dir}/{name}")
    except safefs.UnsafeFile:
        return None
    with open(fd, "rb") as fh:
        return fh.read(limit * 4).decode("utf-8", "replace")[:limit]
