"""LLM usage and events: what the loop writes and reads back (mixed into `Run`). The
aggregates only the report reads are `ReportQueries` (report_queries.py, `run.aggregates`).
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
    """Mixed into `Run`: usage and events rows."""

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
