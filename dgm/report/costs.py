"""What a run's improvement cost: spend per expansion and per evaluation, and dollars per
additional task solved by the best node over the seed.

Shared by `dgm status`, `dgm show`, the run summary and the HTML report.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from dgm.store import Run
from dgm.store.records import Evaluation
from dgm.store.usage import Spend, spend_by_kind

SEED_NODE = 0


@dataclass(frozen=True)
class CostPerPoint:
    best: int
    gained: float
    """Tasks the best node solves beyond the seed, on the tasks both were evaluated on."""
    common: int
    """How many tasks that comparison is over."""
    spend_usd: float
    """The whole run's spend: what it took to find the best node."""

    @property
    def usd_per_task(self) -> float | None:
        return self.spend_usd / self.gained if self.gained > 0 else None

    def text(self) -> str:
        if self.usd_per_task is None:
            return f"no task gained over the seed yet (${self.spend_usd:.2f} spent)"
        return (
            f"${self.usd_per_task:.2f} per additional task solved (node {self.best} solves "
            f"{self.gained:g} more of {self.common} tasks than the seed; "
            f"${self.spend_usd:.2f} spent)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "best": self.best,
            "gained": self.gained,
            "common": self.common,
            "spend_usd": round(self.spend_usd, 4),
            "usd_per_task": None if self.usd_per_task is None else round(self.usd_per_task, 4),
        }


def cost_per_point(run: Run, best: int | None) -> CostPerPoint | None:
    """None until a node other than the seed is the best one."""
    if best is None or best == SEED_NODE:
        return None
    seed_rates = _solve_rates(run.evaluations(SEED_NODE))
    best_rates = _solve_rates(run.evaluations(best))
    common = sorted(set(seed_rates) & set(best_rates))
    if common:
        gained = sum(best_rates[t] - seed_rates[t] for t in common)
    else:  # no task in common: compare solve rates over the best node's tasks
        seed_rate = sum(seed_rates.values()) / len(seed_rates) if seed_rates else 0.0
        best_rate = sum(best_rates.values()) / len(best_rates) if best_rates else 0.0
        gained = (best_rate - seed_rate) * len(best_rates)
    return CostPerPoint(best, round(gained, 2), len(common) or len(best_rates), run.spend_usd())


def _solve_rates(evaluations: list[Evaluation]) -> dict[str, float]:
    """Per task, the share of its evaluations that resolved it (repeats average out)."""
    runs: dict[str, list[bool]] = defaultdict(list)
    for e in evaluations:
        runs[e.task_id].append(e.resolved)
    return {task: sum(r) / len(r) for task, r in runs.items()}


def spend_lines(run: Run, best: int | None) -> list[tuple[str, str]]:
    """(label, text) lines: spend per kind of job, tokens, and the cost per point."""
    kinds = spend_by_kind(run)
    total = Spend()
    for spend in kinds.values():
        total.add(spend)
    lines = [("tokens", total.tokens_text())]
    for kind, label in (("expansion", "expand"), ("evaluation", "eval")):
        spend = kinds[kind]
        if spend.jobs:
            lines.append(
                (
                    label,
                    f"{spend.jobs} jobs: ${spend.cost_usd:.2f}, ${spend.per_job_usd:.4f} each; "
                    f"{spend.tokens_text()}",
                )
            )
    point = cost_per_point(run, best)
    if point is not None:
        lines.append(("gain", point.text()))
    return lines


def report_costs(run: Run, best: int | None) -> dict[str, Any]:
    """The report's cost summary (JSON-ready)."""
    point = cost_per_point(run, best)
    return {
        "byKind": {kind: spend.as_dict() for kind, spend in spend_by_kind(run).items()},
        "perPoint": None if point is None else point.as_dict(),
    }
