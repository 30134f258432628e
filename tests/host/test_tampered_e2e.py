"""End to end: a judge's `tampered` verdict goes through the loop's real recording path
(eval job -> Evaluation -> SandboxJobs.settle -> Recorder -> run.sqlite) and comes out
loudly in `dgm show`, `dgm status`, `dgm tree` and the report; the node is never best,
`dgm export` refuses it, and the next self-improvement diagnosis names the tampering
without a line of the hidden tests.

The agent container and the judge container are stood in for (`run_agent`, `Polyglot.judge`):
the judge's own canary checks have their Docker tests (tests/benchmarks); this is about
everything after its verdict."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dgm.benchmarks.polyglot import Polyglot
from dgm.benchmarks.task import Verdict
from dgm.config import RunConfig
from dgm.executors import Evaluated
from dgm.jobs import evaluate as evaluate_module
from dgm.jobs.agent_run import AgentRunResult
from dgm.jobs.diagnose import TAMPER_HEADER, diagnosis_request, problem_statement
from dgm.loop.job_making.from_actions import ActionJobs
from dgm.loop.job_making.sandbox_jobs import SandboxJobs
from dgm.loop.recording import Recorder
from dgm.loop.stop_rules import StopRules
from dgm.report.data import report_data
from dgm.store import Run, best_node
from dgm.strategies import Evaluate

TASKS = ("python__wordy", "python__bowling")
FORGER = 2  # the node whose patch tampers with the test run on `python__wordy`
HIDDEN_LINE = 'self.assertEqual(answer("What is 53 plus 2?"), 55)'  # from wordy_test.py
CANARIES = ["test_5be04ac1d9e2_ok", "test_5be04ac1d9e2_bad"]  # drawn fresh by the judge
EVIDENCE = f"report: the must-fail canary {CANARIES[1]} was reported ['PASSED']"
HONEST = "diff --git a/wordy.py b/wordy.py\n--- a/wordy.py\n+++ b/wordy.py\n@@ -1 +1 @@\n-x\n+y\n"
FORGED = HONEST.replace("+y", "+import unittest; unittest.TestCase.assertEqual = print")


def _fake_agent(request, out_dir, endpoint=None, backend="docker") -> AgentRunResult:
    node = Path(request.agent_dir).name  # the loop checks node N out into work/nodes/N
    patch = {"0": "", str(FORGER): FORGED}.get(node, HONEST)  # the seed changes nothing
    return AgentRunResult(patch, 0, False, 0.5, "agent done", None)


def _fake_judge(
    _self, task, patch, limits, backend, labels, extra_copies=False
) -> tuple[Verdict, str]:
    output = (f"Ran 5 tests\n    {HIDDEN_LINE}\nwordy_test.py::{CANARIES[0]} PASSED\n"
              f"wordy_test.py::{CANARIES[1]} PASSED\nOK\n")  # fmt: skip
    tests = {"test_a": "PASSED", "test_b": "PASSED"}
    details = {"canaries": CANARIES}
    if patch == FORGED and task.id == "python__wordy":
        # What swe_judge returns when a must-fail canary passes: never resolved.
        verdict = Verdict(False, tests=tests, exit_code=0, tampered=True,
                          details={**details, "tamper_evidence": EVIDENCE})  # fmt: skip
        return verdict, output
    return Verdict(bool(patch), tests=tests, exit_code=0, details=details), output


@pytest.fixture
def tampered_run(tmp_path: Path, polyglot_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(evaluate_module, "run_agent", _fake_agent)
    monkeypatch.setattr(Polyglot, "judge", _fake_judge)
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(TASKS) + "\n")
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "s"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("print('hi')\n")
    config = RunConfig(name="tamper").with_overrides({
        "benchmark.data": str(polyglot_dir), "benchmark.subset": f"@{ids}",
        "sandbox.backend": "local", "strategy.final.min_evals": 1,
    })  # fmt: skip
    run = Run.create(tmp_path / "run", config, seed)
    for origin in ("honest child", "child that tampers"):
        run.add_node(0, diff=_new_file(origin), origin=origin)
    jobs = SandboxJobs(run, gateway=None)
    rules = StopRules(config.limits, run.spend_usd, jobs.run_budget_exhausted, lambda: 0.0)
    actions = ActionJobs(run, jobs, Recorder(run, rules, threading.Event()))
    outcomes = {}
    for node in (0, 1, FORGER):
        for task in TASKS:
            outcomes[node, task] = actions.make(Evaluate(node, task)).run_here()
    yield run, actions, outcomes
    run.close()


def _new_file(text: str) -> str:
    return (f"diff --git a/{len(text)}.txt b/{len(text)}.txt\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b/{len(text)}.txt\n@@ -0,0 +1 @@\n+{text}\n")  # fmt: skip


def _dgm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def test_a_tampered_verdict_is_recorded_shown_never_best_and_never_exported(
    tampered_run, tmp_path: Path
) -> None:
    run, _, outcomes = tampered_run
    # Recorded through the loop's path: the strategy heard a failure.
    assert outcomes[FORGER, "python__wordy"] == Evaluated(False)
    assert outcomes[FORGER, "python__bowling"] == Evaluated(True)
    (forged,) = run.tampered_evaluations()
    assert (forged.node_id, forged.task_id, forged.resolved) == (FORGER, "python__wordy", False)
    assert forged.details["tamper_evidence"] == EVIDENCE
    result = json.loads((run.path / forged.log_dir / "result.json").read_text())
    assert result["tampered"] is True and result["resolved"] is False
    assert run.score(FORGER).tampered == 1
    (event,) = [e for e in run.events(100) if e["kind"] == "tampered"]
    assert (event["node"], event["task"]) == (FORGER, "python__wordy")
    # Node 1 solved both honestly; node 2 "solved" one and was caught on the other.
    assert best_node(run) == 1
    path = str(run.path)

    shown = _dgm("show", path, str(FORGER), "--no-diff")
    assert shown.returncode == 0, shown.stderr
    assert "TAMPERED  1 evaluation(s): the judge caught this agent's patch" in shown.stdout
    assert "TAMPERED python__wordy" in shown.stdout
    assert f"the judge's evidence: {EVIDENCE}" in shown.stdout  # for the human, not a prompt

    status = _dgm("status", path)
    assert status.returncode == 0, status.stderr
    assert f"tampered  1 evaluation(s) on node(s) {FORGER}:" in status.stdout
    assert "best      node 1:" in status.stdout

    tree = _dgm("tree", path).stdout.splitlines()
    forger_line = next(line for line in tree if line.lstrip("├└─│ ").startswith(f"{FORGER} "))
    assert "TAMPERED 1x" in forger_line and "best" not in forger_line
    assert any("★ best" in line and line.lstrip("├└─│ ").startswith("1 ") for line in tree)

    refused = _dgm("export", path, str(FORGER), "-o", str(tmp_path / "out"))
    assert refused.returncode != 0
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert f"node {FORGER} is not exported: the judge caught it tampering" in refused.stderr
    assert not (tmp_path / "out").exists()
    exported = _dgm("export", path, "best", "-o", str(tmp_path / "best"))
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith("node 1 exported")

    data = report_data(run, tmp_path)
    node = next(n for n in data["nodes"] if n["id"] == FORGER)
    assert node["tampered"] == [f"python__wordy: {EVIDENCE}"[:300]]
    assert "T" in node["heat"] and not node["best"]
    assert data["run"]["tampered"] == {str(FORGER): 1} and data["run"]["best"] == 1


def test_the_next_diagnosis_names_the_tampering_without_hidden_test_source(
    tampered_run,
) -> None:
    run, actions, _ = tampered_run
    target = actions._choose_target(str(FORGER), 0)  # the loop's own target selection
    assert target.kind == "task" and target.task_id == "python__wordy" and target.tampered
    code = actions.node_code(str(FORGER))
    prompt = diagnosis_request(target, code)["messages"][1]["content"]
    assert TAMPER_HEADER in prompt and "never rewarded" in prompt
    assert "What is 53 plus 2" not in prompt  # no hidden test line
    # How the judge knew stays with the judge: no evidence, no canary, no word of them.
    assert "5be04ac1d9e2" not in prompt and "canary" not in prompt.lower()
    assert "must-fail" not in prompt and target.test_output.count("[line removed") >= 1
    statement = problem_statement(target, {"problem_description": "Fix the parser."})
    assert TAMPER_HEADER in statement and "What is 53" not in statement
    assert "canary" not in statement.lower()
    # A target without tampering keeps the job-id inputs it always had; its test output
    # (canaries reported as usual) names no canary either.
    honest = actions._choose_target("1", 0)
    assert "tampered" not in honest.to_dict()
    assert honest.kind != "task" or "5be04ac1d9e2" not in (honest.test_output or "")
