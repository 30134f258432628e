"""The SWE-bench path on dgm's own suite, graded by the swebench package."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dgm.benchmarks.swebench.loader import SweTasks, make_spec
from dgm.benchmarks.task_images import missing_images
from dgm.evaluation.evaluate_agent import evaluate_agent
from dgm.jobs.evaluate import AgentRef

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def suite_tasks(suite_image: str) -> list:
    tasks = SweTasks().tasks("full")
    assert [t.image for t in tasks] == [suite_image] * 3
    return tasks


def _official_verdict(task, outcome) -> bool:  # noqa: ANN001
    """swebench's own grading of the per-test statuses we recorded. Not of the stored log:
    the judge ran the copied originals under fresh names beside their copies, and the
    fresh-to-official mapping is kept from the log on purpose (as secret as the canaries)."""
    from swebench.harness.constants import ResolvedStatus
    from swebench.harness.grading import EvalType, get_eval_tests_report, get_resolution_status

    spec = make_spec(task)
    gold = {"FAIL_TO_PASS": spec.FAIL_TO_PASS, "PASS_TO_PASS": spec.PASS_TO_PASS}
    report = get_eval_tests_report(outcome.tests, gold, eval_type=EvalType(spec.eval_type))
    return get_resolution_status(report) == ResolvedStatus.FULL.value


@pytest.mark.parametrize("agent, expected", [("oracle", True), ("null", False)])
def test_reference_agents_and_the_official_grader_agree(
    suite_tasks: list, tmp_path: Path, agent: str, expected: bool
) -> None:
    outcomes = evaluate_agent(AgentRef.reference(agent), suite_tasks, tmp_path, workers=2)
    for task, outcome in zip(suite_tasks, outcomes, strict=True):
        assert outcome.resolved is expected, (task.id, outcome.error)
        assert _official_verdict(task, outcome) is outcome.resolved
        fail_to_pass = task.meta["FAIL_TO_PASS"]
        statuses = {t: outcome.tests.get(t) for t in fail_to_pass}
        assert set(statuses.values()) == {"PASSED" if expected else "FAILED"}
        assert all(outcome.tests[t] == "PASSED" for t in task.meta["PASS_TO_PASS"])


def test_a_patch_that_breaks_pass_to_pass_is_not_resolved(
    suite_tasks: list, tmp_path: Path
) -> None:
    # The gold fix plus a regression elsewhere: F2P passes, a P2P test fails.
    task = suite_tasks[2]
    agent = tmp_path / "regressor"
    agent.mkdir()
    (agent / "fix.diff").write_text(task.meta["patch"])
    (agent / "run.sh").write_text(
        "git -C /work apply /agent/fix.diff\n"
        "sed -i 's/part\\[0\\].upper()/part[0]/' /work/tinyutil/text.py\n"
    )
    (agent / "agent.toml").write_text('[commands]\nsolve = "sh {agent_dir}/run.sh"\n')
    [outcome] = evaluate_agent(AgentRef(str(agent)), [task], tmp_path / "run")
    assert outcome.tests["tests/test_text.py::test_slugify_punctuation"] == "PASSED"
    assert outcome.tests["tests/test_text.py::test_initials"] == "FAILED"
    assert not outcome.resolved and _official_verdict(task, outcome) is False


def test_missing_instance_image_is_reported_before_any_agent_runs(suite_tasks: list) -> None:
    gone = dataclasses.replace(suite_tasks[0], image="swebench/sweb.eval.x86_64.nope:latest")
    gone = dataclasses.replace(gone, judge_image=gone.image)
    [report] = missing_images([gone, *suite_tasks])
    assert report.startswith("swebench/sweb.eval.x86_64.nope:latest")
