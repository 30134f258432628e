"""Queries for `dgm serve` watching a live run: cheap enough to ask every quarter second,
on a read-only connection."""

from __future__ import annotations

import json
from typing import Any

from dgm.store.db import Database


def change_token(db: Database) -> str:
    """Changes whenever a node, evaluation, event, LLM call, job or steering row is recorded
    (rowid maxima: index lookups, no scan), so a watcher reloads only what changed."""
    steering = db.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='steering'")
    tail = ", (SELECT MAX(id) FROM steering), (SELECT MAX(applied_at) FROM steering)" * bool(
        steering
    )
    row = db.query(
        "SELECT (SELECT MAX(id) FROM nodes), (SELECT MAX(id) FROM evaluations),"
        " (SELECT MAX(id) FROM events), (SELECT MAX(id) FROM llm_usage),"
        " (SELECT COUNT(*) FROM jobs WHERE state='running')" + tail
    )[0]
    return "-".join("" if v is None else str(v) for v in tuple(row))


def events_after(db: Database, after_id: int, limit: int = 500) -> list[dict[str, Any]]:
    """Events with a larger id than `after_id` (the newest `limit` of them), oldest first,
    each with its id: a page follows the stream without reading it twice."""
    rows = db.query(
        "SELECT * FROM events WHERE id>? ORDER BY id DESC LIMIT ?", (int(after_id), int(limit))
    )
    return [{"id": r["id"], "ts": r["ts"], "kind": r["kind"], **json.loads(r["data"])}
            for r in reversed(rows)]  # fmt: skip


def llm_calls(db: Database, node_id: int, limit: int = 500) -> list[dict[str, Any]]:
    """One node's LLM calls (the expansion that made it and its evaluations), in order."""
    rows = db.query(
        "SELECT ts, job_id, task_id, role, model, input_tokens, output_tokens, cached_tokens,"
        " cost_usd, latency_s, error FROM llm_usage WHERE node_id=? ORDER BY ts LIMIT ?",
        (int(node_id), int(limit)),
    )
    return [dict(r) for r in rows]


def nodes_flagged(db: Database, key: str) -> set[int]:
    """Nodes whose metadata has a true `key` (e.g. `improve_changed`), without decoding
    every node's metadata."""
    rows = db.query("SELECT id FROM nodes WHERE json_extract(meta, ?)", (f"$.{key}",))
    return {int(r["id"]) for r in rows}
