"""LLM spend as dgm reports it: tokens and dollars per job, per kind of job, per node.

Every call is in `llm_usage`, keyed by the gateway job it was made for. The role says
what the job was: `solve` calls are an evaluation (an agent working on a task); the
others (`self_improve`, `diagnose`) are an expansion (making a child).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from dgm.store.run import Run

EVALUATION_ROLES = frozenset({"solve"})


def kind_of(role: str | None) -> str:
    return "evaluation" if role in EVALUATION_ROLES else "expansion"


@dataclass
class Spend:
    """Calls, tokens and dollars of some LLM calls. `input_tokens` counts all input,
    cache reads (`cached_tokens`) and writes (`cache_write_tokens`) included."""

    jobs: int = 0
    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Spend) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def per_job_usd(self) -> float:
        return self.cost_usd / self.jobs if self.jobs else 0.0

    def tokens_text(self) -> str:
        """`12,345 in (10,000 cached, 1,200 cache write), 678 out`."""
        cache = []
        if self.cached_tokens:
            cache.append(f"{self.cached_tokens:,} cached")
        if self.cache_write_tokens:
            cache.append(f"{self.cache_write_tokens:,} cache write")
        extra = f" ({', '.join(cache)})" if cache else ""
        return f"{self.input_tokens:,} in{extra}, {self.output_tokens:,} out"

    def as_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["cost_usd"] = round(self.cost_usd, 6)
        return data


def spend_by_job(run: Run) -> dict[str, tuple[str, Spend]]:
    """Each gateway job's (kind, spend), in first-call order."""
    rows = run.db.query(
        "SELECT job_id, MIN(role) AS role, COUNT(*) AS calls, SUM(input_tokens) AS i,"
        " SUM(cached_tokens) AS c, SUM(cache_write_tokens) AS w, SUM(output_tokens) AS o,"
        " SUM(cost_usd) AS usd FROM llm_usage GROUP BY job_id ORDER BY MIN(ts)"
    )
    return {
        str(r["job_id"]): (
            kind_of(r["role"]),
            Spend(1, r["calls"], r["i"] or 0, r["c"] or 0, r["w"] or 0, r["o"] or 0, r["usd"] or 0),
        )
        for r in rows
    }


def spend_by_kind(run: Run) -> dict[str, Spend]:
    """`expansion` and `evaluation` totals (jobs = how many jobs made calls)."""
    kinds = {"expansion": Spend(), "evaluation": Spend()}
    for kind, spend in spend_by_job(run).values():
        kinds[kind].add(spend)
    return kinds


def job_spend(run: Run, job_id: str) -> Spend:
    """One job's spend (an expansion's job id is its child node's `job_id`)."""
    rows = run.db.query(
        "SELECT COUNT(*) AS calls, SUM(input_tokens) AS i, SUM(cached_tokens) AS c,"
        " SUM(cache_write_tokens) AS w, SUM(output_tokens) AS o, SUM(cost_usd) AS usd"
        " FROM llm_usage WHERE job_id=?",
        (job_id,),
    )
    r = rows[0]
    if not r["calls"]:
        return Spend()
    return Spend(1, r["calls"], r["i"] or 0, r["c"] or 0, r["w"] or 0, r["o"] or 0, r["usd"] or 0)


def evaluation_spend(details: dict[str, Any], cost_usd: float) -> Spend:
    """An evaluation's spend from what its record keeps (`details.usage`)."""
    usage = details.get("usage") or {}
    return Spend(
        jobs=1,
        calls=int(usage.get("calls") or 0),
        input_tokens=int(usage.get("input_tokens") or 0),
        cached_tokens=int(usage.get("cached_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_write_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cost_usd=float(cost_usd or 0.0),
    )
