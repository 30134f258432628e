"""The aggregates the report, the lineage tree and `dgm export` read: per-node costs and
summaries, spend and evaluation series, the models used. Read only; a run offers them as
`run.aggregates`, apart from what the loop needs of a run. The only SQL for them is here."""

from __future__ import annotations

from typing import Any

from dgm.store.db import Database


class ReportQueries:
    def __init__(self, db: Database) -> None:
        self.db = db

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
