"""The simulator's executor: the scheduler's jobs, run instantly on a virtual clock.

Each submitted job's outcome is drawn from the World when it is submitted and its duration
from a log-normal around the landscape's mean; completions come back in order of finish
time from an event heap. Time is in simulated hours.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from dgm.executors import Completion, Evaluated, Expanded, ExpansionFailed, Outcome, Ticket
from dgm.simulate.landscape import World
from dgm.strategies.actions import Expand


class SimulatedExecutor:
    def __init__(self, world: World, rng: np.random.Generator) -> None:
        self.world = world
        self._rng = rng
        self._clock = 0.0
        self._heap: list[tuple[float, int, Completion]] = []

    def now(self) -> float:
        return self._clock

    def submit(self, ticket: Ticket) -> None:
        action, params = ticket.action, self.world.params
        outcome: Outcome
        if isinstance(action, Expand):
            child = self.world.expand(action.parent, action.group)
            outcome = Expanded(child) if child is not None else ExpansionFailed("no valid child")
            mean = params.expand_hours
        else:
            outcome = Evaluated(self.world.evaluate(action.node, action.task))
            mean = params.eval_hours
        duration = self._duration(mean, params.duration_sd)
        completion = Completion(ticket, outcome, self._clock, self._clock + duration)
        heapq.heappush(self._heap, (completion.finished_at, ticket.id, completion))

    def next_completion(self) -> Completion:
        finished_at, _, completion = heapq.heappop(self._heap)
        self._clock = finished_at
        return completion

    def _duration(self, mean: float, sd: float) -> float:
        # Log-normal with the given mean: mu = ln(mean) - sd^2 / 2.
        return float(self._rng.lognormal(math.log(mean) - sd * sd / 2, sd)) if sd else mean
