"""The job ledger: every expand and eval job is a row before it starts.

`queued` -> `running` -> `done` (or `failed` / `cancelled`); jobs in flight when a
process died are found again on resume under the same id.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from dgm.errors import NotFoundError
from dgm.store.db import Database
from dgm.store.records import Job


class JobLedger:
    """Mixed into `Run`: job rows in run.sqlite."""

    db: Database

    def queue_job(self, job_id: str, kind: str, inputs: dict[str, Any]) -> Job:
        """Record a job as queued; a job id seen before keeps its row (same inputs)."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO jobs(id, kind, inputs, state, created_at) "
                "VALUES (?,?,?,'queued',?)",
                (job_id, kind, json.dumps(inputs, sort_keys=True), time.time()),
            )
        return self.job(job_id)

    def start_job(self, job_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET state='running', attempts=attempts+1, started_at=? WHERE id=?",
                (time.time(), job_id),
            )

    def finish_job(self, job_id: str, result: dict[str, Any] | None = None) -> None:
        with self.db.transaction() as conn:
            finish_job(conn, job_id, result or {}, time.time())

    def fail_job(self, job_id: str, error: str, state: str = "failed") -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET state=?, error=?, finished_at=? WHERE id=?",
                (state, error, time.time(), job_id),
            )

    def job(self, job_id: str) -> Job:
        rows = self.db.query("SELECT * FROM jobs WHERE id=?", (job_id,))
        if not rows:
            raise NotFoundError(f"job {job_id} does not exist")
        return Job.from_row(rows[0])

    def requeue_job(self, job_id: str, reason: str) -> None:
        """The job met an outage: back to `queued` (a resume runs it again), the reason kept."""
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET state='queued', error=?, finished_at=? WHERE id=?",
                (reason, time.time(), job_id),
            )

    def infra_requeues(self, job_id: str) -> int:
        """How often the job was re-queued because it met an outage (its `job_infra` events)."""
        rows = self.db.query(
            "SELECT COUNT(*) FROM events WHERE kind='job_infra' AND json_extract(data, '$.job')=?",
            (job_id,),
        )
        return int(rows[0][0])

    def lost_to_outages_usd(self) -> float:
        """LLM dollars spent by job attempts that met an outage (counted in the budget too)."""
        rows = self.db.query(
            "SELECT COALESCE(SUM(json_extract(data, '$.lost_usd')), 0) FROM events "
            "WHERE kind='job_infra'"
        )
        return float(rows[0][0])

    def expansion_attempts(self) -> int:
        """Expansion jobs started, re-runs after a crash included."""
        rows = self.db.query("SELECT COALESCE(SUM(attempts), 0) FROM jobs WHERE kind='expand'")
        return int(rows[0][0])

    def expand_jobs_of(self, parent: int) -> list[Job]:
        """The expand jobs of one parent (its id is a string or a number in the inputs)."""
        rows = self.db.query(
            "SELECT * FROM jobs WHERE kind='expand' AND "
            "CAST(json_extract(inputs, '$.parent') AS INTEGER)=? ORDER BY created_at",
            (int(parent),),
        )
        return [Job.from_row(r) for r in rows]

    def jobs(self, states: Iterable[str] | None = None) -> list[Job]:
        if states is None:
            rows = self.db.query("SELECT * FROM jobs ORDER BY created_at")
        else:
            states = list(states)
            marks = ",".join("?" for _ in states)
            rows = self.db.query(
                f"SELECT * FROM jobs WHERE state IN ({marks}) ORDER BY created_at", tuple(states)
            )
        return [Job.from_row(r) for r in rows]


def finish_job(conn: Any, job_id: str, result: dict[str, Any], now: float) -> None:
    conn.execute(
        "UPDATE jobs SET state='done', result=?, finished_at=?, error=NULL WHERE id=?",
        (json.dumps(result), now, job_id),
    )
