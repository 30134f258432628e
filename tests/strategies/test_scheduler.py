import threading

import numpy as np
import pytest

from dgm.executors import (
    Completion,
    Evaluated,
    Expanded,
    ExpansionFailed,
    JobCrashed,
    ThreadExecutor,
)
from dgm.loop.scheduler import Scheduler, SearchBudget
from dgm.simulate.executor import SimulatedExecutor
from dgm.simulate.landscape import World
from dgm.simulate.presets import PRESETS
from dgm.strategies import (
    DGMStrategy,
    Evaluate,
    Expand,
    GreedyStrategy,
    HGMStrategy,
    SearchState,
    Strategy,
)
from tests.strategies.helpers import PLAN


class WatchedExecutor(SimulatedExecutor):
    """Records how many jobs were running, and of which kind, whenever the scheduler
    waits for a completion."""

    def __init__(self, world: World, seed: int = 0) -> None:
        super().__init__(world, np.random.default_rng(seed))
        self.running_when_waiting: list[int] = []
        self.kinds_when_waiting: list[set[type]] = []

    def next_completion(self) -> Completion:
        self.running_when_waiting.append(len(self._heap))
        self.kinds_when_waiting.append({type(c.ticket.action) for _, _, c in self._heap})
        return super().next_completion()


def simulated(strategy: Strategy, workers: int, limits: SearchBudget, seed: int = 0):
    world = World(PRESETS["mismatch"], seed)
    state = SearchState(world.plan())
    executor = WatchedExecutor(world, seed)
    scheduler = Scheduler(strategy, state, executor, workers, limits)
    return scheduler, state, executor


def test_hgm_keeps_every_worker_busy_until_the_budget_stops_it():
    scheduler, _, executor = simulated(
        # Without the reference's waits (start-up barrier, impossible action): those are
        # test_hgm_reference's; here the scheduler must keep what it is given busy.
        HGMStrategy(np.random.default_rng(0), startup=False, take_other_action=True),
        6,
        SearchBudget(max_evals=300, expansion_cost=1),
    )
    summary = scheduler.run()
    assert summary.stop_reason == "evaluation budget reached"
    waits = executor.running_when_waiting
    full_until = waits.index(5) if 5 in waits else len(waits)
    assert all(n == 6 for n in waits[:full_until])  # full until the drain began
    assert waits[full_until:] == list(range(5, 0, -1))[: len(waits) - full_until]
    assert summary.utilisation > 0.9


def test_dgm_never_starts_a_generation_while_the_last_one_runs():
    strategy = DGMStrategy(np.random.default_rng(0), children_per_generation=3)
    starts: list[tuple[int, int]] = []  # (generation, jobs running) at each new generation
    original = strategy.next_action

    def spy(state):
        before = strategy.generation
        action = original(state)
        if strategy.generation != before:
            starts.append((strategy.generation, state.in_flight))
        return action

    strategy.next_action = spy
    scheduler, state, _ = simulated(strategy, 8, SearchBudget(max_evals=400, expansion_cost=1))
    scheduler.run()
    assert len(starts) > 5
    assert all(running == 0 for _, running in starts)
    assert state.size > 1


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_budget_is_never_exceeded_counting_jobs_in_flight(workers):
    strategy = HGMStrategy(np.random.default_rng(workers))
    scheduler, state, _ = simulated(
        strategy, workers, SearchBudget(max_evals=101, expansion_cost=2.5)
    )
    scheduler.run()
    spent = state.total_evals + 2.5 * (state.size - 1 + state.total_failed_expansions)
    assert spent == scheduler.spent <= 101
    assert spent > 101 - 2.5 - 1  # and it stopped because the next job would not fit


def test_node_limit_and_external_stop():
    scheduler, state, _ = simulated(
        GreedyStrategy(np.random.default_rng(0)), 4, SearchBudget(max_nodes=5)
    )
    assert scheduler.run().stop_reason == "node limit reached"
    assert state.size <= 5

    calls = []

    def stop_after_20():
        calls.append(1)
        return "stopped by user" if len(calls) > 20 else None

    world = World(PRESETS["flat"], 1)
    state = SearchState(world.plan())
    scheduler = Scheduler(
        HGMStrategy(np.random.default_rng(0), startup=False, take_other_action=True),
        state,
        SimulatedExecutor(world, np.random.default_rng(0)),
        3,
        should_stop=stop_after_20,
    )
    summary = scheduler.run()
    assert summary.stop_reason == "stopped by user"
    assert summary.jobs == 20 and state.in_flight == 0


def test_completion_hook_sees_each_result_already_in_the_state():
    seen = []

    def hook(completion, state):
        action = completion.ticket.action
        if isinstance(action, Evaluate):
            seen.append(action.task in state.results(action.node))

    world = World(PRESETS["aligned"], 2)
    state = SearchState(world.plan())
    executor = SimulatedExecutor(world, np.random.default_rng(0))
    strategy = HGMStrategy(np.random.default_rng(0))
    Scheduler(strategy, state, executor, 4, SearchBudget(max_evals=60), on_complete=hook).run()
    assert len(seen) == state.total_evals and all(seen)


def test_local_executor_runs_real_thread_jobs_and_contains_crashes():
    """The production executor with callable jobs: an expansion always makes a child,
    an evaluation solves every task except that task "c" crashes once."""
    lock = threading.Lock()
    made = [0]
    crashed = []

    def make_job(action):
        def job():
            if isinstance(action, Expand):
                with lock:
                    made[0] += 1
                    return Expanded(made[0]) if made[0] % 3 else ExpansionFailed("no diff")
            if action.task == "c" and not crashed:
                crashed.append(action)
                raise RuntimeError("docker went away")
            return Evaluated(solved=action.task != "e")

        return job

    state = SearchState(PLAN)
    with ThreadExecutor(3) as executor:
        summary = Scheduler(
            GreedyStrategy(np.random.default_rng(0)),
            state,
            executor,
            3,
            SearchBudget(max_nodes=6),
            make_job=make_job,
        ).run()
    assert summary.stop_reason == "node limit reached"
    assert crashed and state.results(0)["c"] is True  # retried after the crash
    assert state.own_counts(0) == (7, 1)  # stage 1 (4/5) opened stage 2 (3/3)
    assert state.total_failed_expansions >= 1
    assert summary.finished_at >= summary.started_at


def test_unexpected_outcome_type_is_a_bug_not_silence():
    class Broken(SimulatedExecutor):
        def submit(self, ticket):
            super().submit(ticket)
            t, i, c = self._heap[-1]
            self._heap[-1] = (t, i, Completion(c.ticket, JobCrashed("x"), 0, 0))
            if isinstance(ticket.action, Evaluate):
                self._heap[-1] = (t, i, Completion(c.ticket, Expanded(9), 0, 0))

    world = World(PRESETS["flat"], 0)
    state = SearchState(world.plan())
    scheduler = Scheduler(
        HGMStrategy(np.random.default_rng(0)), state, Broken(world, np.random.default_rng(0)), 1
    )
    with pytest.raises(TypeError, match="eval job returned"):
        scheduler.run()
