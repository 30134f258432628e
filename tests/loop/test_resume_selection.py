"""Resume with selection features: a GEA expansion in flight comes back with its group (same
job id), a confirmation job (held-out task) is left to the confirmation stage. Job rows
written when node ids were strings ("3") resume as well, under the same ids."""

from __future__ import annotations

import json

from dgm.loop.job_making.from_actions import eval_job_id, expand_job_id
from dgm.loop.resume import in_flight_actions, rebuild_state
from dgm.store.selection import SPLIT_KEY
from dgm.strategies import Evaluate, Expand, TaskPlan


def test_in_flight_group_is_restored_and_held_out_jobs_are_skipped(make_run) -> None:
    run = make_run()
    run.db.set_meta(SPLIT_KEY, json.dumps({"search": ["t1"], "held_out": ["t9"]}))
    target = {"kind": "task", "task_id": "t1"}
    grouped = expand_job_id(0, 0, target, [3, 4])
    # Ids hashed from the inputs as they were when node ids were strings: old runs resume.
    assert grouped == "expand-0-be80729fcf"
    assert expand_job_id(0, 2, target) == "expand-0-77c6a67783"
    assert eval_job_id(12, "t1") == "eval-12-494e75043d"
    assert grouped != expand_job_id(0, 0, target)  # the group is part of the job's identity
    # The evidence (timings in test output) is not: a replay makes the same ids.
    timed = target | {"test_output": "Ran 3 tests in 0.004s"}
    assert expand_job_id(0, 0, timed) == expand_job_id(0, 0, target | {"test_output": "0.005s"})
    assert expand_job_id(0, 0, target) != expand_job_id(0, 1, target)
    # Rows as a run of an earlier version wrote them: node ids as strings.
    run.queue_job(grouped, "expand", {"parent": "0", "ordinal": 0, "target": target,
                                      "group": ["3", "4"]})  # fmt: skip
    run.queue_job("eval-0-held", "eval", {"node": "0", "task": "t9"})
    run.queue_job("eval-0-search", "eval", {"node": "0", "task": "t1"})
    state = rebuild_state(run, TaskPlan(("t1",)))
    actions = dict((job, action) for action, job in in_flight_actions(run, state))
    assert actions == {grouped: Expand(0, (3, 4)), "eval-0-search": Evaluate(0, "t1")}
    assert run.job("eval-0-held").state == "queued"  # not cancelled: confirmation re-runs it
