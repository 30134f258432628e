"""Tamper-scan warnings are stored on the node / evaluation and shown by `dgm show` and
the HTML report's data, as warnings beside the verdict, never in place of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dgm.config import RunConfig
from dgm.jobs.tamper_scan import scan_diff
from dgm.report.data import report_data
from dgm.store import Evaluation, Run

EXIT_PATCH = (
    "diff --git a/solution.py b/solution.py\n--- a/solution.py\n+++ b/solution.py\n"
    "@@ -1 +1,2 @@\n def add(a, b): return a + b\n+import os; os._exit(0)\n"
)
AGENT_DIFF = (
    "diff --git a/agent.py b/agent.py\n--- a/agent.py\n+++ b/agent.py\n"
    "@@ -1 +1,2 @@\n print('hi')\n+HACK = 'os._exit(0)'\n"
)


def test_warnings_show_in_dgm_show_and_the_report(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "s"\n[commands]\nsolve = "true"\n')
    (seed / "agent.py").write_text("print('hi')\n")
    with Run.create(tmp_path / "run", RunConfig(name="t"), seed) as run:
        node = run.add_node(0, diff=AGENT_DIFF, origin="child",
                            meta={"tamper_warnings": scan_diff(AGENT_DIFF, "agent")})  # fmt: skip
        run.record_evaluation(Evaluation(
            node_id=node.id, task_id="python__add", benchmark="polyglot", resolved=True,
            job_id="e1", details={"tamper_warnings": scan_diff(EXIT_PATCH), "rejudge": {
                "why": ["node diff", "process_exit"], "outcome": "clean", "evidence": ""}},
        ))  # fmt: skip
        data = report_data(run, tmp_path)
    shown = subprocess.run(
        [sys.executable, "-m", "dgm", "show", str(tmp_path / "run"), str(node.id)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "tamper scan of this node's diff (warnings, not a verdict): 1 warning" in shown.stdout
    assert "aims_at_judge: agent.py" in shown.stdout
    assert "tamper scan of its patch: 1 warning" in shown.stdout
    assert "process_exit: solution.py: os._exit ends the process" in shown.stdout
    assert "PASS " in shown.stdout  # the verdict stands; the warning sits beside it
    assert "re-judged with extra mutated copies (node diff, process_exit): clean" in shown.stdout
    report_node = next(n for n in data["nodes"] if n["id"] == node.id)
    assert "tamper_warnings" not in report_node["meta"]
    assert report_node["warnings"][0].startswith("diff: aims_at_judge: agent.py")
    assert report_node["warnings"][1].startswith("python__add: process_exit: solution.py")
    assert report_node["warnings"][2] == "python__add: re-judged (node diff, process_exit): clean"


def test_a_warning_costs_the_agent_a_second_judge_that_must_agree() -> None:
    from dgm.benchmarks.task import Verdict
    from dgm.jobs.evaluate import merge_rejudge, rejudge_record

    passed = Verdict(True, details={"canaries": ["a"]})
    caught = Verdict(False, tampered=True, details={"tamper_evidence": "must-fail copy x"})
    merged = merge_rejudge(passed, caught)
    assert not merged.resolved and merged.tampered
    assert merged.details["tamper_evidence"] == "must-fail copy x"
    assert rejudge_record(caught, scan_diff(EXIT_PATCH), True)["outcome"] == "tampered"
    failed = merge_rejudge(passed, Verdict(False, error="boom"))
    assert not failed.resolved and "re-judge did not confirm" in (failed.error or "")
    assert merge_rejudge(passed, Verdict(True)).resolved


def test_a_warned_nodes_eval_jobs_are_re_judged_and_others_keep_their_ids() -> None:
    from dgm.benchmarks.task import Task
    from dgm.jobs.evaluate import AgentRef, EvalJob

    task = Task("python__add", "polyglot", "python", "s", "i", "i", "t", 60, "src")
    plain = EvalJob(AgentRef("/a", commit="c"), task, "/l")
    assert plain.id == EvalJob(AgentRef("/a", commit="c"), task, "/l", rejudge=False).id
    assert plain.id != EvalJob(AgentRef("/a", commit="c"), task, "/l", rejudge=True).id
