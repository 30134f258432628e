"""Plain records read from and written to a run's store."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Node:
    """One agent codebase in the archive."""

    id: int
    parent_id: int | None
    commit: str
    depth: int
    created_at: float
    status: str
    """`active` (in the archive), or `rejected` (kept for the record, never a parent)."""
    origin: str
    """The problem statement that produced it, or "seed"."""
    job_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Node:
        return cls(
            id=row["id"],
            parent_id=row["parent_id"],
            commit=row["commit_sha"],
            depth=row["depth"],
            created_at=row["created_at"],
            status=row["status"],
            origin=row["origin"],
            job_id=row["job_id"],
            meta=json.loads(row["meta"]),
        )


@dataclass(frozen=True)
class Evaluation:
    """The outcome of evaluating one node on one task: what the eval job returns
    (dgm/jobs/evaluate.py) is what the store records. The loop fills in what only it knows
    (its job id, the log folder relative to the run, the gateway's usage); the store, `id`
    and `created_at`."""

    node_id: int | None
    """None for an agent that is no node of a run (`dgm eval` on a folder)."""
    task_id: str
    benchmark: str
    resolved: bool
    stage: int = 1
    empty_patch: bool = False
    tests_passed: int | None = None
    tests_total: int | None = None
    agent_seconds: float | None = None
    judge_seconds: float | None = None
    cost_usd: float = 0.0
    error: str | None = None
    log_dir: str | None = None
    """The job's artefacts (patch.diff, test_output.txt, result.json, ...): relative to the
    run directory once recorded, where the job wrote them before."""
    job_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """What has no column: `language`, `tests` (name -> status), `usage` (the gateway's
    count), `canaries` (never shown to a prompt), `tamper_warnings` (static scan),
    `tamper_evidence`, and the job's own facts (`test_seconds`, `harness_seconds`: the
    job's wall time minus the agent's and the tests' own, `agent_exit_code`,
    `agent_timed_out`, `judge_exit_code`)."""
    id: int | None = None
    created_at: float | None = None
    tampered: bool = False
    """The judge caught the patch interfering with the test run (a canary went the wrong
    way or went missing): a failure, and the node is never best nor exported. What the
    judge saw is `details["tamper_evidence"]`."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Evaluation:
        return cls(
            id=row["id"],
            node_id=row["node_id"],
            task_id=row["task_id"],
            benchmark=row["benchmark"],
            stage=row["stage"],
            resolved=bool(row["resolved"]),
            empty_patch=bool(row["empty_patch"]),
            tests_passed=row["tests_passed"],
            tests_total=row["tests_total"],
            agent_seconds=row["agent_seconds"],
            judge_seconds=row["judge_seconds"],
            cost_usd=row["cost_usd"],
            error=row["error"],
            log_dir=row["log_dir"],
            job_id=row["job_id"],
            created_at=row["created_at"],
            details=json.loads(row["details"]),
            tampered=bool(row["tampered"]),
        )

    @property
    def tamper_evidence(self) -> str:
        return str(self.details.get("tamper_evidence") or "no evidence recorded")

    @property
    def language(self) -> str:
        return str(self.details.get("language") or "")

    @property
    def tests(self) -> dict[str, str]:
        """The judge's status per test name."""
        return dict(self.details.get("tests") or {})

    @property
    def usage(self) -> dict[str, Any]:
        return dict(self.details.get("usage") or {})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evaluation:
        return cls(**data)


@dataclass(frozen=True)
class Job:
    """An expand or eval job; in-flight jobs are rows too, re-queued on resume."""

    id: str
    kind: str
    inputs: dict[str, Any]
    state: str
    """queued | running | done | failed | cancelled"""
    attempts: int
    created_at: float
    started_at: float | None
    finished_at: float | None
    result: dict[str, Any] | None
    error: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Job:
        return cls(
            id=row["id"],
            kind=row["kind"],
            inputs=json.loads(row["inputs"]),
            state=row["state"],
            attempts=row["attempts"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            result=json.loads(row["result"]) if row["result"] else None,
            error=row["error"],
        )


@dataclass(frozen=True)
class Score:
    """Passed over total: never a bare ratio."""

    passed: int
    total: int
    tampered: int = 0
    """How many of the evaluations the judge found tampered with (never counted passed)."""

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def __str__(self) -> str:
        if not self.total:
            return "-/-"
        return f"{self.passed}/{self.total} ({100 * self.rate:.0f}%)"
