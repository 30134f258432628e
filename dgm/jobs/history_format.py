"""The structured history an improvement step reads (format `dgm-history/1`).

The loop writes it on the host (dgm/loop/history_writer.py) into `<expand log dir>/history/`
before an expand job starts; the built-in diagnosis renders it into its prompt, and in
hyperagent mode the parent's own `improve` command reads the folder (`/history`,
read-only). Everything in it is already redacted: no hidden test source, no canary
name, no tamper evidence, no API key.

    history/
      history.json                  see the keys below
      diffs/<node>.patch            the node's diff from its parent (trimmed)
      failed/<node>/<task>/trajectory.txt, test_output.txt   (redacted, trimmed)

history.json: `format`, `node`, `expansion` ({"ordinal"}), `lineage` (node records, root
first, this node last), `children`, `siblings` (node records), `failed_expansions`
([{"ordinal", "status", "reason"}]), `budget` ({"evals_left", "expansions_left",
"dollars_left", "seconds_left"}, null = unlimited) and `failed_tasks` ([{"node",
"task_id", "statement", "trajectory", "test_output"}], paths relative to the folder or
null). A node record: {"id", "parent", "depth", "score": {"resolved", "total"},
"results": [{"task_id", "resolved", "empty_patch", "tests_passed", "tests_total",
"error", "tampered"}], "diff", "improve_changed", "harvested_tools"}.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dgm import safefs
from dgm.errors import DgmError

FORMAT = "dgm-history/1"
HISTORY_FILE = "history.json"
DIFFS_DIR = "diffs"
FAILED_DIR = "failed"
TRAJECTORY_FILE = "trajectory.txt"
TEST_OUTPUT_FILE = "test_output.txt"
HISTORY_JSON_LIMIT = 4 * 1024 * 1024
PART_LIMIT = 64 * 1024
"""No file of the folder is larger (the writer trims; the reader refuses more)."""
RENDER_LIMIT = 16_000
"""Characters of history in a diagnosis prompt."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class HistoryError(DgmError):
    """A history folder that is missing, unreadable or of another format."""


def safe_name(name: str) -> str:
    """A task id as one folder name (Polyglot ids hold a `/`)."""
    cleaned = _UNSAFE_NAME.sub("_", name).strip(".") or "_"
    return cleaned[:120]


def load_history(history_dir: Path) -> dict[str, Any]:
    """history.json of a history folder, checked for its format."""
    try:
        text = safefs.read_text(Path(history_dir), HISTORY_FILE, HISTORY_JSON_LIMIT)
        data = json.loads(text)
    except (safefs.UnsafeFile, ValueError) as exc:
        raise HistoryError(f"{history_dir}: no readable {HISTORY_FILE} ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise HistoryError(f"{history_dir}: not a {FORMAT} history")
    return data


def read_part(history_dir: Path, rel: str | None) -> str | None:
    """A file the history names (a diff, a trajectory, a test output), or None."""
    if not rel:
        return None
    try:
        return safefs.read_text(Path(history_dir), rel, PART_LIMIT)
    except safefs.UnsafeFile:
        return None


def render_history(history_dir: Path, limit: int = RENDER_LIMIT) -> str:
    """The history as markdown for a prompt, at most `limit` characters: the summary
    (scores, results, children, siblings, failed expansions, budget) whole, then the
    failed tasks' evidence and the lineage's diffs sharing what is left."""
    data = load_history(history_dir)
    lineage = _records(data.get("lineage"))
    summary = [
        f"# History of node {data.get('node')} (expansion #{_get(data, 'expansion', 'ordinal')})",
        "## Its lineage, root first (per-task results)",
        *_lineage(lineage, limit // 3),
        "## Its children so far",
        *_or_none([_node_block(n) for n in _records(data.get("children"))]),
        "## Its siblings (the other children of its parent)",
        *_or_none([_node_block(n) for n in _records(data.get("siblings"))]),
        "## Its failed expansions",
        *_or_none([_failed_expansion(f) for f in _records(data.get("failed_expansions"))]),
        "## Budget left",
        _budget(data.get("budget")),
    ]
    text = "\n".join(summary)
    diffs = [(n.get("id"), read_part(history_dir, n.get("diff"))) for n in lineage]
    diffs = [(i, d) for i, d in diffs if d]
    room = max(limit - len(text), 0) * (3 if diffs else 5) // 5
    text += _failed_tasks(history_dir, _records(data.get("failed_tasks")), room)
    text += _fill(
        "## Diffs along the lineage (each from its parent)",
        [f"### node {i}\n```diff\n{d}\n```" for i, d in diffs],
        max(limit - len(text), 0),
    )
    return shorten(text, limit)


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, head and tail kept."""
    if len(text) <= limit:
        return text
    if limit < 80:
        return text[:limit]
    note = f"\n[... {len(text) - limit} characters left out ...]\n"
    half = (limit - len(note)) // 2
    return f"{text[:half]}{note}{text[len(text) - half :]}"


def _records(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _or_none(lines: list[str]) -> list[str]:
    return lines or ["(none)"]


def _get(data: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _node_block(node: dict[str, Any], results: bool = False) -> str:
    score = node.get("score") or {}
    marks = " [improve changed]" if node.get("improve_changed") else ""
    tools = node.get("harvested_tools") or []
    if tools:
        marks += f" [harvested: {', '.join(str(t) for t in tools)}]"
    line = (
        f"- node {node.get('id')} (parent {node.get('parent')}, depth {node.get('depth')}): "
        f"{score.get('resolved', 0)}/{score.get('total', 0)} tasks resolved{marks}"
    )
    if not results:
        return line
    rows = [line]
    for r in _records(node.get("results")):
        verdict = "resolved" if r.get("resolved") else "failed"
        if r.get("tampered"):
            verdict = "failed (caught tampering with the tests)"
        tests = f", tests {r['tests_passed']}/{r['tests_total']}" if r.get("tests_total") else ""
        empty = ", empty patch" if r.get("empty_patch") else ""
        error = f", error: {shorten(str(r['error']), 160)}" if r.get("error") else ""
        rows.append(f"  - {r.get('task_id')}: {verdict}{tests}{empty}{error}")
    return "\n".join(rows)


def _failed_expansion(entry: dict[str, Any]) -> str:
    return f"- expansion #{entry.get('ordinal')}: {entry.get('status')}: {entry.get('reason')}"


def _budget(budget: Any) -> str:
    budget = budget if isinstance(budget, dict) else {}
    names = {"evals_left": "evaluations", "expansions_left": "expansions",
             "dollars_left": "dollars", "seconds_left": "seconds"}  # fmt: skip
    shown = []
    for key, name in names.items():
        value = budget.get(key)
        shown.append(f"{name}: {'unlimited' if value is None else value}")
    return "- " + ", ".join(shown)


def _lineage(lineage: list[dict[str, Any]], room: int) -> list[str]:
    """Each node's line; per-task results from this node back, while they fit `room`."""
    blocks: list[str] = []
    for node in reversed(lineage):
        block = _node_block(node, results=True)
        if sum(map(len, blocks)) + len(block) > room and blocks:
            block = _node_block(node) + " (per-task results in history.json)"
        blocks.insert(0, block)
    return blocks


def _failed_tasks(history_dir: Path, tasks: list[dict[str, Any]], room: int) -> str:
    """Each failed task's statement, test results and trajectory, in an equal share of
    `room` (a fifth for the statement, the rest split between the two records)."""
    header = "## Failed tasks of this node (redacted)"
    share = (room - len(header)) // max(len(tasks), 1) - 150
    if not tasks or share < 200:
        return ""
    blocks = []
    for task in tasks:
        parts = [f"### {task.get('task_id')} (node {task.get('node')})"]
        if task.get("tampered"):
            parts.append("The judge caught the agent tampering with the tests on this task.")
        statement = str(task.get("statement") or "(not available)")
        parts += ["Task:", shorten(statement, share // 5)]
        output = read_part(history_dir, task.get("test_output")) or "(not available)"
        trajectory = read_part(history_dir, task.get("trajectory")) or "(not available)"
        left = share - len(parts[-1])
        half = max(left // 2, left - len(trajectory))  # one short record leaves more room
        parts += ["Hidden tests' results:", shorten(output, half)]
        parts += ["What the agent did:", shorten(trajectory, left - len(parts[-1]))]
        blocks.append("\n".join(parts))
    return f"\n\n{header}\n" + "\n".join(blocks)


def _fill(header: str, blocks: list[str], room: int) -> str:
    """`blocks` under `header`, each cut to an equal share of `room` characters."""
    if not blocks or room < len(header) + 40:
        return ""
    share = (room - len(header) - 2) // len(blocks) - 1
    if share < 40:
        return ""
    return f"\n\n{header}\n" + "\n".join(shorten(b, share) for b in blocks)
