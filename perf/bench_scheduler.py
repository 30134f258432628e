"""Scheduler and strategy performance, each figure beside its baseline, in one run.

    python perf/bench_scheduler.py

1. Worker utilisation with jobs of random duration (no Docker, no LLM): the fraction of
   worker time busy under `hgm` (target >= 95%) beside `dgm`'s generation barrier, on the
   simulator's virtual clock and on the real thread-pool executor with sleeping jobs.
2. Scheduling cost: time for each strategy to choose its next action with a 5,000-node
   archive and 50,000 recorded evaluations (target < 10 ms), beside the reference code's
   way of computing HGM's clade counts (walking every subtree at each decision).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dgm.config import StrategyConfig  # noqa: E402
from dgm.executors import Evaluated, Expanded, ExpansionFailed, ThreadExecutor  # noqa: E402
from dgm.loop.scheduler import Scheduler, SearchBudget  # noqa: E402
from dgm.simulate.executor import SimulatedExecutor  # noqa: E402
from dgm.simulate.landscape import World  # noqa: E402
from dgm.simulate.presets import PRESETS  # noqa: E402
from dgm.strategies import SearchState, TaskPlan, make_strategy  # noqa: E402

WORKERS = 8


def utilisation_simulated(name: str, budget: int, seed: int) -> float:
    world = World(PRESETS["mismatch"], seed)
    state = SearchState(world.plan())
    strategy = make_strategy(StrategyConfig(name=name), seed)
    executor = SimulatedExecutor(world, np.random.default_rng(seed))
    limits = SearchBudget(max_evals=budget, expansion_cost=1.0)
    return Scheduler(strategy, state, executor, WORKERS, limits).run().utilisation


def utilisation_threads(name: str, jobs: int, seed: int) -> float:
    """Real threads; each job sleeps 20-80 ms and returns a random outcome."""
    rng = np.random.default_rng(seed)
    plan = TaskPlan(tuple(f"t{i}" for i in range(10)), tuple(f"u{i}" for i in range(40)))
    counter = [0]

    def make_job(action):
        pause, draw = float(rng.uniform(0.02, 0.08)), float(rng.random())
        if hasattr(action, "parent"):
            counter[0] += 1
            outcome = Expanded(str(counter[0])) if draw > 0.15 else ExpansionFailed()
        else:
            outcome = Evaluated(draw < 0.45)

        def job():
            time.sleep(pause)
            return outcome

        return job

    state = SearchState(plan)
    strategy = make_strategy(StrategyConfig(name=name), seed)
    with ThreadExecutor(WORKERS) as executor:
        limits = SearchBudget(max_evals=jobs, expansion_cost=1.0)
        return Scheduler(strategy, state, executor, WORKERS, limits, make_job).run().utilisation


def history(nodes: int, evals_per_node: int, seed: int = 0):
    """A random tree (each node's parent among the 50 before it) and stage-1 results for
    every node: (nodes, evaluations) as the store would replay them."""
    rng = np.random.default_rng(seed)
    tree = [("0", None)] + [
        (str(i), str(int(rng.integers(max(0, i - 50), i)))) for i in range(1, nodes)
    ]
    ability = rng.uniform(0.1, 0.7, nodes)
    evaluations = [
        (str(n), f"t{t}", bool(rng.random() < ability[n]))
        for n in range(nodes)
        for t in range(evals_per_node)
    ]
    return tree, evaluations


STAGE1 = tuple(f"t{i}" for i in range(10))
WITH_STAGE2 = TaskPlan(STAGE1, tuple(f"u{i}" for i in range(40)))
STAGE1_ONLY = TaskPlan(STAGE1)


def reference_clade_counts(state: SearchState) -> list[tuple[int, int]]:
    """What the reference did per decision: each node's clade by walking its subtree."""
    counts = []
    for node in state.node_ids:
        s = f = 0
        stack = [node]
        while stack:
            current = stack.pop()
            own = state.results(current)
            s += sum(own.values())
            f += len(own) - sum(own.values())
            stack.extend(state.children(current))
        counts.append((s, f))
    return counts


def time_ms(fn, repeats: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    print(f"1. worker utilisation, {WORKERS} workers, random job durations")
    print(f"   {'executor':<34}{'hgm':>8}{'dgm (barrier)':>16}")
    sim = {
        n: statistics.fmean(utilisation_simulated(n, 2000, s) for s in range(5))
        for n in ("hgm", "dgm")
    }
    print(f"   {'simulated clock, 2000 evals x 5':<34}{sim['hgm']:>8.1%}{sim['dgm']:>16.1%}")
    thr = {n: utilisation_threads(n, 600, 0) for n in ("hgm", "dgm")}
    print(f"   {'threads, 600 jobs sleeping 20-80 ms':<34}{thr['hgm']:>8.1%}{thr['dgm']:>16.1%}")
    print("   target for hgm: >= 95%")

    print("\n2. choosing the next action: 5,000 nodes, 50,000 evaluations")
    tree, evaluations = history(5000, 10)
    t0 = time.perf_counter()
    state = SearchState.replay(WITH_STAGE2, tree, evaluations)
    print(f"   building the state by replay: {time.perf_counter() - t0:.2f} s")
    # With stage 2 open on the nodes that passed, strategies have evaluations to hand out;
    # with stage 1 only, every node is settled and they must pick a parent.
    settled = SearchState.replay(STAGE1_ONLY, tree, evaluations)
    print(f"   {'strategy':<34}{'median ms':>10}{'p95 ms':>10}")
    for name in ("hgm", "adaptive", "gea", "dgm", "greedy", "random"):
        for label, s in (("evaluations open", state), ("all settled", settled)):
            strategy = make_strategy(StrategyConfig(name=name), 0)
            median, p95 = time_ms(lambda st=strategy, s=s: st.next_action(s), 200)
            print(f"   {name + ' next_action, ' + label:<34}{median:>10.3f}{p95:>10.3f}")
        median, p95 = time_ms(lambda st=strategy: st.final_choice(state), 50)
        print(f"   {name + ' final_choice':<34}{median:>10.3f}{p95:>10.3f}")
    median, p95 = time_ms(lambda: reference_clade_counts(state), 3)
    print(f"   {'baseline: reference clade walk':<34}{median:>10.1f}{p95:>10.1f}")
    print("   target: < 10 ms")


if __name__ == "__main__":
    main()
