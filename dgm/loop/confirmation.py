"""The run's train/test split and the confirmation stage: the loop's whole link to them.

    plan = search_plan(run, jobs.task_plan())          # before the search
    confirm(run, strategy, state, executor, make_job=..., on_complete=..., should_stop=...)

- `search_plan` applies the strategy's stage rule and holds out
  `strategy.final.held_out_fraction` of the tasks when `confirm_top_k` > 0. The split is
  recorded in the run (`meta` key `task_split`) at the first start and read back on resume.
- `confirm` evaluates the search's top-k candidates (by the final-choice rule) on every
  held-out task, through the loop's own job path (`ActionJobs.make`: same job ids, same
  store, resumable), and ships the candidate with the best lower credible bound on the
  held-out tasks; a node the judge caught tampering (in the search or on held-out tasks)
  is never a candidate nor the choice. The verdict is recorded (`meta` key
  `confirmation`); the store's one best rule (dgm/store/best.py) calls that node `best`
  everywhere. It runs only when the
  search ended on its own (budget, node limit, strategy) and costs k x held-out
  evaluations on top of `limits.max_evals`; the dollar and time limits still apply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import Any

from dgm.executors import Completion
from dgm.loop.scheduler import Scheduler
from dgm.loop.stop_rules import StopReason
from dgm.store import Run
from dgm.store.selection import CONFIRMATION_KEY, SPLIT_KEY, held_out_tasks
from dgm.strategies import (
    Evaluate,
    FinalRule,
    NodeId,
    SearchState,
    Strategy,
    TaskPlan,
    split_plan,
)
from dgm.strategies.actions import Action
from dgm.strategies.base import wait_or_stop

_ROOT: NodeId = -1  # a stand-in parent (no node has it): the candidates' tree does not matter


def search_plan(run: Run, plan: TaskPlan) -> TaskPlan:
    config = run.config
    recorded = run.db.get_meta(SPLIT_KEY)
    if recorded is not None:  # resume: the split made at the first start
        return _without(plan, config, set(json.loads(recorded)["held_out"]))
    search, held_out = split_plan(plan, config.strategy, config.seed)
    split = {"search": list(search.stage1 + search.stage2), "held_out": list(held_out)}
    run.db.set_meta(SPLIT_KEY, json.dumps(split))
    return search


class ConfirmStrategy(Strategy):
    """Evaluate every (candidate, held-out task) pair once, then stop."""

    name = "confirm"

    def __init__(self, candidates: list[NodeId], final: FinalRule) -> None:
        super().__init__(None, final)  # type: ignore[arg-type]  # no randomness
        self.candidates = candidates

    def next_action(self, state: SearchState) -> Action:
        for node in self.candidates:
            tasks = state.unevaluated_tasks(node)
            if tasks:
                return Evaluate(node, tasks[0])
        return wait_or_stop(state, "every candidate evaluated on the held-out tasks")

    def final_choice(  # type: ignore[override]  # None: nothing may ship
        self, state: SearchState, excluded: Collection[NodeId] = ()
    ) -> NodeId | None:
        """The best candidate on the held-out tasks by the one shipping rule; `excluded`
        (nodes the judge caught tampering) are never chosen. None when every candidate
        is excluded or none has a held-out result."""
        allowed = [c for c in self.candidates if c not in excluded]
        ranked = [c for c in self.final.ranked(state) if c in allowed]
        return ranked[0] if ranked else None


def confirm(
    run: Run,
    search: Strategy,
    state: SearchState,
    executor: Any,
    *,
    make_job: Callable[[Any], Any],
    on_complete: Callable[[Completion, SearchState], None] | None,
    should_stop: Callable[[], StopReason | None],
    workers: int | None = None,
) -> NodeId | None:
    """Run the confirmation stage after `search` ended on `state`; the chosen node, or None
    when the stage does not apply or could not finish (a limit, Ctrl-C)."""
    final = run.config.strategy.final
    held = held_out_tasks(run)
    if final.confirm_top_k == 0 or not held or should_stop() is not None:
        return None
    # A node the judge caught tampering is never a candidate (dgm/store/best.py `eligible`).
    forged = _tampered(run)
    ranked = search.final.ranked(state, final.confirm_top_k + len(forged))
    candidates = [c for c in ranked if c not in forged][: final.confirm_top_k]
    if not candidates:
        run.event("confirmation_incomplete", reason="every candidate was caught tampering")
        return None
    wanted = set(candidates)
    history = [(e.node_id, e.task_id, e.resolved) for e in run.evaluations()
               if e.task_id in held and e.node_id in wanted]  # fmt: skip
    nodes = [(_ROOT, None)] + [(c, _ROOT) for c in candidates]
    held_state = SearchState.replay(TaskPlan(held), nodes, history)
    # No parent prior here: the candidates hang off a synthetic root with no results, and
    # each is measured on every held-out task.
    strategy = ConfirmStrategy(candidates, FinalRule(final.quantile, final.min_evals, 0.0))
    run.event("confirmation_started", candidates=candidates, held_out=len(held))
    scheduler = Scheduler(
        strategy,
        held_state,
        executor,
        workers or run.config.workers,  # a replay plans with the recorded run's count
        make_job=make_job,
        on_complete=on_complete,
        should_stop=should_stop,
    )
    summary = scheduler.run()
    if any(held_state.unevaluated_tasks(c) for c in candidates):
        run.event("confirmation_incomplete", reason=str(summary.stop_reason))
        return None
    chosen = strategy.final_choice(held_state, _tampered(run))  # held-out tampering too
    if chosen is None:
        run.event("confirmation_incomplete", reason="every candidate was caught tampering")
        return None
    verdict = {
        "node": chosen,
        "held_out": list(held),
        "candidates": {c: list(held_state.own_counts(c)) for c in candidates},
        "search_choice": candidates[0],
        "quantile": final.quantile,
    }
    run.db.set_meta(CONFIRMATION_KEY, json.dumps(verdict))
    run.event("confirmed", node=chosen, search_choice=candidates[0])
    return chosen


def _tampered(run: Run) -> set[NodeId]:
    return run.tampered_nodes()


def _without(plan: TaskPlan, config: Any, held: set[str]) -> TaskPlan:
    """The search plan with a recorded held-out set (resume)."""
    kept = TaskPlan(
        tuple(t for t in plan.stage1 if t not in held),
        tuple(t for t in plan.stage2 if t not in held),
        plan.stage2_threshold,
    )
    no_split = config.strategy.model_copy(
        update={"final": config.strategy.final.model_copy(update={"confirm_top_k": 0})}
    )
    return split_plan(kept, no_split, config.seed)[0]
