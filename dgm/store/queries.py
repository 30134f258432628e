"""LLM usage, events, and the aggregate queries the loop, lineage and report read.

Mixed into `Run`; the only SQL for them is here, so a schema change touches one file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dgm.store.db import Database

JOB_ORDER_EVENTS = ("job_started", "job_finished")
"""Events that record the order jobs start and finish in, for replay."""


def read_events(
    db: Database,
    limit: int | None = None,
    kinds: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Events, oldest first: the last `limit` of them (all when None)."""
    where, params = [], []
    if kinds is not None:
        where.append(f"kind IN ({','.join('?' * len(kinds))})")
        params += list(kinds)
    if exclude:
        where.append(f"kind NOT IN ({','.join('?' * len(exclude))})")
        params += list(exclude)
    sql = "SELECT * FROM events" + (f" WHERE {' AND '.join(where)}" if where else "")
    sql += " ORDER BY id DESC" + (" LIMIT ?" if limit is not None else "")
    rows = db.query(sql, tuple(params) + ((limit,) if limit is not None else ()))
    return [{"ts": r["ts"], "kind": r["kind"], **json.loads(r["data"])} for r in reversed(rows)]


def recorded_events(run_dir: Path, kinds: Sequence[str]) -> list[dict[str, Any]] | None:
    """All events of `kinds` in another run (a replay's recording), oldest first; None
    when `run_dir` holds no run database. Read only: the recording is not migrated."""
    path = Path(run_dir) / "run.sqlite"
    if not path.is_file():
        return None
    db = Database(path)
    try:
        return read_events(db, None, kinds)
    finally:
        db.close()


class RunQueries:
    """Mixed into `Run`: usage and events rows, and read-only aggregates."""

    db: Database

    def record_usage(self, record: Any) -> None:
        """Persist one LLM call's usage (a gateway UsageRecord or a dict)."""
        get = record.get if isinstance(record, dict) else lambda k, d=None: getattr(record, k, d)
        node_id = get("node_id")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO llm_usage(ts, job_id, node_id, task_id, role, model, input_tokens,"
                " output_tokens, cached_tokens, cache_write_tokens, cost_usd, latency_s, error)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    get("ts") or time.time(),
                    get("job_id"),
                    int(node_id) if node_id not in (None, "") else None,
                    get("task_id"),
                    get("role"),
                    get("model"),
                    get("input_tokens", 0) or 0,
                    get("output_tokens", 0) or 0,
                    get("cached_tokens", 0) or 0,
                    get("cache_write_tokens", 0) or 0,
                    get("cost_usd", 0.0) or 0.0,
                    get("latency_s"),
                    get("error"),
                ),
            )

    def spend_usd(self) -> float:
        return float(self.db.query("SELECT COALESCE(SUM(cost_usd),0) FROM llm_usage")[0][0])

    def usage_by(self, column: str) -> dict[Any, dict[str, float]]:
        """Tokens and dollars grouped by `role`, `node_id`, `job_id` or `model`."""
        if column not in {"role", "node_id", "job_id", "model", "task_id"}:
            raise ValueError(column)
        rows = self.db.query(
            f"SELECT {column} AS k, COUNT(*) AS calls, SUM(input_tokens) AS input_tokens,"
            " SUM(output_tokens) AS output_tokens, SUM(cached_tokens) AS cached_tokens,"
            " SUM(cache_write_tokens) AS cache_write_tokens,"
            f" SUM(cost_usd) AS cost_usd FROM llm_usage GROUP BY {column}"
        )
        return {r["k"]: {k: r[k] for k in r.keys() if k != "k"} for r in rows}

    def event(self, kind: str, **data: Any) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO events(ts, kind, data) VALUES (?,?,?)",
                (time.time(), kind, json.dumps(data, default=str)),
            )

    def events(
        self,
        limit: int | None = 50,
        kinds: Sequence[str] | None = None,
        exclude: Sequence[str] = JOB_ORDER_EVENTS,
    ) -> list[dict[str, Any]]:
        """The last `limit` events (of `kinds`, when given), oldest first. The job order
        (`job_started`, `job_finished`: what a replay follows) is left out unless asked for."""
        return read_events(self.db, limit, kinds, exclude if kinds is None else ())

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        """Every event of one kind, oldest first (e.g. `job_placed`: which node ran a job)."""
        rows = self.db.query("SELECT * FROM events WHERE kind=? ORDER BY id", (kind,))
        return [{"ts": r["ts"], "kind": r["kind"], **json.loads(r["data"])} for r in rows]

    # -- aggregates for lineage and report -----------------------------------------------
    def node_costs(self) -> dict[int, float]:
        """LLM dollars attributed to each node."""
        rows = self.db.query(
            "SELECT node_id, SUM(cost_usd) AS cost FROM llm_usage "
            "WHERE node_id IS NOT NULL GROUP BY node_id"
        )
        return {r["node_id"]: r["cost"] for r in rows}

    def node_summaries(self) -> list[tuple[int, int | None, int, str, str, float]]:
        """(id, parent, depth, status, origin, created_at) of every node, in id order:
        the lineage's columns without decoding each node's metadata."""
        rows = self.db.query(
            "SELECT id, parent_id, depth, status, origin, created_at FROM nodes ORDER BY id"
        )
        return [tuple(r) for r in rows]  # type: ignore[misc]

    def spend_series(self) -> list[tuple[float, float]]:
        """(timestamp, dollars) of every LLM call, in time order."""
        rows = self.db.query("SELECT ts, cost_usd FROM llm_usage ORDER BY ts")
        return [(r["ts"], r["cost_usd"] or 0.0) for r in rows]

    def evaluation_series(self) -> list[tuple[int, bool, float, bool]]:
        """(node, resolved, recorded at, tampered) of every evaluation, in recording order."""
        rows = self.db.query(
            "SELECT node_id, resolved, created_at, tampered FROM evaluations ORDER BY id"
        )
        return [(r["node_id"], bool(r["resolved"]), r["created_at"], bool(r["tampered"]))
                for r in rows]  # fmt: skip

    def usual_eval_count(self) -> int:
        """The most common number of evaluations per node (the first stage's size)."""
        rows = self.db.query(
            "SELECT total, COUNT(*) AS k FROM (SELECT COUNT(*) AS total FROM evaluations"
            " GROUP BY node_id) GROUP BY total ORDER BY k DESC, total ASC LIMIT 1"
        )
        return rows[0]["total"] if rows else 1

    def usage_by_node_and_role(self) -> dict[int, dict[str, list[float]]]:
        """{node: {role: [calls, input tokens, output tokens, dollars]}}."""
        rows = self.db.query(
            "SELECT node_id, role, COUNT(*) AS calls, SUM(input_tokens) AS i,"
            " SUM(output_tokens) AS o, SUM(cost_usd) AS c FROM llm_usage"
            " WHERE node_id IS NOT NULL GROUP BY node_id, role"
        )
        usage: dict[int, dict[str, list[float]]] = {}
        for r in rows:
            usage.setdefault(r["node_id"], {})[str(r["role"] or "unknown")] = [
                r["calls"], r["i"] or 0, r["o"] or 0, round(r["c"] or 0.0, 4),
            ]  # fmt: skip
        return usage

    def models_used(self, node_ids: list[int]) -> list[dict[str, Any]]:
        """Calls per (role, model) made for the given nodes."""
        marks = ",".join("?" for _ in node_ids)
        rows = self.db.query(
            f"SELECT role, model, COUNT(*) AS calls FROM llm_usage WHERE node_id IN ({marks})"
            " GROUP BY role, model ORDER BY role, model",
            tuple(int(n) for n in node_ids),
        )
        return [dict(r) for r in rows]


# -- live views (dgm serve): cheap enough to ask every half second ------------------------
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
