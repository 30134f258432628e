"""A landscape from a recorded run: compare policies on real per-node, per-task results.

    dgm simulate --from-run archive/my-run --strategies hgm,dgm,adaptive

The recorded tree is the only world there is:
- an expansion of (the simulated copy of) recorded node p returns a copy of one of p's
  recorded children, drawn uniformly (with replacement); a recorded node that never got
  a valid child, and a share of expansions equal to the run's share of failed ones, give
  no child. A policy cannot find agents the run did not make: what it can show is how
  fast it would have found and recognised the best of those.
- an evaluation of a node on a task returns the recorded result when there is one, else a
  draw with the node's posterior mean rate (1 + solved) / (2 + evaluated);
- a node's "true" rate is that posterior mean over all its recorded results.
Stages: the first 10 tasks by how often they were evaluated (the run's stage 1 in staged
runs), the rest stage 2; durations and costs from the `mismatch` preset.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dgm.errors import ConfigError
from dgm.simulate.landscape import LandscapeParams
from dgm.strategies.state import ROOT, NodeId, TaskPlan

STAGE1_SIZE = 10


@dataclass(frozen=True)
class RecordedLandscape:
    params: LandscapeParams
    parent: dict[NodeId, NodeId | None]
    results: dict[NodeId, dict[str, bool]]
    stage1: tuple[str, ...]
    stage2: tuple[str, ...]
    root: NodeId
    description: str

    def world(self, seed: int) -> RecordedWorld:
        return RecordedWorld(self, seed)

    def rate(self, node: NodeId) -> float:
        r = self.results.get(node, {})
        return (1.0 + sum(r.values())) / (2.0 + len(r))


def load_recorded(run_dir: str | Path, base: LandscapeParams) -> RecordedLandscape:
    from dgm.store import Run

    path = Path(run_dir)
    with Run.open(path) as run:  # names a missing or foreign folder in one line
        nodes = [n for n in run.nodes() if n.status == "active"]
        parent = {n.id: n.parent_id for n in nodes}
        results: dict[NodeId, dict[str, bool]] = {k: {} for k in parent}
        counts: Counter[str] = Counter()
        for e in run.evaluations():
            if e.node_id in results:
                results[e.node_id][e.task_id] = e.resolved
                counts[e.task_id] += 1
        expansions = [j for j in run.jobs(["done"]) if j.kind == "expand"]
        failed = sum(1 for j in expansions if j.result and "node_id" not in j.result) + sum(
            1 for n in run.nodes() if n.status != "active"
        )
        threshold = run.config.benchmark.stage2_threshold
    if not counts:
        raise ConfigError(f"run {path} has no evaluations", "simulate from a run that has some")
    tasks = [t for t, _ in counts.most_common()]
    share = failed / max(1, len(expansions) + failed)
    root = next(n for n, p in parent.items() if p is None)
    params = base.model_copy(
        update={
            "failure_rate": min(0.95, share),
            "stage1_tasks": min(STAGE1_SIZE, len(tasks)),
            "stage2_tasks": max(0, len(tasks) - STAGE1_SIZE),
            "stage2_threshold": threshold,
        }
    )
    land = RecordedLandscape(
        params, parent, results, tuple(tasks[:STAGE1_SIZE]), tuple(tasks[STAGE1_SIZE:]), root,
        f"recorded run {path.name}: {len(parent)} nodes, {sum(counts.values())} evaluations",
    )  # fmt: skip
    rates = [land.rate(n) for n in parent]
    target = (land.rate(root) + max(rates)) / 2
    return RecordedLandscape(
        params.model_copy(update={"target": min(0.99, max(0.01, target))}),
        parent, results, land.stage1, land.stage2, root, land.description,
    )  # fmt: skip


class RecordedWorld:
    """The `World` interface (plan, expand, evaluate, true_rate) over a recorded tree."""

    def __init__(self, land: RecordedLandscape, seed: int) -> None:
        self.land = land
        self.params = land.params
        mutation_ss, eval_ss = np.random.SeedSequence(seed).spawn(2)
        self._mutation_rng = np.random.default_rng(mutation_ss)
        self._eval_rng = np.random.default_rng(eval_ss)
        self.recorded: dict[NodeId, NodeId] = {ROOT: land.root}  # simulated id -> recorded
        self.children: dict[NodeId, list[NodeId]] = {}
        for node, p in land.parent.items():
            if p is not None:
                self.children.setdefault(p, []).append(node)

    def plan(self) -> TaskPlan:
        return TaskPlan(self.land.stage1, self.land.stage2, self.params.stage2_threshold)

    def true_rate(self, node: NodeId) -> float:
        return self.land.rate(self.recorded[node])

    def expand(self, parent: NodeId, group: tuple[NodeId, ...] = ()) -> NodeId | None:
        kids = self.children.get(self.recorded[parent], [])
        if self._mutation_rng.random() < self.params.failure_rate or not kids:
            return None
        child = len(self.recorded)
        self.recorded[child] = kids[int(self._mutation_rng.integers(len(kids)))]
        return child

    def evaluate(self, node: NodeId, task: str) -> bool:
        recorded = self.recorded[node]
        known = self.land.results.get(recorded, {}).get(task)
        if known is not None:
            return known
        return bool(self._eval_rng.random() < self.land.rate(recorded))
