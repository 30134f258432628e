"""The loop's side of steering: apply what a person asked for (dgm/store/steering.py).

Requests are applied between jobs, on the loop's own thread (`apply_pending`, asked by
the scheduler before each submission), except `stop`, which a watcher thread also picks
up within a second: a stop must not wait for a long job to finish. Each request is
acknowledged in the store (applied, or refused with the reason) and recorded as a
`steered` event with who asked and when. Changed limits and workers are written to
run.toml, and pins and bans are rows, so all of them hold across resume.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from dgm.loop.stop_rules import StopKind, StopReason, StopRules
from dgm.store import Run
from dgm.store.steering import APPLIED, PENDING, REFUSED, SteeringRequest, acknowledge, marked_nodes
from dgm.store.steering import requests as steering_requests
from dgm.strategies import Evaluate, SearchState, Strategy

WATCH_INTERVAL_S = 0.5


class Steering:
    """Pending requests in, changes to the rules, the scheduler and the search state out."""

    def __init__(self, run: Run, rules: StopRules, jobs: Any = None) -> None:
        self.run = run
        self.rules = rules
        self.jobs = jobs
        self.scheduler: Any = None
        self.state: SearchState | None = None
        self.extra: list[Evaluate] = []
        """Evaluations a person queued, handed out before the strategy's own actions."""
        self._lock = threading.Lock()
        self._done: set[int] = set()
        self._stop_watch = threading.Event()

    def attach(self, scheduler: Any, state: SearchState) -> None:
        """Start steering this session: earlier pins and bans hold again."""
        self.scheduler, self.state = scheduler, state
        for node in marked_nodes(self.run.db, "pin"):
            state.parents.pin(node)
        for node in marked_nodes(self.run.db, "ban"):
            state.parents.ban(node)

    def apply_pending(self) -> None:
        """Every pending request, in the order asked (the loop's thread)."""
        self._apply(steering_requests(self.run.db, PENDING))

    def watch(self) -> threading.Thread:
        """A daemon thread that applies `stop` requests within WATCH_INTERVAL_S."""

        def loop() -> None:
            while not self._stop_watch.wait(WATCH_INTERVAL_S):
                try:
                    pending = steering_requests(self.run.db, PENDING)
                    self._apply([r for r in pending if r.action == "stop"])
                except Exception:  # a locked or vanished store: the loop's own checks say so
                    pass

        thread = threading.Thread(target=loop, name="dgm-steering", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self._stop_watch.set()

    # -- applying -----------------------------------------------------------------------
    def _apply(self, pending: list[SteeringRequest]) -> None:
        with self._lock:
            for request in pending:
                if request.id in self._done:
                    continue
                self._done.add(request.id)
                try:
                    note = getattr(self, f"_{request.action}")(request)
                    state = APPLIED
                except SteeringRefused as refused:
                    note, state = str(refused), REFUSED
                acknowledge(self.run.db, request.id, state, note)
                self.run.event(
                    "steered",
                    request=request.id,
                    action=request.action,
                    args=request.args,
                    who=request.who,
                    asked_at=request.ts,
                    state=state,
                    note=note,
                )

    def _stop(self, request: SteeringRequest) -> str:
        self.rules.request(StopReason(StopKind.INTERRUPTED, f"stop requested by {request.who}"))
        return "no new jobs start; running ones finish"

    def _budget(self, request: SteeringRequest) -> str:
        usd = float(request.args["usd"])
        self._update_config({"limits.budget_usd": usd})
        if self.jobs is not None:
            self.jobs.set_run_budget(usd)  # the gateway refuses calls past the cap
        return f"dollar budget now ${usd:.2f}"

    def _eval_limit(self, request: SteeringRequest) -> str:
        limit = int(request.args["max_evals"])
        self._update_config({"limits.max_evals": limit})
        if self.scheduler is not None:
            self.scheduler.limits = dataclasses.replace(self.scheduler.limits, max_evals=limit)
        return f"evaluation limit now {limit}"

    def _workers(self, request: SteeringRequest) -> str:
        workers = int(request.args["workers"])
        before = self.run.config.workers
        self._update_config({"workers": workers})
        if self.scheduler is not None:
            self.scheduler.workers = workers
        if workers > before:
            # The executor's pool was sized at start: more jobs than it has threads queue.
            return f"workers now {workers} (above {before}: fully on the next resume)"
        return f"workers now {workers}"

    def _pin(self, request: SteeringRequest) -> str:
        node = int(request.args["node"])
        if self.state is not None:
            self.state.parents.pin(node)
        return f"node {node} is always a candidate parent"

    def _ban(self, request: SteeringRequest) -> str:
        node = int(request.args["node"])
        if self.state is not None:
            self.state.parents.ban(node)
        return f"node {node} is never a parent and never shipped"

    def _evaluate(self, request: SteeringRequest) -> str:
        node, count = int(request.args["node"]), int(request.args["count"])
        state = self.state
        if state is None or node not in state.node_ids:
            raise SteeringRefused(f"node {node} is not in the search (rejected?)")
        # Extra: beyond what the strategy would ask for, so the next stage's tasks first.
        opened = state.open_stage2(node)
        queued = {e.task for e in self.extra if e.node == node}
        tasks = [t for t in state.unevaluated_tasks(node) if t not in queued]
        if opened:
            tasks.sort(key=lambda t: t not in state.plan.stage2)
        if not tasks:
            raise SteeringRefused(f"node {node} has been evaluated on every task of the plan")
        chosen = tasks[:count]
        self.extra += [Evaluate(node, t) for t in chosen]
        return f"queued {len(chosen)} evaluation(s) of node {node}: {', '.join(chosen)}"

    def _update_config(self, overrides: dict[str, Any]) -> None:
        config = self.run.config.with_overrides(overrides)
        self.run.update_config(config)
        self.rules.limits = config.limits


class SteeringRefused(Exception):
    """A request the loop cannot apply; its message is the note the person sees."""


class SteeredStrategy:
    """The run's strategy, with a person's queued evaluations handed out first."""

    def __init__(self, inner: Strategy, steering: Steering) -> None:
        self.inner = inner
        self.steering = steering

    def next_action(self, state: SearchState) -> Any:
        extra = self.steering.extra
        while extra:
            action = extra.pop(0)
            if action.task in state.unevaluated_tasks(action.node):
                return action
        return self.inner.next_action(state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
