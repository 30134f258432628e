"""Run strategies on simulated worlds and summarise them across seeds.

One run = one strategy on one seed's World, driven by the production `Scheduler` with a
`SimulatedExecutor`. After every completion the hook asks the strategy what it would ship
now and looks up that agent's true rate, which gives the curve, the evaluations needed to
reach the target, and the shipped agent at the end.
"""

from __future__ import annotations

import math
import statistics
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dgm.config import StrategyConfig
from dgm.executors import Completion
from dgm.loop.scheduler import Scheduler, SearchBudget
from dgm.simulate.executor import SimulatedExecutor
from dgm.simulate.landscape import LandscapeParams, World
from dgm.simulate.variants import variant
from dgm.strategies import ROOT, Budget, NodeId, SearchState, make_strategy, split_plan


@dataclass
class SeedResult:
    strategy: str
    seed: int
    shipped: NodeId
    shipped_true_rate: float
    best_true_rate: float
    """Best true rate of any agent made, shipped or not."""
    evals_to_target: float | None
    """Evaluation-equivalents spent when the shipped agent first reached the target."""
    evals_to_make: float | None
    """Evaluation-equivalents spent when an agent reaching the target was first made
    (shipped or not): the shipping lag is evals_to_target - evals_to_make."""
    evals_used: float
    nodes: int
    sim_hours: float
    utilisation: float
    stop_reason: str
    curve: list[tuple[float, float, float]] = field(repr=False, default_factory=list)
    """(evaluation-equivalents, shipped true rate, best true rate) after each completion."""

    @property
    def reached(self) -> bool:
        return self.evals_to_target is not None


def strategy_seed(name: str, seed: int) -> np.random.SeedSequence:
    """The strategy's own RNG stream: differs per strategy, fixed per (name, seed)."""
    return np.random.SeedSequence([seed, zlib.crc32(name.encode())])


def run_one(
    strategy_name: str,
    landscape: LandscapeParams | Any,
    seed: int,
    budget: float,
    workers: int,
    target: float,
    strategy_config: StrategyConfig | None = None,
) -> SeedResult:
    """One run. `strategy_name`: a strategy or an ablation variant (variants.py);
    `landscape`: parameters, or anything with `world(seed)` (a recorded run)."""
    chosen = variant(strategy_name)
    config = chosen.config(strategy_config)
    workers = chosen.workers or workers
    world = (
        World(landscape, seed) if isinstance(landscape, LandscapeParams) else landscape.world(seed)
    )
    state = SearchState(split_plan(world.plan(), config, seed)[0], barren_after=config.barren_after)
    plan_budget = Budget(budget, world.params.expansion_cost)
    strategy = make_strategy(config, strategy_seed(strategy_name, seed), workers, plan_budget)
    durations_rng = np.random.default_rng([seed, zlib.crc32(b"durations")])
    executor = SimulatedExecutor(world, durations_rng)
    limits = SearchBudget(max_evals=budget, expansion_cost=world.params.expansion_cost)
    curve: list[tuple[float, float, float]] = []
    best = [world.true_rate(ROOT)]
    reached_at: list[float] = []
    made_at: list[float] = []

    def shipped_rate(state: SearchState) -> float:
        # Nothing shipped (no node evaluated yet): the user still has the seed.
        return world.true_rate(strategy.final_choice(state) or ROOT)

    scheduler: Scheduler

    def observe(completion: Completion, state: SearchState) -> None:
        outcome = completion.outcome
        child = getattr(outcome, "child", None)
        if child is not None:
            best[0] = max(best[0], world.true_rate(child))
        shipped = shipped_rate(state)
        spent = scheduler.spent
        curve.append((spent, shipped, best[0]))
        if not reached_at and shipped >= target:
            reached_at.append(spent)
        if not made_at and best[0] >= target:
            made_at.append(spent)

    scheduler = Scheduler(strategy, state, executor, workers, limits, on_complete=observe)
    summary = scheduler.run()
    shipped = strategy.final_choice(state)
    return SeedResult(
        strategy=strategy_name,
        seed=seed,
        shipped=ROOT if shipped is None else shipped,
        shipped_true_rate=shipped_rate(state),
        best_true_rate=best[0],
        evals_to_target=reached_at[0] if reached_at else None,
        evals_to_make=made_at[0] if made_at else None,
        evals_used=scheduler.spent,
        nodes=state.size,
        sim_hours=summary.finished_at - summary.started_at,
        utilisation=summary.utilisation,
        stop_reason=str(summary.stop_reason),
        curve=curve,
    )


@dataclass
class StrategySummary:
    strategy: str
    seeds: int
    shipped_mean: float
    shipped_ci: float
    """Half-width of the 95% confidence interval of the mean (Student t)."""
    reached_fraction: float
    evals_to_target_mean: float | None
    """Mean over the seeds that reached the target."""
    evals_to_target_median: float | None
    """Median over all seeds, a seed that never reached counting as infinitely many;
    None when half or more never reached."""
    sim_hours_mean: float
    evals_to_make_median: float | None = None
    """Median evaluations until an agent reaching the target was made (shipped or not)."""


# Two-sided 95% Student-t quantiles for small samples; 1.96 beyond.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042,
        40: 2.021, 60: 2.000, 120: 1.980}  # fmt: skip


def t95(df: int) -> float:
    if df <= 0:
        return math.nan
    known = [k for k in _T95 if k <= df]
    return 1.96 if df > 120 else _T95[max(known)]


def mean_ci(values: list[float]) -> tuple[float, float]:
    """(mean, 95% CI half-width); the half-width is nan for a single value."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def summarise(results: list[SeedResult]) -> StrategySummary:
    mean, ci = mean_ci([r.shipped_true_rate for r in results])
    hits = [r.evals_to_target for r in results if r.evals_to_target is not None]
    ordered = sorted(r.evals_to_target if r.reached else math.inf for r in results)
    median = statistics.median(ordered) if ordered else math.inf
    return StrategySummary(
        strategy=results[0].strategy,
        seeds=len(results),
        shipped_mean=mean,
        shipped_ci=ci,
        reached_fraction=len(hits) / len(results),
        evals_to_target_mean=statistics.fmean(hits) if hits else None,
        evals_to_target_median=None if math.isinf(median) else median,
        sim_hours_mean=statistics.fmean(r.sim_hours for r in results),
        evals_to_make_median=_median_reached([r.evals_to_make for r in results]),
    )


def _median_reached(values: list[float | None]) -> float | None:
    """Median, a seed that never reached counting as infinite; None when that is inf."""
    median = statistics.median(math.inf if v is None else v for v in values)
    return None if math.isinf(median) else median


def run_experiment(
    strategies: list[str],
    landscape: LandscapeParams | Any,
    seeds: int,
    budget: float,
    workers: int,
    target: float,
    strategy_config: StrategyConfig | None = None,
    processes: int = 1,
) -> list[SeedResult]:
    """Every strategy on seeds 0..seeds-1; seed s is the same world for all strategies.
    `processes` > 1 runs them in parallel; the results are the same, in the same order."""
    jobs = [
        (name, landscape, seed, budget, workers, target, strategy_config)
        for name in strategies
        for seed in range(seeds)
    ]
    if processes <= 1:
        return [run_one(*job) for job in jobs]
    with ProcessPoolExecutor(processes) as pool:
        return list(pool.map(_run_job, jobs, chunksize=max(1, len(jobs) // (4 * processes))))


def _run_job(job: tuple) -> SeedResult:
    return run_one(*job)
