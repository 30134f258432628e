"""Polyglot through the real harness: oracle and null on the Python subset, timeouts, images."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.task_images import missing_images, pin_images
from dgm.errors import NotFoundError
from dgm.evaluation.evaluate_agent import Summary, evaluate_agent
from dgm.jobs.evaluate import AgentRef, EvalContext, EvalJob, evaluate_task

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def python_tasks(polyglot_dir: Path, runtime_image: str) -> list:
    tasks = polyglot.PolyglotTasks(polyglot_dir).tasks("python")
    assert len(tasks) == 34
    return tasks


def test_oracle_passes_all_34_python_tasks(python_tasks: list, tmp_path: Path) -> None:
    outcomes = evaluate_agent(AgentRef.reference("oracle"), python_tasks, tmp_path, workers=2)
    failed = {o.task_id: o.error for o in outcomes if not o.resolved}
    assert failed == {}
    assert Summary.of(outcomes).by_language["python"].passed == 34
    for o in outcomes:
        assert not o.empty_patch and o.tests_total and o.tests_passed == o.tests_total
    logs = Path(outcomes[0].log_dir)
    assert {"patch.diff", "test_output.txt", "result.json"} <= {p.name for p in logs.iterdir()}
    assert json.loads((logs / "result.json").read_text())["resolved"] is True


def test_null_passes_none_of_the_34_python_tasks(python_tasks: list, tmp_path: Path) -> None:
    outcomes = evaluate_agent(AgentRef.reference("null"), python_tasks, tmp_path, workers=2)
    assert [o.task_id for o in outcomes if o.resolved] == []
    assert all(o.empty_patch and not o.tampered for o in outcomes)
    # A stub that cannot even be imported leaves the expected tests out of the report.
    assert all(o.error is None or "expected tests missing" in o.error for o in outcomes)
    # The tests really ran on the stubs and failed (not a harness error).
    assert all(o.tests_total and o.tests_passed < o.tests_total for o in outcomes)


def test_hanging_tests_are_killed_and_the_run_continues(python_tasks: list, tmp_path: Path) -> None:
    hang = dataclasses.replace(python_tasks[0], test_command="sleep 600", test_timeout_s=3)
    normal = python_tasks[1]
    outcomes = evaluate_agent(AgentRef.reference("oracle"), [hang, normal], tmp_path, workers=1)
    assert not outcomes[0].resolved
    assert "killed at the 3 s limit" in outcomes[0].error
    assert outcomes[0].judge_seconds < 60
    assert outcomes[1].resolved


def test_a_hanging_agent_is_stopped_at_its_limit(python_tasks: list, tmp_path: Path) -> None:
    agent = tmp_path / "sleeper"
    agent.mkdir()
    (agent / "agent.toml").write_text('[commands]\nsolve = "sleep 600"\n')
    job = EvalJob(AgentRef(str(agent)), python_tasks[2], str(tmp_path / "log"), agent_timeout_s=3)
    outcome = evaluate_task(job, EvalContext())
    assert outcome.details["agent_timed_out"] and not outcome.resolved
    assert "stopped at its 3 s limit" in outcome.error
    assert outcome.agent_seconds < 30


def test_a_missing_image_is_reported_up_front(
    python_tasks: list, runtime_image: str, tmp_path: Path
) -> None:
    broken = dataclasses.replace(python_tasks[0], image="dgm/no-such-image:0")
    assert pin_images([python_tasks[1]])[0].image == runtime_image  # a tag, fixed for the run
    assert missing_images([broken, python_tasks[1]]) == [
        "dgm/no-such-image:0: build it, or use a dgm image name: runtime, polyglot"
    ]
    job = EvalJob(AgentRef.reference("null"), broken, str(tmp_path / "log"))
    with pytest.raises(NotFoundError, match="no-such-image"):
        evaluate_task(job, EvalContext())
    [outcome] = evaluate_agent(AgentRef.reference("null"), [broken], tmp_path)
    assert not outcome.resolved and "no-such-image" in outcome.error


def test_doing_nothing_never_resolves_a_stub_that_already_passes(
    polyglot_dir: Path, polyglot_image: str, tmp_path: Path
) -> None:
    """Go's `ledger` is a refactoring exercise: its stub passes every hidden test."""
    task = polyglot.PolyglotTasks(polyglot_dir).task("go__ledger")
    [outcome] = evaluate_agent(AgentRef.reference("null"), [task], tmp_path, workers=1)
    assert outcome.tests_total and outcome.tests_passed == outcome.tests_total
    assert not outcome.resolved and outcome.empty_patch
    assert "empty patch is never resolved" in (outcome.error or "")
