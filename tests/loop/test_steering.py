"""Steering applied by the meta loop (fake jobs, no Docker): requests recorded in the store
by another process are applied between jobs, acknowledged, recorded in the events with who
asked, and hold across resume."""

from __future__ import annotations

import threading
import time

import pytest

from dgm.errors import DgmError
from dgm.loop.meta_loop import MetaLoop
from dgm.report.export import resolve_node
from dgm.store import Run, best_node
from dgm.store.db import Database
from dgm.store.steering import APPLIED, REFUSED, add_request, requests
from tests.loop.fake_jobs import TASKS, FakeJobs


def _steered(run: Run) -> list[dict]:
    return run.events(limit=None, kinds=["steered"])


def test_limits_asked_before_the_loop_starts_are_applied_and_kept(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 40, "workers": 2})
    add_request(run.db, "eval_limit", {"max_evals": 8}, "cli (ada)")
    add_request(run.db, "budget", {"usd": 3.5}, "web 127.0.0.1 (ada)")
    summary = MetaLoop(run, jobs=FakeJobs(run)).run()
    assert summary.stop_reason == "evaluation budget reached" and summary.evaluations <= 8
    assert [(r.action, r.state) for r in requests(run.db)] == [("eval_limit", APPLIED),
                                                              ("budget", APPLIED)]  # fmt: skip
    events = _steered(run)
    assert [(e["action"], e["who"], e["state"]) for e in events] == [
        ("eval_limit", "cli (ada)", APPLIED),
        ("budget", "web 127.0.0.1 (ada)", APPLIED),
    ]
    assert events[0]["note"] == "evaluation limit now 8" and events[0]["asked_at"] > 0
    with Run.open(run.path) as again:  # run.toml keeps them: a resume runs under them
        assert again.config.limits.max_evals == 8 and again.config.limits.budget_usd == 3.5


def test_a_banned_node_is_never_a_parent_nor_best_across_resume(make_run) -> None:
    run = make_run(**{"strategy.name": "greedy", "limits.max_evals": 20, "workers": 1})
    MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=99)).run()
    banned = best_node(run)
    assert banned is not None and banned != 0
    add_request(run.db, "ban", {"node": banned}, "cli (ada)")
    for limit in (40, 60):  # two more sessions: the ban holds in both
        run.update_config(run.config.with_overrides({"limits.max_evals": limit}))
        loop = MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=99))
        loop.run()
        assert banned in loop.state.parents.banned
    banned_at = _steered(run)[0]["ts"]
    later = [j for j in run.jobs() if j.kind == "expand" and j.created_at > banned_at]
    assert later and all(int(j.inputs["parent"]) != banned for j in later)
    assert best_node(run) != banned
    with pytest.raises(DgmError, match=f"node {banned} is not exported: it was banned"):
        resolve_node(run, str(banned))


def test_stop_from_another_process_stops_gracefully_within_a_second(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 500, "workers": 2})
    asked: list[float] = []

    def ask_later() -> None:
        time.sleep(1.0)
        other = Database.open(run.db.path)  # another connection, as `dgm steer` would be
        add_request(other, "stop", {}, "cli (ada)")
        asked.append(time.monotonic())
        other.close()

    threading.Thread(target=ask_later, daemon=True).start()
    summary = MetaLoop(run, jobs=FakeJobs(run, delay=(0.2, 0.4))).run()
    assert summary.stop_reason == "stop requested by cli (ada)"
    assert time.monotonic() - asked[0] < 2.0  # the running jobs (<= 0.4 s) finish, nothing new
    assert all(j.state in ("done", "cancelled") for j in run.jobs())
    assert [r.state for r in requests(run.db)] == [APPLIED]


def test_queued_evaluations_run_first_and_impossible_ones_are_refused(make_run) -> None:
    run = make_run(**{"strategy.name": "greedy", "limits.max_evals": 14, "workers": 1})
    MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=99)).run()
    searched = len(TASKS) - 1  # one task of six is held out for the final choice
    counts = {n.id: len(run.evaluations(n.id)) for n in run.nodes()}
    partial = next(n for n, k in counts.items() if 0 < k < searched)
    full = next(n for n, k in counts.items() if k >= searched)
    rejected = run.add_node(0, diff="", origin="broken", status="rejected")
    for node in (partial, full, rejected.id):
        add_request(run.db, "evaluate", {"node": node, "count": 2}, "cli (ada)")
    run.update_config(run.config.with_overrides({"limits.max_evals": 30}))
    MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=99)).run()
    asked = _steered(run)[0]["ts"]
    first = [j for j in run.jobs() if j.kind == "eval" and j.created_at > asked][:2]
    assert [int(j.inputs["node"]) for j in first] == [partial, partial]
    states = [(r.state, r.note) for r in requests(run.db)]
    assert states[0][0] == APPLIED and states[0][1].startswith(
        f"queued 2 evaluation(s) of node {partial}"
    )
    assert states[1] == (REFUSED, f"node {full} has been evaluated on every task of the plan")
    assert states[2] == (REFUSED, f"node {rejected.id} is not in the search (rejected?)")


def test_pinned_is_a_candidate_parent_however_barren_and_banned_never() -> None:
    from dgm.strategies import SearchState, TaskPlan
    from dgm.strategies.base import archive_mask

    state = SearchState(TaskPlan(("a", "b")))
    state.add_node(1, 0)
    state.add_node(2, 0)
    state.record_evaluation(0, "a", True)
    state.record_evaluation(0, "b", False)
    state.set_barren_streak(1, 99)  # node 1: expanded often, nothing new came of it
    assert list(state.expandable_column()) == [True, False, True]
    assert list(archive_mask(state)) == [True, False, False]  # 1 and 2: not evaluated yet
    state.parents.pin(1)
    state.parents.ban(0)
    assert list(state.expandable_column()) == [False, True, True]
    assert list(state.expandable_column(skip_barren=False)) == [False, True, True]  # hgm too
    assert list(archive_mask(state)) == [True, True, False]
    state.parents.ban(7)  # a node not in the search (rejected): ignored
    assert list(state.expandable_column()) == [False, True, True]
